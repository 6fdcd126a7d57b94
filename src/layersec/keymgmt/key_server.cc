#include "layersec/keymgmt/key_server.h"

#include <algorithm>
#include <string_view>

namespace layersec::keymgmt {

std::uint64_t KeyServerCounters::refused_total() const {
  std::uint64_t n = 0;
  for (auto v : refused) n += v;
  return n;
}

KeyServer::KeyServer(KeyServerConfig config, someip::Runtime& runtime, secoc::Engine& engine,
                     const kex::Identity& identity, const Clock& clock)
    : config_(std::move(config)), runtime_(runtime), engine_(engine), identity_(identity), clock_(clock) {}

KeyServer::~KeyServer() { *alive_ = false; }

Result<std::unique_ptr<KeyServer>, KeyMgmtError> KeyServer::create(KeyServerConfig config, someip::Runtime& runtime,
                                                                   secoc::Engine& engine,
                                                                   const kex::Identity& identity,
                                                                   const kex::TrustStore& trust, const Clock& clock) {
  if (config.groups.empty()) return Err(KeyMgmtError::kUnknownGroup);
  if (config.allowed_kems.empty()) config.allowed_kems = {config.mode_b.kem};
  if (std::find(config.allowed_kems.begin(), config.allowed_kems.end(), config.mode_b.kem) ==
      config.allowed_kems.end())
    config.allowed_kems.insert(config.allowed_kems.begin(), config.mode_b.kem);
  std::unique_ptr<KeyServer> s(new KeyServer(std::move(config), runtime, engine, identity, clock));
  auto pub = kex::ModeBPublisher::create(s->config_.mode_b, identity, trust, s->config_.allowed_kems);
  if (!pub.ok()) return Err(from_mode_b(pub.error()));
  s->publisher_ = std::move(pub).value();
  s->certificate_der_ = identity.certificate.der();
  const TimePoint now = clock.now();
  for (const auto& b : s->config_.groups) {
    if (b.eventgroup_id == 0 || s->find(b.service_id, b.eventgroup_id)) return Err(KeyMgmtError::kUnknownGroup);
    kex::GroupKeyConfig gc = s->config_.group_template;
    gc.service_id = b.service_id;
    gc.eventgroup_id = b.eventgroup_id;
    auto m = kex::GroupKeyManager::create(gc, now);
    if (!m.ok()) return Err(KeyMgmtError::kInternal);
    Group g;
    g.binding = b;
    g.manager = std::move(m).value();
    if (!engine.install_key(b.secoc_key_group, g.manager->current_key_id(), g.manager->current_key(), now).ok())
      return Err(KeyMgmtError::kSecoc);
    s->groups_.push_back(std::move(g));
  }
  const auto& ids = s->config_.ids;
  KeyServer* self = s.get();
  std::weak_ptr<bool> alive = s->alive_;
  const std::pair<std::uint16_t, void (KeyServer::*)(const someip::Request&, someip::Reply&)> handlers[] = {
      {ids.hello_method, &KeyServer::on_hello},
      {ids.key_request_method, &KeyServer::on_key_request},
      {ids.key_confirm_method, &KeyServer::on_key_confirm},
  };
  for (const auto& [method, fn] : handlers) {
    auto st = runtime.set_method_handler(ids.service_id, ids.instance_id, method,
                                         [self, alive, fn = fn](const someip::Request& r, someip::Reply& out) {
                                           if (auto a = alive.lock(); a && *a) {
                                             (self->*fn)(r, out);
                                           } else {
                                             out.code = someip::ReturnCode::kNotReady;
                                             out.payload.clear();
                                           }
                                         });
    if (!st.ok()) return Err(KeyMgmtError::kRuntime);
  }
  return s;
}

KeyServer::Group* KeyServer::find(std::uint16_t service, std::uint16_t eventgroup) {
  for (auto& g : groups_)
    if (g.binding.service_id == service && g.binding.eventgroup_id == eventgroup) return &g;
  return nullptr;
}
const KeyServer::Group* KeyServer::find(std::uint16_t service, std::uint16_t eventgroup) const {
  for (const auto& g : groups_)
    if (g.binding.service_id == service && g.binding.eventgroup_id == eventgroup) return &g;
  return nullptr;
}

void KeyServer::refuse(someip::Reply& reply, KeyMgmtError e) {
  ++counters_.refused[static_cast<std::size_t>(e)];
  reply.code = to_return_code(e);
  reply.payload.clear();
}

void KeyServer::on_hello(const someip::Request& req, someip::Reply& reply) {
  auto h = parse_hello(req.payload);
  if (!h.ok()) return refuse(reply, h.error());
  // The client's first preference that our policy allows.
  for (auto k : h->kems) {
    if (std::find(config_.allowed_kems.begin(), config_.allowed_kems.end(), k) == config_.allowed_kems.end())
      continue;
    const auto mac = kex::confirm_mac_wire_id(config_.mode_b.confirm_mac);
    if (!mac) return refuse(reply, KeyMgmtError::kInternal);
    ++counters_.hellos;
    reply.code = someip::ReturnCode::kOk;
    reply.payload = encode_hello_response(k, *mac, certificate_der_);
    return;
  }
  refuse(reply, KeyMgmtError::kUnsupportedKem);
}

void KeyServer::on_key_request(const someip::Request& req, someip::Reply& reply) {
  const TimePoint now = clock_.now();
  auto view = kex::parse_key_request(req.payload);
  if (!view.ok()) return refuse(reply, from_mode_b(view.error()));
  Group* g = find(view->header.service_id, view->header.eventgroup_id);
  if (!g) return refuse(reply, KeyMgmtError::kUnknownGroup);
  // Revocation first (a public lookup on the presented certificate), then
  // every Mode B check; nothing changes before both pass.
  auto cert = kex::Certificate::from_der(view->certificate);
  if (!cert.ok()) return refuse(reply, KeyMgmtError::kCertificate);
  if (g->revoked.count(cert->info().sha256_fingerprint)) return refuse(reply, KeyMgmtError::kRevoked);
  auto accepted = publisher_->on_request(req.payload, now);
  if (!accepted.ok()) return refuse(reply, from_mode_b(accepted.error()));
  ++counters_.requests_accepted;
  const std::string& member = accepted->subscriber_fingerprint;
  if (!g->manager->is_member(member)) {
    // Rekey on join: the newcomer gets a key no earlier traffic used.
    auto ev = g->manager->join(member, SecretBytes(), now);
    if (!ev.ok()) return refuse(reply, KeyMgmtError::kInternal);
    ++counters_.joins;
    if (auto st = activate(*g, 0, false); !st.ok()) return refuse(reply, st.error());
  }
  auto delivery = publisher_->deliver(accepted->handle, g->manager->current_key(), g->manager->current_key_id(), now);
  if (!delivery.ok()) return refuse(reply, from_mode_b(delivery.error()));
  reply.code = someip::ReturnCode::kOk;
  reply.payload = std::move(delivery).value();
}

void KeyServer::on_key_confirm(const someip::Request& req, someip::Reply& reply) {
  auto act = publisher_->on_confirm(req.payload, clock_.now());
  if (!act.ok()) return refuse(reply, from_mode_b(act.error()));
  ++counters_.confirms_accepted;
  if (Group* g = find(act->service_id, act->eventgroup_id)) g->confirmed[act->subscriber_fingerprint] = act->key_id;
  reply.code = someip::ReturnCode::kOk;
  reply.payload = encode_confirm_ack({act->service_id, act->eventgroup_id, act->key_id});
}

Status<KeyMgmtError> KeyServer::activate(Group& g, std::uint32_t retire_id, bool revoke) {
  const TimePoint now = clock_.now();
  const std::uint32_t id = g.manager->current_key_id();
  if (!engine_.install_key(g.binding.secoc_key_group, id, g.manager->current_key(), now).ok())
    return Err(KeyMgmtError::kSecoc);
  if (retire_id != 0) (void)engine_.retire_key(g.binding.secoc_key_group, retire_id);
  ++counters_.rekeys;
  RekeyNotice n;
  n.service_id = g.binding.service_id;
  n.eventgroup_id = g.binding.eventgroup_id;
  n.key_id = id;
  n.revoke_previous = revoke;
  n.timestamp_ns = static_cast<std::uint64_t>(now.ns());
  auto body = encode_rekey_notice_body(n);
  const auto label = std::string_view(kRekeyLabel);
  const ByteSpan parts[] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(label.data()), label.size()),
                            ByteSpan(body)};
  auto sig = kex::sign(identity_.key, parts);
  if (!sig.ok()) return Err(KeyMgmtError::kInternal);
  append_signature(body, *sig);
  const auto& ids = config_.ids;
  // No subscriber yet is not an error: nobody needs the notice.
  // The notice is best effort (UDP, no retransmission): the rekey stands
  // even when it cannot be sent, and a member that misses it keeps failing
  // verification until its next handshake.
  if (runtime_.subscriber_count(ids.service_id, ids.instance_id, ids.rekey_eventgroup) > 0) {
    if (runtime_.notify(ids.service_id, ids.instance_id, ids.rekey_event, body).ok()) {
      ++counters_.notices_sent;
    } else {
      ++counters_.notices_failed;
    }
  }
  return {};
}

Status<KeyMgmtError> KeyServer::evict(std::uint16_t service, std::uint16_t eventgroup, const std::string& fingerprint) {
  Group* g = find(service, eventgroup);
  if (!g) return Err(KeyMgmtError::kUnknownGroup);
  if (!g->manager->is_member(fingerprint)) return Err(KeyMgmtError::kUnknownSession);
  const std::uint32_t old_id = g->manager->current_key_id();
  auto ev = g->manager->leave(fingerprint, clock_.now());
  if (!ev.ok()) return Err(KeyMgmtError::kInternal);
  g->revoked.insert(fingerprint);
  ++counters_.evictions;
  return activate(*g, old_id, true);
}

void KeyServer::readmit(std::uint16_t service, std::uint16_t eventgroup, const std::string& fingerprint) {
  if (Group* g = find(service, eventgroup)) g->revoked.erase(fingerprint);
}

Status<KeyMgmtError> KeyServer::rekey(std::uint16_t service, std::uint16_t eventgroup) {
  Group* g = find(service, eventgroup);
  if (!g) return Err(KeyMgmtError::kUnknownGroup);
  auto ev = g->manager->rekey(clock_.now());
  if (!ev.ok()) return Err(KeyMgmtError::kInternal);
  return activate(*g, 0, false);
}

std::uint32_t KeyServer::current_key_id(std::uint16_t service, std::uint16_t eventgroup) const {
  const Group* g = find(service, eventgroup);
  return g ? g->manager->current_key_id() : 0;
}

std::size_t KeyServer::member_count(std::uint16_t service, std::uint16_t eventgroup) const {
  const Group* g = find(service, eventgroup);
  return g ? g->manager->member_count() : 0;
}

std::size_t KeyServer::members_on_current_key(std::uint16_t service, std::uint16_t eventgroup) const {
  const Group* g = find(service, eventgroup);
  if (!g) return 0;
  const std::uint32_t current = g->manager->current_key_id();
  std::size_t n = 0;
  for (const auto& [fingerprint, key_id] : g->confirmed)
    if (key_id == current && g->manager->is_member(fingerprint)) ++n;
  return n;
}

}  // namespace layersec::keymgmt
