#include "layersec/someip/socket_transport.h"

#include <poll.h>

#include <cerrno>
#include <utility>

#include "layersec/someip/runtime_net.h"

namespace layersec::someip {

SocketTransport::SocketTransport(net::EventLoop& loop, net::Ipv4Address local_address, std::string device)
    : loop_(loop), local_(local_address), device_(std::move(device)), alarm_(loop) {}

SocketTransport::~SocketTransport() {
  *alive_ = false;
  for (auto& [port, u] : unicast_) {
    (void)port;
    loop_.unwatch(u->socket.fd());
  }
  for (auto& [port, m] : multicast_) {
    (void)port;
    loop_.unwatch(m->socket.fd());
  }
}

net::UdpSocketOptions SocketTransport::options() const {
  net::UdpSocketOptions o;
  o.reuse_address = true;
  o.nonblocking = true;
  o.multicast_interface = local_;
  o.multicast_loop = (local_.value >> 24) == 127;
  o.bind_device = device_;
  return o;
}

IpAddress SocketTransport::local_address() const { return detail::from_ipv4(local_); }

Status<TransportError> SocketTransport::bind(std::uint16_t port, Handler handler) {
  if (unicast_.count(port) != 0) return Err(TransportError::kPortInUse);
  int err = 0;
  auto s = net::UdpSocket::open(net::Ipv4Endpoint{local_, port}, options(), &err);
  if (!s.ok()) {
    last_errno_ = err;
    return Err(err == EADDRINUSE ? TransportError::kPortInUse : TransportError::kSystem);
  }
  auto u = std::make_unique<UnicastPort>(UnicastPort{std::move(s).value(), std::make_shared<Handler>(std::move(handler))});
  const int fd = u->socket.fd();
  unicast_[port] = std::move(u);
  std::weak_ptr<bool> alive = alive_;
  loop_.watch(fd, POLLIN, [this, alive, port](short) {
    if (auto a = alive.lock(); a && *a) drain_unicast(port);
  });
  return {};
}

void SocketTransport::unbind(std::uint16_t port) {
  auto it = unicast_.find(port);
  if (it == unicast_.end()) return;
  loop_.unwatch(it->second->socket.fd());
  unicast_.erase(it);
}

Status<TransportError> SocketTransport::join(const Endpoint& group, Handler handler) {
  const auto g = detail::to_ipv4(group.address);
  if (!g || !g->is_multicast()) return Err(TransportError::kUnreachable);
  auto it = multicast_.find(group.port);
  if (it == multicast_.end()) {
    int err = 0;
    auto s = net::UdpSocket::open(net::Ipv4Endpoint{net::Ipv4Address::any(), group.port}, options(), &err);
    if (!s.ok()) {
      last_errno_ = err;
      return Err(err == EADDRINUSE ? TransportError::kPortInUse : TransportError::kSystem);
    }
    auto m = std::make_unique<MulticastPort>(MulticastPort{std::move(s).value(), {}});
    const int fd = m->socket.fd();
    it = multicast_.emplace(group.port, std::move(m)).first;
    std::weak_ptr<bool> alive = alive_;
    const std::uint16_t port = group.port;
    loop_.watch(fd, POLLIN, [this, alive, port](short) {
      if (auto a = alive.lock(); a && *a) drain_multicast(port);
    });
  }
  MulticastPort& m = *it->second;
  if (m.groups.count(*g) == 0) {
    auto st = m.socket.join_group(*g, local_);
    if (!st.ok()) {
      last_errno_ = m.socket.last_errno();
      if (m.groups.empty()) {
        loop_.unwatch(m.socket.fd());
        multicast_.erase(it);
      }
      return Err(TransportError::kSystem);
    }
  }
  m.groups[*g] = std::make_shared<Handler>(std::move(handler));
  return {};
}

void SocketTransport::leave(const Endpoint& group) {
  const auto g = detail::to_ipv4(group.address);
  if (!g) return;
  auto it = multicast_.find(group.port);
  if (it == multicast_.end()) return;
  MulticastPort& m = *it->second;
  if (m.groups.erase(*g) == 0) return;
  m.socket.leave_group(*g, local_).ignore();
  if (m.groups.empty()) {
    loop_.unwatch(m.socket.fd());
    multicast_.erase(it);
  }
}

Status<TransportError> SocketTransport::send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) {
  const auto a = detail::to_ipv4(to.address);
  if (!a) return Err(TransportError::kUnreachable);
  auto it = unicast_.find(from_port);
  if (it == unicast_.end()) return Err(TransportError::kNotBound);
  if (payload.size() > 65507) return Err(TransportError::kTooLarge);
  auto r = it->second->socket.send_to(net::Ipv4Endpoint{*a, to.port}, payload);
  if (!r.ok()) {
    ++stats_.tx_errors;
    last_errno_ = it->second->socket.last_errno();
    if (last_errno_ == ENETUNREACH || last_errno_ == EHOSTUNREACH) return Err(TransportError::kUnreachable);
    if (last_errno_ == EMSGSIZE) return Err(TransportError::kTooLarge);
    return Err(TransportError::kSystem);
  }
  return {};
}

SocketTransport::RxStep SocketTransport::receive_one(net::UdpSocket& socket, net::ReceivedDatagram& out) {
  auto r = socket.receive(rx_buffer_);
  if (r.ok()) {
    out = *r;
    return RxStep::kGot;
  }
  if (r.error() == net::IoError::kWouldBlock) return RxStep::kStop;
  if (r.error() == net::IoError::kTruncated) {  // consumed and dropped; read on
    ++stats_.rx_truncated;
    return RxStep::kSkip;
  }
  ++stats_.rx_errors;
  return RxStep::kStop;
}

void SocketTransport::drain_unicast(std::uint16_t port) {
  // Bounded per wake-up so one busy socket cannot starve the loop.
  for (int i = 0; i < 64; ++i) {
    auto it = unicast_.find(port);
    if (it == unicast_.end()) return;
    net::ReceivedDatagram r;
    const RxStep step = receive_one(it->second->socket, r);
    if (step == RxStep::kStop) return;
    if (step == RxStep::kSkip) continue;
    ++stats_.rx_datagrams;
    Datagram d;
    d.payload = ByteSpan(rx_buffer_.data(), r.size);
    d.source = detail::from_ipv4(r.src);
    d.destination = detail::from_ipv4(net::Ipv4Endpoint{local_, port});
    const std::shared_ptr<Handler> h = it->second->handler;  // may unbind itself
    if (h && *h) (*h)(d);
  }
}

void SocketTransport::drain_multicast(std::uint16_t port) {
  for (int i = 0; i < 64; ++i) {
    auto it = multicast_.find(port);
    if (it == multicast_.end()) return;
    net::ReceivedDatagram r;
    const RxStep step = receive_one(it->second->socket, r);
    if (step == RxStep::kStop) return;
    if (step == RxStep::kSkip) continue;
    auto g = it->second->groups.find(r.dst);
    if (g == it->second->groups.end()) {
      ++stats_.rx_not_joined;
      continue;
    }
    ++stats_.rx_datagrams;
    Datagram d;
    d.payload = ByteSpan(rx_buffer_.data(), r.size);
    d.source = detail::from_ipv4(r.src);
    d.destination = detail::from_ipv4(net::Ipv4Endpoint{r.dst, port});
    d.multicast = true;
    const std::shared_ptr<Handler> h = g->second;
    if (h && *h) (*h)(d);
  }
}

}  // namespace layersec::someip
