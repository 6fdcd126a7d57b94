// SegmentTrunk: two simulated switches joined by one link, each frame
// serialised once on it, in both directions, with learning across the trunk
// and a shaper on either switch's egress onto it.
#include "layersec/net/sim_bridge.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/tsn/gate_control_list.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;
constexpr std::uint64_t k100M = 100'000'000;

struct Sink final : FrameReceiver {
  explicit Sink(Simulator& s) : sim(s) {}
  void on_frame(ByteSpan f) override { got.push_back({sim.now().ns(), Bytes(f.begin(), f.end())}); }
  Simulator& sim;
  std::vector<std::pair<std::int64_t, Bytes>> got;
};

Bytes frame(MacAddress dst, MacAddress src, std::size_t size, int pcp = -1) {
  Bytes f(size, 0);
  std::copy(dst.bytes.begin(), dst.bytes.end(), f.begin());
  std::copy(src.bytes.begin(), src.bytes.end(), f.begin() + 6);
  if (pcp >= 0) {
    f[12] = 0x81;
    f[13] = 0x00;
    f[14] = static_cast<std::uint8_t>(pcp << 5);
    f[16] = 0x88;
    f[17] = 0xB5;
  } else {
    f[12] = 0x88;
    f[13] = 0xB5;
  }
  return f;
}

LinkConfig link100() {
  LinkConfig l;
  l.bandwidth_bps = k100M;
  l.latency = Duration::microseconds(1);
  return l;
}

// Serialisation of a frame at 100 Mbit/s as the segment computes it.
std::int64_t ser(std::size_t size) { return static_cast<std::int64_t>(wire_bytes(size) * 8 * 10); }

struct Bed {
  Simulator sim{1};
  Segment a{sim};
  Segment b{sim};
  Sink host_a{sim};
  Sink host_b{sim};
  PortId pa = 0, pb = 0;
  SegmentTrunk trunk{a, b, link100()};
  Bed() {
    pa = a.add_port(link100(), &host_a);
    pb = b.add_port(link100(), &host_b);
  }
};

TEST(SegmentTrunk, FrameCrossesWithOneSerialisationPerLink) {
  Bed bed;
  const MacAddress ma = MacAddress::local(1), mb = MacAddress::local(2);
  ASSERT_TRUE(bed.a.sender(bed.pa).send_frame(frame(mb, ma, 200)));
  bed.sim.run_until_idle();
  ASSERT_EQ(bed.host_b.got.size(), 1u);
  // Three links (host A up, trunk, host B down), each serialised once, 1 us each.
  EXPECT_EQ(bed.host_b.got[0].first, 3 * ser(200) + 3 * 1000);
  EXPECT_EQ(bed.host_b.got[0].second, frame(mb, ma, 200));
  EXPECT_TRUE(bed.host_a.got.empty());  // flooded, but never back onto its own port
  EXPECT_EQ(bed.trunk.stats().forwarded_a_to_b, 1u);
  // Both switches learned host A's MAC: A on its host port, B on the trunk.
  EXPECT_EQ(bed.a.lookup(ma), bed.pa);
  EXPECT_EQ(bed.b.lookup(ma), bed.trunk.port_b());

  // The reply goes back the same way, unicast (no flooding on A).
  const std::int64_t t0 = bed.sim.now().ns();
  ASSERT_TRUE(bed.b.sender(bed.pb).send_frame(frame(ma, mb, 100)));
  bed.sim.run_until_idle();
  ASSERT_EQ(bed.host_a.got.size(), 1u);
  EXPECT_EQ(bed.host_a.got[0].first - t0, 3 * ser(100) + 3 * 1000);
  EXPECT_EQ(bed.trunk.stats().forwarded_b_to_a, 1u);
  EXPECT_EQ(bed.b.stats().forwarded_unicast, 1u);
}

TEST(SegmentTrunk, ShaperOnEitherEgressHoldsFramesForTheirWindow) {
  Bed bed;
  const MacAddress ma = MacAddress::local(1), mb = MacAddress::local(2);
  // BE gate (class 0) open only in [500 us, 1 ms) of every 1 ms cycle.
  tsn::GateControlList g;
  g.entries = {{0x02, 500'000}, {0x01, 500'000}};
  ShaperConfig sc;
  sc.port.num_classes = 2;
  sc.schedule.set_admin(g, 0);
  bed.trunk.set_shaper(TrunkDirection::kAToB, sc);
  bed.trunk.set_shaper(TrunkDirection::kBToA, sc);
  ASSERT_NE(bed.trunk.shaper(TrunkDirection::kAToB), nullptr);
  ASSERT_NE(bed.trunk.shaper(TrunkDirection::kBToA), nullptr);
  ASSERT_NE(bed.trunk.shaper(TrunkDirection::kAToB), bed.trunk.shaper(TrunkDirection::kBToA));

  ASSERT_TRUE(bed.a.sender(bed.pa).send_frame(frame(mb, ma, 100, 0)));
  ASSERT_TRUE(bed.b.sender(bed.pb).send_frame(frame(ma, mb, 100, 0)));
  bed.sim.run_until_idle();
  ASSERT_EQ(bed.host_b.got.size(), 1u);
  ASSERT_EQ(bed.host_a.got.size(), 1u);
  // Each waits at its switch's egress onto the trunk for the BE window at
  // 500 us, then the trunk and the far host link.
  EXPECT_EQ(bed.host_b.got[0].first, 500'000 + 2 * ser(100) + 2 * 1000);
  EXPECT_EQ(bed.host_a.got[0].first, 500'000 + 2 * ser(100) + 2 * 1000);
  EXPECT_EQ(bed.trunk.shaper(TrunkDirection::kAToB)->counters(0).held, 1u);
  EXPECT_EQ(bed.trunk.shaper(TrunkDirection::kBToA)->counters(0).held, 1u);
}

TEST(SegmentTrunk, FullFarQueueIsCountedAsATrunkDrop) {
  Simulator sim{1};
  Segment a{sim};
  Segment b{sim};
  Sink sink{sim};
  LinkConfig fast = link100();
  fast.bandwidth_bps = 1'000'000'000;
  const PortId pa = a.add_port(fast, nullptr);
  LinkConfig tiny = link100();
  tiny.queue_frames = 1;
  SegmentTrunk trunk{b, a, tiny};  // A -> B direction is the trunk's B->A: port_a's uplink on b
  (void)b.add_port(link100(), &sink);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(a.sender(pa).send_frame(frame(MacAddress::broadcast(), MacAddress::local(9), 60)));
  sim.run_until_idle();
  // 1 Gbit/s in, 100 Mbit/s on the trunk with room for one frame: the first
  // goes through, the rest arrive while it is on the wire and are dropped.
  EXPECT_EQ(trunk.stats().forwarded_b_to_a, 1u);
  EXPECT_EQ(trunk.stats().dropped_b_to_a, 4u);
  EXPECT_EQ(sink.got.size(), 1u);
}

}  // namespace
}  // namespace layersec::net
