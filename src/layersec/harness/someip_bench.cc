#include "layersec/harness/someip_bench.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <openssl/rand.h>

#include "layersec/harness/dtls_fanout.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/io.h"
#include "layersec/net/netns.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/net/udp_socket.h"
#include "layersec/secoc/config.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/sim_transport.h"
#include "layersec/someip/socket_transport.h"

namespace layersec::harness {

const char* to_string(SomeipTopology t) { return t == SomeipTopology::kSim ? "sim" : "netns"; }

namespace {

using someip::Runtime;
using someip::RuntimeConfig;

// --- configuration shared by both topologies --------------------------------------

someip::SdTiming fast_sd() {
  someip::SdTiming t;
  t.initial_delay_min = Duration::milliseconds(0);
  t.initial_delay_max = Duration::milliseconds(10);
  return t;
}

someip::ServiceConfig service(std::uint16_t id, std::uint16_t port) {
  someip::ServiceConfig s;
  s.service_id = id;
  s.instance_id = kBenchInstance;
  s.major_version = 1;
  s.udp_port = port;
  s.methods = {someip::MethodConfig{kBenchMethod, false}};
  someip::EventConfig e;
  e.event_id = kBenchEvent;
  e.eventgroups = {kBenchEventgroup};
  s.events = {e};
  someip::EventgroupConfig g;
  g.eventgroup_id = kBenchEventgroup;
  s.eventgroups = {g};
  return s;
}

RuntimeConfig server_config() {
  RuntimeConfig c;
  c.name = "bench-server";
  c.client_id = 0x0200;
  c.client_port = 30502;
  c.sd_timing = fast_sd();
  c.services = {service(kPlainService, kPlainPort), service(kSecuredService, kSecuredPort)};
  return c;
}

RuntimeConfig client_config() {
  RuntimeConfig c;
  c.name = "bench-client";
  c.client_id = 0x0101;
  c.client_port = kClientPort;
  c.sd_timing = fast_sd();
  for (std::uint16_t s : {kPlainService, kSecuredService}) {
    someip::ClientConfig cl;
    cl.service_id = s;
    cl.instance_id = kBenchInstance;
    cl.eventgroups = {kBenchEventgroup};
    c.clients.push_back(cl);
  }
  return c;
}

// SecOC PDU ids (the same ids on both nodes; data ids distinguish them).
constexpr std::uint32_t kRequestPdu = 1;
constexpr std::uint32_t kResponsePdu = 2;
constexpr std::uint32_t kEventPdu = 3;
constexpr std::uint16_t kClientSenderId = 0x0101;
constexpr std::uint16_t kServerSenderId = 0x0200;

std::uint16_t data_id(std::uint32_t pdu) { return static_cast<std::uint16_t>(0x0100 + pdu); }

// Engine configuration of one node: `tx` and `rx` PDUs, all with the vendor
// profile in one CMAC-AES256 key group. A sync channel is configured because
// the engine requires one for FV-carrying Rx PDUs; receivers are provisioned
// instead (see the header), and no node transmits sync messages.
secoc::EngineConfig engine_config(std::uint16_t sender_id, std::uint16_t peer_sender_id,
                                  const std::vector<std::uint32_t>& tx, const std::vector<std::uint32_t>& rx) {
  secoc::EngineConfig c;
  c.sender_id = sender_id;
  c.key_groups = {{"bench", secoc::AuthAlgorithm::kCmacAes256}};
  // Provisioned, never synced: explicitly without a time bound (maxAge 0).
  c.sync_rx = {{0, 0xFF00, 0, 64, Duration::seconds(1), Duration::zero()}};
  const secoc::PduProfile vendor = secoc::profile_by_name("vendor", c.trip_bits, c.reset_bits, "$");
  for (auto id : tx) {
    secoc::TxPduConfig t;
    t.id = id;
    t.data_id = data_id(id);
    t.profile = vendor;
    t.key_group = 0;
    c.tx_pdus.push_back(t);
  }
  for (auto id : rx) {
    secoc::RxPduConfig r;
    r.id = id;
    r.data_id = data_id(id);
    r.profile = vendor;
    r.key_group = 0;
    r.mode = secoc::FreshnessMode::kStrict;
    r.window = secoc::kDefaultWindow;
    r.sync_channel = 0;
    r.has_sync_channel = true;
    r.sender_id = peer_sender_id;
    c.rx_pdus.push_back(r);
  }
  return c;
}

// The two nodes' engines, keyed with one random key and provisioned.
struct SecocPair {
  secoc::MemoryStateStore client_store;
  secoc::MemoryStateStore server_store;
  std::unique_ptr<secoc::Engine> client;
  std::unique_ptr<secoc::Engine> server;

  SecocPair() {
    auto c = secoc::Engine::start(engine_config(kClientSenderId, kServerSenderId, {kRequestPdu},
                                                {kResponsePdu, kEventPdu}),
                                  client_store);
    auto s = secoc::Engine::start(engine_config(kServerSenderId, kClientSenderId, {kResponsePdu, kEventPdu},
                                                {kRequestPdu}),
                                  server_store);
    if (!c.ok() || !s.ok()) throw std::runtime_error("bench someip: SecOC engine start failed");
    client = std::move(c).value();
    server = std::move(s).value();
    SecretBytes key(secoc::key_size(secoc::AuthAlgorithm::kCmacAes256));
    if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1)
      throw std::runtime_error("bench someip: RAND_bytes failed");
    for (auto* e : {client.get(), server.get()})
      if (!e->install_key(0, 1, key, TimePoint{}).ok())
        throw std::runtime_error("bench someip: SecOC key installation failed");
    provision(*client, *server, kRequestPdu);
    provision(*server, *client, kResponsePdu);
    provision(*server, *client, kEventPdu);
  }

  static void provision(const secoc::Engine& tx, secoc::Engine& rx, std::uint32_t pdu) {
    secoc::FreshnessCounters f = tx.next_tx_freshness(pdu);
    f.msg -= 1;  // the receiver has "accepted" the counter before the first one sent
    if (!rx.set_rx_freshness(pdu, f)) throw std::runtime_error("bench someip: SecOC provisioning failed");
  }
};

someip::SecocBindings client_bindings() {
  someip::SecocBindings b;
  b.sd_unprotected = true;  // SD is outside what this bench measures (explicit)
  b.messages = {{kSecuredService, kBenchInstance, kBenchMethod, kRequestPdu, kResponsePdu},
                {kSecuredService, kBenchInstance, kBenchEvent, std::nullopt, kEventPdu}};
  return b;
}

someip::SecocBindings server_bindings() {
  someip::SecocBindings b;
  b.sd_unprotected = true;  // SD is outside what this bench measures (explicit)
  b.messages = {{kSecuredService, kBenchInstance, kBenchMethod, kResponsePdu, kRequestPdu},
                {kSecuredService, kBenchInstance, kBenchEvent, kEventPdu, std::nullopt}};
  return b;
}

std::uint16_t service_of(bool secured) { return secured ? kSecuredService : kPlainService; }

bool same(ByteSpan a, ByteSpan b) { return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0; }

bool ready(const Runtime& client, const Runtime& server) {
  for (std::uint16_t s : {kPlainService, kSecuredService})
    if (!client.available(s, kBenchInstance) || server.subscriber_count(s, kBenchInstance, kBenchEventgroup) == 0)
      return false;
  return true;
}

// One exchange in progress; handlers of earlier (timed-out) exchanges carry an
// older id and are ignored.
struct Exchange {
  std::uint64_t id = 0;
  bool done = false;
  bool intact = false;
  std::int64_t t1 = 0;
  std::int64_t t0 = 0;  // events on netns: the server's send time from the payload
  std::vector<std::uint8_t> expect;
};

// One timed request/response on either bed: `bed` has an Exchange `x`,
// begin(payload) and drive() (runs its network until x.done or the timeout).
template <class Bed>
std::optional<std::int64_t> timed_round_trip(Bed& bed, someip::Runtime& client, std::uint16_t service,
                                             ByteSpan payload) {
  bed.begin(payload);
  const std::uint64_t id = bed.x.id;
  const std::int64_t t0 = monotonic_ns();
  auto r = client.request(service, kBenchInstance, kBenchMethod, payload,
                          [&bed, id](const someip::ResponseResult& res) {
                            if (id != bed.x.id) return;
                            bed.x.t1 = monotonic_ns();
                            bed.x.intact = res.code == someip::ReturnCode::kOk && same(res.payload, bed.x.expect);
                            bed.x.done = true;
                          });
  if (!r.ok()) return std::nullopt;
  if (!bed.drive() || !bed.x.intact) return std::nullopt;
  return bed.x.t1 - t0;
}

}  // namespace

// --- sim bed -------------------------------------------------------------------------

struct SomeipSimBed::Impl {
  SomeipBedOptions o;
  net::Simulator sim{1};
  net::Segment segment{sim};
  std::unique_ptr<net::SimHost> client_host;
  std::unique_ptr<net::SimHost> server_host;
  std::unique_ptr<someip::SimTransport> client_tr;
  std::unique_ptr<someip::SimTransport> server_tr;
  someip::SeededRandom client_rnd{11};
  someip::SeededRandom server_rnd{12};
  SecocPair secoc;
  std::unique_ptr<Runtime> client;
  std::unique_ptr<Runtime> server;
  Exchange x;
  std::uint64_t rejections = 0;

  static net::Ipv4Address ip(std::uint8_t i) { return net::Ipv4Address::from_octets(10, 0, 0, i); }

  explicit Impl(SomeipBedOptions opt) : o(opt) {
    client_host = std::make_unique<net::SimHost>(sim, net::SimHostConfig{net::MacAddress::local(1), ip(1)});
    server_host = std::make_unique<net::SimHost>(sim, net::SimHostConfig{net::MacAddress::local(2), ip(2)});
    client_host->attach(segment);
    server_host->attach(segment);
    client_tr = std::make_unique<someip::SimTransport>(sim, *client_host);
    server_tr = std::make_unique<someip::SimTransport>(sim, *server_host);
    client = std::make_unique<Runtime>(client_config(), *client_tr, client_rnd);
    server = std::make_unique<Runtime>(server_config(), *server_tr, server_rnd);
    client->attach_secoc(*secoc.client, client_bindings());
    server->attach_secoc(*secoc.server, server_bindings());
    for (Runtime* rt : {client.get(), server.get()})
      rt->on_rejection([this](const someip::SecurityRejection&) { ++rejections; });
    for (bool secured : {false, true}) {
      const auto svc = service_of(secured);
      if (!server->set_method_handler(svc, kBenchInstance, kBenchMethod,
                                      [](const someip::Request& rq, someip::Reply& rp) {
                                        rp.payload.assign(rq.payload.begin(), rq.payload.end());
                                      })
               .ok())
        throw std::runtime_error("bench someip: set_method_handler failed");
      client->on_event(svc, kBenchEvent, [this](const someip::Notification& n) {
        x.t1 = monotonic_ns();
        x.intact = same(n.payload, x.expect);
        x.done = true;
      });
    }
    // udp-bare: an echo port on the server host, a client port.
    if (!server_host
             ->bind(kEchoPort,
                    [this](const net::UdpDatagram& d) {
                      server_host->send_to(kEchoPort, d.src, d.payload).ignore();
                    })
             .ok() ||
        !client_host
             ->bind(kEchoClientPort,
                    [this](const net::UdpDatagram& d) {
                      x.t1 = monotonic_ns();
                      x.intact = same(d.payload, x.expect);
                      x.done = true;
                    })
             .ok())
      throw std::runtime_error("bench someip: sim UDP echo ports");
  }

  ~Impl() {
    client.reset();
    server.reset();
    client_tr.reset();
    server_tr.reset();
  }

  // Runs simulator events until the exchange completes or nothing is due
  // within the (simulated) timeout.
  bool drive() {
    const TimePoint end = sim.now() + o.timeout;
    while (!x.done) {
      auto next = sim.next_event_time();
      if (!next || *next > end) return false;
      sim.step();
    }
    return true;
  }

  void begin(ByteSpan payload) {
    ++x.id;
    x.done = false;
    x.intact = false;
    x.expect.assign(payload.begin(), payload.end());
  }

  std::optional<std::int64_t> finish(std::int64_t t0) {
    if (!drive() || !x.intact) return std::nullopt;
    return x.t1 - t0;
  }
};

SomeipSimBed::SomeipSimBed(SomeipBedOptions options) : impl_(std::make_unique<Impl>(options)) {}
SomeipSimBed::~SomeipSimBed() = default;

void SomeipSimBed::start() {
  Impl& m = *impl_;
  if (!m.server->start().ok() || !m.client->start().ok())
    throw std::runtime_error("bench someip: sim runtime start failed");
  for (int i = 0; i < 500 && !ready(*m.client, *m.server); ++i) m.sim.run_for(Duration::milliseconds(10));
  if (!ready(*m.client, *m.server))
    throw std::runtime_error("bench someip: sim service discovery did not complete within 5 s (simulated)");
}

std::optional<std::int64_t> SomeipSimBed::udp_round_trip(ByteSpan payload) {
  Impl& m = *impl_;
  m.begin(payload);
  const std::int64_t t0 = monotonic_ns();
  if (!m.client_host->send_to(kEchoClientPort, {Impl::ip(2), kEchoPort}, payload).ok()) return std::nullopt;
  return m.finish(t0);
}

std::optional<std::int64_t> SomeipSimBed::round_trip(bool secured, ByteSpan payload) {
  return timed_round_trip(*impl_, *impl_->client, service_of(secured), payload);
}

std::optional<std::int64_t> SomeipSimBed::event_one_way(bool secured, ByteSpan payload) {
  Impl& m = *impl_;
  m.begin(payload);
  const std::int64_t t0 = monotonic_ns();
  if (!m.server->notify(service_of(secured), kBenchInstance, kBenchEvent, payload).ok()) return std::nullopt;
  return m.finish(t0);
}

someip::RuntimeCounters SomeipSimBed::client_counters() const { return impl_->client->counters(); }
someip::RuntimeCounters SomeipSimBed::server_counters() const { return impl_->server->counters(); }
std::uint64_t SomeipSimBed::security_rejections() const { return impl_->rejections; }
net::Segment& SomeipSimBed::segment() { return impl_->segment; }

// --- netns bed -------------------------------------------------------------------------

struct SomeipNetnsBed::Impl {
  SomeipBedOptions o;
  net::NetnsTopology topo;
  MonotonicClock clock;
  SecocPair secoc;
  std::atomic<std::uint64_t> rejections{0};

  // Server thread and its mailbox (eventfd wakes its loop).
  std::thread server_thread;
  std::atomic<bool> stop{false};
  net::UniqueFd wake;
  enum class Cmd : std::uint8_t { kNotifyPlain, kNotifySecured, kSnapshot };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<Cmd, std::vector<std::uint8_t>>> cmds;
  someip::RuntimeCounters server_snapshot;
  std::uint64_t snapshots = 0;

  // Client side (the caller's thread, inside the client namespace).
  std::optional<net::NetnsScope> scope;
  std::unique_ptr<net::EventLoop> loop;
  std::unique_ptr<someip::SocketTransport> client_tr;
  someip::SeededRandom client_rnd{21};
  std::unique_ptr<Runtime> client;
  std::optional<net::UdpSocket> echo_client;
  std::vector<std::uint8_t> rx_buf = std::vector<std::uint8_t>(65536);
  Exchange x;

  explicit Impl(SomeipBedOptions opt) : o(opt), topo(net::NetnsTopology::pair("lsbench")) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) throw std::runtime_error("bench someip: eventfd: " + net::errno_text(errno));
    wake = net::UniqueFd(fd);
  }

  ~Impl() {
    client.reset();
    client_tr.reset();
    echo_client.reset();
    loop.reset();
    stop_server();
    scope.reset();  // back to our namespace before the topology is deleted
  }

  void poke() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake.get(), &one, sizeof one);
  }

  void stop_server() {
    if (!server_thread.joinable()) return;
    stop = true;
    poke();
    server_thread.join();
  }

  void post(Cmd c, ByteSpan payload) {
    {
      std::lock_guard<std::mutex> l(mu);
      cmds.emplace_back(c, std::vector<std::uint8_t>(payload.begin(), payload.end()));
    }
    poke();
  }

  // The server node: runs entirely on its own thread, inside node 1's namespace.
  void server_main(std::promise<std::string>& started) {
    bool announced = false;
    try {
      net::NetnsScope ns(topo.node(1).netns);
      net::EventLoop sloop(clock);
      someip::SocketTransport tr(sloop, topo.node(1).ip);
      someip::SeededRandom rnd(22);
      Runtime rt(server_config(), tr, rnd);
      rt.attach_secoc(*secoc.server, server_bindings());
      rt.on_rejection([this](const someip::SecurityRejection&) { ++rejections; });
      for (bool secured : {false, true}) {
        if (!rt.set_method_handler(service_of(secured), kBenchInstance, kBenchMethod,
                                   [](const someip::Request& rq, someip::Reply& rp) {
                                     rp.payload.assign(rq.payload.begin(), rq.payload.end());
                                   })
                 .ok())
          throw std::runtime_error("set_method_handler failed");
      }
      net::UdpSocketOptions eo;
      int err = 0;
      auto echo = net::UdpSocket::open({topo.node(1).ip, kEchoPort}, eo, &err);
      if (!echo.ok()) throw std::runtime_error("echo socket: " + net::errno_text(err));
      std::vector<std::uint8_t> buf(65536);
      sloop.watch(echo->fd(), POLLIN, [&](short) {
        for (;;) {
          auto r = echo->receive(buf);
          if (!r.ok()) break;
          echo->send_to(r->src, ByteSpan(buf.data(), r->size)).ignore();
        }
      });
      std::vector<std::uint8_t> ev;
      sloop.watch(wake.get(), POLLIN, [&](short) {
        std::uint64_t v = 0;
        [[maybe_unused]] const auto n = ::read(wake.get(), &v, sizeof v);
        for (;;) {
          Cmd c{};
          {
            std::lock_guard<std::mutex> l(mu);
            if (cmds.empty()) break;
            c = cmds.front().first;
            ev.swap(cmds.front().second);
            cmds.pop_front();
          }
          if (c == Cmd::kSnapshot) {
            std::lock_guard<std::mutex> l(mu);
            server_snapshot = rt.counters();
            ++snapshots;
            cv.notify_all();
            continue;
          }
          // The send time travels in the first 8 bytes (same machine, same
          // CLOCK_MONOTONIC in every namespace).
          const std::int64_t t0 = monotonic_ns();
          for (std::size_t i = 0; i < 8 && i < ev.size(); ++i)
            ev[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(t0) >> (56 - 8 * i));
          rt.notify(c == Cmd::kNotifySecured ? kSecuredService : kPlainService, kBenchInstance, kBenchEvent, ev)
              .ignore();
        }
      });
      if (!rt.start().ok()) throw std::runtime_error("server runtime start failed");
      started.set_value("");
      announced = true;
      while (!stop) sloop.run_until([this] { return stop.load(); }, sloop.now() + Duration::milliseconds(50));
      rt.stop();
      sloop.run_until(sloop.now() + Duration::milliseconds(5));
    } catch (const std::exception& e) {
      if (!announced) started.set_value(e.what());
    }
  }

  bool drive() {
    return loop->run_until([this] { return x.done; }, loop->now() + o.timeout);
  }

  void begin(ByteSpan payload) {
    ++x.id;
    x.done = false;
    x.intact = false;
    x.expect.assign(payload.begin(), payload.end());
  }
};

SomeipNetnsBed::SomeipNetnsBed(SomeipBedOptions options) : impl_(std::make_unique<Impl>(options)) {}
SomeipNetnsBed::~SomeipNetnsBed() = default;

void SomeipNetnsBed::start() {
  Impl& m = *impl_;
  std::promise<std::string> started;
  auto fut = started.get_future();
  m.server_thread = std::thread([&m, &started] { m.server_main(started); });
  const std::string err = fut.get();
  if (!err.empty()) {
    m.server_thread.join();
    throw std::runtime_error("bench someip: netns server: " + err);
  }
  // The client side lives in node 0's namespace for the bed's lifetime.
  m.scope.emplace(m.topo.node(0).netns);
  m.loop = std::make_unique<net::EventLoop>(m.clock);
  m.client_tr = std::make_unique<someip::SocketTransport>(*m.loop, m.topo.node(0).ip);
  m.client = std::make_unique<Runtime>(client_config(), *m.client_tr, m.client_rnd);
  m.client->attach_secoc(*m.secoc.client, client_bindings());
  m.client->on_rejection([&m](const someip::SecurityRejection&) { ++m.rejections; });
  for (bool secured : {false, true}) {
    m.client->on_event(service_of(secured), kBenchEvent, [&m](const someip::Notification& n) {
      const std::int64_t t1 = monotonic_ns();
      if (n.payload.size() != m.x.expect.size() || n.payload.size() < 8) return;
      std::uint64_t t0 = 0;
      for (std::size_t i = 0; i < 8; ++i) t0 = (t0 << 8) | n.payload[i];
      m.x.t0 = static_cast<std::int64_t>(t0);
      m.x.t1 = t1;
      m.x.intact = std::memcmp(n.payload.data() + 8, m.x.expect.data() + 8, n.payload.size() - 8) == 0;
      m.x.done = true;
    });
  }
  net::UdpSocketOptions eo;
  int e = 0;
  auto sock = net::UdpSocket::open({m.topo.node(0).ip, kEchoClientPort}, eo, &e);
  if (!sock.ok()) throw std::runtime_error("bench someip: netns echo client socket: " + net::errno_text(e));
  m.echo_client.emplace(std::move(sock).value());
  m.loop->watch(m.echo_client->fd(), POLLIN, [&m](short) {
    for (;;) {
      auto r = m.echo_client->receive(m.rx_buf);
      if (!r.ok()) break;
      m.x.t1 = monotonic_ns();
      m.x.intact = same(ByteSpan(m.rx_buf.data(), r->size), m.x.expect);
      m.x.done = true;
    }
  });
  if (!m.client->start().ok()) throw std::runtime_error("bench someip: netns client runtime start failed");
  // Subscriptions are acknowledged on the server thread: poll its counters.
  const TimePoint end = m.loop->now() + Duration::seconds(5);
  while (m.loop->now() < end) {
    m.loop->run_until(m.loop->now() + Duration::milliseconds(10));
    if (m.client->available(kPlainService, kBenchInstance) && m.client->available(kSecuredService, kBenchInstance)) {
      // Subscribed when an event on each service arrives.
      bool both = true;
      std::vector<std::uint8_t> probe(16, 0);
      for (bool secured : {false, true}) both = both && event_one_way(secured, probe).has_value();
      if (both) return;
    }
  }
  throw std::runtime_error("bench someip: netns service discovery / subscription did not complete within 5 s");
}

std::optional<std::int64_t> SomeipNetnsBed::udp_round_trip(ByteSpan payload) {
  Impl& m = *impl_;
  m.begin(payload);
  const std::int64_t t0 = monotonic_ns();
  if (!m.echo_client->send_to({m.topo.node(1).ip, kEchoPort}, payload).ok()) return std::nullopt;
  if (!m.drive() || !m.x.intact) return std::nullopt;
  return m.x.t1 - t0;
}

std::optional<std::int64_t> SomeipNetnsBed::round_trip(bool secured, ByteSpan payload) {
  return timed_round_trip(*impl_, *impl_->client, service_of(secured), payload);
}

std::optional<std::int64_t> SomeipNetnsBed::event_one_way(bool secured, ByteSpan payload) {
  Impl& m = *impl_;
  if (payload.size() < 8) return std::nullopt;
  m.begin(payload);
  m.post(secured ? Impl::Cmd::kNotifySecured : Impl::Cmd::kNotifyPlain, payload);
  if (!m.drive() || !m.x.intact) return std::nullopt;
  return m.x.t1 - m.x.t0;
}

someip::RuntimeCounters SomeipNetnsBed::client_counters() const { return impl_->client->counters(); }

someip::RuntimeCounters SomeipNetnsBed::server_counters() const {
  Impl& m = *impl_;
  std::unique_lock<std::mutex> l(m.mu);
  const std::uint64_t want = m.snapshots + 1;
  l.unlock();
  m.post(Impl::Cmd::kSnapshot, {});
  l.lock();
  if (!m.cv.wait_for(l, std::chrono::seconds(2), [&] { return m.snapshots >= want; }))
    throw std::runtime_error("bench someip: netns server did not answer a counter snapshot");
  return m.server_snapshot;
}

std::uint64_t SomeipNetnsBed::security_rejections() const { return impl_->rejections; }

// --- measurement ----------------------------------------------------------------------

namespace {

std::int64_t process_cpu_ns() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (static_cast<std::int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000000LL +
         (static_cast<std::int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1000LL;
}

void set_baseline(SomeipBenchRow& r, const SomeipBenchRow& b) {
  r.baseline = b.name;
  r.baseline_mean_us = b.latency.mean;
  r.baseline_p50_us = b.latency.p50;
  r.baseline_p99_us = b.latency.p99;
  r.ratio_mean = b.latency.mean > 0 ? r.latency.mean / b.latency.mean : 0;
  r.ratio_p50 = b.latency.p50 > 0 ? r.latency.p50 / b.latency.p50 : 0;
  r.ratio_p99 = b.latency.p99 > 0 ? r.latency.p99 / b.latency.p99 : 0;
}

}  // namespace

namespace {

enum class Kind : std::uint8_t { kUdp, kRr, kEvent };

// One row being measured: its samples and totals accumulate over blocks.
struct RowRun {
  SomeipBenchRow row;
  Kind kind = Kind::kUdp;
  bool secured = false;
  std::vector<double> samples;
  std::int64_t wall_ns = 0;
  std::int64_t cpu_ns = 0;
};

RowRun make_run(const std::string& name, const std::string& topology, const SomeipBenchOptions& o) {
  RowRun r;
  if (name == "udp-bare") {
    r.kind = Kind::kUdp;
  } else if (name == "rr-unsecured" || name == "rr-secoc") {
    r.kind = Kind::kRr;
    r.secured = name == "rr-secoc";
  } else if (name == "event-unsecured" || name == "event-secoc") {
    r.kind = Kind::kEvent;
    r.secured = name == "event-secoc";
  } else {
    throw std::invalid_argument("bench someip: unknown row " + name);
  }
  r.row.name = name;
  r.row.topology = topology;
  r.row.measure = r.kind == Kind::kEvent ? "one way" : "round trip";
  r.row.iterations = o.iterations;
  r.row.payload_bytes = o.payload_bytes;
  r.samples.reserve(o.iterations);
  return r;
}

std::optional<std::int64_t> exchange(SomeipBed& bed, const RowRun& r, std::uint64_t seq,
                                     std::vector<std::uint8_t>& payload) {
  fill_payload(seq, payload);
  switch (r.kind) {
    case Kind::kUdp: return bed.udp_round_trip(payload);
    case Kind::kRr: return bed.round_trip(r.secured, payload);
    case Kind::kEvent: return bed.event_one_way(r.secured, payload);
  }
  return std::nullopt;
}

// `count` measured exchanges of one row, with its counters and CPU.
void run_block(SomeipBed& bed, RowRun& r, std::size_t count, std::uint64_t& seq,
               std::vector<std::uint8_t>& payload) {
  const auto c0 = bed.client_counters();
  const auto s0 = bed.server_counters();
  const std::int64_t w0 = monotonic_ns();
  const std::int64_t u0 = process_cpu_ns();
  for (std::size_t i = 0; i < count; ++i) {
    auto v = exchange(bed, r, seq++, payload);
    if (v) r.samples.push_back(static_cast<double>(*v) / 1e3);
    else ++r.row.timeouts;
  }
  r.wall_ns += monotonic_ns() - w0;
  r.cpu_ns += process_cpu_ns() - u0;
  const auto c1 = bed.client_counters();
  const auto s1 = bed.server_counters();
  r.row.secoc_protected += (c1.secoc_protected - c0.secoc_protected) + (s1.secoc_protected - s0.secoc_protected);
  r.row.secoc_verified += (c1.secoc_verified - c0.secoc_verified) + (s1.secoc_verified - s0.secoc_verified);
  r.row.secoc_rejected += (c1.secoc_rejected - c0.secoc_rejected) + (s1.secoc_rejected - s0.secoc_rejected);
}

}  // namespace

std::vector<SomeipBenchRow> measure_someip_rows(SomeipBed& bed, const std::vector<std::string>& names,
                                               const std::string& topology, const SomeipBenchOptions& o,
                                               std::size_t rounds) {
  if (o.payload_bytes < 8) throw std::invalid_argument("bench someip: payload must be at least 8 bytes");
  if (o.iterations == 0) throw std::invalid_argument("bench someip: iterations must be at least 1");
  rounds = std::clamp<std::size_t>(rounds, 1, o.iterations);
  std::vector<RowRun> runs;
  for (const auto& n : names) runs.push_back(make_run(n, topology, o));
  std::vector<std::uint8_t> payload(o.payload_bytes);
  std::uint64_t seq = 0;
  for (auto& r : runs)
    for (std::size_t i = 0; i < o.warmup; ++i) (void)exchange(bed, r, seq++, payload);
  for (std::size_t k = 0; k < rounds; ++k) {
    // Block k of every row: the iterations split as evenly as possible.
    const std::size_t count = o.iterations / rounds + (k < o.iterations % rounds ? 1 : 0);
    for (auto& r : runs) run_block(bed, r, count, seq, payload);
  }
  std::vector<SomeipBenchRow> rows;
  for (auto& r : runs) {
    r.row.latency = summarize(r.samples);
    r.row.msgs_per_s =
        r.wall_ns > 0 ? static_cast<double>(r.samples.size()) * 1e9 / static_cast<double>(r.wall_ns) : 0;
    r.row.cpu_pct = r.wall_ns > 0 ? 100.0 * static_cast<double>(r.cpu_ns) / static_cast<double>(r.wall_ns) : 0;
    if (r.row.timeouts * 100 > o.iterations)
      throw std::runtime_error("bench someip: " + topology + " " + r.row.name + ": " +
                               std::to_string(r.row.timeouts) + " of " + std::to_string(o.iterations) +
                               " exchanges got no intact answer");
    rows.push_back(std::move(r.row));
  }
  return rows;
}

SomeipBenchRow measure_someip_row(SomeipBed& bed, const std::string& name, const std::string& topology,
                                  const SomeipBenchOptions& o) {
  return measure_someip_rows(bed, {name}, topology, o, 1).front();
}

SomeipBenchReport run_someip_bench(const SomeipBenchOptions& o) {
  SomeipBenchReport rep;
  SomeipBedOptions bo;
  bo.payload_bytes = o.payload_bytes;
  bo.timeout = o.timeout;
  static const char* const kRows[] = {"udp-bare", "rr-unsecured", "rr-secoc", "event-unsecured", "event-secoc"};
  for (SomeipTopology t : o.topologies) {
    std::unique_ptr<SomeipBed> bed;
    if (t == SomeipTopology::kNetns) {
      std::string why;
      if (!net::netns_available(&why)) {
        rep.notes.push_back(std::string("netns topology skipped: ") + why);
        continue;
      }
      bed = std::make_unique<SomeipNetnsBed>(bo);
    } else {
      bed = std::make_unique<SomeipSimBed>(bo);
    }
    bed->start();
    std::vector<SomeipBenchRow> rows =
        measure_someip_rows(*bed, {std::begin(kRows), std::end(kRows)}, to_string(t), o, o.rounds);
    bed.reset();  // tears the topology down before the next one
    set_baseline(rows[1], rows[0]);
    set_baseline(rows[2], rows[1]);
    set_baseline(rows[4], rows[3]);
    for (auto [row, limit, what] : {std::tuple{&rows[1], 1.3, "rr-unsecured / udp-bare"},
                                    std::tuple{&rows[2], 1.1, "rr-secoc / rr-unsecured"}}) {
      SomeipGoal g;
      g.topology = to_string(t);
      g.what = what;
      g.limit = limit;
      g.ratio_p50 = row->ratio_p50;
      g.ratio_p99 = row->ratio_p99;
      g.met_p50 = row->ratio_p50 <= limit;
      g.met_p99 = row->ratio_p99 <= limit;
      rep.goals.push_back(g);
    }
    for (auto& r : rows) rep.rows.push_back(std::move(r));
  }
  return rep;
}

}  // namespace layersec::harness
