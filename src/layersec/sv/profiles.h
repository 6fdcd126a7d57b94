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
  // smpCnt counts samples within one second and wraps at the sample rate
  // (9-2LE §5.2.4; IEC 61869-9 §6.9.3.4). smpCnt is 16 bits, so for rates
  // above 65536/s we wrap at the largest divisor of the rate that fits, which
  // keeps the wrap aligned with the second (96000/s wraps at 48000, twice a
  // second). That choice is ours; 61869-9's rule for 96 kHz was not available.
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
