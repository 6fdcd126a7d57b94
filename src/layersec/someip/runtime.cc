#include "layersec/someip/runtime.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "layersec/someip/service_discovery.h"
#include "layersec/someip/tp.h"

namespace layersec::someip {

std::string_view to_string(TransportError e) {
  switch (e) {
    case TransportError::kPortInUse:
      return "port-in-use";
    case TransportError::kNotBound:
      return "not-bound";
    case TransportError::kTooLarge:
      return "too-large";
    case TransportError::kUnreachable:
      return "unreachable";
    case TransportError::kSystem:
      return "system";
  }
  return "?";
}

std::string_view to_string(HeaderAuth h) {
  switch (h) {
    case HeaderAuth::kSomeipHeader:
      return "someip-header";
    case HeaderAuth::kPayloadOnly:
      return "payload-only";
  }
  return "?";
}

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

// Room for the SecOC header, truncated freshness value and authenticator
// (at most 4 + 8 + 32 bytes with every profile the engine accepts).
constexpr std::size_t kSecocOverhead = 128;

// Spacing of the reset cycles that new sync subscribers start.
constexpr Duration kForcedSyncSpacing = Duration::milliseconds(20);

std::uint64_t binding_key(std::uint16_t service, std::uint16_t instance, std::uint16_t id) {
  return (std::uint64_t{service} << 32) | (std::uint64_t{instance} << 16) | id;
}

// The SOME/IP header as SecOC extra authenticated data: every field but the
// length (which the Secured I-PDU changes), the message type without the TP
// flag (segments and the reassembled message authenticate alike). SD adds
// the datagram's source address, so a relabelled source fails the MAC.
constexpr std::size_t kHeaderAadSize = 12;
constexpr std::size_t kSdAadSize = kHeaderAadSize + 1 + 16;
std::size_t header_aad(const Header& h, std::uint8_t* out) {
  store_be16(out, h.service_id);
  store_be16(out + 2, h.method_id);
  store_be16(out + 4, h.client_id);
  store_be16(out + 6, h.session_id);
  out[8] = h.protocol_version;
  out[9] = h.interface_version;
  out[10] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(h.message_type) & ~kTpFlag);
  out[11] = h.return_code;
  return kHeaderAadSize;
}
std::size_t sd_aad(const Header& h, const IpAddress& source, std::uint8_t* out) {
  std::size_t n = header_aad(h, out);
  out[n++] = static_cast<std::uint8_t>(source.family);
  const std::size_t len = source.family == IpFamily::kV4 ? 4 : 16;
  std::memcpy(out + n, source.bytes.data(), len);
  return n + len;
}
// Replay-state key of an SD source address.
std::uint64_t source_key(const IpAddress& a) {
  std::uint64_t k = static_cast<std::uint64_t>(a.family) << 56;
  for (std::size_t i = 0; i < 16; ++i) k = (k * 1099511628211ULL) ^ a.bytes[i];
  return a.family == IpFamily::kV4 ? (std::uint64_t{4} << 56) | load_be32(a.bytes.data()) : k;
}

// Session ids start at 1, skip 0 and wrap 0xFFFF -> 1 (feat_req_someip_649).
std::uint16_t take_session(std::uint16_t& counter) {
  if (counter == 0) counter = 1;
  const std::uint16_t s = counter;
  counter = counter == 0xFFFF ? 1 : static_cast<std::uint16_t>(counter + 1);
  return s;
}

[[noreturn]] void config_error(const std::string& what) {
  throw std::invalid_argument("someip runtime configuration: " + what);
}

std::string hex16(std::uint16_t v) {
  static const char* d = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 12; i >= 0; i -= 4) s += d[(v >> i) & 0xF];
  return s;
}

}  // namespace

struct Runtime::Impl {
  struct Event {
    EventConfig cfg;
    std::vector<std::uint8_t> value;  // fields: the stored value
    bool has_value = false;
    std::uint16_t session = 1;
  };
  struct Service {
    ServiceConfig cfg;
    SdServer* sd = nullptr;
    std::vector<Event> events;
    // shared_ptr: a handler may replace itself while it runs.
    std::unordered_map<std::uint16_t, std::shared_ptr<MethodHandler>> handlers;
  };
  struct Client {
    ClientConfig cfg;
    SdClient* sd = nullptr;
    std::uint16_t port = 0;
    std::vector<Endpoint> groups;  // multicast groups joined from Acks
    bool reported_available = false;
  };
  struct Pending {
    std::uint16_t service = 0;
    std::uint16_t instance = 0;
    std::uint16_t method = 0;
    Endpoint to;
    TimePoint deadline;
    ResponseHandler handler;
  };
  // Pending requests by session id: fixed slots (max_pending_requests) and
  // a session -> slot index, so issuing a request allocates nothing.
  class PendingTable {
   public:
    void init(std::size_t capacity) {
      slots_.resize(capacity);
      free_.reserve(capacity);
      for (std::size_t i = capacity; i-- > 0;) free_.push_back(static_cast<std::uint16_t>(i));
      index_.assign(std::size_t{1} << 16, kNone);
    }
    [[nodiscard]] Pending* find(std::uint16_t session) {
      const std::uint16_t i = index_[session];
      return i == kNone ? nullptr : &slots_[i];
    }
    [[nodiscard]] bool contains(std::uint16_t session) const { return index_[session] != kNone; }
    [[nodiscard]] std::size_t size() const { return slots_.size() - free_.size(); }
    [[nodiscard]] bool full() const { return free_.empty(); }
    // Precondition: !full() and !contains(session).
    void insert(std::uint16_t session, Pending p) {
      const std::uint16_t i = free_.back();
      free_.pop_back();
      slots_[i] = std::move(p);
      index_[session] = i;
    }
    // Precondition: contains(session).
    Pending take(std::uint16_t session) {
      const std::uint16_t i = index_[session];
      index_[session] = kNone;
      free_.push_back(i);
      Pending p = std::move(slots_[i]);
      slots_[i].handler = nullptr;
      return p;
    }
    template <class F>
    void drain(F&& f) {
      for (std::size_t s = 0; s < index_.size(); ++s)
        if (index_[s] != kNone) f(static_cast<std::uint16_t>(s), take(static_cast<std::uint16_t>(s)));
    }

   private:
    static constexpr std::uint16_t kNone = 0xFFFF;
    std::vector<Pending> slots_;
    std::vector<std::uint16_t> free_;
    std::vector<std::uint16_t> index_;
  };

  // The error policy's view of the services offered on one port.
  class PortTable final : public ServiceTable {
   public:
    PortTable(const Impl& impl, std::uint16_t port) : impl_(impl), port_(port) {}
    [[nodiscard]] bool has_service(std::uint16_t service) const override {
      return impl_.service_on_port(service, port_) != nullptr;
    }
    [[nodiscard]] std::uint8_t interface_version(std::uint16_t service) const override {
      const Service* s = impl_.service_on_port(service, port_);
      return s ? s->cfg.major_version : 0;
    }
    [[nodiscard]] MethodKind method(std::uint16_t service, std::uint16_t method) const override {
      const Service* s = impl_.service_on_port(service, port_);
      return s ? method_kind(*s, method) : MethodKind::kNone;
    }

   private:
    const Impl& impl_;
    std::uint16_t port_;
  };

  Impl(RuntimeConfig c, Transport& t, RandomSource& r) : cfg(std::move(c)), tr(t), random(r) {
    validate();
    for (const auto& sc : cfg.services) {
      Service s;
      s.cfg = sc;
      for (const auto& ec : sc.events) s.events.push_back(Event{ec, {}, false, 1});
      services.push_back(std::move(s));
    }
    for (const auto& cc : cfg.clients) {
      Client c;
      c.cfg = cc;
      c.port = cc.udp_port != 0 ? cc.udp_port : cfg.client_port;
      clients.push_back(std::move(c));
    }
    TpLimits limits;
    limits.max_message_size = cfg.max_message_size + kSecocOverhead;
    limits.timeout = cfg.tp_reassembly_timeout;
    tp = TpReassembler(limits);
    tx_buf.resize(kHeaderSize + cfg.max_message_size + kSecocOverhead);
    rx_plain.resize(cfg.max_message_size + kSecocOverhead);
    seg_buf.resize(kHeaderSize + kTpHeaderSize + kTpMaxSegment + 16);
    pending.init(cfg.max_pending_requests);
    timeouts.reserve(2 * cfg.max_pending_requests + 1);
  }

  // --- configuration ----------------------------------------------------
  void validate() const {
    if (cfg.tp_segment_size < kTpAlignment || cfg.tp_segment_size > kTpMaxSegment)
      config_error("tp_segment_size must be in [16, 1392]");
    if (cfg.max_pending_requests == 0 || cfg.max_pending_requests > 0x8000)
      config_error("max_pending_requests must be in [1, 32768]");
    if (cfg.max_message_size == 0 || cfg.max_message_size > (std::size_t{1} << 24))
      config_error("max_message_size must be in [1, 16 MiB]");
    for (std::size_t i = 0; i < cfg.services.size(); ++i) {
      const auto& s = cfg.services[i];
      const std::string name = "service " + hex16(s.service_id) + "/" + hex16(s.instance_id);
      if (s.service_id == 0xFFFF || s.instance_id == 0xFFFF || s.instance_id == 0)
        config_error(name + ": reserved service or instance id");
      if (s.udp_port == 0) config_error(name + ": udp_port missing");
      if (cfg.sd_enabled && s.udp_port == cfg.sd_port) config_error(name + ": udp_port is the SD port");
      for (std::size_t j = 0; j < i; ++j)
        if (cfg.services[j].service_id == s.service_id && cfg.services[j].instance_id == s.instance_id)
          config_error(name + ": offered twice");
      for (std::size_t j = 0; j < s.methods.size(); ++j) {
        if (s.methods[j].method_id >= 0x8000) config_error(name + ": method " + hex16(s.methods[j].method_id) + " is not a method id");
        for (std::size_t k = 0; k < j; ++k)
          if (s.methods[k].method_id == s.methods[j].method_id)
            config_error(name + ": method " + hex16(s.methods[j].method_id) + " twice");
      }
      for (std::size_t j = 0; j < s.eventgroups.size(); ++j) {
        const auto& g = s.eventgroups[j];
        for (std::size_t k = 0; k < j; ++k)
          if (s.eventgroups[k].eventgroup_id == g.eventgroup_id)
            config_error(name + ": eventgroup " + hex16(g.eventgroup_id) + " twice");
        if (g.multicast && !g.multicast->address.is_multicast())
          config_error(name + ": eventgroup " + hex16(g.eventgroup_id) + " multicast address is not a group");
      }
      for (std::size_t j = 0; j < s.events.size(); ++j) {
        const auto& e = s.events[j];
        const std::string ev = name + ": event " + hex16(e.event_id);
        if (e.event_id < 0x8000 || e.event_id == 0xFFFF) config_error(ev + " is not an event id");
        for (std::size_t k = 0; k < j; ++k)
          if (s.events[k].event_id == e.event_id) config_error(ev + " twice");
        if (e.eventgroups.empty()) config_error(ev + " belongs to no eventgroup");
        for (auto g : e.eventgroups) {
          bool found = false;
          for (const auto& eg : s.eventgroups) found = found || eg.eventgroup_id == g;
          if (!found) config_error(ev + " in unknown eventgroup " + hex16(g));
        }
        if ((e.getter_method || e.setter_method) && !e.is_field) config_error(ev + ": getter/setter on a non-field");
        for (auto m : {e.getter_method, e.setter_method}) {
          if (!m) continue;
          if (*m >= 0x8000) config_error(ev + ": getter/setter " + hex16(*m) + " is not a method id");
          for (const auto& mc : s.methods)
            if (mc.method_id == *m && mc.fire_and_forget)
              config_error(ev + ": getter/setter " + hex16(*m) + " is fire-and-forget");
        }
      }
    }
    for (std::size_t i = 0; i < cfg.clients.size(); ++i) {
      const auto& c = cfg.clients[i];
      const std::string name = "client " + hex16(c.service_id) + "/" + hex16(c.instance_id);
      if (c.service_id == 0xFFFF) config_error(name + ": reserved service id");
      const std::uint16_t port = c.udp_port != 0 ? c.udp_port : cfg.client_port;
      if (cfg.sd_enabled && port == cfg.sd_port) config_error(name + ": port is the SD port");
      for (std::size_t j = 0; j < i; ++j)
        if (cfg.clients[j].service_id == c.service_id && cfg.clients[j].instance_id == c.instance_id)
          config_error(name + ": required twice");
    }
  }

  static MethodKind method_kind(const Service& s, std::uint16_t method) {
    for (const auto& m : s.cfg.methods)
      if (m.method_id == method) return m.fire_and_forget ? MethodKind::kFireAndForget : MethodKind::kRequestResponse;
    for (const auto& e : s.events)
      if (e.cfg.getter_method == method || e.cfg.setter_method == method) return MethodKind::kRequestResponse;
    return MethodKind::kNone;
  }

  [[nodiscard]] bool port_uses_secoc(std::uint16_t port) const {
    if (engine == nullptr) return false;
    for (const auto& s : services)
      if (s.cfg.udp_port == port && secoc_service(s.cfg.service_id)) return true;
    for (const auto& c : clients)
      if (c.port == port && secoc_service(c.cfg.service_id)) return true;
    return false;
  }
  [[nodiscard]] const Service* service_on_port(std::uint16_t service, std::uint16_t port) const {
    for (const auto& s : services)
      if (s.cfg.service_id == service && s.cfg.udp_port == port) return &s;
    return nullptr;
  }
  Service* find_service(std::uint16_t service, std::uint16_t instance) {
    for (auto& s : services)
      if (s.cfg.service_id == service && s.cfg.instance_id == instance) return &s;
    return nullptr;
  }
  static Event* find_event(Service& s, std::uint16_t event) {
    for (auto& e : s.events)
      if (e.cfg.event_id == event) return &e;
    return nullptr;
  }
  static const EventgroupConfig* find_group(const Service& s, std::uint16_t id) {
    for (const auto& g : s.cfg.eventgroups)
      if (g.eventgroup_id == id) return &g;
    return nullptr;
  }

  // Client matching (service, instance); `instance` 0xFFFF = any. Prefers an
  // available one; `configured` tells whether any matched at all.
  Client* find_client(std::uint16_t service, std::uint16_t instance, bool& configured) {
    configured = false;
    for (auto& c : clients) {
      if (c.cfg.service_id != service) continue;
      if (instance != 0xFFFF && c.cfg.instance_id != 0xFFFF && c.cfg.instance_id != instance) continue;
      configured = true;
      if (!c.sd || !c.sd->available()) continue;
      if (instance != 0xFFFF && c.sd->offer()->instance_id != instance) continue;
      return &c;
    }
    return nullptr;
  }

  // A bound message id: its SecOC PDU and whether the header is authenticated.
  struct Bound {
    std::uint32_t pdu = 0;
    bool header = true;
  };
  using BindingMap = std::unordered_map<std::uint64_t, Bound>;
  std::optional<Bound> binding(const BindingMap& m, std::uint16_t service, std::uint16_t instance,
                               std::uint16_t id) const {
    if (m.empty()) return std::nullopt;
    auto it = m.find(binding_key(service, instance, id));
    if (it != m.end()) return it->second;
    it = m.find(binding_key(service, 0xFFFF, id));
    if (it != m.end()) return it->second;
    return std::nullopt;
  }
  // A service with any SecOC binding at this node: its unbound ids fail closed.
  [[nodiscard]] bool secoc_service(std::uint16_t service) const {
    return engine != nullptr && secured_services.count(service) != 0;
  }
  [[nodiscard]] bool listed_unprotected(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const {
    for (const auto& u : bindings.unprotected)
      if (u.service_id == service && u.method_or_event == id &&
          (u.instance_id == 0xFFFF || u.instance_id == instance))
        return true;
    return false;
  }
  // True when a message of (service, instance, id) without a binding must be
  // refused: the service uses SecOC and the id is not listed as unprotected.
  [[nodiscard]] bool unbound_refused(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const {
    return secoc_service(service) && !listed_unprotected(service, instance, id);
  }
  // Freshness-clock time for the engine (synchronised between the nodes).
  [[nodiscard]] TimePoint fresh_now() const { return freshness_clock ? freshness_clock->now() : tr.now(); }
  [[nodiscard]] bool is_sync_event(std::uint16_t service, std::uint16_t instance, std::uint16_t event) const {
    return engine != nullptr && bindings.sync_service && *bindings.sync_service == service &&
           bindings.sync_instance == instance && bindings.sync_event == event;
  }

  // --- lifecycle ----------------------------------------------------------
  Status<RuntimeError> start() {
    if (running) return {};
    const TimePoint now = tr.now();
    if (!sd) build_sd();
    // Ports: SD, every service port, every client port (each once).
    std::vector<std::uint16_t> ports;
    for (const auto& s : services) ports.push_back(s.cfg.udp_port);
    for (const auto& c : clients) ports.push_back(c.port);
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    auto fail = [&]() -> Status<RuntimeError> {
      ++counters.transport_errors;
      release_ports();
      return Err(RuntimeError::kTransport);
    };
    std::weak_ptr<bool> alive = token;
    if (cfg.sd_enabled) {
      auto st = tr.bind(cfg.sd_port, [this, alive](const Transport::Datagram& d) {
        if (auto a = alive.lock(); a && *a) on_sd_datagram(d);
      });
      if (!st.ok()) return fail();
      bound_ports.push_back(cfg.sd_port);
      auto j = tr.join(cfg.sd_multicast, [this, alive](const Transport::Datagram& d) {
        if (auto a = alive.lock(); a && *a) on_sd_datagram(d);
      });
      if (!j.ok()) return fail();
      sd_joined = true;
    }
    for (auto p : ports) {
      auto st = tr.bind(p, [this, alive, p](const Transport::Datagram& d) {
        if (auto a = alive.lock(); a && *a) on_datagram(p, d);
      });
      if (!st.ok()) return fail();
      bound_ports.push_back(p);
    }
    running = true;
    SdActions acts;
    if (cfg.sd_enabled) {
      for (auto& s : services) sd->start_offer(now, *s.sd);
      for (auto& c : clients) sd->request(now, *c.sd, acts);
    }
    process(acts);
    secoc_deadline = engine ? now : TimePoint::max();
    poll_secoc(now);
    reschedule();
    return {};
  }

  void build_sd() {
    SdConfig sc;
    sc.local = Endpoint{tr.local_address(), cfg.sd_port, L4Proto::kUdp};
    sc.multicast_group = cfg.sd_multicast;
    if (engine && bindings.sd_tx_pdu) sc.max_payload = kMaxUdpPayload - kSecocOverhead;
    sd = std::make_unique<ServiceDiscovery>(sc, random);
    for (auto& s : services) {
      SdServerConfig c;
      c.service_id = s.cfg.service_id;
      c.instance_id = s.cfg.instance_id;
      c.major_version = s.cfg.major_version;
      c.minor_version = s.cfg.minor_version;
      c.timing = cfg.sd_timing;
      c.udp_endpoint = Endpoint{tr.local_address(), s.cfg.udp_port, L4Proto::kUdp};
      for (const auto& g : s.cfg.eventgroups)
        c.eventgroups.push_back({g.eventgroup_id, g.multicast, g.allowed_subscribers});
      s.sd = &sd->add_server(std::move(c));
    }
    for (auto& cl : clients) {
      SdClientConfig c;
      c.service_id = cl.cfg.service_id;
      c.instance_id = cl.cfg.instance_id;
      c.major_version = cl.cfg.major_version;
      c.timing = cfg.sd_timing;
      c.udp_endpoint = Endpoint{tr.local_address(), cl.port, L4Proto::kUdp};
      c.eventgroups = cl.cfg.eventgroups;
      c.allowed_servers = cl.cfg.allowed_servers;
      cl.sd = &sd->add_client(std::move(c));
    }
  }

  void release_ports() {
    for (auto& c : clients) leave_groups(c);
    if (sd_joined) tr.leave(cfg.sd_multicast);
    sd_joined = false;
    for (auto p : bound_ports) tr.unbind(p);
    bound_ports.clear();
  }

  void stop() {
    if (!running) return;
    const TimePoint now = tr.now();
    if (sd) {
      SdActions acts;
      for (auto& s : services) sd->stop_offer(now, *s.sd, acts);
      for (auto& c : clients) sd->release(now, *c.sd, acts);
      for (const auto& d : acts.datagrams) send_sd(d);
    }
    release_ports();
    running = false;
    tr.wake_at(TimePoint::max(), {});
    scheduled = TimePoint::max();
    // Pending requests end with E_NOT_REACHABLE.
    std::vector<std::pair<std::uint16_t, Pending>> ended;
    pending.drain([&](std::uint16_t session, Pending p) { ended.emplace_back(session, std::move(p)); });
    timeouts.clear();
    for (auto& [session, p] : ended) {
      ResponseResult r;
      r.service_id = p.service;
      r.instance_id = p.instance;
      r.method_id = p.method;
      r.session_id = session;
      r.code = ReturnCode::kNotReachable;
      if (p.handler) p.handler(r);
    }
  }

  // --- timers -------------------------------------------------------------
  void reschedule() {
    if (!running) return;
    TimePoint t = secoc_deadline;
    if (sd) t = std::min(t, sd->next_deadline());
    t = std::min(t, tp.next_deadline());
    if (!timeouts.empty()) t = std::min(t, timeouts.front().first);
    if (t == scheduled) return;
    scheduled = t;
    std::weak_ptr<bool> alive = token;
    tr.wake_at(t, [this, alive] {
      if (auto a = alive.lock(); a && *a) on_timer();
    });
  }

  void on_timer() {
    scheduled = TimePoint::max();
    if (!running) return;
    const TimePoint now = tr.now();
    if (sd) {
      SdActions acts;
      sd->on_timer(now, acts);
      process(acts);
    }
    tp.on_timer(now);
    expire_requests(now);
    if (!running) return;  // a timeout handler stopped the runtime
    poll_secoc(now);
    reschedule();
  }

  void expire_requests(TimePoint now) {
    auto later = [](const std::pair<TimePoint, std::uint16_t>& a, const std::pair<TimePoint, std::uint16_t>& b) {
      return a.first > b.first;
    };
    while (!timeouts.empty() && timeouts.front().first <= now) {
      const auto [deadline, session] = timeouts.front();
      std::pop_heap(timeouts.begin(), timeouts.end(), later);
      timeouts.pop_back();
      const Pending* found = pending.find(session);
      if (!found || found->deadline != deadline) continue;  // answered
      Pending p = pending.take(session);
      ++counters.request_timeouts;
      ResponseResult r;
      r.service_id = p.service;
      r.instance_id = p.instance;
      r.method_id = p.method;
      r.session_id = session;
      r.code = ReturnCode::kTimeout;
      if (p.handler) p.handler(r);
      if (!running) return;
    }
  }

  // `now` is the transport's time; the engine runs on the freshness clock.
  void poll_secoc(TimePoint now) {
    if (!engine || now < secoc_deadline) return;
    if (sync_buf.size() < engine->sync_message_size()) sync_buf.resize(engine->sync_message_size());
    // A new cycle for new sync subscribers, at most one per
    // kForcedSyncSpacing (so a unicast copy is not overtaken by the next
    // forced cycle's multicast, and subscriptions cannot burn reset counters
    // faster than that).
    const bool forced = forced_sync_at && now >= *forced_sync_at;
    if (forced) {
      engine->request_sync();
      last_forced_sync = now;
      forced_sync_at.reset();
    }
    const TimePoint fnow = fresh_now();
    auto r = engine->poll(fnow, sync_buf);
    if (!r.ok()) {
      // Freshness exhausted or the store failed: retry shortly.
      ++counters.secoc_protect_failed;
      secoc_deadline = now + Duration::milliseconds(100);
      return;
    }
    secoc_deadline = r->next_deadline == TimePoint::max() ? TimePoint::max() : now + (r->next_deadline - fnow);
    if (forced_sync_at) secoc_deadline = std::min(secoc_deadline, *forced_sync_at);
    std::vector<Endpoint> newcomers;
    if (forced) newcomers.swap(sync_newcomers);
    if (r->sync_bytes == 0 || !bindings.sync_service) return;
    last_sync.assign(sync_buf.begin(), sync_buf.begin() + static_cast<std::ptrdiff_t>(r->sync_bytes));
    Service* s = find_service(*bindings.sync_service, bindings.sync_instance);
    if (!s) return;
    Event* e = find_event(*s, bindings.sync_event);
    if (!e) return;
    std::size_t sent = 0;
    auto st = notify_event(*s, *e, last_sync, nullptr, &sent);
    st.ignore();  // counted inside
    // A new subscriber of a multicast eventgroup may not have joined the
    // group yet (it joins on the Ack): it gets its copy by unicast too (a
    // second copy is a harmless duplicate).
    bool multicast = false;
    for (auto gid : e->cfg.eventgroups)
      if (const EventgroupConfig* g = find_group(*s, gid); g && g->multicast) multicast = true;
    if (multicast)
      for (const auto& ep : newcomers) notify_event(*s, *e, last_sync, &ep, &sent).ignore();
    counters.secoc_syncs_sent += sent;
  }

  // --- SD -------------------------------------------------------------------
  void process(SdActions& acts) {
    for (const auto& d : acts.datagrams) send_sd(d);
    std::vector<Client*> lost;
    for (const auto& ev : acts.events) {
      if (!running) return;  // an availability handler stopped the runtime
      handle_sd_event(ev, lost);
    }
    if (!sync_newcomers.empty() && !forced_sync_at) {
      // A new sync subscriber (maybe a restarted receiver): start a new reset
      // cycle now rather than at the next period (spaced, see poll_secoc).
      const TimePoint now = tr.now();
      const TimePoint at = last_forced_sync ? std::max(now, *last_forced_sync + kForcedSyncSpacing) : now;
      forced_sync_at = at;
      secoc_deadline = std::min(secoc_deadline, at);
      poll_secoc(now);
    }
    // A lost service is searched for again (FindService phases restart), so
    // a node that comes back is found even if we miss its first offers.
    const TimePoint now = tr.now();
    for (Client* c : lost) {
      if (!running || c->sd->available()) continue;
      SdActions more;
      sd->release(now, *c->sd, more);
      sd->request(now, *c->sd, more);
      for (const auto& d : more.datagrams) send_sd(d);
    }
  }

  void send_sd(const SdDatagram& d) {
    ByteSpan bytes = d.bytes;
    if (engine && bindings.sd_tx_pdu && d.bytes.size() >= kHeaderSize) {
      auto hdr = read_raw_header(d.bytes);
      if (!hdr.ok()) {
        ++counters.secoc_protect_failed;
        return;
      }
      if (sd_tx_buf.size() < d.bytes.size() + kSecocOverhead) sd_tx_buf.resize(d.bytes.size() + kSecocOverhead);
      std::memcpy(sd_tx_buf.data(), d.bytes.data(), kHeaderSize);
      // Header and our source address are authenticated with the SD payload.
      std::uint8_t aad[kSdAadSize];
      secoc::TxInput in;
      in.header = ByteSpan(aad, sd_aad(*hdr, tr.local_address(), aad));
      in.now = fresh_now();
      auto r = engine->protect(*bindings.sd_tx_pdu, ByteSpan(d.bytes).subspan(kHeaderSize),
                               MutableByteSpan(sd_tx_buf).subspan(kHeaderSize), in);
      if (!r.ok()) {
        ++counters.secoc_protect_failed;
        return;
      }
      ++counters.secoc_sd_protected;
      store_be32(sd_tx_buf.data() + 4, static_cast<std::uint32_t>(kLengthHeaderPart + *r));
      bytes = ByteSpan(sd_tx_buf.data(), kHeaderSize + *r);
    }
    const Endpoint to = d.multicast ? cfg.sd_multicast : d.destination;
    auto st = tr.send(cfg.sd_port, to, bytes);
    if (!st.ok()) {
      ++counters.transport_errors;
      return;
    }
    ++counters.sd_datagrams_sent;
  }

  void on_sd_datagram(const Transport::Datagram& d) {
    ++counters.datagrams_received;
    if (!running || !sd) return;
    const TimePoint now = tr.now();
    const Endpoint own{tr.local_address(), cfg.sd_port, L4Proto::kUdp};
    if (d.source == own) return;  // our own multicast looped back
    ByteSpan bytes = d.payload;
    if (engine && bindings.sd_rx_pdu) {
      SecurityRejection rej;
      rej.sd = true;
      rej.source = d.source;
      rej.service_id = kSdServiceId;
      rej.method_or_event = kSdMethodId;
      auto m = parse_message(d.payload);
      if (!m.ok() || !m->header.is_sd()) {
        rej.unprotected = true;
        rej.reason = secoc::Rejection::kMalformed;
        reject(rej);
        return;
      }
      if (sd_rx_buf.size() < d.payload.size()) sd_rx_buf.resize(d.payload.size());
      // Timestamp freshness (no sync needed), header and source address
      // authenticated, replay state per source address.
      std::uint8_t aad[kSdAadSize];
      secoc::RxInput in;
      in.header = ByteSpan(aad, sd_aad(m->header, d.source.address, aad));
      in.now = fresh_now();
      in.source = source_key(d.source.address);
      auto v = engine->verify(*bindings.sd_rx_pdu, m->payload, MutableByteSpan(sd_rx_buf).subspan(kHeaderSize), in);
      if (!v.ok()) {
        rej.reason = v.error();
        rej.unprotected = v.error() == secoc::Rejection::kMalformed;
        reject(rej);
        return;
      }
      ++counters.secoc_sd_verified;
      std::memcpy(sd_rx_buf.data(), d.payload.data(), kHeaderSize);
      store_be32(sd_rx_buf.data() + 4, static_cast<std::uint32_t>(kLengthHeaderPart + *v));
      bytes = ByteSpan(sd_rx_buf.data(), kHeaderSize + *v);
    }
    SdActions acts;
    sd->on_datagram(now, bytes, d.source, d.multicast, acts);
    process(acts);
    reschedule();
  }

  void handle_sd_event(const SdEvent& ev, std::vector<Client*>& lost) {
    switch (ev.kind) {
      case SdEventKind::kServiceAvailable:
        for (auto& c : clients) {
          if (c.cfg.service_id != ev.service_id || !c.sd->available()) continue;
          if (c.sd->offer()->instance_id != ev.instance_id || c.reported_available) continue;
          c.reported_available = true;
          if (availability_handler) availability_handler(ev.service_id, ev.instance_id, true);
        }
        break;
      case SdEventKind::kServiceUnavailable:
        // Reported even when the same datagram offers the service again (a
        // server reboot): the application learns that the server's state is
        // gone; kServiceAvailable follows.
        for (auto& c : clients) {
          if (c.cfg.service_id != ev.service_id || !c.reported_available) continue;
          if (c.cfg.instance_id != 0xFFFF && c.cfg.instance_id != ev.instance_id) continue;
          c.reported_available = false;
          leave_groups(c);
          lost.push_back(&c);
          if (availability_handler) availability_handler(ev.service_id, ev.instance_id, false);
        }
        break;
      case SdEventKind::kSubscriptionAcked:
        if (!ev.multicast) break;
        for (auto& c : clients) {
          if (c.cfg.service_id != ev.service_id || !c.sd->available()) continue;
          if (c.sd->offer()->instance_id != ev.instance_id) continue;
          join_group(c, *ev.multicast);
        }
        break;
      case SdEventKind::kSubscribed: {
        // Initial values: every field of the eventgroup (and the latest SecOC
        // sync message) to the new subscriber, by unicast.
        Service* s = find_service(ev.service_id, ev.instance_id);
        if (!s || !ev.udp) break;
        for (auto& e : s->events) {
          if (std::find(e.cfg.eventgroups.begin(), e.cfg.eventgroups.end(), ev.eventgroup_id) ==
              e.cfg.eventgroups.end())
            continue;
          if (is_sync_event(ev.service_id, ev.instance_id, e.cfg.event_id)) {
            // Not the cached sync: its cycle may be one the subscriber saw
            // before a restart (and then refuses). A new cycle starts at the
            // end of this SD step (process()).
            sync_newcomers.push_back(*ev.udp);
          } else if (e.cfg.is_field && e.has_value) {
            notify_event(*s, e, e.value, &*ev.udp, nullptr).ignore();
          }
        }
        break;
      }
      default:
        break;
    }
  }

  void join_group(Client& c, const Endpoint& group) {
    for (const auto& g : c.groups)
      if (g == group) return;
    std::weak_ptr<bool> alive = token;
    const std::uint16_t port = group.port;
    auto st = tr.join(group, [this, alive, port](const Transport::Datagram& d) {
      if (auto a = alive.lock(); a && *a) on_datagram(port, d);
    });
    if (!st.ok()) {
      ++counters.transport_errors;
      return;
    }
    c.groups.push_back(group);
  }

  void leave_groups(Client& c) {
    for (const auto& g : c.groups) {
      // Another client may use the same group.
      bool shared = false;
      for (const auto& o : clients)
        if (&o != &c && std::find(o.groups.begin(), o.groups.end(), g) != o.groups.end()) shared = true;
      if (!shared) tr.leave(g);
    }
    c.groups.clear();
  }

  // --- send path ------------------------------------------------------------
  // Serialises header + payload into tx_buf (protected when `tx_pdu` is set).
  // Returns the whole message.
  Result<ByteSpan, RuntimeError> prepare(Header h, ByteSpan payload, std::optional<Bound> tx_pdu) {
    if (payload.size() > cfg.max_message_size) return Err(RuntimeError::kTooLarge);
    std::size_t body = payload.size();
    if (tx_pdu && engine) {
      std::uint8_t aad[kHeaderAadSize];
      secoc::TxInput in;
      if (tx_pdu->header) in.header = ByteSpan(aad, header_aad(h, aad));
      in.now = fresh_now();
      const std::int64_t t0 = cfg.time_secoc ? monotonic_now_ns() : 0;
      auto r = engine->protect(tx_pdu->pdu, payload, MutableByteSpan(tx_buf).subspan(kHeaderSize), in);
      if (cfg.time_secoc) counters.secoc_protect_ns += static_cast<std::uint64_t>(monotonic_now_ns() - t0);
      if (!r.ok()) {
        ++counters.secoc_protect_failed;
        return Err(RuntimeError::kSecoc);
      }
      ++counters.secoc_protected;
      body = *r;
    } else if (!payload.empty()) {
      std::memmove(tx_buf.data() + kHeaderSize, payload.data(), payload.size());
    }
    ByteWriter w(MutableByteSpan(tx_buf.data(), kHeaderSize));
    if (!write_header(w, h, body)) return Err(RuntimeError::kTooLarge);
    return ByteSpan(tx_buf.data(), kHeaderSize + body);
  }

  // Sends a prepared message, cut into SOME/IP-TP segments when its payload
  // is above 1400 bytes.
  Status<RuntimeError> transmit(std::uint16_t from_port, const Endpoint& to, ByteSpan message) {
    if (message.size() - kHeaderSize <= kMaxUdpPayload) {
      auto st = tr.send(from_port, to, message);
      if (!st.ok()) {
        ++counters.transport_errors;
        return Err(RuntimeError::kTransport);
      }
      return {};
    }
    auto h = read_raw_header(message);
    if (!h.ok()) return Err(RuntimeError::kTooLarge);
    TpSegmenter seg(*h, message.subspan(kHeaderSize), cfg.tp_segment_size);
    while (!seg.done()) {
      ByteWriter w(seg_buf);
      if (!seg.write_next(w)) return Err(RuntimeError::kTooLarge);
      auto st = tr.send(from_port, to, w.written());
      if (!st.ok()) {
        ++counters.transport_errors;
        return Err(RuntimeError::kTransport);
      }
      ++counters.tp_segments_sent;
    }
    return {};
  }

  // One notification of `e` to its subscribers (or only to `only_to`).
  Status<RuntimeError> notify_event(Service& s, Event& e, ByteSpan payload, const Endpoint* only_to,
                                    std::size_t* sent) {
    dests.clear();
    if (only_to) {
      dests.push_back(*only_to);
    } else {
      for (auto gid : e.cfg.eventgroups) {
        const EventgroupConfig* g = find_group(s, gid);
        const std::size_t threshold = g ? std::max<std::size_t>(g->multicast_threshold, 1) : 1;
        if (g && g->multicast && threshold == 1) {
          // Multicast from the first subscriber on: one datagram to the group,
          // whatever N is (no per-subscriber work on this path).
          const auto& subs = s.sd->subscriptions();
          if (std::any_of(subs.begin(), subs.end(),
                          [gid](const SdSubscription& sub) { return sub.eventgroup_id == gid && sub.udp; }))
            dests.push_back(*g->multicast);
          continue;
        }
        const std::size_t before = dests.size();
        for (const auto& sub : s.sd->subscriptions()) {
          if (sub.eventgroup_id == gid && sub.udp) dests.push_back(*sub.udp);
        }
        // Distinct subscriber endpoints of this group: sort + unique, so a
        // large group costs O(N log N) per event, not O(N^2).
        const auto first = dests.begin() + static_cast<std::ptrdiff_t>(before);
        std::sort(first, dests.end());
        dests.erase(std::unique(first, dests.end()), dests.end());
        const std::size_t n = dests.size() - before;
        if (g && g->multicast && n > 0 && n >= threshold) {
          dests.resize(before);
          dests.push_back(*g->multicast);
        }
      }
      std::sort(dests.begin(), dests.end());
      dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
    }
    if (dests.empty()) return {};
    Header h;
    h.service_id = s.cfg.service_id;
    h.method_id = e.cfg.event_id;
    h.client_id = 0;
    h.session_id = take_session(e.session);
    h.interface_version = s.cfg.major_version;
    h.message_type = MessageType::kNotification;
    const bool sync = is_sync_event(s.cfg.service_id, s.cfg.instance_id, e.cfg.event_id);
    const auto tx = sync ? std::nullopt : binding(tx_bind, s.cfg.service_id, s.cfg.instance_id, e.cfg.event_id);
    if (!sync && !tx && unbound_refused(s.cfg.service_id, s.cfg.instance_id, e.cfg.event_id)) {
      ++counters.secoc_unbound_refused;
      return Err(RuntimeError::kSecoc);
    }
    auto msg = prepare(h, payload, tx);
    if (!msg.ok()) return Err(msg.error());
    std::optional<RuntimeError> failed;
    for (const auto& d : dests) {
      auto st = transmit(s.cfg.udp_port, d, *msg);
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

  void send_error(std::uint16_t port, const Endpoint& to, const Header& request, ReturnCode code,
                  std::optional<Bound> tx_pdu) {
    // An unauthenticated error on a SecOC service is never sent: it is what
    // an attacker would forge, and unauthenticated input gets no reply.
    if (!tx_pdu && port_uses_secoc(port)) {
      ++counters.secoc_unbound_refused;
      return;
    }
    Header h = request;
    h.protocol_version = kProtocolVersion;
    h.message_type = MessageType::kError;
    h.return_code = static_cast<std::uint8_t>(code);
    auto msg = prepare(h, {}, tx_pdu);
    if (!msg.ok()) return;
    transmit(port, to, *msg).ignore();
  }

  // --- receive path -----------------------------------------------------------
  void on_datagram(std::uint16_t port, const Transport::Datagram& d) {
    ++counters.datagrams_received;
    if (!running) return;
    DatagramIterator it(d.payload);
    std::size_t consumed = 0;
    while (!it.done() && running) {
      auto m = it.next();
      if (!m.ok()) {
        const ByteSpan rest = d.payload.subspan(consumed);
        const RxVerdict v = d.multicast ? RxVerdict{RxAction::kDrop, ReturnCode::kOk, DropReason::kMalformed}
                                        : check_malformed(rest, m.error());
        counters.rx.count(v);
        if (v.action == RxAction::kReplyError) {
          auto h = read_raw_header(rest);
          if (h.ok()) send_error(port, d.source, *h, v.code, std::nullopt);
        }
        break;
      }
      consumed += m->bytes.size();
      ++counters.messages_received;
      handle_message(port, d, *m);
    }
    reschedule();
  }

  void handle_message(std::uint16_t port, const Transport::Datagram& d, const MessageView& m) {
    if (is_tp(m.header.message_type)) {
      auto seg = parse_tp_segment(m);
      if (!seg.ok()) {
        ++counters.tp_rejected;
        return;
      }
      auto out = tp.on_segment(tr.now(), d.source, *seg);
      if (!out.ok()) {
        ++counters.tp_rejected;
        return;
      }
      if (out->status != TpReassembler::Status::kComplete) return;
      auto whole = parse_message(out->message);
      if (!whole.ok()) {
        ++counters.tp_rejected;
        return;
      }
      ++counters.tp_messages_reassembled;
      dispatch(port, d, *whole);
      return;
    }
    dispatch(port, d, m);
  }

  void dispatch(std::uint16_t port, const Transport::Datagram& d, const MessageView& m) {
    switch (m.header.message_type) {
      case MessageType::kRequest:
      case MessageType::kRequestNoReturn:
        if (d.multicast) {
          counters.rx.count(RxVerdict{RxAction::kDrop, ReturnCode::kOk, DropReason::kWrongMessageType});
          return;
        }
        serve(port, d, m);
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

  void reject(const SecurityRejection& r) {
    ++counters.secoc_rejected;
    if (rejection_handler) rejection_handler(r);
  }
  // A message on a SecOC service's id that has no binding: never delivered.
  void reject_unbound(std::uint16_t service, std::uint16_t instance, std::uint16_t id, const Endpoint& source) {
    ++counters.secoc_unbound_rejected;
    SecurityRejection rej;
    rej.service_id = service;
    rej.instance_id = instance;
    rej.method_or_event = id;
    rej.unbound = true;
    rej.reason = secoc::Rejection::kUnknownPdu;
    rej.source = source;
    reject(rej);
  }

  // Verifies message `m` with rx PDU `pdu` into rx_plain. False: rejected.
  bool verify(const Bound& pdu, const MessageView& m, ByteSpan& plain, SecurityRejection& rej) {
    std::uint8_t aad[kHeaderAadSize];
    secoc::RxInput in;
    if (pdu.header) in.header = ByteSpan(aad, header_aad(m.header, aad));
    in.now = fresh_now();
    const std::int64_t t0 = cfg.time_secoc ? monotonic_now_ns() : 0;
    auto v = engine->verify(pdu.pdu, m.payload, rx_plain, in);
    if (cfg.time_secoc) counters.secoc_verify_ns += static_cast<std::uint64_t>(monotonic_now_ns() - t0);
    if (!v.ok()) {
      rej.reason = v.error();
      rej.unprotected = v.error() == secoc::Rejection::kMalformed;
      reject(rej);
      return false;
    }
    ++counters.secoc_verified;
    plain = ByteSpan(rx_plain.data(), *v);
    return true;
  }

  void serve(std::uint16_t port, const Transport::Datagram& d, const MessageView& m) {
    const Header& h = m.header;
    const PortTable table(*this, port);
    const RxVerdict v = check_server_message(h, table);
    Service* s = const_cast<Service*>(service_on_port(h.service_id, port));
    const std::uint16_t instance = s ? s->cfg.instance_id : 0;
    const auto tx_pdu = s ? binding(tx_bind, h.service_id, instance, h.method_id) : std::nullopt;
    if (v.action == RxAction::kDrop) {
      counters.rx.count(v);
      return;
    }
    // A bound id is verified before anything is answered, errors included:
    // unauthenticated input gets no reply (and burns no freshness values).
    ByteSpan payload = m.payload;
    if (auto pdu = s ? binding(rx_bind, h.service_id, instance, h.method_id) : std::nullopt) {
      SecurityRejection rej;
      rej.service_id = h.service_id;
      rej.instance_id = instance;
      rej.method_or_event = h.method_id;
      rej.source = d.source;
      if (!verify(*pdu, m, payload, rej)) return;
    } else if (unbound_refused(h.service_id, instance, h.method_id)) {
      reject_unbound(h.service_id, instance, h.method_id, d.source);
      return;
    }
    counters.rx.count(v);
    if (v.action == RxAction::kReplyError) {
      send_error(port, d.source, h, v.code, tx_pdu);
      return;
    }
    const bool no_return = h.message_type == MessageType::kRequestNoReturn;
    reply.code = ReturnCode::kOk;
    reply.payload.clear();
    bool handled = false;
    for (auto& e : s->events) {
      if (e.cfg.getter_method == h.method_id) {
        reply.payload.assign(e.value.begin(), e.value.end());
        handled = true;
        break;
      }
      if (e.cfg.setter_method == h.method_id) {
        if (payload.size() > cfg.max_message_size) {
          reply.code = ReturnCode::kMalformedMessage;
        } else {
          e.value.assign(payload.begin(), payload.end());
          e.has_value = true;
          reply.payload.assign(e.value.begin(), e.value.end());
          notify_event(*s, e, e.value, nullptr, nullptr).ignore();
        }
        handled = true;
        break;
      }
    }
    if (!handled) {
      auto hit = s->handlers.find(h.method_id);
      if (hit == s->handlers.end() || !hit->second || !*hit->second) {
        if (!no_return) send_error(port, d.source, h, ReturnCode::kNotReady, tx_pdu);
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
      req.source = d.source;
      const std::shared_ptr<MethodHandler> handler = hit->second;  // no allocation
      (*handler)(req, reply);
    }
    ++counters.requests_served;
    if (no_return || !running) return;
    if (!tx_pdu && unbound_refused(h.service_id, instance, h.method_id)) {
      ++counters.secoc_unbound_refused;  // no tx binding for the answer: never sent unprotected
      return;
    }
    Header out = h;
    out.interface_version = s->cfg.major_version;
    out.message_type = reply.code == ReturnCode::kOk ? MessageType::kResponse : MessageType::kError;
    out.return_code = static_cast<std::uint8_t>(reply.code);
    auto msg = prepare(out, reply.payload, tx_pdu);
    if (!msg.ok()) return;
    transmit(port, d.source, *msg).ignore();
  }

  void on_response(const Transport::Datagram& d, const MessageView& m) {
    const Header& h = m.header;
    const Pending* it = h.client_id == cfg.client_id ? pending.find(h.session_id) : nullptr;
    if (!it || it->service != h.service_id || it->method != h.method_id ||
        !(it->to.address == d.source.address && it->to.port == d.source.port)) {
      ++counters.late_responses;
      return;
    }
    ByteSpan payload = m.payload;
    if (auto pdu = binding(rx_bind, h.service_id, it->instance, h.method_id)) {
      SecurityRejection rej;
      rej.service_id = h.service_id;
      rej.instance_id = it->instance;
      rej.method_or_event = h.method_id;
      rej.source = d.source;
      // A forged answer must not end the request: it stays pending.
      if (!verify(*pdu, m, payload, rej)) return;
    } else if (unbound_refused(h.service_id, it->instance, h.method_id)) {
      reject_unbound(h.service_id, it->instance, h.method_id, d.source);
      return;
    }
    Pending p = pending.take(h.session_id);
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

  void on_notification(const Transport::Datagram& d, const MessageView& m) {
    const Header& h = m.header;
    const Client* c = nullptr;
    for (const auto& cl : clients) {
      if (cl.cfg.service_id != h.service_id || !cl.sd || !cl.sd->available()) continue;
      const auto& offer = *cl.sd->offer();
      if (!offer.udp || !(offer.udp->address == d.source.address && offer.udp->port == d.source.port)) continue;
      c = &cl;
      break;
    }
    if (!c) {
      ++counters.notifications_unsubscribed;
      return;
    }
    const std::uint16_t instance = c->sd->offer()->instance_id;
    SecurityRejection rej;
    rej.service_id = h.service_id;
    rej.instance_id = instance;
    rej.method_or_event = h.method_id;
    rej.source = d.source;
    if (is_sync_event(h.service_id, instance, h.method_id)) {
      auto st = engine->handle_sync(bindings.sync_rx_channel, m.payload, fresh_now());
      if (!st.ok()) {
        rej.reason = st.error();
        rej.unprotected = st.error() == secoc::Rejection::kMalformed;
        reject(rej);
        return;
      }
      if (*st == secoc::SyncOutcome::kDuplicate) ++counters.secoc_syncs_duplicate;
      else ++counters.secoc_syncs_accepted;
      ++counters.notifications_received;
      return;
    }
    ByteSpan payload = m.payload;
    if (auto pdu = binding(rx_bind, h.service_id, instance, h.method_id)) {
      if (!verify(*pdu, m, payload, rej)) return;
    } else if (unbound_refused(h.service_id, instance, h.method_id)) {
      reject_unbound(h.service_id, instance, h.method_id, d.source);
      return;
    }
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
  Result<std::uint16_t, RuntimeError> request(std::uint16_t service, std::uint16_t instance,
                                              std::uint16_t method, ByteSpan payload, ResponseHandler handler,
                                              std::optional<Duration> timeout, bool no_return) {
    if (!running) return Err(RuntimeError::kNotRunning);
    if (method >= 0x8000) return Err(RuntimeError::kNotConfigured);
    bool configured = false;
    Client* c = find_client(service, instance, configured);
    if (!c) return Err(configured ? RuntimeError::kNotAvailable : RuntimeError::kNotConfigured);
    const SdOfferInfo& offer = *c->sd->offer();
    if (!offer.udp) return Err(RuntimeError::kNotAvailable);
    if (!no_return && pending.full()) return Err(RuntimeError::kTooManyPending);
    std::uint16_t session = take_session(next_session);
    while (pending.contains(session)) session = take_session(next_session);  // < 32768 pending: ends
    Header h;
    h.service_id = service;
    h.method_id = method;
    h.client_id = cfg.client_id;
    h.session_id = session;
    h.interface_version = offer.major_version;
    h.message_type = no_return ? MessageType::kRequestNoReturn : MessageType::kRequest;
    const auto tx = binding(tx_bind, service, offer.instance_id, method);
    if (!tx && unbound_refused(service, offer.instance_id, method)) {
      ++counters.secoc_unbound_refused;
      return Err(RuntimeError::kSecoc);
    }
    auto msg = prepare(h, payload, tx);
    if (!msg.ok()) return Err(msg.error());
    const Endpoint to = *offer.udp;
    const std::uint16_t inst = offer.instance_id;
    auto st = transmit(c->port, to, *msg);
    if (!st.ok()) return Err(st.error());
    if (no_return) return session;
    const TimePoint deadline = tr.now() + timeout.value_or(cfg.request_timeout);
    pending.insert(session, Pending{service, inst, method, to, deadline, std::move(handler)});
    auto later = [](const auto& a, const auto& b) { return a.first > b.first; };
    if (timeouts.size() >= 2 * cfg.max_pending_requests) {
      // Answered requests leave stale heap entries; drop them in place so the
      // heap stays within 2 x max_pending_requests (no growth, no allocation).
      timeouts.erase(std::remove_if(timeouts.begin(), timeouts.end(),
                                    [&](const auto& t) {
                                      const Pending* q = pending.find(t.second);
                                      return !q || q->deadline != t.first;
                                    }),
                     timeouts.end());
      std::make_heap(timeouts.begin(), timeouts.end(), later);
    }
    timeouts.emplace_back(deadline, session);
    std::push_heap(timeouts.begin(), timeouts.end(), later);
    reschedule();
    return session;
  }

  RuntimeConfig cfg;
  Transport& tr;
  RandomSource& random;
  std::shared_ptr<bool> token = std::make_shared<bool>(true);
  std::unique_ptr<ServiceDiscovery> sd;
  std::vector<Service> services;
  std::vector<Client> clients;
  bool running = false;
  bool sd_joined = false;
  std::vector<std::uint16_t> bound_ports;
  TimePoint scheduled = TimePoint::max();

  // SecOC
  secoc::Engine* engine = nullptr;
  SecocBindings bindings;
  const Clock* freshness_clock = nullptr;
  BindingMap tx_bind;
  BindingMap rx_bind;
  std::unordered_set<std::uint16_t> secured_services;
  std::vector<Endpoint> sync_newcomers;  // new sync subscribers: unicast the requested sync
  std::optional<TimePoint> forced_sync_at;    // transport time of the next forced cycle
  std::optional<TimePoint> last_forced_sync;  // transport time of the last one
  TimePoint secoc_deadline = TimePoint::max();
  std::vector<std::uint8_t> sync_buf;
  std::vector<std::uint8_t> last_sync;

  // Requests
  std::uint16_t next_session = 1;
  PendingTable pending;
  std::vector<std::pair<TimePoint, std::uint16_t>> timeouts;  // min-heap by deadline

  TpReassembler tp;
  std::vector<std::uint8_t> tx_buf;
  std::vector<std::uint8_t> rx_plain;
  std::vector<std::uint8_t> seg_buf;
  std::vector<std::uint8_t> sd_tx_buf;
  std::vector<std::uint8_t> sd_rx_buf;
  std::vector<Endpoint> dests;
  Reply reply;

  AvailabilityHandler availability_handler;
  RejectionHandler rejection_handler;
  std::unordered_map<std::uint32_t, std::shared_ptr<EventHandler>> event_handlers;
  RuntimeCounters counters;
};

// --- public API ----------------------------------------------------------------

Runtime::Runtime(RuntimeConfig config, Transport& transport, RandomSource& random)
    : impl_(std::make_unique<Impl>(std::move(config), transport, random)) {}

Runtime::~Runtime() {
  impl_->stop();
  *impl_->token = false;
}

void Runtime::attach_secoc(secoc::Engine& engine, SecocBindings bindings, const Clock* freshness_clock) {
  Impl& m = *impl_;
  if (m.running || m.sd) throw std::logic_error("someip runtime: attach_secoc() after start()");
  Impl::BindingMap tx;
  Impl::BindingMap rx;
  std::unordered_set<std::uint16_t> secured;
  for (const auto& b : bindings.messages) {
    const std::string name = "SecOC binding " + hex16(b.service_id) + "/" + hex16(b.instance_id) + "/" +
                             hex16(b.method_or_event);
    const std::uint64_t key = binding_key(b.service_id, b.instance_id, b.method_or_event);
    bool header = bindings.header == HeaderAuth::kSomeipHeader;
    for (const auto& po : bindings.payload_only)
      if (po.service_id == b.service_id && po.method_or_event == b.method_or_event &&
          (po.instance_id == 0xFFFF || po.instance_id == b.instance_id))
        header = false;
    if (b.tx_pdu) {
      if (!engine.tx_profile(*b.tx_pdu)) throw std::invalid_argument(name + ": unknown tx PDU " + std::to_string(*b.tx_pdu));
      if (!tx.emplace(key, Impl::Bound{*b.tx_pdu, header}).second) throw std::invalid_argument(name + ": tx bound twice");
    }
    if (b.rx_pdu) {
      if (!engine.rx_profile(*b.rx_pdu)) throw std::invalid_argument(name + ": unknown rx PDU " + std::to_string(*b.rx_pdu));
      if (!rx.emplace(key, Impl::Bound{*b.rx_pdu, header}).second) throw std::invalid_argument(name + ": rx bound twice");
    }
    if (b.tx_pdu || b.rx_pdu) secured.insert(b.service_id);
  }
  for (const auto& u : bindings.unprotected) {
    const std::uint64_t key = binding_key(u.service_id, u.instance_id, u.method_or_event);
    if (tx.count(key) || rx.count(key))
      throw std::invalid_argument("SecOC: " + hex16(u.service_id) + "/" + hex16(u.method_or_event) +
                                  " is both bound and listed as unprotected");
  }
  if (bindings.sd_tx_pdu) {
    const secoc::PduProfile* p = engine.tx_profile(*bindings.sd_tx_pdu);
    if (!p) throw std::invalid_argument("SecOC SD binding: unknown tx PDU " + std::to_string(*bindings.sd_tx_pdu));
    if (!p->freshness.timestamp)
      throw std::invalid_argument("SecOC SD binding: tx PDU " + std::to_string(*bindings.sd_tx_pdu) +
                                  " must use timestamp freshness (SD runs before any sync message "
                                  "can reach a peer)");
  }
  if (bindings.sd_rx_pdu) {
    const secoc::PduProfile* p = engine.rx_profile(*bindings.sd_rx_pdu);
    if (!p) throw std::invalid_argument("SecOC SD binding: unknown rx PDU " + std::to_string(*bindings.sd_rx_pdu));
    if (!p->freshness.timestamp)
      throw std::invalid_argument("SecOC SD binding: rx PDU " + std::to_string(*bindings.sd_rx_pdu) +
                                  " must use timestamp freshness (it verifies every peer's SD from "
                                  "the first message, and refuses replays from an earlier run)");
  }
  if (bindings.sd_tx_pdu.has_value() != bindings.sd_rx_pdu.has_value())
    throw std::invalid_argument("SecOC SD binding: needs both a tx and an rx PDU");
  if (m.cfg.sd_enabled && !bindings.messages.empty() && !bindings.sd_tx_pdu && !bindings.sd_unprotected)
    throw std::invalid_argument(
        "SecOC bindings without SD protection: spoofed or replayed Offer, StopOffer, Subscribe or "
        "Nack messages would control who the secured services talk to; bind SD PDUs "
        "(sd_tx_pdu/sd_rx_pdu) or set sd_unprotected explicitly");
  if (bindings.sd_unprotected && bindings.sd_tx_pdu)
    throw std::invalid_argument("SecOC SD binding: sd_unprotected set together with SD PDUs");
  m.engine = &engine;
  m.bindings = std::move(bindings);
  m.tx_bind = std::move(tx);
  m.rx_bind = std::move(rx);
  m.secured_services = std::move(secured);
  m.freshness_clock = freshness_clock;
}

Status<RuntimeError> Runtime::start() { return impl_->start(); }
void Runtime::stop() { impl_->stop(); }
bool Runtime::running() const { return impl_->running; }

Status<RuntimeError> Runtime::set_method_handler(std::uint16_t service, std::uint16_t instance,
                                                 std::uint16_t method, MethodHandler handler) {
  Impl::Service* s = impl_->find_service(service, instance);
  if (!s || Impl::method_kind(*s, method) == MethodKind::kNone) return Err(RuntimeError::kNotConfigured);
  s->handlers[method] = std::make_shared<MethodHandler>(std::move(handler));
  return {};
}

Status<RuntimeError> Runtime::notify(std::uint16_t service, std::uint16_t instance, std::uint16_t event,
                                     ByteSpan payload) {
  Impl& m = *impl_;
  Impl::Service* s = m.find_service(service, instance);
  Impl::Event* e = s ? Impl::find_event(*s, event) : nullptr;
  if (!e) return Err(RuntimeError::kNotConfigured);
  if (payload.size() > m.cfg.max_message_size) return Err(RuntimeError::kTooLarge);
  if (e->cfg.is_field) {
    e->value.assign(payload.begin(), payload.end());
    e->has_value = true;
  }
  if (!m.running) return Err(RuntimeError::kNotRunning);
  return m.notify_event(*s, *e, e->cfg.is_field ? ByteSpan(e->value) : payload, nullptr, nullptr);
}

Status<RuntimeError> Runtime::set_field(std::uint16_t service, std::uint16_t instance, std::uint16_t event,
                                        ByteSpan value) {
  Impl& m = *impl_;
  Impl::Service* s = m.find_service(service, instance);
  Impl::Event* e = s ? Impl::find_event(*s, event) : nullptr;
  if (!e || !e->cfg.is_field) return Err(RuntimeError::kNotConfigured);
  if (value.size() > m.cfg.max_message_size) return Err(RuntimeError::kTooLarge);
  e->value.assign(value.begin(), value.end());
  e->has_value = true;
  // Before start(): stored, sent to subscribers as their initial value.
  if (!m.running) return {};
  return m.notify_event(*s, *e, e->value, nullptr, nullptr);
}

std::size_t Runtime::subscriber_count(std::uint16_t service, std::uint16_t instance,
                                      std::uint16_t eventgroup) const {
  Impl::Service* s = impl_->find_service(service, instance);
  if (!s || !s->sd) return 0;
  std::vector<Endpoint> seen;
  for (const auto& sub : s->sd->subscriptions()) {
    if (sub.eventgroup_id != eventgroup) continue;
    const Endpoint key = sub.udp ? *sub.udp : sub.peer;
    if (std::find(seen.begin(), seen.end(), key) == seen.end()) seen.push_back(key);
  }
  return seen.size();
}

void Runtime::on_availability(AvailabilityHandler handler) { impl_->availability_handler = std::move(handler); }

void Runtime::on_event(std::uint16_t service, std::uint16_t event, EventHandler handler) {
  impl_->event_handlers[(std::uint32_t{service} << 16) | event] = std::make_shared<EventHandler>(std::move(handler));
}

bool Runtime::available(std::uint16_t service, std::uint16_t instance) const {
  bool configured = false;
  return impl_->find_client(service, instance, configured) != nullptr;
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

void Runtime::on_rejection(RejectionHandler handler) { impl_->rejection_handler = std::move(handler); }
const RuntimeCounters& Runtime::counters() const {
  if (impl_->sd) impl_->counters.sd_dropped = impl_->sd->counters().dropped;
  return impl_->counters;
}
std::size_t Runtime::tp_buffered_bytes() const { return impl_->tp.buffered_bytes(); }
std::size_t Runtime::pending_requests() const { return impl_->pending.size(); }
const RuntimeConfig& Runtime::config() const { return impl_->cfg; }

}  // namespace layersec::someip
