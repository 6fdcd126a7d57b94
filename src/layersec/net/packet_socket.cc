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

#include <algorithm>
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

namespace {

// Control room per frame: the auxdata (VLAN) and a software timestamp.
struct alignas(cmsghdr) Control {
  char bytes[CMSG_SPACE(sizeof(tpacket_auxdata)) + CMSG_SPACE(sizeof(scm_timestamping))];
};

// After a recvmsg of `n` octets into `buf` (room for kVlanTagSize more):
// restores an offloaded VLAN tag from the auxdata and reads the timestamp.
// Returns the frame length.
std::size_t finish_frame(const msghdr& msg, std::uint8_t* buf, std::size_t n, std::int64_t* rx_realtime_ns) {
  std::size_t len = n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
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
    const std::uint16_t tpid = (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) != 0 ? aux.tp_vlan_tpid : kEtherTypeCTag;
    std::memmove(buf + 16, buf + 12, len - 12);
    store_be16(buf + 12, tpid);
    store_be16(buf + 14, aux.tp_vlan_tci);
    len += kVlanTagSize;
  }
  return len;
}

}  // namespace

struct PacketBatchStorage {
  explicit PacketBatchStorage(std::size_t n) : msgs(n), iov(n), names(n), controls(n) {}
  std::vector<mmsghdr> msgs;
  std::vector<iovec> iov;
  std::vector<sockaddr_ll> names;
  std::vector<Control> controls;
};

PacketRxBatch::PacketRxBatch(std::size_t capacity, std::size_t frame_capacity)
    : frame_capacity_(std::max(frame_capacity, kEthernetHeaderSize + kVlanTagSize)),
      buffers_(capacity * frame_capacity_),
      sizes_(capacity),
      rx_ns_(capacity),
      status_(capacity),
      storage_(std::make_unique<PacketBatchStorage>(capacity)) {}
PacketRxBatch::~PacketRxBatch() = default;
PacketRxBatch::PacketRxBatch(PacketRxBatch&&) noexcept = default;
PacketRxBatch& PacketRxBatch::operator=(PacketRxBatch&&) noexcept = default;

PacketTxBatch::PacketTxBatch(std::size_t capacity, std::size_t frame_capacity)
    : frame_capacity_(frame_capacity),
      buffers_(capacity * frame_capacity),
      sizes_(capacity),
      storage_(std::make_unique<PacketBatchStorage>(capacity)) {}
PacketTxBatch::~PacketTxBatch() = default;
PacketTxBatch::PacketTxBatch(PacketTxBatch&&) noexcept = default;
PacketTxBatch& PacketTxBatch::operator=(PacketTxBatch&&) noexcept = default;

MutableByteSpan PacketTxBatch::next_slot() {
  if (full()) return {};
  return {buffers_.data() + count_ * frame_capacity_, frame_capacity_};
}

void PacketTxBatch::commit(std::size_t size) {
  if (full()) return;
  sizes_[count_++] = std::min(size, frame_capacity_);
}

BatchSendResult PacketSocket::send(PacketTxBatch& batch) {
  BatchSendResult r;
  const std::size_t n = batch.count_;
  batch.count_ = 0;
  if (!fd_.valid()) {
    errno_ = EBADF;
    r.failed = n;
    return r;
  }
  auto& st = *batch.storage_;
  for (std::size_t i = 0; i < n; ++i) {
    st.iov[i] = iovec{batch.buffers_.data() + i * batch.frame_capacity_, batch.sizes_[i]};
    st.msgs[i] = mmsghdr{};
    st.msgs[i].msg_hdr.msg_iov = &st.iov[i];
    st.msgs[i].msg_hdr.msg_iovlen = 1;
  }
  std::size_t i = 0;
  while (i < n) {
    if (batch.sizes_[i] < kEthernetHeaderSize) {
      errno_ = EINVAL;
      ++r.failed;
      ++i;
      continue;
    }
    // Stop in front of a short frame so it is refused on its own.
    std::size_t end = i;
    while (end < n && batch.sizes_[end] >= kEthernetHeaderSize) ++end;
    const int k = ::sendmmsg(fd_.get(), st.msgs.data() + i, static_cast<unsigned>(end - i), MSG_NOSIGNAL);
    if (k > 0) {
      r.sent += static_cast<std::size_t>(k);
      i += static_cast<std::size_t>(k);
    } else {
      // The frame at i was refused (no room, link down, ...): as a single
      // send() would, it is dropped and the rest still go out in order.
      errno_ = errno;
      ++r.failed;
      ++i;
    }
  }
  return r;
}

Result<std::size_t, IoError> PacketSocket::receive(PacketRxBatch& batch) {
  batch.count_ = 0;
  if (!fd_.valid()) return Err(IoError::kClosed);
  auto& st = *batch.storage_;
  const std::size_t n = batch.capacity();
  for (std::size_t i = 0; i < n; ++i) {
    // Leave room for a tag to be reinserted.
    st.iov[i] = iovec{batch.buffers_.data() + i * batch.frame_capacity_, batch.frame_capacity_ - kVlanTagSize};
    st.msgs[i] = mmsghdr{};
    msghdr& m = st.msgs[i].msg_hdr;
    m.msg_name = &st.names[i];
    m.msg_namelen = sizeof(sockaddr_ll);
    m.msg_iov = &st.iov[i];
    m.msg_iovlen = 1;
    m.msg_control = st.controls[i].bytes;
    m.msg_controllen = sizeof(st.controls[i].bytes);
  }
  const int k = ::recvmmsg(fd_.get(), st.msgs.data(), static_cast<unsigned>(n), MSG_TRUNC | MSG_DONTWAIT, nullptr);
  if (k < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  batch.count_ = static_cast<std::size_t>(k);
  for (std::size_t i = 0; i < batch.count_; ++i) {
    const msghdr& m = st.msgs[i].msg_hdr;
    batch.rx_ns_[i] = 0;
    batch.sizes_[i] = 0;
    if (st.names[i].sll_pkttype == PACKET_OUTGOING) {
      batch.status_[i] = PacketRxBatch::Status::kSkipped;
      continue;
    }
    if ((m.msg_flags & MSG_TRUNC) != 0 || st.msgs[i].msg_len > st.iov[i].iov_len) {
      batch.status_[i] = PacketRxBatch::Status::kTruncated;
      continue;
    }
    batch.status_[i] = PacketRxBatch::Status::kOk;
    batch.sizes_[i] = finish_frame(m, batch.buffers_.data() + i * batch.frame_capacity_, st.msgs[i].msg_len,
                                   &batch.rx_ns_[i]);
  }
  return batch.count_;
}

Result<std::size_t, IoError> PacketSocket::receive(MutableByteSpan buffer, std::int64_t* rx_realtime_ns) {
  if (rx_realtime_ns) *rx_realtime_ns = 0;
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (buffer.size() < kEthernetHeaderSize + kVlanTagSize) return Err(IoError::kBadArgument);
  for (;;) {
    sockaddr_ll from{};
    // Leave room for a tag to be reinserted.
    iovec iov{buffer.data(), buffer.size() - kVlanTagSize};
    Control control;
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof(from);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof(control.bytes);
    const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_TRUNC);
    if (n < 0) {
      errno_ = errno;
      return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
    }
    if (from.sll_pkttype == PACKET_OUTGOING) continue;  // another local sender's frame
    if (static_cast<std::size_t>(n) > iov.iov_len) return Err(IoError::kTruncated);
    return finish_frame(msg, buffer.data(), static_cast<std::size_t>(n), rx_realtime_ns);
  }
}

}  // namespace layersec::net
