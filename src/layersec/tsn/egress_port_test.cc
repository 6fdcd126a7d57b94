#include "layersec/tsn/egress_port.h"

#include <random>

#include <gtest/gtest.h>

namespace layersec::tsn {
namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::uint64_t kGbit = 1'000'000'000;

std::vector<std::uint8_t> frame(std::size_t n) { return std::vector<std::uint8_t>(n, 0xAB); }

// ST = class 1 in [0, 100 us), BE = class 0 in [100 us, 1 ms), cycle 1 ms from 0.
GateSchedule st_be() {
  GateControlList g;
  g.entries = {{0x02, 100 * kUs}, {0x01, 900 * kUs}};
  GateSchedule s;
  s.set_admin(g, 0);
  return s;
}

PortConfig two_classes(std::uint64_t bps = kGbit) {
  PortConfig c;
  c.link_bps = bps;
  c.num_classes = 2;
  return c;
}

TEST(EgressPort, StrictPriorityWithoutSchedule) {
  EgressPort p(two_classes(), GateSchedule{});
  ASSERT_EQ(p.enqueue(frame(100), 0, 0, 1), EnqueueResult::kQueued);
  ASSERT_EQ(p.enqueue(frame(100), 1, 0, 2), EnqueueResult::kQueued);
  auto a = p.dequeue(0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tag, 2u);
  EXPECT_EQ(a->end_ns, wire_time_ns(104, kGbit));
  EXPECT_FALSE(p.dequeue(a->end_ns - 1));  // the wire is busy
  EXPECT_EQ(p.next_event(a->end_ns - 1), a->end_ns);
  auto b = p.dequeue(a->end_ns);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->tag, 1u);
  EXPECT_EQ(p.next_event(b->end_ns), kNever);
}

TEST(EgressPort, AFrameNeverStartsIfItCannotFinishBeforeItsGateCloses) {
  EgressPort p(two_classes(), st_be());
  // 1,500-byte BE frame (12.35 us on the wire) at 990 us: only 10 us left.
  ASSERT_EQ(p.enqueue(frame(1500), 0, 990 * kUs), EnqueueResult::kQueued);
  EXPECT_FALSE(p.dequeue(990 * kUs));
  EXPECT_EQ(p.counters(0).held, 1u);
  // Next BE window opens at 1.1 ms.
  EXPECT_EQ(p.next_event(990 * kUs), 1'100 * kUs);
  auto t = p.dequeue(1'100 * kUs);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->start_ns, 1'100 * kUs);
  EXPECT_EQ(p.counters(0).transmission_overruns, 0u);
  // A frame that just fits goes: at 1'987.6 us a 1,500-byte frame ends at 1'999.95 us.
  ASSERT_EQ(p.enqueue(frame(1500), 0, 1'987'600), EnqueueResult::kQueued);
  auto u = p.dequeue(1'987'600);
  ASSERT_TRUE(u);
  EXPECT_LE(u->end_ns, 2'000 * kUs);
}

TEST(EgressPort, MacsecExpansionCountsInTheGuardBand) {
  PortConfig c = two_classes();
  c.expansion_bytes = 32;
  EgressPort p(c, st_be());
  // Without MACsec a 1,500-byte frame fits the last 12.4 us; with 32 more bytes it does not.
  ASSERT_EQ(p.enqueue(frame(1500), 0, 987'600), EnqueueResult::kQueued);
  EXPECT_FALSE(p.dequeue(987'600));
  EXPECT_EQ(p.wire_time(1500), wire_time_ns(1536, kGbit));
}

TEST(EgressPort, WithoutTheGuardBandOverrunsAreCounted) {
  PortConfig c = two_classes();
  c.length_aware = false;
  EgressPort p(c, st_be());
  ASSERT_EQ(p.enqueue(frame(1500), 0, 995 * kUs), EnqueueResult::kQueued);
  auto t = p.dequeue(995 * kUs);
  ASSERT_TRUE(t);
  EXPECT_GT(t->end_ns, 1'000 * kUs);
  EXPECT_EQ(p.counters(0).transmission_overruns, 1u);
}

TEST(EgressPort, DropsAreTypedAndCounted) {
  PortConfig c = two_classes();
  c.max_sdu[1] = 200;
  c.queue_limit_frames = 2;
  GateControlList g;
  g.entries = {{0x02, 5 * kUs}, {0x01, 995 * kUs}};  // ST window of 5 us: a 1,000-byte frame never fits
  GateSchedule s;
  s.set_admin(g, 0);
  EgressPort p(c, std::move(s));
  EXPECT_EQ(p.enqueue(frame(300), 1, 0), EnqueueResult::kMaxSduExceeded);
  EXPECT_EQ(p.enqueue(frame(200), 1, 0), EnqueueResult::kQueued);
  EXPECT_EQ(p.enqueue(frame(100), 0, 0), EnqueueResult::kQueued);
  EXPECT_EQ(p.enqueue(frame(100), 0, 0), EnqueueResult::kQueued);
  EXPECT_EQ(p.enqueue(frame(100), 0, 0), EnqueueResult::kQueueFull);
  EXPECT_EQ(p.enqueue(frame(100), 2, 0), EnqueueResult::kBadClass);
  PortConfig big = two_classes();
  EgressPort q(big, [&] {
    GateSchedule t;
    t.set_admin(g, 0);
    return t;
  }());
  EXPECT_EQ(q.enqueue(frame(1000), 1, 0), EnqueueResult::kNeverFits);
  EXPECT_EQ(p.counters(1).dropped_max_sdu, 1u);
  EXPECT_EQ(p.counters(0).dropped_queue_full, 1u);
  EXPECT_EQ(q.counters(1).dropped_never_fits, 1u);
}

TEST(EgressPort, FramesANewScheduleMakesUnsendableAreDroppedAndReportedByTag) {
  EgressPort p(two_classes(), st_be());
  // At 600 us the ST gate is shut: the 1,000-byte ST frame waits.
  ASSERT_EQ(p.enqueue(frame(1000), 1, 600 * kUs, 7), EnqueueResult::kQueued);
  EXPECT_FALSE(p.dequeue(600 * kUs));
  GateControlList narrow;
  narrow.entries = {{0x02, 5 * kUs}, {0x01, 995 * kUs}};  // 5 us: the frame can no longer fit
  const std::int64_t change = p.set_schedule(narrow, 600 * kUs);
  EXPECT_TRUE(p.take_dropped_tags().empty());
  EXPECT_FALSE(p.dequeue(change));  // dropped, not sent
  EXPECT_EQ(p.counters(1).dropped_never_fits, 1u);
  EXPECT_EQ(p.take_dropped_tags(), std::vector<std::uint64_t>{7});
  EXPECT_TRUE(p.take_dropped_tags().empty());
  EXPECT_EQ(p.queued(1), 0u);
}

TEST(EgressPort, ANewScheduleTakesOverAtItsChangeTime) {
  EgressPort p(two_classes(), st_be());
  GateControlList g;
  g.base_time_ns = 3'000 * kUs;
  g.entries = {{0x01, 500 * kUs}, {0x02, 500 * kUs}};  // BE first now
  EXPECT_EQ(p.set_schedule(g, 1'500 * kUs), 3'000 * kUs);
  ASSERT_EQ(p.enqueue(frame(100), 1, 2'950 * kUs), EnqueueResult::kQueued);
  EXPECT_FALSE(p.dequeue(2'950 * kUs));
  // Under the old list ST would open at 3.0 ms; under the new one at 3.5 ms.
  EXPECT_EQ(p.next_event(2'950 * kUs), 3'500 * kUs);
  EXPECT_FALSE(p.dequeue(3'000 * kUs));
  EXPECT_TRUE(p.dequeue(3'500 * kUs));
  EXPECT_EQ(p.gates().config_changes(), 1u);
}

TEST(EgressPort, AnInvalidNewScheduleIsRefusedAndTheOldOneStays) {
  EgressPort p(two_classes(), st_be());
  GateControlList bad;
  bad.entries = {{0x04, 500 * kUs}};  // class 2 on a two-class port
  EXPECT_THROW((void)p.set_schedule(bad, 0), std::invalid_argument);
  EXPECT_FALSE(p.gates().config_pending());
  EXPECT_TRUE(p.gates().open(1, 1'000 * kUs));
}

// Drives a port as a wire would: ST frames released at the start of each ST
// window are never delayed by BE, however much BE is queued, and every ST
// frame finishes inside its window.
TEST(EgressPort, StSeesNoInterferenceFromSaturatingBe) {
  EgressPort p(two_classes(100'000'000), st_be());  // 100 Mbit/s
  std::mt19937 rng(3);
  std::int64_t now = 0;
  std::uint64_t st_sent = 0;
  std::uint64_t st_seen = 0;
  for (int cycle = 0; cycle < 50; ++cycle) {
    const std::int64_t c0 = cycle * 1'000 * kUs;
    // BE keeps the queue full; ST: 4 frames of 200 bytes at the window start.
    while (p.queued(0) < 64) (void)p.enqueue(frame(64 + rng() % 1437), 0, now, 0);
    while (now < c0 + 1'000 * kUs) {
      if (now == c0) {
        for (int k = 0; k < 4; ++k) {
          ASSERT_EQ(p.enqueue(frame(200), 1, now, 1), EnqueueResult::kQueued);
          ++st_sent;
        }
      }
      auto t = p.dequeue(now);
      if (t) {
        if (t->traffic_class == 1) {
          ++st_seen;
          EXPECT_GE(t->start_ns, c0);
          EXPECT_LE(t->end_ns, c0 + 100 * kUs);
        } else {
          // BE never runs into the ST window.
          EXPECT_GE(t->start_ns, c0 + 100 * kUs);
          EXPECT_LE(t->end_ns, c0 + 1'000 * kUs);
        }
        now = t->end_ns;
      } else {
        now = std::min(p.next_event(now), c0 + 1'000 * kUs);
      }
      while (p.queued(0) < 64) (void)p.enqueue(frame(64 + rng() % 1437), 0, now, 0);
    }
  }
  EXPECT_EQ(st_seen, st_sent);
  EXPECT_EQ(p.counters(1).dropped_queue_full + p.counters(1).dropped_never_fits, 0u);
  EXPECT_EQ(p.counters(0).transmission_overruns + p.counters(1).transmission_overruns, 0u);
  EXPECT_GT(p.counters(0).transmitted, 0u);
}

}  // namespace
}  // namespace layersec::tsn
