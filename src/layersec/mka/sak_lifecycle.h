// The SAK lifecycle of one participant: the Controlled Port's key states of
// IEEE 802.1X-2020 §12.3 (Figure 12-2: RECEIVE, RECEIVING, TRANSMIT,
// TRANSMITTING, RETIRE, ABANDON), programming the SecY through SecYDriver
// in make-before-break order:
//
//   1. a new SAK: receive SAs for every live peer first, and our transmit SA
//      (installed, not used)                                   -> kReceiving
//   2. transmit with it (the participant decides when: the key server once
//      every live peer reports receiving it, the others once the key server
//      reports transmitting with it)                           -> kTransmitting
//   3. retire the old SAK (the participant decides when: every live peer
//      reports transmitting with the new one, or the retire timer) -> kInUse
//
// so no peer ever transmits on an SA a live member cannot receive, and the
// old SA keeps receiving until nobody sends on it any more. As in Figure
// 12-2 RETIRE, the SAK in use then sits in the "old key" slot (that is where
// wpa_supplicant reports it in its SAK Use set too) and the latest slot is
// empty until the next SAK.
//
// Key material stays here, in SecretBytes, and reaches the driver only as a
// borrowed SaMaterial; events carry fingerprints.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/mka/output.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

enum class SakState : std::uint8_t {
  kNoSak,         // no SAK installed: none distributed yet, or every peer is gone
  kReceiving,     // latest SAK: receive SAs installed for every live peer, our transmit SA installed
                  // but unused (latest rx); the SAK in use before (if any) still transmits
  kTransmitting,  // transmitting with the latest SAK (latest tx); the old SAK still receives
                  // until it is retired
  kInUse,         // the old SAK retired; the SAK in use moved to the old-key slot; a new SAK may come
};
std::string_view to_string(SakState s);

// One installed SAK.
struct InstalledSak {
  SecretBytes sak;
  KeyIdentifier ki{};
  std::uint8_t an = 0;
  ConfidentialityOffset offset = ConfidentialityOffset::kOffset0;
  bool tx = false;  // we transmit with it
  bool rx = false;  // we receive with it
  std::string fingerprint;
  // The SCIs of every member that holds it (ours included): the XPN SSCI
  // order. For XPN only these members get a receive SA.
  std::vector<std::uint64_t> member_scis;
  std::vector<std::uint64_t> rx_scis;  // peers with a receive SA for it
  TimePoint installed_at{};
};

class SakLifecycle {
 public:
  SakLifecycle(SecYDriver& secy, CipherSuite suite, std::uint64_t own_sci);

  [[nodiscard]] SakState state() const { return state_; }
  // The latest-key and old-key slots (nullptr when empty).
  [[nodiscard]] const InstalledSak* latest() const { return latest_ ? &*latest_ : nullptr; }
  [[nodiscard]] const InstalledSak* old() const { return old_ ? &*old_ : nullptr; }
  // The SAK we transmit with, if any.
  [[nodiscard]] const InstalledSak* transmitting() const;
  // True when `ki` is in either slot.
  [[nodiscard]] bool holds(const KeyIdentifier& ki) const;
  [[nodiscard]] TimePoint receiving_since() const { return receiving_since_; }
  [[nodiscard]] TimePoint transmitting_since() const { return transmitting_since_; }

  // RECEIVE (from kNoSak or kInUse; from kReceiving it first ABANDONs the
  // latest SAK, which nobody transmits with yet): installs the receive SA
  // (peer SCI, an) for every SCI in `peer_scis` (for XPN: those that are
  // also in `member_scis`), then our transmit SA, and moves to kReceiving.
  // `member_scis` (XPN: must hold our SCI) fixes the SSCIs; empty means our
  // SCI and `peer_scis`. If the SecY refuses any SA, every SA of this call is
  // removed again, the state is unchanged, and false is returned. Not
  // allowed in kTransmitting (false): the caller keeps the SAK until retire().
  bool receive(SecretBytes sak, const KeyIdentifier& ki, std::uint8_t an, ConfidentialityOffset offset,
               std::span<const std::uint64_t> peer_scis, std::span<const std::uint64_t> member_scis,
               TimePoint now, Output& out);
  // TRANSMIT: kReceiving -> kTransmitting, the latest SAK's SA becomes the
  // encoding SA. False (state unchanged) if the SecY refuses.
  bool transmit(TimePoint now, Output& out);
  // RETIRE: kTransmitting -> kInUse: the old SAK's SAs are removed and the
  // latest SAK moves to the old slot.
  void retire(TimePoint now, Output& out);
  // A peer became live: receive SAs for every installed SAK from its SCI
  // (skipping those that exist). A peer that was removed while the SAK
  // stayed in use gets its SA back at the PN it had reached (remove_peer),
  // never at 1, so it cannot reopen a replay window.
  void add_peer(std::uint64_t sci, TimePoint now, Output& out);
  // A live peer left: its receive SC goes, after noting where each of its
  // receive SAs had got to.
  void remove_peer(std::uint64_t sci, Output& out);
  // Every SA removed (no live peer, or stop): -> kNoSak.
  void clear(TimePoint now, Output& out);

 private:
  SaMaterial material(const InstalledSak& k, std::uint32_t ssci) const;
  std::uint32_t peer_ssci(const InstalledSak& k, std::uint64_t sci) const;
  bool install_rx(InstalledSak& k, std::uint64_t sci, TimePoint now, Output& out);
  static void secy_error(Output& out, SecYError error, std::uint8_t an, const KeyIdentifier& ki, std::uint64_t sci,
                         TimePoint now);
  void retire_key(InstalledSak& k, bool had_tx, TimePoint now, Output& out);
  void record(Output& out, SaActionType type, std::uint64_t sci, const InstalledSak* k, std::uint64_t pn,
              const Status<SecYError>* status);
  void sak_event(Output& out, EventType type, const InstalledSak& k, TimePoint now);

  SecYDriver& secy_;
  CipherSuite suite_;
  std::uint64_t own_sci_;
  SakState state_ = SakState::kNoSak;
  std::optional<InstalledSak> latest_;
  std::optional<InstalledSak> old_;
  TimePoint receiving_since_{};
  TimePoint transmitting_since_{};
  // Where the receive SA of a peer that left had got to, for an installed
  // SAK; dropped when the SAK is retired.
  struct ResumePoint {
    std::uint64_t sci = 0;
    KeyIdentifier ki{};
    std::uint64_t next_pn = 0;
  };
  std::vector<ResumePoint> resume_;
};

}  // namespace layersec::mka
