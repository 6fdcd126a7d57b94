#include "layersec/net/packet_socket.h"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace layersec::net {

Result<PacketSocket, IoError> PacketSocket::open(const std::string& interface, std::uint16_t ether_type,
                                                 bool nonblocking, int* error_number) {
  auto fail = [error_number](IoError e) {
    if (error_number) *error_number = errno;
    return Err(e);
  };
  if (interface.empty() || interface.size() >= IFNAMSIZ) {
    errno = EINVAL;
    return fail(IoError::kBadArgument);
  }
  PacketSocket s;
  s.fd_.reset(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), htons(ether_type)));
  if (!s.fd_.valid()) return fail(IoError::kSystem);
  const int fd = s.fd_.get();
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, interface.c_str(), interface.size());
  if (::ioctl(fd, SIOCGIFINDEX, &ifr) != 0) return fail(IoError::kBadArgument);
  s.ifindex_ = ifr.ifr_ifindex;
  if (::ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) return fail(IoError::kSystem);
  std::memcpy(s.mac_.bytes.data(), ifr.ifr_hwaddr.sa_data, 6);
  // Ask for tag metadata so offloaded VLAN tags can be restored.
  const int one = 1;
  if (::setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) != 0) return fail(IoError::kSystem);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ether_type);
  sll.sll_ifindex = s.ifindex_;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) != 0) return fail(IoError::kSystem);
  return s;
}

Status<IoError> PacketSocket::membership(int type, const MacAddress* mac, bool add) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  packet_mreq mr{};
  mr.mr_ifindex = ifindex_;
  mr.mr_type = static_cast<unsigned short>(type);
  if (mac) {
    mr.mr_alen = 6;
    std::memcpy(mr.mr_address, mac->bytes.data(), 6);
  }
  if (::setsockopt(fd_.get(), SOL_PACKET, add ? PACKET_ADD_MEMBERSHIP : PACKET_DROP_MEMBERSHIP, &mr, sizeof(mr)) !=
      0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  return {};
}

Status<IoError> PacketSocket::set_promiscuous(bool on) { return membership(PACKET_MR_PROMISC, nullptr, on); }

Status<IoError> PacketSocket::add_multicast(const MacAddress& mac) { return membership(PACKET_MR_MULTICAST, &mac, true); }

Status<IoError> PacketSocket::drop_multicast(const MacAddress& mac) {
  return membership(PACKET_MR_MULTICAST, &mac, false);
}

void PacketSocket::set_receive_buffer(int bytes) {
  if (!fd_.valid()) return;
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
    (void)::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
}

Result<std::size_t, IoError> PacketSocket::send(ByteSpan frame) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (frame.size() < kEthernetHeaderSize) return Err(IoError::kBadArgument);
  // Bound sockets send on their interface; the frame carries its own header.
  const ssize_t n = ::send(fd_.get(), frame.data(), frame.size(), MSG_NOSIGNAL);
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  return static_cast<std::size_t>(n);
}

Status<IoError> PacketSocket::attach_filter(std::span<const BpfInstruction> program) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (program.empty() || program.size() > BPF_MAXINSNS) return Err(IoError::kBadArgument);
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program.size());
  // BpfInstruction has sock_filter's layout (socket_filter.cc asserts it).
  prog.filter = reinterpret_cast<sock_filter*>(const_cast<BpfInstruction*>(program.data()));
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  return {};
}

Status<IoError> PacketSocket::enable_rx_timestamps() {
  if (!fd_.valid()) return Err(IoError::kClosed);
  const int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) != 0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  return {};
}

Result<std::size_t, IoError> PacketSocket::receive(MutableByteSpan buffer) { return receive(buffer, nullptr); }

Result<std::size_t, IoError> PacketSocket::receive(MutableByteSpan buffer, std::int64_t* rx_realtime_ns) {
  if (rx_realtime_ns) *rx_realtime_ns = 0;
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (buffer.size() < kEthernetHeaderSize + kVlanTagSize) return Err(IoError::kBadArgument);
  for (;;) {
    sockaddr_ll from{};
    // Leave room for a tag to be reinserted.
    iovec iov{buffer.data(), buffer.size() - kVlanTagSize};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(tpacket_auxdata)) + CMSG_SPACE(sizeof(scm_timestamping))];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof(from);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_TRUNC);
    if (n < 0) {
      errno_ = errno;
      return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
    }
    if (from.sll_pkttype == PACKET_OUTGOING) continue;  // another local sender's frame
    if (static_cast<std::size_t>(n) > iov.iov_len) return Err(IoError::kTruncated);
    std::size_t len = static_cast<std::size_t>(n);
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (rx_realtime_ns && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING &&
          c->cmsg_len >= CMSG_LEN(sizeof(scm_timestamping))) {
        scm_timestamping ts{};
        std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
        *rx_realtime_ns = static_cast<std::int64_t>(ts.ts[0].tv_sec) * 1'000'000'000 + ts.ts[0].tv_nsec;
        continue;
      }
      if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
      tpacket_auxdata aux;
      std::memcpy(&aux, CMSG_DATA(c), sizeof(aux));
      const bool tagged = (aux.tp_status & TP_STATUS_VLAN_VALID) != 0 || aux.tp_vlan_tci != 0;
      if (!tagged || len < 12) continue;
      const std::uint16_t tpid =
          (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) != 0 ? aux.tp_vlan_tpid : kEtherTypeCTag;
      std::memmove(buffer.data() + 16, buffer.data() + 12, len - 12);
      store_be16(buffer.data() + 12, tpid);
      store_be16(buffer.data() + 14, aux.tp_vlan_tci);
      len += kVlanTagSize;
    }
    return len;
  }
}

}  // namespace layersec::net
