// Receive-side PN state of one receive SA (IEEE 802.1AE-2018 10.6.2, 10.6.5,
// 10.7.8): the next expected PN, the lowest acceptable PN and, for the XPN
// Cipher Suites, recovery of the 64-bit PN from the 32 transmitted bits.
//
// 802.1AE replay protection is a sliding lower bound, not a bitmap:
//   lowest acceptable PN = max(initial lowest PN, nextPN - replayWindow)
// A frame whose PN is below it is "late" (discarded when replayProtect is
// enabled, counted InPktsDelayed otherwise). Frames at or above it are
// accepted in any order, so with replayWindow > 0 the standard accepts a
// frame replayed while its PN is still inside the window a second time.
// layersec is stricter (as IPsec's anti-replay window, RFC 4303 3.4.3): it
// also keeps a bitmap of the PNs accepted in the window, and seen() tells the
// SecY to discard a repeat (counted InPktsLate, like any replayed frame). The
// bitmap covers the last min(replayWindow, kMaxTracked) PNs below nextPN; a
// PN inside a larger window but older than that is treated as seen (refused:
// we cannot prove it is new). replayWindow = 0 enforces strict order. State
// advances only through accept(), which the SecY calls after the ICV has
// verified.
//
// XPN recovery (10.6.2, 802.1AEbw): the 32 most significant bits are those
// of the lowest acceptable PN, plus one if the most significant of its 32
// least significant bits is set and that bit of the received PN is clear.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace layersec::macsec {

class ReplayWindow {
 public:
  // `lowest_pn`: the lowest acceptable PN the SA is installed with (MKA's
  // "lowest acceptable PN"; 1 for a fresh SA; 0 is raised to 1 since PN 0 is
  // never used). `window`: replayWindow. `xpn`: 64-bit PN suite.
  ReplayWindow(bool xpn, std::uint64_t lowest_pn, std::uint32_t window);

  // The full PN of a frame carrying the 32-bit `pn_field`. For 32-bit PN
  // suites this is the field itself. For XPN, nullopt when the recovered PN
  // would exceed 2^64-1 (such a frame cannot be valid).
  [[nodiscard]] std::optional<std::uint64_t> recover(std::uint32_t pn_field) const;

  // PNs below nextPN whose acceptance the duplicate bitmap remembers, at most.
  static constexpr std::uint32_t kMaxTracked = 4096;

  // True if `pn` is below the lowest acceptable PN (or the SA has received
  // its last possible PN).
  [[nodiscard]] bool is_late(std::uint64_t pn) const;

  // True if a frame with `pn` was accepted already, or `pn` is below nextPN
  // by more than the bitmap covers (see above). False for pn >= nextPN.
  [[nodiscard]] bool seen(std::uint64_t pn) const;

  // Records a frame whose ICV verified: nextPN = max(nextPN, pn + 1) and the
  // lowest acceptable PN follows it at distance `window`.
  void accept(std::uint64_t pn);

  // Raises the lowest acceptable PN to `pn` (and nextPN with it) when `pn`
  // is higher; never lowers either. Used when key agreement reports the
  // lowest PN a peer will still accept (802.1AE-2018 10.7.14).
  void raise_lowest(std::uint64_t pn);

  // Changes replayWindow (takes effect for the next accepted frame and for
  // the bound immediately).
  void set_window(std::uint32_t window);

  [[nodiscard]] std::uint64_t next_pn() const { return next_pn_; }
  [[nodiscard]] std::uint64_t lowest_pn() const { return lowest_pn_; }
  [[nodiscard]] std::uint32_t window() const { return window_; }
  [[nodiscard]] bool xpn() const { return xpn_; }
  // True once the largest possible PN has been accepted: nothing later can be.
  [[nodiscard]] bool exhausted() const { return exhausted_; }

 private:
  void update_lowest();
  // Bitmap ring: bit (pn mod size) is set when pn in [nextPN - tracked, nextPN)
  // has been accepted. size = tracked rounded up to a power of two (>= 64).
  [[nodiscard]] bool bit(std::uint64_t pn) const;
  void set_bit(std::uint64_t pn, bool on);
  void advance_to(std::uint64_t next);  // nextPN moves up: forget bits of PNs it passes
  void resize_bitmap();                 // after the window changes
  [[nodiscard]] std::uint64_t tracked() const { return window_ < kMaxTracked ? window_ : kMaxTracked; }
  std::vector<std::uint64_t> bits_;
  bool xpn_;
  std::uint32_t window_;
  std::uint64_t next_pn_;
  std::uint64_t lowest_pn_;
  bool exhausted_ = false;
};

}  // namespace layersec::macsec
