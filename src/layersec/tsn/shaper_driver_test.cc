#include "layersec/tsn/shaper_driver.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <thread>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/net/thread_timing.h"
#include "layersec/tsn/shaper_test_support.h"

namespace layersec::tsn {
namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::uint64_t k100M = 100'000'000;

using testing_support::FakeClock;
using testing_support::FakeTimer;

struct Sent {
  std::size_t size = 0;
  int traffic_class = 0;
  std::int64_t at = 0;  // the fake clock when the sink saw it
  std::uint8_t first = 0;
  std::int64_t model_start = 0;  // driver.handing_start_ns() inside the sink
};

struct Bed {
  explicit Bed(PortConfig pc, GateSchedule gs = {}, DriverOptions opt = {})
      : driver(EgressPort(pc, std::move(gs)), clock, timer,
               [this](ByteSpan f, int c) {
                 sent.push_back(Sent{f.size(), c, clock.now, f.empty() ? std::uint8_t{0} : f[0],
                                     driver.handing_start_ns()});
                 return sink_ok;
               },
               opt) {}
  // Advances the fake clock to the armed deadline (plus `late`) and fires.
  bool fire(std::int64_t late = 0) {
    if (!timer.armed) return false;
    clock.now = timer.at + late;
    timer.armed = false;
    driver.service();
    return true;
  }
  FakeClock clock;
  FakeTimer timer;
  std::vector<Sent> sent;
  bool sink_ok = true;
  ShaperDriver driver;
};

PortConfig two_classes(std::uint64_t bps = k100M) {
  PortConfig c;
  c.link_bps = bps;
  c.num_classes = 2;
  return c;
}

// ST = class 1 in [0, 300 us), BE = class 0 in [300 us, 1 ms), cycle 1 ms from 0.
GateSchedule st_be() {
  GateControlList g;
  g.entries = {{0x02, 300 * kUs}, {0x01, 700 * kUs}};
  GateSchedule s;
  s.set_admin(g, 0);
  return s;
}

std::vector<std::uint8_t> frame(std::size_t n, std::uint8_t mark) { return std::vector<std::uint8_t>(n, mark); }

TEST(ShaperDriver, PacesFramesToThePortSpeed) {
  Bed b(two_classes());
  b.clock.now = 5 * kUs;
  for (std::uint8_t i = 0; i < 3; ++i) ASSERT_EQ(b.driver.submit(frame(1000, i), 0), EnqueueResult::kQueued);
  // The first goes at once; the next when the first has been serialised:
  // (1000 + 4 FCS + 20 preamble/SFD/IFG) * 8 bits at 100 Mbit/s = 81.92 us.
  const std::int64_t wire = wire_time_ns(1004, k100M);
  ASSERT_EQ(wire, 81'920);
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(b.sent[0].at, 5 * kUs);
  ASSERT_TRUE(b.timer.armed);
  EXPECT_EQ(b.timer.at, 5 * kUs + wire);
  ASSERT_TRUE(b.fire());
  ASSERT_EQ(b.sent.size(), 2u);
  EXPECT_EQ(b.sent[1].at, 5 * kUs + wire);
  EXPECT_EQ(b.timer.at, 5 * kUs + 2 * wire);
  ASSERT_TRUE(b.fire());
  ASSERT_EQ(b.sent.size(), 3u);
  EXPECT_EQ(b.sent[2].first, 2);  // FIFO within the class
  EXPECT_FALSE(b.timer.armed);    // nothing queued: no wake-ups
  EXPECT_EQ(b.driver.counters().sent, 3u);
  EXPECT_EQ(b.driver.counters().late_starts, 0u);
  EXPECT_EQ(b.driver.counters().max_lateness_ns, 0);
}

TEST(ShaperDriver, HoldsAFrameUntilItsGateOpens) {
  Bed b(two_classes(), st_be());
  b.clock.now = 100 * kUs;  // ST window: BE must wait for 300 us
  ASSERT_EQ(b.driver.submit(frame(500, 0xBE), 0), EnqueueResult::kQueued);
  EXPECT_TRUE(b.sent.empty());
  ASSERT_TRUE(b.timer.armed);
  EXPECT_EQ(b.timer.at, 300 * kUs);
  ASSERT_TRUE(b.fire());
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(b.sent[0].at, 300 * kUs);
  EXPECT_EQ(b.driver.port().counters(0).held, 1u);
  // An ST frame in the BE window waits for the next cycle's ST window.
  b.clock.now = 400 * kUs;
  ASSERT_EQ(b.driver.submit(frame(200, 0x57), 1), EnqueueResult::kQueued);
  EXPECT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(b.timer.at, 1000 * kUs);
  ASSERT_TRUE(b.fire());
  ASSERT_EQ(b.sent.size(), 2u);
  EXPECT_EQ(b.sent[1].traffic_class, 1);
  EXPECT_EQ(b.sent[1].at, 1000 * kUs);
}

TEST(ShaperDriver, StFramesNeverWaitBehindASaturatingBeQueue) {
  // BE keeps its queue full all the time; one ST frame arrives at the start
  // of each of 20 ST windows. Each ST frame must go out at its window's
  // start: BE's gate is closed in [0, 300 us), and the guard band keeps the
  // last BE frame of a window from running into the next ST window.
  PortConfig pc = two_classes();
  pc.queue_limit_frames = 64;
  Bed b(pc, st_be());
  std::uint64_t be_refused = 0;
  for (int cycle = 0; cycle < 20; ++cycle) {
    const std::int64_t start = cycle * 1000 * kUs;
    // Offer BE until its queue is full at the end of the previous BE window.
    b.clock.now = start == 0 ? 0 : start - 1;
    if (start != 0) b.driver.service();
    while (b.driver.submit(frame(1400, 0xBE), 0) == EnqueueResult::kQueued) {
    }
    ++be_refused;
    b.clock.now = start;
    const std::size_t before = b.sent.size();
    b.driver.service();
    ASSERT_EQ(b.driver.submit(frame(200, 0x57), 1), EnqueueResult::kQueued);
    ASSERT_EQ(b.sent.size(), before + 1) << "cycle " << cycle;
    EXPECT_EQ(b.sent.back().traffic_class, 1);
    EXPECT_EQ(b.sent.back().at, start);
    // Run the rest of the cycle on the timer.
    while (b.timer.armed && b.timer.at < start + 1000 * kUs - 1) ASSERT_TRUE(b.fire());
  }
  EXPECT_EQ(b.driver.port().counters(1).transmitted, 20u);
  EXPECT_EQ(b.driver.port().counters(1).dropped_queue_full, 0u);
  EXPECT_EQ(b.driver.port().counters(0).dropped_queue_full, be_refused);
  EXPECT_EQ(b.driver.port().counters(0).transmission_overruns, 0u);
  // BE gets its 70 % window at 100 Mbit/s: floor(700 us / 113.92 us) = 6
  // frames of 1400 bytes per cycle, 20 cycles (the last window included).
  EXPECT_EQ(wire_time_ns(1404, k100M), 113'920);
  EXPECT_EQ(b.driver.port().counters(0).transmitted, 6u * 20u);
}

TEST(ShaperDriver, LateWakeUpsAreCountedAndTheModelKeepsItsOwnTimes) {
  DriverOptions opt;
  opt.late_tolerance_ns = 20 * kUs;
  Bed b(two_classes(), GateSchedule{}, opt);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(b.driver.submit(frame(1000, 0), 0), EnqueueResult::kQueued);
  const std::int64_t wire = wire_time_ns(1004, k100M);
  ASSERT_TRUE(b.fire(10 * kUs));  // within tolerance
  ASSERT_TRUE(b.fire(30 * kUs));  // late
  EXPECT_EQ(b.sent.size(), 3u);
  EXPECT_EQ(b.driver.counters().late_starts, 1u);
  // The third frame's modelled start is 2 * wire; the second fire came at
  // the deadline computed from the model (2 * wire), not from the late wake-up.
  EXPECT_EQ(b.sent[2].at, 2 * wire + 30 * kUs);
  EXPECT_EQ(b.driver.counters().max_lateness_ns, 30 * kUs);
}

TEST(ShaperDriver, TheSinkSeesTheModelledStartOfItsFrame) {
  Bed b(two_classes(), st_be());
  b.clock.now = 0;
  ASSERT_EQ(b.driver.submit(frame(1000, 0), 0), EnqueueResult::kQueued);  // BE: waits for 300 us
  ASSERT_EQ(b.driver.submit(frame(200, 1), 1), EnqueueResult::kQueued);   // ST: starts at once
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(b.sent[0].model_start, 0);
  b.clock.now = 312 * kUs;  // a wake-up 12 us after the BE gate opened
  b.driver.service();
  ASSERT_EQ(b.sent.size(), 2u);
  EXPECT_EQ(b.sent[1].model_start, 300 * kUs);
  EXPECT_EQ(b.sent[1].at - b.sent[1].model_start, 12 * kUs);  // what a link records as lateness
}

TEST(ShaperDriver, ADriverFarBehindSkipsAheadInsteadOfBursting) {
  DriverOptions opt;
  opt.max_catchup_ns = 200 * kUs;
  PortConfig pc = two_classes();
  pc.queue_limit_frames = 100;
  Bed b(pc, GateSchedule{}, opt);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(b.driver.submit(frame(1000, 0), 0), EnqueueResult::kQueued);
  ASSERT_EQ(b.sent.size(), 1u);
  // 10 ms without a wake-up (descheduled): at most 200 us of frames are
  // replayed (the one at the skip-ahead instant plus 200 us / 81.92 us).
  b.clock.now = 10'000 * kUs;
  b.timer.armed = false;
  b.driver.service();
  EXPECT_EQ(b.driver.counters().resyncs, 1u);
  EXPECT_EQ(b.sent.size(), 1u + 3u);
  EXPECT_EQ(b.driver.queued(), 50u - 4u);
}

TEST(ShaperDriver, RefusalsAndSinkErrorsAreCounted) {
  PortConfig pc = two_classes();
  pc.queue_limit_frames = 1;
  pc.max_sdu[1] = 300;
  Bed b(pc, st_be());
  b.clock.now = 400 * kUs;  // BE window: ST waits
  EXPECT_EQ(b.driver.submit(frame(301, 0), 1), EnqueueResult::kMaxSduExceeded);
  EXPECT_EQ(b.driver.submit(frame(100, 0), 1), EnqueueResult::kQueued);
  EXPECT_EQ(b.driver.submit(frame(100, 0), 1), EnqueueResult::kQueueFull);
  EXPECT_EQ(b.driver.submit(frame(100, 0), 5), EnqueueResult::kBadClass);
  EXPECT_EQ(b.driver.counters().refused, 3u);
  EXPECT_EQ(b.driver.port().counters(1).dropped_max_sdu, 1u);
  EXPECT_EQ(b.driver.port().counters(1).dropped_queue_full, 1u);
  b.sink_ok = false;
  ASSERT_TRUE(b.fire());
  EXPECT_EQ(b.driver.counters().send_errors, 1u);
  EXPECT_EQ(b.driver.counters().sent, 0u);
}

TEST(ShaperDriver, ANewScheduleTakesOverAtItsChangeTime) {
  Bed b(two_classes(), st_be());
  GateControlList only_be;
  only_be.base_time_ns = 5000 * kUs;
  only_be.entries = {{0x01, 1000 * kUs}};
  b.clock.now = 10 * kUs;
  EXPECT_EQ(b.driver.set_schedule(only_be), 5000 * kUs);
  // A BE frame at 5 ms + 10 us would have waited for 5.3 ms; under the new
  // list it goes at once.
  b.clock.now = 5010 * kUs;
  ASSERT_EQ(b.driver.submit(frame(100, 0), 0), EnqueueResult::kQueued);
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(b.sent[0].at, 5010 * kUs);
  GateControlList bad;
  bad.entries = {{0x04, 1000 * kUs}};  // class 2 on a two-class port
  EXPECT_THROW(b.driver.set_schedule(bad), std::invalid_argument);
}

TEST(TaiClock, IsNeverBehindRealtime) {
  // CLOCK_TAI is CLOCK_REALTIME + the kernel's TAI offset (0 unless set by
  // a PTP daemon): never behind it.
  TaiClock tai;
  RealtimeClock utc;
  EXPECT_GE(tai.now_ns() + 1'000'000, utc.now().ns());
}

}  // namespace
}  // namespace layersec::tsn

namespace layersec::tsn {
namespace {

TEST(ShaperDriver, WorksAtTaiTimesWithABaseTimeOfZero) {
  // A schedule with base-time 0 installed at a CLOCK_TAI instant of 2023:
  // its cycles are aligned to the TAI epoch.
  // Until the first cycle boundary after installation every gate is open.
  const std::int64_t installed = 1'700'000'000'000'000'000 + 500 * kUs;
  const std::int64_t t0 = installed + 600 * kUs;  // 100 us into the first full cycle: ST window
  GateControlList g;
  g.entries = {{0x02, 300 * kUs}, {0x01, 700 * kUs}};
  GateSchedule s;
  s.set_admin(g, installed);
  Bed b(two_classes(), std::move(s));
  b.clock.now = t0;
  ASSERT_EQ(b.driver.submit(frame(500, 0xBE), 0), EnqueueResult::kQueued);
  EXPECT_TRUE(b.sent.empty());
  ASSERT_TRUE(b.timer.armed);
  EXPECT_EQ(b.timer.at, t0 + 200 * kUs);
  ASSERT_TRUE(b.fire());
  ASSERT_EQ(b.sent.size(), 1u);
}

}  // namespace
}  // namespace layersec::tsn

namespace layersec::tsn {
namespace {

// The shaper's clock for this test: CLOCK_MONOTONIC through base/time.h.
class MonoShaperClock final : public Clock {
 public:
  [[nodiscard]] std::int64_t now_ns() const override { return mono.now().ns(); }
  MonotonicClock mono;
};

TEST(LoopShaperTimer, FiresOnTheLoopAndCanBeRearmedFromItsCallback) {
  MonoShaperClock clock;
  MonotonicClock loop_clock;
  net::EventLoop loop(loop_clock);
  int fired = 0;
  LoopShaperTimer* self = nullptr;
  LoopShaperTimer timer(loop, clock, [&] {
    if (++fired < 3) self->arm(clock.now_ns() + 100 * kUs);
  });
  self = &timer;
  timer.arm(clock.now_ns() + 100 * kUs);
  // Ends when the callback has run three times (the deadline only guards a hang).
  loop.run_until([&] { return fired == 3; }, loop.now() + Duration::seconds(10));
  EXPECT_EQ(fired, 3);
  // A disarmed timer never runs.
  timer.arm(clock.now_ns() + 100 * kUs);
  timer.disarm();
  loop.run_until(loop.now() + Duration::milliseconds(2));
  EXPECT_EQ(fired, 3);
}

// Every real-link shaper (macsec up --tsn, node with tsn, bench tsn) builds a
// LoopShaperTimer on its loop's thread; that sets the thread's timer slack to
// 1 ns. Run on a thread of its own, whose slack starts at the inherited value.
TEST(LoopShaperTimer, SetsItsThreadsTimerSlackToOneNanosecond) {
  long before = 0, after = 0;
  std::thread t([&] {
    (void)::prctl(PR_SET_TIMERSLACK, 50'000UL, 0UL, 0UL, 0UL);
    before = net::timer_slack_ns();
    MonoShaperClock clock;
    MonotonicClock loop_clock;
    net::EventLoop loop(loop_clock);
    LoopShaperTimer timer(loop, clock, [] {});
    after = net::timer_slack_ns();
  });
  t.join();
  EXPECT_EQ(before, 50'000);
  EXPECT_EQ(after, 1);
}

TEST(ShaperDriver, ClockSteppedRestartsTheModelAtTheNewTime) {
  Bed b(two_classes(), st_be());
  b.clock.now = 5'000'000 * kUs + 100 * kUs;  // an ST window
  ASSERT_EQ(b.driver.submit(frame(1500, 1), 1), EnqueueResult::kQueued);
  ASSERT_EQ(b.sent.size(), 1u);
  // The clock is stepped back by 2 s: the model would wait for its old time.
  b.clock.now -= 2'000'000 * kUs;
  ASSERT_EQ(b.driver.submit(frame(100, 2), 1), EnqueueResult::kQueued);
  EXPECT_EQ(b.sent.size(), 1u);
  ASSERT_TRUE(b.timer.armed);
  EXPECT_GT(b.timer.at, b.clock.now + 1'900'000 * kUs);
  b.driver.clock_stepped();
  ASSERT_EQ(b.sent.size(), 2u);
  EXPECT_EQ(b.sent[1].at, b.clock.now);
  EXPECT_EQ(b.sent[1].first, 2);
  EXPECT_EQ(b.driver.counters().clock_steps, 1u);
  // A forward step needs no restart but is harmless: nothing is replayed.
  b.clock.now += 3'000'000 * kUs;
  b.driver.clock_stepped();
  EXPECT_EQ(b.sent.size(), 2u);
  EXPECT_EQ(b.driver.counters().resyncs, 0u);
  EXPECT_EQ(b.driver.counters().clock_steps, 2u);
}

}  // namespace
}  // namespace layersec::tsn
