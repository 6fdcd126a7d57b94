#include "layersec/ptp/ptp_relay.h"

#include <poll.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "layersec/ptp/ptp_socket.h"
#include "layersec/ptp/raw_clock.h"

namespace layersec::ptp {
namespace {

SystemConfig relay_config(SystemConfig c, const std::vector<std::array<std::uint8_t, 6>>& macs,
                          std::size_t sink_count) {
  if (macs.size() < 2 || macs.size() > kMaxPorts) throw ConfigError("a relay needs 2..8 ports");
  if (sink_count != macs.size()) throw ConfigError("a relay needs one frame sink per port");
  c.port_count = macs.size();
  if (c.clock_identity == 0) c.clock_identity = clock_identity_from_mac(macs[0]);
  // A GM's clock starts at the host's time of day (as PtpPort). So does a
  // relay's under gptp: until it hears the GM's Announce (its port toward
  // the GM is not asCapable for the first peer-delay exchanges) the BMCA
  // makes it GM, and a slave behind it that took the raw time line from it
  // would later see the real GM's time ~10^18 ns away, beyond what its
  // servo steps once its first step is spent (measured: stuck at the
  // frequency limit, scripts/ptp_relay_measure.sh, 2026-12-06).
  if (c.role == Role::kGm || c.profile == Profile::kGptp) c.initial_offset_ns = realtime_minus_raw_ns();
  return c;
}

double median(std::vector<double>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double hi = *mid;
  const double lo = *std::max_element(v.begin(), mid);
  return (lo + hi) / 2;
}

}  // namespace

PtpRelay::PtpRelay(SystemConfig config, const std::vector<std::array<std::uint8_t, 6>>& macs,
                   std::vector<FrameSink> sinks)
    : sys_(relay_config(std::move(config), macs, sinks.size())),
      macs_(macs),
      sinks_(std::move(sinks)),
      last_sync_(macs.size()) {
  st_.ports.resize(macs.size());
}

void PtpRelay::flush(const std::optional<Upstream>& upstream) {
  std::array<std::uint8_t, kMaxFrameSize> frame{};
  while (!sys_.output().empty()) {
    const std::vector<Transmit> out = sys_.output();
    sys_.clear_output();
    for (const Transmit& t : out) {
      RelayPortStats& ps = st_.ports.at(t.port);
      const std::size_t n = encode_frame(t.message, macs_[t.port], frame);
      if (n == 0) continue;
      const SendOutcome r = sinks_[t.port](ByteSpan(frame.data(), n), t.event);
      if (!r.sent) {
        ++ps.send_errors;
        continue;
      }
      ++ps.frames_out;
      // A Sync emitted while a Follow_Up is being received carries the
      // upstream Sync on (the core sends its own Syncs only from on_timer).
      const bool forwarded = upstream && t.message.header.type == MessageType::kSync;
      if (forwarded) ++ps.syncs_forwarded;
      if (!t.event) continue;
      if (!r.tx_raw_ns) {
        ++ps.tx_timestamp_missed;
        continue;
      }
      if (forwarded) {
        residence_.push_back(static_cast<double>(*r.tx_raw_ns - upstream->sync_rx));
        after_follow_up_.push_back(static_cast<double>(*r.tx_raw_ns - upstream->follow_up_rx));
        ++st_.residence_samples;
      }
      sys_.tx_timestamp(t.port, t.message.header.type, t.message.header.sequence_id, TimePoint::from_ns(*r.tx_raw_ns));
    }
  }
}

void PtpRelay::count_rx_without_timestamp(std::size_t port) {
  RelayPortStats& ps = st_.ports.at(port);
  ++ps.frames_in;
  ++ps.rx_without_timestamp;
}

void PtpRelay::receive(std::size_t port, ByteSpan frame, std::int64_t rx_raw_ns) {
  ++st_.ports.at(port).frames_in;
  const std::optional<ByteSpan> body = frame_message(frame);
  if (!body) return;
  // The residence time needs the upstream Sync's RX time: remember each
  // Sync's (sequence id, RX time); its Follow_Up names the same sequence id.
  // A Sync the core refused (counted as a drop) is not remembered.
  std::optional<Upstream> upstream;
  bool is_sync = false;
  std::uint16_t seq = 0;
  LastSync& last = last_sync_[port];
  if (body->size() >= kHeaderSize) {
    const auto type = static_cast<MessageType>((*body)[0] & 0x0F);
    seq = load_be16(body->data() + 30);
    is_sync = type == MessageType::kSync;
    if (type == MessageType::kFollowUp && last.valid && last.seq == seq) upstream = Upstream{last.rx, rx_raw_ns};
  }
  const std::uint64_t drops_before = sys_.counters(port).drops.total();
  sys_.receive(port, *body, TimePoint::from_ns(rx_raw_ns));
  if (is_sync && sys_.counters(port).drops.total() == drops_before) last = LastSync{true, seq, rx_raw_ns};
  if (sys_.status().samples != seen_samples_) {
    seen_samples_ = sys_.status().samples;
    const double x = sys_.status().offset_ns;
    ++n_;
    sum_sq_ += x * x;
    max_abs_ = std::max(max_abs_, std::fabs(x));
    if (sys_.status().servo == ServoState::kJump) ++st_.clock_steps;
  }
  flush(upstream);
}

void PtpRelay::on_timer(std::int64_t now_raw_ns) {
  if (TimePoint::from_ns(now_raw_ns) < sys_.next_deadline()) return;
  sys_.on_timer(TimePoint::from_ns(now_raw_ns));
  flush(std::nullopt);
}

void PtpRelay::close_window() {
  st_.window_samples = n_;
  st_.window_rms_ns = n_ > 0 ? std::sqrt(sum_sq_ / static_cast<double>(n_)) : 0.0;
  st_.window_max_abs_ns = max_abs_;
  n_ = 0;
  sum_sq_ = max_abs_ = 0;
  st_.window_residence_samples = residence_.size();
  st_.window_residence_max_ns = residence_.empty() ? 0.0 : *std::max_element(residence_.begin(), residence_.end());
  st_.window_residence_p50_ns = residence_.empty() ? 0.0 : median(residence_);
  st_.window_after_follow_up_max_ns =
      after_follow_up_.empty() ? 0.0 : *std::max_element(after_follow_up_.begin(), after_follow_up_.end());
  st_.window_after_follow_up_p50_ns = after_follow_up_.empty() ? 0.0 : median(after_follow_up_);
  residence_.clear();
  after_follow_up_.clear();
}

RunnerStats PtpRelay::totals() const {
  RunnerStats r;
  for (const auto& p : st_.ports) {
    r.frames_in += p.frames_in;
    r.frames_out += p.frames_out;
    r.rx_without_timestamp += p.rx_without_timestamp;
    r.tx_timestamp_missed += p.tx_timestamp_missed;
    r.send_errors += p.send_errors;
  }
  r.clock_steps = st_.clock_steps;
  r.window_samples = st_.window_samples;
  r.window_rms_ns = st_.window_rms_ns;
  r.window_max_abs_ns = st_.window_max_abs_ns;
  return r;
}

nlohmann::json relay_status_json(const PtpRelay& relay, const std::vector<std::string>& names, double elapsed_s,
                                 double offset_to_realtime_ns) {
  using nlohmann::json;
  const TimeAwareSystem& sys = relay.system();
  const RelayStats& st = relay.stats();
  json j = status_json(sys, elapsed_s, offset_to_realtime_ns, relay.totals());
  json ports = json::array();
  for (std::size_t i = 0; i < relay.port_count(); ++i) {
    const PdelayInitiator& pd = sys.pdelay(i);
    const RelayPortStats& ps = st.ports[i];
    ports.push_back(json{{"name", i < names.size() ? names[i] : std::to_string(i)},
                         {"role", to_string(sys.port_role(i))},
                         {"path_delay_ns", pd.has_delay() ? json(pd.mean_link_delay_ns()) : json(nullptr)},
                         {"neighbor_rate_ratio", pd.rate_ratio_valid() ? json(pd.neighbor_rate_ratio()) : json(nullptr)},
                         {"as_capable", pd.as_capable()},
                         {"syncs_received", sys.counters(i).sync_accepted},
                         {"syncs_forwarded", ps.syncs_forwarded},
                         {"frames_in", ps.frames_in},
                         {"frames_out", ps.frames_out},
                         {"tx_timestamp_missed", ps.tx_timestamp_missed},
                         {"drops", port_drops_json(sys, i)}});
  }
  j["ports"] = std::move(ports);
  j["residence_ns"] = json{{"syncs", st.window_residence_samples},
                           {"p50", st.window_residence_samples > 0 ? json(st.window_residence_p50_ns) : json(nullptr)},
                           {"max", st.window_residence_samples > 0 ? json(st.window_residence_max_ns) : json(nullptr)},
                           {"after_follow_up_p50",
                            st.window_residence_samples > 0 ? json(st.window_after_follow_up_p50_ns) : json(nullptr)},
                           {"after_follow_up_max",
                            st.window_residence_samples > 0 ? json(st.window_after_follow_up_max_ns) : json(nullptr)}};
  return j;
}

RelayStats run_ptp_relay(const RelayOptions& o, const RelaySecondCallback& each_second,
                         const volatile std::sig_atomic_t* stop, std::vector<TimestampingInfo>* info_out) {
  std::vector<std::unique_ptr<PtpSocket>> socks;
  std::vector<std::array<std::uint8_t, 6>> macs;
  std::vector<FrameSink> sinks;
  for (const std::string& name : o.interfaces) {
    socks.push_back(std::make_unique<PtpSocket>(name));
    PtpSocket* s = socks.back().get();
    macs.push_back(s->mac());
    if (info_out) info_out->push_back(s->timestamping());
    sinks.push_back(socket_sink(*s, o.tx_timestamp_timeout_ms));
  }
  PtpRelay relay(o.system, macs, std::move(sinks));
  std::vector<pollfd> fds(socks.size());
  for (std::size_t i = 0; i < socks.size(); ++i) fds[i] = pollfd{socks[i]->fd(), POLLIN, 0};
  const std::int64_t start = raw_now_ns();
  std::int64_t next_report = start + 1'000'000'000;
  std::array<std::uint8_t, 2048> buf{};
  for (;;) {
    if (stop && *stop) break;
    std::int64_t now = raw_now_ns();
    if (o.duration_s > 0 && static_cast<double>(now - start) >= o.duration_s * 1e9) break;
    relay.on_timer(now);
    if (now >= next_report) {
      next_report += 1'000'000'000;
      relay.close_window();
      const double off = synced_minus_realtime_ns(relay.system());
      if (each_second) each_second(relay, static_cast<double>(raw_now_ns() - start) / 1e9, off);
    }
    now = raw_now_ns();
    const std::int64_t wake = std::min(relay.next_deadline_ns(), next_report);
    const int wait_ms = static_cast<int>(std::clamp<std::int64_t>((wake - now) / 1'000'000, 0, 100));
    for (auto& p : fds) p.revents = 0;
    if (::poll(fds.data(), fds.size(), wait_ms) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      while (auto r = socks[i]->receive(buf)) {
        if (!r->has_timestamp) {
          relay.count_rx_without_timestamp(i);
          continue;
        }
        relay.receive(i, ByteSpan(buf.data(), r->size), r->rx_raw_ns);
      }
    }
  }
  return relay.stats();
}

}  // namespace layersec::ptp
