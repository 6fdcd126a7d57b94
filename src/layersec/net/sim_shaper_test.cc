// The 802.1Qbv shaper on the simulated segment's links (Segment::set_shaper):
// exact gate timing to the nanosecond, ST without loss or interference under
// saturating BE, and a schedule change landing at its cycle boundary; the
// same on a port whose clock drifts (ShaperConfig::time_base): the gates,
// the guard band and a config change follow the local clock, to the
// nanosecond of true time.
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "layersec/net/sim.h"
#include "layersec/tsn/gate_analysis.h"
#include "layersec/tsn/time_base.h"

namespace layersec::net {
namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::uint64_t k100M = 100'000'000;

struct Arrival {
  std::int64_t at_ns;
  std::uint8_t pcp;
  std::uint32_t seq;
};

class Sink final : public FrameReceiver {
 public:
  explicit Sink(Simulator& sim) : sim_(sim) {}
  void on_frame(ByteSpan f) override {
    const std::uint8_t pcp = f.size() >= 16 && f[12] == 0x81 ? static_cast<std::uint8_t>(f[14] >> 5) : 0;
    const std::uint32_t seq = f.size() >= 22 ? load_be32(f.data() + 18) : 0;
    got.push_back({sim_.now().ns(), pcp, seq});
  }
  std::vector<Arrival> got;

 private:
  Simulator& sim_;
};

// A C-tagged frame (0x88B5 local experimental) of `size` bytes to port 1's MAC.
std::vector<std::uint8_t> tagged(std::uint8_t pcp, std::uint32_t seq, std::size_t size, std::uint8_t src) {
  std::vector<std::uint8_t> f(size, 0);
  const auto dst = MacAddress::local(0x100).bytes;
  std::copy(dst.begin(), dst.end(), f.begin());
  f[6] = 0x02;
  f[11] = src;
  f[12] = 0x81;
  f[13] = 0x00;
  f[14] = static_cast<std::uint8_t>(pcp << 5);
  f[15] = 10;
  f[16] = 0x88;
  f[17] = 0xB5;
  store_be32(f.data() + 18, seq);
  return f;
}

// ST (class 1, PCP 6 with two classes) [0, 100 us), BE [100 us, 1 ms), from t = 0.
tsn::GateControlList st_be() {
  tsn::GateControlList g;
  g.entries = {{0x02, 100 * kUs}, {0x01, 900 * kUs}};
  return g;
}

struct Bed {
  Simulator sim{1, TimePoint::from_ns(0)};
  Segment seg{sim};
  Sink sink{sim};
  PortId a = 0, rx = 0, b = 0;
  explicit Bed(std::shared_ptr<const tsn::TimeBase> clock = nullptr) {
    LinkConfig fast;
    fast.bandwidth_bps = 1'000'000'000;
    fast.latency = Duration::microseconds(1);
    fast.queue_frames = 100000;
    LinkConfig slow = fast;
    slow.bandwidth_bps = k100M;
    a = seg.add_port(fast);
    rx = seg.add_port(slow, &sink);
    b = seg.add_port(fast);
    // Teach the switch where port 1's MAC is, so frames are not flooded back.
    std::vector<std::uint8_t> hello(60, 0);
    const auto mac = MacAddress::local(0x100).bytes;
    hello[0] = 0xFF;
    std::fill(hello.begin(), hello.begin() + 6, 0xFF);
    std::copy(mac.begin(), mac.end(), hello.begin() + 6);
    hello[12] = 0x88;
    hello[13] = 0xB5;
    EXPECT_TRUE(seg.sender(rx).send_frame(hello));
    sim.run_for(Duration::microseconds(50));
    ShaperConfig sc;
    sc.port.num_classes = 2;
    sc.port.queue_limit_frames = 64;
    sc.schedule.set_admin(st_be(), 0);
    sc.time_base = std::move(clock);
    seg.set_shaper(rx, LinkSide::kDownlink, sc);
  }
};

// The drifting clock written out independently of tsn::LinearTimeBase:
// local(t) = t + floor(t · ppb / 1e9), and the first true ns reading l.
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
std::int64_t local_at(std::int64_t ppb, std::int64_t t) { return t + floor_div(t * ppb, 1'000'000'000); }
std::int64_t true_at(std::int64_t ppb, std::int64_t l) {
  std::int64_t t = l - l * ppb / 1'000'000'000 - 10;  // below the answer: l·(1 - ppb) <= l / (1 + ppb)
  while (local_at(ppb, t) < l) ++t;
  return t;
}
// When a frame due to start at local time `due` (of `bytes` without FCS,
// 100 Mbit/s) reaches the sink: it starts at the first true ns the clock
// reads `due` or more (a fast clock skips a value now and then), ends
// its wire time later on the port's clock, then 1 us of cable.
std::int64_t arrival(std::int64_t ppb, std::int64_t due, std::size_t bytes) {
  const std::int64_t start = local_at(ppb, true_at(ppb, due));
  return true_at(ppb, start + tsn::wire_time_ns(bytes + 4, k100M)) + 1 * kUs;
}

TEST(SimShaper, GateTimingIsExactToTheNanosecond) {
  Bed bed;
  // A BE frame (PCP 0) sent at 10 us reaches the switch at 10 + 0.672 + 1 us
  // (64 bytes at 1 Gbit/s, 1 us of cable) but waits for the BE window at 1.1 ms
  // (the ST window of cycle 1 is closed to it): it arrives at 1.1 ms + its wire
  // time at 100 Mbit/s + 1 us.
  bed.sim.schedule_at(TimePoint::from_ns(1'010 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(0, 1, 64, 1))); });
  // An ST frame (PCP 6) sent at 1.5 ms waits for the ST window at 2 ms.
  bed.sim.schedule_at(TimePoint::from_ns(1'500 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(6, 2, 200, 1))); });
  bed.sim.run_for(Duration::milliseconds(5));
  ASSERT_EQ(bed.sink.got.size(), 2u);
  EXPECT_EQ(bed.sink.got[0].seq, 1u);
  EXPECT_EQ(bed.sink.got[0].at_ns, 1'100 * kUs + tsn::wire_time_ns(68, k100M) + 1 * kUs);  // 64 bytes + FCS
  EXPECT_EQ(bed.sink.got[1].seq, 2u);
  EXPECT_EQ(bed.sink.got[1].at_ns, 2'000 * kUs + tsn::wire_time_ns(204, k100M) + 1 * kUs);
  const auto* sh = bed.seg.shaper(bed.rx, LinkSide::kDownlink);
  ASSERT_NE(sh, nullptr);
  EXPECT_EQ(sh->counters(0).held, 1u);
  EXPECT_EQ(sh->counters(1).held, 1u);
}

TEST(SimShaper, StHasNoLossAndStaysWithinItsBoundWhileBeSaturatesThePort) {
  Bed bed;
  // BE: 1,500-byte frames from port 0 at 1 Gbit/s line rate into a 100 Mbit/s
  // port (ten times what it can carry). ST: 4 frames of 200 bytes from port 2
  // every cycle, released at a random instant while the BE gate is open, so
  // each burst waits for the next ST window with BE queued in front of it
  // (and bursts of different cycles do not share a window: the bound is per
  // burst).
  SimRng& rng = bed.sim.rng();
  std::uint32_t be_seq = 0;
  std::uint32_t st_seq = 1'000'000;
  std::map<std::uint32_t, std::int64_t> st_sent;
  const int cycles = 40;
  for (int c = 0; c < cycles; ++c) {
    for (int k = 0; k < 80; ++k) {
      const std::int64_t t = c * 1'000 * kUs + k * 12'500;
      bed.sim.schedule_at(TimePoint::from_ns(t), [&] { (void)bed.seg.sender(bed.a).send_frame(tagged(0, be_seq++, 1500, 1)); });
    }
    const std::int64_t st_at = c * 1'000 * kUs + 100 * kUs + static_cast<std::int64_t>(rng.uniform(900'000));
    bed.sim.schedule_at(TimePoint::from_ns(st_at), [&, st_at] {
      for (int k = 0; k < 4; ++k) {
        st_sent[st_seq] = st_at;
        EXPECT_TRUE(bed.seg.sender(bed.b).send_frame(tagged(6, st_seq++, 200, 2)));
      }
    });
  }
  bed.sim.run_for(Duration::milliseconds(cycles + 5));
  std::size_t st_got = 0;
  std::size_t be_got = 0;
  std::int64_t st_worst = 0;
  for (const auto& a : bed.sink.got) {
    if (a.pcp == 6) {
      ++st_got;
      st_worst = std::max(st_worst, a.at_ns - st_sent.at(a.seq));
      // Inside an ST window: [n ms, n ms + 100 us] (arrival = end + 1 us of cable).
      const std::int64_t in_cycle = (a.at_ns - 1 * kUs) % (1'000 * kUs);
      EXPECT_LE(in_cycle, 100 * kUs) << a.seq;
    } else if (a.at_ns >= 1'000 * kUs && a.at_ns < (cycles + 1) * 1'000 * kUs) {
      ++be_got;  // BE delivered over `cycles` whole cycles of the schedule
    }
  }
  EXPECT_EQ(st_got, st_sent.size());
  const auto* sh = bed.seg.shaper(bed.rx, LinkSide::kDownlink);
  EXPECT_EQ(sh->counters(1).dropped_queue_full, 0u);
  EXPECT_GT(sh->counters(0).dropped_queue_full, 0u);  // BE is over-subscribed and dropped, counted
  EXPECT_EQ(sh->counters(0).transmission_overruns + sh->counters(1).transmission_overruns, 0u);
  // The analytic bound for the 4th frame of a burst: gate wait + 4 frames + the
  // 1 Gbit/s hop in front of the port (frames of the burst queue behind each other there).
  tsn::BoundInputs in;
  in.frame_bytes = 200;
  in.link_bps = k100M;
  const auto bound = tsn::latency_bound(st_be(), 1, in);
  const std::int64_t burst = bound.total_ns + 3 * tsn::wire_time_ns(204, k100M) + 4 * tsn::wire_time_ns(204, 1'000'000'000) +
                             2 * kUs;
  EXPECT_LE(st_worst, burst);
  // BE carries at most its share of the port: 900 us of 1 ms at 100 Mbit/s.
  const double be_bits = static_cast<double>(be_got) * (1500 + 24) * 8;
  EXPECT_LE(be_bits / (cycles * 1e-3), 0.9 * 100e6 * 1.01);
  EXPECT_GT(be_bits / (cycles * 1e-3), 0.9 * 100e6 * 0.9);
}

TEST(SimShaper, ANewScheduleLandsOnItsCycleBoundary) {
  Bed bed;
  // At 2.3 ms install a list that gives BE the first 500 us, from 5 ms.
  tsn::GateControlList next;
  next.base_time_ns = 5'000 * kUs;
  next.entries = {{0x01, 500 * kUs}, {0x02, 500 * kUs}};
  bed.sim.schedule_at(TimePoint::from_ns(2'300 * kUs), [&] {
    auto at = bed.seg.set_schedule(bed.rx, LinkSide::kDownlink, next);
    ASSERT_TRUE(at);
    EXPECT_EQ(at->ns(), 5'000 * kUs);
  });
  // ST frames sent at 4.95 ms and 5.05 ms: the first waits until the new ST window at 5.5 ms
  // (the old list's ST window at 5.0 ms no longer exists), as does the second.
  bed.sim.schedule_at(TimePoint::from_ns(4'950 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.b).send_frame(tagged(6, 1, 100, 2))); });
  bed.sim.schedule_at(TimePoint::from_ns(5'050 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.b).send_frame(tagged(6, 2, 100, 2))); });
  bed.sim.run_for(Duration::milliseconds(8));
  ASSERT_EQ(bed.sink.got.size(), 2u);
  EXPECT_EQ(bed.sink.got[0].at_ns, 5'500 * kUs + tsn::wire_time_ns(104, k100M) + 1 * kUs);
  EXPECT_EQ(bed.sink.got[1].at_ns, 5'500 * kUs + 2 * tsn::wire_time_ns(104, k100M) + 1 * kUs);
  EXPECT_EQ(bed.seg.shaper(bed.rx, LinkSide::kDownlink)->gates().config_changes(), 1u);
}

TEST(SimShaper, APortOnAFastClockOpensItsGatesWhenItsClockSays) {
  constexpr std::int64_t kPpb = 100'000;  // +100 ppm: 100 ns per ms ahead of simulated time
  Bed bed(std::make_shared<tsn::LinearTimeBase>(0, kPpb));
  // Every cycle c: an ST frame sent in the BE window (at c ms + 500 us of
  // simulated time) waits for the ST window at local (c+1) ms, a BE frame
  // sent at (c+1) ms + 10 us for the BE window at local (c+1) ms + 100 us.
  const int cycles = 20;
  for (int c = 1; c <= cycles; ++c) {
    bed.sim.schedule_at(TimePoint::from_ns(c * 1'000 * kUs + 500 * kUs),
                        [&, c] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(6, 2 * c, 200, 1))); });
    bed.sim.schedule_at(TimePoint::from_ns((c + 1) * 1'000 * kUs + 10 * kUs),
                        [&, c] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(0, 2 * c + 1, 64, 1))); });
  }
  bed.sim.run_for(Duration::milliseconds(cycles + 5));
  ASSERT_EQ(bed.sink.got.size(), 2u * cycles);
  // By hand for the first: local 2 ms is true 1,999,801 ns (1,999,801 +
  // floor(199.98) = 2,000,000); the frame's 17,920 ns end at local 2,017,920
  // = true 2,017,719; 1 us of cable. On simulated time it would arrive 201 ns later.
  EXPECT_EQ(bed.sink.got[0].seq, 2u);
  EXPECT_EQ(bed.sink.got[0].at_ns, 2'018'719);
  for (const auto& a : bed.sink.got) {
    const auto c = static_cast<std::int64_t>(a.seq / 2);
    if (a.seq % 2 == 0) {
      EXPECT_EQ(a.at_ns, arrival(kPpb, (c + 1) * 1'000 * kUs, 200)) << "ST of cycle " << c;
    } else {
      EXPECT_EQ(a.at_ns, arrival(kPpb, (c + 1) * 1'000 * kUs + 100 * kUs, 64)) << "BE of cycle " << c;
    }
  }
  // After 20 cycles the port's windows open 2.1 us before simulated time's
  // (local 21 ms is true 20,997,901 ns: 20,997,901 + 2,099 = 21,000,000).
  EXPECT_EQ(true_at(kPpb, 21'000 * kUs), 20'997'901);
  const auto* sh = bed.seg.shaper(bed.rx, LinkSide::kDownlink);
  EXPECT_EQ(sh->counters(0).transmission_overruns + sh->counters(1).transmission_overruns, 0u);
}

TEST(SimShaper, AConfigChangeOnADriftingClockLandsOnItsLocalCycleBoundary) {
  constexpr std::int64_t kPpb = 100'000;
  Bed bed(std::make_shared<tsn::LinearTimeBase>(0, kPpb));
  tsn::GateControlList next;
  next.base_time_ns = 5'000 * kUs;  // local time
  next.entries = {{0x01, 500 * kUs}, {0x02, 500 * kUs}};
  bed.sim.schedule_at(TimePoint::from_ns(2'300 * kUs), [&] {
    auto at = bed.seg.set_schedule(bed.rx, LinkSide::kDownlink, next);
    ASSERT_TRUE(at);
    // Local 5 ms: true 4,999,501 ns (4,999,501 + floor(499.95) = 5,000,000).
    EXPECT_EQ(at->ns(), 4'999'501);
    EXPECT_EQ(local_at(kPpb, at->ns() - 1), 5'000 * kUs - 1);
  });
  // As on simulated time: both frames wait for the new list's ST window at
  // local 5.5 ms, back to back.
  bed.sim.schedule_at(TimePoint::from_ns(4'950 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.b).send_frame(tagged(6, 1, 100, 2))); });
  bed.sim.schedule_at(TimePoint::from_ns(5'050 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.b).send_frame(tagged(6, 2, 100, 2))); });
  bed.sim.run_for(Duration::milliseconds(8));
  ASSERT_EQ(bed.sink.got.size(), 2u);
  const std::int64_t w = tsn::wire_time_ns(104, k100M);
  EXPECT_EQ(bed.sink.got[0].at_ns, arrival(kPpb, 5'500 * kUs, 100));
  EXPECT_EQ(bed.sink.got[0].at_ns, 5'510'370);  // by hand: local 5,509,920 = true 5,509,370
  EXPECT_EQ(bed.sink.got[1].at_ns, arrival(kPpb, 5'500 * kUs + w, 100));
  EXPECT_EQ(bed.seg.shaper(bed.rx, LinkSide::kDownlink)->gates().config_changes(), 1u);
}

TEST(SimShaper, OnADriftingClockAFrameStartsOnlyIfItEndsInItsLocalWindow) {
  // -1000 ppm. Three ST frames queued before the window of local 1 ms: at
  // 100 Mbit/s a byte is 80 ns, the 100 us window 1,250 byte times, each
  // frame its size + 24 (FCS, preamble, gap). 392+392+394 fill it exactly;
  // with 395 the third would end 80 ns after the gate closes and waits for
  // the next window.
  constexpr std::int64_t kPpb = -1'000'000;
  for (const std::size_t third : {394u, 395u}) {
    SCOPED_TRACE("third frame " + std::to_string(third));
    Bed bed(std::make_shared<tsn::LinearTimeBase>(0, kPpb));
    const std::size_t sizes[3] = {392, 392, third};
    for (std::uint32_t i = 0; i < 3; ++i) {
      bed.sim.schedule_at(TimePoint::from_ns(200 * kUs + i * 10 * kUs),
                          [&, i] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(6, i, sizes[i], 1))); });
    }
    bed.sim.run_for(Duration::milliseconds(4));
    ASSERT_EQ(bed.sink.got.size(), 3u);
    std::int64_t local = 1'000 * kUs;
    for (std::uint32_t i = 0; i < 2; ++i) {
      EXPECT_EQ(bed.sink.got[i].at_ns, arrival(kPpb, local, sizes[i])) << i;
      local += tsn::wire_time_ns(sizes[i] + 4, k100M);
    }
    if (third == 394) {
      EXPECT_EQ(local + tsn::wire_time_ns(394 + 4, k100M), 1'100 * kUs);  // ends as the gate closes
      EXPECT_EQ(bed.sink.got[2].at_ns, arrival(kPpb, local, 394));
    } else {
      EXPECT_EQ(bed.sink.got[2].at_ns, arrival(kPpb, 2'000 * kUs, 395));
    }
    const auto* sh = bed.seg.shaper(bed.rx, LinkSide::kDownlink);
    EXPECT_EQ(sh->counters(1).transmission_overruns, 0u);
    EXPECT_EQ(sh->counters(1).transmitted, 3u);
  }
}

TEST(SimShaper, AnIdentityClockChangesNothing) {
  // The time-base path with local == simulated time gives the figures of
  // the plain port, to the nanosecond.
  for (const bool with_clock : {false, true}) {
    Bed bed(with_clock ? std::make_shared<tsn::LinearTimeBase>(0, 0) : nullptr);
    bed.sim.schedule_at(TimePoint::from_ns(1'010 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(0, 1, 64, 1))); });
    bed.sim.schedule_at(TimePoint::from_ns(1'500 * kUs), [&] { EXPECT_TRUE(bed.seg.sender(bed.a).send_frame(tagged(6, 2, 200, 1))); });
    bed.sim.run_for(Duration::milliseconds(5));
    ASSERT_EQ(bed.sink.got.size(), 2u);
    EXPECT_EQ(bed.sink.got[0].at_ns, 1'100 * kUs + tsn::wire_time_ns(68, k100M) + 1 * kUs);
    EXPECT_EQ(bed.sink.got[1].at_ns, 2'000 * kUs + tsn::wire_time_ns(204, k100M) + 1 * kUs);
  }
}

TEST(SimShaper, UnshapedLinksAndBadConfigurations) {
  Bed bed;
  EXPECT_EQ(bed.seg.shaper(bed.a, LinkSide::kDownlink), nullptr);
  EXPECT_FALSE(bed.seg.set_schedule(bed.a, LinkSide::kUplink, st_be()));
  tsn::GateControlList beyond;
  beyond.entries = {{0x04, 500 * kUs}};  // class 2 on a two-class port
  EXPECT_THROW((void)bed.seg.set_schedule(bed.rx, LinkSide::kDownlink, beyond), std::invalid_argument);
  LinkConfig nobw;
  nobw.bandwidth_bps = 0;
  const PortId p = bed.seg.add_port(nobw);
  ShaperConfig sc;
  EXPECT_THROW(bed.seg.set_shaper(p, LinkSide::kDownlink, sc), std::invalid_argument);
  sc.port.num_classes = 2;
  sc.classes = tsn::TrafficClassMap::standard(4);
  EXPECT_THROW(bed.seg.set_shaper(bed.a, LinkSide::kDownlink, sc), std::invalid_argument);
}

}  // namespace
}  // namespace layersec::net
