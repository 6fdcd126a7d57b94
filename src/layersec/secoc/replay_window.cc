#include "layersec/secoc/replay_window.h"

namespace layersec::secoc {

void ReplayWindow::reset(std::uint64_t highest) {
  bits_.fill(0);
  highest_ = highest;
  set_bit(highest, true);
}

ReplayWindow::Check ReplayWindow::check(std::uint64_t counter) const {
  if (counter > highest_) return Check::kNew;
  if (highest_ - counter >= window_) return Check::kTooOld;
  return bit(counter) ? Check::kDuplicate : Check::kNew;
}

void ReplayWindow::accept(std::uint64_t counter) {
  if (counter > highest_) {
    const std::uint64_t advance = counter - highest_;
    if (advance >= kCapacityBits) {
      bits_.fill(0);
    } else {
      for (std::uint64_t c = highest_ + 1; c <= counter; ++c) set_bit(c, false);
    }
    highest_ = counter;
  }
  set_bit(counter, true);
}

}  // namespace layersec::secoc
