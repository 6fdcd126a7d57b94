#include "layersec/tsn/gate_control_list.h"

#include <algorithm>

namespace layersec::tsn {

namespace {

constexpr std::size_t kMinFrameWithFcs = 64;
constexpr std::size_t kPreambleSfdIfg = 20;  // 7 preamble + 1 SFD + 12 inter-frame gap

std::string mbit(std::uint64_t bps) { return std::to_string(bps / 1'000'000) + " Mbit/s"; }

std::string entry_name(std::size_t i) { return "sched-entry " + std::to_string(i); }

// floor((a) / b) for b > 0 and any sign of a.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

bool all_have(const std::vector<GateEntry>& entries, GateMask bit) {
  return std::all_of(entries.begin(), entries.end(), [bit](const GateEntry& e) { return (e.gates & bit) != 0; });
}

bool none_have(const std::vector<GateEntry>& entries, GateMask bit) {
  return std::none_of(entries.begin(), entries.end(), [bit](const GateEntry& e) { return (e.gates & bit) != 0; });
}

}  // namespace

const char* to_string(GclError e) {
  switch (e) {
    case GclError::kNoEntries: return "no_entries";
    case GclError::kTooManyEntries: return "too_many_entries";
    case GclError::kNonPositiveInterval: return "non_positive_interval";
    case GclError::kIntervalTooShort: return "interval_too_short";
    case GclError::kMaskBeyondClasses: return "mask_beyond_classes";
    case GclError::kCycleMismatch: return "cycle_mismatch";
    case GclError::kBadCycleExtension: return "bad_cycle_extension";
    case GclError::kBaseTimeInPast: return "base_time_in_past";
    case GclError::kNegativeBaseTime: return "negative_base_time";
    case GclError::kBaseTimeTooLarge: return "base_time_too_large";
    case GclError::kCycleTooLong: return "cycle_too_long";
    case GclError::kBadLinkSpeed: return "bad_link_speed";
  }
  return "unknown";
}

std::int64_t wire_time_ns(std::size_t frame_bytes_with_fcs, std::uint64_t link_bps) {
  const std::uint64_t bytes = std::max(frame_bytes_with_fcs, kMinFrameWithFcs) + kPreambleSfdIfg;
  const std::uint64_t bits_ns = bytes * 8u * 1'000'000'000u;
  return static_cast<std::int64_t>((bits_ns + link_bps - 1) / link_bps);
}

std::int64_t min_frame_time_ns(std::uint64_t link_bps) { return wire_time_ns(kMinFrameWithFcs, link_bps); }

std::int64_t cycle_time_of(const GateControlList& gcl) {
  if (gcl.cycle_time_ns > 0) return gcl.cycle_time_ns;
  std::int64_t sum = 0;
  for (const auto& e : gcl.entries) sum += e.interval_ns;
  return sum;
}

std::optional<GclProblem> validate(const GateControlList& gcl, const GclLimits& limits) {
  if (limits.link_bps == 0) return GclProblem{GclError::kBadLinkSpeed, -1, "link speed 0 bit/s"};
  if (gcl.entries.empty()) return GclProblem{GclError::kNoEntries, -1, "the schedule has no sched-entry"};
  if (gcl.entries.size() > limits.max_entries) {
    return GclProblem{GclError::kTooManyEntries, -1,
                      std::to_string(gcl.entries.size()) + " sched-entries, at most " +
                          std::to_string(limits.max_entries)};
  }
  const std::int64_t min_interval = min_frame_time_ns(limits.link_bps);
  const unsigned classes = static_cast<unsigned>(std::clamp(limits.num_classes, 1, kMaxTrafficClasses));
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < gcl.entries.size(); ++i) {
    const auto& e = gcl.entries[i];
    const int idx = static_cast<int>(i);
    if (e.interval_ns <= 0) {
      return GclProblem{GclError::kNonPositiveInterval, idx,
                        entry_name(i) + ": interval " + std::to_string(e.interval_ns) + " ns is not positive"};
    }
    if (e.interval_ns < min_interval) {
      return GclProblem{GclError::kIntervalTooShort, idx,
                        entry_name(i) + ": interval " + std::to_string(e.interval_ns) +
                            " ns is shorter than one minimum frame (" + std::to_string(min_interval) + " ns at " +
                            mbit(limits.link_bps) + ")"};
    }
    if (classes < 8 && (static_cast<unsigned>(e.gates) >> classes) != 0) {
      return GclProblem{GclError::kMaskBeyondClasses, idx,
                        entry_name(i) + ": gate mask 0x" + [&] {
                          static const char* hex = "0123456789abcdef";
                          return std::string{hex[(e.gates >> 4) & 0xF], hex[e.gates & 0xF]};
                        }() + " opens a gate beyond the " + std::to_string(classes) + " traffic classes"};
    }
    if (e.interval_ns > kMaxCycleNs || sum > kMaxCycleNs - e.interval_ns) {
      return GclProblem{GclError::kCycleTooLong, idx,
                        entry_name(i) + ": the intervals add up to more than " + std::to_string(kMaxCycleNs) +
                            " ns (the longest cycle)"};
    }
    sum += e.interval_ns;
  }
  if (gcl.cycle_time_ns > kMaxCycleNs) {
    return GclProblem{GclError::kCycleTooLong, -1,
                      "cycle-time " + std::to_string(gcl.cycle_time_ns) + " ns is longer than " +
                          std::to_string(kMaxCycleNs) + " ns"};
  }
  if (gcl.cycle_time_ns < 0 || (gcl.cycle_time_ns > 0 && gcl.cycle_time_ns != sum)) {
    return GclProblem{GclError::kCycleMismatch, -1,
                      "cycle-time " + std::to_string(gcl.cycle_time_ns) +
                          " ns is not the sum of the sched-entry intervals (" + std::to_string(sum) + " ns)"};
  }
  const std::int64_t cycle = sum;
  if (gcl.cycle_time_extension_ns < 0 || gcl.cycle_time_extension_ns >= cycle) {
    return GclProblem{GclError::kBadCycleExtension, -1,
                      "cycle-time-extension " + std::to_string(gcl.cycle_time_extension_ns) +
                          " ns is not in 0.." + std::to_string(cycle - 1) + " ns"};
  }
  if (gcl.base_time_ns < 0) {
    return GclProblem{GclError::kNegativeBaseTime, -1,
                      "base-time " + std::to_string(gcl.base_time_ns) + " ns is negative"};
  }
  if (gcl.base_time_ns > kMaxBaseTimeNs) {
    return GclProblem{GclError::kBaseTimeTooLarge, -1,
                      "base-time " + std::to_string(gcl.base_time_ns) + " ns is beyond " +
                          std::to_string(kMaxBaseTimeNs) + " ns (year 2116)"};
  }
  if (limits.now_ns && gcl.base_time_ns < *limits.now_ns) {
    return GclProblem{GclError::kBaseTimeInPast, -1,
                      "base-time " + std::to_string(gcl.base_time_ns) + " ns is in the past (now " +
                          std::to_string(*limits.now_ns) + " ns)"};
  }
  return std::nullopt;
}

GateSchedule::Running GateSchedule::make_running(const GateControlList& gcl, std::int64_t now_ns) {
  Running r;
  r.gcl = gcl;
  r.cycle_ns = std::max<std::int64_t>(cycle_time_of(gcl), 1);
  std::int64_t acc = 0;
  for (const auto& e : gcl.entries) {
    acc += e.interval_ns;
    r.ends.push_back(acc);
  }
  r.base_ns = gcl.base_time_ns;
  if (r.base_ns < now_ns) r.base_ns += ceil_div(now_ns - r.base_ns, r.cycle_ns) * r.cycle_ns;
  return r;
}

GateSegment GateSchedule::list_segment(const Running& r, std::int64_t t_ns) {
  if (t_ns < r.base_ns || r.ends.empty()) return GateSegment{0xFF, INT64_MIN, r.ends.empty() ? kNever : r.base_ns};
  const std::int64_t cycle_start = r.base_ns + floor_div(t_ns - r.base_ns, r.cycle_ns) * r.cycle_ns;
  const std::int64_t off = t_ns - cycle_start;
  auto it = std::upper_bound(r.ends.begin(), r.ends.end(), off);
  if (it == r.ends.end()) --it;  // defensive: intervals shorter than the cycle hold the last entry
  const auto i = static_cast<std::size_t>(it - r.ends.begin());
  const std::int64_t start = cycle_start + (i == 0 ? 0 : r.ends[i - 1]);
  const std::int64_t end = (i + 1 == r.ends.size()) ? cycle_start + r.cycle_ns : cycle_start + r.ends[i];
  return GateSegment{r.gcl.entries[i].gates, start, end};
}

std::int64_t GateSchedule::set_admin(const GateControlList& gcl, std::int64_t now_ns) {
  Running next = make_running(gcl, now_ns);
  if (!oper_) {
    oper_ = std::move(next);
    pending_.reset();
    return oper_->base_ns;
  }
  advance(now_ns);
  const std::int64_t change = next.base_ns;
  const Running& o = *oper_;
  if (change <= o.base_ns) {
    // The operational list has not started and never will: replace it.
    oper_ = std::move(next);
    pending_.reset();
    ++config_changes_;
    return oper_->base_ns;
  }
  const std::int64_t current = now_ns < o.base_ns ? 0 : floor_div(now_ns - o.base_ns, o.cycle_ns);
  const std::int64_t ext = o.gcl.cycle_time_extension_ns;
  const std::int64_t first_ok = ceil_div(change - o.base_ns - o.cycle_ns - ext, o.cycle_ns);
  const std::int64_t last = std::max(current, first_ok);
  last_cycle_start_ = o.base_ns + last * o.cycle_ns;
  pending_ = std::move(next);
  return change;
}

void GateSchedule::advance(std::int64_t now_ns) {
  if (pending_ && now_ns >= pending_->base_ns) {
    oper_ = std::move(pending_);
    pending_.reset();
    ++config_changes_;
  }
}

GateSegment GateSchedule::oper_segment(std::int64_t t_ns) const {
  const Running& o = *oper_;
  if (!pending_ || t_ns < last_cycle_start_) return list_segment(o, t_ns);
  // The last operational cycle: [last_cycle_start_, change), cut or stretched.
  const std::int64_t change = pending_->base_ns;
  const std::int64_t off = t_ns - last_cycle_start_;
  const std::size_t n = o.ends.size();
  std::size_t i = n - 1;
  if (off < o.cycle_ns) {
    auto it = std::upper_bound(o.ends.begin(), o.ends.end(), off);
    if (it != o.ends.end()) i = static_cast<std::size_t>(it - o.ends.begin());
  }
  const std::int64_t start = last_cycle_start_ + (i == 0 ? 0 : o.ends[i - 1]);
  const std::int64_t end = (i + 1 == n) ? change : std::min(last_cycle_start_ + o.ends[i], change);
  return GateSegment{o.gcl.entries[i].gates, start, end};
}

GateSegment GateSchedule::segment_at(std::int64_t t_ns) const {
  if (!oper_) return GateSegment{};
  if (pending_ && t_ns >= pending_->base_ns) return list_segment(*pending_, t_ns);
  return oper_segment(t_ns);
}

const GateSchedule::Running* GateSchedule::list_at(std::int64_t t_ns, std::int64_t* valid_until) const {
  if (!oper_) {
    *valid_until = kNever;
    return nullptr;
  }
  if (pending_ && t_ns >= pending_->base_ns) {
    *valid_until = kNever;
    return &*pending_;
  }
  *valid_until = pending_ ? pending_->base_ns : kNever;
  return &*oper_;
}

bool GateSchedule::open(int traffic_class, std::int64_t t_ns) const {
  return (segment_at(t_ns).gates & (1u << traffic_class)) != 0;
}

std::int64_t GateSchedule::close_time(int traffic_class, std::int64_t t_ns) const {
  const GateMask bit = static_cast<GateMask>(1u << traffic_class);
  GateSegment seg = segment_at(t_ns);
  if (!(seg.gates & bit)) return t_ns;
  std::int64_t cur = t_ns;
  const std::size_t bound = 4 * ((oper_ ? oper_->ends.size() : 0) + (pending_ ? pending_->ends.size() : 0)) + 16;
  for (std::size_t step = 0; step < bound; ++step) {
    std::int64_t valid_until = kNever;
    const Running* list = list_at(cur, &valid_until);
    if (!list) return kNever;
    if (all_have(list->gcl.entries, bit)) {
      if (valid_until == kNever) return kNever;
      cur = valid_until;
    } else {
      if (seg.end_ns == kNever) return kNever;
      cur = seg.end_ns;
    }
    seg = segment_at(cur);
    if (!(seg.gates & bit)) return cur;
  }
  return cur;  // not reached for a validated schedule; closing early is the safe answer
}

std::int64_t GateSchedule::next_open(int traffic_class, std::int64_t t_ns) const {
  const GateMask bit = static_cast<GateMask>(1u << traffic_class);
  GateSegment seg = segment_at(t_ns);
  if (seg.gates & bit) return t_ns;
  std::int64_t cur = t_ns;
  const std::size_t bound = 4 * ((oper_ ? oper_->ends.size() : 0) + (pending_ ? pending_->ends.size() : 0)) + 16;
  for (std::size_t step = 0; step < bound; ++step) {
    std::int64_t valid_until = kNever;
    const Running* list = list_at(cur, &valid_until);
    if (!list) return cur;
    if (cur >= list->base_ns && none_have(list->gcl.entries, bit)) {
      if (valid_until == kNever) return kNever;
      cur = valid_until;
    } else {
      if (seg.end_ns == kNever) return kNever;
      cur = seg.end_ns;
    }
    seg = segment_at(cur);
    if (seg.gates & bit) return cur;
  }
  return kNever;
}

std::int64_t GateSchedule::max_window(int traffic_class) const {
  if (!oper_) return kNever;
  const GateMask bit = static_cast<GateMask>(1u << traffic_class);
  const auto& e = oper_->gcl.entries;
  if (all_have(e, bit)) return kNever;
  if (none_have(e, bit)) return 0;
  // Runs of open entries, wrapping from the last entry to the first.
  std::int64_t best = 0;
  std::int64_t run = 0;
  for (std::size_t k = 0; k < 2 * e.size(); ++k) {
    const auto& x = e[k % e.size()];
    if (x.gates & bit) {
      run += x.interval_ns;
      best = std::max(best, run);
    } else {
      run = 0;
    }
  }
  return best;
}

}  // namespace layersec::tsn
