// SyncScheduler on its own over a real engine (the server's, sync period
// 1 s): the start-up sync at start, the engine's period as the deadline, a
// forced new cycle for new subscribers at the end of an SD step, at most one
// per 20 ms, with the newcomers named for their unicast copy.
#include "layersec/someip/secoc_sync.h"

#include <gtest/gtest.h>

#include "layersec/someip/runtime_secoc_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

const Endpoint kNewcomer{IpAddress::v4(10, 0, 0, 2), kClientPort, L4Proto::kUdp};

// The server's engine (sync period 1 s) on a manual freshness clock; the
// engine's reset counter counts the cycles started.
struct Fixture {
  ManualClock clock{TimePoint{} + Duration::seconds(100)};
  SecocNode sec;
  RuntimeCounters counters;
  SyncScheduler sync{counters};
  Fixture() { sec.start(server_engine_config(Duration::seconds(1)), clock.now()); }
  std::optional<SyncScheduler::Due> poll() { return sync.poll(*sec.engine, clock.now(), clock); }
};

TEST(SyncSchedulerTest, NoEngineNeverDue) {
  RuntimeCounters c;
  SyncScheduler s(c);
  s.start(TimePoint{}, false);
  EXPECT_EQ(s.deadline(), TimePoint::max());
  EXPECT_FALSE(s.schedule_forced(TimePoint{}));  // no newcomers
}

TEST(SyncSchedulerTest, StartUpSyncThenThePeriod) {
  Fixture f;
  EXPECT_EQ(f.sync.deadline(), TimePoint::max());
  f.sync.start(f.clock.now(), true);
  EXPECT_EQ(f.sync.deadline(), f.clock.now());
  auto due = f.poll();
  ASSERT_TRUE(due.has_value());
  EXPECT_FALSE(due->message.empty());  // start-up sync
  EXPECT_TRUE(due->newcomers.empty());
  EXPECT_EQ(f.sync.deadline(), f.clock.now() + Duration::seconds(1));
  f.clock.advance(Duration::milliseconds(500));
  EXPECT_FALSE(f.poll().has_value());  // not due
  f.clock.advance(Duration::milliseconds(500));
  due = f.poll();
  ASSERT_TRUE(due.has_value());
  EXPECT_FALSE(due->message.empty());  // the periodic new cycle
  EXPECT_EQ(f.counters.secoc_protect_failed, 0u);
}

TEST(SyncSchedulerTest, NewSubscribersForceSpacedCycles) {
  Fixture f;
  f.sync.start(f.clock.now(), true);
  ASSERT_TRUE(f.poll().has_value());
  const std::uint64_t reset0 = f.sec.engine->reset();

  // A newcomer at the end of an SD step: a cycle at once, naming it.
  f.clock.advance(Duration::milliseconds(100));
  f.sync.add_newcomer(kNewcomer);
  ASSERT_TRUE(f.sync.schedule_forced(f.clock.now()));
  EXPECT_FALSE(f.sync.schedule_forced(f.clock.now()));  // one pending at a time
  EXPECT_EQ(f.sync.deadline(), f.clock.now());
  auto due = f.poll();
  ASSERT_TRUE(due.has_value());
  ASSERT_EQ(due->newcomers.size(), 1u);
  EXPECT_EQ(due->newcomers[0], kNewcomer);
  EXPECT_FALSE(due->message.empty());
  EXPECT_EQ(f.sec.engine->reset(), reset0 + 1);

  // Another newcomer 5 ms later: its cycle waits until 20 ms after the last.
  const TimePoint last = f.clock.now();
  f.clock.advance(Duration::milliseconds(5));
  f.sync.add_newcomer(kNewcomer);
  ASSERT_TRUE(f.sync.schedule_forced(f.clock.now()));
  EXPECT_EQ(f.sync.deadline(), last + SyncScheduler::kForcedSpacing);
  EXPECT_FALSE(f.poll().has_value());
  f.clock.set(last + SyncScheduler::kForcedSpacing);
  due = f.poll();
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->newcomers.size(), 1u);
  EXPECT_EQ(f.sec.engine->reset(), reset0 + 2);
  // Nothing pending any more: back to the engine's period.
  EXPECT_GT(f.sync.deadline(), f.clock.now() + Duration::milliseconds(900));
}

}  // namespace
}  // namespace layersec::someip
