#include "layersec/secoc/counter_reconstruction.h"

namespace layersec::secoc {

CounterCandidate TruncatedCounter::reconstruct_strict(std::uint64_t local, std::uint64_t rx,
                                                      std::uint64_t window) const {
  rx &= lsb_mask();
  if (lsb_bits >= counter_bits) {
    // The whole counter is transmitted: no MSBs to borrow, no wrap to retry.
    if (rx > local && rx - local < window) return {Reconstruction::kCandidate, rx};
    if (rx <= local) {
      return {local - rx < window ? Reconstruction::kReplay : Reconstruction::kOutOfWindow, rx};
    }
    return {Reconstruction::kOutOfWindow, rx};
  }
  const std::uint64_t hi = local >> lsb_bits;
  const std::uint64_t cand = (hi << lsb_bits) | rx;  // line 1
  if (cand > local) {
    if (cand - local < window) return {Reconstruction::kCandidate, cand};  // lines 2-3
    return {Reconstruction::kOutOfWindow, cand};                           // line 12
  }
  // Line 4-5: cand <= local, retry once with the MSBs incremented (wrap).
  const std::uint64_t hi_max = max() >> lsb_bits;
  if (hi < hi_max) {
    const std::uint64_t cand2 = ((hi + 1) << lsb_bits) | rx;
    if (cand2 > local && cand2 - local < window) return {Reconstruction::kCandidate, cand2};
  }
  // Line 9: replay (or a reordered PDU), or a wrap gap beyond W.
  return {local - cand < window ? Reconstruction::kReplay : Reconstruction::kOutOfWindow, cand};
}

CounterCandidate TruncatedCounter::reconstruct_tolerant(std::uint64_t highest, std::uint64_t rx,
                                                        std::uint64_t window) const {
  rx &= lsb_mask();
  std::uint64_t options[3];
  int n = 0;
  if (lsb_bits >= counter_bits) {
    options[n++] = rx;
  } else {
    const std::uint64_t hi = highest >> lsb_bits;
    const std::uint64_t hi_max = max() >> lsb_bits;
    options[n++] = (hi << lsb_bits) | rx;
    if (hi > 0) options[n++] = ((hi - 1) << lsb_bits) | rx;
    if (hi < hi_max) options[n++] = ((hi + 1) << lsb_bits) | rx;
  }
  for (int i = 0; i < n; ++i) {
    const std::uint64_t c = options[i];
    if (c > highest && c - highest < window) return {Reconstruction::kCandidate, c};
    if (c <= highest && highest - c < window) return {Reconstruction::kCandidate, c};
  }
  return {Reconstruction::kOutOfWindow, options[0]};
}

}  // namespace layersec::secoc
