// SOME/IP-SD attacks on the simulated segment (issue 13 item 6), unprotected
// SD: what an attacker on the segment did to `layersec node` and what the SD
// state machines' sender binding and allowlists now make of it. Each test
// keeps traffic running during the attack (one event and one request per
// 10 ms round) and asserts counts: every event and every response arrives, no
// request times out, the client never loses the service, nothing reaches the
// attacker or a victim.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/runtime_test_support.h"
#include "layersec/someip/sd_message.h"

namespace layersec::someip {
namespace {

using testing_support::Bench;
using testing_support::client_config;
using testing_support::kClientPort;
using testing_support::kEvent;
using testing_support::kEventgroup;
using testing_support::kInstance;
using testing_support::kMethod;
using testing_support::kService;
using testing_support::kServicePort;
using testing_support::Node;
using testing_support::server_config;

constexpr std::uint32_t kServerId = 1;
constexpr std::uint32_t kClientId = 2;
constexpr std::uint32_t kVictimId = 3;
constexpr std::uint32_t kAttackerId = 9;
constexpr std::uint16_t kAttackerEventPort = 40000;
const net::Ipv4Endpoint kSdGroup{net::Ipv4Address::from_octets(224, 224, 224, 245), kSdPort};

IpAddress host(std::uint32_t id) { return IpAddress::v4(10, 0, 0, static_cast<std::uint8_t>(id)); }
Endpoint udp(std::uint32_t id, std::uint16_t port) { return Endpoint{host(id), port, L4Proto::kUdp}; }
net::Ipv4Endpoint sd_of(std::uint32_t id) { return net::Ipv4Endpoint{Bench::ip(id), kSdPort}; }

// One SD message with one entry naming `named` (if any).
std::vector<std::uint8_t> sd_message(const SdEntry& e, const std::optional<Endpoint>& named, std::uint16_t session) {
  SdMessageBuilder b;
  std::vector<SdOption> run;
  if (named) run.push_back(endpoint_option(*named));
  EXPECT_TRUE(b.add(e, run));
  std::vector<std::uint8_t> bytes(kHeaderSize + b.payload_size());
  ByteWriter w(bytes);
  EXPECT_TRUE(b.write_message(w, session, kSdFlagReboot | kSdFlagUnicast));
  return bytes;
}

// A host on the segment without a SOME/IP stack: sends SD messages from its
// own SD port and counts what it receives.
struct Attacker {
  net::SimHost* host = nullptr;
  std::uint16_t session = 1;
  std::size_t sd_received = 0;
  std::size_t subscribes_received = 0;
  std::size_t nacks_received = 0;
  std::size_t requests_received = 0;  // on the service port it claims
  std::size_t events_received = 0;    // on kAttackerEventPort

  Attacker(Bench& b, std::uint32_t id) : host(&b.raw_host(id)) {
    EXPECT_TRUE(host->bind(kSdPort, [this](const net::UdpDatagram& d) { on_sd(d.payload); }).ok());
    EXPECT_TRUE(host->bind(kServicePort, [this](const net::UdpDatagram&) { ++requests_received; }).ok());
    EXPECT_TRUE(host->bind(kAttackerEventPort, [this](const net::UdpDatagram&) { ++events_received; }).ok());
  }
  void on_sd(ByteSpan payload) {
    ++sd_received;
    auto m = parse_message(payload);
    if (!m) return;
    auto v = parse_sd_message(*m);
    if (!v) return;
    for (std::size_t i = 0; i < v->entry_count(); ++i) {
      const auto k = v->entry(i).kind();
      subscribes_received += k == EntryKind::kSubscribeEventgroup ? 1 : 0;
      nacks_received += k == EntryKind::kSubscribeEventgroupNack ? 1 : 0;
    }
  }
  void send(const net::Ipv4Endpoint& to, const SdEntry& e, const std::optional<Endpoint>& named) {
    EXPECT_TRUE(host->send_to(kSdPort, to, sd_message(e, named, session++)).ok());
  }
};

// Rewrites the IPv4 endpoint option address `from` -> `to` in every SD frame
// entering on `port`, checksums fixed: the server's own offers, from its own
// address and with its own session ids, naming the attacker (the spoofed
// offer, as an on-path attacker sends it without disturbing SD's reboot
// detection).
class RewriteOfferEndpoint final : public net::SwitchHook {
 public:
  RewriteOfferEndpoint(net::PortId port, IpAddress from, IpAddress to) : port_(port), from_(from), to_(to) {}
  net::HookVerdict on_frame(const net::HookContext& ctx, std::vector<std::uint8_t>& frame,
                            net::SwitchControl&) override {
    if (ctx.ingress != port_) return net::HookVerdict::forward();
    auto v = net::parse_udp_frame(frame);
    if (!v || v->udp.header.src_port != kSdPort) return net::HookVerdict::forward();
    // IPv4 endpoint option: Length 0x0009, Type 0x04, Reserved, address.
    const std::uint8_t head[] = {0x00, 0x09, 0x04, 0x00, from_.bytes[0], from_.bytes[1], from_.bytes[2], from_.bytes[3]};
    bool changed = false;
    for (auto it = std::search(frame.begin(), frame.end(), std::begin(head), std::end(head)); it != frame.end();
         it = std::search(it + 1, frame.end(), std::begin(head), std::end(head))) {
      std::copy(to_.bytes.begin(), to_.bytes.begin() + 4, it + 4);
      changed = true;
    }
    if (changed && net::refresh_checksums(frame)) ++rewritten_;
    return net::HookVerdict::forward();
  }
  [[nodiscard]] std::uint64_t rewritten() const { return rewritten_; }

 private:
  net::PortId port_;
  IpAddress from_;
  IpAddress to_;
  std::uint64_t rewritten_ = 0;
};

// What the client saw while traffic ran.
struct Traffic {
  int rounds = 0;
  int events = 0;
  int responses = 0;
  int timeouts = 0;
  int errors = 0;  // other response codes, or request() refused
  std::vector<bool> availability;
};

// `rounds` rounds of 10 ms: one event from the server, one request from the
// client, then `attack(round)`.
void drive(Bench& b, Node& server, Node& client, int rounds, Traffic& t,
           const std::function<void(int)>& attack = [](int) {}) {
  for (int i = 0; i < rounds; ++i) {
    const std::uint8_t payload[] = {static_cast<std::uint8_t>(i)};
    EXPECT_TRUE(server.rt->notify(kService, kInstance, kEvent, payload).ok());
    auto r = client.rt->request(kService, kInstance, kMethod, payload, [&t](const ResponseResult& res) {
      if (res.code == ReturnCode::kOk) ++t.responses;
      else if (res.code == ReturnCode::kTimeout) ++t.timeouts;
      else ++t.errors;
    });
    if (!r.ok()) ++t.errors;
    ++t.rounds;
    attack(i);
    b.run(Duration::milliseconds(10));
  }
  b.run(Duration::milliseconds(1100));  // every request answered or timed out
}

// Everything the client should have got during `t`, with no loss of service.
void expect_unharmed(const Traffic& t, const std::vector<bool>& availability_before) {
  EXPECT_EQ(t.events, t.rounds);
  EXPECT_EQ(t.responses, t.rounds);
  EXPECT_EQ(t.timeouts, 0);
  EXPECT_EQ(t.errors, 0);
  EXPECT_EQ(t.availability, availability_before);
}

// A server (echoing kMethod), a client watched by `t`, and an attacker.
struct Scene {
  explicit Scene(RuntimeConfig sc = server_config(), RuntimeConfig cc = client_config(0x0042))
      : server(b.add(kServerId, std::move(sc))), client(b.add(kClientId, std::move(cc))), attacker(b, kAttackerId) {
    EXPECT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [](const Request& r, Reply& reply) {
      reply.payload.assign(r.payload.begin(), r.payload.end());
    }).ok());
    client.rt->on_event(kService, kEvent, [this](const Notification&) { ++t.events; });
    client.rt->on_availability([this](std::uint16_t, std::uint16_t, bool up) { t.availability.push_back(up); });
  }
  // Starts both and lets discovery finish; returns the availability so far.
  std::vector<bool> discover() {
    b.start_all();
    b.run(Duration::milliseconds(500));
    EXPECT_TRUE(client.rt->available(kService, kInstance));
    EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
    return t.availability;
  }
  void drive(int rounds, const std::function<void(int)>& attack = [](int) {}) {
    someip::drive(b, server, client, rounds, t, attack);
  }
  [[nodiscard]] std::size_t subscribers() const {
    return server.rt->subscriber_count(kService, kInstance, kEventgroup);
  }

  Bench b;
  Node& server;
  Node& client;
  Attacker attacker;
  Traffic t;
};

TEST(RuntimeSdAttack, SpoofedOfferNamingTheAttackerDoesNotRedirectTheClient) {
  // Before: the client took the attacker's endpoint from the server's next
  // offer, sent its requests there (timeouts) and dropped the server's
  // events as coming from the wrong source.
  Scene s;
  const auto availability = s.discover();
  RewriteOfferEndpoint spoof(s.server.port, host(kServerId), host(kAttackerId));
  s.b.segment.add_hook(&spoof);
  s.drive(300);  // 3 s: at least two cyclic offers rewritten
  s.b.segment.remove_hook(&spoof);
  EXPECT_GE(spoof.rewritten(), 2U);
  expect_unharmed(s.t, availability);
  EXPECT_EQ(s.attacker.requests_received, 0U);
  EXPECT_EQ(s.client.rt->counters().notifications_unsubscribed, 0U);
}

TEST(RuntimeSdAttack, StopOfferNackStopSubscribeAndOfferFromAThirdHostDoNothing) {
  // Entries a third host sends from its own address (relabelled or replayed
  // from elsewhere), each naming the endpoint of the host it targets.
  Scene s;
  const auto availability = s.discover();
  const Endpoint server_udp = udp(kServerId, kServicePort);
  const Endpoint client_udp = udp(kClientId, kClientPort);
  Attacker& a = s.attacker;
  s.drive(200, [&](int round) {
    if (round % 5 != 0) return;
    a.send(kSdGroup, SdEntry::offer_service(kService, kInstance, 1, 0, 0), server_udp);  // StopOffer
    a.send(sd_of(kClientId), SdEntry::offer_service(kService, kInstance, 1, 0, 0), server_udp);
    a.send(sd_of(kClientId), SdEntry::subscribe_ack(kService, kInstance, 1, kEventgroup, 0), std::nullopt);  // Nack
    a.send(sd_of(kServerId), SdEntry::subscribe(kService, kInstance, 1, kEventgroup, 0), client_udp);  // StopSubscribe
    a.send(kSdGroup, SdEntry::offer_service(kService, kInstance, 1, 0, kTtlInfinite), server_udp);
  });
  expect_unharmed(s.t, availability);
  EXPECT_EQ(s.subscribers(), 1U);
  EXPECT_EQ(a.requests_received, 0U);
}

TEST(RuntimeSdAttack, SubscribeNamingAVictimIsNacked) {
  // Before: any host could subscribe a victim's endpoint and have the
  // server's event stream reflected at it.
  Scene s;
  net::SimHost& victim = s.b.raw_host(kVictimId);
  std::size_t victim_received = 0;
  ASSERT_TRUE(victim.bind(kAttackerEventPort, [&](const net::UdpDatagram&) { ++victim_received; }).ok());
  const auto availability = s.discover();
  s.drive(100, [&](int round) {
    if (round % 10 == 0)
      s.attacker.send(sd_of(kServerId), SdEntry::subscribe(kService, kInstance, 1, kEventgroup, kTtlInfinite),
                      udp(kVictimId, kAttackerEventPort));
  });
  expect_unharmed(s.t, availability);
  EXPECT_EQ(victim_received, 0U);
  EXPECT_EQ(s.attacker.nacks_received, 10U);
  EXPECT_EQ(s.subscribers(), 1U);
}

TEST(RuntimeSdAttack, OnlyAllowedSubscribersReceiveEvents) {
  // Before: any host's Subscribe was accepted and then received the events.
  // The contrast run without the list shows what the list is for.
  for (const bool restricted : {false, true}) {
    SCOPED_TRACE(restricted ? "allowed_subscribers = {client}" : "no allowlist");
    RuntimeConfig sc = server_config();
    if (restricted) sc.services[0].eventgroups[0].allowed_subscribers = {host(kClientId)};
    Scene s(sc);
    s.discover();
    s.attacker.send(sd_of(kServerId), SdEntry::subscribe(kService, kInstance, 1, kEventgroup, kTtlInfinite),
                    udp(kAttackerId, kAttackerEventPort));
    s.b.run(Duration::milliseconds(10));
    const auto availability = s.t.availability;
    s.drive(100);
    expect_unharmed(s.t, availability);
    if (restricted) {
      EXPECT_EQ(s.attacker.events_received, 0U);
      EXPECT_EQ(s.attacker.nacks_received, 1U);
      EXPECT_EQ(s.subscribers(), 1U);
    } else {
      EXPECT_EQ(s.attacker.events_received, 100U);
      EXPECT_EQ(s.subscribers(), 2U);
    }
  }
}

TEST(RuntimeSdAttack, EarlyOfferCapturesOnlyAnUnpinnedClient) {
  // Before: a host offering the service before the server started captured
  // the client for good (0 events, every request timed out). An attacker
  // re-sending the server's own offer from its address now captures nobody;
  // one offering its own endpoint is a server like any other unless the
  // client pins its servers (allowed_servers).
  enum class Variant { kOwnEndpointUnpinned, kServerEndpointUnpinned, kOwnEndpointPinned };
  for (const Variant variant :
       {Variant::kOwnEndpointUnpinned, Variant::kServerEndpointUnpinned, Variant::kOwnEndpointPinned}) {
    SCOPED_TRACE(static_cast<int>(variant));
    RuntimeConfig cc = client_config(0x0042);
    if (variant == Variant::kOwnEndpointPinned) cc.clients[0].allowed_servers = {host(kServerId)};
    Scene s(server_config(), cc);
    const Endpoint named =
        variant == Variant::kServerEndpointUnpinned ? udp(kServerId, kServicePort) : udp(kAttackerId, kServicePort);
    auto offer = [&]() {
      s.attacker.send(kSdGroup, SdEntry::offer_service(kService, kInstance, 1, 0, kTtlInfinite), named);
    };
    ASSERT_TRUE(s.client.rt->start().ok());
    for (int i = 0; i < 3; ++i) {
      offer();
      s.b.run(Duration::milliseconds(100));
    }
    ASSERT_TRUE(s.server.rt->start().ok());
    s.b.run(Duration::milliseconds(500));
    s.drive(200, [&](int round) {
      if (round % 10 == 0) offer();
    });
    if (variant == Variant::kOwnEndpointUnpinned) {
      // The capture, as the attack found it.
      EXPECT_EQ(s.t.events, 0);
      EXPECT_EQ(s.t.responses, 0);
      EXPECT_GT(s.t.timeouts, 0);
      EXPECT_GT(s.attacker.subscribes_received, 0U);
      EXPECT_GT(s.attacker.requests_received, 0U);
      continue;
    }
    EXPECT_TRUE(s.client.rt->available(kService, kInstance));
    expect_unharmed(s.t, std::vector<bool>{true});
    EXPECT_EQ(s.attacker.subscribes_received, 0U);
    EXPECT_EQ(s.attacker.requests_received, 0U);
  }
}

}  // namespace
}  // namespace layersec::someip
