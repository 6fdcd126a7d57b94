// LinearTimeBase: the exact mapping between true and local time of a
// drifting oscillator, checked against brute force, and its inverse exact to
// the nanosecond (the first true instant at which the local clock reads a
// value).
#include "layersec/tsn/time_base.h"

#include <gtest/gtest.h>

#include "layersec/tsn/gate_control_list.h"

namespace layersec::tsn {
namespace {

// floor(a / b) for b > 0, written out independently of the implementation.
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

TEST(LinearTimeBase, LocalTimeIsOffsetPlusTrueTimeScaledExactly) {
  const LinearTimeBase fast(0, 100'000);  // +100 ppm
  EXPECT_EQ(fast.local_of(0), 0);
  EXPECT_EQ(fast.local_of(9'999), 9'999);
  EXPECT_EQ(fast.local_of(10'000), 10'001);
  EXPECT_EQ(fast.local_of(1'000'000'000), 1'000'100'000);
  const LinearTimeBase slow(5'000, -100'000);  // -100 ppm, 5 us ahead
  EXPECT_EQ(slow.local_of(10'000), 5'000 + 9'999);
  EXPECT_EQ(slow.local_of(1'000'000'000), 5'000 + 999'900'000);
  EXPECT_EQ(slow.local_of(-10'000), 5'000 - 9'999);
}

TEST(LinearTimeBase, InverseIsTheFirstTrueNanosecondReadingTheLocalTime) {
  for (std::int64_t ppb : {100'000LL, -100'000LL, 1'000'000LL, -1'000'000LL, 0LL, 37LL, -999'999LL}) {
    for (std::int64_t offset : {0LL, 123LL, -7'000'000LL}) {
      SCOPED_TRACE("ppb " + std::to_string(ppb) + " offset " + std::to_string(offset));
      const LinearTimeBase tb(offset, ppb);
      for (std::int64_t t = 1'999'000; t < 2'001'000; t += 7) {
        EXPECT_EQ(tb.local_of(t), offset + t + floor_div(t * ppb, 1'000'000'000));
      }
      for (std::int64_t l = 1'999'500; l < 2'000'500; l += 3) {
        const std::int64_t r = tb.true_at_or_after(l, 0);
        EXPECT_GE(tb.local_of(r), l);
        EXPECT_LT(tb.local_of(r - 1), l);
      }
      // not_before wins when the clock already reads more.
      EXPECT_EQ(tb.true_at_or_after(-100'000'000, 5'000'000), 5'000'000);
      EXPECT_EQ(tb.true_at_or_after(kNever, 0), kNever);
    }
  }
}

TEST(LinearTimeBase, ExtremeRatesAreClampedAndStayIncreasing) {
  const LinearTimeBase tb(0, -2'000'000'000);  // -200 %: clamped to -10 %
  EXPECT_EQ(tb.ppb(), -100'000'000);
  EXPECT_GE(tb.local_of(11), tb.local_of(10));  // 9 and 9: a slow clock repeats a value now and then
  EXPECT_EQ(tb.local_of(20), 18);
  const std::int64_t r = tb.true_at_or_after(900'000'000, 0);
  EXPECT_EQ(r, 1'000'000'000);
  EXPECT_EQ(tb.true_at_or_after(kNever - 1, 0), kNever);  // beyond int64: never
}

TEST(FirstAtOrAbove, FindsTheFirstOrReportsNone) {
  auto f = [](std::int64_t x) { return x / 3; };
  EXPECT_EQ(first_at_or_above(f, 5, 0, 100), 15);
  EXPECT_EQ(first_at_or_above(f, 5, 20, 100), 20);
  EXPECT_EQ(first_at_or_above(f, 50, 0, 100), 101);
  EXPECT_EQ(first_at_or_above(f, 0, 10, 5), 6);  // empty range
}

}  // namespace
}  // namespace layersec::tsn
