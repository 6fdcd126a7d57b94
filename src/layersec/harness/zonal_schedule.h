// Gate lists and analytic bounds of the zonal network (zonal.h): pure
// arithmetic over tsn::GateControlList and tsn::latency_bound, no simulation.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/tsn/gate_control_list.h"

namespace layersec::harness {

// Two classes on every zonal port: BE (PCP 0-3) is class 0, ST (PCP 4-7,
// the control events use 6) is class 1 (802.1Q-2018 Table 8-5, two classes).
inline constexpr tsn::GateMask kBeGate = 0x01;
inline constexpr tsn::GateMask kStGate = 0x02;

// An exclusive ST window [start_ns, end_ns) within the cycle.
struct StWindow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// The gate list of one egress port: base time 0, `cycle_ns`, ST alone in
// each window, BE alone in between. Windows closer than one minimum frame
// at `link_bps` (tsn::min_frame_time_ns, the shortest interval validate()
// accepts) are merged, and so is a BE stretch that short at either end of
// the cycle, so the list always validates. No windows: one entry with both
// gates open (strict priority). Throws std::invalid_argument for a window
// outside [0, cycle_ns] or empty.
[[nodiscard]] tsn::GateControlList zonal_gate_list(std::vector<StWindow> windows, std::int64_t cycle_ns,
                                                   std::uint64_t link_bps);

// One egress port on an ST stream's path, for the bound.
struct PathPort {
  tsn::GateControlList gcl;         // what the port runs (strict priority: one all-open entry)
  std::uint64_t link_bps = 0;
  std::int64_t processing_ns = 0;   // before this port (a switch's store-and-forward delay; 0 at the ECU)
  std::int64_t propagation_ns = 0;  // the link after this port
  int same_class_ahead = 0;         // ST frames of other streams that may be queued in front
};

// Sum over the path of tsn::latency_bound(gcl, ST class, frame) plus the
// same-class frames ahead (their transmission) plus propagation. nullopt if
// the frame fits no ST window of some port. `frame_bytes` / `other_max_bytes`
// are the frame sizes as queued (without FCS; MACsec already applied).
[[nodiscard]] std::optional<std::int64_t> zonal_path_bound(const std::vector<PathPort>& path, std::size_t frame_bytes,
                                                           std::size_t other_max_bytes);

}  // namespace layersec::harness
