#include "layersec/sv/profiles.h"

#include <array>
#include <charconv>

namespace layersec::sv {

namespace {
constexpr std::array<Profile, 8> kProfiles{{
    {"LE-50Hz-80spc", 4000, 1},
    {"LE-60Hz-80spc", 4800, 1},
    {"61869-9-P-4800x2", 4800, 2},
    {"60Hz-96spc-5760x1", 5760, 1},
    {"61869-9-PQ-14400x6", 14400, 6},
    {"LE-50Hz-256spc", 12800, 8},
    {"LE-60Hz-256spc", 15360, 8},
    {"61869-9-96kHz-x1", 96000, 1},
}};
}  // namespace

std::uint32_t Profile::smp_cnt_wrap() const { return sample_rate_hz <= kMaxSmpCntWrap ? sample_rate_hz : kMaxSmpCntWrap; }

TimePoint Profile::deadline(TimePoint start, std::uint64_t k) const {
  const std::uint64_t fps = frames_per_second();
  const std::uint64_t whole_seconds = k / fps;
  const std::uint64_t rest = k % fps;
  const auto ns = static_cast<std::int64_t>(whole_seconds * 1'000'000'000ULL + rest * 1'000'000'000ULL / fps);
  return start + Duration::nanoseconds(ns);
}

std::span<const Profile> paper_profiles() { return kProfiles; }

std::optional<Profile> find_profile(std::string_view key) {
  for (const auto& p : kProfiles) {
    if (p.name == key) return p;
  }
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::uint32_t rate = 0, asdus = 0;
  const auto a = std::from_chars(key.data(), key.data() + slash, rate);
  const auto b = std::from_chars(key.data() + slash + 1, key.data() + key.size(), asdus);
  if (a.ec != std::errc{} || b.ec != std::errc{} || a.ptr != key.data() + slash ||
      b.ptr != key.data() + key.size()) {
    return std::nullopt;
  }
  for (const auto& p : kProfiles) {
    if (p.sample_rate_hz == rate && p.asdus_per_frame == asdus) return p;
  }
  return std::nullopt;
}

}  // namespace layersec::sv
