#include "layersec/macsec/replay_window.h"

#include <algorithm>

namespace layersec::macsec {

ReplayWindow::ReplayWindow(bool xpn, std::uint64_t lowest_pn, std::uint32_t window)
    : xpn_(xpn), window_(window), next_pn_(std::max<std::uint64_t>(lowest_pn, 1)),
      lowest_pn_(std::max<std::uint64_t>(lowest_pn, 1)) {
  if (!xpn_ && lowest_pn_ > 0xFFFFFFFFULL) exhausted_ = true;
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
  if (pn + 1 > next_pn_) next_pn_ = pn + 1;
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
  if (next_pn_ < pn) next_pn_ = pn;
}

void ReplayWindow::set_window(std::uint32_t window) {
  window_ = window;
  update_lowest();
}

void ReplayWindow::update_lowest() {
  if (next_pn_ > window_) lowest_pn_ = std::max(lowest_pn_, next_pn_ - window_);
}

}  // namespace layersec::macsec
