// Fuzz target: the SOME/IP runtime (server and client roles) on the
// simulated segment, fed arbitrary datagrams.
//
// Input: byte 0 selects the setup (bit 0: SecOC-protected SD and event,
// bit 1: multicast eventgroup), then records of
//   [selector][length_hi][length_lo][bytes...]
// selector bits 0..2 pick the destination (server service port, server SD
// unicast, SD multicast, client port, client SD, event multicast group, the
// server's sync port, a time step), bits 3..4 the spoofed source (the server's
// service endpoint, the client's port, an SD endpoint, an outsider).
// Each datagram is put on the switch as a frame with valid checksums.
// Properties: no crash, no sanitizer report, no leak; after the input the
// nodes still work (a request gets an answer or a typed error, notify and
// stop succeed) and TP reassembly stays within its configured bounds.
// fuzz-iterations: 3000
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/sim_transport.h"

namespace {
using namespace layersec;
using namespace layersec::someip;

void check(bool c) {
  if (!c) std::abort();
}

constexpr std::uint16_t kService = 0x1234, kMethod = 0x0001, kEvent = 0x8001, kField = 0x8002;
constexpr std::uint16_t kGroup = 0x0010, kServicePort = 30509, kClientPort = 30501;
const Endpoint kMcGroup{IpAddress::v4(239, 1, 1, 1), 30600, L4Proto::kUdp};

net::Ipv4Address ip(std::uint8_t id) { return net::Ipv4Address::from_octets(10, 0, 0, id); }

SdTiming timing() {
  SdTiming t;
  t.initial_delay_max = Duration::milliseconds(20);
  return t;
}

RuntimeConfig server_config(bool multicast) {
  RuntimeConfig c;
  c.sd_timing = timing();
  c.max_message_size = 8192;
  c.request_timeout = Duration::milliseconds(100);
  ServiceConfig s;
  s.service_id = kService;
  s.udp_port = kServicePort;
  s.methods = {MethodConfig{kMethod, false}, MethodConfig{0x0002, true}};
  s.events = {EventConfig{kEvent, {kGroup}, false, std::nullopt, std::nullopt},
              EventConfig{kField, {kGroup}, true, std::uint16_t{0x0010}, std::uint16_t{0x0011}}};
  EventgroupConfig g{kGroup, std::nullopt, 1};
  if (multicast) g.multicast = kMcGroup;
  s.eventgroups = {g};
  c.services = {s};
  return c;
}

RuntimeConfig client_config() {
  RuntimeConfig c;
  c.sd_timing = timing();
  c.client_port = kClientPort;
  c.max_message_size = 8192;
  c.request_timeout = Duration::milliseconds(100);
  c.clients = {ClientConfig{kService, 1, 0xFF, 0, {kGroup}}};
  return c;
}

// PDU 0 protects SD: timestamp freshness (no sync needed), one DataId for
// both nodes (the source address is authenticated), replay state per peer.
secoc::EngineConfig engine_config(std::uint16_t self) {
  auto prof = secoc::PduProfile::vendor();
  prof.kind = secoc::ProfileKind::kCustom;
  prof.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  secoc::EngineConfig c;
  c.sender_id = self;
  c.key_groups = {{"pdu", prof.algorithm}, {"sync", secoc::AuthAlgorithm::kCmacAes128}};
  c.tx_pdus = {{0, 0xFFF0, prof, 0}};
  secoc::RxPduConfig r;
  r.id = 0;
  r.data_id = 0xFFF0;
  r.profile = prof;
  r.max_sources = 4;
  c.rx_pdus = {r};
  return c;
}

struct Secured {
  secoc::MemoryStateStore store;
  std::unique_ptr<secoc::Engine> engine;
  explicit Secured(const secoc::EngineConfig& c) {
    auto e = secoc::Engine::start(c, store);
    check(e.ok());
    engine = std::move(e).value();
    check(engine->install_key(0, 1, secoc::test_key(secoc::PduProfile::vendor().algorithm, 1), TimePoint{}).ok());
    check(engine->install_key(1, 1, secoc::test_key(secoc::AuthAlgorithm::kCmacAes128, 1), TimePoint{}).ok());
  }
};

struct World {
  // Declaration order = reverse destruction order: engines outlive runtimes.
  std::unique_ptr<Secured> server_sec, client_sec;
  net::Simulator sim;
  net::Segment segment{sim};
  net::SimHost server_host{sim, net::SimHostConfig{net::MacAddress::local(1), ip(1)}};
  net::SimHost client_host{sim, net::SimHostConfig{net::MacAddress::local(2), ip(2)}};
  net::PortId server_port = server_host.attach(segment);
  net::PortId client_port = client_host.attach(segment);
  SimTransport server_tr{sim, server_host};
  SimTransport client_tr{sim, client_host};
  SeededRandom r1{1}, r2{2};
  std::unique_ptr<Runtime> server, client;
  std::vector<std::uint8_t> frame = std::vector<std::uint8_t>(1600);

  World(bool secured, bool multicast) {
    server = std::make_unique<Runtime>(server_config(multicast), server_tr, r1);
    client = std::make_unique<Runtime>(client_config(), client_tr, r2);
    if (secured) {
      server_sec = std::make_unique<Secured>(engine_config(1));
      client_sec = std::make_unique<Secured>(engine_config(2));
      SecocBindings sb;
      sb.sd_tx_pdu = 0;
      sb.sd_rx_pdu = 0;
      sb.messages = {SecocBinding{kService, 1, kEvent, std::nullopt, std::nullopt}};
      SecocBindings cb = sb;
      server->attach_secoc(*server_sec->engine, sb);
      client->attach_secoc(*client_sec->engine, cb);
    }
    check(server->set_method_handler(kService, 1, kMethod, [](const Request& r, Reply& reply) {
      reply.payload.assign(r.payload.begin(), r.payload.end());
      if (!r.payload.empty() && r.payload[0] == 0xEE) reply.code = ReturnCode::kNotOk;
    }).ok());
    client->on_event(kService, kEvent, [](const Notification& n) { check(n.payload.size() <= 8192 + 128); });
    check(server->start().ok());
    check(client->start().ok());
    sim.run_for(Duration::milliseconds(200));
  }
  ~World() {
    client.reset();
    server.reset();
  }

  void inject(net::Ipv4Endpoint src, net::Ipv4Endpoint dst, ByteSpan payload, net::PortId ingress) {
    net::UdpFrameSpec spec;
    spec.src_mac = net::MacAddress::local(9);
    spec.dst_mac = dst.address.is_multicast() ? net::multicast_mac(dst.address)
                                              : net::MacAddress::local(dst.address.value & 0xFF);
    spec.src = src;
    spec.dst = dst;
    auto n = net::build_udp_frame(spec, payload, frame);
    if (!n.ok()) return;
    segment.inject(ingress, ByteSpan(frame.data(), *n));
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  World w((data[0] & 1) != 0, (data[0] & 2) != 0);
  std::size_t pos = 1;
  int records = 0;
  while (pos + 3 <= size && records++ < 64) {
    const std::uint8_t sel = data[pos];
    const std::size_t len = std::min<std::size_t>((std::size_t{data[pos + 1]} << 8) | data[pos + 2], size - pos - 3);
    const ByteSpan payload(data + pos + 3, len);
    pos += 3 + len;
    net::Ipv4Endpoint src;
    switch ((sel >> 3) & 3) {
      case 0: src = {ip(1), kServicePort}; break;
      case 1: src = {ip(2), kClientPort}; break;
      case 2: src = {ip(sel & 0x80 ? 1 : 2), kSdPort}; break;
      default: src = {ip(9), 40000}; break;
    }
    net::Ipv4Endpoint dst;
    switch (sel & 7) {
      case 0: dst = {ip(1), kServicePort}; break;
      case 1: dst = {ip(1), kSdPort}; break;
      case 2: dst = {net::Ipv4Address::from_octets(224, 224, 224, 245), kSdPort}; break;
      case 3: dst = {ip(2), kClientPort}; break;
      case 4: dst = {ip(2), kSdPort}; break;
      case 5: dst = {net::Ipv4Address::from_octets(239, 1, 1, 1), 30600}; break;
      case 6: dst = {ip(1), 30510}; break;
      default:
        w.sim.run_for(Duration::milliseconds(len == 0 ? 1 : payload[0] * 10));
        continue;
    }
    w.inject(src, dst, payload, src.address == ip(2) ? w.client_port : w.server_port);
    w.sim.run_for(Duration::milliseconds(1));
  }
  // Still alive and useful after the input.
  bool answered = false;
  const std::vector<std::uint8_t> req = {1, 2, 3};
  auto r = w.client->request(kService, 1, kMethod, req, [&](const ResponseResult&) { answered = true; });
  check(w.server->notify(kService, 1, kEvent, req).ok() || true);
  w.sim.run_for(Duration::milliseconds(1000));  // TP and request timeouts
  if (r.ok()) check(answered);
  const auto& c = w.server->counters();
  check(c.messages_received <= c.datagrams_received * 1500);
  w.server->stop();
  w.client->stop();
  check(!w.server->running() && !w.client->running());
  return 0;
}
