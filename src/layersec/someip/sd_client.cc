#include "layersec/someip/sd_client.h"

#include <algorithm>
#include <utility>

namespace layersec::someip {

SdClient::SdClient(SdClientConfig config, RandomSource& random)
    : config_(std::move(config)), random_(&random) {
  for (auto id : config_.eventgroups) groups_.push_back(Group{id, SubscriptionState::kNotSubscribed});
}

SdEvent SdClient::event(SdEventKind k) const {
  SdEvent ev;
  ev.kind = k;
  ev.service_id = config_.service_id;
  if (offer_) {
    ev.instance_id = offer_->instance_id;
    ev.major_version = offer_->major_version;
    ev.minor_version = offer_->minor_version;
    ev.peer = offer_->peer;
    ev.udp = offer_->udp;
    ev.tcp = offer_->tcp;
  } else {
    ev.instance_id = config_.instance_id;
    ev.major_version = config_.major_version;
    ev.minor_version = config_.minor_version;
  }
  return ev;
}

void SdClient::request(TimePoint now, SdOutput& out) {
  if (state_ != State::kDown) return;
  if (offer_) {
    // Already known: no finds, subscribe right away.
    state_ = State::kMain;
    deadline_ = TimePoint::max();
    for (auto& g : groups_) {
      send_subscribe(g, config_.timing.ttl, out);
      g.state = SubscriptionState::kPending;
    }
    return;
  }
  state_ = State::kInitialWait;
  repetitions_sent_ = 0;
  deadline_ = now + random_->uniform(config_.timing.initial_delay_min, config_.timing.initial_delay_max);
}

void SdClient::release(TimePoint now, SdOutput& out) {
  (void)now;
  if (state_ == State::kDown) return;
  for (auto& g : groups_) {
    if (g.state != SubscriptionState::kNotSubscribed && offer_) send_subscribe(g, 0, out);
    g.state = SubscriptionState::kNotSubscribed;
  }
  state_ = State::kDown;
  deadline_ = TimePoint::max();
}

void SdClient::subscribe(TimePoint now, std::uint16_t eventgroup, SdOutput& out) {
  (void)now;
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.id == eventgroup; });
  if (it == groups_.end()) {
    groups_.push_back(Group{eventgroup, SubscriptionState::kNotSubscribed});
    it = groups_.end() - 1;
  }
  if (state_ != State::kDown && offer_ && it->state == SubscriptionState::kNotSubscribed) {
    send_subscribe(*it, config_.timing.ttl, out);
    it->state = SubscriptionState::kPending;
  }
}

void SdClient::unsubscribe(TimePoint now, std::uint16_t eventgroup, SdOutput& out) {
  (void)now;
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.id == eventgroup; });
  if (it == groups_.end()) return;
  // feat_req_someipsd_333: StopSubscribeEventgroup = Subscribe with TTL 0.
  if (it->state != SubscriptionState::kNotSubscribed && offer_) send_subscribe(*it, 0, out);
  groups_.erase(it);
}

void SdClient::send_find(SdOutput& out) {
  SdOutgoing s;
  s.multicast = true;
  s.entry = SdEntry::find_service(config_.service_id, config_.instance_id, config_.major_version,
                                  config_.minor_version, config_.timing.ttl);
  out.sends.push_back(std::move(s));
  ++finds_sent_;
}

void SdClient::send_subscribe(const Group& g, std::uint32_t ttl, SdOutput& out) {
  SdOutgoing s;
  s.multicast = false;
  s.destination = offer_->peer;
  s.entry = SdEntry::subscribe(config_.service_id, offer_->instance_id, offer_->major_version, g.id, ttl);
  // Clients name their own endpoints in the Subscribe (feat_req_someipsd_*).
  if (config_.udp_endpoint && offer_->udp) s.run1.push_back(endpoint_option(*config_.udp_endpoint));
  if (config_.tcp_endpoint && offer_->tcp) s.run1.push_back(endpoint_option(*config_.tcp_endpoint));
  if (s.run1.empty()) {
    if (config_.udp_endpoint) s.run1.push_back(endpoint_option(*config_.udp_endpoint));
    else if (config_.tcp_endpoint) s.run1.push_back(endpoint_option(*config_.tcp_endpoint));
  }
  out.sends.push_back(std::move(s));
}

void SdClient::lose_service(SdOutput& out) {
  out.events.push_back(event(SdEventKind::kServiceUnavailable));
  offer_.reset();
  for (auto& g : groups_) g.state = SubscriptionState::kNotSubscribed;
}

void SdClient::on_timer(TimePoint now, SdOutput& out) {
  if (offer_ && offer_->expiry <= now) lose_service(out);
  if (now < deadline_) return;
  const SdTiming& t = config_.timing;
  switch (state_) {
    case State::kDown:
    case State::kMain:
      deadline_ = TimePoint::max();
      break;
    case State::kInitialWait:
      send_find(out);
      if (t.repetitions_max == 0) {
        state_ = State::kMain;
        deadline_ = TimePoint::max();
      } else {
        state_ = State::kRepetition;
        repetitions_sent_ = 0;
        deadline_ = now + t.repetitions_base_delay;
      }
      break;
    case State::kRepetition:
      send_find(out);
      ++repetitions_sent_;
      if (repetitions_sent_ >= t.repetitions_max) {
        state_ = State::kMain;
        deadline_ = TimePoint::max();
      } else {
        deadline_ = now + t.repetitions_base_delay *
                              (std::int64_t{1} << std::min<std::uint32_t>(repetitions_sent_, 20));
      }
      break;
  }
}

bool SdClient::matches(const SdEntry& e) const {
  if (e.service_id != config_.service_id) return false;
  const auto k = e.kind();
  if (k == EntryKind::kOfferService || k == EntryKind::kStopOfferService) {
    if (config_.instance_id != 0xFFFF && e.instance_id != config_.instance_id) return false;
    if (config_.major_version != 0xFF && e.major_version != config_.major_version) return false;
    if (config_.minor_version != 0xFFFFFFFF && e.minor_version != config_.minor_version) return false;
    return true;
  }
  if (k == EntryKind::kSubscribeEventgroupAck || k == EntryKind::kSubscribeEventgroupNack)
    return offer_ && e.instance_id == offer_->instance_id;
  return false;
}

SdClient::SubscriptionState SdClient::subscription_state(std::uint16_t eventgroup) const {
  for (const auto& g : groups_)
    if (g.id == eventgroup) return g.state;
  return SubscriptionState::kNotSubscribed;
}

void SdClient::drop(SdDropReason r, SdOutput& out) {
  drops_.add(r);
  out.drops.add(r);
}

void SdClient::on_offer(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts,
                        SdOutput& out) {
  // Checked before anything changes: a refused offer leaves no trace but a counter.
  if (!address_allowed(config_.allowed_servers, rx.source.address))
    return drop(SdDropReason::kOfferServerNotAllowed, out);
  // The offered endpoint must be the sender's own: otherwise any host could
  // point us at a third one (or re-send a server's offer from elsewhere and
  // take the binding while requests still reach the server).
  if (!endpoints_name_source(opts, rx.source.address))
    return drop(SdDropReason::kOfferEndpointNotSource, out);
  // Bound to another instance or peer: ignore this one.
  if (offer_ && (offer_->instance_id != e.instance_id || !(offer_->peer == rx.source)))
    return drop(SdDropReason::kOfferBoundElsewhere, out);
  const bool is_new = !offer_;
  SdOfferInfo info;
  info.instance_id = e.instance_id;
  info.major_version = e.major_version;
  info.minor_version = e.minor_version;
  info.peer = rx.source;
  info.udp = opts.endpoint(L4Proto::kUdp);
  info.tcp = opts.endpoint(L4Proto::kTcp);
  info.expiry = ttl_expiry(rx.now, e.ttl);
  offer_ = info;
  if (is_new) out.events.push_back(event(SdEventKind::kServiceAvailable));
  if (state_ == State::kInitialWait || state_ == State::kRepetition) {
    state_ = State::kMain;  // feat_req_someipsd_867: finds stop at the offer
    deadline_ = TimePoint::max();
  }
  if (state_ != State::kDown) {
    // Subscribe on every offer: first subscription and renewal alike.
    for (auto& g : groups_) {
      send_subscribe(g, config_.timing.ttl, out);
      if (g.state == SubscriptionState::kNotSubscribed) g.state = SubscriptionState::kPending;
    }
  }
}

void SdClient::on_entry(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts,
                        SdOutput& out) {
  if (!matches(e)) return;
  switch (e.kind()) {
    case EntryKind::kOfferService:
      on_offer(rx, e, opts, out);
      break;
    case EntryKind::kStopOfferService:
      // feat_req_someipsd_262. Another instance than ours: nothing to stop.
      if (!offer_ || offer_->instance_id != e.instance_id) break;
      if (!(offer_->peer == rx.source)) return drop(SdDropReason::kStopOfferNotFromOfferer, out);
      if (!endpoints_name_source(opts, rx.source.address))
        return drop(SdDropReason::kStopOfferEndpointNotSource, out);
      lose_service(out);
      break;
    case EntryKind::kSubscribeEventgroupAck:
    case EntryKind::kSubscribeEventgroupNack: {
      // matches() guarantees an offer: Subscribes go to its SD peer only.
      if (!(offer_->peer == rx.source)) return drop(SdDropReason::kAckNotFromServer, out);
      for (auto& g : groups_) {
        if (g.id != e.eventgroup_id) continue;
        SdEvent ev = event(e.kind() == EntryKind::kSubscribeEventgroupAck
                               ? SdEventKind::kSubscriptionAcked
                               : SdEventKind::kSubscriptionNacked);
        ev.eventgroup_id = g.id;
        ev.multicast = opts.multicast();
        if (e.kind() == EntryKind::kSubscribeEventgroupNack) {
          if (g.state != SubscriptionState::kNotSubscribed) out.events.push_back(ev);
          g.state = SubscriptionState::kNotSubscribed;
        } else if (g.state == SubscriptionState::kPending) {
          g.state = SubscriptionState::kAcked;
          out.events.push_back(ev);
        }
      }
      break;
    }
    default:
      break;
  }
}

void SdClient::on_peer_reboot(const Endpoint& peer, SdOutput& out) {
  if (offer_ && offer_->peer == peer) lose_service(out);
}

TimePoint SdClient::next_deadline() const {
  TimePoint t = deadline_;
  if (offer_) t = std::min(t, offer_->expiry);
  return t;
}

}  // namespace layersec::someip
