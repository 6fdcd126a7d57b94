#include "layersec/net/offload.h"

#include <algorithm>
#include <cstring>

#include "layersec/net/frame.h"

namespace layersec::net {

const char* to_string(OffloadError e) {
  switch (e) {
    case OffloadError::kBadChecksumOffsets: return "checksum offsets outside the frame";
    case OffloadError::kUnsupportedGso: return "unsupported segmentation offload";
    case OffloadError::kNotTcpIp: return "segmentation offload on a frame that is not Ethernet/IP/TCP";
    case OffloadError::kMalformed: return "header lengths that do not match the frame";
    case OffloadError::kSegmentTooLong: return "segment longer than the link carries";
  }
  return "unknown offload error";
}

namespace {

constexpr std::size_t kEth = 14;
constexpr std::uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpCwr = 0x80;
// More segments than this from one read is not a TCP segment the kernel builds.
constexpr std::size_t kMaxSegments = 1024;

// The folded (not complemented) one's-complement sum of `data`.
std::uint32_t folded_sum(ByteSpan data) { return static_cast<std::uint16_t>(~internet_checksum(data)); }

struct TcpLayout {
  bool v6 = false;
  std::size_t ip_len = 0;   // IP header octets
  std::size_t tcp_len = 0;  // TCP header octets
  std::size_t payload = 0;  // TCP payload octets
};

Result<TcpLayout, OffloadError> tcp_layout(ByteSpan f, bool v6) {
  if (f.size() < kEth) return Err(OffloadError::kNotTcpIp);
  const std::uint16_t type = load_be16(f.data() + 12);
  TcpLayout l;
  l.v6 = v6;
  std::size_t ip_total = 0;
  if (!v6) {
    if (type != kEtherTypeIpv4 || f.size() < kEth + 20) return Err(OffloadError::kNotTcpIp);
    const std::uint8_t* ip = f.data() + kEth;
    if ((ip[0] >> 4) != 4 || ip[9] != kTcp) return Err(OffloadError::kNotTcpIp);
    l.ip_len = static_cast<std::size_t>(ip[0] & 0x0F) * 4;
    if (l.ip_len < 20) return Err(OffloadError::kMalformed);
    if ((load_be16(ip + 6) & 0x3FFF) != 0) return Err(OffloadError::kMalformed);  // MF or an offset
    ip_total = load_be16(ip + 2);
  } else {
    if (type != kEtherTypeIpv6 || f.size() < kEth + 40) return Err(OffloadError::kNotTcpIp);
    const std::uint8_t* ip = f.data() + kEth;
    if ((ip[0] >> 4) != 6 || ip[6] != kTcp) return Err(OffloadError::kNotTcpIp);
    l.ip_len = 40;
    ip_total = 40 + static_cast<std::size_t>(load_be16(ip + 4));
  }
  if (ip_total != f.size() - kEth) return Err(OffloadError::kMalformed);
  if (f.size() < kEth + l.ip_len + 20) return Err(OffloadError::kMalformed);
  l.tcp_len = static_cast<std::size_t>(f[kEth + l.ip_len + 12] >> 4) * 4;
  if (l.tcp_len < 20 || kEth + l.ip_len + l.tcp_len > f.size()) return Err(OffloadError::kMalformed);
  l.payload = f.size() - kEth - l.ip_len - l.tcp_len;
  return l;
}

// The TCP checksum of a segment whose IP header and TCP header+payload are
// final, its checksum field zero.
std::uint16_t tcp_checksum(ByteSpan ip, ByteSpan tcp, bool v6) {
  std::uint8_t pseudo[40] = {};
  std::size_t n = 0;
  if (!v6) {
    std::memcpy(pseudo, ip.data() + 12, 8);  // source, destination
    pseudo[9] = kTcp;
    store_be16(pseudo + 10, static_cast<std::uint16_t>(tcp.size()));
    n = 12;
  } else {
    std::memcpy(pseudo, ip.data() + 8, 32);
    store_be32(pseudo + 32, static_cast<std::uint32_t>(tcp.size()));
    pseudo[39] = kTcp;
    n = 40;
  }
  return internet_checksum(tcp, folded_sum(ByteSpan(pseudo, n)));
}

}  // namespace

Result<std::size_t, OffloadError> complete_offload(const VnetHeader& h, MutableByteSpan frame,
                                                   MutableByteSpan scratch, std::size_t max_frame,
                                                   FrameSink& sink) {
  const std::uint8_t gso = h.gso_type;
  if (gso == kVnetGsoNone) {
    if (frame.size() > max_frame) return Err(OffloadError::kSegmentTooLong);
    if ((h.flags & kVnetNeedsCsum) != 0) {
      const std::size_t start = h.csum_start;
      const std::size_t at = start + h.csum_offset;
      if (start >= frame.size() || at + 2 > frame.size()) return Err(OffloadError::kBadChecksumOffsets);
      const std::uint16_t c = internet_checksum(ByteSpan(frame.data() + start, frame.size() - start));
      store_be16(frame.data() + at, c == 0 ? 0xFFFF : c);
    }
    sink.frame(frame);
    return std::size_t{1};
  }
  if ((gso != kVnetGsoTcpV4 && gso != kVnetGsoTcpV6) || h.gso_size == 0) return Err(OffloadError::kUnsupportedGso);
  auto layout = tcp_layout(frame, gso == kVnetGsoTcpV6);
  if (!layout) return Err(layout.error());
  const TcpLayout& l = *layout;
  const std::size_t headers = kEth + l.ip_len + l.tcp_len;
  const std::size_t mss = h.gso_size;
  const std::size_t count = std::max<std::size_t>(1, (l.payload + mss - 1) / mss);
  if (count > kMaxSegments) return Err(OffloadError::kMalformed);
  if (headers + std::min(mss, l.payload) > max_frame || scratch.size() < max_frame) {
    return Err(OffloadError::kSegmentTooLong);
  }
  const std::uint8_t* ip0 = frame.data() + kEth;
  const std::uint8_t* tcp0 = ip0 + l.ip_len;
  const std::uint16_t id0 = l.v6 ? 0 : load_be16(ip0 + 4);
  const std::uint32_t seq0 = load_be32(tcp0 + 4);
  const std::uint8_t flags0 = tcp0[13];
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t off = i * mss;
    const std::size_t chunk = std::min(mss, l.payload - off);
    std::uint8_t* s = scratch.data();
    std::memcpy(s, frame.data(), headers);
    std::memcpy(s + headers, frame.data() + headers + off, chunk);
    std::uint8_t* ip = s + kEth;
    std::uint8_t* tcp = ip + l.ip_len;
    if (!l.v6) {
      store_be16(ip + 2, static_cast<std::uint16_t>(l.ip_len + l.tcp_len + chunk));
      store_be16(ip + 4, static_cast<std::uint16_t>(id0 + i));
      store_be16(ip + 10, 0);
      store_be16(ip + 10, internet_checksum(ByteSpan(ip, l.ip_len)));
    } else {
      store_be16(ip + 4, static_cast<std::uint16_t>(l.tcp_len + chunk));
    }
    store_be32(tcp + 4, static_cast<std::uint32_t>(seq0 + off));
    std::uint8_t flags = flags0;
    if (i + 1 < count) flags &= static_cast<std::uint8_t>(~(kTcpFin | kTcpPsh));
    if (i > 0) flags &= static_cast<std::uint8_t>(~kTcpCwr);
    tcp[13] = flags;
    store_be16(tcp + 16, 0);
    store_be16(tcp + 16, tcp_checksum(ByteSpan(ip, l.ip_len), ByteSpan(tcp, l.tcp_len + chunk), l.v6));
    sink.frame(ByteSpan(s, headers + chunk));
  }
  return count;
}

}  // namespace layersec::net
