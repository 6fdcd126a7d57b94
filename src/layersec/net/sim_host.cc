#include "layersec/net/sim_host.h"

#include <algorithm>
#include <memory>

namespace layersec::net {

const char* to_string(SimHostError e) {
  switch (e) {
    case SimHostError::kPortInUse: return "port in use";
    case SimHostError::kNotBound: return "source port not bound";
    case SimHostError::kPayloadTooLarge: return "payload too large";
    case SimHostError::kUnresolved: return "destination unresolved";
    case SimHostError::kArpQueueFull: return "ARP pending queue full";
    case SimHostError::kLinkRejected: return "link rejected frame";
    case SimHostError::kNotConnected: return "not connected";
  }
  return "unknown";
}

SimHost::SimHost(Simulator& sim, SimHostConfig config)
    : sim_(sim), config_(config), tx_buffer_(kEthernetMaxFrameSize) {}

SimHost::~SimHost() {
  *alive_ = false;
  for (auto& [ip, r] : resolving_)
    if (r.retry) sim_.cancel(*r.retry);
  if (segment_) segment_->set_receiver(port_, nullptr);
}

PortId SimHost::attach(Segment& segment, LinkConfig link) {
  const PortId port = segment.add_port(link, this);
  connect(&segment.sender(port));
  segment_ = &segment;
  port_ = port;
  return port;
}

void SimHost::add_static_arp(Ipv4Address ip, MacAddress mac) { arp_[ip] = mac; }

std::optional<MacAddress> SimHost::arp_lookup(Ipv4Address ip) const {
  auto it = arp_.find(ip);
  if (it == arp_.end()) return std::nullopt;
  return it->second;
}

Status<SimHostError> SimHost::bind(std::uint16_t port, UdpHandler handler) {
  if (bound_.count(port)) return Err(SimHostError::kPortInUse);
  bound_.emplace(port, std::make_shared<UdpHandler>(std::move(handler)));
  return {};
}

void SimHost::unbind(std::uint16_t port) { bound_.erase(port); }

bool SimHost::on_link(Ipv4Address a) const {
  if (config_.prefix_length == 0) return true;
  const std::uint32_t mask = config_.prefix_length >= 32 ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> config_.prefix_length);
  return (a.value & mask) == (config_.ip.value & mask);
}

Ipv4Address SimHost::subnet_broadcast() const {
  const std::uint32_t mask = config_.prefix_length >= 32 ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> config_.prefix_length);
  return Ipv4Address{(config_.ip.value & mask) | ~mask};
}

Status<SimHostError> SimHost::transmit(ByteSpan frame) {
  if (!sender_) return Err(SimHostError::kNotConnected);
  if (!sender_->send_frame(frame)) return Err(SimHostError::kLinkRejected);
  return {};
}

Status<SimHostError> SimHost::bind_ether_type(std::uint16_t ether_type, FrameHandler handler) {
  if (ether_type == kEtherTypeIpv4 || ether_type == kEtherTypeArp || ether_types_.count(ether_type))
    return Err(SimHostError::kPortInUse);
  ether_types_.emplace(ether_type, std::make_shared<FrameHandler>(std::move(handler)));
  return {};
}

Status<SimHostError> SimHost::send_to(std::uint16_t src_port, Ipv4Endpoint dst, ByteSpan payload) {
  if (!bound_.count(src_port)) return Err(SimHostError::kNotBound);
  if (payload.size() > kMaxUdpPayload) return Err(SimHostError::kPayloadTooLarge);
  if (dst.address == config_.ip) {
    std::weak_ptr<bool> alive = alive_;
    const Ipv4Endpoint src{config_.ip, src_port};
    sim_.schedule_in(Duration::zero(), [this, alive, copy = std::vector<std::uint8_t>(payload.begin(), payload.end()),
                                        src, dst] {
      if (auto a = alive.lock(); a && *a) deliver_local(UdpDatagram{src, dst, copy});
    });
    ++stats_.tx_udp;
    return {};
  }
  if (!sender_) return Err(SimHostError::kNotConnected);

  UdpFrameSpec spec;
  spec.src_mac = config_.mac;
  spec.src = {config_.ip, src_port};
  spec.dst = dst;
  spec.identification = next_ip_id_++;
  spec.ttl = dst.address.is_multicast() ? config_.multicast_ttl : config_.ttl;
  if (config_.vlan) {
    spec.tags[0] = *config_.vlan;
    spec.tag_count = 1;
  }
  bool resolved = true;
  if (dst.address.is_multicast()) {
    spec.dst_mac = multicast_mac(dst.address);
  } else if (dst.address.is_broadcast() || dst.address == subnet_broadcast()) {
    spec.dst_mac = MacAddress::broadcast();
  } else if (auto mac = arp_lookup(dst.address)) {
    spec.dst_mac = *mac;
  } else if (config_.dynamic_arp && on_link(dst.address)) {
    resolved = false;  // build with a zero MAC, patch on resolution
    if (pending_.size() >= config_.arp_pending_limit) return Err(SimHostError::kArpQueueFull);
  } else {
    return Err(SimHostError::kUnresolved);
  }
  auto n = build_udp_frame(spec, payload, tx_buffer_);
  if (!n) return Err(SimHostError::kPayloadTooLarge);  // the only build failure left
  const ByteSpan frame(tx_buffer_.data(), *n);
  ++stats_.tx_udp;

  if (!resolved) {
    pending_.push_back({dst.address, std::vector<std::uint8_t>(frame.begin(), frame.end())});
    start_resolution(dst.address);
    return {};
  }
  if (dst.address.is_multicast() && config_.multicast_loopback && groups_.count(dst.address) &&
      bound_.count(dst.port)) {
    // Loop back a copy like IP_MULTICAST_LOOP, at the current time.
    std::weak_ptr<bool> alive = alive_;
    std::vector<std::uint8_t> copy(payload.begin(), payload.end());
    const Ipv4Endpoint src = spec.src;
    sim_.schedule_in(Duration::zero(), [this, alive, copy = std::move(copy), src, dst] {
      if (auto a = alive.lock(); a && *a) deliver_local(UdpDatagram{src, dst, copy});
    });
  }
  return transmit(frame);
}

void SimHost::send_arp(ArpOperation op, MacAddress target_mac, Ipv4Address target_ip) {
  ArpPacket a;
  a.operation = op;
  a.sender_mac = config_.mac;
  a.sender_ip = config_.ip;
  a.target_mac = target_mac;
  a.target_ip = target_ip;
  std::uint8_t buf[kEthernetMinFrameSize];
  auto n = build_arp_frame(a, buf, config_.vlan ? &*config_.vlan : nullptr);
  if (!n) return;
  if (transmit(ByteSpan(buf, *n)).ok()) {
    if (op == ArpOperation::kRequest)
      ++stats_.arp_requests_sent;
    else
      ++stats_.arp_replies_sent;
  }
}

void SimHost::start_resolution(Ipv4Address ip) {
  if (resolving_.count(ip)) return;  // a request is already outstanding
  resolving_[ip] = Resolution{};
  resolution_timer(ip);
}

void SimHost::resolution_timer(Ipv4Address ip) {
  auto it = resolving_.find(ip);
  if (it == resolving_.end()) return;  // resolved meanwhile
  if (it->second.attempts >= config_.arp_attempts) {
    resolving_.erase(it);
    const auto before = pending_.size();
    std::erase_if(pending_, [ip](const Pending& p) { return p.next_hop == ip; });
    stats_.arp_unresolved_drops += before - pending_.size();
    return;
  }
  ++it->second.attempts;
  send_arp(ArpOperation::kRequest, MacAddress{}, ip);
  std::weak_ptr<bool> alive = alive_;
  it->second.retry = sim_.schedule_in(config_.arp_retry, [this, alive, ip] {
    if (auto a = alive.lock(); a && *a) resolution_timer(ip);
  });
}

void SimHost::flush_pending(Ipv4Address ip, MacAddress mac) {
  if (auto r = resolving_.find(ip); r != resolving_.end()) {
    if (r->second.retry) sim_.cancel(*r->second.retry);
    resolving_.erase(r);
  }
  std::vector<Pending> ready;
  auto it = std::stable_partition(pending_.begin(), pending_.end(), [ip](const Pending& p) { return p.next_hop != ip; });
  ready.assign(std::make_move_iterator(it), std::make_move_iterator(pending_.end()));
  pending_.erase(it, pending_.end());
  for (auto& p : ready) {
    std::copy(mac.bytes.begin(), mac.bytes.end(), p.frame.begin());
    transmit(p.frame).ignore();  // a full link queue drops it, as on a real NIC
  }
}

void SimHost::on_frame(ByteSpan frame) {
  ++stats_.rx_frames;
  auto eth = parse_ethernet(frame);
  if (!eth) {
    ++stats_.rx_malformed;
    return;
  }
  const MacAddress& dst = eth->header.dst;
  const bool for_us = dst == config_.mac || dst.is_broadcast() ||
                      (dst.is_multicast() && std::any_of(groups_.begin(), groups_.end(), [&dst](Ipv4Address g) {
                         return multicast_mac(g) == dst;
                       }));
  if (!for_us) {
    ++stats_.rx_not_for_us;
    return;
  }
  switch (eth->header.ether_type) {
    case kEtherTypeArp: handle_arp(eth->payload); return;
    case kEtherTypeIpv4: handle_ipv4(frame); return;
    default: break;
  }
  auto it = ether_types_.find(eth->header.ether_type);
  if (it == ether_types_.end()) {
    ++stats_.rx_other_type;
    return;
  }
  ++stats_.rx_raw;
  const std::shared_ptr<FrameHandler> handler = it->second;  // may unbind itself
  (*handler)(frame);
}

void SimHost::handle_arp(ByteSpan body) {
  auto arp = parse_arp(body);
  if (!arp) {
    ++stats_.rx_malformed;
    return;
  }
  // RFC 826 "packet reception": update an existing entry, add one when the
  // packet is for us; answer requests for our address.
  const bool targeted = arp->target_ip == config_.ip;
  if (arp_.count(arp->sender_ip) || targeted) {
    if (arp->sender_ip != Ipv4Address::any() && !arp->sender_mac.is_multicast()) {
      arp_[arp->sender_ip] = arp->sender_mac;
      flush_pending(arp->sender_ip, arp->sender_mac);
    }
  }
  if (!targeted) {
    ++stats_.rx_not_for_us;
    return;
  }
  if (arp->operation == ArpOperation::kRequest) send_arp(ArpOperation::kReply, arp->sender_mac, arp->sender_ip);
}

void SimHost::handle_ipv4(ByteSpan frame) {
  auto v = parse_udp_frame(frame);
  if (!v) {
    if (v.error() == FrameError::kNotUdp)
      ++stats_.rx_other_type;
    else
      ++stats_.rx_malformed;
    return;
  }
  const Ipv4Address ip_dst = v->ip.header.dst;
  const bool accepted = ip_dst == config_.ip || ip_dst.is_broadcast() || ip_dst == subnet_broadcast() ||
                        (ip_dst.is_multicast() && groups_.count(ip_dst));
  if (!accepted) {
    ++stats_.rx_not_for_us;
    return;
  }
  deliver_local(UdpDatagram{v->src(), v->dst(), v->payload()});
}

void SimHost::deliver_local(const UdpDatagram& d) {
  auto it = bound_.find(d.dst.port);
  if (it == bound_.end()) {
    ++stats_.rx_no_listener;
    return;
  }
  ++stats_.rx_udp;
  // Hold a reference: the handler may unbind its own port.
  const std::shared_ptr<UdpHandler> handler = it->second;
  (*handler)(d);
}

}  // namespace layersec::net
