#include "layersec/macsec/replay_window.h"

#include <algorithm>

namespace layersec::macsec {

ReplayWindow::ReplayWindow(bool xpn, std::uint64_t lowest_pn, std::uint32_t window)
    : xpn_(xpn), window_(window), next_pn_(std::max<std::uint64_t>(lowest_pn, 1)),
      lowest_pn_(std::max<std::uint64_t>(lowest_pn, 1)) {
  if (!xpn_ && lowest_pn_ > 0xFFFFFFFFULL) exhausted_ = true;
  resize_bitmap();
}

bool ReplayWindow::bit(std::uint64_t pn) const {
  const std::uint64_t size = bits_.size() * 64;
  const std::uint64_t i = pn & (size - 1);
  return (bits_[i / 64] >> (i % 64)) & 1U;
}

void ReplayWindow::set_bit(std::uint64_t pn, bool on) {
  const std::uint64_t size = bits_.size() * 64;
  const std::uint64_t i = pn & (size - 1);
  const std::uint64_t mask = std::uint64_t{1} << (i % 64);
  if (on) {
    bits_[i / 64] |= mask;
  } else {
    bits_[i / 64] &= ~mask;
  }
}

void ReplayWindow::advance_to(std::uint64_t next) {
  if (next <= next_pn_) return;
  const std::uint64_t size = bits_.size() * 64;
  if (next - next_pn_ >= size) {
    std::fill(bits_.begin(), bits_.end(), 0);
  } else {
    for (std::uint64_t p = next_pn_; p < next; ++p) set_bit(p, false);
  }
  next_pn_ = next;
}

void ReplayWindow::resize_bitmap() {
  std::uint64_t size = 64;
  while (size < tracked()) size *= 2;
  if (bits_.size() * 64 == size) return;
  // Keep what both bitmaps cover: the accepted PNs just below nextPN.
  const std::uint64_t old_size = bits_.size() * 64;
  std::vector<std::uint64_t> old = std::move(bits_);
  bits_.assign(size / 64, 0);
  const std::uint64_t keep = std::min(old_size, size);
  for (std::uint64_t d = 1; d <= keep && d <= next_pn_; ++d) {
    const std::uint64_t p = next_pn_ - d;
    const std::uint64_t i = p & (old_size - 1);
    if ((old[i / 64] >> (i % 64)) & 1U) set_bit(p, true);
  }
}

bool ReplayWindow::seen(std::uint64_t pn) const {
  if (pn >= next_pn_) return false;
  if (next_pn_ - pn > tracked()) return true;  // older than the bitmap: cannot prove it is new
  return bit(pn);
}

std::optional<std::uint64_t> ReplayWindow::recover(std::uint32_t pn_field) const {
  if (!xpn_) return pn_field;
  std::uint64_t upper = lowest_pn_ >> 32;
  const bool lowest_msb = (lowest_pn_ & 0x80000000ULL) != 0;
  const bool field_msb = (pn_field & 0x80000000U) != 0;
  if (lowest_msb && !field_msb) {
    if (upper == 0xFFFFFFFFULL) return std::nullopt;
    ++upper;
  }
  return (upper << 32) | pn_field;
}

bool ReplayWindow::is_late(std::uint64_t pn) const { return exhausted_ || pn < lowest_pn_; }

void ReplayWindow::accept(std::uint64_t pn) {
  if (exhausted_) return;
  const std::uint64_t last = xpn_ ? UINT64_MAX : 0xFFFFFFFFULL;
  if (pn >= last) {
    // The last PN of the SA: nothing can follow it (10.5.2 / 10.6.5).
    exhausted_ = true;
    next_pn_ = last;
    lowest_pn_ = last;
    return;
  }
  advance_to(pn + 1);
  set_bit(pn, true);
  update_lowest();
}

void ReplayWindow::raise_lowest(std::uint64_t pn) {
  if (exhausted_ || pn <= lowest_pn_) return;
  const std::uint64_t last = xpn_ ? UINT64_MAX : 0xFFFFFFFFULL;
  if (pn > last) {
    exhausted_ = true;
    next_pn_ = last;
    lowest_pn_ = last;
    return;
  }
  lowest_pn_ = pn;
  advance_to(pn);
}

void ReplayWindow::set_window(std::uint32_t window) {
  window_ = window;
  resize_bitmap();
  update_lowest();
}

void ReplayWindow::update_lowest() {
  if (next_pn_ > window_) lowest_pn_ = std::max(lowest_pn_, next_pn_ - window_);
}

}  // namespace layersec::macsec
