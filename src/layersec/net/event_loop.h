// EventLoop: a single-threaded poll() loop with timers, for nodes running on
// real sockets. Time comes from an injected Clock (MonotonicClock in
// production), so the same timer deadlines the protocol cores compute are
// honoured here. Callbacks may add or remove descriptors and timers,
// including their own.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <poll.h>

#include "layersec/base/time.h"

namespace layersec::net {

class EventLoop {
 public:
  using FdCallback = std::function<void(short revents)>;
  using TimerCallback = std::function<void()>;
  struct TimerId {
    TimePoint at;
    std::uint64_t seq = 0;
    constexpr auto operator<=>(const TimerId&) const = default;
  };

  // `clock` is not owned and must outlive the loop.
  explicit EventLoop(const Clock& clock);

  [[nodiscard]] TimePoint now() const { return clock_.now(); }

  // Calls `cb` with the returned events whenever poll() reports `events`
  // (POLLIN, POLLOUT, ...) on `fd`. Replaces an existing watch on `fd`.
  void watch(int fd, short events, FdCallback cb);
  void unwatch(int fd);

  TimerId add_timer(TimePoint at, TimerCallback cb);
  TimerId add_timer_in(Duration d, TimerCallback cb) { return add_timer(now() + d, std::move(cb)); }
  // False when the timer already ran or was cancelled.
  bool cancel_timer(TimerId id);

  // Waits until a descriptor is ready, the next timer is due or `deadline`,
  // whichever comes first, then runs ready callbacks and due timers.
  // Returns the number of callbacks run.
  std::size_t run_once(TimePoint deadline);
  // Runs until stop() is called or `deadline` passes. True when stopped.
  bool run_until(TimePoint deadline);
  // Runs until `done()` holds (checked after every callback round), stop()
  // or `deadline`. Returns done().
  bool run_until(const std::function<bool()>& done, TimePoint deadline);
  void stop() { stopped_ = true; }

 private:
  struct Watch {
    short events = 0;
    std::uint64_t generation = 0;
    FdCallback cb;
  };
  std::size_t run_due_timers();

  const Clock& clock_;
  std::map<int, Watch> watches_;
  std::map<TimerId, TimerCallback> timers_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_generation_ = 0;
  bool stopped_ = false;
  std::vector<struct pollfd> poll_fds_;
  std::vector<std::uint64_t> poll_generations_;
};

}  // namespace layersec::net
