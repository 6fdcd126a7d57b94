// smpCnt sequence tracking for one stream: gap, duplicate and stale detection
// with wrap-around, for stream supervision. On unsecured streams it is all
// there is (duplicates and stale frames are dropped); on secured streams it is
// not the replay defence: smpCnt wraps every second (or at the configured
// wrap), so a frame recorded a whole number of wraps earlier looks fresh
// here. Secured streams refuse replays by the authenticated 64-bit frame
// counter instead (security.h, FrameVerifier) and only follow smpCnt here.
//
// smpCnt wraps at W (SubscriptionConfig::smp_cnt_wrap, by default
// Profile::smp_cnt_wrap()). Relative to the last accepted smpCnt L, a frame
// whose first smpCnt is C is
//   next       when (C - L) mod W == 1
//   a gap      when 2 <= (C - L) mod W <= W/2  (missing = distance - 1)
//   duplicate  when the frame's last smpCnt equals L (the same samples again)
//   stale      otherwise (behind L by less than half a wrap)
// check() changes nothing; accept() records the frame's last smpCnt.
#pragma once

#include <cstdint>

namespace layersec::sv {

class SmpCntWindow {
 public:
  enum class Verdict : std::uint8_t { kFirst, kNext, kGap, kDuplicate, kStale };
  struct Check {
    Verdict verdict = Verdict::kFirst;
    std::uint32_t missing = 0;  // samples lost before this frame (kGap)
    [[nodiscard]] bool accepted() const { return verdict != Verdict::kDuplicate && verdict != Verdict::kStale; }
  };

  explicit SmpCntWindow(std::uint32_t wrap = 4000) : wrap_(wrap == 0 ? 1 : wrap) {}
  [[nodiscard]] std::uint32_t wrap() const { return wrap_; }
  [[nodiscard]] bool has_last() const { return has_last_; }
  [[nodiscard]] std::uint16_t last() const { return last_; }

  // first/last: smpCnt of the frame's first and last ASDU.
  [[nodiscard]] Check check(std::uint16_t first, std::uint16_t last) const {
    if (!has_last_) return {Verdict::kFirst, 0};
    if (last == last_) return {Verdict::kDuplicate, 0};
    const std::uint32_t d = (first + wrap_ - last_ % wrap_) % wrap_;
    if (d == 0) return {Verdict::kStale, 0};
    if (d == 1) return {Verdict::kNext, 0};
    if (d <= wrap_ / 2) return {Verdict::kGap, d - 1};
    return {Verdict::kStale, 0};
  }
  void accept(std::uint16_t last) {
    last_ = last;
    has_last_ = true;
  }
  void reset() { has_last_ = false; }

 private:
  std::uint32_t wrap_;
  std::uint16_t last_ = 0;
  bool has_last_ = false;
};

}  // namespace layersec::sv
