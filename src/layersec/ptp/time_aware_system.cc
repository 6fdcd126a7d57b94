#include "layersec/ptp/time_aware_system.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace layersec::ptp {
namespace {

bool interval_in_range(std::int8_t v) { return v >= -8 && v <= 8; }

// A requested interval (§10.6.4.3.6): no change, initial, stop, or -8..8.
bool request_valid(std::int8_t v) {
  return v == kIntervalNoChange || v == kIntervalInitial || v == kIntervalStop || interval_in_range(v);
}

constexpr PortIdentity kWildcardPort{0xFFFFFFFFFFFFFFFFULL, 0xFFFF};

}  // namespace

const char* to_string(PortRole r) {
  switch (r) {
    case PortRole::kDisabled: return "disabled";
    case PortRole::kMaster: return "master";
    case PortRole::kSlave: return "slave";
  }
  return "?";
}

TimeAwareSystem::TimeAwareSystem(const SystemConfig& config)
    : config_(config), clock_(config.initial_offset_ns), servo_(config.servo) {
  if (config_.port_count < 1 || config_.port_count > kMaxPorts) throw ConfigError("port_count must be 1..8");
  if (config_.clock_identity == 0) throw ConfigError("clock_identity must not be zero");
  if (!interval_in_range(config_.log_sync_interval)) throw ConfigError("log_sync_interval must be -8..8");
  if (!interval_in_range(config_.log_announce_interval)) throw ConfigError("log_announce_interval must be -8..8");
  if (!interval_in_range(config_.pdelay.log_interval)) throw ConfigError("pdelay log_interval must be -8..8");
  if (!interval_in_range(config_.oper_log_sync_interval) || !interval_in_range(config_.oper_log_pdelay_interval)) {
    throw ConfigError("operational intervals must be -8..8");
  }
  if (config_.sync_receipt_timeout == 0 || config_.announce_receipt_timeout == 0) {
    throw ConfigError("receipt timeouts must be at least 1");
  }
  if (!std::isfinite(config_.offset_threshold_ns) || config_.offset_threshold_ns < 0) {
    throw ConfigError("offset_threshold_ns must be finite and >= 0");
  }
  if (config_.minor_version > 1) throw ConfigError("minor_version must be 0 or 1");
  if (config_.profile == Profile::kAutomotive && config_.role == Role::kAuto) {
    throw ConfigError("the automotive profile needs a static role (gm or slave)");
  }
  PdelayConfig pd = config_.pdelay;
  pd.minor_version = config_.minor_version;
  if (config_.profile == Profile::kAutomotive) {
    pd.as_capable_from_config = true;
    if (config_.role == Role::kGm) pd.enabled = false;  // inhibit_delay_req
  }
  ports_.reserve(config_.port_count);
  for (std::size_t i = 0; i < config_.port_count; ++i) {
    ports_.emplace_back(PortIdentity{config_.clock_identity, static_cast<std::uint16_t>(i + 1)}, pd,
                        config_.minor_version);
    ports_.back().log_sync_interval = config_.log_sync_interval;
    ports_.back().log_announce_interval = config_.log_announce_interval;
  }
  out_.reserve(4 * config_.port_count);
  gm_vector_ = own_vector();
  if (config_.profile == Profile::kAutomotive || config_.role == Role::kGm) apply_static_roles();
}

void TimeAwareSystem::apply_static_roles() {
  if (config_.role == Role::kGm) {
    for (auto& p : ports_) p.role = PortRole::kMaster;
    grandmaster_ = true;
    gm_vector_ = own_vector();
    return;
  }
  ports_[0].role = PortRole::kSlave;
  for (std::size_t i = 1; i < ports_.size(); ++i) ports_[i].role = PortRole::kMaster;
}

PriorityVector TimeAwareSystem::own_vector() const {
  PriorityVector v;
  v.priority1 = config_.priority1;
  v.quality = config_.quality;
  v.priority2 = config_.priority2;
  v.grandmaster_identity = config_.clock_identity;
  v.steps_removed = 0;
  v.source = PortIdentity{config_.clock_identity, 0};
  return v;
}

const char* TimeAwareSystem::state() const {
  if (grandmaster_) return "gm";
  for (const auto& p : ports_) {
    if (p.role != PortRole::kSlave) continue;
    if (!status_.valid || status_.servo == ServoState::kUnlocked) return "uncalibrated";
    return ports_.size() > 1 ? "relay" : "slave";
  }
  return "listening";
}

std::uint64_t TimeAwareSystem::grandmaster_identity() const {
  if (config_.profile == Profile::kAutomotive && !grandmaster_) {
    return ports_[0].followed ? ports_[0].followed->clock_identity : 0;
  }
  return gm_vector_.grandmaster_identity;
}

bool TimeAwareSystem::as_capable(const Port& p) const { return p.initiator.as_capable(); }

void TimeAwareSystem::emit(std::size_t port, const Message& m, bool event) {
  Transmit t;
  t.port = port;
  t.message = m;
  t.event = event;
  out_.push_back(t);
  ++ports_[port].counters.tx;
}

void TimeAwareSystem::receive(std::size_t port, ByteSpan bytes, TimePoint rx) {
  Port& p = ports_.at(port);
  auto m = parse_message(bytes);
  if (!m) {
    ++p.counters.rx;
    ++p.counters.malformed[static_cast<std::size_t>(m.error())];
    drop(p, DropReason::kMalformed);
    return;
  }
  receive(port, *m, rx);
}

void TimeAwareSystem::receive(std::size_t index, const Message& m, TimePoint rx) {
  Port& p = ports_.at(index);
  ++p.counters.rx;
  const MessageType type = m.header.type;
  if (m.header.source.clock_identity == config_.clock_identity) {
    drop(p, DropReason::kOwnMessage);
    return;
  }
  switch (type) {
    case MessageType::kPdelayReq:
      emit(index, p.responder.on_req(m, rx), true);
      return;
    case MessageType::kPdelayResp:
      if (auto r = p.initiator.on_resp(m, rx)) drop(p, *r);
      return;
    case MessageType::kPdelayRespFollowUp:
      if (auto r = p.initiator.on_resp_follow_up(m)) drop(p, *r);
      return;
    default: break;
  }
  if (m.header.domain != config_.domain) {
    drop(p, DropReason::kWrongDomain);
    return;
  }
  switch (type) {
    case MessageType::kSync: on_sync(p, index, m, rx); break;
    case MessageType::kFollowUp: on_follow_up(p, index, m); break;
    case MessageType::kAnnounce: on_announce(p, m, rx); break;
    case MessageType::kSignaling: on_signaling(p, m, rx); break;
    default: break;
  }
}

void TimeAwareSystem::on_sync(Port& p, std::size_t, const Message& m, TimePoint rx) {
  if (p.role != PortRole::kSlave) return drop(p, DropReason::kWrongRole);
  if (!as_capable(p)) return drop(p, DropReason::kNotAsCapable);
  if (config_.profile == Profile::kAutomotive) {
    if (p.followed && !(*p.followed == m.header.source)) return drop(p, DropReason::kSecondGm);
  } else if (!p.announced.valid || !(p.announced.vector.source == m.header.source)) {
    return drop(p, DropReason::kSecondGm);
  }
  if (!plausible_correction(m.header.correction)) return drop(p, DropReason::kBadCorrection);
  if (config_.profile == Profile::kAutomotive && !p.followed) p.followed = m.header.source;
  p.pending.valid = true;
  p.pending.seq = m.header.sequence_id;
  p.pending.source = m.header.source;
  p.pending.rx = rx.ns();
  p.pending.correction = m.header.correction;
  p.pending.log_interval = std::clamp<std::int8_t>(m.header.log_interval, -8, 8);
  p.sync_deadline = rx + interval_of(p.pending.log_interval) * config_.sync_receipt_timeout;
}

void TimeAwareSystem::on_follow_up(Port& p, std::size_t index, const Message& m) {
  if (p.role != PortRole::kSlave) return drop(p, DropReason::kWrongRole);
  if (!p.pending.valid || m.header.sequence_id != p.pending.seq || !(m.header.source == p.pending.source)) {
    return drop(p, DropReason::kWrongSequence);
  }
  if (!plausible_correction(m.header.correction) ||
      !plausible_correction(m.header.correction + p.pending.correction)) {
    return drop(p, DropReason::kBadCorrection);
  }
  const double upstream_rr = 1.0 + m.follow_up.cumulative_scaled_rate_offset / kRateOffsetScale;
  if (std::fabs(upstream_rr - 1.0) > kMaxRateOffset) return drop(p, DropReason::kBadRateRatio);
  p.pending.valid = false;
  ++p.counters.sync_accepted;

  const double nrr = p.initiator.rate_ratio_valid() ? p.initiator.neighbor_rate_ratio() : 1.0;
  const double delay = p.initiator.has_delay() ? p.initiator.mean_link_delay_ns() : 0.0;
  SyncInfo info;
  info.origin = m.timestamp;
  // §11.2.14.2: the link delay is in the neighbour's time base; · rateRatio_upstream gives GM time.
  info.correction_ns =
      static_cast<double>(p.pending.correction + m.header.correction) / kCorrectionScale + delay * upstream_rr;
  info.rx = p.pending.rx;
  info.rate_ratio = upstream_rr * nrr;
  info.follow_up = m.follow_up;

  const double offset = static_cast<double>(clock_.to_synced(info.rx) - to_ns(info.origin)) +
                        clock_.to_synced_fraction(info.rx) - info.correction_ns;
  servo_.set_interval(interval_of(p.pending.log_interval).s());
  const ServoOutput s = servo_.sample(offset, info.rx);
  if (s.state == ServoState::kJump) clock_.step(s.step_ns);
  if (s.state != ServoState::kUnlocked) clock_.set_frequency_ppb(s.frequency_ppb, info.rx);
  status_.valid = true;
  status_.offset_ns = offset;
  status_.path_delay_ns = delay;
  status_.rate_ratio = info.rate_ratio;
  status_.frequency_ppb = clock_.frequency_ppb();
  status_.servo = s.state;
  ++status_.samples;

  if (config_.interval_request && !oper_switched_) {
    if (s.state == ServoState::kLocked && std::fabs(offset) <= config_.offset_threshold_ns) {
      ++good_offsets_;
    } else {
      good_offsets_ = 0;
    }
    if (good_offsets_ >= config_.offset_values) {
      // linuxptp's msg_interval_request: ask the master for the operational
      // Sync interval, and request peer delay at the operational rate.
      Message sig;
      sig.header = make_header(MessageType::kSignaling, p.identity, ++p.signaling_seq, 0x7F, config_.minor_version);
      sig.header.domain = config_.domain;
      sig.port = kWildcardPort;
      sig.has_interval_request = true;
      sig.interval.time_sync_interval = config_.oper_log_sync_interval;
      emit(index, sig, false);
      p.initiator.set_log_interval(config_.oper_log_pdelay_interval, TimePoint::from_ns(info.rx));
      oper_switched_ = true;
    }
  }
  forward_sync(info, index);
}

void TimeAwareSystem::forward_sync(const SyncInfo& info, std::size_t from) {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    Port& q = ports_[i];
    if (i == from || q.role != PortRole::kMaster || q.sync_stopped || !as_capable(q)) continue;
    Message sync;
    sync.header = make_header(MessageType::kSync, q.identity, ++q.sync_seq, q.log_sync_interval, config_.minor_version);
    sync.header.domain = config_.domain;
    q.forward.valid = true;
    q.forward.seq = q.sync_seq;
    q.forward.info = info;
    emit(i, sync, true);
  }
}

void TimeAwareSystem::send_follow_up(Port& p, std::size_t index, const SyncInfo& info, std::int64_t tx) {
  // §11.2.15: residence time in GM time is added to the correction.
  const double correction_ns = info.correction_ns + static_cast<double>(tx - info.rx) * info.rate_ratio;
  Message fu;
  fu.header = make_header(MessageType::kFollowUp, p.identity, p.sync_seq, p.log_sync_interval, config_.minor_version);
  fu.header.domain = config_.domain;
  fu.header.correction = std::max<std::int64_t>(0, std::llround(correction_ns * kCorrectionScale));
  fu.timestamp = info.origin;
  fu.follow_up = info.follow_up;
  fu.follow_up.cumulative_scaled_rate_offset =
      static_cast<std::int32_t>(std::llround((info.rate_ratio - 1.0) * kRateOffsetScale));
  emit(index, fu, false);
}

void TimeAwareSystem::tx_timestamp(std::size_t index, MessageType type, std::uint16_t seq, TimePoint tx) {
  Port& p = ports_.at(index);
  switch (type) {
    case MessageType::kPdelayReq: p.initiator.on_req_sent(seq, tx); break;
    case MessageType::kPdelayResp:
      if (auto fu = p.responder.on_resp_sent(seq, tx)) emit(index, *fu, false);
      break;
    case MessageType::kSync:
      if (p.forward.valid && p.forward.seq == seq) {
        p.forward.valid = false;
        send_follow_up(p, index, p.forward.info, tx.ns());
      } else if (p.gm_sync_pending && p.sync_seq == seq) {
        p.gm_sync_pending = false;
        // A GM's origin is its own layersec clock at the Sync's TX time; the
        // sub-nanosecond part travels in the correction field.
        SyncInfo info;
        const std::int64_t t = clock_.to_synced(tx.ns());
        info.origin = from_ns(std::max<std::int64_t>(t, 0));
        info.correction_ns = clock_.to_synced_fraction(tx.ns());
        info.rx = tx.ns();
        info.rate_ratio = 1.0;
        send_follow_up(p, index, info, tx.ns());
      }
      break;
    default: break;
  }
}

void TimeAwareSystem::on_announce(Port& p, const Message& m, TimePoint rx) {
  if (config_.profile == Profile::kAutomotive) return drop(p, DropReason::kAnnounceDisabled);
  if (!as_capable(p)) return drop(p, DropReason::kNotAsCapable);
  const AnnounceBody& a = m.announce;
  for (std::size_t i = 0; i < a.path_trace_count; ++i) {
    if (a.path_trace[i] == config_.clock_identity) return drop(p, DropReason::kPathTraceLoop);
  }
  if (a.grandmaster_identity == config_.clock_identity || a.steps_removed >= 255) {
    return drop(p, DropReason::kPathTraceLoop);
  }
  const PriorityVector v = vector_of(m);
  // A port holds one master's information (802.1AS-2020 §10.3.12): a worse
  // vector from another source does not replace it before it times out, so
  // two Announcers on one link do not take turns (superior information, or
  // the same source's update, replaces it at once).
  if (p.announced.valid && rx < p.announced.expiry && !(p.announced.vector.source == m.header.source) &&
      better(p.announced.vector, v)) {
    return drop(p, DropReason::kInferiorAnnounce);
  }
  p.announced.valid = true;
  p.announced.vector = v;
  p.announced.expiry =
      rx + interval_of(std::clamp<std::int8_t>(m.header.log_interval, -8, 8)) * config_.announce_receipt_timeout;
  p.announced.time.flags = m.header.flags & (kFlagLeap61 | kFlagLeap59 | kFlagUtcOffsetValid | kFlagPtpTimescale |
                                              kFlagTimeTraceable | kFlagFrequencyTraceable);
  p.announced.time.current_utc_offset = a.current_utc_offset;
  p.announced.time.time_source = a.time_source;
  p.announced.path_count = a.has_path_trace ? a.path_trace_count : 0;
  p.announced.path = a.path_trace;
  run_bmca(rx);
}

void TimeAwareSystem::on_signaling(Port& p, const Message& m, TimePoint now) {
  if (!m.has_interval_request) return;  // no other TLV is understood; nothing to do
  const IntervalRequest& r = m.interval;
  if (!request_valid(r.link_delay_interval) || !request_valid(r.time_sync_interval) ||
      !request_valid(r.announce_interval)) {
    return drop(p, DropReason::kBadInterval);
  }
  // §10.6.4.3.6-8 / §11.2.17: apply each requested interval to this port.
  if (r.time_sync_interval == kIntervalStop) {
    p.sync_stopped = true;
  } else if (r.time_sync_interval != kIntervalNoChange) {
    p.sync_stopped = false;
    p.log_sync_interval =
        r.time_sync_interval == kIntervalInitial ? config_.log_sync_interval : r.time_sync_interval;
    p.next_sync = std::min(p.next_sync, now + interval_of(p.log_sync_interval));
  }
  if (r.link_delay_interval != kIntervalNoChange && r.link_delay_interval != kIntervalStop) {
    p.initiator.set_log_interval(
        r.link_delay_interval == kIntervalInitial ? config_.pdelay.log_interval : r.link_delay_interval, now);
  }
  if (r.announce_interval != kIntervalNoChange && r.announce_interval != kIntervalStop) {
    p.log_announce_interval =
        r.announce_interval == kIntervalInitial ? config_.log_announce_interval : r.announce_interval;
  }
}

void TimeAwareSystem::send_announce(Port& p, std::size_t index) {
  Message a;
  a.header = make_header(MessageType::kAnnounce, p.identity, ++p.announce_seq, p.log_announce_interval,
                         config_.minor_version);
  a.header.domain = config_.domain;
  const TimeProperties own{};
  const TimeProperties& tp = grandmaster_ ? own : gm_time_;
  a.header.flags = tp.flags;
  a.announce.current_utc_offset = tp.current_utc_offset;
  a.announce.time_source = tp.time_source;
  a.announce.priority1 = gm_vector_.priority1;
  a.announce.quality = gm_vector_.quality;
  a.announce.priority2 = gm_vector_.priority2;
  a.announce.grandmaster_identity = gm_vector_.grandmaster_identity;
  a.announce.steps_removed = static_cast<std::uint16_t>(grandmaster_ ? 0 : gm_vector_.steps_removed + 1);
  a.announce.has_path_trace = true;
  // §10.3.8.23: the received path trace with this clock appended (dropped
  // when it would not fit).
  std::size_t n = grandmaster_ ? 0 : gm_path_count_;
  if (n + 1 > kMaxPathTrace) {
    a.announce.has_path_trace = false;
    n = 0;
  } else {
    for (std::size_t i = 0; i < n; ++i) a.announce.path_trace[i] = gm_path_[i];
    a.announce.path_trace[n] = config_.clock_identity;
    a.announce.path_trace_count = static_cast<std::uint8_t>(n + 1);
  }
  emit(index, a, false);
}

void TimeAwareSystem::run_bmca(TimePoint now) {
  if (config_.profile == Profile::kAutomotive || config_.role == Role::kGm || !bmca_started_) return;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    Announced& a = ports_[i].announced;
    if (a.valid && now >= a.expiry) a.valid = false;
    if (!a.valid || !as_capable(ports_[i])) continue;
    if (!best || better(a.vector, ports_[*best].announced.vector)) best = i;
  }
  const PriorityVector own = own_vector();
  const bool own_best = !best || better(own, ports_[*best].announced.vector);
  if (own_best && config_.role != Role::kSlave) {
    if (!grandmaster_) servo_.reset();
    grandmaster_ = true;
    gm_vector_ = own;
    gm_path_count_ = 0;
    for (auto& p : ports_) p.role = PortRole::kMaster;
    return;
  }
  grandmaster_ = false;
  if (!best) {
    for (auto& p : ports_) p.role = PortRole::kDisabled;
    return;
  }
  if (ports_[*best].announced.vector.grandmaster_identity != gm_vector_.grandmaster_identity) {
    // Another grandmaster (or the first, or ours until now): its time may be
    // on another timescale, so the servo may step once more.
    servo_.reset_for_new_source();
    status_.valid = false;
  } else if (ports_[*best].role != PortRole::kSlave) {
    servo_.reset();
    status_.valid = false;
  }
  gm_vector_ = ports_[*best].announced.vector;
  gm_path_count_ = ports_[*best].announced.path_count;
  gm_time_ = ports_[*best].announced.time;
  gm_path_ = ports_[*best].announced.path;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    ports_[i].role = i == *best ? PortRole::kSlave : PortRole::kMaster;
    if (i != *best) ports_[i].pending.valid = false;
  }
}

void TimeAwareSystem::on_timer(TimePoint now) {
  if (config_.profile == Profile::kGptp && config_.role != Role::kGm && !bmca_started_) {
    // Listening until announceReceiptTimeout first expires (§10.3.11).
    if (ports_[0].next_announce == TimePoint{}) {
      for (auto& p : ports_) {
        p.next_announce = now + interval_of(config_.log_announce_interval) * config_.announce_receipt_timeout;
      }
    } else if (now >= ports_[0].next_announce) {
      bmca_started_ = true;
      for (auto& p : ports_) p.next_announce = now;
    }
  }
  for (auto& p : ports_) {
    if (p.announced.valid && now >= p.announced.expiry) p.announced.valid = false;  // announceReceiptTimeout
  }
  if (bmca_started_) run_bmca(now);
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    Port& p = ports_[i];
    if (now >= p.initiator.next_deadline()) {
      if (auto req = p.initiator.on_timer(now)) emit(i, *req, true);
    }
    if (p.role == PortRole::kSlave && now >= p.sync_deadline) {
      // syncReceiptTimeout: the time source is gone. Holdover: the clock
      // runs on at the servo's frequency estimate (its integrator), not at
      // the last PI output, whose proportional term answered the last
      // sample's noise; the servo's relock also measures against it.
      // The followed source (automotive) stays: the roles are static, so a
      // GM that went quiet is still the only one; forgetting it let the
      // first Sync after any stall, an attacker's too, become the source
      // (seen in cli.ptp_relay_netns under load).
      p.sync_deadline = TimePoint::max();
      p.pending.valid = false;
      status_.valid = false;
      if (servo_.state() != ServoState::kUnlocked) clock_.set_frequency_ppb(-servo_.drift_ppb(), now.ns());
      servo_.reset();
    }
    const bool sends = p.role == PortRole::kMaster && as_capable(p);
    if (grandmaster_ && sends && !p.sync_stopped && now >= p.next_sync) {
      p.next_sync = now + interval_of(p.log_sync_interval);
      Message sync;
      sync.header = make_header(MessageType::kSync, p.identity, ++p.sync_seq, p.log_sync_interval,
                                config_.minor_version);
      sync.header.domain = config_.domain;
      p.gm_sync_pending = true;
      p.forward.valid = false;
      emit(i, sync, true);
    }
    if (config_.profile == Profile::kGptp && (bmca_started_ || config_.role == Role::kGm) && sends &&
        now >= p.next_announce) {
      p.next_announce = now + interval_of(p.log_announce_interval);
      send_announce(p, i);
    }
  }
}

TimePoint TimeAwareSystem::next_deadline() const {
  TimePoint t = TimePoint::max();
  const bool listening = config_.profile == Profile::kGptp && config_.role != Role::kGm && !bmca_started_;
  for (const auto& p : ports_) {
    t = std::min(t, p.initiator.next_deadline());
    if (p.role == PortRole::kSlave) t = std::min(t, p.sync_deadline);
    if (p.announced.valid) t = std::min(t, p.announced.expiry);
    const bool sends = p.role == PortRole::kMaster && as_capable(p);
    if (grandmaster_ && sends && !p.sync_stopped) t = std::min(t, p.next_sync);
    if (config_.profile == Profile::kGptp && (listening || sends)) t = std::min(t, p.next_announce);
  }
  return t;
}

}  // namespace layersec::ptp
