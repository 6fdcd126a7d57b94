// How promptly the calling thread wakes: its timer slack and its scheduling
// class. For the I/O loops that run paced senders and time-aware shapers
// (tsn::LoopShaperTimer, the SV publisher, `bench tsn`); both settings are
// per thread, and threads created afterwards inherit them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace layersec::net {

// Sets the calling thread's timer slack (PR_SET_TIMERSLACK) to 1 ns: the
// kernel may otherwise end a timed wait (an EventLoop's ppoll,
// clock_nanosleep) up to the slack later than asked, 50 us by default, which
// a paced sender or a shaper sees as late frame starts. False when refused.
bool set_fine_timer_slack();
// The calling thread's timer slack in ns (PR_GET_TIMERSLACK), -1 on failure.
[[nodiscard]] long timer_slack_ns();
// Puts the calling thread in SCHED_FIFO at `priority` (1..99; needs
// CAP_SYS_NICE), so it runs as soon as it wakes instead of waiting behind
// other runnable threads. Returns "" when it took effect, else why not.
[[nodiscard]] std::string set_thread_fifo(int priority);
// mlockall(MCL_CURRENT | MCL_FUTURE) (no page fault on the packet path) and
// set_thread_fifo(priority). Returns "" when both took effect, else why not;
// callers warn and go on without them.
[[nodiscard]] std::string enter_realtime(int priority);

// The kernel's real-time throttle: SCHED_FIFO/RR threads may run `runtime_us`
// of every `period_us` on a CPU (kernel.sched_rt_runtime_us and
// kernel.sched_rt_period_us; runtime -1 = unlimited). A real-time thread
// that never sleeps, such as the SV publisher at 96 kHz, whose slot is
// shorter than its spin, is kept off its CPU for the rest of every period
// whenever another thread wants that CPU (Debian's default: 50 ms of every
// second). Reported beside paced runs so that a reader knows the setting.
struct RtThrottle {
  std::int64_t runtime_us = 0;
  std::int64_t period_us = 0;
  [[nodiscard]] bool unlimited() const { return runtime_us < 0; }
};
// Parses the two files' contents (a decimal integer and a newline each):
// period 1..INT32_MAX, runtime -1 or 0..period. nullopt for anything else.
[[nodiscard]] std::optional<RtThrottle> parse_rt_throttle(std::string_view runtime_text,
                                                          std::string_view period_text);
// This host's setting from /proc/sys/kernel, nullopt when unreadable.
[[nodiscard]] std::optional<RtThrottle> rt_throttle();

}  // namespace layersec::net
