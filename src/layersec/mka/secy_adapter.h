// The SecYDriver (secy_driver.h) over our 802.1AE SecY (macsec/secy.h):
// what the participant's SA calls become on the SecY of `layersec macsec
// up --mka` (IEEE 802.1X-2020 Figure 12-3 onto 802.1AE-2018 §10.7.12-22).
//
//   install_rx_sa  creates the receive SC when missing, then installs the
//                  receive SA (enabled) from `lowest_pn`; a failure removes
//                  the SC again if this call created it (nothing changes)
//   install_tx_sa  installs the transmit SA and disables it at once
//                  (SecY::enable_tx_sa(an, false)): it protects nothing, even
//                  when its AN is the SecY's encoding AN, until ...
//   enable_tx_sa   ... enables it and makes it the encoding SA
//   retire_*       removes the SA / SC (absent ones are no error)
//
// Every call first checks that the SAK fits this SecY: the cipher suite is
// the SecY's, the confidentiality offset is the SecY's (integrity only
// needs a SecY without confidentiality), and the XPN SSCI/salt are passed
// for the XPN suites. Anything else is SecYError::kRefused and changes
// nothing: the SecY's settings are fixed at start-up, MKA cannot weaken
// them. The SAK is only borrowed for the call (SaMaterial); the SecY keeps
// it inside its cipher context. Sans-I/O; one thread, like the SecY.
#pragma once

#include <cstdint>

#include "layersec/macsec/secy.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

// The macsec cipher suite of an MKA one (same four suites).
macsec::CipherSuite to_macsec(CipherSuite s);
// The MKA cipher suite of a macsec one.
CipherSuite from_macsec(macsec::CipherSuite s);
// The Confidentiality Offset a SecY with this configuration uses: integrity
// only, or confidentiality from offset 0, 30 or 50.
ConfidentialityOffset offset_of(const macsec::SecYConfig& c);

// Refused calls by reason (the participant counts secy_errors too).
struct SecYAdapterStats {
  std::uint64_t refused_suite = 0;    // SaMaterial for another cipher suite
  std::uint64_t refused_offset = 0;   // another confidentiality offset (or integrity only)
  std::uint64_t refused_other = 0;    // the SecY refused (bad AN/PN, encoding SA busy, ...)
  std::uint64_t bad_key = 0;          // SAK length does not match the suite
  std::uint64_t backend = 0;          // cipher context could not be built
};

class SecYAdapter final : public SecYDriver {
 public:
  // `secy` is not owned and must outlive the adapter.
  explicit SecYAdapter(macsec::SecY& secy) : secy_(&secy) {}

  [[nodiscard]] Status<SecYError> install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m,
                                                std::uint64_t lowest_pn) override;
  [[nodiscard]] Status<SecYError> install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) override;
  [[nodiscard]] Status<SecYError> enable_tx_sa(std::uint8_t an) override;
  void retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) override;
  void retire_tx_sa(std::uint8_t an) override;
  void remove_rx_sc(std::uint64_t peer_sci) override;
  [[nodiscard]] std::uint64_t tx_next_pn(std::uint8_t an) const override;
  [[nodiscard]] std::uint64_t rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const override;

  // The next PN of the SA we transmit with; 0 when none is enabled (what
  // Participant::on_tx_pn wants).
  [[nodiscard]] std::uint64_t encoding_next_pn() const;
  [[nodiscard]] const SecYAdapterStats& stats() const { return stats_; }

 private:
  [[nodiscard]] Status<SecYError> check(const SaMaterial& m);
  Status<SecYError> fail(macsec::SaError e);

  macsec::SecY* secy_;
  SecYAdapterStats stats_;
};

}  // namespace layersec::mka
