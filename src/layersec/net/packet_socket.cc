#include "layersec/net/packet_socket.h"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace layersec::net {

// The mapped TPACKET_V2 receive ring: frame_nr slots of frame_size octets,
// frames_per_block to a block of block_size (the kernel's layout). Each slot
// starts with a tpacket2_hdr whose tp_status says who owns it: the kernel
// (TP_STATUS_KERNEL) or us (TP_STATUS_USER, a frame is waiting).
struct PacketRxRing {
  std::uint8_t* map = nullptr;
  std::size_t map_size = 0;
  std::size_t block_size = 0;
  std::size_t frame_size = 0;
  std::size_t frames_per_block = 0;
  std::size_t frame_nr = 0;
  std::size_t frame_capacity = 0;  // what a PacketRxBatch slot would hold
  std::size_t head = 0;            // the next slot to look at
  std::size_t held = 0;            // slots handed out, not yet given back (they end at head)
  std::uint64_t drops = 0;         // PACKET_STATISTICS tp_drops seen so far (not yet taken)

  PacketRxRing() = default;
  PacketRxRing(const PacketRxRing&) = delete;
  PacketRxRing& operator=(const PacketRxRing&) = delete;
  ~PacketRxRing() {
    if (map != nullptr) ::munmap(map, map_size);
  }
  [[nodiscard]] std::uint8_t* slot(std::size_t i) const {
    return map + (i / frames_per_block) * block_size + (i % frames_per_block) * frame_size;
  }
  [[nodiscard]] tpacket2_hdr* header(std::size_t i) const { return reinterpret_cast<tpacket2_hdr*>(slot(i)); }
  // Gives the held slots back to the kernel, oldest first.
  void release() {
    std::size_t i = (head + frame_nr - held) % frame_nr;
    for (; held > 0; --held, i = (i + 1) % frame_nr) {
      __atomic_store_n(&header(i)->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    }
  }
};

PacketSocket::PacketSocket(PacketSocket&&) noexcept = default;
PacketSocket& PacketSocket::operator=(PacketSocket&&) noexcept = default;
PacketSocket::~PacketSocket() = default;  // unmaps the ring, then closes the socket

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

Status<IoError> PacketSocket::join_fanout(std::uint16_t group_id, Fanout mode) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  int type = PACKET_FANOUT_HASH;
  if (mode == Fanout::kLb) type = PACKET_FANOUT_LB;
  if (mode == Fanout::kCpu) type = PACKET_FANOUT_CPU;
  const int arg = static_cast<int>(group_id) | (type << 16);
  if (::setsockopt(fd_.get(), SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) != 0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  return {};
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
      data_(capacity),
      sizes_(capacity),
      rx_ns_(capacity),
      status_(capacity),
      storage_(std::make_unique<PacketBatchStorage>(capacity)) {
  for (std::size_t i = 0; i < capacity; ++i) data_[i] = buffers_.data() + i * frame_capacity_;
}
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

Status<IoError> PacketSocket::enable_rx_ring(std::size_t frames, std::size_t frame_capacity) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (rx_ring_ || frames == 0 || frames > 65536 || frame_capacity < kEthernetHeaderSize + kVlanTagSize ||
      frame_capacity > 65536) {
    return Err(IoError::kBadArgument);
  }
  const int fd = fd_.get();
  const int v2 = TPACKET_V2;
  if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v2, sizeof v2) != 0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  auto ring = std::make_unique<PacketRxRing>();
  // The kernel puts the frame at tp_mac = TPACKET_ALIGN(TPACKET2_HDRLEN + 16)
  // - 14 for an Ethernet link (af_packet.c tpacket_rcv); a slot holds that
  // header room and frame_capacity octets, and a frame the slot cuts short
  // arrives with tp_snaplen < tp_len (kTruncated below).
  ring->frame_size = TPACKET_ALIGN(TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + frame_capacity);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  ring->block_size = std::size_t{1} << 16;
  while (ring->block_size < ring->frame_size) ring->block_size <<= 1;
  ring->block_size = (ring->block_size + page - 1) / page * page;
  ring->frames_per_block = ring->block_size / ring->frame_size;
  const std::size_t blocks = (frames + ring->frames_per_block - 1) / ring->frames_per_block;
  ring->frame_nr = blocks * ring->frames_per_block;
  ring->frame_capacity = frame_capacity;
  tpacket_req req{};
  req.tp_block_size = static_cast<unsigned>(ring->block_size);
  req.tp_block_nr = static_cast<unsigned>(blocks);
  req.tp_frame_size = static_cast<unsigned>(ring->frame_size);
  req.tp_frame_nr = static_cast<unsigned>(ring->frame_nr);
  auto undo = [&](bool ring_set) {
    errno_ = errno;
    if (ring_set) {
      tpacket_req none{};
      (void)::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &none, sizeof none);
    }
    const int v1 = TPACKET_V1;
    (void)::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v1, sizeof v1);
    return Err(IoError::kSystem);
  };
  if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0) return undo(false);
  ring->map_size = ring->block_size * blocks;
  void* map = ::mmap(nullptr, ring->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return undo(true);
  ring->map = static_cast<std::uint8_t*>(map);
  rx_ring_ = std::move(ring);
  return {};
}

void PacketSocket::release(PacketRxBatch& batch) {
  if (!rx_ring_) return;
  rx_ring_->release();
  batch.count_ = 0;
}

std::size_t PacketSocket::rx_ring_slots() const { return rx_ring_ ? rx_ring_->frame_nr : 0; }

std::uint64_t PacketSocket::take_rx_ring_drops() {
  if (!rx_ring_) return 0;
  const std::uint64_t d = rx_ring_->drops;
  rx_ring_->drops = 0;
  return d;
}

Result<std::size_t, IoError> PacketSocket::receive_ring(PacketRxBatch& batch) {
  PacketRxRing& ring = *rx_ring_;
  ring.release();  // the previous batch's slots (their frames are no longer used)
  const std::size_t n = batch.capacity();
  std::size_t k = 0;
  while (k < n) {
    tpacket2_hdr* h = ring.header(ring.head);
    const std::uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
    if ((status & TP_STATUS_USER) == 0) break;
    ring.head = (ring.head + 1) % ring.frame_nr;
    ++ring.held;
    if ((status & TP_STATUS_LOSING) != 0) {
      // The kernel dropped frames because no slot was free; reading the
      // statistics clears its counter (and the flag on later frames).
      tpacket_stats ts{};
      socklen_t len = sizeof ts;
      if (::getsockopt(fd_.get(), SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0) ring.drops += ts.tp_drops;
    }
    const std::size_t i = k++;
    std::uint8_t* const slot = ring.slot(ring.head == 0 ? ring.frame_nr - 1 : ring.head - 1);
    batch.sizes_[i] = 0;
    batch.rx_ns_[i] = 0;
    batch.data_[i] = batch.buffers_.data() + i * batch.frame_capacity_;
    const auto* from = reinterpret_cast<const sockaddr_ll*>(slot + TPACKET_ALIGN(sizeof(tpacket2_hdr)));
    if (from->sll_pkttype == PACKET_OUTGOING) {
      batch.status_[i] = PacketRxBatch::Status::kSkipped;
      continue;
    }
    // The header is the kernel's, but nothing is read outside the slot:
    // tp_mac and tp_snaplen must describe octets inside it. tp_snaplen <
    // tp_len is a frame the socket filter kept only the head of (delivered
    // as that head, as recvmmsg does) or one its slot cut short (longer
    // than frame_capacity - 4: kTruncated, as recvmmsg reports MSG_TRUNC).
    const std::size_t mac = h->tp_mac;
    std::size_t snap = h->tp_snaplen;
    if (mac < TPACKET2_HDRLEN || mac > ring.frame_size || snap > ring.frame_size - mac ||
        snap > ring.frame_capacity - kVlanTagSize) {
      batch.status_[i] = PacketRxBatch::Status::kTruncated;
      continue;
    }
    std::uint8_t* const buf = slot + mac;
    const bool tagged = (status & TP_STATUS_VLAN_VALID) != 0 || h->tp_vlan_tci != 0;
    if (tagged && snap >= 12) {
      if (mac + snap + kVlanTagSize > ring.frame_size) {  // no room for the tag in this slot
        batch.status_[i] = PacketRxBatch::Status::kTruncated;
        continue;
      }
      // Put the offloaded tag back in front of the EtherType.
      const std::uint16_t tpid = (status & TP_STATUS_VLAN_TPID_VALID) != 0 ? h->tp_vlan_tpid : kEtherTypeCTag;
      std::memmove(buf + 16, buf + 12, snap - 12);
      store_be16(buf + 12, tpid);
      store_be16(buf + 14, h->tp_vlan_tci);
      snap += kVlanTagSize;
    }
    if ((status & TP_STATUS_TS_SOFTWARE) != 0) {
      batch.rx_ns_[i] = static_cast<std::int64_t>(h->tp_sec) * 1'000'000'000 + h->tp_nsec;
    }
    batch.status_[i] = PacketRxBatch::Status::kOk;
    batch.data_[i] = buf;
    batch.sizes_[i] = snap;
  }
  batch.count_ = k;
  if (k == 0) return Err(IoError::kWouldBlock);
  return k;
}

Result<std::size_t, IoError> PacketSocket::receive(PacketRxBatch& batch) {
  batch.count_ = 0;
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (rx_ring_) return receive_ring(batch);
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
    batch.data_[i] = batch.buffers_.data() + i * batch.frame_capacity_;
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
