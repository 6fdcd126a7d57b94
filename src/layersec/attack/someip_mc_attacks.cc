#include "layersec/attack/someip_mc_attacks.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/someip_attack_bed.h"
#include "layersec/base/bytes.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/someip/runtime.h"

namespace layersec::attack {

namespace {

using namespace someip_bed;  // NOLINT(google-build-using-namespace): the runner's own bed
namespace L = harness::layout;

constexpr std::uint8_t kGroup[4] = {239, 1, 2, 3};
constexpr std::uint16_t kGroupPort = 30600;
constexpr int kMembers = 2;

bool is_mc_event(const std::vector<std::uint8_t>& f) {
  return f.size() >= kPayload + kPayloadBytes && load_be16(&f[12]) == 0x0800 && f[23] == 17 && f[30] == kGroup[0] &&
         f[31] == kGroup[1] && f[32] == kGroup[2] && f[33] == kGroup[3] && load_be16(&f[kSomeip]) == L::kService &&
         f[kSomeip + 14] == 0x02;
}

// Alters the multicast notifications chosen as targets (in send order),
// keeps the last untouched one.
class McAttacker final : public net::SwitchHook {
 public:
  net::HookVerdict on_frame(const net::HookContext&, std::vector<std::uint8_t>& frame, net::SwitchControl&) override {
    if (!is_mc_event(frame)) return net::HookVerdict::forward();
    bool target = false;
    if (!schedule.empty()) {
      target = schedule.front();
      schedule.pop_front();
    }
    if (target && alter) {
      alter(frame);
      net::refresh_checksums(frame);
      ++altered;
    } else {
      last = frame;
    }
    return net::HookVerdict::forward();
  }
  Attacker::Alter alter;
  std::deque<bool> schedule;
  std::vector<std::uint8_t> last;
  std::uint64_t altered = 0;
};

struct MemberCounts {
  std::map<std::string, std::uint64_t> rejected;
  std::uint64_t legit = 0;
  std::uint64_t accepted = 0;
  std::set<std::uint32_t> pending;
};

class McBed {
 public:
  McBed(Config config, std::uint64_t seed) : config_(config), sim_(seed, TimePoint::from_ns(kEpochNs)), seg_(sim_) {
    const bool secured = is_secured(config);
    for (int i = 0; i < 1 + kMembers; ++i) {
      net::SimHostConfig hc;
      hc.mac = net::MacAddress::local(static_cast<std::uint32_t>(0x1000 + i));
      hc.ip = net::Ipv4Address::from_octets(10, 0, 0, static_cast<std::uint8_t>(i + 1));
      hc.prefix_length = 16;
      hc.dynamic_arp = false;
      hosts_[i] = std::make_unique<net::SimHost>(sim_, hc);
    }
    someip::SdTiming timing;
    timing.initial_delay_min = Duration::milliseconds(0);
    timing.initial_delay_max = Duration::milliseconds(10);

    someip::RuntimeConfig pc;
    pc.name = "publisher";
    pc.client_id = 0x0001;
    pc.client_port = L::kClientPort;
    pc.sd_timing = timing;
    someip::ServiceConfig svc;
    svc.service_id = L::kService;
    svc.instance_id = L::kInstance;
    svc.udp_port = L::kServicePort;
    for (int m = 0; m < kMembers; ++m) svc.methods.push_back({L::answer_method(m), true});
    someip::EventConfig ev;
    ev.event_id = L::kEvent;
    ev.eventgroups = {L::kEventgroup};
    svc.events = {ev};
    someip::EventgroupConfig eg;
    eg.eventgroup_id = L::kEventgroup;
    eg.multicast = someip::Endpoint{someip::IpAddress::v4(kGroup[0], kGroup[1], kGroup[2], kGroup[3]), kGroupPort,
                                    someip::L4Proto::kUdp};
    eg.multicast_threshold = 1;
    svc.eventgroups = {eg};
    pc.services = {svc};
    someip::SecocBindings pb = L::publisher_bindings(kMembers);
    if (counter_sync(config)) {
      someip::ServiceConfig sync;
      sync.service_id = kSyncService;
      sync.instance_id = 1;
      sync.udp_port = kSyncPort;
      sync.events = {someip::EventConfig{kSyncEvent, {kSyncGroup}, false, std::nullopt, std::nullopt}};
      sync.eventgroups = {someip::EventgroupConfig{kSyncGroup, std::nullopt, 1}};
      pc.services.push_back(sync);
      pb.sync_service = kSyncService;
      pb.sync_instance = 1;
      pb.sync_event = kSyncEvent;
      pb.sync_rx_channel = 0;
    }
    pub_ = build(0, std::move(pc), publisher_engine(config, kMembers), std::move(pb), secured, seed);
    for (int m = 0; m < kMembers; ++m) {
      someip::RuntimeConfig sc;
      sc.name = m == 0 ? "member-a" : "member-b";
      sc.client_id = L::subscriber_client_id(m);
      sc.client_port = L::kClientPort;
      sc.sd_timing = timing;
      someip::ClientConfig cl;
      cl.service_id = L::kService;
      cl.instance_id = L::kInstance;
      cl.udp_port = L::kSubscriberPort;
      cl.eventgroups = {L::kEventgroup};
      sc.clients = {cl};
      someip::SecocBindings sb = L::subscriber_bindings(m);
      if (counter_sync(config)) {
        sc.clients.push_back(someip::ClientConfig{kSyncService, 1, 0xFF, 0, {kSyncGroup}});
        sb.sync_service = kSyncService;
        sb.sync_instance = 1;
        sb.sync_event = kSyncEvent;
        sb.sync_rx_channel = 0;
      }
      subs_[m] = build(m + 1, std::move(sc), subscriber_engine(config, m), std::move(sb), secured, seed);
    }
    for (int i = 0; i < 1 + kMembers; ++i) {
      ports_[i] = hosts_[i]->attach(seg_);
      for (int j = 0; j < 1 + kMembers; ++j)
        if (i != j) hosts_[i]->add_static_arp(hosts_[j]->config().ip, hosts_[j]->config().mac);
    }
    for (int m = 0; m < kMembers; ++m) {
      subs_[m]->runtime().on_event(L::kService, someip::Runtime::kAnyEvent,
                                   [this, m](const someip::Notification& n) { classify(m, n); });
      subs_[m]->runtime().on_rejection([this, m](const someip::SecurityRejection& r) {
        const std::string prefix = r.method_or_event == kSyncEvent ? "secoc_sync_rejected_" : "secoc_rejected_";
        ++members_[m].rejected[r.unbound       ? std::string("secoc_unbound_rejected")
                               : r.unprotected ? prefix + "unprotected"
                                               : prefix + std::string(secoc::to_string(r.reason))];
      });
    }
    require(pub_->runtime().start().ok(), "publisher start");
    for (auto& s : subs_) require(s->runtime().start().ok(), "member start");
    const TimePoint deadline = sim_.now() + Duration::seconds(10);
    auto subscribed = [&] {
      bool ok = pub_->runtime().subscriber_count(L::kService, L::kInstance, L::kEventgroup) == kMembers &&
                (!counter_sync(config) || pub_->runtime().subscriber_count(kSyncService, 1, kSyncGroup) == kMembers);
      for (auto& s : subs_) ok = ok && s->runtime().available(L::kService, L::kInstance);
      return ok;
    };
    while (sim_.now() < deadline && !subscribed()) sim_.run_for(Duration::milliseconds(5));
    require(subscribed(), "multicast service discovery");
    sim_.run_for(Duration::milliseconds(50));
    if (secured) {
      const SecretBytes key = seeded_key(seed ^ 0x5EC0C0DEULL, secoc::key_size(event_profile(config).algorithm));
      const SecretBytes sync_key = seeded_key(seed ^ 0x5F1C0DEULL, 16);
      for (node::Stack* st : {pub_.get(), subs_[0].get(), subs_[1].get()}) {
        require(st->install_key(0, 1, key).ok(), "event key");
        if (counter_sync(config)) require(st->install_key(1, 1, sync_key).ok(), "sync key");
      }
      if (counter_sync(config)) {
        sim_.run_for(Duration::milliseconds(1200));
        for (auto& s : subs_) require(s->runtime().counters().secoc_syncs_accepted > 0, "member freshness sync");
      }
    }
    seg_.add_hook(&attacker_);
  }
  ~McBed() {
    seg_.remove_hook(&attacker_);
    for (auto& s : subs_) s.reset();
    pub_.reset();
  }
  McBed(const McBed&) = delete;
  McBed& operator=(const McBed&) = delete;

  net::Simulator& sim() { return sim_; }
  McAttacker& attacker() { return attacker_; }
  [[nodiscard]] bool secured() const { return is_secured(config_); }

  void send(bool target) {
    const std::uint32_t seq = next_seq_++;
    if (!target) {
      for (auto& m : members_) m.pending.insert(seq);
      legit_sent_ += kMembers;
    }
    attacker_.schedule.push_back(target);
    std::vector<std::uint8_t> p(kPayloadBytes);
    store_be32(p.data(), seq);
    store_be32(p.data() + 4, ~seq);
    require(pub_->runtime().notify(L::kService, L::kInstance, L::kEvent, p).ok(), "notify");
  }
  void inject(const std::vector<std::uint8_t>& f) { seg_.inject(ports_[0], f); }
  // The last multicast notification, addressed to member B by unicast.
  [[nodiscard]] std::vector<std::uint8_t> to_member_b() const {
    std::vector<std::uint8_t> f = attacker_.last;
    const auto& b = hosts_[2]->config();
    for (std::size_t i = 0; i < 6; ++i) f[i] = b.mac.bytes[i];
    const std::uint32_t ip = (10u << 24) | 3u;
    store_be32(&f[30], ip);
    store_be16(&f[36], L::kSubscriberPort);
    net::refresh_checksums(f);
    return f;
  }

  void begin() {
    for (auto& m : members_) {
      m.legit = 0;
      m.accepted = 0;
      m.pending.clear();
      before_[&m - members_] = m.rejected;
      drops_before_[&m - members_] = drops(&m - members_);
    }
    legit_sent_ = 0;
    attacker_.schedule.clear();
    attacker_.alter = nullptr;
    attacker_.altered = 0;
  }
  void end(AttackRow& row) {
    sim_.run_for(Duration::milliseconds(20));
    for (int m = 0; m < kMembers; ++m) {
      for (const auto& [reason, n] : members_[m].rejected) {
        auto it = before_[m].find(reason);
        const std::uint64_t d = n - (it == before_[m].end() ? 0 : it->second);
        if (d > 0) row.rejected[reason] += d;
      }
      const std::map<std::string, std::uint64_t> now = drops(m);
      for (const auto& [reason, n] : now) {
        auto it = drops_before_[m].find(reason);
        const std::uint64_t d = n - (it == drops_before_[m].end() ? 0 : it->second);
        if (d > 0) row.rejected[reason] += d;
      }
      row.accepted += members_[m].accepted;
      row.legit_delivered += members_[m].legit;
    }
    row.legit_lost = legit_sent_ - row.legit_delivered;
  }

 private:
  std::unique_ptr<node::Stack> build(int i, someip::RuntimeConfig rc, secoc::EngineConfig ec,
                                     someip::SecocBindings b, bool secured, std::uint64_t seed) {
    node::StackSpec spec;
    spec.runtime = std::move(rc);
    spec.seed = seed * 7919 + static_cast<std::uint64_t>(i) + 1;
    spec.transport = node::SimTransportSpec{&sim_, hosts_[i].get()};
    if (secured) {
      node::SecocSpec s;
      s.engine = std::move(ec);
      s.bindings = std::move(b);
      spec.secoc = std::move(s);
    }
    return node::build_stack(std::move(spec));
  }
  // SOME/IP and UDP refusals of member m, by name.
  [[nodiscard]] std::map<std::string, std::uint64_t> drops(std::ptrdiff_t m) const {
    std::map<std::string, std::uint64_t> d;
    const auto& c = subs_[m]->runtime().counters();
    for (std::size_t r = 1; r < static_cast<std::size_t>(someip::DropReason::kCount); ++r)
      d["someip_dropped_" + std::string(someip::to_string(static_cast<someip::DropReason>(r)))] = c.rx.dropped[r];
    d["someip_notifications_unsubscribed"] = c.notifications_unsubscribed;
    d["udp_malformed"] = hosts_[m + 1]->stats().rx_malformed;
    d["udp_no_listener"] = hosts_[m + 1]->stats().rx_no_listener;
    return d;
  }
  void classify(int m, const someip::Notification& n) {
    MemberCounts& mc = members_[m];
    if (n.event_id == L::kEvent && n.payload.size() == kPayloadBytes) {
      const std::uint32_t seq = load_be32(n.payload.data());
      if (load_be32(n.payload.data() + 4) == ~seq && mc.pending.erase(seq) == 1) {
        ++mc.legit;
        return;
      }
    }
    ++mc.accepted;
  }

  Config config_;
  net::Simulator sim_;
  net::Segment seg_;
  std::unique_ptr<net::SimHost> hosts_[1 + kMembers];
  net::PortId ports_[1 + kMembers] = {0, 0, 0};
  std::unique_ptr<node::Stack> pub_;
  std::unique_ptr<node::Stack> subs_[kMembers];
  McAttacker attacker_;
  MemberCounts members_[kMembers];
  std::map<std::string, std::uint64_t> before_[kMembers];
  std::map<std::string, std::uint64_t> drops_before_[kMembers];
  std::uint32_t next_seq_ = 1;
  std::uint64_t legit_sent_ = 0;
};

void run_mc_config(Config config, const char* layer, const char* name, const AttackOptions& options,
                   std::vector<AttackRow>& rows) {
  const std::uint64_t n = options.attempts;
  McBed bed(config, options.seed);
  net::SimRng rng(options.seed * 0x2545F4914F6CDD1DULL + static_cast<std::uint64_t>(config));
  const ConfigInfo info{config, layer, name};
  auto in_flight = [&](AttackRow& r, Attacker::Alter alter) {
    bed.begin();
    bed.attacker().alter = std::move(alter);
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send(true);
      bed.sim().run_for(kGap);
      bed.send(false);
      bed.sim().run_for(kGap);
    }
    r.attempts = bed.attacker().altered;
    bed.end(r);
  };
  auto injected = [&](AttackRow& r, const std::function<std::vector<std::uint8_t>()>& make) {
    bed.begin();
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send(false);
      bed.sim().run_for(kGap);
      bed.inject(make());
      bed.sim().run_for(kGap);
    }
    r.attempts = n;
    bed.end(r);
  };
  {
    AttackRow r = make_row(info, "A2.mc.replay", "each multicast notification re-sent at once (judged by both members)");
    injected(r, [&] { return bed.attacker().last; });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.mc.bitflip.payload", "one payload bit flipped in a multicast notification in flight");
    in_flight(r, [&](std::vector<std::uint8_t>& f) { flip_in(f, kPayload, kPayloadBytes, rng); });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.mc.relabel.unbound-id", "event id of a multicast notification relabelled to 0x8002");
    in_flight(r, [](std::vector<std::uint8_t>& f) { store_be16(&f[kSomeip + 2], kUnboundEvent); });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.mc.member-a-to-b",
                           "the notification member A received re-sent to member B by unicast");
    injected(r, [&] { return bed.to_member_b(); });
    rows.push_back(std::move(r));
  }
}

}  // namespace

std::vector<AttackRow> run_someip_multicast_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  run_mc_config(Config::kUnsecured, "someip", "someip-unsecured-multicast", options, rows);
  run_mc_config(Config::kCounter, "secoc", "secoc-vendor-counter-multicast", options, rows);
  return rows;
}

}  // namespace layersec::attack
