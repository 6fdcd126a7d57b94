// The in-process simulated Ethernet segment.
//
// Simulator is a discrete-event scheduler: single-threaded, no wall clock.
// Time is a TimePoint that only the simulator advances, events at the same
// time run in the order they were scheduled, and every random choice comes
// from one seeded SimRng, so a run is a pure function of its inputs and seed.
//
// Segment is a learning switch (IEEE 802.1Q-2018 §8.7 learning, §8.8 filtering
// database, reduced to one VLAN-unaware table without aging) with one full
// duplex link per port. Each link direction has a FIFO transmit queue, a
// serialization delay from its bandwidth and a propagation latency. Frames
// flow:
//
//   endpoint --send_frame--> [uplink queue, serialization, latency] --> switch
//     switch: ingress taps, hooks (attacker), learn source MAC, forward:
//             known unicast -> one port; multicast/broadcast/unknown -> flood
//   switch --> [downlink queue, serialization, latency] --> FrameReceiver
//
// See docs/net.md for what is and is not modelled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"
#include "layersec/net/frame.h"
#include "layersec/net/recorder.h"

namespace layersec::net {

// xoshiro256** seeded through splitmix64: the same sequence on every platform
// and standard library (std:: distributions are not portable).
class SimRng {
 public:
  explicit SimRng(std::uint64_t seed = 1);
  std::uint64_t next_u64();
  // Uniform in [0, n); 0 when n == 0.
  std::uint64_t uniform(std::uint64_t n);
  // Uniform in [lo, hi].
  Duration uniform_duration(Duration lo, Duration hi);
  // True with probability p (clamped to [0, 1]).
  bool bernoulli(double p);

 private:
  std::uint64_t s_[4];
};

// Identifies a scheduled event for cancel().
struct EventId {
  TimePoint time;
  std::uint64_t seq = 0;
  constexpr auto operator<=>(const EventId&) const = default;
};

class Simulator {
 public:
  using Callback = std::function<void()>;

  explicit Simulator(std::uint64_t seed = 1, TimePoint start = {});
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  [[nodiscard]] TimePoint now() const { return now_; }
  SimRng& rng() { return rng_; }

  // Schedules `cb` at `t` (clamped to now: the past is not reachable). Events
  // at equal times run in scheduling order. Callbacks may schedule more.
  EventId schedule_at(TimePoint t, Callback cb);
  EventId schedule_in(Duration d, Callback cb) { return schedule_at(now_ + d, std::move(cb)); }
  // Removes a pending event; false if it already ran or was cancelled.
  bool cancel(EventId id);

  // Runs every event due at or before `t`, then sets now to `t` (never moves
  // time backwards). Returns the number of events run.
  std::size_t run_until(TimePoint t);
  std::size_t run_for(Duration d) { return run_until(now_ + d); }
  // Runs until no event is pending or `max_events` ran (a guard against
  // self-rescheduling loops). Returns the number run.
  std::size_t run_until_idle(std::size_t max_events = SIZE_MAX);
  // Runs the next event, if any. False when idle.
  bool step();
  [[nodiscard]] bool idle() const { return events_.empty(); }
  [[nodiscard]] std::optional<TimePoint> next_event_time() const;
  [[nodiscard]] std::size_t pending() const { return events_.size(); }

 private:
  TimePoint now_;
  std::uint64_t next_seq_ = 0;
  std::map<EventId, Callback> events_;
  SimRng rng_;
};

// A Clock that reads the simulator's time, for code written against Clock
// (an EventLoop-style driver, a bench harness) running inside a simulation.
class SimClock final : public Clock {
 public:
  explicit SimClock(const Simulator& sim) : sim_(sim) {}
  [[nodiscard]] TimePoint now() const override { return sim_.now(); }

 private:
  const Simulator& sim_;
};

using PortId = std::uint32_t;

// Receives frames delivered to a port (the endpoint side). The frame view is
// valid only during the call; the current time is the simulator's now().
class FrameReceiver {
 public:
  virtual ~FrameReceiver() = default;
  virtual void on_frame(ByteSpan frame) = 0;
};

// The transmit side of an endpoint's link. send_frame copies the frame; it
// returns false when the frame was not accepted (queue full, runt, oversize).
class FrameSender {
 public:
  virtual ~FrameSender() = default;
  virtual bool send_frame(ByteSpan frame) = 0;
};

// Sits between an endpoint and its port (an endpoint-side MACsec SecY, a
// tagger, a fault injector local to one node): frames the endpoint sends go
// through `outbound` before the port, frames the port delivers go through
// `inbound` before the endpoint. A transform returning false drops the frame.
// Wire it as: port = seg.add_port(link, &shim); shim.connect(&seg.sender(port),
// &host); host.connect(&shim).
class FrameShim final : public FrameSender, public FrameReceiver {
 public:
  using Transform = std::function<bool(std::vector<std::uint8_t>& frame)>;
  FrameShim(Transform outbound, Transform inbound) : outbound_(std::move(outbound)), inbound_(std::move(inbound)) {}
  // Neither is owned.
  void connect(FrameSender* lower, FrameReceiver* upper) {
    lower_ = lower;
    upper_ = upper;
  }
  bool send_frame(ByteSpan frame) override;
  void on_frame(ByteSpan frame) override;
  [[nodiscard]] std::uint64_t outbound_drops() const { return outbound_drops_; }
  [[nodiscard]] std::uint64_t inbound_drops() const { return inbound_drops_; }

 private:
  Transform outbound_;
  Transform inbound_;
  FrameSender* lower_ = nullptr;
  FrameReceiver* upper_ = nullptr;
  std::vector<std::uint8_t> buffer_;
  std::uint64_t outbound_drops_ = 0;
  std::uint64_t inbound_drops_ = 0;
};

// One full-duplex link between an endpoint and a switch port; both directions
// use the same settings.
struct LinkConfig {
  Duration latency = Duration::microseconds(1);     // propagation delay
  std::uint64_t bandwidth_bps = 1'000'000'000;       // 0 = no serialization delay
  std::size_t queue_frames = 256;                    // frames waiting or on the wire; tail drop beyond
};

struct SegmentConfig {
  Duration switching_delay = Duration::zero();  // store-and-forward decision time
  std::size_t mac_table_limit = 4096;           // new MACs beyond this are not learned
};

// Bytes a frame occupies on the wire: padded to 60, plus FCS (4), preamble and
// SFD (8) and the inter-frame gap (12).
std::size_t wire_bytes(std::size_t frame_size);

struct PortStats {
  std::uint64_t tx_frames = 0;       // accepted from the endpoint
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_queue_drops = 0;  // uplink queue full
  std::uint64_t tx_rejected = 0;     // runt (< 14 bytes) or oversize
  std::uint64_t rx_frames = 0;       // delivered to the endpoint
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_queue_drops = 0;  // downlink queue full
};

struct SwitchStats {
  std::uint64_t frames_in = 0;          // arrived at the switch from a port
  std::uint64_t forwarded_unicast = 0;  // sent to one learned port
  std::uint64_t flooded = 0;            // multicast, broadcast or unknown unicast
  std::uint64_t filtered = 0;           // destination learned on the ingress port
  std::uint64_t hook_drops = 0;
  std::uint64_t hook_duplicates = 0;
  std::uint64_t injected = 0;
  std::uint64_t port_processor_drops = 0;
};

// What a hook sees about a frame besides its bytes.
struct HookContext {
  TimePoint now;
  PortId ingress = 0;
  std::uint64_t frame_number = 0;  // 1-based count of frames that reached the hooks
};

// A hook's decision. Hooks run in the order added; a drop ends the chain,
// delays add up, duplicates add up (each copy is forwarded with the frame).
struct HookVerdict {
  bool drop = false;
  Duration delay = Duration::zero();
  unsigned duplicates = 0;
  static HookVerdict forward() { return {}; }
  static HookVerdict dropped() { return HookVerdict{true, Duration::zero(), 0}; }
  static HookVerdict delayed(Duration d) { return HookVerdict{false, d, 0}; }
  static HookVerdict duplicated(unsigned n) { return HookVerdict{false, Duration::zero(), n}; }
};

// What the switch offers an attacker besides the verdict.
class SwitchControl {
 public:
  virtual ~SwitchControl() = default;
  [[nodiscard]] virtual TimePoint now() const = 0;
  virtual SimRng& rng() = 0;
  // Puts `frame` into the switch as if it had arrived on `ingress` after
  // `delay`. Injected frames skip the hooks (so a hook can re-inject without
  // seeing its own frames) but are learned from, forwarded and tapped.
  virtual void inject(PortId ingress, ByteSpan frame, Duration delay = Duration::zero()) = 0;
};

// The attacker hook (observe, drop, delay, duplicate, reorder by delaying,
// modify in place, inject through the control). `frame` may be resized.
class SwitchHook {
 public:
  virtual ~SwitchHook() = default;
  virtual HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) = 0;
};

// Per-port processing inside the switch, the switch's end of a link: a
// switch-side MACsec SecY per link (hop-by-hop protection: frames are
// validated on ingress and protected again for each egress link), a port
// classifier, ... on_ingress runs when a frame has arrived from the link,
// after kIngress taps and before the hooks; on_egress runs for each copy
// about to be queued on the link. Returning false drops the frame (counted
// in SwitchStats::port_processor_drops).
class PortProcessor {
 public:
  virtual ~PortProcessor() = default;
  virtual bool on_ingress(PortId port, std::vector<std::uint8_t>& frame) = 0;
  virtual bool on_egress(PortId port, std::vector<std::uint8_t>& frame) = 0;
};

// Where a tap records: every frame as it arrives from a port's link (as on
// the wire: before port processing and hooks), or every frame the switch
// forwards (after port ingress processing and hooks, injected frames
// included, once per frame however many ports it goes to: what the switch
// itself sees).
enum class TapPoint : std::uint8_t { kIngress, kForwarded };

class Segment final : public SwitchControl {
 public:
  explicit Segment(Simulator& sim, SegmentConfig config = {});
  ~Segment() override;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Adds a port with its link. The receiver (may be null, set later) is not
  // owned and must outlive the segment or be cleared first.
  PortId add_port(LinkConfig link = {}, FrameReceiver* receiver = nullptr);
  void set_receiver(PortId port, FrameReceiver* receiver);
  // The endpoint's transmit side of `port` (owned by the segment).
  FrameSender& sender(PortId port);
  [[nodiscard]] std::size_t port_count() const { return ports_.size(); }

  // Hooks and taps are not owned; remove them before destroying them.
  void add_hook(SwitchHook* hook);
  void remove_hook(SwitchHook* hook);
  void add_tap(FrameRecorder* tap, TapPoint point = TapPoint::kForwarded);
  // Installs (or clears with nullptr) the switch-side processor of `port`;
  // not owned.
  void set_port_processor(PortId port, PortProcessor* processor);
  void remove_tap(FrameRecorder* tap);

  // The port a MAC was learned on.
  [[nodiscard]] std::optional<PortId> lookup(const MacAddress& mac) const;
  [[nodiscard]] const PortStats& port_stats(PortId port) const;
  [[nodiscard]] const SwitchStats& stats() const { return stats_; }
  [[nodiscard]] Simulator& simulator() { return sim_; }

  // SwitchControl.
  [[nodiscard]] TimePoint now() const override { return sim_.now(); }
  SimRng& rng() override { return sim_.rng(); }
  void inject(PortId ingress, ByteSpan frame, Duration delay = Duration::zero()) override;

 private:
  struct Direction {
    TimePoint busy_until;
    // Serialization end times of the frames waiting or on the wire, oldest
    // first; entries <= now have left the queue.
    std::deque<TimePoint> in_queue;
  };
  class Port;
  using Frame = std::vector<std::uint8_t>;

  bool endpoint_send(PortId port, ByteSpan frame);
  // Queues `frame` on one link direction; `arrive` runs when its last bit
  // reaches the far end. False when the queue is full.
  bool transmit(PortId port, Direction& dir, Frame frame, std::function<void(Frame)> arrive);
  void switch_ingress(PortId ingress, Frame frame);
  void switch_forward(PortId ingress, Frame frame);
  void deliver(PortId egress, const Frame& frame);
  void learn(const MacAddress& src, PortId port);

  Simulator& sim_;
  SegmentConfig config_;
  std::vector<Port*> ports_;
  std::vector<SwitchHook*> hooks_;
  std::vector<std::pair<FrameRecorder*, TapPoint>> taps_;
  std::map<MacAddress, PortId> mac_table_;
  SwitchStats stats_;
  std::uint64_t hook_frames_ = 0;
  // Scheduled events hold a weak_ptr to this and do nothing once it is false.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace layersec::net
