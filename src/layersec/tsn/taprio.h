// Schedules in the Linux taprio syntax (tc-taprio(8)), so that a taprio user
// brings a schedule as is:
//
//   [tc qdisc replace dev IF parent root handle 100 ] taprio num_tc 3
//       map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2  queues 1@0 1@1 2@2
//       base-time 1000000000 sched-entry S 01 300000 sched-entry S 02 300000
//       sched-entry S 04 400000 [cycle-time 1000000] [cycle-time-extension N]
//       [clockid CLOCK_TAI] [flags 0x1] [txtime-delay N] [max-sdu S0 S1 ...]
//
// `map` gives the traffic class of each of the 16 socket priorities; the
// first eight are the 802.1Q priorities (PCP) of our links. `queues` is
// checked and recorded (our ports keep one queue per class). Only the S
// (SetGateStates) command is supported: H and R (frame preemption) are
// refused by name. A mask is hexadecimal with or without 0x, bit 0 =
// traffic class 0. Backslash-newline continuations and extra white space are
// accepted. The result is checked with tsn::validate (gate_control_list.h)
// against the port's speed; every error names the token or sched-entry.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layersec/tsn/gate_control_list.h"
#include "layersec/tsn/traffic_class.h"

namespace layersec::tsn {

struct TaprioSchedule {
  int num_tc = 0;
  std::array<int, 16> map{};                    // socket priority -> traffic class
  std::vector<std::pair<int, int>> queues;      // (count, offset) per class
  std::string clockid = "CLOCK_TAI";
  std::uint32_t flags = 0;
  std::optional<std::int64_t> txtime_delay_ns;
  std::array<std::uint32_t, kMaxTrafficClasses> max_sdu{};  // 0: no limit
  GateControlList gcl;

  // The 802.1Q priority map (the first eight `map` entries).
  [[nodiscard]] TrafficClassMap traffic_classes() const;
};

enum class TaprioError {
  kSyntax,          // a token is missing, unknown or not a number
  kBadValue,        // a value out of range (num_tc, map, queues, max-sdu)
  kUnsupported,     // H/R commands (preemption), an unknown clockid
  kBadSchedule,     // the gate control list fails tsn::validate
};

struct TaprioParse {
  std::optional<TaprioSchedule> schedule;
  TaprioError error = TaprioError::kSyntax;
  std::string message;  // empty on success
  [[nodiscard]] bool ok() const { return schedule.has_value(); }
};

// Parses and validates. `limits.num_classes` is taken from num_tc.
[[nodiscard]] TaprioParse parse_taprio(std::string_view text, GclLimits limits = {});

// The schedule back in taprio syntax (starting at "taprio"); parsing the
// result gives the same schedule.
[[nodiscard]] std::string to_taprio(const TaprioSchedule& schedule);

}  // namespace layersec::tsn
