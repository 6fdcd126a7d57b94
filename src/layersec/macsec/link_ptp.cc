#include "layersec/macsec/link_ptp.h"

#include <algorithm>
#include <cstring>

#include "layersec/ptp/message.h"
#include "layersec/ptp/raw_clock.h"

namespace layersec::macsec {
namespace {

// An untagged frame with EtherType 0x88F7 (802.1AS: gPTP frames carry no tag).
bool is_gptp(ByteSpan frame) { return frame.size() >= 14 && load_be16(frame.data() + 12) == ptp::kEtherType; }

bool to_gptp_group(ByteSpan frame) {
  return std::memcmp(frame.data(), ptp::kPdelayMulticast.data(), ptp::kPdelayMulticast.size()) == 0;
}

}  // namespace

const char* to_string(PtpFrameVerdict v) {
  switch (v) {
    case PtpFrameVerdict::kNotPtp: return "not_ptp";
    case PtpFrameVerdict::kToPort: return "to_port";
    case PtpFrameVerdict::kRefusedPlain: return "refused_plain";
    case PtpFrameVerdict::kRefusedProtected: return "refused_protected";
    case PtpFrameVerdict::kRefusedDestination: return "refused_destination";
  }
  return "?";
}

PtpFrameVerdict classify_lower_frame(ByteSpan wire, bool protect) {
  if (!is_gptp(wire)) return PtpFrameVerdict::kNotPtp;
  if (protect) return PtpFrameVerdict::kRefusedPlain;
  return to_gptp_group(wire) ? PtpFrameVerdict::kToPort : PtpFrameVerdict::kRefusedDestination;
}

PtpFrameVerdict classify_verified_frame(ByteSpan plain, bool protect) {
  if (!is_gptp(plain)) return PtpFrameVerdict::kNotPtp;
  if (!protect) return PtpFrameVerdict::kRefusedProtected;
  return to_gptp_group(plain) ? PtpFrameVerdict::kToPort : PtpFrameVerdict::kRefusedDestination;
}

nlohmann::json to_json(const LinkPtpStats& s) {
  return nlohmann::json{{"rx_plain", s.rx_plain},
                        {"rx_protected", s.rx_protected},
                        {"rx_plain_refused", s.rx_plain_refused},
                        {"rx_protected_refused", s.rx_protected_refused},
                        {"rx_bad_destination", s.rx_bad_destination},
                        {"tx_no_sa", s.tx_no_sa},
                        {"tx_protect_errors", s.tx_protect_errors}};
}

std::optional<ByteSpan> gptp_wire_frame(MacsecLink& link, bool protect, ByteSpan frame, LinkPtpStats& stats) {
  if (!protect) return frame;
  auto secure = link.protect_checked(frame);
  if (!secure) {
    ++(secure.error() == ProtectError::kNoTransmitSa ? stats.tx_no_sa : stats.tx_protect_errors);
    return std::nullopt;
  }
  return *secure;
}

// ------------------------------------------------------------------ LinkPtp

LinkPtp::LinkPtp(const LinkPtpConfig& config, MacsecLink& link, const std::string& lower, const net::MacAddress& mac)
    : link_(link),
      protect_(config.protect),
      tx_timeout_ms_(config.tx_timestamp_timeout_ms),
      socket_(lower, ptp::PtpSocket::Mode::kSendOnly),
      port_(config.system, mac.bytes, [this](ByteSpan frame, bool event) { return send(frame, event); }),
      start_raw_ns_(ptp::raw_now_ns()) {}

LinkPtp::~LinkPtp() { detach(); }

ptp::SendOutcome LinkPtp::send(ByteSpan frame, bool event) {
  // A secure frame is a view into the link's buffer, valid until its next
  // protect(): it is sent and its timestamp matched before that.
  const auto wire_frame = gptp_wire_frame(link_, protect_, frame, stats_);
  if (!wire_frame) return {};
  const ByteSpan wire = *wire_frame;
  ptp::SendOutcome r;
  r.sent = socket_.send(wire);
  if (protect_) link_.count_send(r.sent);
  if (r.sent && event) r.tx_raw_ns = socket_.tx_timestamp_of(wire, tx_timeout_ms_);
  return r;
}

void LinkPtp::deliver(ByteSpan frame, std::int64_t rx_realtime_ns) {
  if (rx_realtime_ns == 0) {
    ++port_.stats().frames_in;
    ++port_.stats().rx_without_timestamp;
    return;
  }
  port_.receive(frame, ptp::raw_from_realtime(rx_realtime_ns));
  after_port_ran();
}

void LinkPtp::after_port_ran() {
  if (port_.stats().clock_steps != steps_seen_) {
    steps_seen_ = port_.stats().clock_steps;
    if (on_step_) on_step_();
  }
  rearm();
}

bool LinkPtp::take(PtpFrameVerdict verdict, ByteSpan frame, std::int64_t rx_realtime_ns, std::uint64_t& accepted) {
  switch (verdict) {
    case PtpFrameVerdict::kNotPtp: return false;
    case PtpFrameVerdict::kToPort:
      ++accepted;
      deliver(frame, rx_realtime_ns);
      return true;
    case PtpFrameVerdict::kRefusedPlain: ++stats_.rx_plain_refused; return true;
    case PtpFrameVerdict::kRefusedDestination: ++stats_.rx_bad_destination; return true;
    case PtpFrameVerdict::kRefusedProtected: ++stats_.rx_protected_refused; return true;
  }
  return true;
}

bool LinkPtp::on_lower(ByteSpan wire, std::int64_t rx_realtime_ns) {
  return take(classify_lower_frame(wire, protect_), wire, rx_realtime_ns, stats_.rx_plain);
}

bool LinkPtp::on_verified(ByteSpan plain, std::int64_t rx_realtime_ns) {
  return take(classify_verified_frame(plain, protect_), plain, rx_realtime_ns, stats_.rx_protected);
}

std::vector<std::uint16_t> LinkPtp::lower_ether_types() const { return {ptp::kEtherType}; }

void LinkPtp::attach(net::EventLoop& loop) {
  loop_ = &loop;
  rearm();
}

void LinkPtp::detach() {
  if (loop_ && timer_) loop_->cancel_timer(*timer_);
  timer_.reset();
  loop_ = nullptr;
}

void LinkPtp::rearm() {
  if (!loop_) return;
  if (timer_) loop_->cancel_timer(*timer_);
  timer_.reset();
  const std::int64_t deadline = port_.next_deadline_ns();
  if (deadline == TimePoint::max().ns()) return;
  // The core's deadlines are on CLOCK_MONOTONIC_RAW, the loop's timers on
  // CLOCK_MONOTONIC: convert as a delay from now.
  const std::int64_t in = std::max<std::int64_t>(deadline - ptp::raw_now_ns(), 0);
  timer_ = loop_->add_timer_in(Duration::nanoseconds(in), [this] {
    timer_.reset();
    port_.on_timer(ptp::raw_now_ns());
    after_port_ran();
  });
}

nlohmann::json LinkPtp::second_json() {
  port_.close_window();
  const double elapsed = static_cast<double>(ptp::raw_now_ns() - start_raw_ns_) / 1e9;
  nlohmann::json j = ptp::status_json(port_.system(), elapsed, ptp::synced_minus_realtime_ns(port_.system()),
                                      port_.stats());
  j["protect"] = protect_;
  j["link"] = to_json(stats_);
  return j;
}

nlohmann::json LinkPtp::counters_json() const {
  const ptp::RunnerStats& s = port_.stats();
  nlohmann::json j = to_json(stats_);
  j["protect"] = protect_;
  j["frames_in"] = s.frames_in;
  j["frames_out"] = s.frames_out;
  j["rx_without_timestamp"] = s.rx_without_timestamp;
  j["tx_timestamp_missed"] = s.tx_timestamp_missed;
  j["send_errors"] = s.send_errors;
  j["clock_steps"] = s.clock_steps;
  j["state"] = port_.system().state();
  j["syncs"] = port_.system().counters(0).sync_accepted;
  return j;
}

}  // namespace layersec::macsec
