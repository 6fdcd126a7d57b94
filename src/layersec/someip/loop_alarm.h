// LoopAlarm: a runtime's Clock and Alarm on a net::EventLoop: the loop's
// clock, and one loop timer that wake_at() replaces. SocketTransport and
// RawTransport use it for their clock and alarm parts; a runtime on a loop
// with some other PacketWriter can use it directly (RuntimeIo). Callbacks run
// on the loop's thread; none runs after destruction.
#pragma once

#include <memory>
#include <optional>

#include "layersec/net/event_loop.h"
#include "layersec/someip/transport.h"

namespace layersec::someip {

class LoopAlarm final : public Clock, public Alarm {
 public:
  // `loop` is not owned and must outlive the alarm.
  explicit LoopAlarm(net::EventLoop& loop) : loop_(loop) {}
  ~LoopAlarm() override;
  LoopAlarm(const LoopAlarm&) = delete;
  LoopAlarm& operator=(const LoopAlarm&) = delete;

  [[nodiscard]] TimePoint now() const override { return loop_.now(); }
  void wake_at(TimePoint at, Callback cb) override;

 private:
  net::EventLoop& loop_;
  std::optional<net::EventLoop::TimerId> timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace layersec::someip
