// The traffic driver of one netns scenario node (netns_node.h): on a built and
// started someip::Runtime it schedules the events, sends them, answers them
// and counts what the report needs. It knows nothing of interfaces, keys or
// how the runtime was built.
//
// Payload: u32 sequence, u64 CLOCK_MONOTONIC time in ns (event: send time;
// answer: the subscriber's receive time), u8 flags (probe, warm-up,
// measured, rate), then padding to payload_bytes.
//
// Publisher, an explicit phase machine (Phase in netns_traffic.cc):
//   waiting for the group -> probing -> warm-up -> measuring -> done, or
//   waiting for the group -> probing -> rate -> done.
// It waits for every subscription (and, via the hooks, every member keyed),
// kGroupSettle more, then sends probe iterations until one completes within
// `timeout`, all within ready_timeout. Closed loop: one event per iteration,
// every subscriber answers; the iteration ends on the last answer (RTT/2 and
// one way to the last subscriber) or its timeout. Rate: events at absolute
// deadlines t0 + k / rate_hz for rate_duration.
// Subscriber: answers closed-loop events with its receive time; records the
// one-way latency of measured and rate events and the rate phase's gaps.
//
// Measured-phase costs (cpu_ns, wall_ns, secoc_*): publisher from the first
// measured (or rate-phase) event to the end of its phase; subscriber from the
// last event it handled before the measured events to the last measured
// event it handled. cpu_ns is process CPU time (CLOCK_PROCESS_CPUTIME_ID).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"
#include "layersec/harness/netns_node_spec.h"

namespace layersec::net {
class EventLoop;
}  // namespace layersec::net
namespace layersec::someip {
class Runtime;
}  // namespace layersec::someip

namespace layersec::harness {

// What the driver asks of the node's key management (rsa-mode-b). Every hook
// is optional.
struct NetnsTrafficHooks {
  // Publisher: true once every member holds the current group key; unset:
  // always true. Asked only once every subscriber is subscribed.
  std::function<bool()> group_keyed;
  // Publisher: the keying part of the not-ready message (", K of N keyed (M
  // members)"); unset: nothing.
  std::function<std::string()> keying_status;
  // Subscriber: called before every loop turn (starts or restarts a key client).
  std::function<void()> before_turn;
};

// Drives the traffic of one node. Single-threaded, on `loop`; the runtime,
// loop, stop flag and report are not owned and must outlive the driver.
class NetnsTraffic {
 public:
  NetnsTraffic(const NetnsNodeSpec& spec, someip::Runtime& runtime, net::EventLoop& loop,
               const std::atomic<bool>& stop, NetnsNodeReport& report, NetnsTrafficHooks hooks = {});
  NetnsTraffic(const NetnsTraffic&) = delete;
  NetnsTraffic& operator=(const NetnsTraffic&) = delete;

  // Sets the runtime's handlers (rejections; the publisher's answer methods
  // or the subscriber's event). Before Runtime::start. Throws
  // std::runtime_error when the runtime refuses a handler.
  void install_handlers();

  // Publisher: readiness, then the closed loop or the rate phase, into the
  // report; `started_ns` (CLOCK_MONOTONIC) is the runtime's start, for
  // ready_ns. Throws std::runtime_error when not ready within ready_timeout
  // or stopped before the phase ended.
  void run_publisher(std::int64_t started_ns);
  // Subscriber: answers and records until `stop`, then the costs and losses
  // into the report.
  void run_subscriber();

  // Notifications and answers the runtime refused.
  [[nodiscard]] std::uint64_t notify_failures() const { return notify_failures_; }
  // SecOC rejections by reason ("reason" or "reason/sd") -> count.
  [[nodiscard]] const nlohmann::json& rejection_reasons() const { return rejection_reasons_; }

  // What the measured-phase figures are differences of.
  struct CostSnapshot {
    std::int64_t cpu_ns = 0;
    std::int64_t wall_ns = 0;
    std::uint64_t protect_ns = 0;
    std::uint64_t verify_ns = 0;
    std::uint64_t protected_ = 0;
    std::uint64_t verified = 0;
  };

 private:
  enum class Phase : std::uint8_t;

  void turn(TimePoint deadline);
  [[nodiscard]] bool stopping() const { return stop_.load(std::memory_order_relaxed); }
  [[nodiscard]] CostSnapshot snapshot() const;
  [[nodiscard]] bool group_ready();
  bool send_iteration(std::uint8_t flags);
  void on_answer(int i, ByteSpan payload);
  [[nodiscard]] std::string not_ready_reason() const;
  void start_rate_phase();
  [[nodiscard]] TimePoint rate_deadline(std::uint64_t k) const;
  void schedule_rate();
  void on_event(ByteSpan payload);

  const NetnsNodeSpec& spec_;
  someip::Runtime& runtime_;
  net::EventLoop& loop_;
  const std::atomic<bool>& stop_;
  NetnsNodeReport& report_;
  NetnsTrafficHooks hooks_;

  nlohmann::json rejection_reasons_ = nlohmann::json::object();
  std::uint64_t notify_failures_ = 0;
  std::vector<std::uint8_t> payload_;
  std::vector<std::uint8_t> answer_;

  // Publisher loop state.
  std::uint32_t sequence_ = 0;
  std::vector<bool> answered_;
  int answers_ = 0;
  bool in_flight_ = false;
  bool iteration_complete_ = false;
  std::int64_t t_send_ = 0;
  std::int64_t t_done_ = 0;
  std::int64_t last_one_way_ = 0;
  TimePoint iteration_deadline_;
  TimePoint rate_t0_;
  std::uint64_t rate_index_ = 0;
  bool rate_done_ = false;
  CostSnapshot rate_cost_start_;

  // Subscriber state.
  std::int64_t max_rate_sequence_ = -1;
  bool measured_seen_ = false;
  CostSnapshot cost_base_, cost_start_, cost_end_;
};

}  // namespace layersec::harness
