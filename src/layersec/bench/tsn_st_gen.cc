#include "layersec/bench/tsn_st_gen.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "layersec/base/time.h"
#include "layersec/net/thread_timing.h"
#include "layersec/sv_io/pacing.h"
#include "layersec/tsn/shaper_driver.h"

namespace layersec::bench {
namespace {

std::int64_t tai_now_ns() { return tsn::TaiClock().now_ns(); }

// CLOCK_TAI - CLOCK_MONOTONIC, from the tightest of a few sandwiched reads.
std::int64_t tai_minus_mono_ns() {
  std::int64_t best_gap = INT64_MAX, offset = 0;
  for (int i = 0; i < 16; ++i) {
    const std::int64_t m0 = monotonic_now_ns();
    const std::int64_t t = tai_now_ns();
    const std::int64_t m1 = monotonic_now_ns();
    if (m1 - m0 < best_gap) {
      best_gap = m1 - m0;
      offset = t - (m0 + (m1 - m0) / 2);
    }
  }
  return offset;
}

void listen(const net::UniqueFd& rx, tsn::StReceiver& receiver, const std::atomic<bool>& stop, int priority,
            std::string& rt_error) {
  if (priority > 0) rt_error = net::set_thread_fifo(priority);
  std::vector<std::uint8_t> buf(65536);
  while (!stop.load()) {
    const ssize_t n = ::recv(rx.get(), buf.data(), buf.size(), 0);
    const std::int64_t now = monotonic_now_ns();
    if (n < 0) continue;  // the 100 ms receive timeout: look at `stop`
    (void)receiver.on_datagram(ByteSpan(buf.data(), static_cast<std::size_t>(n)), now);
  }
}

}  // namespace

StGenResult run_st_generator(const net::UniqueFd& tx, const net::UniqueFd& rx, const StGenSpec& s) {
  const tsn::StPlan& plan = s.plan;
  if (plan.cycle_ns <= 0 || s.payload_bytes < tsn::kStHeaderBytes) throw std::runtime_error("ST generator: bad plan");
  StGenResult res;
  res.cycles = static_cast<std::uint64_t>(std::llround(s.seconds * 1e9 / static_cast<double>(plan.cycle_ns)));
  const std::uint64_t total = tsn::frames_before_cycle(plan, res.cycles);
  tsn::StReceiver receiver(s.payload_bytes, s.run_id, total);
  std::atomic<bool> stop{false};
  std::thread listener([&] { listen(rx, receiver, stop, s.realtime_priority, res.realtime_error[1]); });

  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(s.dst_port);
  if (::inet_pton(AF_INET, s.dst_ip.c_str(), &to.sin_addr) != 1) {
    stop = true;
    listener.join();
    throw std::runtime_error("ST generator: bad address " + s.dst_ip);
  }
  std::thread talker([&] {
    (void)net::set_fine_timer_slack();
    if (s.realtime_priority > 0) res.realtime_error[0] = net::set_thread_fifo(s.realtime_priority);
    const std::int64_t offset = tai_minus_mono_ns();
    // The first cycle boundary (base time 0) at least 50 ms ahead.
    const std::int64_t start = tai_now_ns() + 50'000'000;
    const std::int64_t cycle0 = (start / plan.cycle_ns + 1) * plan.cycle_ns;
    std::vector<std::uint8_t> buf(s.payload_bytes);
    res.release_late_us.reserve(total);
    std::uint64_t seq = 0;
    for (std::uint64_t c = 0; c < res.cycles; ++c) {
      const std::uint64_t n = tsn::frames_in_cycle(plan, c);
      for (std::uint64_t k = 0; k < n; ++k, ++seq) {
        const std::int64_t release = tsn::release_ns(plan, cycle0, c, k) - offset;  // on CLOCK_MONOTONIC
        if (!sv_io::wait_for_deadline(TimePoint::from_ns(release), Duration::nanoseconds(s.spin_ns))) return;
        const std::int64_t now = monotonic_now_ns();
        if (!tsn::encode_st_datagram({s.run_id, seq, now}, MutableByteSpan(buf.data(), buf.size()))) return;
        const ssize_t r =
            ::sendto(tx.get(), buf.data(), buf.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
        if (r != static_cast<ssize_t>(buf.size())) ++res.send_errors;
        res.release_late_us.push_back(static_cast<double>(now - release) / 1e3);
        res.sent = seq + 1;
      }
    }
  });
  talker.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop = true;
  listener.join();

  res.rx = receiver.counters();
  res.refused_total = receiver.refused_total();
  res.lost = receiver.lost(res.sent);
  res.latency_us = receiver.latency_us();
  res.sample_seqs = receiver.sample_seqs();
  res.jitter_ms = receiver.jitter_ms();
  res.duration_s = static_cast<double>(res.cycles) * static_cast<double>(plan.cycle_ns) / 1e9;
  if (res.duration_s > 0) {
    res.throughput_mbit_s =
        static_cast<double>(res.rx.received * s.payload_bytes * 8) / res.duration_s / 1e6;
  }
  return res;
}

}  // namespace layersec::bench
