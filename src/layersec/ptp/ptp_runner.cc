#include "layersec/ptp/ptp_runner.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "layersec/ptp/raw_clock.h"

namespace layersec::ptp {
namespace {

void flush(TimeAwareSystem& sys, PtpSocket& sock, int timeout_ms, RunnerStats& st) {
  std::array<std::uint8_t, kMaxFrameSize> frame{};
  while (!sys.output().empty()) {
    const std::vector<Transmit> out = sys.output();
    sys.clear_output();
    for (const Transmit& t : out) {
      const std::size_t n = encode_frame(t.message, sock.mac(), frame);
      if (n == 0) continue;
      if (!sock.send(ByteSpan(frame.data(), n))) {
        ++st.send_errors;
        continue;
      }
      ++st.frames_out;
      if (!t.event) continue;
      if (auto ts = sock.tx_timestamp(t.message.header.type, t.message.header.sequence_id, timeout_ms)) {
        sys.tx_timestamp(t.port, t.message.header.type, t.message.header.sequence_id, TimePoint::from_ns(*ts));
      } else {
        ++st.tx_timestamp_missed;
      }
    }
  }
}

}  // namespace

RunnerStats run_ptp(const RunnerOptions& o, const SecondCallback& each_second, const volatile std::sig_atomic_t* stop,
                    TimestampingInfo* info_out) {
  PtpSocket sock(o.interface);
  if (info_out) *info_out = sock.timestamping();
  SystemConfig cfg = o.system;
  cfg.port_count = 1;
  if (cfg.clock_identity == 0) cfg.clock_identity = clock_identity_from_mac(sock.mac());
  // A GM's layersec clock starts at the host's time of day (as ptp4l -S
  // serves CLOCK_REALTIME); a slave's starts on the raw time line and is
  // stepped by its servo.
  if (cfg.role == Role::kGm) cfg.initial_offset_ns = realtime_minus_raw_ns();
  TimeAwareSystem sys(cfg);
  RunnerStats st;
  const std::int64_t start = raw_now_ns();
  std::int64_t next_report = start + 1'000'000'000;
  std::array<std::uint8_t, 2048> buf{};
  std::uint64_t seen = 0, n = 0;
  double sum_sq = 0, max_abs = 0;
  for (;;) {
    if (stop && *stop) break;
    std::int64_t now = raw_now_ns();
    if (o.duration_s > 0 && static_cast<double>(now - start) >= o.duration_s * 1e9) break;
    if (TimePoint::from_ns(now) >= sys.next_deadline()) {
      sys.on_timer(TimePoint::from_ns(now));
      flush(sys, sock, o.tx_timestamp_timeout_ms, st);
    }
    if (now >= next_report) {
      next_report += 1'000'000'000;
      const std::int64_t raw = raw_now_ns();
      const std::int64_t real = realtime_now_ns();
      const double off = static_cast<double>(sys.clock().to_synced(raw) - real) + sys.clock().to_synced_fraction(raw);
      st.window_samples = n;
      st.window_rms_ns = n > 0 ? std::sqrt(sum_sq / static_cast<double>(n)) : 0.0;
      st.window_max_abs_ns = max_abs;
      n = 0;
      sum_sq = max_abs = 0;
      if (each_second) each_second(sys, static_cast<double>(raw - start) / 1e9, off, st);
    }
    now = raw_now_ns();
    const std::int64_t wake = std::min(sys.next_deadline().ns(), next_report);
    const int wait_ms = static_cast<int>(std::clamp<std::int64_t>((wake - now) / 1'000'000, 0, 100));
    pollfd p{sock.fd(), POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0 || (p.revents & POLLIN) == 0) continue;
    while (auto r = sock.receive(buf)) {
      ++st.frames_in;
      if (r->size < 14 + 4) continue;
      if (!r->has_timestamp) {
        ++st.rx_without_timestamp;
        continue;
      }
      ByteSpan body(buf.data() + 14, r->size - 14);
      // Trim the Ethernet pad of short frames (the codec refuses extra bytes).
      // A zero pad is trimmed; anything else reaches the codec whole and is
      // refused there (counted as malformed, trailing bytes).
      const std::size_t len = load_be16(body.data() + 2);
      if (len < body.size() && r->size <= 60 &&
          std::all_of(body.begin() + static_cast<std::ptrdiff_t>(len), body.end(), [](std::uint8_t b) { return b == 0; })) {
        body = body.first(len);
      }
      sys.receive(0, body, TimePoint::from_ns(r->rx_raw_ns));
      if (sys.status().samples != seen) {
        seen = sys.status().samples;
        const double x = sys.status().offset_ns;
        ++n;
        sum_sq += x * x;
        max_abs = std::max(max_abs, std::fabs(x));
      }
      flush(sys, sock, o.tx_timestamp_timeout_ms, st);
    }
  }
  return st;
}

}  // namespace layersec::ptp
