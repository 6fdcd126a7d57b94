#include "layersec/someip/runtime.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "layersec/someip/event_publisher.h"
#include "layersec/someip/message_sender.h"
#include "layersec/someip/method_dispatcher.h"
#include "layersec/someip/request_table.h"
#include "layersec/someip/sd_driver.h"
#include "layersec/someip/secoc_filter.h"
#include "layersec/someip/secoc_sync.h"
#include "layersec/someip/tp.h"

namespace layersec::someip {

std::string_view to_string(RuntimeError e) {
  switch (e) {
    case RuntimeError::kNotConfigured:
      return "not-configured";
    case RuntimeError::kNotAvailable:
      return "not-available";
    case RuntimeError::kNotRunning:
      return "not-running";
    case RuntimeError::kTooLarge:
      return "too-large";
    case RuntimeError::kTooManyPending:
      return "too-many-pending";
    case RuntimeError::kSecoc:
      return "secoc";
    case RuntimeError::kTransport:
      return "transport";
  }
  return "?";
}

namespace {
RuntimeConfig validated(RuntimeConfig c) {
  validate_config(c);
  return c;
}

TpLimits tp_limits(const RuntimeConfig& c) {
  TpLimits limits;
  limits.max_message_size = c.max_message_size + kSecocOverhead;
  limits.timeout = c.tp_reassembly_timeout;
  return limits;
}

constexpr int kNoService = -1;
}  // namespace

struct Runtime::Impl final : SdDriver::Delegate, MethodDispatcher::Delegate {
  using Datagram = PacketWriter::Datagram;

  Impl(RuntimeConfig c, const RuntimeIo& io, RandomSource& r)
      : cfg(validated(std::move(c))),
        packets(io.packets),
        clock(io.clock),
        alarm(io.alarm),
        secoc(cfg, counters),
        sync(counters),
        sd(cfg, io.packets, r, counters, *this),
        publisher(cfg.services),
        sender(cfg, io.packets, secoc, counters),
        dispatcher(cfg, secoc, sender, publisher, counters, *this),
        requests(cfg.max_pending_requests),
        tp(tp_limits(cfg)) {}

  // --- lookups ------------------------------------------------------------
  [[nodiscard]] const ServiceConfig& svc(int i) const { return cfg.services[static_cast<std::size_t>(i)]; }
  [[nodiscard]] int find_service(std::uint16_t service, std::uint16_t instance) const {
    for (std::size_t i = 0; i < cfg.services.size(); ++i)
      if (cfg.services[i].service_id == service && cfg.services[i].instance_id == instance) return static_cast<int>(i);
    return kNoService;
  }
  // A handler that runs `f` only while this runtime is alive.
  template <class F>
  PacketWriter::Handler guarded(F f) {
    std::weak_ptr<bool> alive = token;
    return [alive, f](const Datagram& d) {
      if (auto a = alive.lock(); a && *a) f(d);
    };
  }
  // The receive handler of a service or client port (or a group on it).
  PacketWriter::Handler port_handler(std::uint16_t port) {
    return guarded([this, port](const Datagram& d) { on_datagram(port, d); });
  }

  // --- lifecycle ----------------------------------------------------------
  Status<RuntimeError> start() {
    if (is_running) return {};
    const TimePoint now = clock.now();
    if (!sd.built()) sd.build(secoc.sd_max_payload());
    // Ports: SD, every service port, every client port (each once).
    std::vector<std::uint16_t> ports;
    for (const auto& s : cfg.services) ports.push_back(s.udp_port);
    for (const auto& r : sd.required()) ports.push_back(r.port);
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    auto fail = [&]() -> Status<RuntimeError> {
      ++counters.transport_errors;
      release_ports();
      return Err(RuntimeError::kTransport);
    };
    if (cfg.sd_enabled) {
      if (!packets.bind(cfg.sd_port, guarded([this](const Datagram& d) { on_sd_datagram(d); })).ok()) return fail();
      bound_ports.push_back(cfg.sd_port);
      if (!packets.join(cfg.sd_multicast, guarded([this](const Datagram& d) { on_sd_datagram(d); })).ok())
        return fail();
      sd_joined = true;
    }
    for (auto p : ports) {
      if (!packets.bind(p, port_handler(p)).ok()) return fail();
      bound_ports.push_back(p);
    }
    is_running = true;
    sd.start(now);
    sync.start(now, secoc.active());
    poll_secoc(now);
    reschedule();
    return {};
  }

  void release_ports() {
    sd.leave_all_groups();
    if (sd_joined) packets.leave(cfg.sd_multicast);
    sd_joined = false;
    for (auto p : bound_ports) packets.unbind(p);
    bound_ports.clear();
  }

  void stop() {
    if (!is_running) return;
    sd.stop(clock.now());
    release_ports();
    is_running = false;
    alarm.wake_at(TimePoint::max(), {});
    scheduled = TimePoint::max();
    // Pending requests end with E_NOT_REACHABLE.
    for (auto& [session, p] : requests.drain()) complete(session, p, ReturnCode::kNotReachable);
  }

  static void complete(std::uint16_t session, PendingRequest& p, ReturnCode code) {
    ResponseResult r;
    r.service_id = p.service;
    r.instance_id = p.instance;
    r.method_id = p.method;
    r.session_id = session;
    r.code = code;
    if (p.handler) p.handler(r);
  }

  // --- timers -------------------------------------------------------------
  void reschedule() {
    if (!is_running) return;
    const TimePoint t =
        std::min({sync.deadline(), sd.next_deadline(), tp.next_deadline(), requests.next_deadline()});
    if (t == scheduled) return;
    scheduled = t;
    std::weak_ptr<bool> alive = token;
    alarm.wake_at(t, [this, alive] {
      if (auto a = alive.lock(); a && *a) on_timer();
    });
  }

  void on_timer() {
    scheduled = TimePoint::max();
    if (!is_running) return;
    const TimePoint now = clock.now();
    sd.on_timer(now);
    tp.on_timer(now);
    while (auto expired = requests.pop_expired(now)) {
      ++counters.request_timeouts;
      complete(expired->first, expired->second, ReturnCode::kTimeout);
      if (!is_running) return;  // a timeout handler stopped the runtime
    }
    poll_secoc(now);
    reschedule();
  }

  // The SecOC engine's sync messages, as notifications of the sync event.
  void poll_secoc(TimePoint now) {
    if (!secoc.active()) return;
    auto due = sync.poll(*secoc.engine(), now, secoc.freshness_clock());
    const SecocBindings& b = secoc.bindings();
    if (!due || due->message.empty() || !b.sync_service) return;
    const int si = find_service(*b.sync_service, b.sync_instance);
    EventPublisher::Event* e = si == kNoService ? nullptr : publisher.find(static_cast<std::size_t>(si), b.sync_event);
    if (!e) return;
    std::size_t sent = 0;
    notify_event(si, *e, due->message, nullptr, &sent).ignore();  // counted inside
    // A new subscriber of a multicast eventgroup may not have joined the
    // group yet (it joins on the Ack): it gets its copy by unicast too (a
    // second copy is a harmless duplicate).
    if (EventPublisher::has_multicast(svc(si), e->cfg))
      for (const auto& ep : due->newcomers) notify_event(si, *e, due->message, &ep, &sent).ignore();
    counters.secoc_syncs_sent += sent;
  }

  // --- SD (SdDriver::Delegate) ---------------------------------------------
  void send_sd(const SdDatagram& d) override {
    auto bytes = secoc.protect_sd(d.bytes, packets.local_address());
    if (!bytes) return;
    const Endpoint to = d.multicast ? cfg.sd_multicast : d.destination;
    if (!packets.send(cfg.sd_port, to, *bytes).ok()) {
      ++counters.transport_errors;
      return;
    }
    ++counters.sd_datagrams_sent;
  }
  void on_availability(std::uint16_t service, std::uint16_t instance, bool up) override {
    if (availability_handler) availability_handler(service, instance, up);
  }
  // Initial values: every field of the eventgroup to the new subscriber, by
  // unicast. Not the cached sync message: its cycle may be one the
  // subscriber saw before a restart (and then refuses); a new cycle starts
  // at the end of this SD step (on_step_done).
  void on_subscribed(std::size_t service, const SdEvent& ev) override {
    const int si = static_cast<int>(service);
    for (auto& e : publisher.events(service)) {
      if (!e.in_group(ev.eventgroup_id)) continue;
      if (secoc.is_sync_event(ev.service_id, ev.instance_id, e.cfg.event_id)) sync.add_newcomer(*ev.udp);
      else if (e.cfg.is_field && e.has_value) notify_event(si, e, e.value, &*ev.udp, nullptr).ignore();
    }
  }
  void on_step_done(TimePoint now) override {
    if (sync.schedule_forced(now)) poll_secoc(now);
  }
  PacketWriter::Handler group_handler(std::uint16_t port) override { return port_handler(port); }
  [[nodiscard]] bool running() const override { return is_running; }
  // MethodDispatcher::Delegate: a field setter changed the value.
  void on_field_set(std::size_t service, EventPublisher::Event& e) override {
    notify_event(static_cast<int>(service), e, e.value, nullptr, nullptr).ignore();
  }

  void on_sd_datagram(const Datagram& d) {
    ++counters.datagrams_received;
    if (!is_running || !sd.built()) return;
    const TimePoint now = clock.now();
    const Endpoint own{packets.local_address(), cfg.sd_port, L4Proto::kUdp};
    if (d.source == own) return;  // our own multicast looped back
    auto bytes = secoc.verify_sd(d.payload, d.source);
    if (!bytes) return;
    sd.on_datagram(now, *bytes, d.source, d.multicast);
    reschedule();
  }

  // --- send path ------------------------------------------------------------
  // One notification of event `e` of service number `si` to its subscribers
  // (or only to `only_to`); `sent` (optional) counts the datagrams.
  Status<RuntimeError> notify_event(int si, EventPublisher::Event& e, ByteSpan payload, const Endpoint* only_to,
                                    std::size_t* sent) {
    const ServiceConfig& s = svc(si);
    if (only_to) {
      dests.clear();
      dests.push_back(*only_to);
    } else {
      EventPublisher::destinations(s, e.cfg, sd.subscriptions(static_cast<std::size_t>(si)), dests);
    }
    if (dests.empty()) return {};
    Header h;
    h.service_id = s.service_id;
    h.method_id = e.cfg.event_id;
    h.client_id = 0;
    h.session_id = e.session.next();
    h.interface_version = s.major_version;
    h.message_type = MessageType::kNotification;
    auto route = secoc.outbound(s.service_id, s.instance_id, e.cfg.event_id);
    if (!route.ok()) return Err(route.error());
    auto msg = sender.prepare(h, payload, *route);
    if (!msg.ok()) return Err(msg.error());
    std::optional<RuntimeError> failed;
    for (const auto& d : dests) {
      auto st = sender.transmit(s.udp_port, d, *msg);
      if (!st.ok()) {
        failed = st.error();
        continue;
      }
      ++counters.notifications_sent;
      if (sent) ++*sent;
    }
    if (failed) return Err(*failed);
    return {};
  }

  // --- receive path -----------------------------------------------------------
  void on_datagram(std::uint16_t port, const Datagram& d) {
    ++counters.datagrams_received;
    if (!is_running) return;
    DatagramIterator it(d.payload);
    std::size_t consumed = 0;
    while (!it.done() && is_running) {
      auto m = it.next();
      if (!m.ok()) {
        const ByteSpan rest = d.payload.subspan(consumed);
        const RxVerdict v = d.multicast ? RxVerdict{RxAction::kDrop, ReturnCode::kOk, DropReason::kMalformed}
                                        : check_malformed(rest, m.error());
        counters.rx.count(v);
        if (v.action == RxAction::kReplyError) {
          auto h = read_raw_header(rest);
          if (h.ok()) dispatcher.send_error(port, d.source, *h, v.code, std::nullopt);
        }
        break;
      }
      consumed += m->bytes.size();
      ++counters.messages_received;
      handle_message(port, d, *m);
    }
    reschedule();
  }

  void handle_message(std::uint16_t port, const Datagram& d, const MessageView& m) {
    if (!is_tp(m.header.message_type)) {
      dispatch(port, d, m);
      return;
    }
    auto seg = parse_tp_segment(m);
    if (!seg.ok()) {
      ++counters.tp_rejected;
      ++counters.tp_rejected_by[static_cast<std::size_t>(seg.error()) % kTpErrorCount];
      return;
    }
    auto out = tp.on_segment(clock.now(), d.source, *seg);
    if (!out.ok()) {
      ++counters.tp_rejected;
      ++counters.tp_rejected_by[static_cast<std::size_t>(out.error()) % kTpErrorCount];
      return;
    }
    if (out->status != TpReassembler::Status::kComplete) return;
    auto whole = parse_message(out->message);
    if (!whole.ok()) {
      ++counters.tp_rejected;
      ++counters.tp_reassembled_malformed;
      return;
    }
    ++counters.tp_messages_reassembled;
    dispatch(port, d, *whole);
  }

  void dispatch(std::uint16_t port, const Datagram& d, const MessageView& m) {
    switch (m.header.message_type) {
      case MessageType::kRequest:
      case MessageType::kRequestNoReturn:
        if (d.multicast) {
          counters.rx.count(RxVerdict{RxAction::kDrop, ReturnCode::kOk, DropReason::kWrongMessageType});
          return;
        }
        dispatcher.serve(port, d.source, m);
        return;
      case MessageType::kResponse:
      case MessageType::kError:
        if (!d.multicast) on_response(d, m);
        return;
      case MessageType::kNotification:
        on_notification(d, m);
        return;
      default:
        counters.rx.count(RxVerdict{RxAction::kDrop, ReturnCode::kOk, DropReason::kNotARequest});
        return;
    }
  }

  void on_response(const Datagram& d, const MessageView& m) {
    const Header& h = m.header;
    const PendingRequest* it = h.client_id == cfg.client_id ? requests.find(h.session_id) : nullptr;
    if (!it || it->service != h.service_id || it->method != h.method_id ||
        !(it->to.address == d.source.address && it->to.port == d.source.port)) {
      ++counters.late_responses;
      return;
    }
    // A forged answer must not end the request: it stays pending.
    ByteSpan payload = m.payload;
    if (!secoc.inbound(m, it->instance, d.source, payload)) return;
    PendingRequest p = requests.take(h.session_id);
    ++counters.responses_received;
    ResponseResult r;
    r.service_id = h.service_id;
    r.instance_id = p.instance;
    r.method_id = h.method_id;
    r.session_id = h.session_id;
    r.code = static_cast<ReturnCode>(h.return_code);
    if (h.message_type == MessageType::kError && h.return_code == 0) r.code = ReturnCode::kNotOk;
    r.payload = payload;
    if (p.handler) p.handler(r);
  }

  void on_notification(const Datagram& d, const MessageView& m) {
    const Header& h = m.header;
    const SdDriver::Required* c = sd.offered_from(h.service_id, d.source);
    if (!c) {
      ++counters.notifications_unsubscribed;
      return;
    }
    const std::uint16_t instance = c->sd->offer()->instance_id;
    if (secoc.is_sync_event(h.service_id, instance, h.method_id)) {
      if (secoc.on_sync(m, instance, d.source)) ++counters.notifications_received;
      return;
    }
    ByteSpan payload = m.payload;
    if (!secoc.inbound(m, instance, d.source, payload)) return;
    ++counters.notifications_received;
    auto hit = event_handlers.find((std::uint32_t{h.service_id} << 16) | h.method_id);
    if (hit == event_handlers.end() || !hit->second || !*hit->second) {
      hit = event_handlers.find((std::uint32_t{h.service_id} << 16) | Runtime::kAnyEvent);
      if (hit == event_handlers.end() || !hit->second || !*hit->second) return;
    }
    Notification n;
    n.service_id = h.service_id;
    n.instance_id = instance;
    n.event_id = h.method_id;
    n.multicast = d.multicast;
    n.payload = payload;
    n.source = d.source;
    const std::shared_ptr<EventHandler> handler = hit->second;
    (*handler)(n);
  }

  // --- client API -------------------------------------------------------------
  Result<std::uint16_t, RuntimeError> request(std::uint16_t service, std::uint16_t instance, std::uint16_t method,
                                              ByteSpan payload, ResponseHandler handler,
                                              std::optional<Duration> timeout, bool no_return) {
    if (!is_running) return Err(RuntimeError::kNotRunning);
    if (method >= 0x8000) return Err(RuntimeError::kNotConfigured);
    bool configured = false;
    const SdDriver::Required* c = sd.find_available(service, instance, configured);
    if (!c) return Err(configured ? RuntimeError::kNotAvailable : RuntimeError::kNotConfigured);
    const SdOfferInfo& offer = *c->sd->offer();
    if (!offer.udp) return Err(RuntimeError::kNotAvailable);
    if (!no_return && requests.full()) return Err(RuntimeError::kTooManyPending);
    const std::uint16_t session = requests.take_session();
    Header h;
    h.service_id = service;
    h.method_id = method;
    h.client_id = cfg.client_id;
    h.session_id = session;
    h.interface_version = offer.major_version;
    h.message_type = no_return ? MessageType::kRequestNoReturn : MessageType::kRequest;
    auto route = secoc.outbound(service, offer.instance_id, method);
    if (!route.ok()) return Err(route.error());
    auto msg = sender.prepare(h, payload, *route);
    if (!msg.ok()) return Err(msg.error());
    const Endpoint to = *offer.udp;
    const std::uint16_t inst = offer.instance_id;
    auto st = sender.transmit(c->port, to, *msg);
    if (!st.ok()) return Err(st.error());
    if (no_return) return session;
    const TimePoint deadline = clock.now() + timeout.value_or(cfg.request_timeout);
    requests.insert(session, PendingRequest{service, inst, method, to, deadline, std::move(handler)});
    reschedule();
    return session;
  }

  // Declaration order is construction order: the parts take references to
  // the configuration, the I/O and the counters.
  RuntimeConfig cfg;
  PacketWriter& packets;
  const Clock& clock;
  Alarm& alarm;
  RuntimeCounters counters;
  std::shared_ptr<bool> token = std::make_shared<bool>(true);
  SecocFilter secoc;
  SyncScheduler sync;
  SdDriver sd;
  EventPublisher publisher;
  MessageSender sender;
  MethodDispatcher dispatcher;
  RequestTable requests;
  TpReassembler tp;
  std::unordered_map<std::uint32_t, std::shared_ptr<EventHandler>> event_handlers;
  AvailabilityHandler availability_handler;
  bool is_running = false;
  bool sd_joined = false;
  std::vector<std::uint16_t> bound_ports;
  TimePoint scheduled = TimePoint::max();
  std::vector<Endpoint> dests;
};

// --- public API ----------------------------------------------------------------

Runtime::Runtime(RuntimeConfig config, const RuntimeIo& io, RandomSource& random)
    : impl_(std::make_unique<Impl>(std::move(config), io, random)) {}

Runtime::Runtime(RuntimeConfig config, Transport& transport, RandomSource& random)
    : Runtime(std::move(config), RuntimeIo(transport), random) {}

Runtime::~Runtime() {
  impl_->stop();
  *impl_->token = false;
}

void Runtime::attach_secoc(secoc::Engine& engine, SecocBindings bindings, const Clock* freshness_clock) {
  Impl& m = *impl_;
  if (m.is_running || m.sd.built()) throw std::logic_error("someip runtime: attach_secoc() after start()");
  m.secoc.attach(engine, std::move(bindings), freshness_clock ? *freshness_clock : m.clock);
}

Status<RuntimeError> Runtime::start() { return impl_->start(); }
void Runtime::stop() { impl_->stop(); }
bool Runtime::running() const { return impl_->is_running; }

Status<RuntimeError> Runtime::set_method_handler(std::uint16_t service, std::uint16_t instance,
                                                 std::uint16_t method, MethodHandler handler) {
  return impl_->dispatcher.set_handler(service, instance, method, std::move(handler));
}

Status<RuntimeError> Runtime::notify(std::uint16_t service, std::uint16_t instance, std::uint16_t event,
                                     ByteSpan payload) {
  Impl& m = *impl_;
  const int si = m.find_service(service, instance);
  EventPublisher::Event* e = si == kNoService ? nullptr : m.publisher.find(static_cast<std::size_t>(si), event);
  if (!e) return Err(RuntimeError::kNotConfigured);
  if (payload.size() > m.cfg.max_message_size) return Err(RuntimeError::kTooLarge);
  if (e->cfg.is_field) EventPublisher::store(*e, payload);
  if (!m.is_running) return Err(RuntimeError::kNotRunning);
  return m.notify_event(si, *e, e->cfg.is_field ? ByteSpan(e->value) : payload, nullptr, nullptr);
}

Status<RuntimeError> Runtime::set_field(std::uint16_t service, std::uint16_t instance, std::uint16_t event,
                                        ByteSpan value) {
  Impl& m = *impl_;
  const int si = m.find_service(service, instance);
  EventPublisher::Event* e = si == kNoService ? nullptr : m.publisher.find(static_cast<std::size_t>(si), event);
  if (!e || !e->cfg.is_field) return Err(RuntimeError::kNotConfigured);
  if (value.size() > m.cfg.max_message_size) return Err(RuntimeError::kTooLarge);
  EventPublisher::store(*e, value);
  // Before start(): stored, sent to subscribers as their initial value.
  if (!m.is_running) return {};
  return m.notify_event(si, *e, e->value, nullptr, nullptr);
}

std::size_t Runtime::subscriber_count(std::uint16_t service, std::uint16_t instance,
                                      std::uint16_t eventgroup) const {
  const int si = impl_->find_service(service, instance);
  if (si == kNoService) return 0;
  return EventPublisher::subscriber_count(impl_->sd.subscriptions(static_cast<std::size_t>(si)), eventgroup);
}

void Runtime::on_availability(AvailabilityHandler handler) { impl_->availability_handler = std::move(handler); }

void Runtime::on_event(std::uint16_t service, std::uint16_t event, EventHandler handler) {
  impl_->event_handlers[(std::uint32_t{service} << 16) | event] = std::make_shared<EventHandler>(std::move(handler));
}

bool Runtime::available(std::uint16_t service, std::uint16_t instance) const {
  bool configured = false;
  return impl_->sd.find_available(service, instance, configured) != nullptr;
}

Result<std::uint16_t, RuntimeError> Runtime::request(std::uint16_t service, std::uint16_t instance,
                                                     std::uint16_t method, ByteSpan payload,
                                                     ResponseHandler handler, std::optional<Duration> timeout) {
  return impl_->request(service, instance, method, payload, std::move(handler), timeout, false);
}

Status<RuntimeError> Runtime::fire_and_forget(std::uint16_t service, std::uint16_t instance,
                                              std::uint16_t method, ByteSpan payload) {
  auto r = impl_->request(service, instance, method, payload, {}, std::nullopt, true);
  if (!r.ok()) return Err(r.error());
  return {};
}

void Runtime::on_rejection(RejectionHandler handler) { impl_->secoc.on_rejection(std::move(handler)); }

const RuntimeCounters& Runtime::counters() const {
  if (const SdCounters* c = impl_->sd.counters()) {
    impl_->counters.sd_dropped = c->dropped;
    impl_->counters.sd = *c;
  }
  impl_->counters.tp = impl_->tp.counters();
  return impl_->counters;
}
std::size_t Runtime::tp_buffered_bytes() const { return impl_->tp.buffered_bytes(); }
std::size_t Runtime::pending_requests() const { return impl_->requests.size(); }
const RuntimeConfig& Runtime::config() const { return impl_->cfg; }

}  // namespace layersec::someip
