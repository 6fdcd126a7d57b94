#include "layersec/someip/loop_alarm.h"

#include <utility>

namespace layersec::someip {

LoopAlarm::~LoopAlarm() {
  *alive_ = false;
  if (timer_) loop_.cancel_timer(*timer_);
}

void LoopAlarm::wake_at(TimePoint at, Callback cb) {
  if (timer_) {
    loop_.cancel_timer(*timer_);
    timer_.reset();
  }
  if (at == TimePoint::max()) return;
  std::weak_ptr<bool> alive = alive_;
  timer_ = loop_.add_timer(at, [this, alive, cb = std::move(cb)] {
    if (auto a = alive.lock(); !a || !*a) return;
    timer_.reset();
    if (cb) cb();
  });
}

}  // namespace layersec::someip
