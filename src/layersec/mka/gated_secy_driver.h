// MacsecSecYDriver (secy_adapter.h) with the transmit SA held back until
// the participant enables it, as SecYDriver::install_tx_sa promises
// ("nothing is sent on it until enable_tx_sa"): `layersec macsec up --mka`
// drives its SecY through this.
//
// Why: macsec::SecY::install_tx_sa installs an SA enabled, and the SecY
// protects with whatever SA sits at its encoding AN. The first SAK of a CA
// gets AN 0, which is the encoding AN of a fresh SecY (and a SAK after the
// CA was lost may land on the AN the SecY still points at), so without the
// gate the key server starts transmitting with a SAK before any peer has a
// receive SA for it: the first frames are lost (make-before-break broken at
// bring-up; no plaintext, they are protected). Here install_tx_sa disables
// the SA right after installing it (SecY::enable_tx_sa(an, false),
// 802.1AE-2018 §10.7.22 enableTransmit), and enable_tx_sa enables it before
// making it the encoding SA. Everything else is MacsecSecYDriver's.
#pragma once

#include <cstdint>

#include "layersec/macsec/secy.h"
#include "layersec/mka/secy_adapter.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

class GatedSecYDriver final : public SecYDriver {
 public:
  // `secy` must outlive the driver; one driver per SecY.
  explicit GatedSecYDriver(macsec::SecY& secy) : secy_(secy), inner_(secy) {}

  [[nodiscard]] Status<SecYError> install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m,
                                                std::uint64_t lowest_pn) override {
    return inner_.install_rx_sa(peer_sci, m, lowest_pn);
  }
  // Installed (MacsecSecYDriver), then disabled at once: it protects nothing,
  // even at the encoding AN, until enable_tx_sa.
  [[nodiscard]] Status<SecYError> install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) override;
  // Enables the SA, then makes it the encoding SA; on failure it stays disabled.
  [[nodiscard]] Status<SecYError> enable_tx_sa(std::uint8_t an) override;
  void retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) override { inner_.retire_rx_sa(peer_sci, an); }
  void retire_tx_sa(std::uint8_t an) override { inner_.retire_tx_sa(an); }
  void remove_rx_sc(std::uint64_t peer_sci) override { inner_.remove_rx_sc(peer_sci); }
  [[nodiscard]] std::uint64_t tx_next_pn(std::uint8_t an) const override { return inner_.tx_next_pn(an); }
  [[nodiscard]] std::uint64_t rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const override {
    return inner_.rx_next_pn(peer_sci, an);
  }

  // The next PN of the SA the SecY transmits with; 0 when none is enabled
  // (what Participant::on_tx_pn wants).
  [[nodiscard]] std::uint64_t encoding_next_pn() const;

 private:
  macsec::SecY& secy_;
  MacsecSecYDriver inner_;
};

}  // namespace layersec::mka
