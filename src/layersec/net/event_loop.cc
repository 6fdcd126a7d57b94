#include "layersec/net/event_loop.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace layersec::net {

EventLoop::EventLoop(const Clock& clock) : clock_(clock) {}

void EventLoop::watch(int fd, short events, FdCallback cb) {
  watches_[fd] = Watch{events, next_generation_++, std::move(cb)};
}

void EventLoop::unwatch(int fd) { watches_.erase(fd); }

EventLoop::TimerId EventLoop::add_timer(TimePoint at, TimerCallback cb) {
  TimerId id{at, next_seq_++};
  timers_.emplace(id, std::move(cb));
  return id;
}

bool EventLoop::cancel_timer(TimerId id) { return timers_.erase(id) != 0; }

std::size_t EventLoop::run_due_timers() {
  std::size_t n = 0;
  const TimePoint t = now();
  // Only timers due now; ones added by callbacks for "now" run next round.
  const std::uint64_t limit = next_seq_;
  for (auto it = timers_.begin(); it != timers_.end() && it->first.at <= t;) {
    if (it->first.seq >= limit) {
      ++it;
      continue;
    }
    TimerCallback cb = std::move(it->second);
    timers_.erase(it);
    cb();
    ++n;
    it = timers_.begin();
  }
  return n;
}

std::size_t EventLoop::run_once(TimePoint deadline) {
  TimePoint wake = deadline;
  if (!timers_.empty()) wake = std::min(wake, timers_.begin()->first.at);
  const Duration wait = wake - now();
  // ppoll with nanosecond resolution: a timer (a paced publisher's next
  // deadline) is woken for on time, not rounded to the next millisecond.
  timespec ts{0, 0};
  if (wait > Duration::zero()) {
    const std::int64_t ns = std::min<std::int64_t>(wait.ns(), 60'000'000'000LL);
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  }
  // Buffers reused between rounds (the steady state allocates nothing here);
  // moved out while in use so a nested run_once from a callback gets its own.
  std::vector<pollfd> fds = std::move(poll_fds_);
  std::vector<std::uint64_t> generations = std::move(poll_generations_);
  fds.clear();
  generations.clear();
  for (const auto& [fd, w] : watches_) {
    fds.push_back(pollfd{fd, w.events, 0});
    generations.push_back(w.generation);
  }
  std::size_t n = 0;
  const int rc = ::ppoll(fds.data(), fds.size(), &ts, nullptr);
  if (rc > 0) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = watches_.find(fds[i].fd);
      // Skip descriptors unwatched or re-registered by an earlier callback.
      if (it == watches_.end() || it->second.generation != generations[i]) continue;
      FdCallback cb = it->second.cb;  // the callback may unwatch itself
      cb(fds[i].revents);
      ++n;
    }
  }
  poll_fds_ = std::move(fds);
  poll_generations_ = std::move(generations);
  n += run_due_timers();
  return n;
}

bool EventLoop::run_until(TimePoint deadline) {
  stopped_ = false;
  while (!stopped_ && now() < deadline) run_once(deadline);
  return stopped_;
}

bool EventLoop::run_until(const std::function<bool()>& done, TimePoint deadline) {
  stopped_ = false;
  while (!done() && !stopped_ && now() < deadline) run_once(deadline);
  return done();
}

}  // namespace layersec::net
