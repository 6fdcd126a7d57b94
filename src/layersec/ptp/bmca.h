// A simple best master clock algorithm for the standard gPTP profile
// (802.1AS-2020 §10.3.4-5, without the passive and alternate refinements):
// systemIdentity/priority vectors are compared field by field, lowest wins.
#pragma once

#include <cstdint>

#include "layersec/ptp/message.h"

namespace layersec::ptp {

// The priority vector (§10.3.4): the grandmaster's systemIdentity, then
// stepsRemoved and the sending port, as the tie-breakers.
struct PriorityVector {
  std::uint8_t priority1 = 255;
  ClockQuality quality{};
  std::uint8_t priority2 = 255;
  std::uint64_t grandmaster_identity = 0;
  std::uint16_t steps_removed = 0;
  PortIdentity source{};
  constexpr bool operator==(const PriorityVector&) const = default;
};

// True when `a` is a better master than `b`.
bool better(const PriorityVector& a, const PriorityVector& b);

// The vector an Announce advertises (as received on a port).
PriorityVector vector_of(const Message& announce);

}  // namespace layersec::ptp
