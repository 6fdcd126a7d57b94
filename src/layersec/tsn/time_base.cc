#include "layersec/tsn/time_base.h"

#include <algorithm>

#include "layersec/tsn/gate_control_list.h"

namespace layersec::tsn {

namespace {
constexpr std::int64_t kMaxPpb = 100'000'000;
constexpr __int128 kBillion = 1'000'000'000;

// floor(a / b) for b > 0.
__int128 floor_div(__int128 a, __int128 b) {
  __int128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}
}  // namespace

LinearTimeBase::LinearTimeBase(std::int64_t offset_ns, std::int64_t ppb)
    : offset_(offset_ns), ppb_(std::clamp(ppb, -kMaxPpb, kMaxPpb)) {}

std::int64_t LinearTimeBase::local_of(std::int64_t true_ns) const {
  return offset_ + true_ns + static_cast<std::int64_t>(floor_div(static_cast<__int128>(true_ns) * ppb_, kBillion));
}

std::int64_t LinearTimeBase::true_at_or_after(std::int64_t local_ns, std::int64_t not_before_ns) const {
  if (local_ns == kNever) return kNever;
  if (local_of(not_before_ns) >= local_ns) return not_before_ns;
  // local_of(t) = offset + t·(1 + ppb/1e9) - frac, frac in [0, 1): the answer
  // lies within a few ns of (local - offset) / (1 + ppb/1e9).
  const __int128 num = (static_cast<__int128>(local_ns) - offset_) * kBillion;
  const __int128 g = std::max<__int128>(floor_div(num, kBillion + ppb_), not_before_ns);
  if (g > static_cast<__int128>(kNever) - 64) return kNever;
  const auto guess = static_cast<std::int64_t>(g);
  const std::int64_t lo = std::max(not_before_ns, guess - 4);
  const std::int64_t hi = std::max(lo, guess + 4);
  const std::int64_t t = first_at_or_above([this](std::int64_t x) { return local_of(x); }, local_ns, lo, hi);
  if (t <= hi) return t;
  // Not expected (the bracket is exact arithmetic); search wider rather than fail.
  return first_at_or_above([this](std::int64_t x) { return local_of(x); }, local_ns, hi,
                           hi + (local_ns - local_of(hi)) * 2 + 16);
}

}  // namespace layersec::tsn
