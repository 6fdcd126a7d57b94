// The clock a shaper's gate schedule runs on, seen from a simulator's true
// time line (sans-I/O: both sides are plain nanoseconds passed in).
//
// In a simulation every node has its own clock: an oscillator with a
// frequency error, possibly disciplined by gPTP. The simulator advances true
// (simulated) time; a port's gate control list is written in the node's
// local time. A TimeBase converts between the two so that an EgressPort can
// run wholly in local time (its gates, guard band, serialisation and config
// changes) while the simulator schedules in true time:
//   local_of(t)             the node's local time at true time t;
//   true_at_or_after(l, n)  the first true time t >= n with local_of(t) >= l,
//                           kNever for l == kNever.
// Contract for implementations: local_of is non-decreasing in t and
// true_at_or_after is exact (local_of(r) >= l and, for r > n,
// local_of(r - 1) < l), so "the gate opens at local l" happens at exactly one
// true nanosecond. Both are const and deterministic (no clock is read).
#pragma once

#include <cstdint>

namespace layersec::tsn {

class TimeBase {
 public:
  virtual ~TimeBase() = default;
  [[nodiscard]] virtual std::int64_t local_of(std::int64_t true_ns) const = 0;
  [[nodiscard]] virtual std::int64_t true_at_or_after(std::int64_t local_ns, std::int64_t not_before_ns) const = 0;
};

// A free-running oscillator:
//   local(t) = offset_ns + t + floor(t · ppb / 10⁹)
// in exact integer arithmetic (ppb = frequency error in parts per billion,
// +100 ppm = 100'000). A fast clock skips a local value now and then, a slow
// one repeats one (the mapping is non-decreasing). |ppb| is clamped to 10⁸
// (10 %), which keeps the inverse's first guess within a few ns.
class LinearTimeBase final : public TimeBase {
 public:
  LinearTimeBase(std::int64_t offset_ns, std::int64_t ppb);
  [[nodiscard]] std::int64_t local_of(std::int64_t true_ns) const override;
  [[nodiscard]] std::int64_t true_at_or_after(std::int64_t local_ns, std::int64_t not_before_ns) const override;
  [[nodiscard]] std::int64_t ppb() const { return ppb_; }
  [[nodiscard]] std::int64_t offset_ns() const { return offset_; }

 private:
  std::int64_t offset_;
  std::int64_t ppb_;
};

// The first t in [lo, hi] with f(t) >= target for a non-decreasing f, or
// hi + 1 if there is none (binary search; f is evaluated O(log(hi - lo))
// times). A helper for TimeBase implementations.
template <typename F>
[[nodiscard]] std::int64_t first_at_or_above(F&& f, std::int64_t target, std::int64_t lo, std::int64_t hi) {
  if (lo > hi || f(hi) < target) return hi + 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (f(mid) >= target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

}  // namespace layersec::tsn
