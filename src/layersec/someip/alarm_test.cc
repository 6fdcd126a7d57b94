// The clock-and-alarm adapters on their own: LoopAlarm on a net::EventLoop
// and SimAlarm on the simulator. A new wake_at replaces the pending one,
// TimePoint::max() cancels, a wake-up fires once, and none outlives its
// alarm.
#include <gtest/gtest.h>

#include "layersec/net/event_loop.h"
#include "layersec/net/sim.h"
#include "layersec/someip/loop_alarm.h"
#include "layersec/someip/sim_transport.h"

namespace layersec::someip {
namespace {

TEST(LoopAlarmTest, ReplacedCancelledAndFiresOnce) {
  ManualClock clock{TimePoint{} + Duration::seconds(5)};
  net::EventLoop loop(clock);
  auto alarm = std::make_unique<LoopAlarm>(loop);
  EXPECT_EQ(alarm->now(), clock.now());
  int fired = 0;
  alarm->wake_at(clock.now() + Duration::seconds(100), [&] { fired += 100; });
  alarm->wake_at(clock.now() + Duration::milliseconds(5), [&] { ++fired; });
  for (int i = 0; i < 10; ++i) {
    clock.advance(Duration::milliseconds(1));
    loop.run_once(clock.now());
  }
  EXPECT_EQ(fired, 1);
  alarm->wake_at(clock.now() + Duration::milliseconds(1), [&] { fired += 10; });
  alarm->wake_at(TimePoint::max(), [&] { fired += 10; });
  clock.advance(Duration::seconds(1));
  loop.run_once(clock.now());
  EXPECT_EQ(fired, 1);
  alarm->wake_at(clock.now() + Duration::milliseconds(1), [&] { fired += 1000; });
  alarm.reset();
  clock.advance(Duration::seconds(1));
  loop.run_once(clock.now());
  EXPECT_EQ(fired, 1);
}

TEST(SimAlarmTest, ReplacedCancelledAndFiresOnce) {
  net::Simulator sim(1);
  auto alarm = std::make_unique<SimAlarm>(sim);
  int fired = 0;
  alarm->wake_at(sim.now() + Duration::seconds(100), [&] { fired += 100; });
  alarm->wake_at(sim.now() + Duration::milliseconds(5), [&] {
    ++fired;
    EXPECT_EQ(alarm->now(), TimePoint{} + Duration::milliseconds(5));
  });
  sim.run_for(Duration::milliseconds(10));
  EXPECT_EQ(fired, 1);
  alarm->wake_at(sim.now() + Duration::milliseconds(1), [&] { fired += 10; });
  alarm->wake_at(TimePoint::max(), [&] { fired += 10; });
  sim.run_for(Duration::seconds(1));
  EXPECT_EQ(fired, 1);
  alarm->wake_at(sim.now() + Duration::milliseconds(1), [&] { fired += 1000; });
  alarm.reset();
  sim.run_for(Duration::seconds(1));
  EXPECT_EQ(fired, 1);
}

}  // namespace
}  // namespace layersec::someip
