// Reconstruction of a message counter from its transmitted least significant
// bits, in the two receiver modes of the SecOC engine.
//
//   strict            the seed paper's Algorithm 1 (section 4.6.3) exactly:
//                     candidate = MSBs(local) || rx; accept if it is greater
//                     than local and less than W ahead; otherwise retry once
//                     with MSBs(local)+1 (one counter wrap); otherwise reject.
//                     Reordered PDUs are indistinguishable from replays.
//   reorder-tolerant  the candidate nearest to the highest accepted counter is
//                     chosen (forward by < W or backward by < W), and a
//                     ReplayWindow bitmap accepts each late counter once.
//
// These functions are pure: they never change state. The engine commits the
// returned value only after the MAC over the complete FV has verified
// (SWS_SecOC_00047: freshness state advances only on a verified PDU).
#pragma once

#include <cstdint>

namespace layersec::secoc {

enum class FreshnessMode : std::uint8_t {
  kStrict,           // Algorithm 1, reordered = lost
  kReorderTolerant,  // sliding bitmap, late PDUs within W accepted once
};

// What reconstruction concluded about a received truncated counter.
enum class Reconstruction : std::uint8_t {
  kCandidate,    // `value` is the candidate counter to verify
  kReplay,       // at or behind the local counter, within W of it
  kOutOfWindow,  // more than W ahead, or stale beyond W, or past the counter's range
};

struct CounterCandidate {
  Reconstruction kind = Reconstruction::kOutOfWindow;
  std::uint64_t value = 0;
};

// A message counter of `counter_bits` bits (1..64) of which the `lsb_bits`
// least significant (1..counter_bits) travel on the wire.
struct TruncatedCounter {
  unsigned counter_bits = 32;
  unsigned lsb_bits = 16;

  [[nodiscard]] std::uint64_t max() const {
    return counter_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << counter_bits) - 1;
  }
  [[nodiscard]] std::uint64_t lsb_mask() const {
    return lsb_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << lsb_bits) - 1;
  }

  // Algorithm 1 of the seed paper. `local` is the last accepted counter
  // (FV_local), `rx` the received LSBs, `window` W >= 1. Requires
  // window <= 2^lsb_bits for an unambiguous result (validated by config).
  //   1: cand = MSBs(local) || rx
  //   2: if cand > local and cand - local < W: accept cand
  //   4: elif cand <= local: cand' = (MSBs(local)+1) || rx     (one wrap)
  //   6:   if cand' > local and cand' - local < W: accept cand'
  //   9:   else reject (replay, or wrap gap exceeds W)
  //  12: else reject (LSBs jumped beyond W)
  // A rejection at line 9 is reported as kReplay when cand lies within W
  // behind local (a replayed or reordered PDU) and kOutOfWindow otherwise.
  [[nodiscard]] CounterCandidate reconstruct_strict(std::uint64_t local, std::uint64_t rx,
                                                    std::uint64_t window) const;

  // Reorder-tolerant decoding around `highest` (the highest accepted counter):
  // of MSBs(highest)||rx and its neighbours one LSB period away, the one
  // with highest < c < highest + W or highest - W < c <= highest. Requires
  // 2W <= 2^lsb_bits. Whether a backward candidate was already accepted is
  // the ReplayWindow's question, not this function's.
  [[nodiscard]] CounterCandidate reconstruct_tolerant(std::uint64_t highest, std::uint64_t rx,
                                                      std::uint64_t window) const;
};

}  // namespace layersec::secoc
