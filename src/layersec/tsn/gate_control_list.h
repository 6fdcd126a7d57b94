// IEEE 802.1Qbv gate control lists and the schedule that runs them
// (802.1Q-2018 §8.6.8.4, §8.6.9).
//
// A gate control list (GCL) is a sequence of SetGateStates(mask, interval)
// entries run cyclically from AdminBaseTime with AdminCycleTime; bit i of a
// mask opens the gate of traffic class i. GateSchedule holds the operational
// list and at most one pending (admin) list and answers, for any instant on
// the shaper's clock, which gates are open and until when. It reads no clock:
// callers pass times (nanoseconds on the clock the schedule was written for,
// CLOCK_TAI for a taprio user, simulated time in the simulator).
//
// Rules implemented:
//  - Before the operational list's base time every gate is open (§8.6.9.4.1,
//    and Linux taprio).
//  - A base time in the past starts the list at base + N*cycle, the first
//    such instant not before the time the list was given (§8.6.9.1.1
//    SetConfigChangeTime; sch_taprio.c).
//  - set_admin() on a running schedule makes the list pending
//    (ConfigPending). The change takes effect at ConfigChangeTime, the new
//    list's (advanced) base time, which is one of the new list's cycle
//    boundaries (ConfigChange). The operational cycle that contains
//    ConfigChangeTime is cut short there, or, when ConfigChangeTime lies
//    within OperCycleTimeExtension after that cycle's normal end, that cycle
//    is stretched to it instead, its last entry held (§8.6.9.1.1 Cycle Timer
//    state machine: the next cycle starts at ConfigChangeTime if it is no
//    later than CycleStartTime + OperCycleTime + OperCycleTimeExtension).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layersec/tsn/traffic_class.h"

namespace layersec::tsn {

using GateMask = std::uint8_t;  // bit i: gate of traffic class i open
inline constexpr std::int64_t kNever = INT64_MAX;

struct GateEntry {
  GateMask gates = 0;
  std::int64_t interval_ns = 0;
  bool operator==(const GateEntry&) const = default;
};

struct GateControlList {
  std::int64_t base_time_ns = 0;             // AdminBaseTime
  std::int64_t cycle_time_ns = 0;            // AdminCycleTime (0: the sum of the intervals)
  std::int64_t cycle_time_extension_ns = 0;  // AdminCycleTimeExtension
  std::vector<GateEntry> entries;
  bool operator==(const GateControlList&) const = default;
};

enum class GclError {
  kNoEntries,
  kTooManyEntries,
  kNonPositiveInterval,
  kIntervalTooShort,      // shorter than one minimum frame at the port's speed
  kMaskBeyondClasses,     // a gate bit at or above the number of traffic classes
  kCycleMismatch,         // the intervals do not add up to the cycle time
  kBadCycleExtension,     // negative, or not shorter than the cycle
  kBaseTimeInPast,
  kNegativeBaseTime,
  kBaseTimeTooLarge,      // beyond kMaxBaseTimeNs
  kCycleTooLong,          // beyond kMaxCycleNs
  kBadLinkSpeed,
};

// Bounds that keep every instant a schedule computes (base + cycles) far from
// int64 overflow: a base time up to 2^62 ns (year 2116 on CLOCK_TAI) and a
// cycle up to 2^40 ns (about 18 minutes; taprio cycles are micro- to
// milliseconds).
inline constexpr std::int64_t kMaxBaseTimeNs = std::int64_t{1} << 62;
inline constexpr std::int64_t kMaxCycleNs = std::int64_t{1} << 40;
[[nodiscard]] const char* to_string(GclError e);

struct GclLimits {
  int num_classes = kMaxTrafficClasses;
  std::uint64_t link_bps = 1'000'000'000;     // to compute the shortest interval
  std::size_t max_entries = 1024;
  std::optional<std::int64_t> now_ns;         // when set, a base time before it is kBaseTimeInPast
};

struct GclProblem {
  GclError error;
  int entry = -1;       // index of the offending sched-entry, -1 for the list
  std::string message;  // names the entry and the values
};

// Checks a list against the port. On success returns nullopt and, when
// cycle_time_ns is 0, the caller may use cycle_time_of().
[[nodiscard]] std::optional<GclProblem> validate(const GateControlList& gcl, const GclLimits& limits);
[[nodiscard]] std::int64_t cycle_time_of(const GateControlList& gcl);

// Wire time of `bytes` octets of frame (destination address through the
// FCS, at least 64) plus preamble, SFD and the minimum inter-frame gap (20).
[[nodiscard]] std::int64_t wire_time_ns(std::size_t frame_bytes_with_fcs, std::uint64_t link_bps);
// The shortest frame's wire time: 64 octets + 20.
[[nodiscard]] std::int64_t min_frame_time_ns(std::uint64_t link_bps);

// A constant stretch of gate states: [start_ns, end_ns).
struct GateSegment {
  GateMask gates = 0xFF;
  std::int64_t start_ns = INT64_MIN;
  std::int64_t end_ns = kNever;
};

class GateSchedule {
 public:
  // No list: every gate open at all times.
  GateSchedule() = default;

  // Installs a validated list given at time now_ns. With no operational list
  // it becomes operational (its base advanced past now_ns if in the past);
  // otherwise it becomes pending and replaces an earlier pending list.
  // Returns the ConfigChangeTime (or the operational start).
  std::int64_t set_admin(const GateControlList& gcl, std::int64_t now_ns);

  // Promotes a pending list whose change time is <= now_ns (ConfigChange).
  // Queries give the same answers with or without it; it bounds memory of
  // the past and updates config_changes().
  void advance(std::int64_t now_ns);

  [[nodiscard]] GateSegment segment_at(std::int64_t t_ns) const;
  [[nodiscard]] bool open(int traffic_class, std::int64_t t_ns) const;
  // First instant >= t_ns at which the class's gate is closed; kNever if it
  // never closes. Equal to t_ns if it is closed at t_ns.
  [[nodiscard]] std::int64_t close_time(int traffic_class, std::int64_t t_ns) const;
  // First instant >= t_ns at which the class's gate is open; kNever if never.
  [[nodiscard]] std::int64_t next_open(int traffic_class, std::int64_t t_ns) const;
  // Longest contiguous open window of the class in the operational list's
  // steady state (kNever when always open, 0 when never open).
  [[nodiscard]] std::int64_t max_window(int traffic_class) const;

  [[nodiscard]] bool config_pending() const { return pending_.has_value(); }
  [[nodiscard]] std::optional<std::int64_t> config_change_time() const {
    return pending_ ? std::optional<std::int64_t>(pending_->base_ns) : std::nullopt;
  }
  [[nodiscard]] std::uint64_t config_changes() const { return config_changes_; }
  [[nodiscard]] bool has_operational() const { return oper_.has_value(); }
  [[nodiscard]] const GateControlList* operational() const { return oper_ ? &oper_->gcl : nullptr; }

 private:
  struct Running {
    GateControlList gcl;
    std::int64_t base_ns = 0;   // the effective start (advanced base time)
    std::int64_t cycle_ns = 0;
    std::vector<std::int64_t> ends;  // cumulative end offset of each entry
  };
  static Running make_running(const GateControlList& gcl, std::int64_t now_ns);
  static GateSegment list_segment(const Running& r, std::int64_t t_ns);
  // End of the list's validity for queries (the change time when a list is
  // pending, else kNever) and the oper cycle that is cut or stretched.
  [[nodiscard]] GateSegment oper_segment(std::int64_t t_ns) const;
  [[nodiscard]] const Running* list_at(std::int64_t t_ns, std::int64_t* valid_until) const;

  std::optional<Running> oper_;
  std::optional<Running> pending_;
  std::int64_t last_cycle_start_ = 0;  // start of the oper cycle that ends at the change time
  std::uint64_t config_changes_ = 0;
};

}  // namespace layersec::tsn
