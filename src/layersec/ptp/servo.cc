#include "layersec/ptp/servo.h"

#include <algorithm>
#include <cmath>

namespace layersec::ptp {

std::int64_t SyncedClock::to_synced(std::int64_t local_ns) const {
  const std::int64_t dt = local_ns - anchor_local_;
  const double extra = static_cast<double>(dt) * ppb_ * 1e-9 + anchor_fraction_;
  return anchor_synced_ + dt + static_cast<std::int64_t>(std::floor(extra));
}

double SyncedClock::to_synced_fraction(std::int64_t local_ns) const {
  const std::int64_t dt = local_ns - anchor_local_;
  const double extra = static_cast<double>(dt) * ppb_ * 1e-9 + anchor_fraction_;
  return extra - std::floor(extra);
}

std::int64_t SyncedClock::to_local(std::int64_t synced_ns) const {
  const double d = static_cast<double>(synced_ns - anchor_synced_) - anchor_fraction_;
  return anchor_local_ + static_cast<std::int64_t>(std::llround(d / (1.0 + ppb_ * 1e-9)));
}

void SyncedClock::set_frequency_ppb(double ppb, std::int64_t local_now_ns) {
  const std::int64_t s = to_synced(local_now_ns);
  const double f = to_synced_fraction(local_now_ns);
  anchor_local_ = local_now_ns;
  anchor_synced_ = s;
  anchor_fraction_ = f;
  ppb_ = ppb;
}

void SyncedClock::step(double delta_ns) {
  const double whole = std::floor(delta_ns);
  anchor_synced_ += static_cast<std::int64_t>(whole);
  anchor_fraction_ += delta_ns - whole;
  if (anchor_fraction_ >= 1.0) {
    anchor_fraction_ -= 1.0;
    anchor_synced_ += 1;
  }
}

PiServoConfig software_timestamp_servo() {
  PiServoConfig c;
  c.kp_scale = 0.1;
  c.ki_scale = 0.001;
  return c;
}

const char* to_string(ServoState s) {
  switch (s) {
    case ServoState::kUnlocked: return "unlocked";
    case ServoState::kJump: return "jump";
    case ServoState::kLocked: return "locked";
  }
  return "?";
}

void PiServo::set_interval(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return;
  kp_ = std::min(config_.kp_scale * std::pow(seconds, config_.kp_exponent), config_.kp_norm_max / seconds);
  ki_ = std::min(config_.ki_scale * std::pow(seconds, config_.ki_exponent), config_.ki_norm_max / seconds);
}

void PiServo::reset() {
  count_ = 0;
  state_ = ServoState::kUnlocked;
}

void PiServo::reset_for_new_source() {
  reset();
  first_update_ = true;
}

ServoOutput PiServo::sample(double offset, std::int64_t local_ns) {
  ServoOutput out;
  out.frequency_ppb = last_ppb_;
  if (!std::isfinite(offset)) return out;
  const double max = config_.max_frequency_ppb;
  switch (count_) {
    case 0:
      offset0_ = offset;
      local0_ = local_ns;
      count_ = 1;
      state_ = ServoState::kUnlocked;
      break;
    case 1: {
      if (local_ns <= local0_) {
        count_ = 0;
        state_ = ServoState::kUnlocked;
        break;
      }
      // Frequency error from two offsets (pi.c case 1): the slave gains
      // (offset1 − offset0) over (local1 − local0).
      drift_ += (offset - offset0_) * 1e9 / static_cast<double>(local_ns - local0_);
      drift_ = std::clamp(drift_, -max, max);
      const bool step = (first_update_ && config_.first_step_threshold_ns > 0 &&
                         std::fabs(offset) > config_.first_step_threshold_ns) ||
                        (config_.step_threshold_ns > 0 && std::fabs(offset) > config_.step_threshold_ns);
      state_ = step ? ServoState::kJump : ServoState::kLocked;
      if (step) out.step_ns = -offset;
      first_update_ = false;
      last_ppb_ = -drift_;
      count_ = 2;
      break;
    }
    default: {
      if (config_.step_threshold_ns > 0 && std::fabs(offset) > config_.step_threshold_ns) {
        count_ = 0;
        state_ = ServoState::kUnlocked;
        break;
      }
      const double ki_term = ki_ * offset;
      double ppb = kp_ * offset + drift_ + ki_term;
      if (ppb < -max) {
        ppb = -max;
      } else if (ppb > max) {
        ppb = max;
      } else {
        drift_ += ki_term;
      }
      state_ = ServoState::kLocked;
      last_ppb_ = -ppb;
      break;
    }
  }
  out.state = state_;
  out.frequency_ppb = last_ppb_;
  return out;
}

}  // namespace layersec::ptp
