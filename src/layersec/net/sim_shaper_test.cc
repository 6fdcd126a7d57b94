// The 802.1Qbv shaper on the simulated segment's links (Segment::set_shaper):
// exact gate timing to the nanosecond, ST without loss or interference under
// saturating BE, and a schedule change landing at its cycle boundary.
#include <stdexcept>

#include <gtest/gtest.h>

#include "layersec/net/sim.h"
#include "layersec/tsn/gate_analysis.h"

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
  Bed() {
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
    seg.set_shaper(rx, LinkSide::kDownlink, sc);
  }
};

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
