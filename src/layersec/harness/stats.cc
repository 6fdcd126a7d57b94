#include "layersec/harness/stats.h"

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "layersec/base/time.h"

namespace layersec::harness {

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  s.count = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  s.min = v.front();
  s.max = v.back();
  s.p50 = percentile_sorted(v, 0.50);
  s.p95 = percentile_sorted(v, 0.95);
  s.p99 = percentile_sorted(v, 0.99);
  return s;
}

std::vector<std::pair<double, double>> cdf_points(std::span<const double> sorted, std::size_t max_points) {
  std::vector<std::pair<double, double>> out;
  const std::size_t n = sorted.size();
  if (n == 0) return out;
  max_points = std::max<std::size_t>(max_points, 2);
  const std::size_t step = n <= max_points ? 1 : (n + max_points - 2) / (max_points - 1);
  for (std::size_t i = 0; i < n; i += step) {
    out.emplace_back(sorted[i], static_cast<double>(i + 1) / static_cast<double>(n));
  }
  if (out.back().second < 1.0) out.emplace_back(sorted[n - 1], 1.0);
  return out;
}

namespace {
std::int64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t monotonic_ns() { return monotonic_now_ns(); }
std::int64_t thread_cpu_ns() { return read_clock(CLOCK_THREAD_CPUTIME_ID); }

std::optional<MemoryUsage> memory_usage() {
  std::ifstream in("/proc/self/status");
  if (!in) return std::nullopt;
  MemoryUsage m;
  bool rss = false;
  bool hwm = false;
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&line]() -> std::uint64_t {
      const auto pos = line.find_first_of("0123456789");
      return pos == std::string::npos ? 0 : std::stoull(line.substr(pos));
    };
    if (line.rfind("VmRSS:", 0) == 0) {
      m.rss_kib = value();
      rss = true;
    } else if (line.rfind("VmHWM:", 0) == 0) {
      m.peak_kib = value();
      hwm = true;
    }
  }
  if (!rss || !hwm) return std::nullopt;
  return m;
}

bool reset_peak_rss() {
  // Hand memory freed by earlier scenarios back to the kernel first, so the
  // new peak starts from what is really in use (glibc).
  ::malloc_trim(0);
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

ResourceSampler::ResourceSampler() : reset_ok_(reset_peak_rss()) {}

void ResourceSampler::start() {
  wall_start_ = monotonic_ns();
  cpu_start_ = thread_cpu_ns();
}

void ResourceSampler::stop() {
  cpu_ns_ += thread_cpu_ns() - cpu_start_;
  wall_ns_ += monotonic_ns() - wall_start_;
  ++windows_;
}

std::uint64_t ResourceSampler::peak_rss_kib() const {
  const auto m = memory_usage();
  return m ? m->peak_kib : 0;
}

}  // namespace layersec::harness
