#include "layersec/base/time.h"

#include <ctime>

namespace layersec {

TimePoint MonotonicClock::now() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimePoint::from_ns(static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

}  // namespace layersec
