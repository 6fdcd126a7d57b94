#include "layersec/attack/someip_attacks.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/macsec/link.h"
#include "layersec/net/recorder.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/secoc_filter.h"

namespace layersec::attack {

namespace {

namespace L = harness::layout;

// Ethernet (14) + IPv4 without options (20) + UDP (8): where SOME/IP starts.
constexpr std::size_t kSomeip = 42;
constexpr std::size_t kPayload = kSomeip + 16;  // the Authentic I-PDU (vendor profile: no auth header)
constexpr std::size_t kPayloadBytes = 8;        // seq (be32) | ~seq (be32)
constexpr std::size_t kMacBytes = 8;            // vendor profile: 64-bit MAC
constexpr std::uint16_t kUnboundEvent = 0x8002;  // configured nowhere, bound nowhere
// Simulated wall-clock epoch (Unix seconds), as the testbed's.
constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::size_t kDelayedHistory = 200;

enum class Config : std::uint8_t { kUnsecured, kCounter, kTimestamp, kHybrid };

struct ConfigInfo {
  Config config;
  const char* layer;
  const char* name;
};

constexpr ConfigInfo kConfigs[] = {
    {Config::kUnsecured, "someip", "someip-unsecured"},
    {Config::kCounter, "secoc", "secoc-vendor-counter"},
    {Config::kTimestamp, "secoc", "secoc-vendor-timestamp"},
    {Config::kHybrid, "hybrid", "hybrid-vendor-macsec-hop"},
};

// Every frame as it arrives at the switch from a link: what a wiretap sees.
// Counts the frames and those in which the 8 payload bytes (seq | ~seq) of
// a notification with a seq in [first, first + count) appear anywhere.
class WireTap final : public net::FrameRecorder {
 public:
  void record(TimePoint, ByteSpan f) override {
    if (!on) return;
    ++frames;
    for (std::size_t p = 0; p + kPayloadBytes <= f.size(); ++p) {
      const std::uint32_t seq = load_be32(&f[p]);
      if (seq - first < count && load_be32(&f[p + 4]) == ~seq) {
        ++readable;
        return;
      }
    }
  }
  bool on = false;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::uint64_t frames = 0;
  std::uint64_t readable = 0;
};

secoc::PduProfile event_profile(Config c) {
  secoc::PduProfile p = secoc::PduProfile::vendor();
  if (c == Config::kTimestamp) p.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  return p;
}

// Counter freshness with a time bound: the publisher sends a sync message
// (a new reset cycle) every second as a notification of its own service, and
// the subscriber accepts a reset cycle only within maxAge (1 s) of its start
// plus one period, as `layersec node` does by default. (The scenario layout
// itself runs without sync messages and without a time bound.)
constexpr std::uint16_t kSyncService = 0x1240;
constexpr std::uint16_t kSyncEvent = 0x8100;
constexpr std::uint16_t kSyncGroup = 0x0010;
constexpr std::uint16_t kSyncPort = 30520;
bool counter_sync(Config c) { return c == Config::kCounter || c == Config::kHybrid; }

secoc::EngineConfig publisher_engine(Config c) {
  secoc::EngineConfig e = L::publisher_engine_config(1);
  e.tx_pdus[0].profile = event_profile(c);
  if (counter_sync(c)) {
    e.key_groups.push_back({"sync", secoc::AuthAlgorithm::kCmacAes128});
    e.sync_tx = {true, L::kSyncDataIdBase, 1, 64, Duration::seconds(1)};
  }
  return e;
}

secoc::EngineConfig subscriber_engine(Config c) {
  secoc::EngineConfig e = L::subscriber_engine_config(0);
  auto& r = e.rx_pdus[0];
  r.profile = event_profile(c);
  if (c == Config::kTimestamp) {
    r.has_sync_channel = false;
    r.max_age = Duration::seconds(1);
  }
  if (counter_sync(c)) {
    e.key_groups.push_back({"sync", secoc::AuthAlgorithm::kCmacAes128});
    e.sync_rx[0] = {0, L::kSyncDataIdBase, 1, 64, Duration::seconds(1), secoc::kDefaultMaxAge};
  }
  return e;
}

SecretBytes seeded_key(std::uint64_t seed, std::size_t n = 32) {
  net::SimRng rng(seed);
  SecretBytes k(n);
  for (auto& b : k.mutable_span()) b = static_cast<std::uint8_t>(rng.next_u64());
  return k;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("someip attack set-up: " + what);
}

bool is_event_frame(const std::vector<std::uint8_t>& f) {
  return f.size() >= kPayload + kPayloadBytes && load_be16(&f[12]) == 0x0800 && f[23] == 17 &&
         load_be16(&f[36]) == L::kSubscriberPort && load_be16(&f[kSomeip]) == L::kService && f[kSomeip + 14] == 0x02;
}

// Sets the IPv4 total length, UDP length and SOME/IP length after the frame
// was resized (the SOME/IP message fills the datagram), then the checksums.
void fix_lengths(std::vector<std::uint8_t>& f) {
  store_be16(&f[16], static_cast<std::uint16_t>(f.size() - 14));
  store_be16(&f[38], static_cast<std::uint16_t>(f.size() - 34));
  store_be32(&f[kSomeip + 4], static_cast<std::uint32_t>(f.size() - kSomeip - 8));
  net::refresh_checksums(f);
}

// The on-path attacker at the switch: alters the frames of the publisher's
// notifications chosen as targets in flight, keeps the last untouched one
// (and, when capturing, a copy of every frame).
class Attacker final : public net::SwitchHook {
 public:
  using Alter = std::function<void(std::vector<std::uint8_t>&)>;
  net::HookVerdict on_frame(const net::HookContext&, std::vector<std::uint8_t>& frame, net::SwitchControl&) override {
    if (!is_event_frame(frame)) return net::HookVerdict::forward();
    const std::uint32_t seq = load_be32(&frame[kPayload]);
    // Each target passes once: forgotten here, so the set stays small.
    if (hold > Duration::zero() && targets.erase(seq) == 1) {
      ++altered;
      return net::HookVerdict::delayed(hold);
    }
    if (alter && targets.erase(seq) == 1) {
      alter(frame);
      net::refresh_checksums(frame);
      ++altered;
    } else {
      last = frame;
    }
    return net::HookVerdict::forward();
  }

  Alter alter;
  Duration hold = Duration::zero();  // > 0: targets are held back this long instead of altered
  std::set<std::uint32_t> targets;
  std::vector<std::uint8_t> last;
  std::uint64_t altered = 0;
};

// The subscriber's counters at one moment, to diff around a class.
struct Snapshot {
  someip::RxCounters rx;
  net::SimHostStats host;
  std::uint64_t unsubscribed = 0;
  std::uint64_t tp_rejected = 0;
  macsec::LinkStats link;
  std::map<std::string, std::uint64_t> security;
};

// One configuration on the simulated segment: publisher (10.0.0.1) and
// subscriber (10.0.0.2) on one switch, subscribed, keys installed.
class Bed {
 public:
  Bed(Config config, std::uint64_t seed) : config_(config), sim_(seed, TimePoint::from_ns(kEpochNs)), seg_(sim_) {
    const bool secured = config != Config::kUnsecured;
    for (int i = 0; i < 2; ++i) {
      net::SimHostConfig hc;
      hc.mac = net::MacAddress::local(static_cast<std::uint32_t>(0x1000 + i));
      hc.ip = net::Ipv4Address::from_octets(10, 0, 0, static_cast<std::uint8_t>(i + 1));
      hc.prefix_length = 16;
      hc.dynamic_arp = false;
      hosts_[i] = std::make_unique<net::SimHost>(sim_, hc);
      if (config == Config::kHybrid) {
        const auto host_sci = macsec::Sci::from_parts(hc.mac.bytes.data(), 1);
        const auto sw_mac = net::MacAddress::local(static_cast<std::uint32_t>(0xF000 + i));
        const auto sw_sci = macsec::Sci::from_parts(sw_mac.bytes.data(), 1);
        const SecretBytes up = seeded_key(seed * 31 + static_cast<std::uint64_t>(i) * 2 + 1, 16);
        const SecretBytes down = seeded_key(seed * 31 + static_cast<std::uint64_t>(i) * 2 + 2, 16);
        host_macsec_[i] = node::hop_macsec_spec(host_sci, sw_sci, up, down, "switch");
        switch_secy_[i] = std::make_unique<macsec::MacsecLink>(
            node::make_secy(node::hop_macsec_spec(sw_sci, host_sci, down, up, "host")));
      }
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
    svc.methods.push_back({L::answer_method(0), true});
    someip::EventConfig ev;
    ev.event_id = L::kEvent;
    ev.eventgroups = {L::kEventgroup};
    svc.events = {ev};
    someip::EventgroupConfig eg;
    eg.eventgroup_id = L::kEventgroup;
    svc.eventgroups = {eg};
    pc.services = {svc};

    someip::RuntimeConfig sc;
    sc.name = "subscriber";
    sc.client_id = L::subscriber_client_id(0);
    sc.client_port = L::kClientPort;
    sc.sd_timing = timing;
    someip::ClientConfig cl;
    cl.service_id = L::kService;
    cl.instance_id = L::kInstance;
    cl.udp_port = L::kSubscriberPort;
    cl.eventgroups = {L::kEventgroup};
    sc.clients = {cl};
    someip::SecocBindings pb = L::publisher_bindings(1);
    someip::SecocBindings sb = L::subscriber_bindings(0);
    if (counter_sync(config)) {
      someip::ServiceConfig sync;
      sync.service_id = kSyncService;
      sync.instance_id = 1;
      sync.udp_port = kSyncPort;
      sync.events = {someip::EventConfig{kSyncEvent, {kSyncGroup}, false, std::nullopt, std::nullopt}};
      sync.eventgroups = {someip::EventgroupConfig{kSyncGroup, std::nullopt, 1}};
      pc.services.push_back(sync);
      sc.clients.push_back(someip::ClientConfig{kSyncService, 1, 0xFF, 0, {kSyncGroup}});
      for (auto* b : {&pb, &sb}) {
        b->sync_service = kSyncService;
        b->sync_instance = 1;
        b->sync_event = kSyncEvent;
        b->sync_rx_channel = 0;
      }
    }

    auto build = [&](int i, someip::RuntimeConfig rc, secoc::EngineConfig ec, someip::SecocBindings b) {
      node::StackSpec spec;
      spec.runtime = std::move(rc);
      spec.seed = seed * 7919 + static_cast<std::uint64_t>(i) + 1;
      spec.transport = node::SimTransportSpec{&sim_, hosts_[i].get()};
      spec.macsec = std::move(host_macsec_[i]);
      if (secured) {
        node::SecocSpec s;
        s.engine = std::move(ec);
        s.bindings = std::move(b);
        spec.secoc = std::move(s);
      }
      return node::build_stack(std::move(spec));
    };
    pub_ = build(0, pc, publisher_engine(config), std::move(pb));
    sub_ = build(1, sc, subscriber_engine(config), std::move(sb));
    for (int i = 0; i < 2; ++i) {
      node::Stack& st = i == 0 ? *pub_ : *sub_;
      if (config == Config::kHybrid) {
        shims_[i] = std::make_unique<net::FrameShim>(macsec::make_sim_shim(*st.macsec_link()));
        ports_[i] = seg_.add_port({}, shims_[i].get());
        shims_[i]->connect(&seg_.sender(ports_[i]), hosts_[i].get());
        hosts_[i]->connect(shims_[i].get());
        switch_ports_.bind(ports_[i], switch_secy_[i].get());
        seg_.set_port_processor(ports_[i], &switch_ports_);
      } else {
        ports_[i] = hosts_[i]->attach(seg_);
      }
    }
    seg_.add_tap(&tap_, net::TapPoint::kIngress);
    hosts_[0]->add_static_arp(hosts_[1]->config().ip, hosts_[1]->config().mac);
    hosts_[1]->add_static_arp(hosts_[0]->config().ip, hosts_[0]->config().mac);

    sub_->runtime().on_event(L::kService, someip::Runtime::kAnyEvent,
                             [this](const someip::Notification& n) { classify(n); });
    sub_->runtime().on_rejection([this](const someip::SecurityRejection& r) {
      std::string reason = r.unbound       ? "secoc_unbound_rejected"
                           : r.unprotected ? "secoc_rejected_unprotected"
                                           : "secoc_rejected_" + std::string(secoc::to_string(r.reason));
      ++security_[reason];
    });

    require(pub_->runtime().start().ok(), "publisher start");
    require(sub_->runtime().start().ok(), "subscriber start");
    const TimePoint deadline = sim_.now() + Duration::seconds(10);
    auto subscribed = [&] {
      return sub_->runtime().available(L::kService, L::kInstance) &&
             pub_->runtime().subscriber_count(L::kService, L::kInstance, L::kEventgroup) == 1 &&
             (!counter_sync(config) || pub_->runtime().subscriber_count(kSyncService, 1, kSyncGroup) == 1);
    };
    while (sim_.now() < deadline && !subscribed()) {
      sim_.run_for(Duration::milliseconds(5));
    }
    require(subscribed(), "service discovery");
    sim_.run_for(Duration::milliseconds(50));

    if (secured) {
      const SecretBytes key = seeded_key(seed ^ 0x5EC0C0DEULL);
      require(pub_->install_key(0, 1, key).ok(), "publisher key");
      require(sub_->install_key(0, 1, key).ok(), "subscriber key");
      if (counter_sync(config)) {
        const SecretBytes sync_key = seeded_key(seed ^ 0x5F1C0DEULL, 16);
        require(pub_->install_key(1, 1, sync_key).ok(), "publisher sync key");
        require(sub_->install_key(1, 1, sync_key).ok(), "subscriber sync key");
        // The next periodic sync message synchronises the subscriber.
        sim_.run_for(Duration::milliseconds(1200));
        require(sub_->runtime().counters().secoc_syncs_accepted > 0, "freshness sync");
      }
      // The forger: the publisher's configuration under a key of its own.
      auto forger = secoc::Engine::start(publisher_engine(config), forger_store_, secoc::StartOptions{true, sim_.now()});
      require(forger.ok(), "forger engine");
      forger_ = std::move(forger).value();
      require(forger_->install_key(0, 1, seeded_key(seed ^ 0xBADC0FFEEULL), sim_.now()).ok(), "forger key");
      if (counter_sync(config))
        require(forger_->install_key(1, 1, seeded_key(seed ^ 0xBADC0FFEFULL, 16), sim_.now()).ok(), "forger key");
    }
    seg_.add_hook(&attacker_);
  }

  ~Bed() {
    seg_.remove_hook(&attacker_);
    seg_.remove_tap(&tap_);
    pub_.reset();
    sub_.reset();
  }
  Bed(const Bed&) = delete;
  Bed& operator=(const Bed&) = delete;

  [[nodiscard]] bool secured() const { return config_ != Config::kUnsecured; }
  [[nodiscard]] std::size_t trailer_bytes() const { return secured() ? event_profile(config_).auth_info_bytes() : 0; }
  net::Simulator& sim() { return sim_; }
  Attacker& attacker() { return attacker_; }
  WireTap& tap() { return tap_; }
  [[nodiscard]] std::uint32_t next_seq() const { return next_seq_; }

  // A legitimate notification the subscriber must receive.
  void send_legit() {
    const std::uint32_t seq = next_seq_++;
    pending_.insert(seq);
    ++legit_sent_;
    notify(seq);
  }
  // A notification the attacker alters in flight (an attempt, not legit).
  void send_target() {
    const std::uint32_t seq = next_seq_++;
    attacker_.targets.insert(seq);
    notify(seq);
  }
  void inject(const std::vector<std::uint8_t>& frame) { seg_.inject(ports_[0], frame); }

  // A notification with an attacker's payload on the publisher's last header:
  // plain (unsecured) or protected by the forger's engine (wrong key).
  std::vector<std::uint8_t> forge(std::uint64_t i) {
    std::vector<std::uint8_t> f = attacker_.last;
    auto h = someip::read_raw_header(ByteSpan(f).subspan(kSomeip, 16));
    require(h.ok(), "forge header");
    std::vector<std::uint8_t> payload(kPayloadBytes, 0xF0);
    store_be32(payload.data(), 0xF0000000u | static_cast<std::uint32_t>(i));
    std::vector<std::uint8_t> body = payload;
    if (forger_) {
      std::uint8_t aad[someip::kHeaderAadSize];
      const std::size_t n = someip::header_aad(*h, aad);
      body.assign(payload.size() + someip::kSecocOverhead, 0);
      auto w = forger_->protect(0, payload, body, secoc::TxInput{ByteSpan(aad, n), sim_.now()});
      require(w.ok(), "forger protect");
      body.resize(*w);
    }
    f.resize(kPayload);
    f.insert(f.end(), body.begin(), body.end());
    fix_lengths(f);
    return f;
  }
  // Counter freshness: keeps the forger's MsgCnt level with the publisher's
  // next one (starting a new reset cycle of its own when the publisher did),
  // so the forgery's truncated FV is fresh and it is judged on its MAC.
  void align_forger() {
    if (config_ == Config::kTimestamp || !forger_) return;
    const std::uint64_t want = pub_->engine()->next_tx_freshness(0).msg;
    if (forger_->next_tx_freshness(0).msg > want) {
      forger_->request_sync();
      std::vector<std::uint8_t> sync(forger_->sync_message_size());
      require(forger_->poll(sim_.now(), sync).ok(), "forger reset cycle");
    }
    std::vector<std::uint8_t> out(kPayloadBytes + someip::kSecocOverhead);
    const std::vector<std::uint8_t> dummy(kPayloadBytes, 0);
    while (forger_->next_tx_freshness(0).msg < want) {
      require(forger_->protect(0, dummy, out, secoc::TxInput{{}, sim_.now()}).ok(), "forger align");
    }
  }

  [[nodiscard]] Snapshot snapshot() const {
    Snapshot s;
    const auto& c = sub_->runtime().counters();
    s.rx = c.rx;
    s.host = hosts_[1]->stats();
    s.unsubscribed = c.notifications_unsubscribed;
    s.tp_rejected = c.tp_rejected;
    if (sub_->macsec_link() != nullptr) s.link = sub_->macsec_link()->stats();
    s.security = security_;
    return s;
  }

  // Starts a class: zeroes its figures.
  void begin() {
    accepted_ = 0;
    legit_delivered_ = 0;
    legit_sent_ = 0;
    pending_.clear();
    attacker_.targets.clear();
    attacker_.alter = nullptr;
    attacker_.hold = Duration::zero();
    attacker_.altered = 0;
    before_ = snapshot();
  }
  // Ends a class: lets the last frames arrive and fills `row`.
  void end(AttackRow& row) {
    sim_.run_for(Duration::milliseconds(20));
    const Snapshot now = snapshot();
    for (const auto& [reason, n] : now.security) {
      auto it = before_.security.find(reason);
      const std::uint64_t d = n - (it == before_.security.end() ? 0 : it->second);
      if (d > 0) row.rejected[reason] += d;
    }
    for (std::size_t r = 1; r < static_cast<std::size_t>(someip::DropReason::kCount); ++r) {
      const std::uint64_t d = now.rx.dropped[r] - before_.rx.dropped[r];
      if (d > 0)
        row.rejected["someip_dropped_" + std::string(someip::to_string(static_cast<someip::DropReason>(r)))] += d;
    }
    auto add = [&row](const char* name, std::uint64_t d) {
      if (d > 0) row.rejected[name] += d;
    };
    add("udp_malformed", now.host.rx_malformed - before_.host.rx_malformed);
    add("udp_not_for_us", now.host.rx_not_for_us - before_.host.rx_not_for_us);
    add("udp_no_listener", now.host.rx_no_listener - before_.host.rx_no_listener);
    add("someip_notifications_unsubscribed", now.unsubscribed - before_.unsubscribed);
    add("someip_tp_rejected", now.tp_rejected - before_.tp_rejected);
    add("macsec_rx_dropped", now.link.rx_dropped - before_.link.rx_dropped);
    add("macsec_rx_not_macsec", now.link.rx_not_macsec - before_.link.rx_not_macsec);
    add("macsec_rx_unverified", now.link.rx_unverified - before_.link.rx_unverified);
    row.accepted = accepted_;
    row.legit_delivered = legit_delivered_;
    row.legit_lost = legit_sent_ - legit_delivered_;
    const std::uint64_t judged = row.accepted + total_rejected(row);
    // Attacker frames the subscriber neither delivered nor counted anywhere
    // (should be 0; shown, never hidden).
    if (row.attempts > judged) row.rejected["uncounted"] = row.attempts - judged;
  }

 private:
  void notify(std::uint32_t seq) {
    std::vector<std::uint8_t> p(kPayloadBytes);
    store_be32(p.data(), seq);
    store_be32(p.data() + 4, ~seq);
    require(pub_->runtime().notify(L::kService, L::kInstance, L::kEvent, p).ok(), "notify");
  }
  // A delivery is legitimate when it is a pending notification of the
  // publisher, exactly as sent; anything else is the attacker's.
  void classify(const someip::Notification& n) {
    if (n.event_id == L::kEvent && n.payload.size() == kPayloadBytes) {
      const std::uint32_t seq = load_be32(n.payload.data());
      if (load_be32(n.payload.data() + 4) == ~seq && pending_.erase(seq) == 1) {
        ++legit_delivered_;
        return;
      }
    }
    ++accepted_;
  }

  Config config_;
  net::Simulator sim_;
  net::Segment seg_;
  std::unique_ptr<net::SimHost> hosts_[2];
  std::optional<node::MacsecSpec> host_macsec_[2];
  std::unique_ptr<macsec::MacsecLink> switch_secy_[2];  // hybrid: the switch ports' SecYs
  std::unique_ptr<net::FrameShim> shims_[2];             // hybrid: over the hosts' SecYs
  macsec::MacsecPortProcessor switch_ports_;
  WireTap tap_;
  net::PortId ports_[2] = {0, 0};
  std::unique_ptr<node::Stack> pub_;
  std::unique_ptr<node::Stack> sub_;
  secoc::MemoryStateStore forger_store_;
  std::unique_ptr<secoc::Engine> forger_;
  Attacker attacker_;
  std::map<std::string, std::uint64_t> security_;
  Snapshot before_;
  std::uint32_t next_seq_ = 1;
  std::set<std::uint32_t> pending_;
  std::uint64_t legit_sent_ = 0;
  std::uint64_t legit_delivered_ = 0;
  std::uint64_t accepted_ = 0;
};

constexpr Duration kGap = Duration::microseconds(500);

// Alters one in-flight notification per attempt, a legitimate one after it.
void run_in_flight(Bed& bed, AttackRow& row, std::uint64_t attempts, Attacker::Alter alter) {
  bed.begin();
  bed.attacker().alter = std::move(alter);
  for (std::uint64_t i = 0; i < attempts; ++i) {
    bed.send_target();
    bed.sim().run_for(kGap);
    bed.send_legit();
    bed.sim().run_for(kGap);
  }
  // Each target was altered at the switch before it reached the subscriber.
  row.attempts = bed.attacker().altered;
  bed.end(row);
}

// One legitimate notification per attempt, then one injected frame.
void run_injected(Bed& bed, AttackRow& row, std::uint64_t attempts,
                  const std::function<std::vector<std::uint8_t>(std::uint64_t)>& make) {
  bed.begin();
  for (std::uint64_t i = 0; i < attempts; ++i) {
    bed.send_legit();
    bed.sim().run_for(kGap);
    bed.inject(make(i));
    bed.sim().run_for(kGap);
  }
  row.attempts = attempts;
  bed.end(row);
}

void flip_in(std::vector<std::uint8_t>& f, std::size_t from, std::size_t len, net::SimRng& rng) {
  const std::uint64_t bit = rng.uniform(len * 8);
  f[from + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
}

void run_config(const ConfigInfo& info, const AttackOptions& options, std::vector<AttackRow>& rows) {
  const std::uint64_t n = options.attempts;
  const bool unsecured = info.config == Config::kUnsecured;
  Bed bed(info.config, options.seed);
  net::SimRng rng(options.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(info.config));
  auto row_for = [&](const char* cls, std::string note) {
    AttackRow r;
    r.layer = info.layer;
    r.configuration = info.name;
    r.attack_class = cls;
    r.acceptance_expected = unsecured;
    // Hop-by-hop MACsec: the switch validates and re-protects each hop, so the
    // attacker at the switch works on the plaintext (a switch holding the
    // link keys); only SecOC can refuse what it does.
    if (info.config == Config::kHybrid && std::string_view(cls) != "A1.passive") note += " (inside the switch, past MACsec)";
    r.note = std::move(note);
    return r;
  };
  const std::size_t trailer = bed.trailer_bytes();

  {  // A1: wiretap on every link; is a notification payload readable?
    const bool hybrid = info.config == Config::kHybrid;
    AttackRow r = row_for("A1.passive", unsecured ? "every frame on the wire captured: payload readable (no protection)"
                                        : hybrid  ? "every frame on the wire captured: MACsec hides the payload"
                                                  : "every frame on the wire captured: payload readable (SecOC: integrity only)");
    r.acceptance_expected = !hybrid;
    bed.begin();
    WireTap& tap = bed.tap();
    tap.first = bed.next_seq();
    tap.count = static_cast<std::uint32_t>(n);
    tap.frames = 0;
    tap.readable = 0;
    tap.on = true;
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_legit();
      bed.sim().run_for(Duration::milliseconds(1));
    }
    tap.on = false;
    bed.end(r);
    r.rejected.clear();
    r.attempts = tap.frames;
    r.accepted = tap.readable;
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.replay.immediate", "each notification re-sent at once after the original");
    run_injected(bed, r, n, [&](std::uint64_t) { return bed.attacker().last; });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.replay.delayed", "notifications recorded, re-sent 1.5 s later (beyond maxAge 1 s)");
    std::vector<std::vector<std::uint8_t>> history;
    const std::uint64_t keep = std::min<std::uint64_t>(n, kDelayedHistory);
    bed.begin();
    for (std::uint64_t i = 0; i < keep; ++i) {
      bed.send_legit();
      bed.sim().run_for(Duration::milliseconds(1));
      history.push_back(bed.attacker().last);
    }
    bed.sim().run_for(Duration::milliseconds(1500));
    bed.end(r);  // the recording phase: legitimate only
    AttackRow replay = row_for("A2.replay.delayed", r.note);
    run_injected(bed, replay, n, [&](std::uint64_t i) { return history[i % history.size()]; });
    replay.legit_delivered += r.legit_delivered;
    replay.legit_lost += r.legit_lost;
    rows.push_back(std::move(replay));
  }
  {
    AttackRow r = row_for("A2.bitflip.someip-header",
                          "one bit flipped in a header field (service, event, length, client, session, "
                          "protocol, interface, type, return code in turn; a shorter length splits the datagram: "
                          "two refusals for one frame)");
    struct Field {
      std::size_t off, len;
    };
    constexpr Field kFields[] = {{0, 2}, {2, 2}, {4, 4}, {8, 2}, {10, 2}, {12, 1}, {13, 1}, {14, 1}, {15, 1}};
    std::uint64_t k = 0;
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const Field fd = kFields[k++ % std::size(kFields)];
      flip_in(f, kSomeip + fd.off, fd.len, rng);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.bitflip.payload", "one bit flipped in the notification payload");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) { flip_in(f, kPayload, kPayloadBytes, rng); });
    rows.push_back(std::move(r));
  }
  if (!unsecured) {
    {
      AttackRow r = row_for("A2.bitflip.fv", "one bit flipped in the truncated freshness value");
      run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
        flip_in(f, f.size() - trailer, trailer - kMacBytes, rng);
      });
      rows.push_back(std::move(r));
    }
    {
      AttackRow r = row_for("A2.bitflip.mac", "one bit flipped in the truncated MAC");
      run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) { flip_in(f, f.size() - kMacBytes, kMacBytes, rng); });
      rows.push_back(std::move(r));
    }
  }
  {
    AttackRow r = row_for("A2.truncate", "1..24 bytes cut from the message end, lengths fixed");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const std::size_t body = f.size() - kPayload;
      const std::size_t cut = 1 + static_cast<std::size_t>(rng.uniform(std::min<std::size_t>(body, 24)));
      f.resize(f.size() - cut);
      fix_lengths(f);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.extend", "1..16 random bytes appended to the message, lengths fixed");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const std::size_t add = 1 + static_cast<std::size_t>(rng.uniform(16));
      for (std::size_t i = 0; i < add; ++i) f.push_back(static_cast<std::uint8_t>(rng.next_u64()));
      fix_lengths(f);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.forge.wrong-key", unsecured ? "notification with the attacker's payload injected"
                                                          : "notification protected under the attacker's own key, "
                                                            "fresh FV, injected");
    run_injected(bed, r, n, [&](std::uint64_t i) {
      bed.align_forger();
      return bed.forge(i);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.holdback.release",
                          "one notification in two held back 2 s, released behind the live stream");
    bed.begin();
    bed.attacker().hold = Duration::seconds(2);
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_target();
      bed.sim().run_for(kGap);
      bed.send_legit();
      bed.sim().run_for(kGap);
    }
    bed.sim().run_for(Duration::milliseconds(2100));  // every held frame is released
    r.attempts = bed.attacker().altered;
    bed.end(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.holdback.all", "every notification held back 2 s, then released in order");
    bed.begin();
    bed.attacker().hold = Duration::seconds(2);
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_target();
      bed.sim().run_for(Duration::milliseconds(1));
    }
    bed.sim().run_for(Duration::milliseconds(2100));
    r.attempts = bed.attacker().altered;
    bed.end(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.relabel.unbound-id", "event id relabelled to 0x8002 (no binding) in flight");
    run_in_flight(bed, r, n, [](std::vector<std::uint8_t>& f) { store_be16(&f[kSomeip + 2], kUnboundEvent); });
    rows.push_back(std::move(r));
  }
}

}  // namespace

std::vector<AttackRow> run_someip_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  for (const auto& info : kConfigs) run_config(info, options, rows);
  return rows;
}

}  // namespace layersec::attack
