// Tests for Duration, TimePoint and the clocks (time.h).
#include "layersec/base/time.h"

#include <gtest/gtest.h>

namespace layersec {
namespace {

static_assert(Duration::microseconds(3).ns() == 3000);
static_assert(Duration::seconds(1) == Duration::milliseconds(1000));
static_assert(Duration::zero() < Duration::nanoseconds(1));

TEST(Duration, UnitsAndConversions) {
  EXPECT_EQ(Duration::nanoseconds(5).ns(), 5);
  EXPECT_EQ(Duration::microseconds(5).ns(), 5000);
  EXPECT_EQ(Duration::milliseconds(5).ns(), 5000000);
  EXPECT_EQ(Duration::seconds(5).ns(), 5000000000);
  EXPECT_DOUBLE_EQ(Duration::microseconds(1500).ms(), 1.5);
  EXPECT_DOUBLE_EQ(Duration::nanoseconds(2500).us(), 2.5);
  EXPECT_DOUBLE_EQ(Duration::milliseconds(250).s(), 0.25);
  EXPECT_EQ(Duration().ns(), 0);
  EXPECT_EQ(Duration::zero().ns(), 0);
  EXPECT_EQ(Duration::infinite().ns(), INT64_MAX);
  EXPECT_EQ(Duration::seconds(-2).ns(), -2000000000);
}

TEST(Duration, Arithmetic) {
  auto d = Duration::milliseconds(10);
  EXPECT_EQ((d + Duration::microseconds(5)).ns(), 10005000);
  EXPECT_EQ((d - Duration::milliseconds(15)).ns(), -5000000);
  EXPECT_EQ((d * 3).ns(), 30000000);
  EXPECT_EQ((d / 4).ns(), 2500000);
  d += Duration::milliseconds(1);
  EXPECT_EQ(d, Duration::milliseconds(11));
  d -= Duration::milliseconds(11);
  EXPECT_EQ(d, Duration::zero());
}

TEST(Duration, Ordering) {
  EXPECT_LT(Duration::microseconds(999), Duration::milliseconds(1));
  EXPECT_GT(Duration::infinite(), Duration::seconds(1000000));
  EXPECT_LE(Duration::seconds(1), Duration::milliseconds(1000));
  EXPECT_NE(Duration::seconds(1), Duration::seconds(2));
}

TEST(TimePoint, Arithmetic) {
  const auto t0 = TimePoint::from_ns(1000);
  const auto t1 = t0 + Duration::microseconds(2);
  EXPECT_EQ(t1.ns(), 3000);
  EXPECT_EQ(t1 - t0, Duration::nanoseconds(2000));
  EXPECT_EQ(t0 - t1, Duration::nanoseconds(-2000));
  EXPECT_EQ((t1 - Duration::nanoseconds(500)).ns(), 2500);
  auto t = t0;
  t += Duration::seconds(1);
  EXPECT_EQ(t.ns(), 1000001000);
  EXPECT_LT(t0, t1);
  EXPECT_LT(t1, TimePoint::max());
  EXPECT_EQ(TimePoint().ns(), 0);
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock c(TimePoint::from_ns(10));
  EXPECT_EQ(c.now().ns(), 10);
  EXPECT_EQ(c.now().ns(), 10);
  c.advance(Duration::microseconds(1));
  EXPECT_EQ(c.now().ns(), 1010);
  c.set(TimePoint::from_ns(5));
  EXPECT_EQ(c.now().ns(), 5);
  const Clock& base = c;  // usable through the interface
  EXPECT_EQ(base.now().ns(), 5);
}

TEST(MonotonicClock, NeverGoesBackwards) {
  MonotonicClock c;
  TimePoint prev = c.now();
  EXPECT_GT(prev.ns(), 0);
  for (int i = 0; i < 1000; ++i) {
    const TimePoint t = c.now();
    EXPECT_GE(t, prev);
    prev = t;
  }
}

}  // namespace
}  // namespace layersec
