#include "layersec/net/udp_socket.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace layersec::net {

namespace {
sockaddr_in to_sockaddr(Ipv4Endpoint e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(e.port);
  sa.sin_addr.s_addr = htonl(e.address.value);
  return sa;
}

Ipv4Endpoint from_sockaddr(const sockaddr_in& sa) {
  return {Ipv4Address{ntohl(sa.sin_addr.s_addr)}, ntohs(sa.sin_port)};
}

bool set_int(int fd, int level, int name, int value) {
  return ::setsockopt(fd, level, name, &value, sizeof(value)) == 0;
}
}  // namespace

Result<UdpSocket, IoError> UdpSocket::open(Ipv4Endpoint local, const UdpSocketOptions& o, int* error_number) {
  auto fail = [error_number](IoError e) {
    if (error_number) *error_number = errno;
    return Err(e);
  };
  UdpSocket s;
  s.fd_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | (o.nonblocking ? SOCK_NONBLOCK : 0), 0));
  if (!s.fd_.valid()) return fail(IoError::kSystem);
  const int fd = s.fd_.get();
  if (o.reuse_address && !set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1)) return fail(IoError::kSystem);
  if (o.reuse_port && !set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1)) return fail(IoError::kSystem);
  if (!set_int(fd, IPPROTO_IP, IP_PKTINFO, 1)) return fail(IoError::kSystem);
  if (!set_int(fd, IPPROTO_IP, IP_MULTICAST_LOOP, o.multicast_loop ? 1 : 0)) return fail(IoError::kSystem);
  if (!set_int(fd, IPPROTO_IP, IP_MULTICAST_TTL, o.multicast_ttl)) return fail(IoError::kSystem);
  if (o.receive_buffer > 0 && !set_int(fd, SOL_SOCKET, SO_RCVBUF, o.receive_buffer)) return fail(IoError::kSystem);
  if (o.send_buffer > 0 && !set_int(fd, SOL_SOCKET, SO_SNDBUF, o.send_buffer)) return fail(IoError::kSystem);
  if (o.multicast_interface) {
    in_addr a{};
    a.s_addr = htonl(o.multicast_interface->value);
    if (::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &a, sizeof(a)) != 0) return fail(IoError::kSystem);
  }
  if (!o.bind_device.empty()) {
    if (o.bind_device.size() >= IFNAMSIZ) return fail(IoError::kBadArgument);
    if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o.bind_device.c_str(),
                     static_cast<socklen_t>(o.bind_device.size())) != 0)
      return fail(IoError::kSystem);
  }
  sockaddr_in sa = to_sockaddr(local);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) return fail(IoError::kSystem);
  socklen_t len = sizeof(sa);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return fail(IoError::kSystem);
  s.local_ = from_sockaddr(sa);
  return s;
}

Status<IoError> UdpSocket::membership(int option, Ipv4Address group, Ipv4Address interface, int interface_index) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  ip_mreqn m{};
  m.imr_multiaddr.s_addr = htonl(group.value);
  m.imr_address.s_addr = htonl(interface.value);
  m.imr_ifindex = interface_index;
  if (::setsockopt(fd_.get(), IPPROTO_IP, option, &m, sizeof(m)) != 0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  return {};
}

Status<IoError> UdpSocket::join_group(Ipv4Address group, Ipv4Address interface) {
  return membership(IP_ADD_MEMBERSHIP, group, interface, 0);
}

Status<IoError> UdpSocket::join_group_on(Ipv4Address group, int interface_index) {
  return membership(IP_ADD_MEMBERSHIP, group, Ipv4Address::any(), interface_index);
}

Status<IoError> UdpSocket::leave_group(Ipv4Address group, Ipv4Address interface) {
  return membership(IP_DROP_MEMBERSHIP, group, interface, 0);
}

Status<IoError> UdpSocket::leave_group_on(Ipv4Address group, int interface_index) {
  return membership(IP_DROP_MEMBERSHIP, group, Ipv4Address::any(), interface_index);
}

Result<std::size_t, IoError> UdpSocket::send_to(Ipv4Endpoint dst, ByteSpan payload) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  const sockaddr_in sa = to_sockaddr(dst);
  const ssize_t n = ::sendto(fd_.get(), payload.data(), payload.size(), MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&sa), sizeof(sa));
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  return static_cast<std::size_t>(n);
}

Result<ReceivedDatagram, IoError> UdpSocket::receive(MutableByteSpan buffer) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  sockaddr_in src{};
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in_pktinfo))];
  msghdr msg{};
  msg.msg_name = &src;
  msg.msg_namelen = sizeof(src);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(fd_.get(), &msg, 0);
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  if (msg.msg_flags & MSG_TRUNC) return Err(IoError::kTruncated);
  ReceivedDatagram d;
  d.size = static_cast<std::size_t>(n);
  d.src = from_sockaddr(src);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo info;
      std::memcpy(&info, CMSG_DATA(c), sizeof(info));
      d.dst = Ipv4Address{ntohl(info.ipi_addr.s_addr)};
      d.interface_index = info.ipi_ifindex;
    }
  }
  return d;
}

}  // namespace layersec::net
