#include "layersec/net/thread_timing.h"

#include <sched.h>
#include <sys/prctl.h>

#include <cerrno>

#include "layersec/net/io.h"

namespace layersec::net {

bool set_fine_timer_slack() { return ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0; }

long timer_slack_ns() { return static_cast<long>(::prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL)); }

std::string set_thread_fifo(int priority) {
  sched_param sp{};
  sp.sched_priority = priority;
  if (::sched_setscheduler(0, SCHED_FIFO, &sp) != 0) return "SCHED_FIFO: " + errno_text(errno);
  return "";
}

}  // namespace layersec::net
