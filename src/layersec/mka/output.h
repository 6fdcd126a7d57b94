// What one call into an MKA participant gives back (participant.h): the
// MKPDUs to send, the SA actions it applied to the SecY (in order), the
// events an operator or a JSON report wants to see, and, for a received
// MKPDU, why it was dropped. Nothing here carries a key: SAKs appear as
// fingerprint() (the first 16 hex digits of SHA-256).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

// Why a received MKPDU was dropped. A dropped MKPDU changes no state (the
// one exception is kMiConflict, which also makes us choose a new MI, as
// §9.4.2 requires), and the session with every other peer goes on.
enum class DropReason : std::uint8_t {
  kNotStarted,           // start() has not been called (or stop() was)
  kMalformed,            // decode_mkpdu refused the frame (its MkpduError is counted too)
  kUnknownCkn,           // the CKN names another CA
  kBadIcv,               // the ICV does not verify with our ICK: another CAK, or a forged/altered frame
  kOwnMi,                // our own MKPDU came back (our MI and our SCI): a loop or a reflection
  kOwnSci,               // our SCI with another MI: a replay of a previous run of ours, or a duplicate SCI
  kMiConflict,           // another SCI uses our MI, or a peer lists our MI with an MN we never sent
  kReplayedMn,           // MN equal to the last one accepted from that MI
  kStaleMn,              // MN lower than the last one accepted from that MI
  kPeerSciChanged,       // a known MI with another SCI than before
  kSupersededMi,         // an MI whose SCI came back under a new MI (a replay of a restarted member)
  kPeerTableFull,        // a new MI while max_peers members are known
  kNotKeyServer,         // a Distributed SAK from a member that is not the elected key server
                         // (a worse priority, not live, or we are the key server)
  kMacsecNotAdvised,     // a Distributed SAK without a key (MACsec not to be used): we only run secured
  kCipherSuiteMismatch,  // a Distributed SAK for another cipher suite than ours
  kUnwrapFailed,         // the Distributed SAK does not unwrap with our KEK
  kStaleKeyNumber,       // a Distributed SAK with a KN older than the latest from that key server
  kUnknownKeyNumber,     // a SAK Use or Distributed SAK naming KN 0, or (to the key server) a KN it never issued
  kAnInUse,              // a Distributed SAK for the AN of the SA we transmit with
};
inline constexpr std::size_t kDropReasonCount = static_cast<std::size_t>(DropReason::kAnInUse) + 1;
std::string_view to_string(DropReason r);

// Why a rekey (a new SAK from the key server) started.
enum class RekeyReason : std::uint8_t {
  kNewKeyServer,  // we were elected (the first SAK, or a new key server)
  kMemberJoined,  // a peer became live
  kMemberLeft,    // a live peer aged out or was superseded
  kTimer,         // the configured SAK lifetime passed
  kPnThreshold,   // a transmit PN (ours or a peer's lowest acceptable PN) passed the threshold
  kOperator,      // asked for by the operator (Participant::rekey_now; `macsec up --mka` on SIGHUP)
};
inline constexpr std::size_t kRekeyReasonCount = static_cast<std::size_t>(RekeyReason::kOperator) + 1;
std::string_view to_string(RekeyReason r);

// Why a live peer stopped being one.
enum class PeerLossReason : std::uint8_t {
  kLifeTimeExpired,  // no MKPDU listing us with a recent MN for the MKA Life Time
  kSuperseded,       // a new MI with the same SCI became live (the peer restarted)
  kStopped,          // we stopped (stop())
};
std::string_view to_string(PeerLossReason r);

// One call made to the SecYDriver.
enum class SaActionType : std::uint8_t {
  kInstallRxSa,
  kInstallTxSa,
  kEnableTx,
  kRetireRxSa,
  kRetireTxSa,
  kRemoveRxSc,
};
std::string_view to_string(SaActionType t);

struct SaAction {
  SaActionType type = SaActionType::kInstallRxSa;
  std::uint64_t sci = 0;     // peer SCI (receive), ours (transmit)
  std::uint8_t an = 0;
  KeyIdentifier ki{};        // the SAK's KI (empty for kRemoveRxSc)
  std::uint64_t pn = 0;      // next PN (TX install) or lowest PN (RX install)
  bool ok = true;            // the driver accepted it
  std::optional<SecYError> error;
};

enum class EventType : std::uint8_t {
  kPeerPotential,     // a new member was heard (valid ICV), not yet live
  kPeerLive,          // a member listed our MI with a recent MN: it is live
  kPeerLost,          // a live member stopped being live (see loss)
  kKeyServerElected,  // sci is the new key server (ours when we are it)
  kKeyServerNone,     // no key server any more (no live peer)
  kSakGenerated,      // we (the key server) generated SAK ki/an for reason and distribute it
  kSakInstalled,      // receive SAs for SAK ki/an are installed (lrx): receiving with it
  kSakTransmitting,   // transmitting with SAK ki/an (ltx)
  kSakRetired,        // SAK ki/an removed from the SecY
  kMiChanged,         // we chose a new MI (MI conflict or MN exhaustion)
  kSecYError,         // a SecY call failed (see error, an)
  kRandomFailure,     // the random source failed (no MI or nonce: retried later)
};
std::string_view to_string(EventType t);

struct Event {
  EventType type = EventType::kPeerLive;
  TimePoint at{};
  std::uint64_t sci = 0;           // the peer (peer events), the key server, or ours
  MemberId mi{};                   // the peer's MI (peer events), our new MI (kMiChanged)
  KeyIdentifier ki{};              // SAK events
  std::uint8_t an = 0;             // SAK events, kSecYError
  std::string sak_fingerprint;     // SAK events: fingerprint(SAK), never the key
  std::optional<RekeyReason> rekey;        // kSakGenerated
  std::optional<PeerLossReason> loss;      // kPeerLost
  std::optional<SecYError> error;          // kSecYError
};

// An event of `type` at `at` about the member (sci, mi).
Event make_event(EventType type, TimePoint at, std::uint64_t sci = 0, const MemberId& mi = {});

// The result of start(), on_mkpdu(), on_timer(), on_tx_pn() and stop().
struct Output {
  // Complete Ethernet frames (DA, SA, EtherType 0x888E, EAPOL, MKPDU, ICV)
  // to send on the uncontrolled port, in order.
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<SaAction> sa_actions;
  std::vector<Event> events;
  std::optional<DropReason> dropped;  // on_mkpdu: the frame was dropped
};

}  // namespace layersec::mka
