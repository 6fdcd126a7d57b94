#include "layersec/someip/method_dispatcher.h"

#include <utility>

namespace layersec::someip {

namespace {
constexpr int kNoService = -1;

// The error policy's view of the services offered on one port.
class PortTable final : public ServiceTable {
 public:
  PortTable(const RuntimeConfig& cfg, int service) : cfg_(cfg), service_(service) {}
  [[nodiscard]] bool has_service(std::uint16_t) const override { return service_ != kNoService; }
  [[nodiscard]] std::uint8_t interface_version(std::uint16_t) const override {
    return service_ == kNoService ? 0 : offered().major_version;
  }
  [[nodiscard]] MethodKind method(std::uint16_t, std::uint16_t method) const override {
    return service_ == kNoService ? MethodKind::kNone : method_kind(offered(), method);
  }

 private:
  [[nodiscard]] const ServiceConfig& offered() const { return cfg_.services[static_cast<std::size_t>(service_)]; }
  const RuntimeConfig& cfg_;
  int service_;  // the request's service on this port, or kNoService
};
}  // namespace

MethodDispatcher::MethodDispatcher(const RuntimeConfig& config, SecocFilter& secoc, MessageSender& sender,
                                   EventPublisher& events, RuntimeCounters& counters, Delegate& delegate)
    : cfg_(config),
      secoc_(secoc),
      sender_(sender),
      events_(events),
      counters_(counters),
      delegate_(delegate),
      handlers_(config.services.size()) {}

int MethodDispatcher::service_on_port(std::uint16_t service, std::uint16_t port) const {
  for (std::size_t i = 0; i < cfg_.services.size(); ++i)
    if (cfg_.services[i].service_id == service && cfg_.services[i].udp_port == port) return static_cast<int>(i);
  return kNoService;
}

bool MethodDispatcher::port_uses_secoc(std::uint16_t port) const {
  if (!secoc_.active()) return false;
  for (const auto& s : cfg_.services)
    if (s.udp_port == port && secoc_.secoc_service(s.service_id)) return true;
  for (const auto& c : cfg_.clients)
    if (client_port(cfg_, c) == port && secoc_.secoc_service(c.service_id)) return true;
  return false;
}

Status<RuntimeError> MethodDispatcher::set_handler(std::uint16_t service, std::uint16_t instance,
                                                   std::uint16_t method, MethodHandler handler) {
  for (std::size_t i = 0; i < cfg_.services.size(); ++i) {
    const ServiceConfig& s = cfg_.services[i];
    if (s.service_id != service || s.instance_id != instance) continue;
    if (method_kind(s, method) == MethodKind::kNone) break;
    handlers_[i][method] = std::make_shared<MethodHandler>(std::move(handler));
    return {};
  }
  return Err(RuntimeError::kNotConfigured);
}

void MethodDispatcher::send_error(std::uint16_t port, const Endpoint& to, const Header& request, ReturnCode code,
                                  std::optional<SecocRoute> route) {
  // An unauthenticated error on a SecOC service is never sent: it is what
  // an attacker would forge, and unauthenticated input gets no reply.
  if (!route && port_uses_secoc(port)) {
    ++counters_.secoc_unbound_refused;
    return;
  }
  Header h = request;
  h.protocol_version = kProtocolVersion;
  h.message_type = MessageType::kError;
  h.return_code = static_cast<std::uint8_t>(code);
  auto msg = sender_.prepare(h, {}, route);
  if (!msg.ok()) return;
  sender_.transmit(port, to, *msg).ignore();
}

// A field getter or setter of `service` answers into reply_. False: `method`
// is neither.
bool MethodDispatcher::serve_field(std::size_t service, std::uint16_t method, ByteSpan payload) {
  for (auto& e : events_.events(service)) {
    if (e.cfg.getter_method == method) {
      reply_.payload.assign(e.value.begin(), e.value.end());
      return true;
    }
    if (e.cfg.setter_method == method) {
      if (payload.size() > cfg_.max_message_size) {
        reply_.code = ReturnCode::kMalformedMessage;
      } else {
        EventPublisher::store(e, payload);
        reply_.payload.assign(e.value.begin(), e.value.end());
        delegate_.on_field_set(service, e);
      }
      return true;
    }
  }
  return false;
}

void MethodDispatcher::serve(std::uint16_t port, const Endpoint& source, const MessageView& m) {
  const Header& h = m.header;
  const int si = service_on_port(h.service_id, port);
  const RxVerdict v = check_server_message(h, PortTable(cfg_, si));
  const std::uint16_t instance = si == kNoService ? 0 : cfg_.services[static_cast<std::size_t>(si)].instance_id;
  const auto tx = si == kNoService ? std::nullopt : secoc_.tx(h.service_id, instance, h.method_id);
  if (v.action == RxAction::kDrop) {
    counters_.rx.count(v);
    return;
  }
  // A bound id is verified before anything is answered, errors included:
  // unauthenticated input gets no reply (and burns no freshness values).
  ByteSpan payload = m.payload;
  if (si != kNoService) {
    if (!secoc_.inbound(m, instance, source, payload)) return;
  } else if (secoc_.unbound_refused(h.service_id, instance, h.method_id)) {
    secoc_.reject_unbound(h.service_id, instance, h.method_id, source);
    return;
  }
  counters_.rx.count(v);
  if (v.action == RxAction::kReplyError) {
    send_error(port, source, h, v.code, tx);
    return;
  }
  const auto service = static_cast<std::size_t>(si);  // kDeliver: the service is offered here
  const bool no_return = h.message_type == MessageType::kRequestNoReturn;
  reply_.code = ReturnCode::kOk;
  reply_.payload.clear();
  if (!serve_field(service, h.method_id, payload)) {
    auto hit = handlers_[service].find(h.method_id);
    if (hit == handlers_[service].end() || !hit->second || !*hit->second) {
      if (!no_return) send_error(port, source, h, ReturnCode::kNotReady, tx);
      return;
    }
    Request req;
    req.service_id = h.service_id;
    req.instance_id = instance;
    req.method_id = h.method_id;
    req.client_id = h.client_id;
    req.session_id = h.session_id;
    req.fire_and_forget = no_return;
    req.payload = payload;
    req.source = source;
    const std::shared_ptr<MethodHandler> handler = hit->second;  // no allocation
    (*handler)(req, reply_);
  }
  ++counters_.requests_served;
  if (no_return || !delegate_.running()) return;
  if (!tx && secoc_.unbound_refused(h.service_id, instance, h.method_id)) {
    ++counters_.secoc_unbound_refused;  // no tx binding for the answer: never sent unprotected
    return;
  }
  Header out = h;
  out.interface_version = cfg_.services[service].major_version;
  out.message_type = reply_.code == ReturnCode::kOk ? MessageType::kResponse : MessageType::kError;
  out.return_code = static_cast<std::uint8_t>(reply_.code);
  auto msg = sender_.prepare(out, reply_.payload, tx);
  if (!msg.ok()) return;
  sender_.transmit(port, source, *msg).ignore();
}

}  // namespace layersec::someip
