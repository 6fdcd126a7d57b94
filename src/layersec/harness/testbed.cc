#include "layersec/harness/testbed.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "layersec/crypto/kdf.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/harness/stats.h"
#include "layersec/kex/group_keys.h"
#include "layersec/kex/mode_b.h"
#include "layersec/macsec/link.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/runtime.h"

namespace layersec::harness {

namespace {

using layout::answer_method;
using layout::kClientPort;
using layout::kEvent;
using layout::kEventgroup;
using layout::kInstance;
using layout::kService;
using layout::kServicePort;
using layout::kSubscriberPort;
using layout::subscriber_client_id;
constexpr std::uint16_t kKeyRequest = 0x0100;     // Mode B KeyRequest -> KeyDelivery
constexpr std::uint16_t kKeyConfirm = 0x0101;     // Mode B KeyConfirm -> empty response
constexpr std::uint16_t kLoadPort = 9;  // discard: nobody listens
constexpr int kMaxSubscribers = 200;
// Simulated wall-clock epoch (Unix seconds) the certificates are valid at.
constexpr std::int64_t kEpochS = 1'780'000'000;

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("testbed: " + what);
}

kex::Identity must(Result<kex::Identity, kex::PkiError> r, const char* what) {
  if (!r.ok()) throw std::runtime_error(std::string("credentials: ") + what + ": " + std::string(kex::to_string(r.error())));
  return std::move(r).value();
}

net::Ipv4Address host_ip(int index) {  // 0 publisher, 1..N subscribers, 250 load
  const int v = 1 + index;
  return net::Ipv4Address::from_octets(10, 0, static_cast<std::uint8_t>(v / 250),
                                       static_cast<std::uint8_t>(v % 250 + 1));
}

SecretBytes random_key(std::size_t n) {
  SecretBytes k(n);
  check(crypto::random_bytes(k.mutable_span()).ok(), "random key");
  return k;
}

}  // namespace

std::string to_string(Security s) {
  switch (s) {
    case Security::kNone: return "none";
    case Security::kSecoc: return "secoc";
    case Security::kHybrid: return "hybrid";
  }
  return "?";
}

std::string to_string(KeyDistribution k) {
  switch (k) {
    case KeyDistribution::kNone: return "none";
    case KeyDistribution::kPsk: return "psk";
    case KeyDistribution::kRsaModeB: return "rsa-mode-b";
    case KeyDistribution::kGroupModeB: return "group-mode-b";
  }
  return "?";
}

// --- credentials -------------------------------------------------------------

std::shared_ptr<const Credentials> Credentials::create(int max_subscribers, std::uint16_t service) {
  auto c = std::shared_ptr<Credentials>(new Credentials);
  const auto validity = kex::Validity::days_from(kEpochS, 365);
  c->ca_ = must(kex::create_ca({"layersec-demo-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                                kex::Validity::days_from(kEpochS, 3650)}),
                "CA");
  c->publisher_ = must(kex::issue_certificate(c->ca_, {"demo-publisher", {service}, kex::KeyAlgorithm::kRsa2048, validity}),
                       "publisher certificate");
  const int n = std::max(1, max_subscribers);
  c->subscribers_.reserve(static_cast<std::size_t>(n));
  c->subscribers_.push_back(must(
      kex::issue_certificate(c->ca_, {"demo-subscriber-1", {service}, kex::KeyAlgorithm::kRsa2048, validity}),
      "subscriber certificate"));
  if (n > 1) {
    // Further subscribers: own certificates over one more RSA-2048 key pair.
    auto shared = must(
        kex::issue_certificate(c->ca_, {"demo-subscriber-2", {service}, kex::KeyAlgorithm::kRsa2048, validity}),
        "subscriber certificate");
    auto pem = shared.key.to_pem();
    check(pem.ok(), "subscriber key export");
    c->subscribers_.push_back(std::move(shared));
    for (int i = 3; i <= n; ++i) {
      auto key = kex::PrivateKey::from_pem(pem->span());
      check(key.ok(), "subscriber key import");
      auto cert = kex::issue_certificate_for_key(
          c->ca_, key->public_key(),
          {"demo-subscriber-" + std::to_string(i), {service}, kex::KeyAlgorithm::kRsa2048, validity});
      check(cert.ok(), "subscriber certificate");
      c->subscribers_.push_back(kex::Identity{std::move(cert).value(), std::move(key).value()});
    }
  }
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&c->ca_.certificate, 1));
  check(trust.ok(), "trust store");
  c->trust_ = std::move(trust).value();
  return c;
}

const kex::Identity& Credentials::subscriber(int i) const {
  if (i < 0 || i >= static_cast<int>(subscribers_.size())) throw std::out_of_range("credentials: subscriber");
  return subscribers_[static_cast<std::size_t>(i)];
}

// --- the testbed -----------------------------------------------------------------

struct Testbed::Impl {
  // One host on the segment. The SOME/IP node on it (runtime, SecOC engine,
  // the host-side SecY in the hybrid scenarios, the SimTransport) comes from
  // the node builder; the background-load host has none.
  struct Node {
    std::unique_ptr<net::SimHost> host;
    net::PortId port = 0;
    std::unique_ptr<macsec::MacsecLink> switch_secy;  // hybrid: the switch port's SecY
    std::unique_ptr<macsec::MacsecLink> load_secy;    // hybrid: the load host's SecY (it has no stack)
    std::unique_ptr<net::FrameShim> shim;             // hybrid: over host_link()
    std::unique_ptr<node::Stack> stack;  // destroyed first: its runtime sends StopOffers through the shim
    net::OwnerId owner = net::kUnowned;  // its simulated CPU (the port's endpoint owner)
    // The runtime, engine and host-side SecY of the stack (nullptr when absent).
    [[nodiscard]] someip::Runtime* runtime() const { return stack ? &stack->runtime() : nullptr; }
    [[nodiscard]] secoc::Engine* engine() const { return stack ? stack->engine() : nullptr; }
    [[nodiscard]] macsec::MacsecLink* host_link() const { return stack ? stack->macsec_link() : load_secy.get(); }
  };

  explicit Impl(std::uint64_t seed)
      : sim(seed, TimePoint::from_ns(kEpochS * 1'000'000'000LL)), segment(sim) {
    // Always on: the parallel-ECU figures come from it, and its cost (clock
    // reads around every event and at every schedule call) is in both
    // figures alike.
    sim.enable_cpu_attribution(real_clock);
  }
  ~Impl() {
    // Stacks first (their runtimes send StopOffers through their transports).
    for (auto* n : all_nodes()) n->stack.reset();
  }

  std::vector<Node*> all_nodes() {
    std::vector<Node*> v{&publisher};
    for (auto& s : subscribers) v.push_back(&s);
    if (load) v.push_back(load.get());
    return v;
  }

  MonotonicClock real_clock;  // CLOCK_MONOTONIC, as monotonic_ns()
  net::Simulator sim;
  net::Segment segment;
  macsec::MacsecPortProcessor ports;
  Node publisher;
  std::vector<Node> subscribers;
  std::unique_ptr<Node> load;

  // Loop state.
  std::uint32_t current = 0;
  int answers = 0;
  int events_seen = 0;
  std::int64_t t_start = 0;
  std::int64_t t_last_event = 0;
  std::int64_t t_last_answer = 0;
  // The same in model time (parallel-ECU critical path): the window start
  // and the latest (not the last-run) event callback and answer dispatch.
  std::int64_t m_start = 0;
  std::int64_t m_last_event = 0;
  std::int64_t m_last_answer = 0;
  std::uint64_t delivered = 0;
  std::vector<std::uint8_t> payload;
  std::vector<std::vector<std::uint8_t>> answer_buf;

  // Background load.
  Duration load_interval = Duration::zero();
  std::vector<std::uint8_t> load_payload;
  bool load_running = false;
  void schedule_load();
  // SecOC time (ns) and calls so far, summed over every runtime.
  [[nodiscard]] std::pair<std::int64_t, std::uint64_t> secoc_totals();
};

void Testbed::Impl::schedule_load() {
  if (!load || load_interval <= Duration::zero()) return;
  sim.schedule_in(
      load_interval,
      [this] {
        for (std::size_t i = 0; i < subscribers.size(); ++i) {
          (void)load->host->send_to(kLoadPort, {host_ip(static_cast<int>(i) + 1), kLoadPort}, load_payload).ok();
        }
        schedule_load();
      },
      load->owner);
}

std::pair<std::int64_t, std::uint64_t> Testbed::Impl::secoc_totals() {
  std::int64_t ns = 0;
  std::uint64_t ops = 0;
  for (auto* n : all_nodes()) {
    if (!n->runtime()) continue;
    const auto& c = n->runtime()->counters();
    ns += static_cast<std::int64_t>(c.secoc_protect_ns + c.secoc_verify_ns);
    ops += c.secoc_protected + c.secoc_protect_failed + c.secoc_verified + c.secoc_rejected;
  }
  return {ns, ops};
}

std::uint16_t Testbed::subscriber_port() { return kSubscriberPort; }
net::PortId Testbed::publisher_port() const { return impl_->publisher.port; }

Testbed::Testbed(TestbedOptions options, std::shared_ptr<const Credentials> credentials)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(options_.seed)) {
  auto& im = *impl_;
  const int n = options_.subscribers;
  if (n < 1 || n > kMaxSubscribers) throw std::invalid_argument("testbed: subscribers must be in [1, 200]");
  const bool secured = options_.security != Security::kNone;
  if (secured && options_.keys == KeyDistribution::kNone) throw std::invalid_argument("testbed: secured without keys");
  if (!secured && options_.keys != KeyDistribution::kNone) throw std::invalid_argument("testbed: keys without SecOC");
  const bool mode_b = options_.keys == KeyDistribution::kRsaModeB || options_.keys == KeyDistribution::kGroupModeB;
  if (mode_b && (!credentials || credentials->max_subscribers() < n))
    throw std::invalid_argument("testbed: Mode B needs credentials for every subscriber");
  credentials_ = std::move(credentials);

  // Hosts, and in the hybrid scenarios the two SecYs of each host's link:
  // the switch port's here, the host's in the node's stack below.
  im.subscribers.resize(static_cast<std::size_t>(n));
  if (options_.background_mbps > 0) im.load = std::make_unique<Impl::Node>();
  std::vector<std::pair<Impl::Node*, int>> nodes{{&im.publisher, 0}};
  for (int i = 0; i < n; ++i) nodes.emplace_back(&im.subscribers[static_cast<std::size_t>(i)], i + 1);
  if (im.load) nodes.emplace_back(im.load.get(), 249);
  std::vector<std::optional<node::MacsecSpec>> host_macsec(nodes.size());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    auto& [host_node, index] = nodes[k];
    net::SimHostConfig hc;
    hc.mac = net::MacAddress::local(static_cast<std::uint32_t>(0x1000 + index));
    hc.ip = host_ip(index);
    hc.prefix_length = 16;
    hc.dynamic_arp = false;
    host_node->host = std::make_unique<net::SimHost>(im.sim, hc);
    if (options_.security == Security::kHybrid) {
      const auto host_sci = macsec::Sci::from_parts(hc.mac.bytes.data(), 1);
      const auto sw_mac = net::MacAddress::local(static_cast<std::uint32_t>(0xF000 + index));
      const auto sw_sci = macsec::Sci::from_parts(sw_mac.bytes.data(), 1);
      const SecretBytes up = random_key(16);    // host -> switch SAK
      const SecretBytes down = random_key(16);  // switch -> host SAK
      host_macsec[k] = node::hop_macsec_spec(host_sci, sw_sci, up, down, "switch");
      host_node->switch_secy =
          std::make_unique<macsec::MacsecLink>(node::make_secy(node::hop_macsec_spec(sw_sci, host_sci, down, up, "host")));
    }
  }

  // SOME/IP configuration.
  someip::SdTiming timing;
  timing.initial_delay_min = Duration::milliseconds(0);
  timing.initial_delay_max = Duration::milliseconds(10);
  const std::size_t max_message = std::max<std::size_t>(options_.payload_bytes + 64, 4096);

  someip::RuntimeConfig pc;
  pc.name = "publisher";
  pc.client_id = 0x0001;
  pc.client_port = kClientPort;
  pc.sd_timing = timing;
  pc.max_message_size = max_message;
  pc.cost_clock = &im.real_clock;  // SecOC call-site timing (RuntimeCounters::secoc_*_ns)
  someip::ServiceConfig svc;
  svc.service_id = kService;
  svc.instance_id = kInstance;
  svc.udp_port = kServicePort;
  for (int i = 0; i < n; ++i) svc.methods.push_back({answer_method(i), true});
  svc.methods.push_back({kKeyRequest, false});
  svc.methods.push_back({kKeyConfirm, false});
  someip::EventConfig ev;
  ev.event_id = kEvent;
  ev.eventgroups = {kEventgroup};
  svc.events = {ev};
  someip::EventgroupConfig eg;
  eg.eventgroup_id = kEventgroup;
  if (options_.multicast) {
    eg.multicast = someip::Endpoint{someip::IpAddress::v4(239, 0, 0, 1), layout::kMulticastPort, someip::L4Proto::kUdp};
    eg.multicast_threshold = 1;
  }
  svc.eventgroups = {eg};
  pc.services = {svc};

  // The SOME/IP nodes, each from the node builder: runtime over a
  // SimTransport on its host, the host's SecY (hybrid), and when secured a
  // SecOC engine (vendor profile, one CMAC-AES-256 key group, memory state)
  // with its bindings. Keys come later (establish_keys). Receivers need a
  // sync channel in their configuration; no sync message is sent in these
  // scenarios (freshness is provisioned in establish_keys). The Mode B
  // methods run before any SecOC key exists and are authenticated by the
  // handshake itself (RSA-OAEP, certificates, nonces): listed as
  // deliberately unprotected ids of the SecOC service.
  auto build_node = [&](std::size_t k, someip::RuntimeConfig cfg, std::uint64_t rnd_seed,
                        std::optional<std::pair<secoc::EngineConfig, someip::SecocBindings>> secoc) {
    node::StackSpec spec;
    spec.runtime = std::move(cfg);
    spec.seed = rnd_seed;
    spec.transport = node::SimTransportSpec{&im.sim, nodes[k].first->host.get()};
    spec.macsec = std::move(host_macsec[k]);
    if (secoc) {
      node::SecocSpec sc;
      sc.engine = std::move(secoc->first);
      sc.bindings = std::move(secoc->second);
      sc.bindings.unprotected = {{kService, kInstance, kKeyRequest}, {kService, kInstance, kKeyConfirm}};
      spec.secoc = std::move(sc);
    }
    nodes[k].first->stack = node::build_stack(std::move(spec));
  };
  auto secoc_of = [&](secoc::EngineConfig e, someip::SecocBindings b)
      -> std::optional<std::pair<secoc::EngineConfig, someip::SecocBindings>> {
    if (!secured) return std::nullopt;
    return std::make_pair(std::move(e), std::move(b));
  };
  build_node(0, pc, options_.seed * 7919 + 1,
             secoc_of(layout::publisher_engine_config(n), layout::publisher_bindings(n)));
  for (int i = 0; i < n; ++i) {
    someip::RuntimeConfig sc;
    sc.name = "subscriber-" + std::to_string(i + 1);
    sc.client_id = subscriber_client_id(i);
    sc.client_port = kClientPort;
    sc.sd_timing = timing;
    sc.max_message_size = max_message;
    sc.cost_clock = &im.real_clock;
    someip::ClientConfig cl;
    cl.service_id = kService;
    cl.instance_id = kInstance;
    cl.udp_port = kSubscriberPort;
    cl.eventgroups = {kEventgroup};
    sc.clients = {cl};
    build_node(static_cast<std::size_t>(i) + 1, sc, options_.seed * 7919 + 2 + static_cast<std::uint64_t>(i),
               secoc_of(layout::subscriber_engine_config(i), layout::subscriber_bindings(i)));
  }
  // The load host has no SOME/IP node; in the hybrid scenarios its link is
  // secured like the others.
  if (im.load && host_macsec.back()) {
    im.load->load_secy = std::make_unique<macsec::MacsecLink>(node::make_secy(*host_macsec.back()));
  }

  // Links: through a shim over the host's SecY and the switch port's SecY
  // (hybrid), or straight to the segment.
  for (auto& [node, index] : nodes) {
    (void)index;
    if (options_.security == Security::kHybrid) {
      node->shim = std::make_unique<net::FrameShim>(macsec::make_sim_shim(*node->host_link()));
      node->port = im.segment.add_port(options_.link, node->shim.get());
      node->shim->connect(&im.segment.sender(node->port), node->host.get());
      node->host->connect(node->shim.get());
      im.ports.bind(node->port, node->switch_secy.get());
      im.segment.set_port_processor(node->port, &im.ports);
    } else {
      node->port = node->host->attach(im.segment, options_.link);
    }
    node->owner = im.segment.endpoint_owner(node->port);
  }
  for (auto& [a, ia] : nodes) {
    for (auto& [b, ib] : nodes) {
      if (a != b) a->host->add_static_arp(b->host->config().ip, b->host->config().mac);
    }
  }

  // Application handlers: subscribers echo the event back on their method;
  // the publisher counts the answers of the current iteration.
  im.payload.assign(options_.payload_bytes, 0);
  im.answer_buf.assign(static_cast<std::size_t>(n), std::vector<std::uint8_t>(options_.payload_bytes));
  auto sequence_of = [](ByteSpan p) -> std::uint32_t {
    if (p.size() < 4) return 0xFFFFFFFFu;
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
  };
  for (int i = 0; i < n; ++i) {
    auto& node = im.subscribers[static_cast<std::size_t>(i)];
    someip::Runtime* rt = node.runtime();
    node.runtime()->on_event(kService, kEvent, [this, i, rt, sequence_of](const someip::Notification& ev) {
      auto& s = *impl_;
      ++s.delivered;
      if (sequence_of(ev.payload) != s.current) return;
      ++s.events_seen;
      s.t_last_event = monotonic_ns();
      s.m_last_event = std::max(s.m_last_event, s.sim.model_time_at(s.t_last_event));
      auto& buf = s.answer_buf[static_cast<std::size_t>(i)];
      buf.assign(ev.payload.begin(), ev.payload.end());
      (void)rt->fire_and_forget(kService, kInstance, answer_method(i), buf).ok();
    });
    check(im.publisher.runtime()
              ->set_method_handler(kService, kInstance, answer_method(i),
                                   [this, sequence_of](const someip::Request& req, someip::Reply&) {
                                     auto& s = *impl_;
                                     if (sequence_of(req.payload) != s.current) return;
                                     ++s.answers;
                                     s.t_last_answer = monotonic_ns();
                                     s.m_last_answer =
                                         std::max(s.m_last_answer, s.sim.model_time_at(s.t_last_answer));
                                   })
              .ok(),
          "answer handler");
  }
  if (im.load) {
    check(im.load->host->bind(kLoadPort, [](const net::UdpDatagram&) {}).ok(), "load port");
    const double bits = static_cast<double>(options_.background_datagram + 42) * 8.0;
    im.load_interval = Duration::nanoseconds(static_cast<std::int64_t>(bits / (options_.background_mbps * 1e6) * 1e9));
    im.load_payload.assign(options_.background_datagram, 0xBE);
  }
}

Testbed::~Testbed() = default;

net::Segment& Testbed::segment() { return impl_->segment; }
net::Simulator& Testbed::simulator() { return impl_->sim; }

void Testbed::idle(Duration d) { impl_->sim.run_for(d); }

void Testbed::start() {
  auto& im = *impl_;
  const int n = options_.subscribers;
  for (auto* node : im.all_nodes()) {
    // On the node's CPU, so the timers it arms are its own.
    net::Simulator::CpuScope cpu(im.sim, node->owner);
    if (node->runtime()) check(node->runtime()->start().ok(), "runtime start");
  }
  // Service discovery: every subscriber sees the offer and is subscribed.
  const TimePoint deadline = im.sim.now() + Duration::seconds(10);
  while (im.sim.now() < deadline) {
    im.sim.run_for(Duration::milliseconds(5));
    bool ready = im.publisher.runtime()->subscriber_count(kService, kInstance, kEventgroup) == static_cast<std::size_t>(n);
    for (auto& s : im.subscribers) ready = ready && s.runtime()->available(kService, kInstance);
    if (ready) break;
  }
  check(im.publisher.runtime()->subscriber_count(kService, kInstance, kEventgroup) == static_cast<std::size_t>(n),
        "service discovery did not subscribe every subscriber within 10 s of simulated time");
  // Let the subscription acknowledgements (and multicast joins) settle.
  im.sim.run_for(Duration::milliseconds(50));

  if (options_.security != Security::kNone) establish_keys();
  if (im.load) im.schedule_load();
}

void Testbed::establish_keys() {
  auto& im = *impl_;
  const int n = options_.subscribers;
  const std::uint32_t key_id_hint = 1;
  std::vector<SecretBytes> sub_keys(static_cast<std::size_t>(n));
  std::uint32_t key_id = key_id_hint;
  SecretBytes pub_key;

  if (options_.keys == KeyDistribution::kPsk) {
    // Provisioned before start (as a flashed or out-of-band key would be).
    pub_key = random_key(32);
    for (auto& k : sub_keys) k = pub_key.clone();
  } else {
    const std::int64_t t0 = monotonic_ns();
    std::unique_ptr<kex::GroupKeyManager> group;
    std::vector<std::unique_ptr<kex::GroupMember>> members;
    kex::GroupKeyConfig gcfg;
    gcfg.service_id = kService;
    gcfg.eventgroup_id = kEventgroup;
    if (options_.keys == KeyDistribution::kGroupModeB) {
      auto g = kex::GroupKeyManager::create(gcfg, im.sim.now());
      check(g.ok(), "group key manager");
      group = std::move(g).value();
      for (int i = 0; i < n; ++i) {
        check(group->join("subscriber-" + std::to_string(i + 1), SecretBytes{}, im.sim.now()).ok(), "group join");
      }
      pub_key = group->current_key().clone();
      key_id = group->current_key_id();
    } else {
      pub_key = random_key(32);  // the publisher's fresh session key
    }
    kex::ModeBConfig mb;
    mb.kem = kex::KemScheme::kRsa2048;
    // Handshake state shared with the callbacks (a response or a pending
    // event may outlive this function on a failure path).
    struct Handshakes {
      std::unique_ptr<kex::ModeBPublisher> publisher;
      std::vector<std::unique_ptr<kex::ModeBSubscriber>> subscribers;
      std::vector<SecretBytes> keys;
      SecretBytes session_key;
      std::uint32_t key_id = 0;
      int activated = 0;
      int confirmed = 0;
      bool failed = false;
      std::string failure;
    };
    auto hs = std::make_shared<Handshakes>();
    auto publisher = kex::ModeBPublisher::create(mb, credentials_->publisher(), credentials_->trust());
    check(publisher.ok(), "Mode B publisher");
    hs->publisher = std::move(publisher).value();
    hs->session_key = pub_key.clone();
    hs->key_id = key_id;
    hs->keys.resize(static_cast<std::size_t>(n));
    net::Simulator* sim = &im.sim;
    check(im.publisher.runtime()
              ->set_method_handler(kService, kInstance, kKeyRequest,
                                   [hs, sim](const someip::Request& req, someip::Reply& reply) {
                                     auto acc = hs->publisher->on_request(req.payload, sim->now());
                                     if (!acc.ok()) {
                                       reply.code = someip::ReturnCode::kNotOk;
                                       hs->failure = "KeyRequest refused: " + std::string(kex::to_string(acc.error()));
                                       return;
                                     }
                                     auto d = hs->publisher->deliver(acc->handle, hs->session_key, hs->key_id, sim->now());
                                     if (!d.ok()) {
                                       reply.code = someip::ReturnCode::kNotOk;
                                       hs->failure = "deliver: " + std::string(kex::to_string(d.error()));
                                       return;
                                     }
                                     reply.payload = std::move(d).value();
                                   })
              .ok(),
          "KeyRequest handler");
    check(im.publisher.runtime()
              ->set_method_handler(kService, kInstance, kKeyConfirm,
                                   [hs, sim](const someip::Request& req, someip::Reply& reply) {
                                     auto k = hs->publisher->on_confirm(req.payload, sim->now());
                                     if (!k.ok()) {
                                       reply.code = someip::ReturnCode::kNotOk;
                                       hs->failure = "KeyConfirm refused: " + std::string(kex::to_string(k.error()));
                                       return;
                                     }
                                     ++hs->activated;
                                   })
              .ok(),
          "KeyConfirm handler");
    for (int i = 0; i < n; ++i) {
      auto sub = kex::ModeBSubscriber::create(mb, credentials_->subscriber(i), credentials_->trust());
      check(sub.ok(), "Mode B subscriber");
      hs->subscribers.push_back(std::move(sub).value());
    }
    for (int i = 0; i < n; ++i) {
      kex::ModeBSubscriber* sub = hs->subscribers[static_cast<std::size_t>(i)].get();
      someip::Runtime* rt = im.subscribers[static_cast<std::size_t>(i)].runtime();
      auto request = sub->start(kService, kEventgroup, im.sim.now());
      check(request.ok(), "KeyRequest");
      net::Simulator::CpuScope cpu(im.sim, im.subscribers[static_cast<std::size_t>(i)].owner);
      auto sent = rt->request(
          kService, kInstance, kKeyRequest, *request,
          [hs, sim, sub, rt, i](const someip::ResponseResult& r) {
            if (r.code != someip::ReturnCode::kOk) {
              hs->failed = true;
              return;
            }
            auto confirm = sub->on_delivery(r.payload, sim->now());
            if (!confirm.ok()) {
              hs->failed = true;
              hs->failure = "KeyDelivery refused: " + std::string(kex::to_string(confirm.error()));
              return;
            }
            hs->keys[static_cast<std::size_t>(i)] = sub->take_key();
            auto c = std::make_shared<std::vector<std::uint8_t>>(std::move(confirm).value());
            // Send the confirmation from a fresh simulator event, not from
            // inside the response callback.
            sim->schedule_in(Duration::zero(), [hs, rt, c] {
              auto s2 = rt->request(kService, kInstance, kKeyConfirm, *c, [hs](const someip::ResponseResult& r2) {
                if (r2.code == someip::ReturnCode::kOk) {
                  ++hs->confirmed;
                } else {
                  hs->failed = true;
                }
              });
              if (!s2.ok()) hs->failed = true;
            });
          },
          Duration::seconds(5));
      check(sent.ok(), "KeyRequest send");
    }
    const TimePoint deadline = im.sim.now() + Duration::seconds(10);
    while (!hs->failed && (hs->confirmed < n || hs->activated < n)) {
      const auto next = im.sim.next_event_time();
      if (!next || *next > deadline) break;
      im.sim.step();
    }
    (void)im.publisher.runtime()->set_method_handler(kService, kInstance, kKeyRequest, {}).ok();
    (void)im.publisher.runtime()->set_method_handler(kService, kInstance, kKeyConfirm, {}).ok();
    check(!hs->failed && hs->confirmed == n && hs->activated == n,
          "Mode B key establishment failed" + (hs->failure.empty() ? std::string() : ": " + hs->failure));
    for (int i = 0; i < n; ++i) sub_keys[static_cast<std::size_t>(i)] = std::move(hs->keys[static_cast<std::size_t>(i)]);
    if (group) {
      for (int i = 0; i < n; ++i) {
        auto m = std::make_unique<kex::GroupMember>(gcfg, "subscriber-" + std::to_string(i + 1), SecretBytes{});
        check(m->install(key_id, sub_keys[static_cast<std::size_t>(i)], im.sim.now()).ok(), "group member install");
        members.push_back(std::move(m));
      }
    }
    establishment_ns_ = monotonic_ns() - t0;
  }

  // Install the keys and provision the receivers' freshness state to the
  // senders' current epoch (no sync messages run in these scenarios). Keys
  // are installed at the simulator's now (the SimTransport's clock).
  check(im.publisher.stack->install_key(0, key_id, pub_key).ok(), "publisher key");
  for (int i = 0; i < n; ++i) {
    auto& node = im.subscribers[static_cast<std::size_t>(i)];
    check(node.stack->install_key(0, key_id, sub_keys[static_cast<std::size_t>(i)]).ok(), "subscriber key");
  }
  auto provision = [](secoc::Engine& tx, std::uint32_t tx_pdu, secoc::Engine& rx, std::uint32_t rx_pdu) {
    auto c = tx.next_tx_freshness(tx_pdu);
    c.msg -= 1;
    check(rx.set_rx_freshness(rx_pdu, c), "freshness provisioning");
  };
  for (int i = 0; i < n; ++i) {
    auto& node = im.subscribers[static_cast<std::size_t>(i)];
    provision(*im.publisher.engine(), 0, *node.engine(), 0);
    provision(*node.engine(), 0, *im.publisher.engine(), static_cast<std::uint32_t>(i));
  }
}

IterationSample Testbed::run_iteration(std::uint32_t sequence, Duration timeout) {
  auto& im = *impl_;
  IterationSample out;
  const int n = options_.subscribers;
  im.current = sequence;
  im.answers = 0;
  im.events_seen = 0;
  if (im.payload.size() >= 4) {
    im.payload[0] = static_cast<std::uint8_t>(sequence >> 24);
    im.payload[1] = static_cast<std::uint8_t>(sequence >> 16);
    im.payload[2] = static_cast<std::uint8_t>(sequence >> 8);
    im.payload[3] = static_cast<std::uint8_t>(sequence);
  }
  const TimePoint deadline = im.sim.now() + timeout;
  const auto [secoc_ns0, secoc_ops0] = im.secoc_totals();
  // The serial clock starts before the model window's first work, so the
  // model figures cannot exceed the serial ones.
  im.t_start = monotonic_ns();
  im.m_start = im.sim.begin_model_window();
  im.m_last_event = im.m_start;
  im.m_last_answer = im.m_start;
  bool sent = false;
  {
    // notify() runs outside step(): charge it to the publisher's CPU.
    net::Simulator::CpuScope cpu(im.sim, im.publisher.owner);
    sent = im.publisher.runtime()->notify(kService, kInstance, kEvent, im.payload).ok();
  }
  if (!sent) return out;
  while (im.answers < n) {
    const auto next = im.sim.next_event_time();
    if (!next || *next > deadline) break;
    im.sim.step();
  }
  if (im.answers < n) return out;
  out.completed = true;
  out.round_trip_ns = im.t_last_answer - im.t_start;
  out.one_way_ns = im.t_last_event - im.t_start;
  out.model_round_trip_ns = im.m_last_answer - im.m_start;
  out.model_one_way_ns = im.m_last_event - im.m_start;
  const auto [secoc_ns1, secoc_ops1] = im.secoc_totals();
  out.secoc_ns = secoc_ns1 - secoc_ns0;
  out.secoc_ops = secoc_ops1 - secoc_ops0;
  return out;
}

std::uint64_t Testbed::security_rejections() const {
  auto& im = *impl_;
  std::uint64_t total = 0;
  for (auto* n : im.all_nodes()) {
    if (n->runtime()) total += n->runtime()->counters().secoc_rejected;
    for (const auto* l : {n->host_link(), n->switch_secy.get()}) {
      if (!l) continue;
      total += l->stats().rx_dropped + l->stats().rx_unverified + l->stats().rx_not_macsec;
    }
  }
  return total;
}

std::uint64_t Testbed::notifications_delivered() const { return impl_->delivered; }

std::uint64_t Testbed::frames_on_wire() const {
  std::uint64_t total = 0;
  for (net::PortId p = 0; p < impl_->segment.port_count(); ++p) total += impl_->segment.port_stats(p).tx_frames;
  return total;
}

}  // namespace layersec::harness
