// The eight IEC 61869-9 / 9-2LE publication profiles evaluated by the
// reference paper (arXiv 2608.22123, Table II), with the pacing arithmetic a
// publisher needs: frames per second, interarrival time, smpCnt wrap and the
// absolute deadline of frame k.
//
// Names and rates follow ../shared/vectors/sv/iec61869-9-profiles.json (each
// row there names its source; 5760/1 and 96000/1 are marked unverified
// against the standard's own table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "layersec/base/time.h"

namespace layersec::sv {

// smpCnt is a 16-bit counter: it can take 65,536 values (0..65535), so no
// stream may wrap it later than this.
inline constexpr std::uint32_t kMaxSmpCntWrap = 65536;

struct Profile {
  std::string_view name;
  std::uint32_t sample_rate_hz;  // samples per second
  std::uint32_t asdus_per_frame;

  // Frames per second (every profile here has an integral frame rate).
  [[nodiscard]] constexpr std::uint32_t frames_per_second() const { return sample_rate_hz / asdus_per_frame; }
  // Nominal interarrival time between frames in microseconds.
  [[nodiscard]] constexpr double interarrival_us() const {
    return 1e6 * static_cast<double>(asdus_per_frame) / static_cast<double>(sample_rate_hz);
  }
  // Default smpCnt wrap of the profile: smpCnt counts samples within one
  // second and wraps at the sample rate (9-2LE §5.2.4; IEC 61869-9 §6.903.3
  // "digital output sample rates"). smpCnt is INT16U (IEC 61850-9-2 Table 14),
  // so a rate above 65,536/s cannot count a whole second: there the default
  // is the full 16-bit range (wrap at 65,536, as libiec61850's publisher does
  // at 96 kHz). docs/sv.md says what we could and could not check of
  // 61869-9's text; StreamConfig/SubscriptionConfig::smp_cnt_wrap override it
  // per stream (a subscriber follows a publisher that differs).
  [[nodiscard]] std::uint32_t smp_cnt_wrap() const;
  // Absolute deadline of frame k for a stream started at `start`: start +
  // k / frames_per_second, computed without accumulating rounding error.
  [[nodiscard]] TimePoint deadline(TimePoint start, std::uint64_t k) const;
};

// The 8 profiles, in the paper's order.
std::span<const Profile> paper_profiles();
// Looks a profile up by name ("LE-50Hz-80spc", ...) or by "RATE/ASDUS"
// ("4000/1", "96000/1", ...).
std::optional<Profile> find_profile(std::string_view name_or_rate);

}  // namespace layersec::sv
