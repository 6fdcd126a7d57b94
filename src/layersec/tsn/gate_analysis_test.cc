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

namespace layersec::tsn {
namespace {

// The bench's schedule: ST (class 1) 600 us, BE (class 0) 400 us, 100 Mbit/s.
PortConfig bench_port(std::uint64_t bps) {
  PortConfig pc;
  pc.link_bps = bps;
  pc.num_classes = 2;
  pc.queue_limit_frames = 256;
  return pc;
}
GateControlList st_600_be_400() {
  GateControlList g;
  g.entries = {{0x02, 600 * kUs}, {0x01, 400 * kUs}};
  return g;
}

TEST(CarriedLoad, AWindowCarriesWholeFramesOnly) {
  // 1,446 octets queued = 1,470 on the wire (FCS, preamble, gap): 117.6 us at
  // 100 Mbit/s. Three end by 352.8 us of the 400 us window; a fourth would
  // end at 470.4 us. Gate share 40 %, carried 3 x 117.6 / 1000 = 35.3 %.
  const OfferedStream be{0, 1446, 0, 0};
  auto r = carried_load(bench_port(100'000'000), st_600_be_400(), std::span(&be, 1), 100'000 * kUs);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].sent, 300u);  // 100 cycles x 3
  EXPECT_EQ(r[0].dropped, 0u);
  // 32 octets of MACsec after the shaper: 120.2 us, still three.
  PortConfig m = bench_port(100'000'000);
  m.expansion_bytes = 32;
  EXPECT_EQ(carried_load(m, st_600_be_400(), std::span(&be, 1), 100'000 * kUs)[0].sent, 300u);
  // At 1 Gbit/s: 11.76 us each, 34 end by 399.84 us; with MACsec 12.02 us, 33.
  EXPECT_EQ(carried_load(bench_port(1'000'000'000), st_600_be_400(), std::span(&be, 1), 10'000 * kUs)[0].sent, 340u);
  m.link_bps = 1'000'000'000;
  EXPECT_EQ(carried_load(m, st_600_be_400(), std::span(&be, 1), 10'000 * kUs)[0].sent, 330u);
}

TEST(CarriedLoad, OpenGatesGiveBeWhatStLeavesAndStLosesNothing) {
  GateControlList open;
  open.entries = {{0x03, 1000 * kUs}};
  // ST: 1,046 octets (1,070 on the wire, 85.6 us) every 200 us; BE saturating.
  const std::vector<OfferedStream> s{{1, 1046, 200 * kUs, 0}, {0, 1446, 0, 0}};
  auto r = carried_load(bench_port(100'000'000), open, s, 100'000 * kUs);
  EXPECT_EQ(r[0].offered, 500u);
  EXPECT_EQ(r[0].sent, 500u);
  EXPECT_EQ(r[0].dropped, 0u);
  // The wire is never idle: ST takes 500 x 85.6 us of 100 ms, BE the rest
  // (57.2 ms / 117.6 us = 486.4 frames; the 487th started before the end).
  EXPECT_EQ(r[1].sent, 487u);
  // Shaped: ST loses nothing (the frames arriving in a BE window go at the
  // next ST window's start; only the last cycle's two, at 99.6 and 99.8 ms,
  // are still queued when the run ends) and BE keeps its three frames per
  // cycle (its gate is closed to ST, and ST never holds its window).
  auto shaped = carried_load(bench_port(100'000'000), st_600_be_400(), s, 100'000 * kUs);
  EXPECT_EQ(shaped[0].offered, 500u);
  EXPECT_EQ(shaped[0].sent, 498u);
  EXPECT_EQ(shaped[0].dropped, 0u);
  EXPECT_EQ(shaped[1].sent, 300u);
}

TEST(CarriedLoad, RefusesAStreamWithoutAFrameOrClassAndAnInvalidList) {
  const OfferedStream none{0, 0, 0, 0};
  EXPECT_THROW((void)carried_load(bench_port(100'000'000), st_600_be_400(), std::span(&none, 1), kUs),
               std::invalid_argument);
  const OfferedStream bad_class{2, 100, 0, 0};
  EXPECT_THROW((void)carried_load(bench_port(100'000'000), st_600_be_400(), std::span(&bad_class, 1), kUs),
               std::invalid_argument);
  GateControlList empty;
  const OfferedStream ok{0, 100, 0, 0};
  EXPECT_THROW((void)carried_load(bench_port(100'000'000), empty, std::span(&ok, 1), kUs), std::invalid_argument);
}

}  // namespace
}  // namespace layersec::tsn
