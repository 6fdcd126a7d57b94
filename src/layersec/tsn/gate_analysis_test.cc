#include "layersec/tsn/gate_analysis.h"

#include <random>

#include <gtest/gtest.h>

#include "layersec/tsn/egress_port.h"

namespace layersec::tsn {
namespace {

constexpr std::int64_t kUs = 1000;

GateControlList st_be() {
  GateControlList g;
  g.entries = {{0x02, 100 * kUs}, {0x01, 900 * kUs}};
  return g;
}

TEST(GateAnalysis, WindowsAndShares) {
  GateControlList g;
  g.entries = {{0x01, 100 * kUs}, {0x02, 300 * kUs}, {0x03, 100 * kUs}, {0x01, 500 * kUs}};
  auto w = class_windows(g, 3);
  ASSERT_EQ(w.size(), 3u);
  // Class 0: 100 (joined with the 500+100 at the end of the cycle) -> one window of 700, plus none.
  EXPECT_EQ(w[0].windows, 1u);
  EXPECT_EQ(w[0].open_ns, 700 * kUs);
  EXPECT_EQ(w[0].max_window_ns, 700 * kUs);
  EXPECT_DOUBLE_EQ(w[0].share, 0.7);
  EXPECT_EQ(w[1].windows, 1u);
  EXPECT_EQ(w[1].open_ns, 400 * kUs);
  EXPECT_EQ(w[2].windows, 0u);
  EXPECT_EQ(w[2].share, 0.0);
}

TEST(GateAnalysis, BoundOfAnExclusiveWindow) {
  BoundInputs in;
  in.frame_bytes = 200;
  in.link_bps = 100'000'000;
  in.processing_ns = 5 * kUs;
  auto b = latency_bound(st_be(), 1, in);
  ASSERT_TRUE(b.feasible);
  const std::int64_t tx = wire_time_ns(204, 100'000'000);
  EXPECT_EQ(b.transmission_ns, tx);
  // Arriving just after 100 us - tx, the frame waits for the next cycle's window at 1 ms.
  EXPECT_EQ(b.max_gate_wait_ns, 1000 * kUs - (100 * kUs - tx));
  EXPECT_EQ(b.blocking_ns, 0);
  EXPECT_FALSE(b.higher_priority_overlap);
  EXPECT_EQ(b.total_ns, b.max_gate_wait_ns + tx + 5 * kUs);
}

TEST(GateAnalysis, SharedWindowsAddBlockingAndAFrameThatNeverFitsIsInfeasible) {
  GateControlList g;
  g.entries = {{0x03, 100 * kUs}, {0x01, 900 * kUs}};
  BoundInputs in;
  in.frame_bytes = 100;
  auto b = latency_bound(g, 0, in);
  ASSERT_TRUE(b.feasible);
  EXPECT_EQ(b.max_gate_wait_ns, 0);  // always open
  EXPECT_EQ(b.blocking_ns, wire_time_ns(1522, 1'000'000'000));
  EXPECT_TRUE(b.higher_priority_overlap);
  in.frame_bytes = 1500;
  GateControlList tiny;
  tiny.entries = {{0x02, 5 * kUs}, {0x01, 995 * kUs}};
  EXPECT_FALSE(latency_bound(tiny, 1, in).feasible);
}

// The bound against the egress port: a frame of the class offered at every
// microsecond of a cycle, on an otherwise idle port, never waits longer.
TEST(GateAnalysis, BoundHoldsForTheEgressPortAtEveryArrivalInstant) {
  std::mt19937 rng(11);
  for (int round = 0; round < 20; ++round) {
    GateControlList g;
    const int n = 2 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      g.entries.push_back({static_cast<GateMask>(1 + rng() % 3), static_cast<std::int64_t>(20 + rng() % 200) * kUs});
    }
    BoundInputs in;
    in.frame_bytes = 64 + rng() % 1400;
    in.link_bps = 100'000'000;
    for (int c = 0; c < 2; ++c) {
      const auto bound = latency_bound(g, c, in);
      if (!bound.feasible) continue;
      std::int64_t worst = 0;
      const std::int64_t cycle = cycle_time_of(g);
      for (std::int64_t t = 0; t < cycle; t += 3 * kUs) {
        GateSchedule s;
        s.set_admin(g, 0);
        PortConfig pc;
        pc.link_bps = in.link_bps;
        pc.num_classes = 2;
        EgressPort p(pc, std::move(s));
        const std::int64_t at = cycle + t;  // second cycle: no "open before base"
        ASSERT_EQ(p.enqueue(std::vector<std::uint8_t>(in.frame_bytes, 0), c, at), EnqueueResult::kQueued);
        std::int64_t now = at;
        std::optional<Transmission> tr;
        for (int guard = 0; guard < 10 && !(tr = p.dequeue(now)); ++guard) now = p.next_event(now);
        ASSERT_TRUE(tr) << round;
        worst = std::max(worst, tr->end_ns - at);
      }
      EXPECT_LE(worst, bound.total_ns) << "round " << round << " class " << c;
    }
  }
}

}  // namespace
}  // namespace layersec::tsn
