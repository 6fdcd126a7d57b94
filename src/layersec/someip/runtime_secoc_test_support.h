// Test support for the runtime's SecOC tests (runtime_secoc_test.cc,
// runtime_secoc_attack_test.cc): engine configurations of a server (node 1)
// and clients (nodes 2, 3), their bindings with protected SD, and a
// secured pair on the simulated segment. Header-only, test code only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/sim_attack.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/runtime_test_support.h"

namespace layersec::someip::testing_support {

constexpr std::uint16_t kSyncService = 0x5EC0;
constexpr std::uint16_t kSyncEvent = 0x8100;
constexpr std::uint16_t kSyncGroup = 0x0100;
constexpr std::uint16_t kSyncPort = 30510;

// PDU ids. Server: tx 0 response, 1 event, 2 SD; rx 0 request, 1 client SD.
// Client: tx 0 request, 2 SD; rx 0 response, 1 event, 2 server SD.
constexpr std::uint32_t kTxResponse = 0, kTxEvent = 1, kTxSd = 2;
constexpr std::uint32_t kRxRequest = 0, kRxClientSd = 1;
constexpr std::uint32_t kTxRequest = 0;
constexpr std::uint32_t kRxResponse = 0, kRxEvent = 1, kRxServerSd = 2;

inline secoc::PduProfile profile() { return secoc::PduProfile::vendor(); }

inline secoc::TxPduConfig tx(std::uint32_t id, std::uint16_t data_id) {
  secoc::TxPduConfig t;
  t.id = id;
  t.data_id = data_id;
  t.profile = profile();
  t.key_group = 0;
  return t;
}

// SD PDUs: one DataId and key for every node on the SD segment (the source
// address is authenticated with each message), timestamp freshness (SD runs
// before any sync), full 64-bit FV,
// replay state per peer address.
inline secoc::PduProfile sd_profile() {
  secoc::PduProfile p = secoc::PduProfile::vendor();
  p.kind = secoc::ProfileKind::kCustom;
  p.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  return p;
}

inline secoc::TxPduConfig sd_tx(std::uint32_t id, std::uint16_t data_id) {
  secoc::TxPduConfig t = tx(id, data_id);
  t.profile = sd_profile();
  return t;
}

inline secoc::RxPduConfig sd_rx(std::uint32_t id, std::uint16_t data_id) {
  secoc::RxPduConfig r;
  r.id = id;
  r.data_id = data_id;
  r.profile = sd_profile();
  r.key_group = 0;
  r.mode = secoc::FreshnessMode::kReorderTolerant;  // unicast and multicast SD may swap
  r.max_sources = 8;
  return r;
}

inline secoc::RxPduConfig rx(std::uint32_t id, std::uint16_t data_id, std::uint16_t sender) {
  secoc::RxPduConfig r;
  r.id = id;
  r.data_id = data_id;
  r.profile = profile();
  r.key_group = 0;
  r.window = 32;
  r.sender_id = sender;
  r.has_sync_channel = true;
  r.sync_channel = 0;
  return r;
}

inline secoc::EngineConfig server_engine_config(Duration sync_period) {
  secoc::EngineConfig c;
  c.sender_id = 1;
  c.key_groups = {{"pdu", profile().algorithm}, {"sync", secoc::AuthAlgorithm::kCmacAes128}};
  c.sync_tx.enabled = true;
  c.sync_tx.data_id = 0xFF01;
  c.sync_tx.key_group = 1;
  c.sync_tx.period = sync_period;
  c.tx_pdus = {tx(kTxResponse, 0x0100), tx(kTxEvent, 0x0101), sd_tx(kTxSd, 0xFFF0)};
  // The client sends no sync messages: this channel stays silent, the
  // receive state is provisioned with set_rx_freshness(), and the channel is
  // explicitly without a time bound (maxAge 0) since no sync ever renews it.
  c.sync_rx = {{0, 0xFF02, 1, 64, Duration::seconds(1), Duration::zero()}};
  c.rx_pdus = {rx(kRxRequest, 0x0200, 2), sd_rx(kRxClientSd, 0xFFF0)};
  return c;
}

inline secoc::EngineConfig client_engine_config() {
  secoc::EngineConfig c;
  c.sender_id = 2;
  c.key_groups = {{"pdu", profile().algorithm}, {"sync", secoc::AuthAlgorithm::kCmacAes128}};
  c.sync_rx = {{0, 0xFF01, 1, 64, Duration::seconds(1), secoc::kDefaultMaxAge}};
  c.tx_pdus = {tx(kTxRequest, 0x0200), sd_tx(kTxSd, 0xFFF0)};
  c.rx_pdus = {rx(kRxResponse, 0x0100, 1), rx(kRxEvent, 0x0101, 1), sd_rx(kRxServerSd, 0xFFF0)};
  return c;
}

struct SecocNode {
  secoc::MemoryStateStore store;
  std::unique_ptr<secoc::Engine> engine;
  // (Re)starts the engine from the store and installs the test keys.
  void start(const secoc::EngineConfig& c, TimePoint now) {
    engine.reset();
    auto e = secoc::Engine::start(c, store);
    if (!e.ok()) throw std::runtime_error("engine start failed");
    engine = std::move(e).value();
    if (!engine->install_key(0, 1, secoc::test_key(profile().algorithm, 1), now).ok() ||
        !engine->install_key(1, 1, secoc::test_key(secoc::AuthAlgorithm::kCmacAes128, 1), now).ok())
      throw std::runtime_error("key installation failed");
  }
};

inline RuntimeConfig secured_server_config() {
  RuntimeConfig c = server_config();
  ServiceConfig s;
  s.service_id = kSyncService;
  s.instance_id = 1;
  s.udp_port = kSyncPort;
  s.events = {EventConfig{kSyncEvent, {kSyncGroup}, false, std::nullopt, std::nullopt}};
  s.eventgroups = {EventgroupConfig{kSyncGroup, std::nullopt, 1}};
  c.services.push_back(s);
  return c;
}

inline RuntimeConfig secured_client_config(std::uint16_t client_id) {
  RuntimeConfig c = client_config(client_id);
  c.clients.push_back(ClientConfig{kSyncService, 1, 0xFF, 0, {kSyncGroup}});
  return c;
}

inline SecocBindings sync_bindings() {
  SecocBindings b;
  b.sync_service = kSyncService;
  b.sync_instance = 1;
  b.sync_event = kSyncEvent;
  b.sync_rx_channel = 0;
  return b;
}

inline SecocBindings server_bindings() {
  SecocBindings b = sync_bindings();
  b.sd_tx_pdu = kTxSd;
  b.sd_rx_pdu = kRxClientSd;
  b.messages = {SecocBinding{kService, kInstance, kMethod, kTxResponse, kRxRequest},
                SecocBinding{kService, kInstance, kEvent, kTxEvent, std::nullopt}};
  return b;
}

inline SecocBindings client_bindings() {
  SecocBindings b = sync_bindings();
  b.sd_tx_pdu = kTxSd;
  b.sd_rx_pdu = kRxServerSd;
  b.messages = {SecocBinding{kService, 0xFFFF, kMethod, kTxRequest, kRxResponse},
                SecocBinding{kService, 0xFFFF, kEvent, std::nullopt, kRxEvent}};
  return b;
}

// What a SecuredPair changes in both nodes' bindings.
struct PairOptions {
  HeaderAuth header = HeaderAuth::kSomeipHeader;
  std::vector<MessageRef> unprotected;
};

// Server node 1 and client node 2 with their engines; the server's receive
// state for the client's requests is provisioned (the client sends no sync).
struct SecuredPair {
  // Engines first: they must outlive the runtimes (destroyed with `b`).
  SecocNode server_sec;
  SecocNode client_sec;
  SecocNode extra_sec;
  Bench b;
  Node* server = nullptr;
  Node* client = nullptr;
  std::vector<SecurityRejection> client_rejections;
  std::vector<SecurityRejection> server_rejections;
  std::vector<std::vector<std::uint8_t>> events;

  explicit SecuredPair(RuntimeConfig sc = secured_server_config(), const PairOptions& o = {}) {
    server_sec.start(server_engine_config(Duration::seconds(1)), b.sim.now());
    client_sec.start(client_engine_config(), b.sim.now());
    EXPECT_TRUE(server_sec.engine->set_rx_freshness(
        kRxRequest, secoc::FreshnessCounters{client_sec.engine->trip(), client_sec.engine->reset(), 0},
        b.sim.now()));
    server = &b.add(1, std::move(sc));
    client = &b.add(2, secured_client_config(2));
    SecocBindings sb = server_bindings(), cb = client_bindings();
    for (SecocBindings* bb : {&sb, &cb}) {
      bb->header = o.header;
      bb->unprotected = o.unprotected;
    }
    server->rt->attach_secoc(*server_sec.engine, sb);
    client->rt->attach_secoc(*client_sec.engine, cb);
    server->rt->on_rejection([this](const SecurityRejection& r) { server_rejections.push_back(r); });
    client->rt->on_rejection([this](const SecurityRejection& r) { client_rejections.push_back(r); });
    client->rt->on_event(kService, kEvent, [this](const Notification& n) { events.emplace_back(n.payload.begin(), n.payload.end()); });
    EXPECT_TRUE(server->rt->set_method_handler(kService, kInstance, kMethod, [](const Request& r, Reply& reply) {
      reply.payload.assign(r.payload.rbegin(), r.payload.rend());
    }).ok());
    b.start_all();
    b.run(Duration::milliseconds(500));
  }
};

// Builds a frame from `src` (spoofed) to `dst` carrying `payload`.
inline std::vector<std::uint8_t> spoofed_frame(std::uint32_t src_id, std::uint16_t src_port, std::uint32_t dst_id,
                                        std::uint16_t dst_port, const std::vector<std::uint8_t>& payload) {
  net::UdpFrameSpec spec;
  spec.src_mac = net::MacAddress::local(src_id);
  spec.dst_mac = net::MacAddress::local(dst_id);
  spec.src = net::Ipv4Endpoint{Bench::ip(src_id), src_port};
  spec.dst = net::Ipv4Endpoint{Bench::ip(dst_id), dst_port};
  std::vector<std::uint8_t> frame(1600);
  auto n = net::build_udp_frame(spec, payload, frame);
  if (!n.ok()) throw std::runtime_error("frame build failed");
  frame.resize(*n);
  return frame;
}

}  // namespace layersec::someip::testing_support
