#include "layersec/mka/output.h"

namespace layersec::mka {

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::kNotStarted: return "participant not started";
    case DropReason::kMalformed: return "malformed MKPDU";
    case DropReason::kUnknownCkn: return "CKN of another CA";
    case DropReason::kBadIcv: return "ICV does not verify (wrong CAK or altered frame)";
    case DropReason::kOwnMi: return "our own MKPDU (own MI and SCI)";
    case DropReason::kOwnSci: return "our SCI with another MI";
    case DropReason::kMiConflict: return "another member uses our MI";
    case DropReason::kReplayedMn: return "replayed MN";
    case DropReason::kStaleMn: return "stale MN";
    case DropReason::kPeerSciChanged: return "known MI with another SCI";
    case DropReason::kSupersededMi: return "MI of a member that restarted";
    case DropReason::kPeerTableFull: return "peer table full";
    case DropReason::kNotKeyServer: return "distributed SAK from a member that is not the key server";
    case DropReason::kMacsecNotAdvised: return "distributed SAK without a key";
    case DropReason::kCipherSuiteMismatch: return "distributed SAK for another cipher suite";
    case DropReason::kUnwrapFailed: return "distributed SAK does not unwrap";
    case DropReason::kStaleKeyNumber: return "distributed SAK older than the latest";
    case DropReason::kUnknownKeyNumber: return "SAK for an unknown key number";
    case DropReason::kAnInUse: return "distributed SAK for the AN we transmit with";
  }
  return "?";
}

std::string_view to_string(RekeyReason r) {
  switch (r) {
    case RekeyReason::kNewKeyServer: return "new key server";
    case RekeyReason::kMemberJoined: return "member joined";
    case RekeyReason::kMemberLeft: return "member left";
    case RekeyReason::kTimer: return "SAK lifetime";
    case RekeyReason::kPnThreshold: return "PN threshold";
    case RekeyReason::kOperator: return "operator";
  }
  return "?";
}

std::string_view to_string(PeerLossReason r) {
  switch (r) {
    case PeerLossReason::kLifeTimeExpired: return "life time expired";
    case PeerLossReason::kSuperseded: return "superseded by a new MI with the same SCI";
    case PeerLossReason::kStopped: return "participant stopped";
  }
  return "?";
}

std::string_view to_string(SaActionType t) {
  switch (t) {
    case SaActionType::kInstallRxSa: return "install_rx_sa";
    case SaActionType::kInstallTxSa: return "install_tx_sa";
    case SaActionType::kEnableTx: return "enable_tx";
    case SaActionType::kRetireRxSa: return "retire_rx_sa";
    case SaActionType::kRetireTxSa: return "retire_tx_sa";
    case SaActionType::kRemoveRxSc: return "remove_rx_sc";
  }
  return "?";
}

Event make_event(EventType type, TimePoint at, std::uint64_t sci, const MemberId& mi) {
  Event e;
  e.type = type;
  e.at = at;
  e.sci = sci;
  e.mi = mi;
  return e;
}

std::string_view to_string(EventType t) {
  switch (t) {
    case EventType::kPeerPotential: return "peer_potential";
    case EventType::kPeerLive: return "peer_live";
    case EventType::kPeerLost: return "peer_lost";
    case EventType::kKeyServerElected: return "key_server_elected";
    case EventType::kKeyServerNone: return "key_server_none";
    case EventType::kSakGenerated: return "sak_generated";
    case EventType::kSakInstalled: return "sak_installed";
    case EventType::kSakTransmitting: return "sak_transmitting";
    case EventType::kSakRetired: return "sak_retired";
    case EventType::kMiChanged: return "mi_changed";
    case EventType::kSecYError: return "secy_error";
    case EventType::kRandomFailure: return "random_failure";
  }
  return "?";
}

}  // namespace layersec::mka
