#include "layersec/ptp/ptp_runner.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "layersec/ptp/raw_clock.h"

namespace layersec::ptp {
namespace {

SystemConfig one_port(SystemConfig c, const std::array<std::uint8_t, 6>& mac) {
  c.port_count = 1;
  if (c.clock_identity == 0) c.clock_identity = clock_identity_from_mac(mac);
  // A GM's layersec clock starts at the host's time of day (as ptp4l -S
  // serves CLOCK_REALTIME); a slave's starts on the raw time line and is
  // stepped by its servo.
  if (c.role == Role::kGm) c.initial_offset_ns = realtime_minus_raw_ns();
  return c;
}

}  // namespace

std::optional<ByteSpan> frame_message(ByteSpan frame) {
  if (frame.size() < 14 + 4) return std::nullopt;
  ByteSpan body = frame.subspan(14);
  // Trim the Ethernet pad of short frames (the codec refuses extra bytes).
  // A zero pad is trimmed; anything else reaches the codec whole and is
  // refused there (counted as malformed, trailing bytes).
  const std::size_t len = load_be16(body.data() + 2);
  if (len < body.size() && frame.size() <= 60 &&
      std::all_of(body.begin() + static_cast<std::ptrdiff_t>(len), body.end(), [](std::uint8_t b) { return b == 0; })) {
    body = body.first(len);
  }
  return body;
}

// ------------------------------------------------------------------ PtpPort

PtpPort::PtpPort(SystemConfig config, const std::array<std::uint8_t, 6>& mac, FrameSink sink)
    : sys_(one_port(std::move(config), mac)), mac_(mac), sink_(std::move(sink)) {}

void PtpPort::flush() {
  std::array<std::uint8_t, kMaxFrameSize> frame{};
  while (!sys_.output().empty()) {
    const std::vector<Transmit> out = sys_.output();
    sys_.clear_output();
    for (const Transmit& t : out) {
      const std::size_t n = encode_frame(t.message, mac_, frame);
      if (n == 0) continue;
      const SendOutcome r = sink_(ByteSpan(frame.data(), n), t.event);
      if (!r.sent) {
        ++st_.send_errors;
        continue;
      }
      ++st_.frames_out;
      if (!t.event) continue;
      if (r.tx_raw_ns) {
        sys_.tx_timestamp(t.port, t.message.header.type, t.message.header.sequence_id, TimePoint::from_ns(*r.tx_raw_ns));
      } else {
        ++st_.tx_timestamp_missed;
      }
    }
  }
}

void PtpPort::receive(ByteSpan frame, std::int64_t rx_raw_ns) {
  ++st_.frames_in;
  const std::optional<ByteSpan> body = frame_message(frame);
  if (!body) return;
  sys_.receive(0, *body, TimePoint::from_ns(rx_raw_ns));
  if (sys_.status().samples != seen_samples_) {
    seen_samples_ = sys_.status().samples;
    const double x = sys_.status().offset_ns;
    ++n_;
    sum_sq_ += x * x;
    max_abs_ = std::max(max_abs_, std::fabs(x));
    if (sys_.status().servo == ServoState::kJump) ++st_.clock_steps;
  }
  flush();
}

void PtpPort::on_timer(std::int64_t now_raw_ns) {
  if (TimePoint::from_ns(now_raw_ns) < sys_.next_deadline()) return;
  sys_.on_timer(TimePoint::from_ns(now_raw_ns));
  flush();
}

void PtpPort::close_window() {
  st_.window_samples = n_;
  st_.window_rms_ns = n_ > 0 ? std::sqrt(sum_sq_ / static_cast<double>(n_)) : 0.0;
  st_.window_max_abs_ns = max_abs_;
  n_ = 0;
  sum_sq_ = max_abs_ = 0;
}

// ------------------------------------------------------------------ reports

double synced_minus_realtime_ns(const TimeAwareSystem& sys) {
  const std::int64_t raw = raw_now_ns();
  const std::int64_t real = realtime_now_ns();
  return static_cast<double>(sys.clock().to_synced(raw) - real) + sys.clock().to_synced_fraction(raw);
}

nlohmann::json port_drops_json(const TimeAwareSystem& sys, std::size_t port) {
  nlohmann::json drops = nlohmann::json::object();
  const auto& c = sys.counters(port);
  for (std::size_t i = 0; i < kDropReasonCount; ++i) {
    if (c.drops.by_reason[i] != 0) drops[to_string(static_cast<DropReason>(i))] = c.drops.by_reason[i];
  }
  for (std::size_t i = 0; i < kParseErrorCount; ++i) {
    if (c.malformed[i] != 0) drops[std::string("malformed.") + to_string(static_cast<ParseError>(i))] = c.malformed[i];
  }
  return drops;
}

nlohmann::json status_json(const TimeAwareSystem& sys, double elapsed_s, double offset_to_realtime_ns,
                           const RunnerStats& rs) {
  using nlohmann::json;
  const auto& st = sys.status();
  const bool slave = !sys.is_grandmaster() && st.valid;
  json drops = port_drops_json(sys, 0);
  char gm[17];
  std::snprintf(gm, sizeof gm, "%016llx", static_cast<unsigned long long>(sys.grandmaster_identity()));
  return json{{"t_s", elapsed_s},
              {"state", sys.state()},
              {"offset_ns", slave ? json(st.offset_ns) : json(nullptr)},
              {"path_delay_ns", sys.pdelay(0).has_delay() ? json(sys.pdelay(0).mean_link_delay_ns()) : json(nullptr)},
              {"rate_ratio", slave ? st.rate_ratio : 1.0},
              {"offset_rms_ns", rs.window_samples > 0 ? json(rs.window_rms_ns) : json(nullptr)},
              {"offset_max_ns", rs.window_samples > 0 ? json(rs.window_max_abs_ns) : json(nullptr)},
              {"freq_ppb", sys.clock().frequency_ppb()},
              {"servo", to_string(st.servo)},
              {"as_capable", sys.pdelay(0).as_capable()},
              {"operational_intervals", sys.operational_intervals()},
              {"offset_to_realtime_ns", slave || sys.is_grandmaster() ? json(offset_to_realtime_ns) : json(nullptr)},
              {"grandmaster", gm},
              {"syncs", sys.counters(0).sync_accepted},
              {"clock_steps", rs.clock_steps},
              {"drops", std::move(drops)}};
}

// ------------------------------------------------------------------ run_ptp

FrameSink socket_sink(PtpSocket& sock, int tx_timestamp_timeout_ms) {
  return [&sock, tx_timestamp_timeout_ms](ByteSpan frame, bool event) {
    SendOutcome r;
    r.sent = sock.send(frame);
    if (r.sent && event) {
      // The message type (low nibble of octet 0) and sequence id (octets
      // 30-31) of the PTP message after the 14-octet Ethernet header.
      r.tx_raw_ns = sock.tx_timestamp(static_cast<MessageType>(frame[14] & 0x0F), load_be16(frame.data() + 14 + 30),
                                      tx_timestamp_timeout_ms);
    }
    return r;
  };
}

RunnerStats run_ptp(const RunnerOptions& o, const SecondCallback& each_second, const volatile std::sig_atomic_t* stop,
                    TimestampingInfo* info_out) {
  PtpSocket sock(o.interface);
  if (info_out) *info_out = sock.timestamping();
  PtpPort port(o.system, sock.mac(), socket_sink(sock, o.tx_timestamp_timeout_ms));
  const std::int64_t start = raw_now_ns();
  std::int64_t next_report = start + 1'000'000'000;
  std::array<std::uint8_t, 2048> buf{};
  for (;;) {
    if (stop && *stop) break;
    std::int64_t now = raw_now_ns();
    if (o.duration_s > 0 && static_cast<double>(now - start) >= o.duration_s * 1e9) break;
    port.on_timer(now);
    if (now >= next_report) {
      next_report += 1'000'000'000;
      port.close_window();
      const double off = synced_minus_realtime_ns(port.system());
      if (each_second) each_second(port.system(), static_cast<double>(raw_now_ns() - start) / 1e9, off, port.stats());
    }
    now = raw_now_ns();
    const std::int64_t wake = std::min(port.next_deadline_ns(), next_report);
    const int wait_ms = static_cast<int>(std::clamp<std::int64_t>((wake - now) / 1'000'000, 0, 100));
    pollfd p{sock.fd(), POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0 || (p.revents & POLLIN) == 0) continue;
    while (auto r = sock.receive(buf)) {
      if (!r->has_timestamp) {
        ++port.stats().frames_in;
        ++port.stats().rx_without_timestamp;
        continue;
      }
      port.receive(ByteSpan(buf.data(), r->size), r->rx_raw_ns);
    }
  }
  return port.stats();
}

}  // namespace layersec::ptp
