#include "layersec/net/offload.h"

#include <algorithm>
#include <cstring>

#include "layersec/net/frame.h"

namespace layersec::net {

const char* to_string(OffloadError e) {
  switch (e) {
    case OffloadError::kUnknownFlags: return "virtio-net header flags other than NEEDS_CSUM and DATA_VALID";
    case OffloadError::kBadChecksumOffsets: return "checksum offsets outside the frame or inside the Ethernet header";
    case OffloadError::kUnsupportedGso: return "unsupported segmentation offload";
    case OffloadError::kNotTcpIp: return "segmentation offload on a frame that is not Ethernet/IP/TCP";
    case OffloadError::kMalformed: return "header lengths that do not match the frame";
    case OffloadError::kSegmentTooLong: return "segment longer than the link carries";
  }
  return "unknown offload error";
}

const char* counter_name(OffloadError e) {
  switch (e) {
    case OffloadError::kUnknownFlags: return "unknown_flags";
    case OffloadError::kBadChecksumOffsets: return "bad_checksum_offsets";
    case OffloadError::kUnsupportedGso: return "unsupported_gso";
    case OffloadError::kNotTcpIp: return "not_tcp_ip";
    case OffloadError::kMalformed: return "malformed";
    case OffloadError::kSegmentTooLong: return "segment_too_long";
  }
  return "unknown";
}

namespace {

constexpr std::size_t kEth = 14;
constexpr std::uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpAck = 0x10, kTcpCwr = 0x80;
constexpr std::size_t kTcpChecksumAt = 16;
// More segments than this from one read is not a TCP segment the kernel builds.
constexpr std::size_t kMaxSegments = 1024;
constexpr std::size_t kMaxIpPacket = 65535;

// The folded (not complemented) one's-complement sum of `data`.
std::uint32_t folded_sum(ByteSpan data) { return static_cast<std::uint16_t>(~internet_checksum(data)); }

// Where the headers of an Ethernet/IP/TCP frame are.
struct TcpLayout {
  std::size_t l2 = kEth;    // Ethernet header with its tags
  bool v6 = false;
  std::size_t ip_len = 0;   // IP header octets
  std::size_t tcp_len = 0;  // TCP header octets
  std::size_t payload = 0;  // TCP payload octets
  [[nodiscard]] std::size_t headers() const { return l2 + ip_len + tcp_len; }
};

// Parses Ethernet II (at most two C/S-tags), IPv4 (no fragment) or IPv6 (TCP
// as the next header) and the TCP header, and checks that the IP length
// field covers exactly the rest of the frame.
Result<TcpLayout, OffloadError> tcp_layout(ByteSpan f) {
  ByteReader r(f);
  TcpLayout l;
  r.bytes(12);
  std::uint16_t type = r.u16();
  for (int tags = 0; tags < 2 && (type == kEtherTypeCTag || type == kEtherTypeSTag); ++tags) {
    r.u16();  // TCI
    type = r.u16();
    l.l2 += 4;
  }
  if (!r.ok()) return Err(OffloadError::kNotTcpIp);
  std::size_t ip_total = 0;
  if (type == kEtherTypeIpv4) {
    const std::uint8_t version_ihl = r.u8();
    r.u8();  // TOS
    ip_total = r.u16();
    r.u16();  // identification
    const std::uint16_t fragment = r.u16();
    r.u8();  // TTL
    const std::uint8_t protocol = r.u8();
    r.bytes(10);  // checksum, addresses
    if (!r.ok() || (version_ihl >> 4) != 4 || protocol != kTcp) return Err(OffloadError::kNotTcpIp);
    l.ip_len = static_cast<std::size_t>(version_ihl & 0x0F) * 4;
    if (l.ip_len < 20 || (fragment & 0x3FFF) != 0) return Err(OffloadError::kMalformed);  // MF or an offset
    r.bytes(l.ip_len - 20);  // options
  } else if (type == kEtherTypeIpv6) {
    const std::uint32_t version_class_flow = r.u32();
    const std::uint16_t payload_length = r.u16();
    const std::uint8_t next_header = r.u8();
    r.bytes(33);  // hop limit, addresses
    if (!r.ok() || (version_class_flow >> 28) != 6 || next_header != kTcp) return Err(OffloadError::kNotTcpIp);
    l.v6 = true;
    l.ip_len = 40;
    ip_total = 40 + std::size_t{payload_length};
  } else {
    return Err(OffloadError::kNotTcpIp);
  }
  if (!r.ok() || ip_total != f.size() - l.l2) return Err(OffloadError::kMalformed);
  r.bytes(12);  // ports, sequence, acknowledgement
  l.tcp_len = static_cast<std::size_t>(r.u8() >> 4) * 4;
  if (!r.ok() || l.tcp_len < 20) return Err(OffloadError::kMalformed);
  r.bytes(l.tcp_len - 13);  // flags, window, checksum, urgent pointer, options
  if (!r.ok()) return Err(OffloadError::kMalformed);
  l.payload = r.remaining();
  return l;
}

// The folded pseudo-header sum of a TCP segment of `tcp_length` octets
// (RFC 9293 3.1; RFC 8200 8.1).
std::uint32_t tcp_pseudo_sum(const std::uint8_t* ip, bool v6, std::size_t tcp_length) {
  std::uint8_t pseudo[40] = {};
  if (!v6) {
    std::memcpy(pseudo, ip + 12, 8);  // source, destination
    pseudo[9] = kTcp;
    store_be16(pseudo + 10, static_cast<std::uint16_t>(tcp_length));
    return folded_sum(ByteSpan(pseudo, 12));
  }
  std::memcpy(pseudo, ip + 8, 32);
  store_be32(pseudo + 32, static_cast<std::uint32_t>(tcp_length));
  pseudo[39] = kTcp;
  return folded_sum(ByteSpan(pseudo, 40));
}

// The TCP checksum of a segment whose IP header and TCP header+payload are
// final, its checksum field zero; or 0 over a segment whose field is right.
std::uint16_t tcp_checksum(const std::uint8_t* ip, bool v6, ByteSpan tcp) {
  return internet_checksum(tcp, tcp_pseudo_sum(ip, v6, tcp.size()));
}

}  // namespace

Result<std::size_t, OffloadError> complete_offload(const VnetHeader& h, MutableByteSpan frame,
                                                   MutableByteSpan scratch, std::size_t max_frame,
                                                   FrameSink& sink) {
  if ((h.flags & ~(kVnetNeedsCsum | kVnetDataValid)) != 0) return Err(OffloadError::kUnknownFlags);
  const std::uint8_t gso = h.gso_type;
  if (gso == kVnetGsoNone) {
    if (frame.size() > max_frame) return Err(OffloadError::kSegmentTooLong);
    if ((h.flags & kVnetNeedsCsum) != 0) {
      const std::size_t start = h.csum_start;
      const std::size_t at = start + h.csum_offset;
      if (start < kEth || start >= frame.size() || at + 2 > frame.size()) {
        return Err(OffloadError::kBadChecksumOffsets);
      }
      const std::uint16_t c = internet_checksum(ByteSpan(frame.data() + start, frame.size() - start));
      store_be16(frame.data() + at, c == 0 ? 0xFFFF : c);
    }
    sink.frame(frame);
    return std::size_t{1};
  }
  if ((gso != kVnetGsoTcpV4 && gso != kVnetGsoTcpV6) || h.gso_size == 0) return Err(OffloadError::kUnsupportedGso);
  auto layout = tcp_layout(frame);
  if (!layout) return Err(layout.error());
  const TcpLayout& l = *layout;
  if (l.v6 != (gso == kVnetGsoTcpV6)) return Err(OffloadError::kNotTcpIp);
  const std::size_t headers = l.headers();
  const std::size_t mss = h.gso_size;
  const std::size_t count = std::max<std::size_t>(1, (l.payload + mss - 1) / mss);
  if (count > kMaxSegments) return Err(OffloadError::kMalformed);
  if (headers + std::min(mss, l.payload) > max_frame || scratch.size() < max_frame) {
    return Err(OffloadError::kSegmentTooLong);
  }
  const std::uint8_t* ip0 = frame.data() + l.l2;
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
    std::uint8_t* ip = s + l.l2;
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
    store_be16(tcp + kTcpChecksumAt, 0);
    store_be16(tcp + kTcpChecksumAt, tcp_checksum(ip, l.v6, ByteSpan(tcp, l.tcp_len + chunk)));
    sink.frame(ByteSpan(s, headers + chunk));
  }
  return count;
}

bool refresh_tcp_checksums(MutableByteSpan frame) {
  auto layout = tcp_layout(frame);
  if (!layout) return false;
  std::uint8_t* ip = frame.data() + layout->l2;
  if (!layout->v6) {
    store_be16(ip + 10, 0);
    store_be16(ip + 10, internet_checksum(ByteSpan(ip, layout->ip_len)));
  }
  std::uint8_t* tcp = ip + layout->ip_len;
  store_be16(tcp + kTcpChecksumAt, 0);
  store_be16(tcp + kTcpChecksumAt,
             tcp_checksum(ip, layout->v6, ByteSpan(tcp, layout->tcp_len + layout->payload)));
  return true;
}

// ------------------------------------------------------------- TcpCoalescer

TcpCoalescer::TcpCoalescer(std::size_t capacity)
    : buf_(std::clamp<std::size_t>(capacity, 1514, kMaxIpPacket + kEth)) {}

TcpCoalescer::Offer TcpCoalescer::offer(ByteSpan f) {
  auto layout = tcp_layout(f);
  if (!layout || layout->l2 != kEth || layout->payload == 0 || f.size() > buf_.size()) {
    return Offer::kNotCoalescable;
  }
  const TcpLayout& l = *layout;
  const std::uint8_t* ip = f.data() + kEth;
  const std::uint8_t* tcp = ip + l.ip_len;
  const std::uint8_t flags = tcp[13];
  if (flags != kTcpAck && flags != (kTcpAck | kTcpPsh)) return Offer::kNotCoalescable;
  if (!l.v6 && internet_checksum(ByteSpan(ip, l.ip_len)) != 0) return Offer::kNotCoalescable;
  if (tcp_checksum(ip, l.v6, ByteSpan(tcp, l.tcp_len + l.payload)) != 0) return Offer::kNotCoalescable;

  const std::uint32_t seq = load_be32(tcp + 4);
  const std::uint16_t id = l.v6 ? 0 : load_be16(ip + 4);
  if (segments_ == 0) {
    std::memcpy(buf_.data(), f.data(), f.size());
    len_ = f.size();
    segments_ = 1;
    v6_ = l.v6;
    ip_len_ = l.ip_len;
    tcp_len_ = l.tcp_len;
    gso_size_ = l.payload;
    closed_ = (flags & kTcpPsh) != 0;
    next_seq_ = static_cast<std::uint32_t>(seq + l.payload);
    last_id_ = id;
    return Offer::kHeld;
  }
  const std::uint8_t* p = buf_.data();
  const std::uint8_t* pip = p + kEth;
  const std::uint8_t* ptcp = pip + ip_len_;
  const auto same = [](const std::uint8_t* a, const std::uint8_t* b, std::size_t from, std::size_t to) {
    return std::memcmp(a + from, b + from, to - from) == 0;
  };
  bool joins = !closed_ && l.v6 == v6_ && l.ip_len == ip_len_ && l.tcp_len == tcp_len_ && same(f.data(), p, 0, kEth);
  if (joins && !l.v6) {
    // Version/IHL and TOS; flags/offset, TTL, protocol; addresses, options.
    const bool df = (ip[6] & 0x40) != 0;
    joins = same(ip, pip, 0, 2) && same(ip, pip, 6, 10) && same(ip, pip, 12, l.ip_len) &&
            (id == static_cast<std::uint16_t>(last_id_ + 1) || (df && id == last_id_));
  } else if (joins) {
    // Version, traffic class, flow label; next header, hop limit, addresses.
    joins = same(ip, pip, 0, 4) && same(ip, pip, 6, 40);
  }
  // Ports; acknowledgement, data offset; window, urgent pointer, options.
  joins = joins && same(tcp, ptcp, 0, 4) && same(tcp, ptcp, 8, 13) && same(tcp, ptcp, 14, 16) &&
          same(tcp, ptcp, 18, l.tcp_len) && seq == next_seq_ && l.payload <= gso_size_ &&
          len_ - kEth + l.payload <= kMaxIpPacket && len_ + l.payload <= buf_.size();
  if (!joins) return Offer::kFlushFirst;
  std::memcpy(buf_.data() + len_, f.data() + l.headers(), l.payload);
  len_ += l.payload;
  ++segments_;
  buf_[kEth + ip_len_ + 13] |= static_cast<std::uint8_t>(flags & kTcpPsh);
  closed_ = (flags & kTcpPsh) != 0 || l.payload < gso_size_;
  next_seq_ = static_cast<std::uint32_t>(seq + l.payload);
  last_id_ = id;
  return Offer::kHeld;
}

TcpCoalescer::Frame TcpCoalescer::take() {
  Frame out{VnetHeader{}, ByteSpan(buf_.data(), len_), segments_};
  if (segments_ >= 2) {
    std::uint8_t* ip = buf_.data() + kEth;
    std::uint8_t* tcp = ip + ip_len_;
    const std::size_t tcp_length = len_ - kEth - ip_len_;
    if (!v6_) {
      store_be16(ip + 2, static_cast<std::uint16_t>(len_ - kEth));
      store_be16(ip + 10, 0);
      store_be16(ip + 10, internet_checksum(ByteSpan(ip, ip_len_)));
    } else {
      store_be16(ip + 4, static_cast<std::uint16_t>(tcp_length));
    }
    // CHECKSUM_PARTIAL: the field holds the pseudo-header sum, the rest is
    // trusted (every segment's checksum was verified in offer()).
    store_be16(tcp + kTcpChecksumAt, static_cast<std::uint16_t>(tcp_pseudo_sum(ip, v6_, tcp_length)));
    out.header.flags = kVnetNeedsCsum;
    out.header.gso_type = v6_ ? kVnetGsoTcpV6 : kVnetGsoTcpV4;
    out.header.hdr_len = static_cast<std::uint16_t>(kEth + ip_len_ + tcp_len_);
    out.header.gso_size = static_cast<std::uint16_t>(gso_size_);
    out.header.csum_start = static_cast<std::uint16_t>(kEth + ip_len_);
    out.header.csum_offset = static_cast<std::uint16_t>(kTcpChecksumAt);
  }
  segments_ = 0;
  len_ = 0;
  closed_ = false;
  return out;
}

}  // namespace layersec::net
