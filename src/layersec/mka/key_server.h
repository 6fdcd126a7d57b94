// Key server election (IEEE 802.1X-2020 §9.5) and the key server's SAK
// generation and distribution (§9.8), sans-I/O.
//
// Election: among the participant itself and its live peers that set the Key
// Server flag, the lowest Key Server Priority value wins, ties go to the
// numerically lowest SCI; priority 255 never becomes key server
// (wpa_supplicant's default `mka_priority`). The participant runs the
// election whenever its live peer list or a live peer's basic parameters
// change.
//
// KeyServer holds the key server's own state: whether we are elected, which
// rekey is pending and why (a member joined or left, the SAK lifetime, a PN
// past the threshold, a new key server), the Key Number sequence, and the
// Distributed SAK parameter set while a SAK is being distributed. It does
// not decide when a rekey may start: the participant starts one only when
// the previous SAK has finished its lifecycle (sak_lifecycle.h), so rekeys
// never overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/mka/mkpdu.h"
#include "layersec/mka/output.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

inline constexpr std::uint8_t kNeverKeyServer = 0xFF;

// One participant in the election.
struct KeyServerCandidate {
  std::uint8_t priority = kNeverKeyServer;
  std::uint64_t sci = 0;
};

// True when `a` would win over `b`: a lower priority value, then a lower SCI.
[[nodiscard]] bool ranks_before(const KeyServerCandidate& a, const KeyServerCandidate& b);

// §9.5: the index of the winner in `candidates`; nullopt when it is empty or
// every candidate has priority 255. The caller lists only the participants
// that may be key server (itself, and live peers with the Key Server flag).
[[nodiscard]] std::optional<std::size_t> elect_key_server(std::span<const KeyServerCandidate> candidates);

enum class KeyServerState : std::uint8_t {
  kStandby,       // not the key server: another member is elected, or there is no live peer
  kElected,       // the key server; every live peer has the latest SAK (or none was made yet);
                  // a pending rekey starts as soon as the participant allows it
  kDistributing,  // the latest SAK is being distributed: its Distributed SAK set goes in every
                  // MKPDU until every live peer reports receiving it (or the transmit delay ends)
};
std::string_view to_string(KeyServerState s);

struct KeyServerConfig {
  CipherSuite suite = CipherSuite::kGcmAes128;
  ConfidentialityOffset offset = ConfidentialityOffset::kOffset0;
  // A new SAK this long after the previous one was generated; zero: never.
  Duration rekey_interval = Duration::zero();
  // A transmit PN (ours, or a peer's reported lowest acceptable PN) at or
  // past this value asks for a new SAK; 0: 0xC0000000 for the 32-bit PN
  // suites (as hostap), 0xC000000000000000 for XPN.
  std::uint64_t pn_threshold = 0;
};

// A SAK the key server made: the key (for our own SecY), its identity, and
// the Distributed SAK parameter set (the SAK wrapped with the KEK) to send.
struct GeneratedSak {
  SecretBytes sak;
  KeyIdentifier ki{};
  std::uint8_t an = 0;
  RekeyReason reason = RekeyReason::kNewKeyServer;
  DistributedSak parameter_set;
};

enum class KeyServerError : std::uint8_t {
  kNotElected,    // generate() while in standby
  kRandom,        // the random source failed (no nonce)
  kKnExhausted,   // KN 2^32-1 was used: the participant must take a new MI
  kCrypto,        // derive_sak or wrap_key failed
};
std::string_view to_string(KeyServerError e);

class KeyServer {
 public:
  // Throws std::invalid_argument for a pn_threshold beyond the suite's PN space.
  explicit KeyServer(KeyServerConfig config);

  [[nodiscard]] KeyServerState state() const { return state_; }
  [[nodiscard]] bool elected() const { return state_ != KeyServerState::kStandby; }
  [[nodiscard]] std::uint64_t pn_threshold() const { return pn_threshold_; }
  [[nodiscard]] const KeyServerConfig& config() const { return config_; }

  // We won the election: kElected, with a kNewKeyServer rekey pending (no-op
  // when already elected).
  void elect();
  // We lost the election or every peer is gone: kStandby; pending rekeys are
  // dropped. The KN sequence continues (a KI never repeats for our MI).
  void stand_down();
  // Asks for a new SAK (ignored in standby). The first reason asked since the
  // last SAK is the one reported.
  void request_rekey(RekeyReason reason);
  [[nodiscard]] std::optional<RekeyReason> pending() const { return pending_; }
  // The SAK lifetime: asks for kTimer once rekey_interval has passed since the
  // last SAK was generated.
  void on_time(TimePoint now);
  // A transmit PN (or a peer's lowest acceptable PN) of the SAK in use: asks
  // for kPnThreshold at or past the threshold.
  void on_pn(std::uint64_t pn);
  // When on_time() will next ask for a rekey (TimePoint::max() when never).
  [[nodiscard]] TimePoint next_deadline() const;

  // Makes the next SAK (§9.8.1): KN = last + 1, a fresh nonce as long as the
  // SAK from `rng`, SAK = KDF(CAK, "IEEE8021 SAK", nonce || MI list || KN),
  // wrapped with the KEK (RFC 3394). The MI list is our MI followed by
  // `member_mis`. Moves to kDistributing and clears the pending rekey.
  // Nothing changes on failure.
  [[nodiscard]] Result<GeneratedSak, KeyServerError> generate(const SecretBytes& cak, const SecretBytes& kek,
                                                              const MemberId& own_mi,
                                                              std::span<const MemberId> member_mis, std::uint8_t an,
                                                              RandomSource& rng, TimePoint now);
  // The Distributed SAK set to send while kDistributing (nullptr otherwise).
  [[nodiscard]] const DistributedSak* distributing() const;
  // The member MIs (not ours) the SAK being distributed was made for.
  [[nodiscard]] const std::vector<MemberId>& members() const { return members_; }
  // Our SecY could not install the SAK just generated: back to kElected with
  // `reason` pending again (the SAK is never distributed).
  void abandon(RekeyReason reason);
  // Every live peer receives the latest SAK (or the transmit delay ended):
  // kDistributing -> kElected.
  void distribution_done();
  // Our MI changed: KNs start again at 1 (the KI is new anyway).
  void reset_numbering() { last_kn_ = 0; }
  [[nodiscard]] std::uint32_t last_kn() const { return last_kn_; }

 private:
  KeyServerConfig config_;
  std::uint64_t pn_threshold_ = 0;
  KeyServerState state_ = KeyServerState::kStandby;
  std::optional<RekeyReason> pending_;
  std::uint32_t last_kn_ = 0;
  std::optional<TimePoint> last_generated_;
  std::optional<DistributedSak> distributing_;
  std::vector<MemberId> members_;
};

}  // namespace layersec::mka
