#include "layersec/someip/sim_transport.h"

#include <utility>

#include "layersec/someip/runtime_net.h"

namespace layersec::someip {

namespace {
TransportError map_error(net::SimHostError e) {
  switch (e) {
    case net::SimHostError::kPortInUse:
      return TransportError::kPortInUse;
    case net::SimHostError::kNotBound:
      return TransportError::kNotBound;
    case net::SimHostError::kPayloadTooLarge:
      return TransportError::kTooLarge;
    case net::SimHostError::kUnresolved:
    case net::SimHostError::kArpQueueFull:
      return TransportError::kUnreachable;
    case net::SimHostError::kLinkRejected:
    case net::SimHostError::kNotConnected:
      return TransportError::kSystem;
  }
  return TransportError::kSystem;
}
}  // namespace

SimAlarm::~SimAlarm() {
  *alive_ = false;
  if (timer_) sim_.cancel(*timer_);
}

TimePoint SimAlarm::now() const { return sim_.now(); }

void SimAlarm::wake_at(TimePoint at, Callback cb) {
  if (timer_) {
    sim_.cancel(*timer_);
    timer_.reset();
  }
  if (at == TimePoint::max()) {
    timer_cb_.reset();
    return;
  }
  timer_cb_ = std::make_shared<Callback>(std::move(cb));
  std::weak_ptr<bool> alive = alive_;
  timer_ = sim_.schedule_at(at, [this, alive, cb = timer_cb_] {
    if (auto a = alive.lock(); !a || !*a) return;
    timer_.reset();
    if (*cb) (*cb)();
  });
}

SimTransport::SimTransport(net::Simulator& sim, net::SimHost& host) : host_(host), alarm_(sim) {}

SimTransport::~SimTransport() {
  *alive_ = false;
  for (auto& [port, p] : ports_) {
    for (auto& [group, h] : p.groups) {
      (void)h;
      host_.leave_group(group);
    }
    if (p.host_bound) host_.unbind(port);
  }
}

IpAddress SimTransport::local_address() const { return detail::from_ipv4(host_.config().ip); }

Status<TransportError> SimTransport::ensure_host_bound(std::uint16_t port, Port& p) {
  if (p.host_bound) return {};
  std::weak_ptr<bool> alive = alive_;
  auto r = host_.bind(port, [this, alive, port](const net::UdpDatagram& d) {
    if (auto a = alive.lock(); a && *a) on_udp(port, d);
  });
  if (!r.ok()) return Err(map_error(r.error()));
  p.host_bound = true;
  return {};
}

Status<TransportError> SimTransport::bind(std::uint16_t port, Handler handler) {
  Port& p = ports_[port];
  if (p.unicast) return Err(TransportError::kPortInUse);
  auto st = ensure_host_bound(port, p);
  if (!st.ok()) {
    const TransportError e = st.error();
    release_if_unused(port);
    return Err(e);
  }
  p.unicast = std::make_shared<Handler>(std::move(handler));
  return {};
}

Status<TransportError> SimTransport::join(const Endpoint& group, Handler handler) {
  const auto g = detail::to_ipv4(group.address);
  if (!g || !g->is_multicast()) return Err(TransportError::kUnreachable);
  Port& p = ports_[group.port];
  auto st = ensure_host_bound(group.port, p);
  if (!st.ok()) {
    const TransportError e = st.error();
    release_if_unused(group.port);
    return Err(e);
  }
  p.groups[*g] = std::make_shared<Handler>(std::move(handler));
  host_.join_group(*g);
  return {};
}

void SimTransport::leave(const Endpoint& group) {
  const auto g = detail::to_ipv4(group.address);
  if (!g) return;
  auto it = ports_.find(group.port);
  if (it == ports_.end() || it->second.groups.erase(*g) == 0) return;
  bool still = false;
  for (const auto& [port, p] : ports_) still = still || p.groups.count(*g) != 0;
  if (!still) host_.leave_group(*g);
  release_if_unused(group.port);
}

void SimTransport::unbind(std::uint16_t port) {
  auto it = ports_.find(port);
  if (it == ports_.end()) return;
  it->second.unicast.reset();
  release_if_unused(port);
}

void SimTransport::release_if_unused(std::uint16_t port) {
  auto it = ports_.find(port);
  if (it == ports_.end() || it->second.unicast || !it->second.groups.empty()) return;
  if (it->second.host_bound) host_.unbind(port);
  ports_.erase(it);
}

void SimTransport::on_udp(std::uint16_t port, const net::UdpDatagram& d) {
  auto it = ports_.find(port);
  if (it == ports_.end()) return;
  Datagram out;
  out.payload = d.payload;
  out.source = detail::from_ipv4(d.src);
  out.destination = detail::from_ipv4(d.dst);
  std::shared_ptr<Handler> h;  // held: the handler may unbind its own port
  if (d.dst.address.is_multicast()) {
    auto g = it->second.groups.find(d.dst.address);
    if (g == it->second.groups.end()) return;
    out.multicast = true;
    h = g->second;
  } else {
    h = it->second.unicast;
  }
  if (h && *h) (*h)(out);
}

Status<TransportError> SimTransport::send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) {
  const auto a = detail::to_ipv4(to.address);
  if (!a) return Err(TransportError::kUnreachable);
  auto it = ports_.find(from_port);
  if (it == ports_.end() || !it->second.unicast) return Err(TransportError::kNotBound);
  auto r = host_.send_to(from_port, net::Ipv4Endpoint{*a, to.port}, payload);
  if (!r.ok()) return Err(map_error(r.error()));
  return {};
}

}  // namespace layersec::someip
