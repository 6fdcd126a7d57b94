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
//
// CPU attribution (optional, off by default; docs/harness.md, "Timing
// models"). The simulator runs every node's work on one host thread, so the
// real time a measurement sees is the sum of every node's work, as if the
// whole network shared one CPU. With attribution on, every piece of work has
// an owner (the CPU it would run on in a vehicle: one per node, one per switch
// port engine) and the simulator keeps a second, *model* time line:
//
//   - an event carries its owner and a ready time: the model time at which the
//     work that scheduled it had reached the schedule call;
//   - step() reads the injected real clock around the callback; the work
//     starts, in model time, at max(ready, the owner's busy_until, the window
//     floor), ends duration later, and the owner is busy until then;
//   - a CpuScope hands part of the running work to another owner (the switch's
//     egress port engine, or the publisher's notify() call made outside
//     step()): the scope's real time is charged to that owner from the model
//     time the enclosing work had reached, and the enclosing work does not
//     wait for it;
//   - begin_model_window() makes every CPU idle from the returned model time
//     (the pacing gap between closed-loop iterations).
//
// So independent work on different owners overlaps and work on one owner
// serialises: the model time of a result is the length of its causal
// critical path in measured real time. Simulated link and switching
// delays never enter model time (it measures the code path only, as the
// serial real-time figure does). Event order, and everything the protocol
// code sees, stays exactly as without attribution.
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
#include "layersec/tsn/egress_port.h"
#include "layersec/tsn/time_base.h"
#include "layersec/tsn/traffic_class.h"

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

// The CPU a piece of simulated work is attributed to (see "CPU attribution"
// above). Valid owners are kUnowned and the values Simulator::new_owner()
// returned.
using OwnerId = std::uint32_t;
// Work no node claimed (set-up code, timers armed outside any work).
inline constexpr OwnerId kUnowned = 0;
// As an argument to schedule_at / schedule_in / CpuScope: the owner of the
// work running now (kUnowned outside any work).
inline constexpr OwnerId kInheritOwner = 0xFFFFFFFFu;

class Simulator {
 public:
  using Callback = std::function<void()>;

  explicit Simulator(std::uint64_t seed = 1, TimePoint start = {});
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  [[nodiscard]] TimePoint now() const { return now_; }
  SimRng& rng() { return rng_; }

  // Schedules `cb` at `t` (clamped to now: the past is not reachable). Events
  // at equal times run in scheduling order. Callbacks may schedule more. The
  // event's work is attributed to `owner` (default: the running work's).
  EventId schedule_at(TimePoint t, Callback cb, OwnerId owner = kInheritOwner);
  EventId schedule_in(Duration d, Callback cb, OwnerId owner = kInheritOwner) {
    return schedule_at(now_ + d, std::move(cb), owner);
  }
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

  // --- CPU attribution -------------------------------------------------------

  // A fresh owner id (1, 2, ...). Cheap; ids are never reused.
  [[nodiscard]] OwnerId new_owner() { return next_owner_++; }
  // The owner of the work running now (an event's or a CpuScope's);
  // kUnowned outside any work. Tracked whether or not attribution is on.
  [[nodiscard]] OwnerId current_owner() const { return work_.empty() ? kUnowned : work_.back().owner; }

  // Turns attribution on, reading real time from `real_clock` (not owned; it
  // must outlive the simulator or the next disable). Owners' busy times and
  // the model clock start at 0. Turn it on before scheduling the work to be
  // measured: events scheduled while it was off are ready at model time 0.
  void enable_cpu_attribution(const Clock& real_clock);
  void disable_cpu_attribution() { cpu_clock_ = nullptr; }
  [[nodiscard]] bool cpu_attribution() const { return cpu_clock_ != nullptr; }

  // Model time (ns) the running work has reached: its model start plus the
  // real time it has run so far. Outside any work: the latest model end of
  // any work so far. 0 when attribution is off.
  [[nodiscard]] std::int64_t model_now_ns() const;
  // The same for a real-clock reading `real_ns` taken by the running work
  // (one clock read can then serve a real and a model time stamp). Outside
  // any work, or with attribution off, as model_now_ns().
  [[nodiscard]] std::int64_t model_time_at(std::int64_t real_ns) const;
  // Starts a measurement window: every owner is idle from the returned model
  // time on, and no work (pending events included) starts before it. Call it
  // outside any work. Returns 0 when attribution is off.
  std::int64_t begin_model_window();
  // Model time until which `owner` is busy, and the total real time charged
  // to it since attribution was enabled, ns.
  [[nodiscard]] std::int64_t owner_busy_until_ns(OwnerId owner) const;
  [[nodiscard]] std::int64_t owner_busy_ns(OwnerId owner) const;

  // Charges the work done while it is alive to `owner`'s CPU: inside running
  // work, from the model time that work has reached (the enclosing work goes
  // on without waiting: a hand-off, e.g. to a switch egress engine); outside
  // any work, from the latest model end (e.g. the start of a window).
  // Events scheduled meanwhile inherit `owner`. A scope on the owner already
  // running changes nothing. Scopes nest (destroy them in reverse order); an
  // owner should not be entered again below its own work on the stack.
  //
  // `ready_ns`, when given, is the model time the handed-off work became
  // ready, if earlier than where the enclosing work is now (used for a
  // fan-out that hardware does at once, such as a switch replicating a
  // frame to its egress ports: the loop that simulates it one port after the
  // other is not switch work); it is never placed later than now.
  class CpuScope {
   public:
    CpuScope(Simulator& sim, OwnerId owner, std::optional<std::int64_t> ready_ns = std::nullopt);
    ~CpuScope();
    CpuScope(const CpuScope&) = delete;
    CpuScope& operator=(const CpuScope&) = delete;

   private:
    Simulator& sim_;
    bool entered_ = false;
  };

 private:
  struct Event {
    Callback cb;
    OwnerId owner = kUnowned;
    std::int64_t ready_ns = 0;  // model time the scheduling work had reached
  };
  // One piece of work being run (an event's callback, or a CpuScope).
  struct Work {
    OwnerId owner = kUnowned;
    std::int64_t model_start = 0;
    std::int64_t real_start = 0;
    std::int64_t excluded = 0;  // real time handed to nested scopes
  };
  class WorkGuard;

  [[nodiscard]] std::int64_t& busy_slot(OwnerId owner);
  void enter_work(OwnerId owner, std::int64_t ready_ns, std::int64_t real_now);
  void exit_work();

  TimePoint now_;
  std::uint64_t next_seq_ = 0;
  std::map<EventId, Event> events_;
  SimRng rng_;
  OwnerId next_owner_ = 1;
  const Clock* cpu_clock_ = nullptr;
  std::vector<std::int64_t> busy_until_;  // by owner, model ns
  std::vector<std::int64_t> busy_total_;  // by owner, real ns charged
  std::vector<Work> work_;                // innermost last
  std::int64_t model_floor_ = 0;
  std::int64_t model_high_ = 0;           // latest model end of any work
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

// 802.1Qbv shaping of one direction of a link (tsn::EgressPort): which
// direction, and how frames are classified. A shaped direction replaces the
// link's FIFO: frames wait in the port's per-class queues and start when the
// shaper lets them (gate open, and they finish before it closes), serialised
// at the link's bandwidth. The shaper sees frames as they go on the wire:
// already MACsec-protected where a SecY sits above the port, so
// PortConfig::expansion_bytes stays 0 there; a frame's class comes from its
// outer 802.1Q/802.1ad tag's PCP when the tag is readable (clear tag), else
// from `default_pcp` (a MACsec frame with the tag inside the ciphertext is
// classified by the port's default, which is the point of the clear-tag
// layout). Times are simulated nanoseconds, unless the direction has a
// time_base: then the port (its gates, guard band, serialisation, config
// changes) runs on that local clock, which the simulator converts to and from
// its own (true) time at every look: a node's drifting or gPTP-disciplined
// clock (tsn/time_base.h). Without one the port runs on simulated time, as
// before.
enum class LinkSide : std::uint8_t {
  kUplink,    // endpoint -> switch: the host NIC's egress
  kDownlink,  // switch -> endpoint: the switch port's egress
};

struct ShaperConfig {
  tsn::PortConfig port;      // link_bps is replaced by the link's bandwidth
  tsn::GateSchedule schedule;
  std::optional<tsn::TrafficClassMap> classes;  // nullopt: 802.1Q Table 8-5 for port.num_classes
  std::uint8_t default_pcp = 0;
  std::shared_ptr<const tsn::TimeBase> time_base;  // nullptr: the port runs on simulated time
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
  // owned and must outlive the segment or be cleared first. The port gets two
  // fresh CPU owners (Simulator::new_owner): its endpoint's, which frame
  // deliveries to the endpoint run on, and the switch's engine for this port,
  // which the switch's work on frames arriving from this link (ingress
  // processing, hooks, learning, forwarding) and the egress processing and
  // queuing of frames leaving on it run on. A switch does its per-port
  // processing (MACsec SecY included) in per-port hardware, so the ports'
  // engines are separate CPUs in the model; the link queues are the shared
  // resource, simulated in simulated time.
  PortId add_port(LinkConfig link = {}, FrameReceiver* receiver = nullptr);
  void set_receiver(PortId port, FrameReceiver* receiver);
  // The CPU owners of `port` (see add_port). Setting the endpoint owner lets
  // a node with several ports, or an owner made elsewhere, share one CPU.
  [[nodiscard]] OwnerId endpoint_owner(PortId port) const;
  [[nodiscard]] OwnerId switch_owner(PortId port) const;
  void set_endpoint_owner(PortId port, OwnerId owner);
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
  // Shapes one direction of a port's link (see ShaperConfig); the link must
  // have a bandwidth. Replaces an earlier shaper; frames already queued in
  // the FIFO keep their times.
  void set_shaper(PortId port, LinkSide side, ShaperConfig config);
  // The shaper of that direction (counters, gates), or nullptr.
  [[nodiscard]] const tsn::EgressPort* shaper(PortId port, LinkSide side) const;
  // Installs a new gate control list on a shaped direction (pending until
  // its change time, a cycle boundary of the port's clock); returns the
  // (simulated) time at which the change takes effect, or nullopt if unshaped.
  // Throws std::invalid_argument for a list the port refuses (validate()).
  std::optional<TimePoint> set_schedule(PortId port, LinkSide side, const tsn::GateControlList& gcl);

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
  struct Shaper;
  struct Direction {
    TimePoint busy_until;
    // Serialization end times of the frames waiting or on the wire, oldest
    // first; entries <= now have left the queue.
    std::deque<TimePoint> in_queue;
    std::shared_ptr<Shaper> shaper;  // set_shaper; frames then go through it
  };
  class Port;
  using Frame = std::vector<std::uint8_t>;

  bool endpoint_send(PortId port, ByteSpan frame);
  // Queues `frame` on one link direction; `arrive` runs, as work of
  // `arrive_owner`, when its last bit reaches the far end. False when the
  // queue is full.
  bool transmit(PortId port, Direction& dir, Frame frame, std::function<void(Frame)> arrive, OwnerId arrive_owner);
  bool transmit_shaped(PortId port, Direction& dir, Frame frame, std::function<void(Frame)> arrive,
                       OwnerId arrive_owner);
  // Starts what the shaper lets start now and schedules the next look.
  void pump(PortId port, Direction& dir);
  Direction& direction(PortId port, LinkSide side);
  void switch_ingress(PortId ingress, Frame frame);
  void switch_forward(PortId ingress, Frame frame);
  // Runs on the egress port's engine, ready at `ready_ns` (model time).
  void deliver(PortId egress, const Frame& frame, std::int64_t ready_ns);
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
