#include "layersec/sv_io/pacing.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>

#include "layersec/sv_io/host.h"
#include "layersec/sv_io/stop_signal.h"

namespace layersec::sv_io {

Duration nominal_period(std::uint32_t frames_per_second) {
  return Duration::nanoseconds(static_cast<std::int64_t>(1e9 / frames_per_second));
}

std::uint64_t frames_between_key_checks(std::uint32_t frames_per_second) {
  return std::max<std::uint64_t>(1, frames_per_second / 100);
}

std::size_t expected_frames(std::uint64_t count, double duration_s, std::uint32_t frames_per_second) {
  return static_cast<std::size_t>(
      std::min<double>(count ? static_cast<double>(count) : duration_s * frames_per_second, 20'000'000.0));
}

bool sleep_until(TimePoint wake) {
  if (mono_ns() >= wake.ns()) return true;
  const timespec ts{static_cast<time_t>(wake.ns() / 1'000'000'000), static_cast<long>(wake.ns() % 1'000'000'000)};
  while (!stop_requested() && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
  return !stop_requested();
}

TimePoint spin_until(TimePoint deadline) {
  std::int64_t now = mono_ns();
  while (now < deadline.ns()) now = mono_ns();
  return TimePoint::from_ns(now);
}

std::optional<TimePoint> wait_for_deadline(TimePoint deadline, Duration spin) {
  if (!sleep_until(wake_time(deadline, spin))) return std::nullopt;
  return spin_until(deadline);
}

JitterRecorder::JitterRecorder(Duration nominal_period, std::size_t expected) : nominal_(nominal_period) {
  late_.reserve(expected);
  done_.reserve(expected);
  period_.reserve(expected);
}

void JitterRecorder::record(TimePoint deadline, TimePoint start, TimePoint done) {
  late_.push_back(start.ns() - deadline.ns());
  done_.push_back(done.ns() - deadline.ns());
  if (start.ns() - deadline.ns() < nominal_.ns()) ++on_time_;
  if (done.ns() - deadline.ns() < nominal_.ns()) ++returned_on_time_;
  if (prev_done_) period_.push_back(std::abs((done.ns() - prev_done_->ns()) - nominal_.ns()));
  prev_done_ = done;
}

}  // namespace layersec::sv_io
