// Runtime SA switching for a running SecY (sans-I/O): applies an updated
// link configuration (link_config.h) without restarting the interface, and
// retires receive SAs that the configuration no longer lists once the peer
// has moved on. `layersec macsec up` drives it on SIGHUP (the configuration
// file is re-read) and from a periodic timer; tests drive it directly.
//
// What apply() does with the new configuration, in this order, all between
// two frames (the SecY is single-threaded, so the encoding SA switch is
// atomic with respect to the frame path):
//   1. receive SCs that are new are added; receive SAs that are new, or whose
//      key/SSCI/salt changed, are installed (enabled, from their "pn" on);
//      an unchanged receive SA whose configured "pn" is above its current
//      lowest acceptable PN has it raised (802.1AE-2018 10.7.14; with MKA
//      this is the peer's Lowest Acceptable PN) — never lowered;
//   2. transmit SAs that are new or whose key changed are installed;
//   3. the encoding SA is switched to tx.encoding_an (802.1AE 10.7.21);
//   4. transmit SAs no longer listed are removed (never the encoding one);
//   5. receive SCs no longer listed are removed; receive SAs no longer listed
//      are scheduled for retirement (below);
//   6. validate_frames / replay_protect / replay_window take effect.
// Before anything changes the whole update is checked; a refused update
// throws LinkConfigError (JSON pointer first) and leaves the SecY untouched:
//   - settings that need a restart differ (suite, SCI, MAC, confidentiality,
//     offset, include_sci/use_es, VLAN mode, max_frame_size);
//   - the key of the current encoding SA would change in place (install the
//     new key at another AN and switch instead — 10.7.21);
//   - a transmit key that this SecY has already used would be installed
//     again as a new SA: its PN would start over and repeat nonces;
//   - with a PnStore attached to the SecY: a new SA whose key has no PN
//     record and is not marked "new_key" (pn_state.h), or whose record says
//     every PN is used; pn_state_file, pn_reserve_block or lower_link changed.
// An unchanged transmit SA keeps its PN state; the configured "pn" of a
// running transmit SA is ignored (a PN never goes backwards).
//
// Retirement of a receive SA (like 802.1X-2020's retire of the old key,
// after the new one is in use): the SA stays installed and valid until some
// other SA of the same SC has verified a frame after the retirement was
// requested and `retire_delay` has passed since poll() first saw that, or,
// when `retire_timeout` is non-zero, that long after the request. poll()
// performs due retirements and is cheap; call it every few hundred ms.
//
// Transmit PN exhaustion is not handled here: the SecY stops the SA and
// new_sa_needed() turns true; the operator (or MKA) provides a new SA at
// another AN and an apply() switches to it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/secy.h"

namespace layersec::macsec {

// What one apply() or poll() changed, for logs and JSON (key ids only).
struct RotationAction {
  enum class Kind : std::uint8_t {
    kRxScAdded,
    kRxScRemoved,
    kRxSaInstalled,
    kRxSaLowestPnRaised,
    kRxSaRetireScheduled,
    kRxSaRetired,        // after frames on a newer SA (+ delay)
    kRxSaRetiredTimeout, // retire_timeout passed
    kTxSaInstalled,
    kTxSaRemoved,
    kEncodingSaSwitched,
    kSettingChanged,
  };
  Kind kind;
  Sci sci{};            // receive SC (receive actions)
  std::uint8_t an = 0;  // SA (the new encoding AN for kEncodingSaSwitched)
  std::uint64_t pn = 0; // installed next/lowest PN, raised lowest PN
  std::string detail;   // key id, setting name, ...
};
std::string_view to_string(RotationAction::Kind k);

class SaRotation {
 public:
  // `current` is the configuration the SecY was built from (make_secy);
  // `sci` the SecY's resolved transmit SCI. Key fingerprints are taken from
  // it (SHA-256 of SAK, SSCI and salt, kept only in memory).
  SaRotation(const LinkConfig& current, Sci sci);

  // Applies `next` (see the file comment). Returns the actions taken. Throws
  // LinkConfigError without changing `secy` when the update is refused.
  std::vector<RotationAction> apply(SecY& secy, const LinkConfig& next, Sci next_sci, TimePoint now);

  // Retires receive SAs that are due. Returns what it retired.
  std::vector<RotationAction> poll(SecY& secy, TimePoint now);

  // Receive SAs waiting for retirement.
  [[nodiscard]] std::size_t pending_retirements() const { return pending_.size(); }

 private:
  using Fingerprint = std::array<std::uint8_t, 32>;
  struct RxKey {
    std::uint64_t sci;
    std::uint8_t an;
    auto operator<=>(const RxKey&) const = default;
  };
  struct Pending {
    Sci sci;
    std::uint8_t an;
    TimePoint requested;
    std::array<std::uint64_t, 4> verified_at_request{};
    std::optional<TimePoint> newer_seen;
  };

  static Fingerprint fingerprint(const SaConfig& sa);

  SecYConfig settings_;  // SecY settings of the last applied configuration
  std::string pn_state_file_;
  std::uint64_t pn_reserve_block_;
  LowerLinkPolicy lower_link_;
  std::optional<net::MacAddress> mac_;
  Sci sci_;
  std::array<std::optional<Fingerprint>, 4> tx_keys_;
  std::set<Fingerprint> tx_used_;  // every transmit key this SecY has used
  std::vector<std::pair<RxKey, Fingerprint>> rx_keys_;
  std::vector<Pending> pending_;
  Duration retire_delay_;
  Duration retire_timeout_;
};

}  // namespace layersec::macsec
