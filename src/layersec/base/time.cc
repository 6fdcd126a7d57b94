#include "layersec/base/time.h"

#include <ctime>

namespace layersec {

std::int64_t monotonic_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

TimePoint MonotonicClock::now() const { return TimePoint::from_ns(monotonic_now_ns()); }

TimePoint RealtimeClock::now() const {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return TimePoint::from_ns(static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

}  // namespace layersec
