#include "layersec/net/thread_timing.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>

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

std::string enter_realtime(int priority) {
  std::string why;
  if (::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) why = "mlockall: " + errno_text(errno);
  if (std::string fifo = set_thread_fifo(priority); !fifo.empty()) {
    why += std::string(why.empty() ? "" : "; ") + fifo;
  }
  return why;
}

namespace {

std::optional<std::int64_t> parse_decimal_line(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string read_small_file(const char* path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s, '\0');
  return in.bad() ? std::string() : s.substr(0, 64);
}

}  // namespace

std::optional<RtThrottle> parse_rt_throttle(std::string_view runtime_text, std::string_view period_text) {
  const auto runtime = parse_decimal_line(runtime_text);
  const auto period = parse_decimal_line(period_text);
  if (!runtime || !period) return std::nullopt;
  if (*period < 1 || *period > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  if (*runtime < -1 || *runtime > *period) return std::nullopt;
  return RtThrottle{*runtime, *period};
}

std::optional<RtThrottle> rt_throttle() {
  return parse_rt_throttle(read_small_file("/proc/sys/kernel/sched_rt_runtime_us"),
                           read_small_file("/proc/sys/kernel/sched_rt_period_us"));
}

}  // namespace layersec::net
