// Paced sending on absolute deadlines (sv publish, bench sv): sleep with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until shortly before a
// frame's deadline, spin the rest, then build and send; and the send-jitter
// figures a paced sender reports. The deadlines themselves come from the
// sans-I/O sv::Publisher (Profile::deadline).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/base/time.h"

namespace layersec::sv_io {

// When a sender that spins for `spin` before `deadline` goes to sleep until.
[[nodiscard]] constexpr TimePoint wake_time(TimePoint deadline, Duration spin) { return deadline - spin; }

// Nominal time between two frames at `frames_per_second` (> 0), truncated to ns.
[[nodiscard]] Duration nominal_period(std::uint32_t frames_per_second);

// Frames between two looks at the KDC socket: about every 10 ms, at least 1.
[[nodiscard]] std::uint64_t frames_between_key_checks(std::uint32_t frames_per_second);

// Samples a run is expected to record (for reserving): `count` frames when
// set, else `duration_s` at `frames_per_second`; at most 20,000,000.
[[nodiscard]] std::size_t expected_frames(std::uint64_t count, double duration_s, std::uint32_t frames_per_second);

// Sleeps on CLOCK_MONOTONIC until `wake` (absolute; nothing when it has
// passed), sleeping again after an interrupting signal unless a stop was
// requested (stop_signal.h). False when the sleep ended on a stop request.
bool sleep_until(TimePoint wake);

// Busy-waits until CLOCK_MONOTONIC reaches `deadline`; returns the first
// reading at or after it.
TimePoint spin_until(TimePoint deadline);

// sleep_until(wake_time(deadline, spin)), then spin_until(deadline): the
// moment processing of the frame due at `deadline` starts, or nullopt when a
// stop was requested while sleeping.
std::optional<TimePoint> wait_for_deadline(TimePoint deadline, Duration spin);

// A paced sender's jitter, in ns per frame:
//   lateness    send start - deadline (the frame is built before its slot)
//   send_done   send returned - deadline
//   period_dev  |interval between consecutive send returns - nominal period|
//               (no sample across a break: frames skipped in between)
// and how many frames were on time: sent (send started) within one nominal
// period of their deadline, and send returned within one nominal period.
class JitterRecorder {
 public:
  // Reserves room for `expected` frames.
  JitterRecorder(Duration nominal_period, std::size_t expected);

  // One frame due at `deadline`, started at `start`, sent at `done`.
  void record(TimePoint deadline, TimePoint start, TimePoint done);
  // The next frame does not follow the last one recorded (a skip).
  void break_period() { prev_done_.reset(); }

  // Frames recorded whose send started / returned less than one nominal
  // period after their deadline.
  [[nodiscard]] std::uint64_t on_time() const { return on_time_; }
  [[nodiscard]] std::uint64_t returned_on_time() const { return returned_on_time_; }

  // The samples (callers may sort them; see latency_stats.h).
  std::vector<std::int64_t>& lateness() { return late_; }
  std::vector<std::int64_t>& send_done() { return done_; }
  std::vector<std::int64_t>& period_dev() { return period_; }

 private:
  Duration nominal_;
  std::optional<TimePoint> prev_done_;
  std::uint64_t on_time_ = 0;
  std::uint64_t returned_on_time_ = 0;
  std::vector<std::int64_t> late_, done_, period_;
};

}  // namespace layersec::sv_io
