#include "layersec/mka/key_server.h"

#include <stdexcept>
#include <vector>

#include "layersec/mka/keys.h"

namespace layersec::mka {

bool ranks_before(const KeyServerCandidate& a, const KeyServerCandidate& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  return a.sci < b.sci;
}

std::optional<std::size_t> elect_key_server(std::span<const KeyServerCandidate> candidates) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].priority == kNeverKeyServer) continue;
    if (!best || ranks_before(candidates[i], candidates[*best])) best = i;
  }
  return best;
}

std::string_view to_string(KeyServerState s) {
  switch (s) {
    case KeyServerState::kStandby: return "standby";
    case KeyServerState::kElected: return "elected";
    case KeyServerState::kDistributing: return "distributing";
  }
  return "?";
}

std::string_view to_string(KeyServerError e) {
  switch (e) {
    case KeyServerError::kNotElected: return "not the key server";
    case KeyServerError::kRandom: return "random source failed";
    case KeyServerError::kKnExhausted: return "key numbers exhausted";
    case KeyServerError::kCrypto: return "SAK derivation or key wrap failed";
  }
  return "?";
}

KeyServer::KeyServer(KeyServerConfig config) : config_(config) {
  const std::uint64_t space = max_pn(config_.suite);
  pn_threshold_ = config_.pn_threshold != 0 ? config_.pn_threshold
                                            : (is_xpn(config_.suite) ? 0xC000000000000000ULL : 0xC0000000ULL);
  if (pn_threshold_ > space) {
    throw std::invalid_argument("mka key server: pn_rekey_threshold beyond the cipher suite's PN space");
  }
}

void KeyServer::elect() {
  if (state_ != KeyServerState::kStandby) return;
  state_ = KeyServerState::kElected;
  pending_ = RekeyReason::kNewKeyServer;
}

void KeyServer::stand_down() {
  state_ = KeyServerState::kStandby;
  pending_.reset();
  distributing_.reset();
}

void KeyServer::request_rekey(RekeyReason reason) {
  if (state_ == KeyServerState::kStandby) return;
  if (!pending_) pending_ = reason;
}

void KeyServer::on_time(TimePoint now) {
  if (state_ == KeyServerState::kStandby || config_.rekey_interval <= Duration::zero() || !last_generated_) return;
  if (now >= *last_generated_ + config_.rekey_interval) request_rekey(RekeyReason::kTimer);
}

void KeyServer::on_pn(std::uint64_t pn) {
  if (pn >= pn_threshold_) request_rekey(RekeyReason::kPnThreshold);
}

TimePoint KeyServer::next_deadline() const {
  if (state_ == KeyServerState::kStandby || config_.rekey_interval <= Duration::zero() || !last_generated_ ||
      pending_) {
    return TimePoint::max();
  }
  return *last_generated_ + config_.rekey_interval;
}

Result<GeneratedSak, KeyServerError> KeyServer::generate(const SecretBytes& cak, const SecretBytes& kek,
                                                         const MemberId& own_mi,
                                                         std::span<const MemberId> member_mis, std::uint8_t an,
                                                         RandomSource& rng, TimePoint now) {
  if (state_ == KeyServerState::kStandby) return Err(KeyServerError::kNotElected);
  if (last_kn_ == UINT32_MAX) return Err(KeyServerError::kKnExhausted);
  const std::size_t len = sak_size(config_.suite);
  SecretBytes nonce(len);
  if (!rng.fill(nonce.mutable_span())) return Err(KeyServerError::kRandom);
  std::vector<std::uint8_t> mi_list;
  mi_list.reserve(kMiSize * (member_mis.size() + 1));
  mi_list.insert(mi_list.end(), own_mi.begin(), own_mi.end());
  for (const auto& mi : member_mis) mi_list.insert(mi_list.end(), mi.begin(), mi.end());
  const std::uint32_t kn = last_kn_ + 1;
  auto sak = derive_sak(cak, nonce.span(), mi_list, kn, len);
  if (!sak) return Err(KeyServerError::kCrypto);
  auto wrapped = wrap_key(kek, *sak);
  if (!wrapped) return Err(KeyServerError::kCrypto);

  GeneratedSak g;
  g.ki = KeyIdentifier{own_mi, kn};
  g.an = static_cast<std::uint8_t>(an & 0x03);
  g.reason = pending_.value_or(RekeyReason::kNewKeyServer);
  g.parameter_set.distributed_an = g.an;
  g.parameter_set.confidentiality_offset = static_cast<std::uint8_t>(config_.offset);
  g.parameter_set.has_key = true;
  g.parameter_set.kn = kn;
  // §11.11.1: the default suite (GCM-AES-128) goes without its identifier,
  // as wpa_supplicant sends and expects it (body 28).
  if (config_.suite != CipherSuite::kGcmAes128) g.parameter_set.cipher_suite = cipher_suite_id(config_.suite);
  g.parameter_set.wrapped_sak = std::move(*wrapped);
  g.sak = std::move(*sak);

  last_kn_ = kn;
  last_generated_ = now;
  pending_.reset();
  distributing_ = g.parameter_set;
  members_.assign(member_mis.begin(), member_mis.end());
  state_ = KeyServerState::kDistributing;
  return g;
}

const DistributedSak* KeyServer::distributing() const {
  return state_ == KeyServerState::kDistributing && distributing_ ? &*distributing_ : nullptr;
}

void KeyServer::abandon(RekeyReason reason) {
  if (state_ != KeyServerState::kDistributing) return;
  state_ = KeyServerState::kElected;
  distributing_.reset();
  pending_ = reason;
}

void KeyServer::distribution_done() {
  if (state_ != KeyServerState::kDistributing) return;
  state_ = KeyServerState::kElected;
  distributing_.reset();
}

}  // namespace layersec::mka
