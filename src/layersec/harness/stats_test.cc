#include "layersec/harness/stats.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace layersec::harness {
namespace {

TEST(HarnessStatsTest, PercentilesInterpolateBetweenClosestRanks) {
  // 1..100: position h = 99 q.
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 1.0), 100.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.5), 50.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.95), 95.05);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.99), 99.01);
  // Out-of-range q is clamped.
  EXPECT_DOUBLE_EQ(percentile_sorted(v, -1.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 2.0), 100.0);
}

TEST(HarnessStatsTest, SmallAndDegenerateInputs) {
  EXPECT_DOUBLE_EQ(percentile_sorted({}, 0.5), 0.0);
  const std::vector<double> one = {7.0};
  EXPECT_DOUBLE_EQ(percentile_sorted(one, 0.99), 7.0);
  const std::vector<double> two = {10.0, 20.0};
  EXPECT_DOUBLE_EQ(percentile_sorted(two, 0.5), 15.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(two, 0.25), 12.5);
  const Summary empty = summarize({});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_DOUBLE_EQ(empty.max, 0.0);
}

TEST(HarnessStatsTest, SummaryOfUnsortedSamples) {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  const Summary s = summarize(v);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.p50, 3.0);
  EXPECT_DOUBLE_EQ(s.p95, 4.8);   // h = 3.8
  EXPECT_DOUBLE_EQ(s.p99, 4.96);  // h = 3.96
  EXPECT_NEAR(s.stddev, 1.5811388300841898, 1e-12);  // sqrt(2.5)
  EXPECT_LE(s.p50, s.p95);
  EXPECT_LE(s.p95, s.p99);
  EXPECT_LE(s.p99, s.max);
}

TEST(HarnessStatsTest, CdfPointsAreMonotonicAndEndAtOne) {
  std::vector<double> v;
  for (int i = 0; i < 2000; ++i) v.push_back(i * 0.5);
  const auto pts = cdf_points(v, 100);
  ASSERT_GE(pts.size(), 2u);
  EXPECT_LE(pts.size(), 101u);
  EXPECT_DOUBLE_EQ(pts.front().first, 0.0);
  EXPECT_DOUBLE_EQ(pts.back().first, 999.5);
  EXPECT_DOUBLE_EQ(pts.back().second, 1.0);
  for (std::size_t i = 1; i < pts.size(); ++i) {
    EXPECT_GE(pts[i].first, pts[i - 1].first);
    EXPECT_GT(pts[i].second, pts[i - 1].second);
  }
  const std::vector<double> three = {1, 2, 3};
  const auto all = cdf_points(three);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_NEAR(all[0].second, 1.0 / 3, 1e-12);
}

// Spins on this thread until `ns` of monotonic time have passed.
void spin_for(std::int64_t ns) {
  const std::int64_t until = monotonic_ns() + ns;
  volatile double x = 0;
  while (monotonic_ns() < until) x = x + 1;
}

TEST(HarnessStatsTest, ResourceSamplerAccumulatesWindows) {
  constexpr std::int64_t kWindow = 2'000'000;  // 2 ms of spinning per window
  ResourceSampler s;
  for (int i = 0; i < 3; ++i) {
    s.start();
    spin_for(kWindow);
    s.stop();
  }
  EXPECT_EQ(s.windows(), 3u);
  // Each window lasted at least its spin, so the sum holds all three ...
  EXPECT_GE(s.wall_ns(), 3 * kWindow);
  // ... and the thread was on a CPU for some of it, never longer than the
  // windows themselves (the CPU clock is read inside the wall clock's reads).
  EXPECT_GT(s.cpu_ns(), 0);
  EXPECT_LE(s.cpu_ns(), s.wall_ns());
  // Time outside the windows is not counted.
  const std::int64_t wall = s.wall_ns();
  const std::int64_t cpu = s.cpu_ns();
  spin_for(kWindow);
  EXPECT_EQ(s.wall_ns(), wall);
  EXPECT_EQ(s.cpu_ns(), cpu);
  const auto m = memory_usage();
  ASSERT_TRUE(m.has_value());  // Linux /proc
  EXPECT_GT(m->rss_kib, 0u);
  EXPECT_GE(m->peak_kib, m->rss_kib);
  EXPECT_GT(s.peak_rss_kib(), 0u);
}

}  // namespace
}  // namespace layersec::harness
