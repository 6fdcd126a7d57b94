// Exhaustive tests of truncated-counter reconstruction (Algorithm 1 of the
// seed paper, section 4.6.3, and the reorder-tolerant decoder) and of the
// replay bitmap, against brute-force reference models.
#include "layersec/secoc/counter_reconstruction.h"

#include <set>

#include <gtest/gtest.h>

#include "layersec/secoc/replay_window.h"

namespace layersec::secoc {
namespace {

// Brute force: the unique x with local < x < local + W, x <= max and
// x ≡ rx (mod 2^lsb). Algorithm 1 tries only MSBs(local) and MSBs(local)+1,
// which covers that range exactly when W <= 2^lsb.
CounterCandidate reference_strict(const TruncatedCounter& tc, std::uint64_t local, std::uint64_t rx,
                                  std::uint64_t w) {
  for (std::uint64_t d = 1; d < w; ++d) {
    const std::uint64_t x = local + d;
    if (x > tc.max()) break;
    if ((x & tc.lsb_mask()) == rx) return {Reconstruction::kCandidate, x};
  }
  // Not acceptable: replay if the MSBs(local)||rx value is within W behind.
  const std::uint64_t cand = (local & ~tc.lsb_mask()) | rx;
  if (cand <= local && local - cand < w) return {Reconstruction::kReplay, cand};
  return {Reconstruction::kOutOfWindow, cand};
}

TEST(TruncatedCounter, StrictMatchesBruteForceExhaustively) {
  TruncatedCounter tc{8, 4};  // 8-bit counter, 4 LSBs on the wire
  for (std::uint64_t w = 1; w <= 16; ++w) {
    for (std::uint64_t local = 0; local <= tc.max(); ++local) {
      for (std::uint64_t rx = 0; rx < 16; ++rx) {
        const auto got = tc.reconstruct_strict(local, rx, w);
        const auto want = reference_strict(tc, local, rx, w);
        ASSERT_EQ(got.kind, want.kind) << "w=" << w << " local=" << local << " rx=" << rx;
        if (want.kind == Reconstruction::kCandidate) {
          ASSERT_EQ(got.value, want.value);
        }
      }
    }
  }
}

TEST(TruncatedCounter, Algorithm1EdgeCasesW32) {
  const TruncatedCounter tc{32, 16};  // paper: 32-bit MsgCnt, 16 LSBs sent
  const std::uint64_t w = 32;
  const std::uint64_t local = 1000;
  // Next in sequence.
  EXPECT_EQ(tc.reconstruct_strict(local, 1001, w).value, 1001u);
  // W-2 losses: gap W-1 < W, accepted.
  auto r = tc.reconstruct_strict(local, local + w - 1, w);
  EXPECT_EQ(r.kind, Reconstruction::kCandidate);
  EXPECT_EQ(r.value, local + w - 1);
  // W-1 losses: gap W, Algorithm 1 line 2 needs cand - local < W: rejected.
  EXPECT_EQ(tc.reconstruct_strict(local, local + w, w).kind, Reconstruction::kOutOfWindow);
  // W losses: rejected.
  EXPECT_EQ(tc.reconstruct_strict(local, local + w + 1, w).kind, Reconstruction::kOutOfWindow);
  // Replay of the last accepted and of an older one: rejected as replay.
  EXPECT_EQ(tc.reconstruct_strict(local, local, w).kind, Reconstruction::kReplay);
  EXPECT_EQ(tc.reconstruct_strict(local, local - 5, w).kind, Reconstruction::kReplay);
  // Reordered (late) PDU is indistinguishable from a replay.
  EXPECT_EQ(tc.reconstruct_strict(local, local - 1, w).kind, Reconstruction::kReplay);
  // Very old LSBs: the wrap retry lands far ahead: out of window.
  EXPECT_EQ(tc.reconstruct_strict(local, local - 100, w).kind, Reconstruction::kOutOfWindow);
}

TEST(TruncatedCounter, Algorithm1CounterWrap) {
  const TruncatedCounter tc{32, 16};
  const std::uint64_t w = 32;
  // local just below a 2^16 boundary; rx wrapped to small LSBs.
  const std::uint64_t local = 0x0003FFFE;
  auto r = tc.reconstruct_strict(local, 0x0001, w);  // true value 0x00040001
  EXPECT_EQ(r.kind, Reconstruction::kCandidate);
  EXPECT_EQ(r.value, 0x00040001u);
  // Exactly at the boundary.
  r = tc.reconstruct_strict(0x0003FFFF, 0x0000, w);
  EXPECT_EQ(r.value, 0x00040000u);
  // One wrap only: a gap beyond W across the wrap is rejected.
  EXPECT_EQ(tc.reconstruct_strict(local, 0x0040, w).kind, Reconstruction::kOutOfWindow);
  // No wrap beyond the counter's range (MsgCnt exhausted is never wrapped).
  EXPECT_EQ(tc.reconstruct_strict(0xFFFFFFFF, 0x0000, w).kind, Reconstruction::kOutOfWindow);
  EXPECT_EQ(tc.reconstruct_strict(0xFFFFFFF0, 0xFFFF, w).value, 0xFFFFFFFFu);
}

TEST(TruncatedCounter, WholeCounterTransmitted) {
  const TruncatedCounter tc{8, 8};
  EXPECT_EQ(tc.reconstruct_strict(10, 11, 4).value, 11u);
  EXPECT_EQ(tc.reconstruct_strict(10, 14, 4).kind, Reconstruction::kOutOfWindow);
  EXPECT_EQ(tc.reconstruct_strict(10, 10, 4).kind, Reconstruction::kReplay);
  EXPECT_EQ(tc.reconstruct_strict(255, 0, 4).kind, Reconstruction::kOutOfWindow);
}

TEST(TruncatedCounter, TolerantMatchesBruteForceExhaustively) {
  TruncatedCounter tc{8, 5};  // 32 residues
  for (std::uint64_t w = 1; w <= 16; ++w) {  // 2W <= 32
    for (std::uint64_t hi = 0; hi <= tc.max(); ++hi) {
      for (std::uint64_t rx = 0; rx < 32; ++rx) {
        const auto got = tc.reconstruct_tolerant(hi, rx, w);
        // Reference: the unique x in (hi - W, hi + W), 0 <= x <= max, x ≡ rx.
        bool found = false;
        std::uint64_t want = 0;
        for (std::int64_t d = -static_cast<std::int64_t>(w) + 1; d < static_cast<std::int64_t>(w); ++d) {
          const std::int64_t x = static_cast<std::int64_t>(hi) + d;
          if (x < 0 || static_cast<std::uint64_t>(x) > tc.max()) continue;
          if ((static_cast<std::uint64_t>(x) & 31) == rx) {
            ASSERT_FALSE(found) << "ambiguous reference";
            found = true;
            want = static_cast<std::uint64_t>(x);
          }
        }
        ASSERT_EQ(got.kind == Reconstruction::kCandidate, found)
            << "w=" << w << " hi=" << hi << " rx=" << rx;
        if (found) {
          ASSERT_EQ(got.value, want);
        }
      }
    }
  }
}

TEST(ReplayWindow, MatchesSetModelExhaustively) {
  // Every sequence of 6 counters drawn from 0..11 with window 4 (12^6 would be
  // large; use all sequences of length 4 and random longer ones).
  for (std::uint32_t w : {1u, 2u, 4u, 7u}) {
    for (int a = 0; a < 12; ++a)
      for (int b = 0; b < 12; ++b)
        for (int c = 0; c < 12; ++c)
          for (int d = 0; d < 12; ++d) {
            ReplayWindow rw(w);
            std::set<std::uint64_t> seen{0};
            std::uint64_t highest = 0;
            for (int x : {a, b, c, d}) {
              const auto n = static_cast<std::uint64_t>(x);
              ReplayWindow::Check want;
              if (n > highest) want = ReplayWindow::Check::kNew;
              else if (highest - n >= w) want = ReplayWindow::Check::kTooOld;
              else want = seen.count(n) ? ReplayWindow::Check::kDuplicate : ReplayWindow::Check::kNew;
              ASSERT_EQ(rw.check(n), want);
              if (want == ReplayWindow::Check::kNew) {
                rw.accept(n);
                seen.insert(n);
                highest = std::max(highest, n);
              }
            }
          }
  }
}

TEST(ReplayWindow, LargeAdvancesAndFullCapacity) {
  ReplayWindow rw(256);
  rw.reset(0);
  for (std::uint64_t i = 1; i <= 1000; i += 3) {
    ASSERT_EQ(rw.check(i), ReplayWindow::Check::kNew);
    rw.accept(i);
  }
  EXPECT_EQ(rw.highest(), 1000u);
  EXPECT_EQ(rw.check(997), ReplayWindow::Check::kDuplicate);
  EXPECT_EQ(rw.check(998), ReplayWindow::Check::kNew);
  EXPECT_EQ(rw.check(745), ReplayWindow::Check::kDuplicate);  // 745 = 1 + 3*248, oldest in window
  EXPECT_EQ(rw.check(746), ReplayWindow::Check::kNew);
  EXPECT_EQ(rw.check(744), ReplayWindow::Check::kTooOld);        // 1000 - 744 = 256 = W
  rw.accept(1000 + 5000);  // jump past the capacity clears everything
  EXPECT_EQ(rw.check(6000 - 1), ReplayWindow::Check::kNew);
  EXPECT_EQ(rw.check(6000), ReplayWindow::Check::kDuplicate);
  EXPECT_EQ(rw.check(6000 - 256), ReplayWindow::Check::kTooOld);
}

}  // namespace
}  // namespace layersec::secoc
