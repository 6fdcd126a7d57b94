// What a gate control list gives each traffic class, computed exactly from
// the list (no simulation): its open windows per cycle, its share of the
// cycle, and the analytic worst-case latency of one frame of the class
// through a port running the list with the length-aware guard band
// (egress_port.h).
//
// latency_bound: a frame of `frame_bytes` arriving at the worst instant of
// the cycle waits until the next instant from which it can finish inside an
// open window (max_gate_wait), then is transmitted (transmission). If
// another class's gate can be open at the same time as this class's, one
// frame of that class may already be on the wire (transmission is not
// preempted): blocking adds the longest such frame. The bound holds for the
// first frame in its class's queue; queued frames of the same class, and
// higher-priority classes sharing the window (flagged by
// higher_priority_overlap), add to it and are the caller's to account for.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "layersec/tsn/egress_port.h"
#include "layersec/tsn/gate_control_list.h"

namespace layersec::tsn {

struct ClassWindows {
  int traffic_class = 0;
  std::size_t windows = 0;       // contiguous open windows per cycle (joined across the cycle boundary)
  std::int64_t open_ns = 0;      // open time per cycle
  std::int64_t max_window_ns = 0;
  std::int64_t min_window_ns = 0;
  double share = 0;              // open_ns / cycle
};

// Precondition: validate(gcl, ...) passed.
[[nodiscard]] std::vector<ClassWindows> class_windows(const GateControlList& gcl, int num_classes);

struct BoundInputs {
  std::size_t frame_bytes = 0;           // frame without FCS, as queued
  std::size_t expansion_bytes = 0;       // added after the shaper (MACsec)
  std::uint64_t link_bps = 1'000'000'000;
  std::size_t other_max_frame_bytes = 1518;  // longest frame of another class that may block
  std::int64_t processing_ns = 0;        // per-hop processing the caller measured or assumes
};

struct LatencyBound {
  bool feasible = false;  // false: the frame fits no window of the class
  std::int64_t max_gate_wait_ns = 0;
  std::int64_t transmission_ns = 0;
  std::int64_t blocking_ns = 0;
  std::int64_t processing_ns = 0;
  std::int64_t total_ns = 0;
  bool higher_priority_overlap = false;  // a higher class can be open at the same time
};

[[nodiscard]] LatencyBound latency_bound(const GateControlList& gcl, int traffic_class, const BoundInputs& in);

// What a port running `gcl` carries when it does exactly what the model says
// (no late wake-ups, no CPU limits): the yardstick a measured throughput is
// held against. A class's gate share is not it: with the guard band a
// window carries only whole frames (a 400 us window at 100 Mbit/s holds three
// 1,470-octet wire frames, 353 us, not 3.4), and headers, preamble and gap
// take their part. Each stream offers frames of `frame_bytes` (without FCS,
// as queued) to `traffic_class`, one every `period_ns` from `first_ns`, or,
// with period_ns = 0, a queue that never runs dry (a saturating sender).
struct OfferedStream {
  int traffic_class = 0;
  std::size_t frame_bytes = 0;
  std::int64_t period_ns = 0;  // 0: saturating
  std::int64_t first_ns = 0;
};
struct CarriedStream {
  std::uint64_t offered = 0;  // frames offered (saturating: frames started)
  std::uint64_t sent = 0;     // frames started within the run
  std::uint64_t dropped = 0;  // refused at enqueue (queue full, MaxSDU, never fits)
};
// Runs an EgressPort on `port` and `gcl` (base time as given, installed at 0)
// from 0 to `duration_ns` and counts, per stream (same order), the frames
// it started. Throws std::invalid_argument when the list does not validate
// for the port, or a stream has no frame or a bad class.
[[nodiscard]] std::vector<CarriedStream> carried_load(const PortConfig& port, const GateControlList& gcl,
                                                      std::span<const OfferedStream> streams,
                                                      std::int64_t duration_ns);

}  // namespace layersec::tsn
