// Test support for the runtime tests (runtime_test.cc, runtime_secoc_test.cc,
// the runtime fuzz target): a simulated segment with SOME/IP nodes, and the
// service configuration the tests share. Header-only, test code only.
#pragma once

#include <memory>
#include <vector>

#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/sim_transport.h"

namespace layersec::someip::testing_support {

inline constexpr std::uint16_t kService = 0x1234;
inline constexpr std::uint16_t kInstance = 0x0001;
inline constexpr std::uint16_t kMethod = 0x0001;
inline constexpr std::uint16_t kFireAndForget = 0x0002;
inline constexpr std::uint16_t kFieldGetter = 0x0010;
inline constexpr std::uint16_t kFieldSetter = 0x0011;
inline constexpr std::uint16_t kEvent = 0x8001;
inline constexpr std::uint16_t kField = 0x8002;
inline constexpr std::uint16_t kEventgroup = 0x0010;
inline constexpr std::uint16_t kServicePort = 30509;
inline constexpr std::uint16_t kClientPort = 30501;

inline SdTiming fast_timing() {
  SdTiming t;
  t.initial_delay_min = Duration::milliseconds(0);
  t.initial_delay_max = Duration::milliseconds(50);
  return t;
}

// One offered service: a request/response method, a fire-and-forget method,
// an event and a field (getter and setter) in one eventgroup.
inline RuntimeConfig server_config() {
  RuntimeConfig c;
  c.name = "server";
  c.client_id = 0x0100;
  c.sd_timing = fast_timing();
  ServiceConfig s;
  s.service_id = kService;
  s.instance_id = kInstance;
  s.major_version = 1;
  s.udp_port = kServicePort;
  s.methods = {MethodConfig{kMethod, false}, MethodConfig{kFireAndForget, true}};
  EventConfig e;
  e.event_id = kEvent;
  e.eventgroups = {kEventgroup};
  EventConfig f;
  f.event_id = kField;
  f.eventgroups = {kEventgroup};
  f.is_field = true;
  f.getter_method = kFieldGetter;
  f.setter_method = kFieldSetter;
  s.events = {e, f};
  EventgroupConfig g;
  g.eventgroup_id = kEventgroup;
  s.eventgroups = {g};
  c.services = {s};
  return c;
}

inline RuntimeConfig client_config(std::uint16_t client_id) {
  RuntimeConfig c;
  c.name = "client";
  c.client_id = client_id;
  c.client_port = kClientPort;
  c.sd_timing = fast_timing();
  ClientConfig cl;
  cl.service_id = kService;
  cl.instance_id = kInstance;
  cl.eventgroups = {kEventgroup};
  c.clients = {cl};
  return c;
}

struct Node {
  std::uint32_t id = 0;
  net::PortId port = 0;
  std::unique_ptr<net::SimHost> host;
  std::unique_ptr<SimTransport> tr;
  std::unique_ptr<SeededRandom> rnd;
  std::unique_ptr<Runtime> rt;
};

// Nodes 10.0.0.<id> on one simulated segment.
class Bench {
 public:
  explicit Bench(std::uint64_t seed = 1) : sim(seed), segment(sim) {}
  ~Bench() {
    // Runtimes first (they send their StopOffers through the transports).
    for (auto& n : nodes_) n->rt.reset();
    for (auto& n : nodes_) n->tr.reset();
  }

  static net::Ipv4Address ip(std::uint32_t id) {
    return net::Ipv4Address::from_octets(10, 0, 0, static_cast<std::uint8_t>(id));
  }

  Node& add(std::uint32_t id, RuntimeConfig config) {
    auto n = std::make_unique<Node>();
    n->id = id;
    n->host = std::make_unique<net::SimHost>(sim, net::SimHostConfig{net::MacAddress::local(id), ip(id)});
    n->port = n->host->attach(segment);
    n->tr = std::make_unique<SimTransport>(sim, *n->host);
    n->rnd = std::make_unique<SeededRandom>(id * 1000 + ++generation_);
    n->rt = std::make_unique<Runtime>(std::move(config), *n->tr, *n->rnd);
    nodes_.push_back(std::move(n));
    return *nodes_.back();
  }

  // A host without a runtime (attacker, raw peer).
  net::SimHost& raw_host(std::uint32_t id) {
    raw_.push_back(std::make_unique<net::SimHost>(sim, net::SimHostConfig{net::MacAddress::local(id), ip(id)}));
    raw_.back()->attach(segment);
    return *raw_.back();
  }

  void start_all() {
    for (auto& n : nodes_)
      if (!n->rt->running()) n->rt->start().ignore();
  }

  void run(Duration d) { sim.run_for(d); }

  // Replaces the node's runtime by a new one (same host, new transport and
  // SD state). graceful: stop() first (StopOffer / StopSubscribe go out);
  // otherwise whatever the old runtime sends while dying is lost (a crash).
  // `before_start` runs on the new runtime before start() (handlers, SecOC).
  template <class F>
  void restart(Node& n, RuntimeConfig config, bool graceful, F before_start) {
    if (graceful) {
      n.rt->stop();
      run(Duration::milliseconds(10));
    }
    net::DropEveryNthHook cut(1, net::match_ingress(n.port));
    segment.add_hook(&cut);
    n.rt.reset();
    n.tr.reset();
    run(Duration::milliseconds(1));
    segment.remove_hook(&cut);
    n.tr = std::make_unique<SimTransport>(sim, *n.host);
    n.rnd = std::make_unique<SeededRandom>(n.id * 1000 + ++generation_);
    n.rt = std::make_unique<Runtime>(std::move(config), *n.tr, *n.rnd);
    before_start(*n.rt);
    n.rt->start().ignore();
  }
  void restart(Node& n, RuntimeConfig config, bool graceful) {
    restart(n, std::move(config), graceful, [](Runtime&) {});
  }

  net::Simulator sim;
  net::Segment segment;

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<net::SimHost>> raw_;
  std::uint64_t generation_ = 0;
};

}  // namespace layersec::someip::testing_support
