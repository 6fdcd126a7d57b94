#include "layersec/tsn/gate_control_list.h"

#include <random>

#include <gtest/gtest.h>

namespace layersec::tsn {
namespace {

constexpr std::int64_t kUs = 1000;

// ST (class 1) 300 us, BE (class 0) 700 us, cycle 1 ms, from t = 10 ms.
GateControlList st_be(std::int64_t base = 10'000 * kUs) {
  GateControlList g;
  g.base_time_ns = base;
  g.entries = {{0x02, 300 * kUs}, {0x01, 700 * kUs}};
  return g;
}

TEST(GclValidate, AcceptsAGoodListAndNamesEachProblem) {
  GclLimits lim;
  lim.num_classes = 2;
  EXPECT_FALSE(validate(st_be(), lim));

  auto g = st_be();
  g.entries[1].interval_ns = 0;
  auto p = validate(g, lim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->error, GclError::kNonPositiveInterval);
  EXPECT_EQ(p->entry, 1);
  EXPECT_NE(p->message.find("sched-entry 1"), std::string::npos);

  g = st_be();
  g.entries[0].interval_ns = 600;  // < 672 ns, one 64-byte frame + 20 at 1 Gbit/s
  p = validate(g, lim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->error, GclError::kIntervalTooShort);
  EXPECT_NE(p->message.find("672 ns"), std::string::npos) << p->message;

  g = st_be();
  g.entries[0].gates = 0x04;
  p = validate(g, lim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->error, GclError::kMaskBeyondClasses);
  EXPECT_EQ(p->entry, 0);

  g = st_be();
  g.cycle_time_ns = 900 * kUs;
  p = validate(g, lim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->error, GclError::kCycleMismatch);

  g = st_be();
  g.cycle_time_ns = 1000 * kUs;
  EXPECT_FALSE(validate(g, lim));
  g.cycle_time_extension_ns = 1000 * kUs;
  EXPECT_EQ(validate(g, lim)->error, GclError::kBadCycleExtension);

  g = st_be();
  lim.now_ns = 20'000 * kUs;
  EXPECT_EQ(validate(g, lim)->error, GclError::kBaseTimeInPast);
  lim.now_ns.reset();

  g = st_be();
  g.base_time_ns = kMaxBaseTimeNs + 1;
  EXPECT_EQ(validate(g, lim)->error, GclError::kBaseTimeTooLarge);
  g = st_be();
  g.entries[1].interval_ns = kMaxCycleNs;
  p = validate(g, lim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->error, GclError::kCycleTooLong);
  EXPECT_EQ(p->entry, 1);
  g = st_be();
  g.cycle_time_ns = kMaxCycleNs + 1;
  EXPECT_EQ(validate(g, lim)->error, GclError::kCycleTooLong);

  g = st_be();
  g.entries.clear();
  EXPECT_EQ(validate(g, lim)->error, GclError::kNoEntries);
  lim.link_bps = 0;
  EXPECT_EQ(validate(st_be(), lim)->error, GclError::kBadLinkSpeed);
}

TEST(GclTiming, WireTimes) {
  EXPECT_EQ(wire_time_ns(64, 1'000'000'000), 672);
  EXPECT_EQ(wire_time_ns(10, 1'000'000'000), 672);  // padded to 64
  // 1,522-byte tagged frame + 32 bytes of MACsec: 12.6 us at 1 Gbit/s, 126 us at 100 Mbit/s.
  EXPECT_EQ(wire_time_ns(1522 + 32, 1'000'000'000), 12'592);
  EXPECT_EQ(wire_time_ns(1522 + 32, 100'000'000), 125'920);
  EXPECT_EQ(min_frame_time_ns(100'000'000), 6'720);
}

TEST(GateSchedule, NoListMeansOpenGates) {
  GateSchedule s;
  EXPECT_TRUE(s.open(0, 0));
  EXPECT_TRUE(s.open(7, 123456789));
  EXPECT_EQ(s.close_time(3, 5), kNever);
  EXPECT_EQ(s.max_window(3), kNever);
}

TEST(GateSchedule, ExactSegmentsFromTheBaseTime) {
  GateSchedule s;
  EXPECT_EQ(s.set_admin(st_be(), 0), 10'000 * kUs);
  // Before the base: all open.
  EXPECT_TRUE(s.open(0, 9'999 * kUs));
  EXPECT_TRUE(s.open(1, 9'999 * kUs));
  EXPECT_EQ(s.close_time(0, 0), 10'000 * kUs);
  // Cycle n: [10 ms + n, +300 us) ST, then BE until +1 ms.
  for (int n = 0; n < 5; ++n) {
    const std::int64_t c = 10'000 * kUs + n * 1000 * kUs;
    EXPECT_TRUE(s.open(1, c));
    EXPECT_FALSE(s.open(0, c));
    EXPECT_TRUE(s.open(1, c + 300 * kUs - 1));
    EXPECT_FALSE(s.open(1, c + 300 * kUs));
    EXPECT_TRUE(s.open(0, c + 300 * kUs));
    EXPECT_EQ(s.close_time(1, c + 5), c + 300 * kUs);
    EXPECT_EQ(s.next_open(0, c + 5), c + 300 * kUs);
    EXPECT_EQ(s.close_time(0, c + 400 * kUs), c + 1000 * kUs);
    EXPECT_EQ(s.next_open(1, c + 400 * kUs), c + 1000 * kUs);
    auto seg = s.segment_at(c + 450 * kUs);
    EXPECT_EQ(seg.gates, 0x01);
    EXPECT_EQ(seg.start_ns, c + 300 * kUs);
    EXPECT_EQ(seg.end_ns, c + 1000 * kUs);
  }
  EXPECT_EQ(s.max_window(1), 300 * kUs);
  EXPECT_EQ(s.max_window(0), 700 * kUs);
  EXPECT_EQ(s.max_window(2), 0);
  EXPECT_EQ(s.next_open(2, 20'000 * kUs), kNever);
}

TEST(GateSchedule, BaseTimeInThePastStartsAtTheNextCycleBoundary) {
  GateSchedule s;
  // Base 10 ms, given at 12.4 ms: starts at 13 ms, the first 10 + n ms not before now.
  EXPECT_EQ(s.set_admin(st_be(), 12'400 * kUs), 13'000 * kUs);
  EXPECT_TRUE(s.open(0, 12'999 * kUs));  // open before its start
  EXPECT_FALSE(s.open(0, 13'000 * kUs));
}

TEST(GateSchedule, WindowsThatWrapAroundTheCycleJoin) {
  GateControlList g;
  g.base_time_ns = 0;
  g.entries = {{0x01, 100 * kUs}, {0x02, 800 * kUs}, {0x01, 100 * kUs}};
  GateSchedule s;
  s.set_admin(g, 0);
  EXPECT_EQ(s.max_window(0), 200 * kUs);
  EXPECT_EQ(s.close_time(0, 950 * kUs), 1100 * kUs);  // runs through the cycle boundary
}

TEST(GateSchedule, ConfigChangeLandsOnTheNewListsCycleBoundaryAndCutsTheOldCycle) {
  GateSchedule s;
  s.set_admin(st_be(0), 0);  // cycle 1 ms from 0
  GateControlList next;
  next.base_time_ns = 5'400 * kUs;  // a boundary of the new list, in the middle of old cycle 5
  next.entries = {{0x01, 200 * kUs}, {0x02, 200 * kUs}};
  EXPECT_EQ(s.set_admin(next, 2'100 * kUs), 5'400 * kUs);
  EXPECT_TRUE(s.config_pending());
  // Old cycle 5 runs ST 5.0-5.3, BE 5.3-5.4 (cut), then the new list.
  EXPECT_TRUE(s.open(1, 5'000 * kUs));
  EXPECT_TRUE(s.open(0, 5'350 * kUs));
  EXPECT_EQ(s.close_time(0, 5'350 * kUs), 5'400 * kUs + 200 * kUs);  // BE stays open into the new BE entry
  EXPECT_EQ(s.segment_at(5'350 * kUs).end_ns, 5'400 * kUs);
  EXPECT_TRUE(s.open(0, 5'400 * kUs));
  EXPECT_TRUE(s.open(1, 5'600 * kUs));
  EXPECT_FALSE(s.open(1, 5'800 * kUs));
  EXPECT_EQ(s.config_changes(), 0u);
  s.advance(5'400 * kUs);
  EXPECT_FALSE(s.config_pending());
  EXPECT_EQ(s.config_changes(), 1u);
  EXPECT_EQ(s.operational()->entries.size(), 2u);
  EXPECT_TRUE(s.open(1, 5'600 * kUs));
}

TEST(GateSchedule, ChangeWithinTheCycleExtensionStretchesTheLastCycle) {
  auto oper = st_be(0);
  oper.cycle_time_extension_ns = 200 * kUs;
  GateSchedule s;
  s.set_admin(oper, 0);
  GateControlList next;
  next.base_time_ns = 4'150 * kUs;  // 150 us after old cycle 4 starts: within the extension of cycle 3
  next.entries = {{0x02, 500 * kUs}, {0x01, 500 * kUs}};
  s.set_admin(next, 1'000 * kUs);
  // Cycle 3 (3.0-4.0) is stretched to 4.15: BE held 3.3-4.15, no ST at 4.0.
  EXPECT_FALSE(s.open(1, 4'000 * kUs));
  EXPECT_TRUE(s.open(0, 4'100 * kUs));
  EXPECT_EQ(s.segment_at(4'100 * kUs).start_ns, 3'300 * kUs);
  EXPECT_EQ(s.segment_at(4'100 * kUs).end_ns, 4'150 * kUs);
  EXPECT_TRUE(s.open(1, 4'150 * kUs));
  EXPECT_EQ(s.close_time(1, 4'150 * kUs), 4'650 * kUs);
}

TEST(GateSchedule, ChangeBeforeTheOperationalListStartsReplacesIt) {
  GateSchedule s;
  s.set_admin(st_be(10'000 * kUs), 0);
  auto next = st_be(5'000 * kUs);
  next.entries[0].gates = 0x03;
  EXPECT_EQ(s.set_admin(next, 1'000 * kUs), 5'000 * kUs);
  EXPECT_FALSE(s.config_pending());
  EXPECT_TRUE(s.open(0, 5'000 * kUs));
}

// Brute force over random lists: close_time / next_open agree with open()
// sampled every microsecond.
TEST(GateSchedule, CloseAndOpenTimesAgreeWithSampling) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    GateControlList g;
    g.base_time_ns = static_cast<std::int64_t>(rng() % 50) * kUs;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      g.entries.push_back({static_cast<GateMask>(rng() % 4), static_cast<std::int64_t>(1 + rng() % 40) * kUs});
    }
    GateSchedule s;
    s.set_admin(g, 0);
    for (int c = 0; c < 2; ++c) {
      for (std::int64_t t = 0; t < 400 * kUs; t += 7 * kUs) {
        const std::int64_t close = s.close_time(c, t);
        const std::int64_t open = s.next_open(c, t);
        if (s.open(c, t)) {
          EXPECT_EQ(open, t);
          if (close != kNever) {
            for (std::int64_t u = t; u < close; u += kUs) ASSERT_TRUE(s.open(c, u)) << round << " " << t << " " << u;
            EXPECT_FALSE(s.open(c, close));
          }
        } else {
          EXPECT_EQ(close, t);
          if (open != kNever) {
            for (std::int64_t u = t; u < open; u += kUs) ASSERT_FALSE(s.open(c, u));
            EXPECT_TRUE(s.open(c, open));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace layersec::tsn
