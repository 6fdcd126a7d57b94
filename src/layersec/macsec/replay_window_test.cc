// ReplayWindow: 802.1AE-2018 10.6.2/10.6.5 lowest-acceptable-PN bookkeeping
// and 802.1AEbw XPN PN recovery, edge by edge.
#include "layersec/macsec/replay_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>

namespace layersec::macsec {
namespace {

TEST(ReplayWindow, FreshSaAcceptsFromLowestPn) {
  ReplayWindow w(false, 1, 0);
  EXPECT_EQ(w.next_pn(), 1u);
  EXPECT_EQ(w.lowest_pn(), 1u);
  EXPECT_TRUE(w.is_late(0));
  EXPECT_FALSE(w.is_late(1));
  EXPECT_FALSE(w.is_late(0xFFFFFFFFu));
}

TEST(ReplayWindow, LowestPnZeroIsRaisedToOne) {
  ReplayWindow w(true, 0, 10);
  EXPECT_EQ(w.lowest_pn(), 1u);
  EXPECT_TRUE(w.is_late(0));
}

TEST(ReplayWindow, WindowZeroIsStrictOrder) {
  ReplayWindow w(false, 1, 0);
  w.accept(5);
  EXPECT_EQ(w.next_pn(), 6u);
  EXPECT_EQ(w.lowest_pn(), 6u);
  for (std::uint64_t pn = 0; pn <= 5; ++pn) EXPECT_TRUE(w.is_late(pn)) << pn;
  EXPECT_FALSE(w.is_late(6));
  EXPECT_FALSE(w.is_late(1000));
}

TEST(ReplayWindow, WindowBoundaryExactly) {
  // After PN 100 with window 10: nextPN 101, lowest 91. 90 late, 91 not.
  ReplayWindow w(false, 1, 10);
  w.accept(100);
  EXPECT_EQ(w.lowest_pn(), 91u);
  EXPECT_TRUE(w.is_late(90));
  EXPECT_FALSE(w.is_late(91));
  EXPECT_FALSE(w.is_late(100));  // 802.1AE has no bitmap: a repeat in the window is not late
}

TEST(ReplayWindow, WindowLargerThanNextPnKeepsInitialLowest) {
  ReplayWindow w(false, 7, 64);
  w.accept(20);
  EXPECT_EQ(w.next_pn(), 21u);
  EXPECT_EQ(w.lowest_pn(), 7u);  // 21 - 64 would underflow: the bound stays
  EXPECT_TRUE(w.is_late(6));
  EXPECT_FALSE(w.is_late(7));
}

TEST(ReplayWindow, LowestNeverMovesBackwards) {
  ReplayWindow w(false, 1, 4);
  w.accept(50);
  EXPECT_EQ(w.lowest_pn(), 47u);
  w.accept(48);  // older but accepted frame: nextPN unchanged
  EXPECT_EQ(w.next_pn(), 51u);
  EXPECT_EQ(w.lowest_pn(), 47u);
  w.set_window(100);  // widening the window does not lower the bound
  EXPECT_EQ(w.lowest_pn(), 47u);
  w.set_window(0);  // narrowing raises it at once
  EXPECT_EQ(w.lowest_pn(), 51u);
}

// Exhaustive over a small space: after any sequence of accepted PNs the
// lowest acceptable PN equals max(initial, max(pn)+1 - window).
TEST(ReplayWindow, MatchesModelOnRandomSequences) {
  std::mt19937 rng(7);
  for (std::uint32_t window : {0u, 1u, 2u, 3u, 8u, 31u, 32u}) {
    for (int trial = 0; trial < 200; ++trial) {
      const std::uint64_t initial = 1 + rng() % 5;
      ReplayWindow w(false, initial, window);
      std::uint64_t highest_next = initial;
      for (int step = 0; step < 40; ++step) {
        const std::uint64_t pn = 1 + rng() % 80;
        const bool late = w.is_late(pn);
        const std::uint64_t model_lowest =
            std::max<std::uint64_t>(initial, highest_next > window ? highest_next - window : 0);
        ASSERT_EQ(late, pn < model_lowest) << "window " << window << " pn " << pn;
        if (!late) {
          w.accept(pn);
          highest_next = std::max(highest_next, pn + 1);
        }
        ASSERT_EQ(w.next_pn(), highest_next);
      }
    }
  }
}

TEST(ReplayWindow, NonXpnRecoveryIsIdentity) {
  ReplayWindow w(false, 0x80000000u, 0);
  for (std::uint32_t pn : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu})
    EXPECT_EQ(w.recover(pn).value(), pn);
}

TEST(ReplayWindow, NonXpnLastPnExhausts) {
  ReplayWindow w(false, 1, 100);
  w.accept(0xFFFFFFFFu);
  EXPECT_TRUE(w.exhausted());
  EXPECT_TRUE(w.is_late(0xFFFFFFFFu));  // the last PN cannot be replayed
  EXPECT_TRUE(w.is_late(0xFFFFFFF0u));
}

TEST(ReplayWindow, NonXpnInstalledBeyondRangeIsExhausted) {
  ReplayWindow w(false, 0x100000000ULL, 0);
  EXPECT_TRUE(w.exhausted());
}

// 802.1AE-2018 10.6.2: upper half from the lowest acceptable PN, +1 when its
// bit 31 is set and the received bit 31 is clear.
TEST(ReplayWindow, XpnRecoveryRule) {
  struct Case {
    std::uint64_t lowest;
    std::uint32_t field;
    std::uint64_t expected;
  };
  const Case cases[] = {
      {1, 5, 5},
      {1, 0xFFFFFFFFu, 0xFFFFFFFFull},
      {0x7FFFFFFFull, 0x80000000u, 0x80000000ull},
      {0x7FFFFFFFull, 0x00000001u, 0x00000001ull},         // MSB of lowest clear: same upper
      {0x80000000ull, 0x00000001u, 0x100000001ull},        // lowest MSB set, field MSB clear: +1
      {0x80000000ull, 0x80000000u, 0x80000000ull},
      {0xFFFFFFDFull, 0x00000062u, 0x100000062ull},        // DPDK replay group B frame 2
      {0x100000043ull, 0x00000058u, 0x100000058ull},       // frame 3
      {0x100000043ull, 0x00000002u, 0x100000002ull},       // frame 4 (then late)
      {0xB0DF459CB2C28465ull, 0xB2C28465u, 0xB0DF459CB2C28465ull},  // Annex C.1.3
      {0xB0DF459C2E58495Cull, 0x2E58495Cu, 0xB0DF459C2E58495Cull},  // Annex C.8.4
      {0x500000000ull, 0x0u, 0x500000000ull},          // XPN allows a zero PN field
  };
  for (const auto& c : cases) {
    ReplayWindow w(true, c.lowest, 0);
    ASSERT_EQ(w.lowest_pn(), c.lowest);
    auto r = w.recover(c.field);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, c.expected) << std::hex << c.lowest << " " << c.field;
  }
}

TEST(ReplayWindow, XpnRecoveryPastTopOfRangeFails) {
  ReplayWindow w(true, 0xFFFFFFFF80000000ull, 0);
  EXPECT_FALSE(w.recover(0x00000001u).has_value());
  EXPECT_EQ(w.recover(0x80000001u).value(), 0xFFFFFFFF80000001ull);
}

// The frame carrying PN 0xFFFFFFFF replayed after the lower half wrapped
// (the Linux CVE-2026-63925 case): the bound is the full 64-bit lowest PN,
// so with window 0 the replay recovers to 0x1_FFFFFFFF (another IV: the ICV
// fails) and is never accepted as the old PN; with a window that still covers
// it, 802.1AE accepts it like any in-window PN (no bitmap in the standard).
TEST(ReplayWindow, XpnReplayAcrossLowerWrap) {
  ReplayWindow strict(true, 0xFFFFFFF0ull, 0);
  ASSERT_EQ(*strict.recover(0xFFFFFFFFu), 0xFFFFFFFFull);
  strict.accept(0xFFFFFFFFull);
  EXPECT_EQ(strict.next_pn(), 0x100000000ull);
  EXPECT_EQ(strict.lowest_pn(), 0x100000000ull);
  EXPECT_TRUE(strict.is_late(0xFFFFFFFFull));
  EXPECT_EQ(*strict.recover(0xFFFFFFFFu), 0x1FFFFFFFFull);

  ReplayWindow windowed(true, 0xFFFFFFF0ull, 16);
  windowed.accept(0xFFFFFFFFull);
  EXPECT_EQ(windowed.lowest_pn(), 0xFFFFFFF0ull);
  EXPECT_EQ(*windowed.recover(0xFFFFFFFFu), 0xFFFFFFFFull);
  EXPECT_FALSE(windowed.is_late(0xFFFFFFFFull));
  // Once later frames push the bound past it, the replay recovers to the
  // next 2^32 block (another IV, so the ICV fails) and the old PN is late.
  windowed.accept(0x100000010ull);
  EXPECT_EQ(windowed.lowest_pn(), 0x100000001ull);
  EXPECT_EQ(*windowed.recover(0xFFFFFFFFu), 0x1FFFFFFFFull);
  EXPECT_TRUE(windowed.is_late(0xFFFFFFFFull));
}

// Exhaustive walk over a 64-bit PN sequence crossing several 2^32 boundaries
// with frames arriving in order and slightly out of order: every in-window
// frame is recovered exactly, every frame older than the window is late.
TEST(ReplayWindow, XpnRecoveryFollowsSequenceAcrossBoundaries) {
  const std::uint32_t window = 64;
  ReplayWindow w(true, 0xFFFFFF00ull, window);
  std::mt19937 rng(11);
  std::uint64_t sent = 0xFFFFFF00ull;
  for (int i = 0; i < 20000; ++i) {
    // next frame: mostly in order, sometimes a reordered one within the window
    std::uint64_t pn;
    if (i % 7 == 3 && w.next_pn() > w.lowest_pn() + 1) {
      pn = w.lowest_pn() + rng() % (w.next_pn() - w.lowest_pn());
    } else {
      sent += 1 + rng() % 3;
      pn = sent;
    }
    auto r = w.recover(static_cast<std::uint32_t>(pn));
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(*r, pn) << std::hex << pn << " lowest " << w.lowest_pn();
    ASSERT_FALSE(w.is_late(pn));
    w.accept(pn);
    if (i % 2000 == 1999) sent += 0x70000000ull;  // big forward jumps (< 2^31) cross boundaries
  }
  EXPECT_GT(w.next_pn(), 0x300000000ull);  // 10 jumps of 0x70000000 from 0xFFFFFF00
  // A frame older than the window is late.
  const std::uint64_t old = w.lowest_pn() - 1;
  auto r = w.recover(static_cast<std::uint32_t>(old));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(*r != old || w.is_late(*r));
}

TEST(ReplayWindow, XpnLastPnExhausts) {
  ReplayWindow w(true, UINT64_MAX - 2, 0);
  w.accept(UINT64_MAX - 1);
  EXPECT_FALSE(w.exhausted());
  EXPECT_EQ(w.next_pn(), UINT64_MAX);
  w.accept(UINT64_MAX);
  EXPECT_TRUE(w.exhausted());
  EXPECT_TRUE(w.is_late(UINT64_MAX));
}

}  // namespace
}  // namespace layersec::macsec

namespace layersec::macsec {
namespace {

// Stricter than 802.1AE: a PN accepted once is seen() while inside the window.
TEST(ReplayWindowDuplicates, AcceptedPnIsSeenUntilItLeavesTheWindow) {
  ReplayWindow w(false, 1, 8);
  for (std::uint64_t pn : {5u, 3u, 9u}) w.accept(pn);
  EXPECT_TRUE(w.seen(5));
  EXPECT_TRUE(w.seen(3));
  EXPECT_TRUE(w.seen(9));
  EXPECT_FALSE(w.seen(4));   // in the window, never accepted: a legitimate late frame
  EXPECT_FALSE(w.seen(8));
  EXPECT_FALSE(w.seen(10));  // >= nextPN
  EXPECT_FALSE(w.is_late(4));
  w.accept(4);
  EXPECT_TRUE(w.seen(4));
  w.accept(30);  // nextPN 31, lowest 23: the old PNs are late now
  EXPECT_TRUE(w.is_late(9));
  EXPECT_FALSE(w.seen(25));
  EXPECT_FALSE(w.seen(29));
  EXPECT_TRUE(w.seen(30));
}

TEST(ReplayWindowDuplicates, MatchesAModelOnRandomSequences) {
  std::mt19937_64 rng(11);
  for (std::uint32_t window : {1u, 2u, 7u, 64u, 65u, 200u}) {
    ReplayWindow w(false, 1, window);
    std::set<std::uint64_t> accepted;
    std::uint64_t next = 1;
    for (int i = 0; i < 5000; ++i) {
      const std::uint64_t base = next > window + 2 ? next - window - 2 : 1;
      const std::uint64_t pn = base + rng() % (window + 6);
      const bool model_late = pn < std::max<std::uint64_t>(1, next > window ? next - window : 1);
      const bool model_seen = accepted.count(pn) != 0;
      ASSERT_EQ(w.is_late(pn), model_late) << "window " << window << " pn " << pn;
      if (!model_late) {
        ASSERT_EQ(w.seen(pn), model_seen) << "window " << window << " pn " << pn;
      }
      if (!model_late && !model_seen) {
        w.accept(pn);
        accepted.insert(pn);
        next = std::max(next, pn + 1);
      }
    }
  }
}

TEST(ReplayWindowDuplicates, WindowsAboveTheBitmapRefuseWhatTheyCannotTrack) {
  ReplayWindow w(true, 1, 100000);
  w.accept(10000);
  EXPECT_FALSE(w.is_late(10000 - 5000));  // inside the 802.1AE bound
  EXPECT_TRUE(w.seen(10000 - 5000));      // but older than the bitmap: refused
  EXPECT_FALSE(w.seen(10001 - ReplayWindow::kMaxTracked));  // the oldest PN the bitmap covers
  EXPECT_TRUE(w.seen(10000 - ReplayWindow::kMaxTracked));
}

TEST(ReplayWindowDuplicates, ChangingTheWindowKeepsWhatWasSeen) {
  ReplayWindow w(false, 1, 16);
  w.accept(10);
  w.accept(12);
  w.set_window(200);
  EXPECT_TRUE(w.seen(10));
  EXPECT_TRUE(w.seen(12));
  EXPECT_FALSE(w.seen(11));
  w.set_window(4);
  EXPECT_TRUE(w.seen(12));
  EXPECT_TRUE(w.is_late(8));
}

}  // namespace
}  // namespace layersec::macsec
