#include "layersec/someip/sd_pair_sim.h"

#include <algorithm>
#include <string>
#include <utility>

#include "layersec/someip/service_discovery.h"

namespace layersec::someip {

using nlohmann::json;

SdPairRun simulate_sd_pair(Duration duration, std::uint64_t seed) {
  const Endpoint group{IpAddress::v4(224, 224, 224, 245), kSdPort, L4Proto::kUdp};
  const Endpoint a_sd{IpAddress::v4(10, 0, 0, 1), kSdPort, L4Proto::kUdp};
  const Endpoint b_sd{IpAddress::v4(10, 0, 0, 2), kSdPort, L4Proto::kUdp};
  SeededRandom rnd(seed);
  ServiceDiscovery a(SdConfig{a_sd, group}, rnd);
  ServiceDiscovery b(SdConfig{b_sd, group}, rnd);
  SdTiming t;
  t.initial_delay_min = Duration::milliseconds(10);
  t.initial_delay_max = Duration::milliseconds(50);
  t.repetitions_base_delay = Duration::milliseconds(30);
  t.repetitions_max = 3;
  t.cyclic_offer_delay = Duration::milliseconds(1000);
  t.ttl = 3;
  SdServerConfig sc;
  sc.service_id = 0x1234;
  sc.instance_id = 0x0001;
  sc.major_version = 1;
  sc.minor_version = 0;
  sc.timing = t;
  // The server comes up later than the client, so the capture shows finds.
  sc.timing.initial_delay_min = Duration::milliseconds(100);
  sc.timing.initial_delay_max = Duration::milliseconds(200);
  sc.udp_endpoint = Endpoint{a_sd.address, 30509, L4Proto::kUdp};
  sc.eventgroups.push_back({0x0010, Endpoint{IpAddress::v4(239, 1, 1, 1), 30600, L4Proto::kUdp}});
  auto& server = a.add_server(sc);
  SdClientConfig cc;
  cc.service_id = 0x1234;
  cc.timing = t;
  cc.udp_endpoint = Endpoint{b_sd.address, 40001, L4Proto::kUdp};
  cc.eventgroups = {0x0010};
  auto& client = b.add_client(cc);

  SdPairRun run;
  TimePoint now = TimePoint::from_ns(0);
  struct Pending {
    ServiceDiscovery* from;
    Endpoint local;
    SdActions actions;
  };
  std::vector<Pending> queue;
  auto record = [&](ServiceDiscovery* from, const Endpoint& local, SdActions& acts) {
    for (const auto& e : acts.events)
      run.events.push_back(json{{"t_ms", now.ns() / 1000000}, {"node", local.address.to_string()},
                                {"event", std::string(to_string(e.kind))}, {"service", e.service_id},
                                {"instance", e.instance_id}, {"eventgroup", e.eventgroup_id}});
    acts.events.clear();
    queue.push_back(Pending{from, local, std::move(acts)});
  };
  // Delivers queued datagrams (in order) to the other node, which may queue more.
  auto drain = [&]() {
    while (!queue.empty()) {
      Pending p = std::move(queue.front());
      queue.erase(queue.begin());
      for (auto& d : p.actions.datagrams) {
        run.datagrams.push_back(
            CapturedDatagram{now, p.local.address, d.destination.address, kSdPort, d.destination.port, d.bytes});
        ServiceDiscovery* to = p.from == &a ? &b : &a;
        const Endpoint to_local = p.from == &a ? b_sd : a_sd;
        if (d.multicast || d.destination == to_local) {
          SdActions acts;
          to->on_datagram(now, d.bytes, p.local, d.multicast, acts);
          record(to, to_local, acts);
        }
      }
    }
  };
  {
    SdActions acts;
    a.start_offer(now, server);
    b.request(now, client, acts);
    record(&b, b_sd, acts);
    drain();
  }
  const TimePoint end = TimePoint::from_ns(0) + duration;
  while (true) {
    const TimePoint next = std::min(a.next_deadline(), b.next_deadline());
    if (next > end) break;
    now = next;
    SdActions aa, bb;
    a.on_timer(now, aa);
    record(&a, a_sd, aa);
    b.on_timer(now, bb);
    record(&b, b_sd, bb);
    drain();
  }
  {  // orderly shutdown: StopSubscribe, then StopOffer
    now = end;
    SdActions acts;
    b.release(now, client, acts);
    record(&b, b_sd, acts);
    drain();
    SdActions acts2;
    a.stop_offer(now, server, acts2);
    record(&a, a_sd, acts2);
    drain();
  }
  return run;
}

}  // namespace layersec::someip
