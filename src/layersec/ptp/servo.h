// The layersec clock and the PI servo that disciplines it.
//
// SyncedClock maps a free-running local time line (CLOCK_MONOTONIC_RAW on a
// host, a drifting oscillator in the simulator) to synchronised time:
//   synced(local) = anchor_synced + (local − anchor_local) · (1 + ppb·10⁻⁹)
// It never touches a host clock (every network namespace shares
// CLOCK_REALTIME); the servo adjusts only this mapping. Synchronised times
// are int64 nanoseconds (TAI-like, ~1.7·10¹⁸), so the arithmetic keeps the
// integer part exact and only the sub-nanosecond remainder in a double.
//
// PiServo is linuxptp's pi.c in behaviour: the first sample is stored, the
// second estimates the frequency error from the two offsets (and asks for a
// phase step when the offset exceeds first_step_threshold_ns), later samples
// run the PI law  ppb = kp·offset + drift + ki·offset  (drift integrates
// ki·offset unless the output saturates). kp and ki follow the sync interval
// as linuxptp computes them (kp = min(kp_scale·T^kp_exponent, kp_norm_max/T),
// likewise ki). Offsets are slave − master, in ns; the output is the
// frequency to set on the slave clock (negative when the slave runs fast).
#pragma once

#include <cstdint>

namespace layersec::ptp {

class SyncedClock {
 public:
  // synced(local) = local + initial_offset_ns at frequency offset 0.
  explicit SyncedClock(std::int64_t initial_offset_ns = 0) : anchor_synced_(initial_offset_ns) {}
  [[nodiscard]] std::int64_t to_synced(std::int64_t local_ns) const;
  // The same with the sub-nanosecond part.
  [[nodiscard]] double to_synced_fraction(std::int64_t local_ns) const;
  // Local time at which the synced clock reads `synced_ns` (inverse mapping).
  [[nodiscard]] std::int64_t to_local(std::int64_t synced_ns) const;
  // Sets the frequency offset from local_now on (the mapping is continuous).
  void set_frequency_ppb(double ppb, std::int64_t local_now_ns);
  // Steps the synced time by delta_ns.
  void step(double delta_ns);
  [[nodiscard]] double frequency_ppb() const { return ppb_; }
  bool operator==(const SyncedClock&) const = default;

 private:
  std::int64_t anchor_local_ = 0;
  std::int64_t anchor_synced_ = 0;
  double anchor_fraction_ = 0;  // in [0, 1)
  double ppb_ = 0;
};

struct PiServoConfig {
  double kp_scale = 0.7, kp_exponent = -0.3, kp_norm_max = 0.7;
  double ki_scale = 0.3, ki_exponent = 0.4, ki_norm_max = 0.3;
  double max_frequency_ppb = 900'000'000.0 / 1000.0;  // 900 ppm
  double first_step_threshold_ns = 20'000;            // 0: never step on the first lock
  double step_threshold_ns = 0;                        // 0: no steps once locked
};

// linuxptp's software-timestamping defaults (-S): kp_scale 0.1, ki_scale 0.001.
PiServoConfig software_timestamp_servo();

enum class ServoState : std::uint8_t {
  kUnlocked,  // collecting the first two samples
  kJump,      // locked after a phase step (this sample only)
  kLocked,    // running the PI law
};
const char* to_string(ServoState s);

struct ServoOutput {
  ServoState state = ServoState::kUnlocked;
  double frequency_ppb = 0;  // to set on the clock (unchanged while unlocked)
  double step_ns = 0;        // to add to the clock's time (kJump only)
};

class PiServo {
 public:
  explicit PiServo(const PiServoConfig& config) : config_(config) { set_interval(1.0); }
  // The sync interval in seconds (recomputes kp and ki).
  void set_interval(double seconds);
  // One measurement: offset (slave − master, ns) at local time local_ns.
  // Non-finite offsets are refused (the servo is unchanged; state kUnlocked).
  ServoOutput sample(double offset_ns, std::int64_t local_ns);
  // Forgets the samples (the next two relock); the frequency estimate stays.
  void reset();
  // reset() for a new time source (another grandmaster): its timescale may be
  // anywhere, so the first update may step again (first_step_threshold_ns),
  // as on the first lock. Without this a slave whose first GM is replaced by
  // one on another timescale only slews, at max_frequency_ppb, and never
  // arrives when step_threshold_ns is 0 (gptp).
  void reset_for_new_source();
  [[nodiscard]] ServoState state() const { return state_; }
  [[nodiscard]] double drift_ppb() const { return drift_; }
  [[nodiscard]] double kp() const { return kp_; }
  [[nodiscard]] double ki() const { return ki_; }

 private:
  PiServoConfig config_;
  double kp_ = 0, ki_ = 0;
  double drift_ = 0;
  int count_ = 0;
  double offset0_ = 0;
  std::int64_t local0_ = 0;
  bool first_update_ = true;
  ServoState state_ = ServoState::kUnlocked;
  double last_ppb_ = 0;
};

}  // namespace layersec::ptp
