#include "layersec/tsn/shaper_driver.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "layersec/net/thread_timing.h"

namespace layersec::tsn {

std::int64_t TaiClock::now_ns() const {
  timespec ts{};
  ::clock_gettime(CLOCK_TAI, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// ------------------------------------------------------------ LoopShaperTimer

LoopShaperTimer::LoopShaperTimer(net::EventLoop& loop, const Clock& clock, std::function<void()> on_fire)
    : loop_(loop), clock_(clock), on_fire_(std::move(on_fire)) {
  // The deadlines are frame start times: the default 50 us slack would make
  // nearly every start late. The kernel does not refuse 1 ns.
  (void)net::set_fine_timer_slack();
}

LoopShaperTimer::~LoopShaperTimer() { disarm(); }

void LoopShaperTimer::arm(std::int64_t at_ns) {
  if (id_ && armed_at_ == at_ns) return;  // already armed for this instant
  disarm();
  const std::int64_t now = clock_.now_ns();
  const std::int64_t in = std::max<std::int64_t>(at_ns - now, 0);
  armed_at_ = at_ns;
  id_ = loop_.add_timer(loop_.now() + Duration::nanoseconds(in), [this] {
    id_.reset();
    on_fire_();
  });
}

void LoopShaperTimer::disarm() {
  if (id_) loop_.cancel_timer(*id_);
  id_.reset();
}

// --------------------------------------------------------------- ShaperDriver

ShaperDriver::ShaperDriver(EgressPort port, const Clock& clock, ShaperTimer& timer, Sink sink, DriverOptions options)
    : port_(std::move(port)), clock_(clock), timer_(timer), sink_(std::move(sink)), options_(options) {}

std::size_t ShaperDriver::queued() const {
  std::size_t n = 0;
  for (int c = 0; c < port_.config().num_classes; ++c) n += port_.queued(c);
  return n;
}

EnqueueResult ShaperDriver::submit(ByteSpan frame, int traffic_class) {
  ++counters_.submitted;
  const std::int64_t now = clock_.now_ns();
  // The model first catches up to now, so the frame joins the queues as
  // they are at its arrival (never in a window that already passed).
  run_until(now);
  std::vector<std::uint8_t> buf;
  if (!pool_.empty()) {
    buf = std::move(pool_.back());
    pool_.pop_back();
  }
  buf.assign(frame.begin(), frame.end());
  const EnqueueResult r = port_.enqueue(std::move(buf), traffic_class, now);
  if (r != EnqueueResult::kQueued) ++counters_.refused;
  service();
  return r;
}

void ShaperDriver::service() {
  ++counters_.services;
  const std::int64_t now = clock_.now_ns();
  run_until(now);
  const std::int64_t next = port_.next_event(now);
  if (next == kNever) {
    timer_.disarm();
  } else {
    timer_.arm(next);
  }
}

void ShaperDriver::clock_stepped() {
  ++counters_.clock_steps;
  cursor_ = INT64_MIN;
  port_.clock_stepped();
  service();
}

std::int64_t ShaperDriver::set_schedule(const GateControlList& gcl) {
  const std::int64_t now = clock_.now_ns();
  run_until(now);
  const std::int64_t change = port_.set_schedule(gcl, now);
  service();
  return change;
}

void ShaperDriver::run_until(std::int64_t now) {
  std::int64_t t = cursor_ == INT64_MIN ? now : cursor_;
  if (t > now) return;  // the clock went backwards (a stepped clock): wait for it
  if (now - t > options_.max_catchup_ns) {
    if (queued() > 0) ++counters_.resyncs;
    t = now - options_.max_catchup_ns;
  }
  // Each round starts one frame (the port serialises: the next event is at
  // least this frame's end), so the loop ends; the bound is a safety net.
  for (std::size_t guard = 0; guard < 1'000'000; ++guard) {
    t = port_.next_event(t);
    if (t == kNever || t > now) break;
    auto tx = port_.dequeue(t);
    if (!tx) {
      ++t;  // the head frame was dropped (never_fits) or nothing may start: look again later
      continue;
    }
    const std::int64_t late = now - tx->start_ns;
    if (late > options_.late_tolerance_ns) ++counters_.late_starts;
    counters_.max_lateness_ns = std::max(counters_.max_lateness_ns, late);
    handing_start_ns_ = tx->start_ns;
    if (sink_(ByteSpan(tx->frame.data(), tx->frame.size()), tx->traffic_class)) {
      ++counters_.sent;
    } else {
      ++counters_.send_errors;
    }
    if (pool_.size() < 4096) pool_.push_back(std::move(tx->frame));
  }
  cursor_ = now;
  // Nothing may start now; asking the port once more at `now` counts the
  // head frames that wait for their gate (held) and drops heads a new
  // schedule made unsendable. It starts nothing (next_event said so), but a
  // frame it did start would still go to the sink.
  if (queued() > 0) {
    if (auto tx = port_.dequeue(now)) {
      handing_start_ns_ = tx->start_ns;
      if (sink_(ByteSpan(tx->frame.data(), tx->frame.size()), tx->traffic_class)) {
        ++counters_.sent;
      } else {
        ++counters_.send_errors;
      }
    }
  }
}

}  // namespace layersec::tsn
