// Latency statistics and resource sampling for the scenario harness.
//
// Percentiles use linear interpolation between closest ranks (the "linear"
// method of Hyndman & Fan type 7, numpy's default): for q in [0, 1] over n
// sorted samples, position h = (n - 1) q, value = x[floor h] + (h - floor h)
// (x[floor h + 1] - x[floor h]). p0 is the minimum, p100 the maximum.
//
// Resources: thread CPU time (CLOCK_THREAD_CPUTIME_ID), wall time
// (CLOCK_MONOTONIC) and the process's resident set size from /proc/self/status
// (VmRSS, VmHWM). The peak (VmHWM) can be reset by writing "5" to
// /proc/self/clear_refs (Linux >= 4.0), so each scenario reports its own peak;
// where that is refused the peak is the process-wide one and the sampler says
// so (peak_reset_ok()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace layersec::harness {

// Summary of a set of samples (microseconds by convention in this module).
struct Summary {
  std::size_t count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for n < 2
  double min = 0;
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
};

// The q-quantile (q in [0, 1], clamped) of ascending `sorted`; 0 if empty.
[[nodiscard]] double percentile_sorted(std::span<const double> sorted, double q);
// Summary of `samples` (any order; copied and sorted). All zero if empty.
[[nodiscard]] Summary summarize(std::span<const double> samples);
// Empirical CDF points (value, fraction <= value) of ascending `sorted`,
// thinned to at most `max_points` points (always keeping min and max).
[[nodiscard]] std::vector<std::pair<double, double>> cdf_points(std::span<const double> sorted,
                                                                std::size_t max_points = 500);

// Monotonic wall clock and thread CPU clock, in nanoseconds.
[[nodiscard]] std::int64_t monotonic_ns();
[[nodiscard]] std::int64_t thread_cpu_ns();

// Resident memory of this process, KiB; nullopt where /proc is unavailable.
struct MemoryUsage {
  std::uint64_t rss_kib = 0;   // VmRSS
  std::uint64_t peak_kib = 0;  // VmHWM
};
[[nodiscard]] std::optional<MemoryUsage> memory_usage();
// Returns freed heap to the kernel (malloc_trim) and resets the process's
// peak RSS to the current RSS. False if the reset was refused.
bool reset_peak_rss();

// Accumulates CPU and wall time over measured windows (start()/stop() around
// each measured iteration) and tracks the peak RSS of one scenario.
class ResourceSampler {
 public:
  // Resets the peak RSS (if the kernel allows) so peak() covers this scenario.
  ResourceSampler();
  void start();
  void stop();
  [[nodiscard]] std::int64_t cpu_ns() const { return cpu_ns_; }
  [[nodiscard]] std::int64_t wall_ns() const { return wall_ns_; }
  [[nodiscard]] std::size_t windows() const { return windows_; }
  // Peak RSS since construction (or process-wide if the reset was refused).
  [[nodiscard]] std::uint64_t peak_rss_kib() const;
  [[nodiscard]] bool peak_reset_ok() const { return reset_ok_; }

 private:
  bool reset_ok_ = false;
  std::int64_t cpu_start_ = 0;
  std::int64_t wall_start_ = 0;
  std::int64_t cpu_ns_ = 0;
  std::int64_t wall_ns_ = 0;
  std::size_t windows_ = 0;
};

}  // namespace layersec::harness
