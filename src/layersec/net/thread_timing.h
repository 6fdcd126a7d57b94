// How promptly the calling thread wakes: its timer slack and its scheduling
// class. For the I/O loops that run paced senders and time-aware shapers
// (tsn::LoopShaperTimer, the SV publisher, `bench tsn`); both settings are
// per thread, and threads created afterwards inherit them.
#pragma once

#include <string>

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

}  // namespace layersec::net
