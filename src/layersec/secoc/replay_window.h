// Sliding anti-replay bitmap for the reorder-tolerant freshness mode, in the
// style of RFC 4303 section 3.4.3 / RFC 6479: the highest accepted counter and
// one bit for each of the `window` counters at or below it. A late counter
// inside the window is accepted once; a duplicate or an older one is not.
//
// The bitmap is a ring of kCapacityBits bits indexed by counter mod capacity,
// so advancing clears only the bits that leave the window. No allocation.
#pragma once

#include <array>
#include <cstdint>

namespace layersec::secoc {

class ReplayWindow {
 public:
  static constexpr std::uint32_t kCapacityBits = 256;

  enum class Check : std::uint8_t {
    kNew,        // not seen; ahead of or within the window
    kDuplicate,  // already accepted
    kTooOld,     // at least `window` behind the highest accepted counter
  };

  // window: 1..kCapacityBits. Starts as if counter 0 had been accepted (the
  // sender never uses message counter 0, see engine.h).
  explicit ReplayWindow(std::uint32_t window = 32) : window_(window) { reset(0); }

  // Forgets everything and marks `highest` as accepted.
  void reset(std::uint64_t highest);
  [[nodiscard]] Check check(std::uint64_t counter) const;
  // Records `counter` as accepted (precondition: check() returned kNew).
  void accept(std::uint64_t counter);

  [[nodiscard]] std::uint64_t highest() const { return highest_; }
  [[nodiscard]] std::uint32_t window() const { return window_; }

 private:
  [[nodiscard]] bool bit(std::uint64_t c) const {
    const std::uint64_t i = c % kCapacityBits;
    return (bits_[i / 64] >> (i % 64)) & 1U;
  }
  void set_bit(std::uint64_t c, bool v) {
    const std::uint64_t i = c % kCapacityBits;
    const std::uint64_t m = std::uint64_t{1} << (i % 64);
    bits_[i / 64] = v ? (bits_[i / 64] | m) : (bits_[i / 64] & ~m);
  }
  std::array<std::uint64_t, kCapacityBits / 64> bits_{};
  std::uint64_t highest_ = 0;
  std::uint32_t window_;
};

}  // namespace layersec::secoc
