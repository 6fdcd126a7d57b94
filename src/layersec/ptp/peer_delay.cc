#include "layersec/ptp/peer_delay.h"

#include <algorithm>
#include <cmath>

namespace layersec::ptp {

Duration interval_of(std::int8_t log_interval) {
  const int l = std::clamp<int>(log_interval, -30, 30);
  if (l >= 0) return Duration::seconds(std::int64_t{1} << l);
  return Duration::nanoseconds(1'000'000'000 >> -l);
}

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::kMalformed: return "malformed";
    case DropReason::kWrongDomain: return "wrong_domain";
    case DropReason::kWrongSequence: return "wrong_sequence";
    case DropReason::kBadCorrection: return "bad_correction";
    case DropReason::kSecondGm: return "second_gm";
    case DropReason::kOwnMessage: return "own_message";
    case DropReason::kWrongRole: return "wrong_role";
    case DropReason::kNotAsCapable: return "not_as_capable";
    case DropReason::kPathTraceLoop: return "path_trace_loop";
    case DropReason::kAnnounceDisabled: return "announce_disabled";
    case DropReason::kBadInterval: return "bad_interval";
    case DropReason::kBadRateRatio: return "bad_rate_ratio";
    case DropReason::kInferiorAnnounce: return "inferior_announce";
  }
  return "?";
}

std::uint64_t DropCounters::total() const {
  std::uint64_t n = 0;
  for (auto v : by_reason) n += v;
  return n;
}

bool plausible_correction(std::int64_t correction) { return correction >= 0 && correction <= kMaxCorrection; }

Header make_header(MessageType type, const PortIdentity& source, std::uint16_t sequence_id, std::int8_t log_interval,
                   std::uint8_t minor_version) {
  Header h;
  h.type = type;
  h.minor_version = minor_version;
  h.source = source;
  h.sequence_id = sequence_id;
  h.log_interval = log_interval;
  switch (type) {
    case MessageType::kSync: h.control = 0; h.flags = kFlagTwoStep; break;
    case MessageType::kFollowUp: h.control = 2; break;
    case MessageType::kPdelayResp: h.control = 5; h.flags = kFlagTwoStep; break;
    default: h.control = 5; break;
  }
  return h;
}

PdelayInitiator::PdelayInitiator(const PortIdentity& self, const PdelayConfig& config) : self_(self), config_(config) {
  config_.rate_window = std::clamp<std::size_t>(config_.rate_window, 2, rate_ring_.size());
  config_.delay_filter = std::clamp<std::size_t>(config_.delay_filter, 1, delays_.size());
}

TimePoint PdelayInitiator::next_deadline() const {
  if (!config_.enabled) return TimePoint::max();
  return started_ ? next_ : TimePoint{};
}

std::optional<Message> PdelayInitiator::on_timer(TimePoint now) {
  if (!config_.enabled) return std::nullopt;
  if (started_ && now < next_) return std::nullopt;
  if (started_ && outstanding_) {
    ++lost_;  // §11.2.19.3.2: the previous request got no complete answer
  }
  started_ = true;
  next_ = now + interval_of(config_.log_interval);
  ++seq_;
  outstanding_ = true;
  have_t1_ = have_resp_ = false;
  Message m;
  m.header = make_header(MessageType::kPdelayReq, self_, seq_, config_.log_interval, config_.minor_version);
  return m;
}

void PdelayInitiator::on_req_sent(std::uint16_t sequence_id, TimePoint t1) {
  if (!outstanding_ || sequence_id != seq_) return;
  t1_ = t1.ns();
  have_t1_ = true;
}

void PdelayInitiator::set_log_interval(std::int8_t log_interval, TimePoint now) {
  config_.log_interval = log_interval;
  if (started_) next_ = std::min(next_, now + interval_of(log_interval));
}

std::optional<DropReason> PdelayInitiator::on_resp(const Message& resp, TimePoint t4) {
  if (resp.header.source.clock_identity == self_.clock_identity) {
    drops_.count(DropReason::kOwnMessage);
    return DropReason::kOwnMessage;
  }
  if (!outstanding_ || !have_t1_ || resp.header.sequence_id != seq_ || !(resp.port == self_) || have_resp_) {
    drops_.count(DropReason::kWrongSequence);
    return DropReason::kWrongSequence;
  }
  if (!plausible_correction(resp.header.correction)) {
    drops_.count(DropReason::kBadCorrection);
    return DropReason::kBadCorrection;
  }
  t2_ = to_ns(resp.timestamp);
  t4_ = t4.ns();
  c1_ = resp.header.correction;
  responder_ = resp.header.source;
  have_resp_ = true;
  return std::nullopt;
}

std::optional<DropReason> PdelayInitiator::on_resp_follow_up(const Message& fu) {
  if (!outstanding_ || !have_resp_ || fu.header.sequence_id != seq_ || !(fu.port == self_) ||
      !(fu.header.source == responder_)) {
    drops_.count(DropReason::kWrongSequence);
    return DropReason::kWrongSequence;
  }
  if (!plausible_correction(fu.header.correction)) {
    drops_.count(DropReason::kBadCorrection);
    return DropReason::kBadCorrection;
  }
  const double t3c = static_cast<double>(to_ns(fu.timestamp)) +
                     static_cast<double>(c1_ + fu.header.correction) / kCorrectionScale;
  // neighborRateRatio over the window (§11.2.19.3.3).
  rate_ring_[rate_head_] = {t3c, t4_};
  rate_head_ = (rate_head_ + 1) % config_.rate_window;
  rate_count_ = std::min(rate_count_ + 1, config_.rate_window);
  if (rate_count_ >= 2) {
    const std::size_t oldest = rate_count_ < config_.rate_window ? 0 : rate_head_;
    const std::size_t newest = (rate_head_ + config_.rate_window - 1) % config_.rate_window;
    const double dt4 = static_cast<double>(rate_ring_[newest].second - rate_ring_[oldest].second);
    const double dt3 = rate_ring_[newest].first - rate_ring_[oldest].first;
    if (dt4 > 0) {
      const double r = dt3 / dt4;
      if (std::isfinite(r) && std::fabs(r - 1.0) <= kMaxRateOffset) {
        nrr_ = r;
        nrr_valid_ = true;
      } else {
        drops_.count(DropReason::kBadRateRatio);
        rate_count_ = 1;  // restart the window from this exchange
        rate_ring_[0] = {t3c, t4_};
        rate_head_ = 1 % config_.rate_window;
      }
    }
  }
  const double d = (nrr_ * static_cast<double>(t4_ - t1_) - (t3c - static_cast<double>(t2_))) / 2.0;
  delays_[delay_head_] = d;
  delay_head_ = (delay_head_ + 1) % config_.delay_filter;
  delay_count_ = std::min(delay_count_ + 1, config_.delay_filter);
  std::array<double, 32> sorted{};
  std::copy_n(delays_.begin(), delay_count_, sorted.begin());
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(delay_count_));
  mean_link_delay_ns_ = delay_count_ % 2 == 1 ? sorted[delay_count_ / 2]
                                              : (sorted[delay_count_ / 2 - 1] + sorted[delay_count_ / 2]) / 2.0;
  complete();
  return std::nullopt;
}

void PdelayInitiator::complete() {
  outstanding_ = false;
  lost_ = 0;
  ++exchanges_;
}

bool PdelayInitiator::as_capable() const {
  if (config_.as_capable_from_config) return true;
  if (!config_.enabled || delay_count_ == 0 || !nrr_valid_) return false;
  if (lost_ > config_.allowed_lost_responses) return false;
  return mean_link_delay_ns_ <= static_cast<double>(config_.neighbor_prop_delay_thresh_ns) &&
         mean_link_delay_ns_ >= static_cast<double>(config_.min_delay_ns);
}

Message PdelayResponder::on_req(const Message& req, TimePoint t2) {
  Message m;
  m.header = make_header(MessageType::kPdelayResp, self_, req.header.sequence_id, 0x7F, minor_version_);
  m.header.domain = req.header.domain;
  m.timestamp = from_ns(std::max<std::int64_t>(t2.ns(), 0));
  m.port = req.header.source;
  pending_ = true;
  pending_seq_ = req.header.sequence_id;
  pending_requester_ = req.header.source;
  return m;
}

std::optional<Message> PdelayResponder::on_resp_sent(std::uint16_t sequence_id, TimePoint t3) {
  if (!pending_ || sequence_id != pending_seq_) return std::nullopt;
  pending_ = false;
  Message m;
  m.header = make_header(MessageType::kPdelayRespFollowUp, self_, sequence_id, 0x7F, minor_version_);
  m.timestamp = from_ns(std::max<std::int64_t>(t3.ns(), 0));
  m.port = pending_requester_;
  return m;
}

}  // namespace layersec::ptp
