#include "layersec/harness/zonal_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "layersec/tsn/gate_analysis.h"

namespace layersec::harness {

tsn::GateControlList zonal_gate_list(std::vector<StWindow> windows, std::int64_t cycle_ns, std::uint64_t link_bps) {
  if (cycle_ns <= 0) throw std::invalid_argument("zonal_gate_list: cycle_ns must be positive");
  tsn::GateControlList g;
  g.cycle_time_ns = cycle_ns;
  if (windows.empty()) {
    g.entries = {{static_cast<tsn::GateMask>(kBeGate | kStGate), cycle_ns}};
    return g;
  }
  for (const auto& w : windows) {
    if (w.start_ns < 0 || w.end_ns > cycle_ns || w.end_ns <= w.start_ns) {
      throw std::invalid_argument("zonal_gate_list: ST window [" + std::to_string(w.start_ns) + ", " +
                                  std::to_string(w.end_ns) + ") ns is not inside the " + std::to_string(cycle_ns) +
                                  " ns cycle");
    }
  }
  std::sort(windows.begin(), windows.end(), [](const StWindow& a, const StWindow& b) { return a.start_ns < b.start_ns; });
  const std::int64_t min_gap = tsn::min_frame_time_ns(link_bps);
  std::vector<StWindow> merged;
  for (const auto& w : windows) {
    if (!merged.empty() && w.start_ns - merged.back().end_ns < min_gap) {
      merged.back().end_ns = std::max(merged.back().end_ns, w.end_ns);
    } else {
      merged.push_back(w);
    }
  }
  if (merged.front().start_ns < min_gap) merged.front().start_ns = 0;
  if (cycle_ns - merged.back().end_ns < min_gap) merged.back().end_ns = cycle_ns;
  std::int64_t at = 0;
  for (const auto& w : merged) {
    if (w.start_ns > at) g.entries.push_back({kBeGate, w.start_ns - at});
    g.entries.push_back({kStGate, w.end_ns - w.start_ns});
    at = w.end_ns;
  }
  if (at < cycle_ns) g.entries.push_back({kBeGate, cycle_ns - at});
  return g;
}

std::optional<std::int64_t> zonal_path_bound(const std::vector<PathPort>& path, std::size_t frame_bytes,
                                             std::size_t other_max_bytes) {
  std::int64_t total = 0;
  for (const auto& p : path) {
    tsn::BoundInputs in;
    in.frame_bytes = frame_bytes;
    in.expansion_bytes = 0;
    in.link_bps = p.link_bps;
    in.other_max_frame_bytes = other_max_bytes;
    in.processing_ns = p.processing_ns;
    const tsn::LatencyBound b = tsn::latency_bound(p.gcl, 1, in);
    if (!b.feasible) return std::nullopt;
    total += b.total_ns + static_cast<std::int64_t>(p.same_class_ahead) * b.transmission_ns + p.propagation_ns;
  }
  return total;
}

}  // namespace layersec::harness
