// The time-aware shaper on a real link: an EgressPort (egress_port.h) driven
// in real time. Frames come in with their traffic class; the driver runs the
// port's discrete-event model up to the clock's `now` and hands each frame to
// the sink once the model has started it, so frames leave when the gate
// schedule and the emulated port speed allow (a 1000 or 100 Mbit/s port is
// emulated by pacing every frame to its serialisation time: the next frame
// starts no earlier than the end of the previous one). Then it arms its timer
// for the port's next event.
//
// Time is the schedule's clock (tsn::Clock: CLOCK_TAI, or the gPTP-disciplined
// layersec clock of `macsec up --ptp`), the timer an interface (ShaperTimer; the
// production one runs on net::EventLoop), so tests drive the driver with a
// fake clock and fake timer and assert on counts and simulated times.
//
// Lateness: a frame is handed to the sink at the first service after its
// modelled start; how late that is (the timer's wake-up latency) is recorded
// (late_starts above `late_tolerance_ns`, max_lateness_ns). When the driver
// falls more than `max_catchup_ns` behind (the process was descheduled), the
// model skips ahead instead of replaying the gap as a burst and counts a
// resync. A clock that is stepped (a gPTP servo's phase step) must say so
// (clock_stepped): the model then restarts at the new time instead of waiting
// for a backward-stepped clock to catch up. Not thread-safe: one loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/net/event_loop.h"
#include "layersec/tsn/egress_port.h"

namespace layersec::tsn {

// The shaper's time base in nanoseconds (the timeline the gate control list's
// base time refers to).
class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual std::int64_t now_ns() const = 0;
};

// CLOCK_TAI (taprio's default clockid): every namespace and process of a
// machine shares it, so two links' schedules with the same base time align.
class TaiClock final : public Clock {
 public:
  [[nodiscard]] std::int64_t now_ns() const override;
};

// Wakes the driver at an instant of the shaper's clock. arm() replaces any
// earlier deadline; disarm() cancels it.
class ShaperTimer {
 public:
  virtual ~ShaperTimer() = default;
  virtual void arm(std::int64_t at_ns) = 0;
  virtual void disarm() = 0;
};

// A ShaperTimer on a net::EventLoop: the deadline on `clock` is converted to
// the loop's clock at arming time (both run at the same rate; only their
// origins differ). Calls `on_fire` from the loop. Neither is owned. Build it
// on the thread that runs `loop`: it sets that thread's timer slack to 1 ns
// (net::set_fine_timer_slack), so every real-link shaper (`macsec up --tsn`,
// `layersec node` with tsn, `bench tsn`) wakes when its frame may start.
class LoopShaperTimer final : public ShaperTimer {
 public:
  LoopShaperTimer(net::EventLoop& loop, const Clock& clock, std::function<void()> on_fire);
  ~LoopShaperTimer() override;
  LoopShaperTimer(const LoopShaperTimer&) = delete;
  LoopShaperTimer& operator=(const LoopShaperTimer&) = delete;
  void arm(std::int64_t at_ns) override;
  void disarm() override;

 private:
  net::EventLoop& loop_;
  const Clock& clock_;
  std::function<void()> on_fire_;
  std::optional<net::EventLoop::TimerId> id_;
  std::int64_t armed_at_ = 0;
};

struct DriverOptions {
  std::int64_t late_tolerance_ns = 50'000;   // a start later than this counts as late
  std::int64_t max_catchup_ns = 2'000'000;   // beyond this behind, skip ahead (resync)
};

struct DriverCounters {
  std::uint64_t submitted = 0;        // frames offered
  std::uint64_t refused = 0;          // refused by the port at enqueue (per reason in the class counters)
  std::uint64_t sent = 0;             // handed to the sink, which took them
  std::uint64_t send_errors = 0;      // the sink refused the frame
  std::uint64_t late_starts = 0;      // handed over more than late_tolerance_ns after the modelled start
  std::int64_t max_lateness_ns = 0;   // worst hand-over lateness
  std::uint64_t resyncs = 0;          // the model skipped ahead (driver more than max_catchup_ns behind)
  std::uint64_t services = 0;         // timer or submit services run
  std::uint64_t clock_steps = 0;      // clock_stepped() calls
};

class ShaperDriver {
 public:
  // Returns false when the frame could not be sent (counted send_errors).
  using Sink = std::function<bool(ByteSpan frame, int traffic_class)>;

  // `clock` and `timer` are not owned and must outlive the driver.
  ShaperDriver(EgressPort port, const Clock& clock, ShaperTimer& timer, Sink sink, DriverOptions options = {});

  // Queues a copy of `frame` (buffers are recycled: no allocation once warm)
  // in `traffic_class`, then services the port. A refusal (queue full, MaxSDU,
  // never fits, bad class) is counted per class by the port and returned.
  EnqueueResult submit(ByteSpan frame, int traffic_class);
  // Services the port at the clock's now: everything the model started by
  // now goes to the sink; the timer is armed for the next event.
  void service();

  // The clock was stepped (either way): the model restarts at the clock's
  // now (queued frames stay queued; the frame on the wire is taken as
  // finished) and the port is serviced.
  void clock_stepped();

  [[nodiscard]] const EgressPort& port() const { return port_; }
  // Installs a new gate control list (EgressPort::set_schedule: validated,
  // pending until its change time; throws std::invalid_argument naming the
  // entry and keeps the running schedule).
  std::int64_t set_schedule(const GateControlList& gcl);
  [[nodiscard]] const DriverCounters& counters() const { return counters_; }
  // Inside the sink: the model's start time of the frame being handed over
  // (how late the hand-over is, for a link that times its frames).
  [[nodiscard]] std::int64_t handing_start_ns() const { return handing_start_ns_; }
  [[nodiscard]] std::size_t queued() const;

 private:
  void run_until(std::int64_t now);

  EgressPort port_;
  const Clock& clock_;
  ShaperTimer& timer_;
  Sink sink_;
  DriverOptions options_;
  DriverCounters counters_;
  std::int64_t handing_start_ns_ = 0;
  std::int64_t cursor_ = INT64_MIN;  // the model has run up to here
  std::vector<std::vector<std::uint8_t>> pool_;
};

}  // namespace layersec::tsn
