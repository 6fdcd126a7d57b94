// Using the SOME/IP runtime (docs/api.md, docs/install.md).
//
// A server offers service 0x1234 instance 1 with method 0x0001 (echo) and
// event 0x8001 in eventgroup 1; a client finds it through SOME/IP-SD,
// subscribes, calls the method three times and receives the notifications.
//
//   ./someip_echo            both on layersec's simulated Ethernet segment, in
//                            simulated time: deterministic, no privileges
//                            (how integration tests run the runtime)
//   ./someip_echo --udp A S  the server alone on real UDP sockets at IPv4
//                            address A for S seconds (net::EventLoop +
//                            someip::SocketTransport), offering the service;
//                            any SOME/IP client on the network can call it
//
// Threading: a Runtime and its transport belong to one thread (the loop's);
// every handler below runs on it.
//
// Build against the installed library:
//   cmake:      find_package(layersec) + target_link_libraries(... layersec::someip)
//   pkg-config: g++ -std=c++20 someip_echo.cc $(pkg-config --cflags --libs layersec-someip)
#include <arpa/inet.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/sim_transport.h"
#include "layersec/someip/socket_transport.h"

namespace {

using namespace layersec;
using namespace layersec::someip;

constexpr std::uint16_t kService = 0x1234;
constexpr std::uint16_t kInstance = 1;
constexpr std::uint16_t kEcho = 0x0001;
constexpr std::uint16_t kEvent = 0x8001;

RuntimeConfig server_config(std::uint16_t port) {
  RuntimeConfig c;
  c.name = "echo-server";
  ServiceConfig s;
  s.service_id = kService;
  s.instance_id = kInstance;
  s.udp_port = port;
  s.methods = {MethodConfig{kEcho, false}};
  EventConfig e;
  e.event_id = kEvent;
  e.eventgroups = {1};
  s.events = {e};
  EventgroupConfig g;
  g.eventgroup_id = 1;
  s.eventgroups = {g};
  c.services = {s};
  return c;
}

RuntimeConfig client_config() {
  RuntimeConfig c;
  c.name = "echo-client";
  c.client_id = 0x0042;
  ClientConfig cl;
  cl.service_id = kService;
  cl.instance_id = kInstance;
  cl.eventgroups = {1};
  c.clients = {cl};
  return c;
}

void serve_echo(Runtime& rt) {
  const auto st = rt.set_method_handler(kService, kInstance, kEcho, [](const Request& req, Reply& reply) {
    reply.payload.assign(req.payload.begin(), req.payload.end());
  });
  if (!st.ok()) std::exit(1);
}

int run_simulated() {
  net::Simulator sim(1);
  net::Segment segment(sim);
  const auto ip = [](std::uint8_t n) { return net::Ipv4Address::from_octets(10, 0, 0, n); };
  net::SimHost server_host(sim, net::SimHostConfig{net::MacAddress::local(1), ip(1)});
  net::SimHost client_host(sim, net::SimHostConfig{net::MacAddress::local(2), ip(2)});
  server_host.attach(segment);
  client_host.attach(segment);
  SimTransport server_tr(sim, server_host);
  SimTransport client_tr(sim, client_host);
  SeededRandom server_rnd(1);
  SeededRandom client_rnd(2);
  Runtime server(server_config(30509), server_tr, server_rnd);
  Runtime client(client_config(), client_tr, client_rnd);
  serve_echo(server);

  int responses = 0;
  int events = 0;
  client.on_event(kService, kEvent, [&](const Notification&) { ++events; });
  client.on_availability([&](std::uint16_t, std::uint16_t, bool up) {
    if (!up) return;
    for (int i = 0; i < 3; ++i) {
      const std::string text = "ping " + std::to_string(i);
      const std::vector<std::uint8_t> payload(text.begin(), text.end());
      const auto sent = client.request(kService, kInstance, kEcho, payload, [&, payload](const ResponseResult& r) {
        if (r.code == ReturnCode::kOk && std::vector<std::uint8_t>(r.payload.begin(), r.payload.end()) == payload)
          ++responses;
      });
      if (!sent.ok()) std::exit(1);
    }
  });
  if (!server.start().ok() || !client.start().ok()) return 1;
  // SD finds the service (initial delay up to 3 s by default), then one
  // notification every 100 ms for 2 s of simulated time.
  sim.run_for(Duration::seconds(4));
  for (int i = 0; i < 20; ++i) {
    const std::uint8_t tick[4] = {0, 0, 0, static_cast<std::uint8_t>(i)};
    (void)server.notify(kService, kInstance, kEvent, tick);
    sim.run_for(Duration::milliseconds(100));
  }
  client.stop();
  server.stop();
  sim.run_for(Duration::milliseconds(100));
  std::printf("someip_echo: %d/3 echo responses, %d/20 events\n", responses, events);
  const bool ok = responses == 3 && events == 20;
  std::printf("someip_echo: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

int run_udp(const char* address, double seconds) {
  in_addr a{};
  if (::inet_pton(AF_INET, address, &a) != 1) {
    std::fprintf(stderr, "someip_echo: %s is not an IPv4 address\n", address);
    return 2;
  }
  const std::uint32_t host = ntohl(a.s_addr);
  const MonotonicClock clock;
  net::EventLoop loop(clock);
  SocketTransport transport(loop, net::Ipv4Address::from_octets(static_cast<std::uint8_t>(host >> 24),
                                                                static_cast<std::uint8_t>(host >> 16),
                                                                static_cast<std::uint8_t>(host >> 8),
                                                                static_cast<std::uint8_t>(host)));
  SeededRandom rnd(clock.now().ns());
  RuntimeConfig config = server_config(30509);
  config.sd_port = 31490;  // off the default, so a test on a shared host does not meet other nodes
  config.sd_timing.initial_delay_max = Duration::milliseconds(50);  // offer soon after start
  Runtime server(std::move(config), transport, rnd);
  serve_echo(server);
  if (const auto st = server.start(); !st.ok()) {
    std::fprintf(stderr, "someip_echo: start failed: %s\n", std::string(to_string(st.error())).c_str());
    return 3;
  }
  std::printf("someip_echo: offering 0x1234/1 on %s:30509\n", address);
  std::fflush(stdout);
  loop.run_until(clock.now() + Duration::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
  server.stop();
  std::printf("someip_echo: stopped, %llu SD messages sent\n",
              static_cast<unsigned long long>(server.counters().sd_datagrams_sent));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--udp") == 0) return run_udp(argv[2], std::atof(argv[3]));
  if (argc != 1) {
    std::fprintf(stderr, "usage: someip_echo [--udp IPV4 SECONDS]\n");
    return 2;
  }
  return run_simulated();
}
