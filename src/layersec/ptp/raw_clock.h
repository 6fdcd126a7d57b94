// The local time line of a real gPTP node (IO): CLOCK_MONOTONIC_RAW, which
// no NTP daemon or PTP servo slews or steps. The layersec clock
// (ptp::SyncedClock, disciplined by the servo) is an offset and rate over
// it; no host clock is ever adjusted (every network namespace shares
// CLOCK_REALTIME).
//
// The kernel's software timestamps (SO_TIMESTAMPING) are CLOCK_REALTIME;
// raw_from_realtime() maps one onto the raw time line by reading both clocks
// around it (error: the realtime clock's slew over microseconds, well under a
// nanosecond; a realtime step between the packet and the call shows up once).
#pragma once

#include <cstdint>

namespace layersec::ptp {

// CLOCK_MONOTONIC_RAW now (ns).
std::int64_t raw_now_ns();
// CLOCK_REALTIME now (ns).
std::int64_t realtime_now_ns();
// A CLOCK_REALTIME instant (ns) expressed on CLOCK_MONOTONIC_RAW.
std::int64_t raw_from_realtime(std::int64_t realtime_ns);
// CLOCK_REALTIME minus CLOCK_MONOTONIC_RAW now (ns): the offset that makes a
// GM's layersec clock start at the host's time of day.
std::int64_t realtime_minus_raw_ns();

}  // namespace layersec::ptp
