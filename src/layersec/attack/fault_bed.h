// The simulated bed of the fault rows and of the soak's SOME/IP receiver
// (internal to the attack module): a publisher and a subscriber built by
// node::build_stack on one simulated switch, counter-freshness SecOC with
// sync messages, optionally hop-by-hop MACsec; fault_attacks.cc says more.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/pn_state.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/error.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/secoc_filter.h"

namespace layersec::attack::fault_bed {

namespace L = harness::layout;

constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::uint32_t kSdTtlSeconds = 3;
constexpr Duration kEventPeriod = Duration::milliseconds(10);
constexpr std::uint16_t kSyncService = 0x1240;
constexpr std::uint16_t kSyncEvent = 0x8100;
constexpr std::uint16_t kSyncGroup = 0x0010;
constexpr std::uint16_t kSyncPort = 30520;

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("fault set-up: " + what);
}

inline SecretBytes seeded_key(std::uint64_t seed, std::size_t n) {
  net::SimRng rng(seed);
  SecretBytes k(n);
  for (auto& b : k.mutable_span()) b = static_cast<std::uint8_t>(rng.next_u64());
  return k;
}

inline secoc::EngineConfig publisher_engine() {
  secoc::EngineConfig e = L::publisher_engine_config(1);
  e.tx_pdus[0].profile = secoc::PduProfile::vendor();
  e.key_groups.push_back({"sync", secoc::AuthAlgorithm::kCmacAes128});
  e.sync_tx = {true, L::kSyncDataIdBase, 1, 64, Duration::seconds(1)};
  return e;
}

inline secoc::EngineConfig subscriber_engine() {
  secoc::EngineConfig e = L::subscriber_engine_config(0);
  e.rx_pdus[0].profile = secoc::PduProfile::vendor();
  e.key_groups.push_back({"sync", secoc::AuthAlgorithm::kCmacAes128});
  e.sync_rx[0] = {0, L::kSyncDataIdBase, 1, 64, Duration::seconds(1), secoc::kDefaultMaxAge};
  return e;
}

// Drops every frame from or to one host while `down` (its link is down).
class LinkCut final : public net::SwitchHook {
 public:
  net::HookVerdict on_frame(const net::HookContext& ctx, std::vector<std::uint8_t>& frame,
                            net::SwitchControl&) override {
    if (!down || frame.size() < 14) return net::HookVerdict::forward();
    const bool to_host = std::equal(mac.bytes.begin(), mac.bytes.end(), frame.begin()) || (frame[0] & 1u) != 0;
    if (ctx.ingress == port || to_host) {
      ++dropped;
      return net::HookVerdict::dropped();
    }
    return net::HookVerdict::forward();
  }
  bool down = false;
  net::PortId port = 0;
  net::MacAddress mac;
  std::uint64_t dropped = 0;
};

// Keeps a copy of the last notification frame of the event from `port`.
class EventCapture final : public net::SwitchHook {
 public:
  net::HookVerdict on_frame(const net::HookContext& ctx, std::vector<std::uint8_t>& frame,
                            net::SwitchControl&) override {
    if (ctx.ingress == port && frame.size() > 42 + 16 && load_be16(&frame[12]) == 0x0800 && frame[23] == 17 &&
        load_be16(&frame[36]) == L::kSubscriberPort && load_be16(&frame[42]) == L::kService) {
      if (alter_next) {
        alter_next(frame);
        alter_next = nullptr;
        ++altered;
      } else {
        last = frame;
      }
    }
    return net::HookVerdict::forward();
  }
  net::PortId port = 0;
  std::vector<std::uint8_t> last;
  // When set, alters the next notification in flight (then cleared).
  std::function<void(std::vector<std::uint8_t>&)> alter_next;
  std::uint64_t altered = 0;
};

class FaultBed {
 public:
  FaultBed(bool hybrid, std::uint64_t seed, bool static_hop_sak = false)
      : hybrid_(hybrid), seed_(seed), sim_(seed, TimePoint::from_ns(kEpochNs)), seg_(sim_) {
    static_sak = static_hop_sak;  // before the first build: the SecYs use their PN stores from the start
    char tmpl[] = "/tmp/layersec-fault-XXXXXX";
    require(::mkdtemp(tmpl) != nullptr, "mkdtemp");
    dir_ = tmpl;
    for (int i = 0; i < 2; ++i) {
      net::SimHostConfig hc;
      hc.mac = net::MacAddress::local(static_cast<std::uint32_t>(0x1000 + i));
      hc.ip = net::Ipv4Address::from_octets(10, 0, 0, static_cast<std::uint8_t>(i + 1));
      hc.prefix_length = 16;
      hc.dynamic_arp = false;
      hosts_[i] = std::make_unique<net::SimHost>(sim_, hc);
      if (hybrid_) {
        shims_[i] = nullptr;
        ports_[i] = seg_.add_port({}, nullptr);
        seg_.set_port_processor(ports_[i], &switch_ports_);
      } else {
        ports_[i] = hosts_[i]->attach(seg_);
      }
    }
    hosts_[0]->add_static_arp(hosts_[1]->config().ip, hosts_[1]->config().mac);
    hosts_[1]->add_static_arp(hosts_[0]->config().ip, hosts_[0]->config().mac);
    cut_.port = ports_[1];
    cut_.mac = hosts_[1]->config().mac;
    seg_.add_hook(&cut_);
    gone_.port = ports_[0];
    gone_.mac = hosts_[0]->config().mac;
    seg_.add_hook(&gone_);
    capture_.port = ports_[0];
    seg_.add_hook(&capture_);

    build(1, true);
    build(0, true);
    require(sub_->runtime().start().ok(), "subscriber start");
    require(pub_->runtime().start().ok(), "publisher start");
    require(run_until([this] { return subscribed(); }, Duration::seconds(10)), "service discovery");
    install_keys(*sub_);
    install_keys(*pub_);
    sim_.run_for(Duration::milliseconds(1200));
    require(sub_->runtime().counters().secoc_syncs_accepted > 0, "freshness sync");
  }
  ~FaultBed() {
    seg_.remove_hook(&capture_);
    seg_.remove_hook(&gone_);
    seg_.remove_hook(&cut_);
    pub_.reset();
    sub_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FaultBed(const FaultBed&) = delete;
  FaultBed& operator=(const FaultBed&) = delete;

  net::Simulator& sim() { return sim_; }
  LinkCut& cut() { return cut_; }

  [[nodiscard]] bool subscribed() const {
    return pub_ && sub_->runtime().available(L::kService, L::kInstance) &&
           pub_->runtime().subscriber_count(L::kService, L::kInstance, L::kEventgroup) == 1 &&
           pub_->runtime().subscriber_count(kSyncService, 1, kSyncGroup) == 1;
  }
  [[nodiscard]] bool service_available() const { return sub_->runtime().available(L::kService, L::kInstance); }

  // The publisher's host crashes: its stack is destroyed, its link silent.
  void crash_publisher() {
    gone_.down = true;
    if (hybrid_) {
      // The switch port keeps its SecY bound until the host returns (the
      // hooks drop every frame to or from the port meanwhile).
      seg_.set_receiver(ports_[0], nullptr);
      hosts_[0]->connect(nullptr);
    }
    if (pub_ && pub_->macsec_link() != nullptr) last_tx_pn_ = pub_->macsec_link()->secy().tx_sa_status(0).next_pn;
    pub_.reset();
    shims_[0].reset();
  }
  // Hybrid: the returning host keeps its static SAKs (no key agreement) with
  // a PN store (node::MacsecSpec::pn_store), and the switch port keeps its
  // SecY. Set by the constructor.
  bool static_sak = false;
  // The host SecY's next PN before the crash, and the rebuilt one's now.
  [[nodiscard]] std::uint64_t pn_before_crash() const { return last_tx_pn_; }
  // The rebuilt SecY's first PN (its next PN before it sent anything).
  [[nodiscard]] std::uint64_t pn_resumed_at() const { return resumed_pn_; }
  [[nodiscard]] std::uint64_t pn_now() const {
    return pub_ && pub_->macsec_link() != nullptr ? pub_->macsec_link()->secy().tx_sa_status(0).next_pn : 0;
  }
  // It comes back: rebuilt from its state file (a new trip), its keys
  // installed again from key management, its runtime started; nothing else.
  void restore_publisher() {
    gone_.down = false;
    if (!static_sak) ++generation_;
    build(0, false);
    resumed_pn_ = pub_->macsec_link() != nullptr ? pub_->macsec_link()->secy().tx_sa_status(0).next_pn : 0;
    require(pub_->runtime().start().ok(), "publisher restart");
    install_keys(*pub_);
  }

  // One event period: the publisher (when present) notifies one event.
  void tick() { tick(kEventPeriod); }
  void tick(Duration period) {
    if (pub_) {
      const std::uint32_t seq = next_seq_++;
      std::vector<std::uint8_t> p(8);
      store_be32(p.data(), seq);
      store_be32(p.data() + 4, ~seq);
      if (pub_->runtime().notify(L::kService, L::kInstance, L::kEvent, p).ok()) {
        pending_.insert(seq);
        ++legit_sent_;
      } else {
        ++notify_refused_;
      }
    }
    sim_.run_for(period);
  }
  // A notification the switch alters in flight with `alter` (an attack, not
  // a legitimate message: anything of it delivered counts as stray).
  void send_target(std::function<void(std::vector<std::uint8_t>&)> alter, Duration period) {
    if (pub_) {
      const std::uint32_t seq = next_seq_++;
      std::vector<std::uint8_t> p(8);
      store_be32(p.data(), seq);
      store_be32(p.data() + 4, ~seq);
      capture_.alter_next = std::move(alter);
      if (!pub_->runtime().notify(L::kService, L::kInstance, L::kEvent, p).ok()) capture_.alter_next = nullptr;
    }
    sim_.run_for(period);
  }
  [[nodiscard]] std::uint64_t altered() const { return capture_.altered; }
  // Puts `frame` into the switch as if the publisher's host had sent it.
  void inject(const std::vector<std::uint8_t>& frame) { seg_.inject(ports_[0], frame); }
  // The last event notification the publisher sent (empty before the first).
  [[nodiscard]] const std::vector<std::uint8_t>& last_event_frame() const { return capture_.last; }
  template <typename Pred>
  bool run_until(Pred done, Duration limit) {
    const TimePoint deadline = sim_.now() + limit;
    while (sim_.now() < deadline && !done()) sim_.run_for(Duration::milliseconds(5));
    return done();
  }

  [[nodiscard]] std::uint64_t delivered() const { return delivered_; }
  [[nodiscard]] std::uint64_t stray() const { return stray_; }
  [[nodiscard]] std::uint64_t legit_sent() const { return legit_sent_; }
  [[nodiscard]] std::uint64_t notify_refused() const { return notify_refused_; }
  // Frames the subscriber's SecY verified and delivered (hybrid), else 0.
  [[nodiscard]] std::uint64_t macsec_verified() const {
    return sub_->macsec_link() != nullptr ? sub_->macsec_link()->stats().rx_delivered : 0;
  }
  [[nodiscard]] std::uint64_t trip() const { return pub_ && pub_->engine() ? pub_->engine()->trip() : 0; }
  // The subscriber's rejections (its own counter names) and MACsec drops.
  [[nodiscard]] std::map<std::string, std::uint64_t> reasons() const {
    std::map<std::string, std::uint64_t> r = security_;
    if (sub_->macsec_link() != nullptr && sub_->macsec_link()->stats().rx_dropped > 0)
      r["macsec_rx_dropped"] = sub_->macsec_link()->stats().rx_dropped;
    std::uint64_t switch_dropped = 0;
    for (const auto& s : switch_secy_)
      if (s) switch_dropped += s->stats().rx_dropped;
    if (switch_dropped > 0) r["macsec_switch_rx_dropped"] = switch_dropped;
    const auto& rx = sub_->runtime().counters().rx;
    for (std::size_t i = 1; i < static_cast<std::size_t>(someip::DropReason::kCount); ++i) {
      if (rx.dropped[i] > 0)
        r["someip_dropped_" + std::string(someip::to_string(static_cast<someip::DropReason>(i)))] = rx.dropped[i];
    }
    if (hosts_[1]->stats().rx_malformed > 0) r["udp_malformed"] = hosts_[1]->stats().rx_malformed;
    return r;
  }

 private:
  void build(int i, bool first) {
    someip::SdTiming timing;
    timing.initial_delay_min = Duration::milliseconds(0);
    timing.initial_delay_max = Duration::milliseconds(10);
    timing.ttl = kSdTtlSeconds;
    someip::RuntimeConfig rc;
    someip::SecocBindings b;
    if (i == 0) {
      rc.name = "publisher";
      rc.client_id = 0x0001;
      someip::ServiceConfig svc;
      svc.service_id = L::kService;
      svc.instance_id = L::kInstance;
      svc.udp_port = L::kServicePort;
      svc.methods.push_back({L::answer_method(0), true});
      someip::EventConfig ev;
      ev.event_id = L::kEvent;
      ev.eventgroups = {L::kEventgroup};
      svc.events = {ev};
      someip::EventgroupConfig eg;
      eg.eventgroup_id = L::kEventgroup;
      svc.eventgroups = {eg};
      rc.services = {svc};
      someip::ServiceConfig sync;
      sync.service_id = kSyncService;
      sync.instance_id = 1;
      sync.udp_port = kSyncPort;
      sync.events = {someip::EventConfig{kSyncEvent, {kSyncGroup}, false, std::nullopt, std::nullopt}};
      sync.eventgroups = {someip::EventgroupConfig{kSyncGroup, std::nullopt, 1}};
      rc.services.push_back(sync);
      b = L::publisher_bindings(1);
    } else {
      rc.name = "subscriber";
      rc.client_id = L::subscriber_client_id(0);
      someip::ClientConfig cl;
      cl.service_id = L::kService;
      cl.instance_id = L::kInstance;
      cl.udp_port = L::kSubscriberPort;
      cl.eventgroups = {L::kEventgroup};
      rc.clients = {cl, someip::ClientConfig{kSyncService, 1, 0xFF, 0, {kSyncGroup}}};
      b = L::subscriber_bindings(0);
    }
    rc.client_port = L::kClientPort;
    rc.sd_timing = timing;
    b.sync_service = kSyncService;
    b.sync_instance = 1;
    b.sync_event = kSyncEvent;
    b.sync_rx_channel = 0;

    node::StackSpec spec;
    spec.runtime = std::move(rc);
    spec.seed = seed_ * 7919 + static_cast<std::uint64_t>(i) + 1 + 101 * generation_;
    spec.transport = node::SimTransportSpec{&sim_, hosts_[i].get()};
    if (hybrid_) {
      // The hop's link keys: a returning host gets a fresh pair (the key
      // agreement's new SAKs): a static SAK restarting at PN 1 would repeat
      // nonces and is refused by the switch port as late.
      const auto host_sci = macsec::Sci::from_parts(hosts_[i]->config().mac.bytes.data(), 1);
      const auto sw_mac = net::MacAddress::local(static_cast<std::uint32_t>(0xF000 + i));
      const auto sw_sci = macsec::Sci::from_parts(sw_mac.bytes.data(), 1);
      const std::uint64_t k = seed_ * 31 + static_cast<std::uint64_t>(i) * 2 + 1000 * generation_;
      const SecretBytes up = seeded_key(k + 1, 16);
      const SecretBytes down = seeded_key(k + 2, 16);
      spec.macsec = node::hop_macsec_spec(host_sci, sw_sci, up, down, "switch");
      if (static_sak) {
        // The same SAK across rebuilds: only its PN store keeps the PNs
        // (GCM nonces) from repeating (node::MacsecSpec).
        spec.macsec->fresh_key = false;
        spec.macsec->pn_store = &host_pn_store_[static_cast<std::size_t>(i)];
        spec.macsec->pn_reserve_block = 16;
        spec.macsec->new_key = first;
      }
      if (!switch_secy_[i] || !static_sak) {
        auto fresh = std::make_unique<macsec::MacsecLink>(
            node::make_secy(node::hop_macsec_spec(sw_sci, host_sci, down, up, "host")));
        switch_ports_.bind(ports_[i], fresh.get());  // before the old one goes
        switch_secy_[i] = std::move(fresh);
      }
    }
    node::SecocSpec s;
    s.engine = i == 0 ? publisher_engine() : subscriber_engine();
    s.bindings = std::move(b);
    s.state_file = dir_ + (i == 0 ? "/publisher.state" : "/subscriber.state");
    s.first_start = first;
    spec.secoc = std::move(s);
    auto stack = node::build_stack(std::move(spec));
    if (hybrid_) {
      shims_[i] = std::make_unique<net::FrameShim>(macsec::make_sim_shim(*stack->macsec_link()));
      seg_.set_receiver(ports_[i], shims_[i].get());
      shims_[i]->connect(&seg_.sender(ports_[i]), hosts_[i].get());
      hosts_[i]->connect(shims_[i].get());
      switch_ports_.bind(ports_[i], switch_secy_[i].get());
    }
    if (i == 0) {
      pub_ = std::move(stack);
      return;
    }
    sub_ = std::move(stack);
    sub_->runtime().on_event(L::kService, someip::Runtime::kAnyEvent, [this](const someip::Notification& n) {
      if (n.event_id == L::kEvent && n.payload.size() == 8) {
        const std::uint32_t seq = load_be32(n.payload.data());
        if (load_be32(n.payload.data() + 4) == ~seq && pending_.erase(seq) == 1) {
          ++delivered_;
          return;
        }
      }
      ++stray_;
    });
    sub_->runtime().on_rejection([this](const someip::SecurityRejection& r) {
      ++security_[r.unbound       ? "secoc_unbound_rejected"
                  : r.unprotected ? "secoc_rejected_unprotected"
                                  : "secoc_rejected_" + std::string(secoc::to_string(r.reason))];
    });
  }
  void install_keys(node::Stack& st) {
    require(st.install_key(0, 1, seeded_key(seed_ ^ 0x5EC0C0DEULL, 32)).ok(), "event key");
    require(st.install_key(1, 1, seeded_key(seed_ ^ 0x5F1C0DEULL, 16)).ok(), "sync key");
  }

  bool hybrid_;
  std::uint64_t seed_;
  std::uint64_t generation_ = 0;
  std::array<macsec::MemoryPnStore, 2> host_pn_store_;  // static_sak: survives a crash, as a state file would
  std::uint64_t last_tx_pn_ = 0;
  std::uint64_t resumed_pn_ = 0;
  std::string dir_;
  net::Simulator sim_;
  net::Segment seg_;
  std::unique_ptr<net::SimHost> hosts_[2];
  std::unique_ptr<macsec::MacsecLink> switch_secy_[2];
  std::unique_ptr<net::FrameShim> shims_[2];
  macsec::MacsecPortProcessor switch_ports_;
  net::PortId ports_[2] = {0, 0};
  LinkCut cut_;   // the subscriber's link
  LinkCut gone_;  // the publisher's link
  EventCapture capture_;
  std::unique_ptr<node::Stack> pub_;
  std::unique_ptr<node::Stack> sub_;
  std::map<std::string, std::uint64_t> security_;
  std::uint32_t next_seq_ = 1;
  std::set<std::uint32_t> pending_;
  std::uint64_t legit_sent_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint64_t stray_ = 0;
  std::uint64_t notify_refused_ = 0;
};

}  // namespace layersec::attack::fault_bed
