#include "layersec/tsn/gate_analysis.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace layersec::tsn {

namespace {

struct Window {
  std::int64_t start = 0;  // offset in the cycle
  std::int64_t end = 0;    // may exceed the cycle when it wraps
};

// Contiguous open windows of the class within one cycle, a window that runs
// through the cycle boundary joined into one (starting in this cycle).
std::vector<Window> windows_of(const GateControlList& gcl, int c, std::int64_t cycle) {
  const GateMask bit = static_cast<GateMask>(1u << c);
  std::vector<Window> w;
  std::int64_t t = 0;
  for (const auto& e : gcl.entries) {
    const bool open = (e.gates & bit) != 0;
    if (open) {
      if (!w.empty() && w.back().end == t) {
        w.back().end = t + e.interval_ns;
      } else {
        w.push_back({t, t + e.interval_ns});
      }
    }
    t += e.interval_ns;
  }
  // Join the last window with the first when the gate stays open across the boundary.
  if (w.size() > 1 && w.back().end == cycle && w.front().start == 0) {
    w.back().end = cycle + w.front().end;
    w.erase(w.begin());
  }
  return w;
}

bool overlaps_other(const GateControlList& gcl, int c, bool higher_only) {
  const GateMask bit = static_cast<GateMask>(1u << c);
  for (const auto& e : gcl.entries) {
    if (!(e.gates & bit)) continue;
    GateMask others = static_cast<GateMask>(e.gates & ~bit);
    if (higher_only) others = static_cast<GateMask>(others & ~((bit << 1) - 1));
    if (others) return true;
  }
  return false;
}

}  // namespace

std::vector<ClassWindows> class_windows(const GateControlList& gcl, int num_classes) {
  const std::int64_t cycle = cycle_time_of(gcl);
  std::vector<ClassWindows> out;
  for (int c = 0; c < num_classes; ++c) {
    ClassWindows cw;
    cw.traffic_class = c;
    const auto w = windows_of(gcl, c, cycle);
    cw.windows = w.size();
    for (const auto& x : w) {
      const std::int64_t len = x.end - x.start;
      cw.open_ns += len;
      cw.max_window_ns = std::max(cw.max_window_ns, len);
      cw.min_window_ns = cw.min_window_ns == 0 ? len : std::min(cw.min_window_ns, len);
    }
    cw.share = cycle > 0 ? static_cast<double>(cw.open_ns) / static_cast<double>(cycle) : 0.0;
    out.push_back(cw);
  }
  return out;
}

LatencyBound latency_bound(const GateControlList& gcl, int c, const BoundInputs& in) {
  LatencyBound b;
  const std::int64_t cycle = cycle_time_of(gcl);
  const std::int64_t tx = wire_time_ns(in.frame_bytes + in.expansion_bytes + 4, in.link_bps);
  b.transmission_ns = tx;
  b.processing_ns = in.processing_ns;
  std::vector<Window> usable;
  for (const auto& w : windows_of(gcl, c, cycle)) {
    if (w.end - w.start >= tx) usable.push_back(w);
  }
  if (usable.empty()) return b;
  b.feasible = true;
  const bool always_open = usable.size() == 1 && usable[0].end - usable[0].start >= cycle;
  if (!always_open) {
    // The worst arrival is just after the last feasible start of a window;
    // the frame then starts at the next usable window's opening.
    for (std::size_t i = 0; i < usable.size(); ++i) {
      const std::int64_t last_start = usable[i].end - tx;
      const std::int64_t next_open =
          i + 1 < usable.size() ? usable[i + 1].start : usable[0].start + cycle;
      b.max_gate_wait_ns = std::max(b.max_gate_wait_ns, next_open - last_start);
    }
  }
  if (overlaps_other(gcl, c, false)) {
    b.blocking_ns = wire_time_ns(in.other_max_frame_bytes + in.expansion_bytes + 4, in.link_bps);
  }
  b.higher_priority_overlap = overlaps_other(gcl, c, true);
  b.total_ns = b.max_gate_wait_ns + b.transmission_ns + b.blocking_ns + b.processing_ns;
  return b;
}

std::vector<CarriedStream> carried_load(const PortConfig& port, const GateControlList& gcl,
                                       std::span<const OfferedStream> streams, std::int64_t duration_ns) {
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const OfferedStream& s = streams[i];
    if (s.frame_bytes == 0 || s.period_ns < 0 || s.traffic_class < 0 || s.traffic_class >= port.num_classes) {
      throw std::invalid_argument("carried_load: stream " + std::to_string(i) +
                                  ": needs a frame, a class below num_classes and a period >= 0");
    }
  }
  EgressPort p(port, GateSchedule{});
  (void)p.set_schedule(gcl, 0);  // validates; throws naming the entry
  std::vector<CarriedStream> out(streams.size());
  std::vector<std::int64_t> next(streams.size());
  std::vector<std::size_t> waiting(streams.size(), 0);  // a saturating stream's frames in its queue
  for (std::size_t i = 0; i < streams.size(); ++i) next[i] = streams[i].first_ns;
  std::int64_t now = 0;
  while (now < duration_ns) {
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const OfferedStream& s = streams[i];
      if (s.period_ns == 0) {
        // Two frames in the queue keep a saturating sender's class busy.
        while (waiting[i] < 2) {
          ++out[i].offered;
          if (p.enqueue(std::vector<std::uint8_t>(s.frame_bytes), s.traffic_class, now, i) != EnqueueResult::kQueued) {
            ++out[i].dropped;
            break;
          }
          ++waiting[i];
        }
        continue;
      }
      for (; next[i] <= now; next[i] += s.period_ns) {
        ++out[i].offered;
        if (p.enqueue(std::vector<std::uint8_t>(s.frame_bytes), s.traffic_class, now, i) != EnqueueResult::kQueued) {
          ++out[i].dropped;
        }
      }
    }
    if (auto tx = p.dequeue(now)) {
      ++out[tx->tag].sent;
      if (streams[tx->tag].period_ns == 0) --waiting[tx->tag];
      continue;  // the wire is busy now; next_event says until when
    }
    std::int64_t t = p.next_event(now);
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (streams[i].period_ns > 0) t = std::min(t, next[i]);
    }
    now = t > now ? t : now + 1;  // t == now: a head frame was dropped at now; look again
  }
  return out;
}

}  // namespace layersec::tsn
