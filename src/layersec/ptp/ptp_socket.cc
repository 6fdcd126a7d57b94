#include "layersec/ptp/ptp_socket.h"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "layersec/ptp/raw_clock.h"

namespace layersec::ptp {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw PtpSocketError(what + ": " + std::strerror(errno));
}

std::int64_t ns_of(const timespec& ts) { return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec; }

// The software timestamp in a control message chain, if any.
std::optional<std::int64_t> software_stamp(msghdr& msg) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING &&
        c->cmsg_len >= CMSG_LEN(sizeof(scm_timestamping))) {
      scm_timestamping ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      if (ts.ts[0].tv_sec != 0 || ts.ts[0].tv_nsec != 0) return ns_of(ts.ts[0]);
    }
  }
  return std::nullopt;
}

}  // namespace

PtpSocket::PtpSocket(const std::string& interface, Mode mode) {
  if (interface.empty() || interface.size() >= IFNAMSIZ) throw PtpSocketError("--iface: bad interface name");
  ifindex_ = static_cast<int>(::if_nametoindex(interface.c_str()));
  if (ifindex_ == 0) fail("--iface " + interface);
  // Protocol 0: the socket is registered for no EtherType and receives nothing.
  const std::uint16_t protocol = mode == Mode::kSendOnly ? 0 : htons(kEtherType);
  fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
  if (fd_ < 0) fail("socket(AF_PACKET)");
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = protocol;
  sll.sll_ifindex = ifindex_;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) {
    const int e = errno;
    ::close(fd_);
    errno = e;
    fail("bind " + interface);
  }
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, interface.c_str(), interface.size());
  if (::ioctl(fd_, SIOCGIFHWADDR, &ifr) != 0) {
    ::close(fd_);
    fail("SIOCGIFHWADDR " + interface);
  }
  std::memcpy(mac_.data(), ifr.ifr_hwaddr.sa_data, 6);
  packet_mreq mreq{};
  mreq.mr_ifindex = ifindex_;
  mreq.mr_type = PACKET_MR_MULTICAST;
  mreq.mr_alen = 6;
  std::memcpy(mreq.mr_address, kPdelayMulticast.data(), 6);
  if (::setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0) {
    ::close(fd_);
    fail("PACKET_ADD_MEMBERSHIP 01:80:c2:00:00:0e");
  }
  // What the driver offers (reported; software timestamps are used either way).
  ethtool_ts_info tsi{};
  tsi.cmd = ETHTOOL_GET_TS_INFO;
  ifreq eifr{};
  std::memcpy(eifr.ifr_name, interface.c_str(), interface.size());
  eifr.ifr_data = reinterpret_cast<char*>(&tsi);
  if (::ioctl(fd_, SIOCETHTOOL, &eifr) == 0) {
    info_.queried = true;
    info_.software_tx = (tsi.so_timestamping & SOF_TIMESTAMPING_TX_SOFTWARE) != 0;
    info_.software_rx = (tsi.so_timestamping & SOF_TIMESTAMPING_RX_SOFTWARE) != 0;
    info_.software = (tsi.so_timestamping & SOF_TIMESTAMPING_SOFTWARE) != 0;
    info_.hardware_tx = (tsi.so_timestamping & SOF_TIMESTAMPING_TX_HARDWARE) != 0;
    info_.hardware_rx = (tsi.so_timestamping & SOF_TIMESTAMPING_RX_HARDWARE) != 0;
    info_.phc_index = tsi.phc_index;
  }
  const int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  if (::setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) != 0) {
    ::close(fd_);
    fail("SO_TIMESTAMPING (software rx/tx)");
  }
}

PtpSocket::~PtpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<PtpSocket::Received> PtpSocket::receive(MutableByteSpan buf) {
  for (;;) {
    sockaddr_ll from{};
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char control[512];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      errno_ = errno;
      return std::nullopt;
    }
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    if (static_cast<std::size_t>(n) > buf.size()) continue;  // truncated: not a gPTP frame
    Received r;
    r.size = static_cast<std::size_t>(n);
    if (auto ts = software_stamp(msg)) {
      r.rx_raw_ns = raw_from_realtime(*ts);
      r.has_timestamp = true;
    }
    return r;
  }
}

bool PtpSocket::send(ByteSpan frame) {
  const ssize_t n = ::send(fd_, frame.data(), frame.size(), 0);
  if (n != static_cast<ssize_t>(frame.size())) {
    errno_ = n < 0 ? errno : EMSGSIZE;
    return false;
  }
  return true;
}

std::optional<std::int64_t> PtpSocket::tx_timestamp(MessageType type, std::uint16_t sequence_id, int timeout_ms) {
  // The looped frame: Ethernet header then the PTP header.
  return wait_tx_timestamp(
      [&](ByteSpan looped) {
        return looped.size() >= 14 + kHeaderSize && (looped[14] & 0x0F) == static_cast<std::uint8_t>(type) &&
               load_be16(&looped[14 + 30]) == sequence_id;
      },
      timeout_ms);
}

std::optional<std::int64_t> PtpSocket::tx_timestamp_of(ByteSpan sent, int timeout_ms) {
  const std::size_t n = std::min<std::size_t>(64, sent.size());
  return wait_tx_timestamp(
      [&](ByteSpan looped) { return looped.size() >= n && std::memcmp(looped.data(), sent.data(), n) == 0; },
      timeout_ms);
}

template <typename Match>
std::optional<std::int64_t> PtpSocket::wait_tx_timestamp(const Match& match, int timeout_ms) {
  const std::int64_t end = raw_now_ns() + std::int64_t{timeout_ms} * 1'000'000;
  std::array<std::uint8_t, kMaxFrameSize + 64> buf{};
  for (;;) {
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char control[512];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (n >= 0) {
      const auto ts = software_stamp(msg);
      const std::size_t got = std::min(static_cast<std::size_t>(n), buf.size());
      if (ts && match(ByteSpan(buf.data(), got))) return raw_from_realtime(*ts);
      continue;  // another frame's timestamp (a late one): skip it
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      errno_ = errno;
      return std::nullopt;
    }
    const std::int64_t left = end - raw_now_ns();
    if (left <= 0) return std::nullopt;
    pollfd p{fd_, POLLPRI, 0};
    ::poll(&p, 1, static_cast<int>(left / 1'000'000) + 1);
  }
}

}  // namespace layersec::ptp
