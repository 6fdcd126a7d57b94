#include "layersec/someip/sd_driver.h"

#include <algorithm>
#include <utility>

namespace layersec::someip {

SdDriver::SdDriver(const RuntimeConfig& config, PacketWriter& io, RandomSource& random, RuntimeCounters& counters,
                   Delegate& delegate)
    : cfg_(config), io_(io), random_(random), counters_(counters), delegate_(delegate) {
  for (const auto& cc : config.clients) {
    Required r;
    r.cfg = cc;
    r.port = client_port(config, cc);
    required_.push_back(std::move(r));
  }
}

void SdDriver::build(std::size_t max_payload) {
  if (sd_) return;
  const IpAddress local = io_.local_address();
  SdConfig sc;
  sc.local = Endpoint{local, cfg_.sd_port, L4Proto::kUdp};
  sc.multicast_group = cfg_.sd_multicast;
  sc.max_payload = max_payload;
  sd_ = std::make_unique<ServiceDiscovery>(sc, random_);
  for (const auto& s : cfg_.services) {
    SdServerConfig c;
    c.service_id = s.service_id;
    c.instance_id = s.instance_id;
    c.major_version = s.major_version;
    c.minor_version = s.minor_version;
    c.timing = cfg_.sd_timing;
    c.udp_endpoint = Endpoint{local, s.udp_port, L4Proto::kUdp};
    for (const auto& g : s.eventgroups) c.eventgroups.push_back({g.eventgroup_id, g.multicast, g.allowed_subscribers});
    servers_.push_back(&sd_->add_server(std::move(c)));
  }
  for (auto& r : required_) {
    SdClientConfig c;
    c.service_id = r.cfg.service_id;
    c.instance_id = r.cfg.instance_id;
    c.major_version = r.cfg.major_version;
    c.timing = cfg_.sd_timing;
    c.udp_endpoint = Endpoint{local, r.port, L4Proto::kUdp};
    c.eventgroups = r.cfg.eventgroups;
    c.allowed_servers = r.cfg.allowed_servers;
    r.sd = &sd_->add_client(std::move(c));
  }
}

void SdDriver::start(TimePoint now) {
  SdActions acts;
  if (cfg_.sd_enabled) {
    for (SdServer* s : servers_) sd_->start_offer(now, *s);
    for (auto& r : required_) sd_->request(now, *r.sd, acts);
  }
  process(now, acts);
}

void SdDriver::stop(TimePoint now) {
  if (!sd_) return;
  SdActions acts;
  for (SdServer* s : servers_) sd_->stop_offer(now, *s, acts);
  for (auto& r : required_) sd_->release(now, *r.sd, acts);
  for (const auto& d : acts.datagrams) delegate_.send_sd(d);
}

void SdDriver::on_datagram(TimePoint now, ByteSpan message, const Endpoint& source, bool multicast) {
  SdActions acts;
  sd_->on_datagram(now, message, source, multicast, acts);
  process(now, acts);
}

void SdDriver::on_timer(TimePoint now) {
  if (!sd_) return;
  SdActions acts;
  sd_->on_timer(now, acts);
  process(now, acts);
}

TimePoint SdDriver::next_deadline() const { return sd_ ? sd_->next_deadline() : TimePoint::max(); }

void SdDriver::process(TimePoint now, SdActions& acts) {
  for (const auto& d : acts.datagrams) delegate_.send_sd(d);
  std::vector<Required*> lost;
  for (const auto& ev : acts.events) {
    if (!delegate_.running()) return;  // an availability handler stopped the runtime
    handle_event(ev, lost);
  }
  delegate_.on_step_done(now);
  // A lost service is searched for again (FindService phases restart), so
  // a node that comes back is found even if we miss its first offers.
  for (Required* r : lost) {
    if (!delegate_.running() || r->sd->available()) continue;
    SdActions more;
    sd_->release(now, *r->sd, more);
    sd_->request(now, *r->sd, more);
    for (const auto& d : more.datagrams) delegate_.send_sd(d);
  }
}

void SdDriver::handle_event(const SdEvent& ev, std::vector<Required*>& lost) {
  switch (ev.kind) {
    case SdEventKind::kServiceAvailable:
      for (auto& r : required_) {
        if (r.cfg.service_id != ev.service_id || !r.sd->available()) continue;
        if (r.sd->offer()->instance_id != ev.instance_id || r.reported_available) continue;
        r.reported_available = true;
        delegate_.on_availability(ev.service_id, ev.instance_id, true);
      }
      break;
    case SdEventKind::kServiceUnavailable:
      // Reported even when the same datagram offers the service again (a
      // server reboot): the application learns that the server's state is
      // gone; kServiceAvailable follows.
      for (auto& r : required_) {
        if (r.cfg.service_id != ev.service_id || !r.reported_available) continue;
        if (r.cfg.instance_id != 0xFFFF && r.cfg.instance_id != ev.instance_id) continue;
        r.reported_available = false;
        leave_groups(r);
        lost.push_back(&r);
        delegate_.on_availability(ev.service_id, ev.instance_id, false);
      }
      break;
    case SdEventKind::kSubscriptionAcked:
      if (!ev.multicast) break;
      for (auto& r : required_) {
        if (r.cfg.service_id != ev.service_id || !r.sd->available()) continue;
        if (r.sd->offer()->instance_id != ev.instance_id) continue;
        join_group(r, *ev.multicast);
      }
      break;
    case SdEventKind::kSubscribed:
      if (!ev.udp) break;
      for (std::size_t i = 0; i < cfg_.services.size(); ++i)
        if (cfg_.services[i].service_id == ev.service_id && cfg_.services[i].instance_id == ev.instance_id) {
          delegate_.on_subscribed(i, ev);
          break;
        }
      break;
    default:
      break;
  }
}

void SdDriver::join_group(Required& r, const Endpoint& group) {
  for (const auto& g : r.groups)
    if (g == group) return;
  auto st = io_.join(group, delegate_.group_handler(group.port));
  if (!st.ok()) {
    ++counters_.transport_errors;
    return;
  }
  r.groups.push_back(group);
}

void SdDriver::leave_groups(Required& r) {
  for (const auto& g : r.groups) {
    // Another required service may use the same group.
    bool shared = false;
    for (const auto& o : required_)
      if (&o != &r && std::find(o.groups.begin(), o.groups.end(), g) != o.groups.end()) shared = true;
    if (!shared) io_.leave(g);
  }
  r.groups.clear();
}

void SdDriver::leave_all_groups() {
  for (auto& r : required_) leave_groups(r);
}

const std::vector<SdSubscription>& SdDriver::subscriptions(std::size_t service) const {
  static const std::vector<SdSubscription> kNone;
  return service < servers_.size() ? servers_[service]->subscriptions() : kNone;
}

const SdDriver::Required* SdDriver::find_available(std::uint16_t service, std::uint16_t instance,
                                                   bool& configured) const {
  configured = false;
  for (const auto& r : required_) {
    if (r.cfg.service_id != service) continue;
    if (instance != 0xFFFF && r.cfg.instance_id != 0xFFFF && r.cfg.instance_id != instance) continue;
    configured = true;
    if (!r.sd || !r.sd->available()) continue;
    if (instance != 0xFFFF && r.sd->offer()->instance_id != instance) continue;
    return &r;
  }
  return nullptr;
}

const SdDriver::Required* SdDriver::offered_from(std::uint16_t service, const Endpoint& source) const {
  for (const auto& r : required_) {
    if (r.cfg.service_id != service || !r.sd || !r.sd->available()) continue;
    const auto& offer = *r.sd->offer();
    if (offer.udp && offer.udp->address == source.address && offer.udp->port == source.port) return &r;
  }
  return nullptr;
}

}  // namespace layersec::someip
