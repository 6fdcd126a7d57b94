#include "layersec/sv_io/host.h"

#include <sys/resource.h>
#include <time.h>

#include <fstream>
#include <stdexcept>

namespace layersec::sv_io {
namespace {

std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::int64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }
std::int64_t wall_ns() { return clock_ns(CLOCK_REALTIME); }
std::int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

const Clock& wall_clock() {
  static const RealtimeClock clock;
  return clock;
}

TimePoint monotonic_of_wall(TimePoint wall, TimePoint mono_now, TimePoint wall_now) {
  if (wall == TimePoint::max()) return wall;
  return TimePoint::from_ns(mono_now.ns() + (wall.ns() - wall_now.ns()));
}

std::uint64_t publisher_counter_base(TimePoint wall_now) {
  const std::int64_t ns = wall_now.ns();
  constexpr std::int64_t k2020 = 1'577'836'800LL * 1'000'000'000LL;
  if (ns < k2020) {
    // Seconds as timespec's tv_sec counts them (rounded towards the past).
    const std::int64_t secs = ns >= 0 ? ns / 1'000'000'000 : -((-ns + 999'999'999) / 1'000'000'000);
    throw std::runtime_error("the wall clock reads " + std::to_string(secs) +
                             " s since 1970 (before 2020): a secured publisher starts its frame counter at the "
                             "wall-clock time so that a restart never repeats one; set the clock first");
  }
  return static_cast<std::uint64_t>(ns);
}

std::uint64_t publisher_counter_base() { return publisher_counter_base(TimePoint::from_ns(wall_ns())); }

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

long rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;  // Linux: KiB, peak of the process so far
}

ThreadSchedStats thread_sched_stats() {
  ThreadSchedStats st;
  std::ifstream in("/proc/thread-self/schedstat");
  std::int64_t run = 0, wait = 0;
  if (in >> run >> wait) {
    st.run_ns = run;
    st.wait_ns = wait;
  }
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) == 0) st.involuntary_switches = ru.ru_nivcsw;
  return st;
}

}  // namespace layersec::sv_io
