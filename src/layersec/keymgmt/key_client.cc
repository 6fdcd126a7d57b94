#include "layersec/keymgmt/key_client.h"

#include <algorithm>
#include <string_view>

namespace layersec::keymgmt {

KeyClient::KeyClient(KeyClientConfig config, someip::Runtime& runtime, secoc::Engine& engine,
                     const kex::Identity& identity, const kex::TrustStore& trust, const Clock& clock)
    : config_(std::move(config)), runtime_(runtime), engine_(engine), identity_(identity), trust_(trust),
      clock_(clock) {}

KeyClient::~KeyClient() { *alive_ = false; }

Result<std::unique_ptr<KeyClient>, KeyMgmtError> KeyClient::create(KeyClientConfig config, someip::Runtime& runtime,
                                                                   secoc::Engine& engine,
                                                                   const kex::Identity& identity,
                                                                   const kex::TrustStore& trust, const Clock& clock) {
  if (config.groups.empty()) return Err(KeyMgmtError::kUnknownGroup);
  if (config.kems.empty() || config.kems.size() > kMaxHelloKems) return Err(KeyMgmtError::kUnsupportedKem);
  std::unique_ptr<KeyClient> c(new KeyClient(std::move(config), runtime, engine, identity, trust, clock));
  c->fingerprint_ = identity.certificate.info().sha256_fingerprint;
  for (const auto& b : c->config_.groups) {
    if (b.eventgroup_id == 0 || c->find(b.service_id, b.eventgroup_id)) return Err(KeyMgmtError::kUnknownGroup);
    Group g;
    g.binding = b;
    c->groups_.push_back(std::move(g));
  }
  KeyClient* self = c.get();
  std::weak_ptr<bool> alive = c->alive_;
  runtime.on_event(c->config_.ids.service_id, c->config_.ids.rekey_event,
                   [self, alive](const someip::Notification& n) {
                     if (auto a = alive.lock(); a && *a) self->on_notice(n);
                   });
  return c;
}

KeyClient::Group* KeyClient::find(std::uint16_t service, std::uint16_t eventgroup) {
  for (auto& g : groups_)
    if (g.binding.service_id == service && g.binding.eventgroup_id == eventgroup) return &g;
  return nullptr;
}
const KeyClient::Group* KeyClient::find(std::uint16_t service, std::uint16_t eventgroup) const {
  for (const auto& g : groups_)
    if (g.binding.service_id == service && g.binding.eventgroup_id == eventgroup) return &g;
  return nullptr;
}

KeyClient::GroupState KeyClient::state(std::uint16_t service, std::uint16_t eventgroup) const {
  const Group* g = find(service, eventgroup);
  return g ? g->state : GroupState::kIdle;
}
std::uint32_t KeyClient::key_id(std::uint16_t service, std::uint16_t eventgroup) const {
  const Group* g = find(service, eventgroup);
  return g ? g->key_id : 0;
}
std::optional<KeyMgmtError> KeyClient::last_error(std::uint16_t service, std::uint16_t eventgroup) const {
  const Group* g = find(service, eventgroup);
  return g ? g->error : std::nullopt;
}

void KeyClient::fail(Group& g, KeyMgmtError e) {
  ++counters_.failures[static_cast<std::size_t>(e)];
  g.error = e;
  g.state = GroupState::kFailed;
  g.pending_key.clear();
  g.pending_id = 0;
  if (g.subscriber) g.subscriber->reset();
}

Status<KeyMgmtError> KeyClient::start() {
  const auto& ids = config_.ids;
  if (!runtime_.available(ids.service_id, ids.instance_id)) return Err(KeyMgmtError::kRuntime);
  for (auto& g : groups_) {
    if (g.state == GroupState::kHello || g.state == GroupState::kAwaitingDelivery ||
        g.state == GroupState::kAwaitingAck)
      continue;  // already running
    g.state = GroupState::kHello;
    g.error.reset();
  }
  const auto hello = encode_hello({config_.kems});
  std::weak_ptr<bool> alive = alive_;
  auto sent = runtime_.request(
      ids.service_id, ids.instance_id, ids.hello_method, hello,
      [this, alive](const someip::ResponseResult& r) {
        if (auto a = alive.lock(); a && *a) on_hello_response(r);
      },
      config_.request_timeout);
  if (!sent.ok()) {
    for (auto& g : groups_)
      if (g.state == GroupState::kHello) fail(g, KeyMgmtError::kRuntime);
    return Err(KeyMgmtError::kRuntime);
  }
  ++counters_.hellos;
  return {};
}

void KeyClient::on_hello_response(const someip::ResponseResult& r) {
  auto fail_all = [&](KeyMgmtError e) {
    for (auto& g : groups_)
      if (g.state == GroupState::kHello) fail(g, e);
  };
  if (r.code != someip::ReturnCode::kOk) return fail_all(from_return_code(r.code));
  auto h = parse_hello_response(r.payload);
  if (!h.ok()) return fail_all(h.error());
  if (std::find(config_.kems.begin(), config_.kems.end(), h->kem) == config_.kems.end())
    return fail_all(KeyMgmtError::kUnsupportedKem);
  auto cert = kex::Certificate::from_der(h->certificate);
  if (!cert.ok()) return fail_all(KeyMgmtError::kCertificate);
  const std::int64_t now_s = clock_.now().ns() / 1'000'000'000LL;
  kex::ModeBConfig mb = config_.mode_b;
  mb.kem = h->kem;
  mb.confirm_mac = h->mac_id == 2 ? crypto::MacAlgorithm::kCmacAes256 : crypto::MacAlgorithm::kHmacSha256;
  // Decide everything before changing state: the certificate must be valid
  // and authorised for every protected service we wait for.
  for (auto& g : groups_) {
    if (g.state != GroupState::kHello) continue;
    auto v = trust_.verify_for_service(*cert, now_s, g.binding.service_id);
    if (!v.ok()) {
      fail(g, v.error() == kex::PkiError::kUnauthorisedService ? KeyMgmtError::kUnauthorised
                                                               : KeyMgmtError::kCertificate);
      continue;
    }
    auto sub = kex::ModeBSubscriber::create(mb, identity_, trust_);
    if (!sub.ok()) {
      fail(g, from_mode_b(sub.error()));
      continue;
    }
    g.subscriber = std::move(sub).value();
  }
  publisher_cert_der_.assign(h->certificate.begin(), h->certificate.end());
  publisher_cert_ = std::move(cert).value();
  for (auto& g : groups_)
    if (g.state == GroupState::kHello) handshake(g);
}

void KeyClient::handshake(Group& g) {
  if (!g.subscriber) return fail(g, KeyMgmtError::kProtocol);
  auto req = g.subscriber->start(g.binding.service_id, g.binding.eventgroup_id, clock_.now());
  if (!req.ok()) return fail(g, from_mode_b(req.error()));
  if (observer_) observer_(1, *req);
  const std::size_t index = static_cast<std::size_t>(&g - groups_.data());
  const auto& ids = config_.ids;
  std::weak_ptr<bool> alive = alive_;
  auto sent = runtime_.request(
      ids.service_id, ids.instance_id, ids.key_request_method, *req,
      [this, alive, index](const someip::ResponseResult& r) {
        if (auto a = alive.lock(); a && *a) on_delivery(index, r);
      },
      config_.request_timeout);
  if (!sent.ok()) return fail(g, KeyMgmtError::kRuntime);
  ++counters_.handshakes_started;
  g.state = GroupState::kAwaitingDelivery;
  g.error.reset();
}

void KeyClient::on_delivery(std::size_t index, const someip::ResponseResult& r) {
  if (index >= groups_.size()) return;
  Group& g = groups_[index];
  if (g.state != GroupState::kAwaitingDelivery) return;  // late answer to an abandoned handshake
  if (r.code != someip::ReturnCode::kOk) return fail(g, from_return_code(r.code));
  // The key server that delivers must be the one whose certificate we
  // validated in Hello (its key signs the rekey notices).
  auto view = kex::parse_key_delivery(r.payload);
  if (!view.ok()) return fail(g, from_mode_b(view.error()));
  if (!std::equal(view->certificate.begin(), view->certificate.end(), publisher_cert_der_.begin(),
                  publisher_cert_der_.end()))
    return fail(g, KeyMgmtError::kWrongTranscript);
  auto confirm = g.subscriber->on_delivery(r.payload, clock_.now());
  if (!confirm.ok()) return fail(g, from_mode_b(confirm.error()));
  g.pending_id = g.subscriber->key_id();
  g.pending_key = g.subscriber->take_key();
  if (observer_) observer_(3, *confirm);
  const auto& ids = config_.ids;
  std::weak_ptr<bool> alive = alive_;
  auto sent = runtime_.request(
      ids.service_id, ids.instance_id, ids.key_confirm_method, *confirm,
      [this, alive, index](const someip::ResponseResult& rr) {
        if (auto a = alive.lock(); a && *a) on_ack(index, rr);
      },
      config_.request_timeout);
  if (!sent.ok()) return fail(g, KeyMgmtError::kRuntime);
  g.state = GroupState::kAwaitingAck;
}

void KeyClient::on_ack(std::size_t index, const someip::ResponseResult& r) {
  if (index >= groups_.size()) return;
  Group& g = groups_[index];
  if (g.state != GroupState::kAwaitingAck) return;
  if (r.code != someip::ReturnCode::kOk) return fail(g, from_return_code(r.code));
  auto ack = parse_confirm_ack(r.payload);
  if (!ack.ok()) return fail(g, ack.error());
  if (ack->service_id != g.binding.service_id || ack->eventgroup_id != g.binding.eventgroup_id ||
      ack->key_id != g.pending_id)
    return fail(g, KeyMgmtError::kWrongTranscript);
  if (g.pending_id > g.key_id) {
    if (!engine_.install_key(g.binding.secoc_key_group, g.pending_id, g.pending_key, clock_.now()).ok())
      return fail(g, KeyMgmtError::kSecoc);
    g.previous_id = g.key_id;
    g.key_id = g.pending_id;
    ++counters_.keys_installed;
  }
  g.pending_key.clear();
  g.pending_id = 0;
  g.subscriber->reset();
  g.state = GroupState::kKeyed;
  g.error.reset();
  // A notice announced a newer key while this handshake ran.
  if (g.wanted_id > g.key_id) handshake(g);
}

void KeyClient::on_notice(const someip::Notification& n) {
  auto notice = parse_rekey_notice(n.payload);
  if (!notice.ok() || publisher_cert_der_.empty()) {
    ++counters_.notices_ignored;
    return;
  }
  Group* g = find(notice->service_id, notice->eventgroup_id);
  if (!g || g->state == GroupState::kIdle || g->state == GroupState::kHello) {
    ++counters_.notices_ignored;
    return;
  }
  const auto label = std::string_view(kRekeyLabel);
  const ByteSpan parts[] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(label.data()), label.size()),
                            n.payload.first(notice->signed_length)};
  if (!kex::verify_signature(publisher_cert_.public_key(), parts, notice->signature).ok()) {
    ++counters_.notices_ignored;
    return;
  }
  const std::int64_t now = clock_.now().ns();
  const std::int64_t skew = config_.mode_b.max_skew.ns();
  const auto ts = static_cast<std::int64_t>(notice->timestamp_ns);
  if (ts > now + skew || ts < now - skew || notice->key_id <= std::max(g->key_id, g->wanted_id)) {
    ++counters_.notices_ignored;  // stale or replayed
    return;
  }
  ++counters_.notices_accepted;
  g->wanted_id = notice->key_id;
  if (notice->revoke_previous) {
    // A member left: nothing under the keys it held is accepted any more.
    for (std::uint32_t id : {g->key_id, g->previous_id})
      if (id != 0 && engine_.retire_key(g->binding.secoc_key_group, id)) ++counters_.keys_retired;
  }
  if (g->state == GroupState::kKeyed || g->state == GroupState::kFailed) handshake(*g);
}

}  // namespace layersec::keymgmt
