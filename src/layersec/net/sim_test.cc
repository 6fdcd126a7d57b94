#include "layersec/net/sim.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "layersec/net/sim_attack.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Collector final : FrameReceiver {
  explicit Collector(Simulator& s) : sim(s) {}
  void on_frame(ByteSpan f) override { frames.push_back({sim.now(), Bytes(f.begin(), f.end())}); }
  // Sequence numbers (payload byte 0) in arrival order.
  std::vector<int> seqs() const {
    std::vector<int> out;
    for (const auto& f : frames) out.push_back(f.second.size() > 14 ? f.second[14] : -1);
    return out;
  }
  Simulator& sim;
  std::vector<std::pair<TimePoint, Bytes>> frames;
};

Bytes raw_frame(MacAddress dst, MacAddress src, std::uint8_t seq, std::size_t size = 60) {
  Bytes f(size, 0);
  std::copy(dst.bytes.begin(), dst.bytes.end(), f.begin());
  std::copy(src.bytes.begin(), src.bytes.end(), f.begin() + 6);
  store_be16(f.data() + 12, kEtherTypeLocalExperimental1);
  f[14] = seq;
  return f;
}

const MacAddress kMacA = MacAddress::local(1);
const MacAddress kMacB = MacAddress::local(2);
const MacAddress kMacC = MacAddress::local(3);

TEST(SimRngTest, DeterministicAndBounded) {
  SimRng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_LT(a.uniform(7), 7u);
    const Duration d = a.uniform_duration(Duration::microseconds(5), Duration::microseconds(6));
    EXPECT_GE(d, Duration::microseconds(5));
    EXPECT_LE(d, Duration::microseconds(6));
  }
  EXPECT_EQ(a.uniform(0), 0u);
  EXPECT_FALSE(a.bernoulli(0.0));
  EXPECT_TRUE(a.bernoulli(1.0));
}

TEST(SimulatorTest, OrdersByTimeThenSchedulingOrder) {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(TimePoint::from_ns(20), [&] { order.push_back(3); });
  sim.schedule_at(TimePoint::from_ns(10), [&] { order.push_back(1); });
  sim.schedule_at(TimePoint::from_ns(10), [&] {
    order.push_back(2);
    // Scheduling in the past runs at the current time, after what is queued.
    sim.schedule_at(TimePoint::from_ns(0), [&] { order.push_back(25); });
  });
  const EventId cancelled = sim.schedule_at(TimePoint::from_ns(15), [&] { order.push_back(99); });
  EXPECT_TRUE(sim.cancel(cancelled));
  EXPECT_FALSE(sim.cancel(cancelled));
  EXPECT_EQ(sim.run_until(TimePoint::from_ns(12)), 3u);
  EXPECT_EQ(sim.now(), TimePoint::from_ns(12));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 25}));
  EXPECT_EQ(sim.next_event_time(), TimePoint::from_ns(20));
  EXPECT_EQ(sim.run_until_idle(), 1u);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 25, 3}));
  EXPECT_TRUE(sim.idle());
  // run_until never moves time backwards.
  sim.run_until(TimePoint::from_ns(5));
  EXPECT_EQ(sim.now(), TimePoint::from_ns(20));
}

TEST(SimulatorTest, SimClockFollowsSimulatedTime) {
  Simulator sim(1, TimePoint::from_ns(500));
  SimClock clock(sim);
  EXPECT_EQ(clock.now(), TimePoint::from_ns(500));
  sim.schedule_in(Duration::microseconds(3), [] {});
  sim.run_until_idle();
  EXPECT_EQ(clock.now(), TimePoint::from_ns(3500));
}

TEST(SimulatorTest, RunUntilIdleStopsAtTheEventLimit) {
  Simulator sim;
  std::function<void()> again = [&] { sim.schedule_in(Duration::microseconds(1), again); };
  sim.schedule_in(Duration::zero(), again);
  EXPECT_EQ(sim.run_until_idle(100), 100u);
  EXPECT_FALSE(sim.idle());
}

// --- CPU attribution: a ManualClock stands in for the real clock, and each
// callback "works" by advancing it, so every model time is exact.

struct Attributed {
  ManualClock clock{TimePoint::from_ns(1'000'000)};
  Simulator sim;
  Attributed() { sim.enable_cpu_attribution(clock); }
  void work(std::int64_t ns) { clock.advance(Duration::nanoseconds(ns)); }
};

TEST(SimulatorAttributionTest, TwoOwnersOverlapOneOwnerSerialises) {
  Attributed t;
  const OwnerId a = t.sim.new_owner();
  const OwnerId b = t.sim.new_owner();
  ASSERT_NE(a, b);
  ASSERT_NE(a, kUnowned);
  const std::int64_t t0 = t.sim.begin_model_window();
  std::vector<std::int64_t> ends;
  auto job = [&](std::int64_t ns) {
    return [&t, &ends, ns] {
      t.work(ns);
      ends.push_back(t.sim.model_now_ns());
    };
  };
  t.sim.schedule_in(Duration::microseconds(1), job(100), a);
  t.sim.schedule_in(Duration::microseconds(1), job(100), b);  // parallel with a's
  t.sim.schedule_in(Duration::microseconds(2), job(70), a);   // queues behind a's first
  t.sim.run_until_idle();
  EXPECT_EQ(ends, (std::vector<std::int64_t>{t0 + 100, t0 + 100, t0 + 170}));
  EXPECT_EQ(t.sim.owner_busy_until_ns(a), t0 + 170);
  EXPECT_EQ(t.sim.owner_busy_until_ns(b), t0 + 100);
  EXPECT_EQ(t.sim.owner_busy_ns(a), 170);
  EXPECT_EQ(t.sim.owner_busy_ns(b), 100);
  // The model end of everything is the max over owners, not the sum (270).
  EXPECT_EQ(t.sim.model_now_ns(), t0 + 170);
  // Simulated time is untouched by the attribution.
  EXPECT_EQ(t.sim.now(), TimePoint::from_ns(2000));
}

TEST(SimulatorAttributionTest, ScheduledWorkInheritsOrNamesItsOwner) {
  Attributed t;
  const OwnerId a = t.sim.new_owner();
  const OwnerId b = t.sim.new_owner();
  const std::int64_t t0 = t.sim.begin_model_window();
  std::map<std::string, std::pair<OwnerId, std::int64_t>> seen;  // name -> owner, model start
  auto child = [&](std::string name, std::int64_t ns) {
    return [&t, &seen, name, ns] {
      seen[name] = {t.sim.current_owner(), t.sim.model_now_ns()};
      t.work(ns);
    };
  };
  t.sim.schedule_in(
      Duration::zero(),
      [&] {
        t.work(50);
        // Ready at t0 + 50 (where the parent was when it scheduled them).
        t.sim.schedule_in(Duration::microseconds(1), child("inherited", 10));
        t.sim.schedule_in(Duration::microseconds(1), child("on-b", 10), b);
        t.work(30);
      },
      a);
  t.sim.run_until_idle();
  // The inherited child runs on a, after a's parent finished (t0 + 80); the
  // child on b starts as soon as it was ready (t0 + 50).
  EXPECT_EQ(seen["inherited"], std::make_pair(a, t0 + 80));
  EXPECT_EQ(seen["on-b"], std::make_pair(b, t0 + 50));
  // Outside any work the owner is kUnowned, and so is what is scheduled there.
  EXPECT_EQ(t.sim.current_owner(), kUnowned);
  t.sim.schedule_in(Duration::zero(), child("unowned", 0));
  t.sim.run_until_idle();
  EXPECT_EQ(seen["unowned"].first, kUnowned);
}

TEST(SimulatorAttributionTest, CpuScopeHandsWorkToAnotherOwner) {
  Attributed t;
  const OwnerId a = t.sim.new_owner();
  const OwnerId b = t.sim.new_owner();
  const std::int64_t t0 = t.sim.begin_model_window();
  std::int64_t b_scheduled_start = -1;
  OwnerId b_scheduled_owner = kUnowned;
  std::int64_t a_after_scope = -1;
  t.sim.schedule_in(
      Duration::zero(),
      [&] {
        t.work(10);
        {
          Simulator::CpuScope scope(t.sim, b);
          EXPECT_EQ(t.sim.current_owner(), b);
          EXPECT_EQ(t.sim.model_now_ns(), t0 + 10);  // b starts where a was
          t.work(100);
          t.sim.schedule_in(Duration::zero(), [&] {
            b_scheduled_owner = t.sim.current_owner();
            b_scheduled_start = t.sim.model_now_ns();
          });
        }
        // a did not wait for b's 100 ns.
        a_after_scope = t.sim.model_now_ns();
        t.work(10);
      },
      a);
  t.sim.run_until_idle();
  EXPECT_EQ(a_after_scope, t0 + 10);
  EXPECT_EQ(t.sim.owner_busy_until_ns(a), t0 + 20);
  EXPECT_EQ(t.sim.owner_busy_until_ns(b), t0 + 110);
  EXPECT_EQ(b_scheduled_owner, b);
  EXPECT_EQ(b_scheduled_start, t0 + 110);
  EXPECT_EQ(t.sim.owner_busy_ns(a), 20);
  EXPECT_EQ(t.sim.owner_busy_ns(b), 100);
  // A scope on the owner already running changes nothing.
  t.sim.schedule_in(
      Duration::zero(),
      [&] {
        Simulator::CpuScope same(t.sim, a);
        t.work(5);
      },
      a);
  t.sim.run_until_idle();
  EXPECT_EQ(t.sim.owner_busy_ns(a), 25);
  // Scheduled from outside any work: ready after everything so far (b's end).
  EXPECT_EQ(t.sim.owner_busy_until_ns(a), t0 + 115);
}

TEST(SimulatorAttributionTest, WindowsStartIdleAndScopesOutsideWorkStartThere) {
  Attributed t;
  const OwnerId a = t.sim.new_owner();
  const OwnerId b = t.sim.new_owner();
  // Work before the window: a is busy up to 300, b up to 40.
  t.sim.schedule_in(Duration::zero(), [&] { t.work(300); }, a);
  t.sim.schedule_in(Duration::zero(), [&] { t.work(40); }, b);
  t.sim.run_until_idle();
  // Pending from before the window (ready at 300).
  std::int64_t pending_start = -1;
  t.sim.schedule_in(Duration::microseconds(5), [&] { pending_start = t.sim.model_now_ns(); }, b);
  const std::int64_t w = t.sim.begin_model_window();
  EXPECT_EQ(w, 300);
  std::int64_t in_scope = -1;
  {
    Simulator::CpuScope publisher(t.sim, b);  // outside step(): starts at the window
    in_scope = t.sim.model_now_ns();
    t.work(25);
  }
  EXPECT_EQ(in_scope, w);
  EXPECT_EQ(t.sim.owner_busy_until_ns(b), w + 25);
  t.sim.run_until_idle();
  EXPECT_EQ(pending_start, w + 25);  // behind the scope's work on b
  EXPECT_EQ(t.sim.begin_model_window(), w + 25);
}

TEST(SimulatorAttributionTest, OffByDefaultButOwnersAreStillTracked) {
  Simulator sim;
  EXPECT_FALSE(sim.cpu_attribution());
  const OwnerId a = sim.new_owner();
  OwnerId seen = kUnowned;
  std::int64_t model = -1;
  sim.schedule_in(Duration::zero(), [&] {
    sim.schedule_in(Duration::zero(), [&] {
      seen = sim.current_owner();
      model = sim.model_now_ns();
    });
  }, a);
  sim.run_until_idle();
  EXPECT_EQ(seen, a);
  EXPECT_EQ(model, 0);
  EXPECT_EQ(sim.begin_model_window(), 0);
  EXPECT_EQ(sim.owner_busy_ns(a), 0);
}

struct Three {
  Simulator sim{7};
  Segment seg{sim};
  Collector a{sim}, b{sim}, c{sim};
  PortId pa, pb, pc;
  explicit Three(LinkConfig link = {}) {
    pa = seg.add_port(link, &a);
    pb = seg.add_port(link, &b);
    pc = seg.add_port(link, &c);
  }
};

TEST(SegmentTest, FloodsUnknownThenForwardsLearnedUnicast) {
  Three t;
  // B is unknown: flooded to B and C, not back to A.
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 1)));
  t.sim.run_until_idle();
  EXPECT_EQ(t.a.frames.size(), 0u);
  EXPECT_EQ(t.b.frames.size(), 1u);
  EXPECT_EQ(t.c.frames.size(), 1u);
  EXPECT_EQ(t.seg.lookup(kMacA), t.pa);
  EXPECT_EQ(t.seg.stats().flooded, 1u);
  // A is learned now: B's reply goes only to A.
  ASSERT_TRUE(t.seg.sender(t.pb).send_frame(raw_frame(kMacA, kMacB, 2)));
  t.sim.run_until_idle();
  EXPECT_EQ(t.a.frames.size(), 1u);
  EXPECT_EQ(t.c.frames.size(), 1u);
  EXPECT_EQ(t.seg.stats().forwarded_unicast, 1u);
  // Broadcast and multicast always flood.
  ASSERT_TRUE(t.seg.sender(t.pc).send_frame(raw_frame(MacAddress::broadcast(), kMacC, 3)));
  ASSERT_TRUE(t.seg.sender(t.pc).send_frame(raw_frame(multicast_mac(Ipv4Address::from_octets(239, 0, 0, 1)), kMacC, 4)));
  t.sim.run_until_idle();
  EXPECT_EQ(t.a.seqs(), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(t.b.seqs(), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(t.c.seqs(), (std::vector<int>{1}));
  // A frame for a station on its own ingress port is filtered.
  ASSERT_TRUE(t.seg.sender(t.pc).send_frame(raw_frame(kMacC, kMacA, 5)));
  t.sim.run_until_idle();
  EXPECT_EQ(t.seg.lookup(kMacA), t.pc);  // A "moved" to port C
  EXPECT_EQ(t.seg.stats().filtered, 1u);
  EXPECT_EQ(t.c.frames.size(), 1u);
}

TEST(SegmentTest, LatencyAndSerializationDelayAreExact) {
  LinkConfig link;
  link.latency = Duration::microseconds(10);
  link.bandwidth_bps = 100'000'000;
  Three t(link);
  // 100-byte frame: 124 bytes on the wire = 992 bits = 9920 ns at 100 Mbit/s,
  // on the uplink and again on the downlink, plus 10 us latency each way.
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 1, 100)));
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 2, 100)));
  t.sim.run_until_idle();
  ASSERT_EQ(t.b.frames.size(), 2u);
  EXPECT_EQ(t.b.frames[0].first.ns(), 2 * (9920 + 10000));
  // The second waits for the first on the uplink: one serialization later.
  EXPECT_EQ(t.b.frames[1].first.ns(), 2 * (9920 + 10000) + 9920);
  EXPECT_EQ(wire_bytes(10), 84u);  // padded to 60
}

TEST(SegmentTest, QueueLimitTailDrops) {
  LinkConfig link;
  link.bandwidth_bps = 10'000'000;
  link.queue_frames = 2;
  Three t(link);
  int accepted = 0;
  for (int i = 0; i < 5; ++i) accepted += t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 1)) ? 1 : 0;
  EXPECT_EQ(accepted, 2);
  EXPECT_EQ(t.seg.port_stats(t.pa).tx_queue_drops, 3u);
  t.sim.run_until_idle();
  // Once drained the queue accepts again.
  EXPECT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 1)));
  EXPECT_FALSE(t.seg.sender(t.pa).send_frame(Bytes(10)));
  EXPECT_EQ(t.seg.port_stats(t.pa).tx_rejected, 1u);
}

TEST(SegmentTest, DropEveryNthAndTaps) {
  Three t;
  DropEveryNthHook drop(2);
  struct Count final : FrameRecorder {
    void record(TimePoint, ByteSpan) override { ++n; }
    int n = 0;
  } ingress, forwarded;
  t.seg.add_hook(&drop);
  t.seg.add_tap(&ingress, TapPoint::kIngress);
  t.seg.add_tap(&forwarded, TapPoint::kForwarded);
  for (int i = 1; i <= 6; ++i) ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, i)));
  t.sim.run_until_idle();
  EXPECT_EQ(t.b.seqs(), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(drop.dropped(), 3u);
  EXPECT_EQ(ingress.n, 6);
  EXPECT_EQ(forwarded.n, 3);
  EXPECT_EQ(t.seg.stats().hook_drops, 3u);
  t.seg.remove_hook(&drop);
  t.seg.remove_tap(&ingress);
  t.seg.remove_tap(&forwarded);
}

TEST(SegmentTest, ReorderDuplicateAndReplay) {
  Three t;
  ReorderHook reorder(2, Duration::milliseconds(1));
  t.seg.add_hook(&reorder);
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, i)));
    t.sim.run_for(Duration::microseconds(20));
  }
  t.sim.run_until_idle();
  EXPECT_EQ(t.b.seqs(), (std::vector<int>{1, 3, 2, 4}));
  t.seg.remove_hook(&reorder);

  t.b.frames.clear();
  DuplicateHook dup(1, 2);
  t.seg.add_hook(&dup);
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 9)));
  t.sim.run_until_idle();
  EXPECT_EQ(t.b.seqs(), (std::vector<int>{9, 9, 9}));
  t.seg.remove_hook(&dup);

  t.b.frames.clear();
  ReplayHook replay(match_ingress(t.pa), Duration::milliseconds(5));
  t.seg.add_hook(&replay);
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 7)));
  ASSERT_TRUE(t.seg.sender(t.pb).send_frame(raw_frame(kMacA, kMacB, 8)));  // not matched
  t.sim.run_until_idle();
  ASSERT_EQ(t.b.seqs(), (std::vector<int>{7, 7}));
  EXPECT_GE(t.b.frames[1].first - t.b.frames[0].first, Duration::milliseconds(5));
  EXPECT_EQ(replay.recorded(), 1u);
  // Replay everything recorded once more, on demand.
  EXPECT_EQ(replay.replay_recorded(t.seg, Duration::milliseconds(1)), 1u);
  t.sim.run_until_idle();
  EXPECT_EQ(t.b.seqs(), (std::vector<int>{7, 7, 7}));
  EXPECT_EQ(replay.replayed(), 2u);
  EXPECT_EQ(t.seg.stats().injected, 2u);
  t.seg.remove_hook(&replay);
}

// A hand-written attacker: rewrites one byte and injects a forged frame.
class ForgeHook final : public SwitchHook {
 public:
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override {
    frame[15] = 0xEE;
    Bytes forged = frame;
    forged[14] = 100;
    control.inject(ctx.ingress, forged, Duration::microseconds(1));
    return HookVerdict::forward();
  }
};

TEST(SegmentTest, ModifyAndInject) {
  Three t;
  ForgeHook forge;
  t.seg.add_hook(&forge);
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(kMacB, kMacA, 1)));
  t.sim.run_until_idle();
  ASSERT_EQ(t.b.seqs(), (std::vector<int>{1, 100}));
  EXPECT_EQ(t.b.frames[0].second[15], 0xEE);
  // Injected frames skip the hooks: exactly one forgery, not a loop.
  EXPECT_EQ(t.seg.stats().injected, 1u);
  t.seg.remove_hook(&forge);
}

// A toy hop-by-hop link protection: endpoints on "protected" ports XOR the
// payload with a per-port key byte; the switch removes it on ingress and
// applies the egress port's key. The forwarded tap sees clear frames, the
// ingress tap sees what was on the wire.
class XorLinks final : public PortProcessor {
 public:
  explicit XorLinks(std::map<PortId, std::uint8_t> keys) : keys_(std::move(keys)) {}
  bool on_ingress(PortId port, std::vector<std::uint8_t>& frame) override {
    if (frame.size() > 15 && frame[15] == 0xBA) return false;  // "fails validation"
    apply(port, frame);
    return true;
  }
  bool on_egress(PortId port, std::vector<std::uint8_t>& frame) override {
    apply(port, frame);
    return true;
  }
  void apply(PortId port, std::vector<std::uint8_t>& frame) const {
    for (std::size_t i = 14; i < frame.size(); ++i) frame[i] ^= keys_.at(port);
  }

 private:
  std::map<PortId, std::uint8_t> keys_;
};

TEST(SegmentTest, PortProcessorsTransformPerLink) {
  Three t;
  XorLinks links({{t.pa, 0x11}, {t.pb, 0x22}});
  t.seg.set_port_processor(t.pa, &links);
  t.seg.set_port_processor(t.pb, &links);
  struct Log final : FrameRecorder {
    void record(TimePoint, ByteSpan f) override { frames.emplace_back(f.begin(), f.end()); }
    std::vector<Bytes> frames;
  } wire, inside;
  t.seg.add_tap(&wire, TapPoint::kIngress);
  t.seg.add_tap(&inside, TapPoint::kForwarded);
  Bytes f = raw_frame(kMacB, kMacA, 5);
  Bytes on_wire = f;
  links.apply(t.pa, on_wire);
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(on_wire));
  t.sim.run_until_idle();
  ASSERT_EQ(t.b.frames.size(), 1u);
  ASSERT_EQ(t.c.frames.size(), 1u);  // flooded: C's port has no processor
  Bytes at_b = t.b.frames[0].second;
  links.apply(t.pb, at_b);
  EXPECT_EQ(at_b, f);                       // B's link key was applied
  EXPECT_EQ(t.c.frames[0].second, f);       // clear on the unprotected port
  ASSERT_EQ(wire.frames.size(), 1u);
  EXPECT_EQ(wire.frames[0], on_wire);
  ASSERT_EQ(inside.frames.size(), 1u);
  EXPECT_EQ(inside.frames[0], f);
  // A frame that fails ingress processing never reaches the switch proper.
  Bytes bad = raw_frame(kMacB, kMacA, 6);
  links.apply(t.pa, bad);
  bad[15] = 0xBA;
  ASSERT_TRUE(t.seg.sender(t.pa).send_frame(bad));
  t.sim.run_until_idle();
  EXPECT_EQ(t.seg.stats().port_processor_drops, 1u);
  EXPECT_EQ(t.b.frames.size(), 1u);
  t.seg.remove_tap(&wire);
  t.seg.remove_tap(&inside);
}

TEST(SegmentTest, AttributesDeliveriesToEndpointsAndEgressToPortEngines) {
  ManualClock clock(TimePoint::from_ns(5'000'000));
  Three t;
  t.sim.enable_cpu_attribution(clock);
  // Every egress copy costs its port engine 50 ns; every receiver 200 ns.
  struct Slow final : PortProcessor {
    explicit Slow(ManualClock& c) : clock(c) {}
    bool on_ingress(PortId, std::vector<std::uint8_t>&) override { return true; }
    bool on_egress(PortId, std::vector<std::uint8_t>&) override {
      clock.advance(Duration::nanoseconds(50));
      return true;
    }
    ManualClock& clock;
  } slow(clock);
  for (PortId p : {t.pa, t.pb, t.pc}) t.seg.set_port_processor(p, &slow);
  struct Timed final : FrameReceiver {
    Timed(Simulator& s, ManualClock& c) : sim(s), clock(c) {}
    void on_frame(ByteSpan) override {
      owner = sim.current_owner();
      start = sim.model_now_ns();
      clock.advance(Duration::nanoseconds(200));
    }
    Simulator& sim;
    ManualClock& clock;
    OwnerId owner = kUnowned;
    std::int64_t start = -1;
  } rb(t.sim, clock), rc(t.sim, clock);
  t.seg.set_receiver(t.pb, &rb);
  t.seg.set_receiver(t.pc, &rc);
  const std::int64_t w = t.sim.begin_model_window();
  {
    Simulator::CpuScope sender(t.sim, t.seg.endpoint_owner(t.pa));
    ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(MacAddress::broadcast(), kMacA, 1)));
  }
  t.sim.run_until_idle();
  EXPECT_EQ(rb.owner, t.seg.endpoint_owner(t.pb));
  EXPECT_EQ(rc.owner, t.seg.endpoint_owner(t.pc));
  // Both egress engines work in parallel (50 ns each, from w), then both
  // receivers in parallel: each starts at w + 50, the last ends at w + 250,
  // where one shared CPU would need 2 * 50 + 2 * 200.
  EXPECT_EQ(rb.start, w + 50);
  EXPECT_EQ(rc.start, w + 50);
  EXPECT_EQ(t.sim.owner_busy_until_ns(t.seg.switch_owner(t.pb)), w + 50);
  EXPECT_EQ(t.sim.owner_busy_until_ns(t.seg.switch_owner(t.pc)), w + 50);
  EXPECT_EQ(t.sim.owner_busy_until_ns(t.seg.endpoint_owner(t.pc)), w + 250);
  EXPECT_EQ(t.sim.model_now_ns(), w + 250);
  // Owners are distinct per port and side; an endpoint owner can be shared.
  EXPECT_NE(t.seg.endpoint_owner(t.pb), t.seg.switch_owner(t.pb));
  EXPECT_NE(t.seg.endpoint_owner(t.pb), t.seg.endpoint_owner(t.pc));
  t.seg.set_endpoint_owner(t.pc, t.seg.endpoint_owner(t.pb));
  const std::int64_t w2 = t.sim.begin_model_window();
  {
    Simulator::CpuScope sender(t.sim, t.seg.endpoint_owner(t.pa));
    ASSERT_TRUE(t.seg.sender(t.pa).send_frame(raw_frame(MacAddress::broadcast(), kMacA, 2)));
  }
  t.sim.run_until_idle();
  // Now the two receptions share one CPU and serialise.
  EXPECT_EQ(std::max(rb.start, rc.start), w2 + 250);
  EXPECT_EQ(t.sim.model_now_ns(), w2 + 450);
}

std::vector<std::pair<std::int64_t, Bytes>> lossy_run(std::uint64_t seed) {
  Simulator sim(seed);
  Segment seg(sim);
  Collector b(sim);
  LinkConfig link;
  link.bandwidth_bps = 1'000'000'000;
  const PortId pa = seg.add_port(link);
  seg.add_port(link, &b);
  RandomLossHook loss(0.3, seed);
  DelayHook jitter(Duration::microseconds(1), Duration::microseconds(50), seed + 1);
  seg.add_hook(&loss);
  seg.add_hook(&jitter);
  for (int i = 0; i < 100; ++i) {
    (void)seg.sender(pa).send_frame(raw_frame(kMacB, kMacA, static_cast<std::uint8_t>(i)));
    sim.run_for(Duration::microseconds(10));
  }
  sim.run_until_idle();
  std::vector<std::pair<std::int64_t, Bytes>> trace;
  for (auto& [t, f] : b.frames) trace.emplace_back(t.ns(), f);
  return trace;
}

TEST(SegmentTest, DeterministicGivenSeed) {
  const auto first = lossy_run(11);
  const auto second = lossy_run(11);
  const auto other = lossy_run(12);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  // About 30% lost, and the jitter reorders some frames.
  EXPECT_GT(first.size(), 50u);
  EXPECT_LT(first.size(), 90u);
  bool reordered = false;
  for (std::size_t i = 1; i < first.size(); ++i) reordered |= first[i].second[14] < first[i - 1].second[14];
  EXPECT_TRUE(reordered);
}

TEST(SegmentTest, DestroyedSegmentLeavesHarmlessEvents) {
  Simulator sim;
  Collector b(sim);
  {
    Segment seg(sim);
    const PortId pa = seg.add_port();
    seg.add_port({}, &b);
    ASSERT_TRUE(seg.sender(pa).send_frame(raw_frame(kMacB, kMacA, 1)));
  }
  EXPECT_FALSE(sim.idle());
  sim.run_until_idle();
  EXPECT_TRUE(b.frames.empty());
}

}  // namespace
}  // namespace layersec::net
