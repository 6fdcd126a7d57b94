#include "layersec/ptp/raw_clock.h"

#include <time.h>

namespace layersec::ptp {
namespace {

std::int64_t read(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::int64_t raw_now_ns() { return read(CLOCK_MONOTONIC_RAW); }
std::int64_t realtime_now_ns() { return read(CLOCK_REALTIME); }

std::int64_t realtime_minus_raw_ns() {
  const std::int64_t a = read(CLOCK_REALTIME);
  const std::int64_t raw = read(CLOCK_MONOTONIC_RAW);
  const std::int64_t b = read(CLOCK_REALTIME);
  return a + (b - a) / 2 - raw;
}

std::int64_t raw_from_realtime(std::int64_t realtime_ns) { return realtime_ns - realtime_minus_raw_ns(); }

}  // namespace layersec::ptp
