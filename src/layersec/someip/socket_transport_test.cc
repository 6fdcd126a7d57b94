// SocketTransport: two runtimes on the loopback interface (127.0.0.1 and
// 127.0.0.2, SD multicast looped back on lo) doing SD, request/response and
// an event; the same across two network namespaces (root only); and the
// transport's own port rules. Real sockets and a real
// clock: the loop runs until the expected outcome or a generous deadline;
// nothing asserts on elapsed time.
#include "layersec/someip/socket_transport.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "layersec/net/event_loop.h"
#include "layersec/net/netns.h"
#include "layersec/someip/runtime.h"

namespace layersec::someip {
namespace {

constexpr std::uint16_t kService = 0x4321;
constexpr std::uint16_t kMethod = 0x0001;
constexpr std::uint16_t kEvent = 0x8001;
constexpr std::uint16_t kGroup = 0x0001;

// Ports derived from the pid so parallel test processes do not collide.
std::uint16_t base_port() { return static_cast<std::uint16_t>(20000 + (::getpid() % 2000) * 10); }

SdTiming fast() {
  SdTiming t;
  t.initial_delay_min = Duration::milliseconds(0);
  t.initial_delay_max = Duration::milliseconds(20);
  return t;
}

RuntimeConfig common(const std::string& name) {
  RuntimeConfig c;
  c.name = name;
  c.sd_port = base_port();
  c.sd_multicast = Endpoint{IpAddress::v4(239, 255, 77, static_cast<std::uint8_t>(::getpid() % 250)), base_port(),
                            L4Proto::kUdp};
  c.sd_timing = fast();
  c.client_port = static_cast<std::uint16_t>(base_port() + 2);
  return c;
}

TEST(SocketTransportTest, LoopbackSdRequestResponseAndEvent) {
  MonotonicClock clock;
  net::EventLoop loop(clock);
  SocketTransport server_tr(loop, net::Ipv4Address::from_octets(127, 0, 0, 1));
  SocketTransport client_tr(loop, net::Ipv4Address::from_octets(127, 0, 0, 2));
  SeededRandom r1(1), r2(2);

  RuntimeConfig sc = common("server");
  ServiceConfig s;
  s.service_id = kService;
  s.instance_id = 1;
  s.udp_port = static_cast<std::uint16_t>(base_port() + 1);
  s.methods = {MethodConfig{kMethod, false}};
  s.events = {EventConfig{kEvent, {kGroup}, false, std::nullopt, std::nullopt}};
  s.eventgroups = {EventgroupConfig{kGroup, std::nullopt, 1}};
  sc.services = {s};
  RuntimeConfig cc = common("client");
  cc.client_id = 0x0077;
  cc.clients = {ClientConfig{kService, 1, 0xFF, 0, {kGroup}}};

  Runtime server(sc, server_tr, r1);
  Runtime client(cc, client_tr, r2);
  ASSERT_TRUE(server.set_method_handler(kService, 1, kMethod, [](const Request& rq, Reply& rp) {
    rp.payload.assign(rq.payload.begin(), rq.payload.end());
    rp.payload.push_back(static_cast<std::uint8_t>(rq.client_id));
  }).ok());
  std::vector<std::uint8_t> event;
  client.on_event(kService, kEvent, [&](const Notification& n) { event.assign(n.payload.begin(), n.payload.end()); });
  auto st1 = server.start();
  if (!st1.ok()) GTEST_SKIP() << "cannot bind on loopback: errno " << server_tr.last_errno();
  auto st2 = client.start();
  ASSERT_TRUE(st2.ok()) << "errno " << client_tr.last_errno();

  const TimePoint deadline = clock.now() + Duration::seconds(10);
  const bool found = loop.run_until(
      [&] { return client.available(kService) && server.subscriber_count(kService, 1, kGroup) == 1; }, deadline);
  if (!found && server.counters().datagrams_received == 0 && client.counters().datagrams_received == 0)
    GTEST_SKIP() << "no multicast on the loopback interface here";
  ASSERT_TRUE(found);

  std::vector<std::uint8_t> answer;
  ReturnCode code = ReturnCode::kNotOk;
  const std::vector<std::uint8_t> payload = {1, 2, 3};
  ASSERT_TRUE(client.request(kService, 1, kMethod, payload, [&](const ResponseResult& r) {
    code = r.code;
    answer.assign(r.payload.begin(), r.payload.end());
  }).ok());
  ASSERT_TRUE(loop.run_until([&] { return !answer.empty(); }, clock.now() + Duration::seconds(5)));
  EXPECT_EQ(code, ReturnCode::kOk);
  EXPECT_EQ(answer, (std::vector<std::uint8_t>{1, 2, 3, 0x77}));

  const std::vector<std::uint8_t> ev = {9, 9};
  ASSERT_TRUE(server.notify(kService, 1, kEvent, ev).ok());
  ASSERT_TRUE(loop.run_until([&] { return !event.empty(); }, clock.now() + Duration::seconds(5)));
  EXPECT_EQ(event, ev);

  // StopOffer over real sockets.
  server.stop();
  ASSERT_TRUE(loop.run_until([&] { return !client.available(kService); }, clock.now() + Duration::seconds(5)));
}

// Two nodes in their own network namespaces joined by a veth pair: SD
// multicast leaves through IP_MULTICAST_IF on the veth (no loopback), the
// standard SD port 30490 is used. Needs root; skipped otherwise.
TEST(SocketTransportTest, NamespacesSdAndRequestResponse) {
  std::string reason;
  if (!net::netns_available(&reason)) GTEST_SKIP() << reason;
  auto topo = net::NetnsTopology::pair("lsrt");
  MonotonicClock clock;
  net::EventLoop loop(clock);
  SocketTransport server_tr(loop, topo.node(0).ip);
  SocketTransport client_tr(loop, topo.node(1).ip);
  SeededRandom r1(1), r2(2);
  RuntimeConfig sc;
  sc.sd_timing = fast();
  ServiceConfig s;
  s.service_id = kService;
  s.instance_id = 1;
  s.udp_port = 30509;
  s.methods = {MethodConfig{kMethod, false}};
  sc.services = {s};
  RuntimeConfig cc;
  cc.sd_timing = fast();
  cc.client_id = 0x0033;
  cc.clients = {ClientConfig{kService, 1, 0xFF, 0, {}}};
  Runtime server(sc, server_tr, r1);
  Runtime client(cc, client_tr, r2);
  ASSERT_TRUE(server.set_method_handler(kService, 1, kMethod, [](const Request& rq, Reply& rp) {
    rp.payload = {static_cast<std::uint8_t>(rq.session_id), 0x5A};
  }).ok());
  {
    net::NetnsScope in(topo.node(0).netns);  // sockets keep this namespace
    ASSERT_TRUE(server.start().ok()) << "errno " << server_tr.last_errno();
  }
  {
    net::NetnsScope in(topo.node(1).netns);
    ASSERT_TRUE(client.start().ok()) << "errno " << client_tr.last_errno();
  }
  ASSERT_TRUE(loop.run_until([&] { return client.available(kService); }, clock.now() + Duration::seconds(10)));
  std::vector<std::uint8_t> answer;
  ASSERT_TRUE(client.request(kService, 1, kMethod, {}, [&](const ResponseResult& r) {
    answer.assign(r.payload.begin(), r.payload.end());
  }).ok());
  ASSERT_TRUE(loop.run_until([&] { return !answer.empty(); }, clock.now() + Duration::seconds(5)));
  EXPECT_EQ(answer, (std::vector<std::uint8_t>{1, 0x5A}));
  server.stop();
  ASSERT_TRUE(loop.run_until([&] { return !client.available(kService); }, clock.now() + Duration::seconds(5)));
}

TEST(SocketTransportTest, PortRules) {
  MonotonicClock clock;
  net::EventLoop loop(clock);
  SocketTransport tr(loop, net::Ipv4Address::from_octets(127, 0, 0, 1));
  const std::uint16_t port = static_cast<std::uint16_t>(base_port() + 5);
  auto a = tr.bind(port, [](const Transport::Datagram&) {});
  if (!a.ok()) GTEST_SKIP() << "cannot bind on loopback";
  auto b = tr.bind(port, [](const Transport::Datagram&) {});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), TransportError::kPortInUse);
  auto s = tr.send(static_cast<std::uint16_t>(port + 1), Endpoint{IpAddress::v4(127, 0, 0, 1), port, L4Proto::kUdp},
                   std::vector<std::uint8_t>{1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), TransportError::kNotBound);
  auto j = tr.join(Endpoint{IpAddress::v4(10, 0, 0, 1), port, L4Proto::kUdp}, [](const Transport::Datagram&) {});
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error(), TransportError::kUnreachable);  // not a group
  // Datagram to self arrives through the loop with the right endpoints.
  std::vector<Endpoint> sources;
  tr.unbind(port);
  ASSERT_TRUE(tr.bind(port, [&](const Transport::Datagram& d) { sources.push_back(d.source); }).ok());
  ASSERT_TRUE(tr.send(port, Endpoint{IpAddress::v4(127, 0, 0, 1), port, L4Proto::kUdp}, std::vector<std::uint8_t>{7}).ok());
  ASSERT_TRUE(loop.run_until([&] { return !sources.empty(); }, clock.now() + Duration::seconds(5)));
  EXPECT_EQ(sources[0].port, port);
  // wake_at: replaced, then fires once.
  int fired = 0;
  tr.wake_at(clock.now() + Duration::seconds(100), [&] { fired += 100; });
  tr.wake_at(clock.now(), [&] { ++fired; });
  ASSERT_TRUE(loop.run_until([&] { return fired != 0; }, clock.now() + Duration::seconds(5)));
  EXPECT_EQ(fired, 1);
}

}  // namespace
}  // namespace layersec::someip
