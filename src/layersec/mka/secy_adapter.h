// mka::SecYDriver over our user-space macsec::SecY (IEEE 802.1AE-2018): the
// thin adapter `layersec macsec up --mka` drives (core: the SecY does no I/O).
//
// Mapping: install_rx_sa creates the receive SC when needed (and removes it
// again if the SA is refused, so a failed call changes nothing);
// install_tx_sa / install_rx_sa install with PnStart::kNewKey (an MKA SAK is
// fresh: with a PnStore attached its record starts at the configured PN);
// enable_tx_sa is set_encoding_sa; the XPN SSCI and salt go into the SA's
// SaKeys. The SecY's cipher suite and confidentiality offset are fixed by
// its configuration: an SA for another suite or offset is refused.
#pragma once

#include "layersec/macsec/secy.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

class MacsecSecYDriver final : public SecYDriver {
 public:
  // `secy` must outlive the driver; one driver per SecY.
  explicit MacsecSecYDriver(macsec::SecY& secy) : secy_(secy) {}

  [[nodiscard]] Status<SecYError> install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m,
                                                std::uint64_t lowest_pn) override;
  [[nodiscard]] Status<SecYError> install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) override;
  [[nodiscard]] Status<SecYError> enable_tx_sa(std::uint8_t an) override;
  void retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) override;
  void retire_tx_sa(std::uint8_t an) override;
  void remove_rx_sc(std::uint64_t peer_sci) override;
  [[nodiscard]] std::uint64_t tx_next_pn(std::uint8_t an) const override;
  [[nodiscard]] std::uint64_t rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const override;

 private:
  [[nodiscard]] bool matches(const SaMaterial& m) const;
  macsec::SecY& secy_;
};

}  // namespace layersec::mka
