// The host's clocks, scheduling and process figures, for the SV I/O
// adapters (sv publish/subscribe/kdc, bench sv). The sv core never reads a
// clock; everything that does lives here.
#pragma once

#include <cstdint>
#include <string>

#include "layersec/base/time.h"

namespace layersec::sv_io {

// CLOCK_MONOTONIC, CLOCK_REALTIME and this thread's CPU time in ns. The
// thread CPU time is unaffected by time spent descheduled on a loaded machine.
[[nodiscard]] std::int64_t mono_ns();
[[nodiscard]] std::int64_t wall_ns();
[[nodiscard]] std::int64_t thread_cpu_ns();
// A process-wide CLOCK_REALTIME clock (the KDC's and the IEDs' time).
[[nodiscard]] const Clock& wall_clock();

// The CLOCK_MONOTONIC time of the wall-clock time `wall`, given both clocks'
// readings at one moment (`mono_now`, `wall_now`). TimePoint::max() maps to
// itself (a deadline that never comes).
[[nodiscard]] TimePoint monotonic_of_wall(TimePoint wall, TimePoint mono_now, TimePoint wall_now);

// First frameCounter of a publisher run, from the wall-clock time `wall_now`
// in ns (the "fresh per-start value" of docs/sv.md). The counter then
// advances by one per frame, so it stays below the wall clock in ns (at most
// 96,000 frames a second against 10^9 ns), and a later run, which starts at a
// later wall time, never repeats a value of an earlier one under the same
// key. Throws std::runtime_error when the clock is obviously unset (before
// 2020-01-01): then it says nothing about earlier runs.
[[nodiscard]] std::uint64_t publisher_counter_base(TimePoint wall_now);
// The same on this host's CLOCK_REALTIME now.
[[nodiscard]] std::uint64_t publisher_counter_base();

// The first three fields of /proc/loadavg ("0.12 0.34 0.56"; empty parts
// when it cannot be read).
[[nodiscard]] std::string loadavg();
// Peak resident set size of this process so far, in KiB (getrusage).
[[nodiscard]] long rss_kib();

// This thread's scheduler figures so far: time on a CPU and time spent
// waiting on a run queue while runnable (/proc/thread-self/schedstat; -1 each
// when the kernel does not provide it) and involuntary context switches
// (getrusage RUSAGE_THREAD). The difference over a paced run says how long
// the sender was kept from its CPU.
struct ThreadSchedStats {
  std::int64_t run_ns = -1;
  std::int64_t wait_ns = -1;
  long involuntary_switches = 0;
};
[[nodiscard]] ThreadSchedStats thread_sched_stats();

// (mlockall + SCHED_FIFO, timer slack: net/thread_timing.h.)

}  // namespace layersec::sv_io
