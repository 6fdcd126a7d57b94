#include "layersec/someip/sd_server.h"

#include <algorithm>
#include <utility>

namespace layersec::someip {

SdServer::SdServer(SdServerConfig config, RandomSource& random)
    : config_(std::move(config)), random_(&random) {}

void SdServer::start(TimePoint now) {
  if (state_ != State::kDown) return;
  state_ = State::kInitialWait;
  offered_ = false;
  repetitions_sent_ = 0;
  repetition_done_ = false;
  // feat_req_someipsd_63: a random delay in [INITIAL_DELAY_MIN, INITIAL_DELAY_MAX].
  deadline_ = now + random_->uniform(config_.timing.initial_delay_min, config_.timing.initial_delay_max);
}

SdOutgoing SdServer::offer(bool multicast, const Endpoint& to, std::uint32_t ttl) const {
  SdOutgoing s;
  s.multicast = multicast;
  s.destination = to;
  s.entry = SdEntry::offer_service(config_.service_id, config_.instance_id, config_.major_version,
                                   config_.minor_version, ttl);
  if (config_.udp_endpoint) s.run1.push_back(endpoint_option(*config_.udp_endpoint));
  if (config_.tcp_endpoint) s.run1.push_back(endpoint_option(*config_.tcp_endpoint));
  return s;
}

void SdServer::send_multicast_offer(TimePoint now, SdOutput& out) {
  out.sends.push_back(offer(true, Endpoint{}, config_.timing.ttl));
  last_multicast_offer_ = now;
  offered_ = true;
  ++offers_sent_;
}

void SdServer::stop(TimePoint now, SdOutput& out) {
  (void)now;
  if (state_ == State::kDown) return;
  // feat_req_someipsd_262: StopOfferService = OfferService with TTL 0, only
  // if the instance was announced at all.
  if (offered_) out.sends.push_back(offer(true, Endpoint{}, 0));
  for (const auto& s : subs_) out.events.push_back(event(SdEventKind::kUnsubscribed, s));
  subs_.clear();
  pending_.clear();
  state_ = State::kDown;
  deadline_ = TimePoint::max();
  offered_ = false;
}

void SdServer::on_timer(TimePoint now, SdOutput& out) {
  // Delayed answers (feat_req_someipsd_83).
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->due <= now) {
      if (it->send.multicast) {
        last_multicast_offer_ = now;
        ++offers_sent_;
      }
      out.sends.push_back(std::move(it->send));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  // Subscription TTL expiry.
  for (auto it = subs_.begin(); it != subs_.end();) {
    if (it->expiry <= now) {
      out.events.push_back(event(SdEventKind::kSubscriptionExpired, *it));
      it = subs_.erase(it);
    } else {
      ++it;
    }
  }
  if (now < deadline_) return;
  const SdTiming& t = config_.timing;
  switch (state_) {
    case State::kDown:
      deadline_ = TimePoint::max();
      break;
    case State::kInitialWait:
      send_multicast_offer(now, out);
      if (t.repetitions_max == 0) {
        // feat_req_someipsd_74: no repetition phase; feat_req_someipsd_80:
        // the main phase waits one cyclic delay before its first offer.
        state_ = State::kMain;
        deadline_ = now + t.cyclic_offer_delay;
      } else {
        state_ = State::kRepetition;
        repetitions_sent_ = 0;
        repetition_done_ = false;
        deadline_ = now + t.repetitions_base_delay;  // 2^0 * base
      }
      break;
    case State::kRepetition:
      if (repetition_done_) {
        // The 2^REPETITIONS_MAX * base wait is over: main phase, which starts
        // with an offer (feat_req_someipsd_77 example).
        state_ = State::kMain;
        send_multicast_offer(now, out);
        deadline_ = now + t.cyclic_offer_delay;
        break;
      }
      send_multicast_offer(now, out);
      ++repetitions_sent_;
      // Doubling delay (feat_req_someipsd_67/76).
      deadline_ = now + t.repetitions_base_delay * (std::int64_t{1} << std::min<std::uint32_t>(repetitions_sent_, 20));
      if (repetitions_sent_ >= t.repetitions_max) repetition_done_ = true;
      break;
    case State::kMain:
      // feat_req_someipsd_79/81: cyclic offers.
      send_multicast_offer(now, out);
      deadline_ = now + t.cyclic_offer_delay;
      break;
  }
}

bool SdServer::matches(const SdEntry& e) const {
  if (e.service_id != config_.service_id) return false;
  if (e.kind() == EntryKind::kFindService) {
    return (e.instance_id == 0xFFFF || e.instance_id == config_.instance_id) &&
           (e.major_version == 0xFF || e.major_version == config_.major_version) &&
           (e.minor_version == 0xFFFFFFFF || e.minor_version == config_.minor_version);
  }
  if (e.kind() == EntryKind::kSubscribeEventgroup || e.kind() == EntryKind::kStopSubscribeEventgroup) {
    return e.instance_id == config_.instance_id &&
           (e.major_version == 0xFF || e.major_version == config_.major_version);
  }
  return false;
}

void SdServer::answer(const SdRxContext& rx, SdOutgoing send, SdOutput& out) {
  const SdTiming& t = config_.timing;
  if (rx.via_multicast && t.request_response_delay_max > Duration::zero()) {
    if (pending_.size() >= config_.max_pending_answers) return;  // bounded; sender retries
    const TimePoint due =
        rx.now + random_->uniform(t.request_response_delay_min, t.request_response_delay_max);
    pending_.push_back(PendingAnswer{due, std::move(send)});
    return;
  }
  if (send.multicast) {
    last_multicast_offer_ = rx.now;
    ++offers_sent_;
  }
  out.sends.push_back(std::move(send));
}

void SdServer::on_find(const SdRxContext& rx, SdOutput& out) {
  switch (state_) {
    case State::kDown:
    case State::kInitialWait:
      return;  // not announced yet; the first offer is on its way
    case State::kRepetition:
      answer(rx, offer(false, rx.source, config_.timing.ttl), out);
      return;
    case State::kMain: {
      const bool recent = rx.now - last_multicast_offer_ < config_.timing.cyclic_offer_delay / 2;
      if (rx.unicast_flag && recent) {
        answer(rx, offer(false, rx.source, config_.timing.ttl), out);
      } else {
        answer(rx, offer(true, Endpoint{}, config_.timing.ttl), out);
      }
      return;
    }
  }
}

const SdServerConfig::Eventgroup* SdServer::eventgroup(std::uint16_t id) const {
  for (const auto& g : config_.eventgroups)
    if (g.id == id) return &g;
  return nullptr;
}

SdEvent SdServer::event(SdEventKind k, const SdSubscription& s) const {
  SdEvent ev;
  ev.kind = k;
  ev.service_id = config_.service_id;
  ev.instance_id = config_.instance_id;
  ev.major_version = config_.major_version;
  ev.minor_version = config_.minor_version;
  ev.eventgroup_id = s.eventgroup_id;
  ev.peer = s.peer;
  ev.udp = s.udp;
  ev.tcp = s.tcp;
  if (const auto* g = eventgroup(s.eventgroup_id)) ev.multicast = g->multicast;
  return ev;
}

void SdServer::drop(SdDropReason r, SdOutput& out) {
  drops_.add(r);
  out.drops.add(r);
}

std::optional<SdDropReason> SdServer::refusal(const SdRxContext& rx, const SdEntryOptions& opts,
                                              const SdServerConfig::Eventgroup* g, bool known) const {
  if (state_ != State::kRepetition && state_ != State::kMain) return SdDropReason::kSubscribeNotOffered;
  if (g == nullptr) return SdDropReason::kSubscribeUnknownEventgroup;
  if (!address_allowed(g->allowed_subscribers, rx.source.address)) return SdDropReason::kSubscriberNotAllowed;
  // A subscriber must say where events go (a unicast endpoint of a protocol
  // we serve), unless the eventgroup is delivered by multicast.
  const bool reachable = (opts.endpoint(L4Proto::kUdp) && config_.udp_endpoint) ||
                         (opts.endpoint(L4Proto::kTcp) && config_.tcp_endpoint) || g->multicast;
  if (!reachable) return SdDropReason::kSubscribeNoEndpoint;
  if (!known && subs_.size() >= config_.max_subscribers) return SdDropReason::kSubscribeTableFull;
  return std::nullopt;
}

void SdServer::on_subscribe(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts,
                            SdOutput& out) {
  const auto udp = opts.endpoint(L4Proto::kUdp);
  const auto tcp = opts.endpoint(L4Proto::kTcp);
  // Events go to the endpoints a Subscribe names: they must be the sender's
  // own, or any host could have our events reflected to a victim.
  const bool own_endpoints = endpoints_name_source(opts, rx.source.address);
  auto same = [&](const SdSubscription& s) {
    return s.eventgroup_id == e.eventgroup_id && s.peer == rx.source && s.udp == udp &&
           s.tcp == tcp && s.counter == e.counter;
  };
  auto it = std::find_if(subs_.begin(), subs_.end(), same);
  if (e.kind() == EntryKind::kStopSubscribeEventgroup) {
    // feat_req_someipsd_333: no answer to a StopSubscribe.
    if (!own_endpoints) return drop(SdDropReason::kStopSubscribeEndpointNotSource, out);
    if (it == subs_.end()) return drop(SdDropReason::kStopSubscribeUnknown, out);
    out.events.push_back(event(SdEventKind::kUnsubscribed, *it));
    subs_.erase(it);
    return;
  }
  const auto* g = eventgroup(e.eventgroup_id);
  const std::optional<SdDropReason> refused =
      own_endpoints ? refusal(rx, opts, g, it != subs_.end())
                    : std::optional<SdDropReason>(SdDropReason::kSubscribeEndpointNotSource);
  SdOutgoing reply;
  reply.multicast = false;
  reply.destination = rx.source;
  if (refused) {
    drop(*refused, out);
    // feat_req_someipsd_619: Nack = SubscribeEventgroupAck with TTL 0.
    reply.entry = SdEntry::subscribe_ack(e.service_id, e.instance_id, e.major_version,
                                         e.eventgroup_id, 0, e.counter);
    answer(rx, std::move(reply), out);
    return;
  }
  const TimePoint expiry = ttl_expiry(rx.now, e.ttl);
  if (it != subs_.end()) {
    it->expiry = expiry;  // renewal
  } else {
    SdSubscription s;
    s.eventgroup_id = e.eventgroup_id;
    s.peer = rx.source;
    s.udp = udp;
    s.tcp = tcp;
    s.counter = e.counter;
    s.expiry = expiry;
    subs_.push_back(s);
    out.events.push_back(event(SdEventKind::kSubscribed, s));
  }
  // The Ack copies TTL, counter and the other fields of the Subscribe.
  reply.entry = SdEntry::subscribe_ack(e.service_id, e.instance_id, e.major_version,
                                       e.eventgroup_id, e.ttl, e.counter);
  if (g->multicast) reply.run1.push_back(multicast_option(*g->multicast));
  answer(rx, std::move(reply), out);
}

void SdServer::on_entry(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts,
                        SdOutput& out) {
  if (!matches(e)) return;
  switch (e.kind()) {
    case EntryKind::kFindService: on_find(rx, out); break;
    case EntryKind::kSubscribeEventgroup:
    case EntryKind::kStopSubscribeEventgroup: on_subscribe(rx, e, opts, out); break;
    default: break;
  }
}

void SdServer::on_peer_reboot(const Endpoint& peer, SdOutput& out) {
  for (auto it = subs_.begin(); it != subs_.end();) {
    if (it->peer == peer) {
      out.events.push_back(event(SdEventKind::kUnsubscribed, *it));
      it = subs_.erase(it);
    } else {
      ++it;
    }
  }
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const PendingAnswer& p) {
                                  return !p.send.multicast && p.send.destination == peer;
                                }),
                 pending_.end());
}

TimePoint SdServer::next_deadline() const {
  TimePoint t = state_ == State::kDown ? TimePoint::max() : deadline_;
  for (const auto& p : pending_) t = std::min(t, p.due);
  for (const auto& s : subs_) t = std::min(t, s.expiry);
  return t;
}

}  // namespace layersec::someip
