#include "layersec/net/frame.h"

#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace layersec::net {

namespace {

bool is_tag_tpid(std::uint16_t t) { return t == kEtherTypeCTag || t == kEtherTypeSTag; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One's-complement partial sum of big-endian 16-bit words (RFC 1071 §4.1)
// plus `sum`, returned as a 32-bit value congruent to it modulo 0xFFFF (zero
// only when the data and `sum` are all zero).
//
// RFC 1071 §2(B): the sum is independent of byte order, so the data is
// summed as native 64-bit words (any alignment, memcpy loads) and the folded
// 16-bit result is byte-swapped on a little-endian host. A 64-bit add wraps
// at 2^64, which is 1 modulo 0xFFFF (2^16 = 1 there): each wrap is counted
// and added back (end-around carry), so no length limit applies. Two
// accumulators let the additions overlap; the MACsec link checksums every
// TCP segment it splits or joins (offload.h). frame_test.cc compares it with
// the plain word-by-word sum on random buffers, lengths and alignments.
std::uint32_t sum_words(ByteSpan data, std::uint32_t sum) {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  std::uint64_t a0 = 0, a1 = 0, wraps = 0;
  for (; n >= 32; p += 32, n -= 32) {
    std::uint64_t w[4];
    std::memcpy(w, p, sizeof w);
    a0 += w[0];
    wraps += a0 < w[0];
    a1 += w[1];
    wraps += a1 < w[1];
    a0 += w[2];
    wraps += a0 < w[2];
    a1 += w[3];
    wraps += a1 < w[3];
  }
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    a0 += w;
    wraps += a0 < w;
  }
  std::uint64_t tail = 0;
  if (n >= 4) {
    std::uint32_t w;
    std::memcpy(&w, p, sizeof w);
    tail += w;
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    std::uint16_t w;
    std::memcpy(&w, p, sizeof w);
    tail += w;
    p += 2;
    n -= 2;
  }
  // An odd last octet is the high-order octet of a word padded with zero.
  if (n == 1) tail += std::endian::native == std::endian::little ? std::uint64_t{p[0]} : std::uint64_t{p[0]} << 8;
  std::uint64_t acc = (a0 & 0xFFFFFFFFu) + (a0 >> 32) + (a1 & 0xFFFFFFFFu) + (a1 >> 32) + wraps + tail;
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  if constexpr (std::endian::native == std::endian::little) acc = ((acc & 0xFF) << 8) | (acc >> 8);
  acc += sum;
  while (acc >> 32) acc = (acc & 0xFFFFFFFFu) + (acc >> 32);
  return static_cast<std::uint32_t>(acc);
}

std::uint16_t fold(std::uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

std::uint32_t pseudo_header_sum(Ipv4Address src, Ipv4Address dst, std::uint16_t udp_length) {
  std::uint32_t s = 0;
  s += src.value >> 16;
  s += src.value & 0xFFFF;
  s += dst.value >> 16;
  s += dst.value & 0xFFFF;
  s += kIpProtocolUdp;
  s += udp_length;
  return s;
}

bool write_mac(ByteWriter& w, const MacAddress& m) { return w.bytes(m.bytes); }

MacAddress read_mac(ByteReader& r) {
  MacAddress m;
  r.copy_to(m.bytes);
  return m;
}

}  // namespace

std::string MacAddress::to_string() const {
  char buf[18];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", bytes[0], bytes[1], bytes[2], bytes[3],
                bytes[4], bytes[5]);
  return buf;
}

std::optional<MacAddress> MacAddress::parse(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddress m;
  for (std::size_t i = 0; i < 6; ++i) {
    const int hi = hex_digit(text[i * 3]);
    const int lo = hex_digit(text[i * 3 + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && text[i * 3 + 2] != ':' && text[i * 3 + 2] != '-') return std::nullopt;
    m.bytes[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return m;
}

std::string Ipv4Address::to_string() const {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", value >> 24, (value >> 16) & 0xFF, (value >> 8) & 0xFF,
                value & 0xFF);
  return buf;
}

std::optional<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  std::uint32_t v = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 4; ++i) {
    if (i > 0) {
      if (p == end || *p != '.') return std::nullopt;
      ++p;
    }
    if (p == end || *p < '0' || *p > '9') return std::nullopt;
    unsigned octet = 0;
    auto [next, ec] = std::from_chars(p, end, octet);
    if (ec != std::errc() || octet > 255 || next - p > 3) return std::nullopt;
    p = next;
    v = (v << 8) | octet;
  }
  if (p != end) return std::nullopt;
  return Ipv4Address{v};
}

std::string Ipv4Endpoint::to_string() const { return address.to_string() + ":" + std::to_string(port); }

MacAddress multicast_mac(Ipv4Address group) {
  return MacAddress{{0x01, 0x00, 0x5e, static_cast<std::uint8_t>((group.value >> 16) & 0x7F),
                     static_cast<std::uint8_t>(group.value >> 8), static_cast<std::uint8_t>(group.value)}};
}

const char* to_string(FrameError e) {
  switch (e) {
    case FrameError::kTruncated: return "truncated";
    case FrameError::kLengthFrame: return "802.3 length frame";
    case FrameError::kTooManyVlanTags: return "more than two VLAN tags";
    case FrameError::kBadVlanTag: return "bad VLAN tag";
    case FrameError::kNotIpv4: return "not IPv4";
    case FrameError::kBadIpVersion: return "bad IP version";
    case FrameError::kBadIpHeaderLength: return "bad IPv4 header length";
    case FrameError::kBadIpTotalLength: return "bad IPv4 total length";
    case FrameError::kBadIpChecksum: return "bad IPv4 header checksum";
    case FrameError::kIpFragment: return "IPv4 fragment";
    case FrameError::kIpReservedFlag: return "IPv4 reserved flag set";
    case FrameError::kNotUdp: return "not UDP";
    case FrameError::kBadUdpLength: return "bad UDP length";
    case FrameError::kBadUdpChecksum: return "bad UDP checksum";
    case FrameError::kNotArp: return "not Ethernet/IPv4 ARP";
    case FrameError::kBadArp: return "bad ARP operation";
    case FrameError::kBufferTooSmall: return "buffer too small";
    case FrameError::kPayloadTooLarge: return "payload too large";
  }
  return "unknown";
}

bool EthernetHeader::operator==(const EthernetHeader& o) const {
  if (dst != o.dst || src != o.src || tag_count != o.tag_count || ether_type != o.ether_type) return false;
  for (std::size_t i = 0; i < tag_count; ++i)
    if (!(tags[i] == o.tags[i])) return false;
  return true;
}

Result<EthernetView, FrameError> parse_ethernet(ByteSpan frame) {
  ByteReader r(frame);
  EthernetView v;
  v.header.dst = read_mac(r);
  v.header.src = read_mac(r);
  std::uint16_t type = r.u16();
  if (!r.ok()) return Err(FrameError::kTruncated);
  // 802.1Q-2018 §9.6: S-tag (0x88A8) or C-tag (0x8100) in front, at most two.
  while (is_tag_tpid(type)) {
    if (v.header.tag_count == kMaxVlanTags) return Err(FrameError::kTooManyVlanTags);
    const std::uint16_t tci = r.u16();
    const std::uint16_t next = r.u16();
    if (!r.ok()) return Err(FrameError::kTruncated);
    VlanTag& t = v.header.tags[v.header.tag_count++];
    t.tpid = type;
    t.pcp = static_cast<std::uint8_t>(tci >> 13);
    t.dei = ((tci >> 12) & 1) != 0;
    t.vid = tci & 0x0FFF;
    type = next;
  }
  if (type < 0x0600) return Err(FrameError::kLengthFrame);
  v.header.ether_type = type;
  v.payload = r.rest();
  return v;
}

Status<FrameError> write_ethernet_header(ByteWriter& w, const EthernetHeader& h) {
  if (h.tag_count > kMaxVlanTags) return Err(FrameError::kTooManyVlanTags);
  write_mac(w, h.dst);
  write_mac(w, h.src);
  for (std::size_t i = 0; i < h.tag_count; ++i) {
    const VlanTag& t = h.tags[i];
    if (!is_tag_tpid(t.tpid) || t.pcp > 7 || t.vid > 0x0FFF) return Err(FrameError::kBadVlanTag);
    w.u16(t.tpid);
    w.u16(static_cast<std::uint16_t>((t.pcp << 13) | (t.dei ? 0x1000 : 0) | t.vid));
  }
  w.u16(h.ether_type);
  if (!w.ok()) return Err(FrameError::kBufferTooSmall);
  return {};
}

std::uint16_t internet_checksum(ByteSpan data, std::uint32_t partial) {
  return static_cast<std::uint16_t>(~fold(sum_words(data, partial)));
}

std::uint16_t udp_checksum(Ipv4Address src, Ipv4Address dst, ByteSpan udp) {
  const std::uint16_t c = internet_checksum(udp, pseudo_header_sum(src, dst, static_cast<std::uint16_t>(udp.size())));
  // RFC 768: a computed zero is transmitted as all ones.
  return c == 0 ? 0xFFFF : c;
}

Result<Ipv4View, FrameError> parse_ipv4(ByteSpan packet) {
  ByteReader r(packet);
  const std::uint8_t vihl = r.u8();
  Ipv4View v;
  Ipv4Header& h = v.header;
  h.tos = r.u8();
  h.total_length = r.u16();
  h.identification = r.u16();
  const std::uint16_t flags_frag = r.u16();
  h.ttl = r.u8();
  h.protocol = r.u8();
  h.header_checksum = r.u16();
  h.src = Ipv4Address{r.u32()};
  h.dst = Ipv4Address{r.u32()};
  if (!r.ok()) return Err(FrameError::kTruncated);
  if ((vihl >> 4) != 4) return Err(FrameError::kBadIpVersion);
  const std::size_t ihl = std::size_t{vihl & 0x0Fu} * 4;
  if (ihl < kIpv4MinHeaderSize) return Err(FrameError::kBadIpHeaderLength);
  if (h.total_length > packet.size()) return Err(FrameError::kBadIpTotalLength);
  if (ihl > h.total_length) return Err(FrameError::kBadIpHeaderLength);
  h.header_length = static_cast<std::uint8_t>(ihl);
  v.options = r.bytes(ihl - kIpv4MinHeaderSize);
  if (!r.ok()) return Err(FrameError::kTruncated);
  // RFC 791 §3.1: the checksum field makes the header sum to all ones.
  if (internet_checksum(packet.first(ihl)) != 0) return Err(FrameError::kBadIpChecksum);
  if (flags_frag & 0x8000) return Err(FrameError::kIpReservedFlag);
  h.dont_fragment = (flags_frag & 0x4000) != 0;
  if ((flags_frag & 0x2000) || (flags_frag & 0x1FFF)) return Err(FrameError::kIpFragment);
  v.payload = r.bytes(h.total_length - ihl);
  if (!r.ok()) return Err(FrameError::kTruncated);
  return v;
}

Status<FrameError> write_ipv4_header(ByteWriter& w, const Ipv4Header& h, std::size_t payload_length) {
  if (payload_length > 0xFFFF - kIpv4MinHeaderSize) return Err(FrameError::kPayloadTooLarge);
  MutableByteSpan hdr = w.reserve(kIpv4MinHeaderSize);
  if (hdr.empty()) return Err(FrameError::kBufferTooSmall);
  std::uint8_t* p = hdr.data();
  p[0] = 0x45;
  p[1] = h.tos;
  store_be16(p + 2, static_cast<std::uint16_t>(kIpv4MinHeaderSize + payload_length));
  store_be16(p + 4, h.identification);
  store_be16(p + 6, h.dont_fragment ? 0x4000 : 0);
  p[8] = h.ttl;
  p[9] = h.protocol;
  store_be16(p + 10, 0);
  store_be32(p + 12, h.src.value);
  store_be32(p + 16, h.dst.value);
  store_be16(p + 10, internet_checksum(ByteSpan(p, kIpv4MinHeaderSize)));
  return {};
}

Result<UdpView, FrameError> parse_udp(ByteSpan segment, Ipv4Address src, Ipv4Address dst) {
  ByteReader r(segment);
  UdpView v;
  v.header.src_port = r.u16();
  v.header.dst_port = r.u16();
  v.header.length = r.u16();
  v.header.checksum = r.u16();
  if (!r.ok()) return Err(FrameError::kTruncated);
  if (v.header.length < kUdpHeaderSize || v.header.length != segment.size()) return Err(FrameError::kBadUdpLength);
  if (v.header.checksum != 0) {
    // Summing the received segment (checksum included) with the pseudo-header
    // yields zero when the checksum is right.
    if (internet_checksum(segment, pseudo_header_sum(src, dst, v.header.length)) != 0)
      return Err(FrameError::kBadUdpChecksum);
  }
  v.payload = r.rest();
  return v;
}

std::size_t udp_frame_size(const UdpFrameSpec& spec, std::size_t payload_size) {
  std::size_t n = kEthernetHeaderSize + kVlanTagSize * spec.tag_count + kIpv4MinHeaderSize + kUdpHeaderSize +
                  payload_size;
  if (spec.pad_to_minimum && n < kEthernetMinFrameSize) n = kEthernetMinFrameSize;
  return n;
}

Result<std::size_t, FrameError> build_udp_frame(const UdpFrameSpec& spec, ByteSpan payload, MutableByteSpan out) {
  if (payload.size() > kMaxUdpPayload) return Err(FrameError::kPayloadTooLarge);
  if (spec.tag_count > kMaxVlanTags) return Err(FrameError::kTooManyVlanTags);
  if (out.size() < udp_frame_size(spec, payload.size())) return Err(FrameError::kBufferTooSmall);
  ByteWriter w(out);
  EthernetHeader eh;
  eh.dst = spec.dst_mac;
  eh.src = spec.src_mac;
  eh.tags = spec.tags;
  eh.tag_count = spec.tag_count;
  eh.ether_type = kEtherTypeIpv4;
  if (auto s = write_ethernet_header(w, eh); !s) return Err(s.error());
  Ipv4Header ih;
  ih.tos = spec.tos;
  ih.identification = spec.identification;
  ih.dont_fragment = spec.dont_fragment;
  ih.ttl = spec.ttl;
  ih.protocol = kIpProtocolUdp;
  ih.src = spec.src.address;
  ih.dst = spec.dst.address;
  const std::size_t udp_len = kUdpHeaderSize + payload.size();
  if (auto s = write_ipv4_header(w, ih, udp_len); !s) return Err(s.error());
  const std::size_t udp_start = w.size();
  w.u16(spec.src.port);
  w.u16(spec.dst.port);
  w.u16(static_cast<std::uint16_t>(udp_len));
  w.u16(0);
  w.bytes(payload);
  if (!w.ok()) return Err(FrameError::kBufferTooSmall);
  if (spec.compute_udp_checksum) {
    std::uint8_t* udp = out.data() + udp_start;
    store_be16(udp + 6, udp_checksum(ih.src, ih.dst, ByteSpan(udp, udp_len)));
  }
  if (spec.pad_to_minimum && w.size() < kEthernetMinFrameSize) w.fill(0, kEthernetMinFrameSize - w.size());
  if (!w.ok()) return Err(FrameError::kBufferTooSmall);
  return w.size();
}

Result<UdpFrameView, FrameError> parse_udp_frame(ByteSpan frame) {
  auto eth = parse_ethernet(frame);
  if (!eth) return Err(eth.error());
  if (eth->header.ether_type != kEtherTypeIpv4) return Err(FrameError::kNotIpv4);
  auto ip = parse_ipv4(eth->payload);
  if (!ip) return Err(ip.error());
  if (ip->header.protocol != kIpProtocolUdp) return Err(FrameError::kNotUdp);
  auto udp = parse_udp(ip->payload, ip->header.src, ip->header.dst);
  if (!udp) return Err(udp.error());
  return UdpFrameView{eth->header, *ip, *udp};
}

Result<ArpPacket, FrameError> parse_arp(ByteSpan body) {
  ByteReader r(body);
  const std::uint16_t htype = r.u16();
  const std::uint16_t ptype = r.u16();
  const std::uint8_t hlen = r.u8();
  const std::uint8_t plen = r.u8();
  const std::uint16_t op = r.u16();
  ArpPacket a;
  a.sender_mac = read_mac(r);
  a.sender_ip = Ipv4Address{r.u32()};
  a.target_mac = read_mac(r);
  a.target_ip = Ipv4Address{r.u32()};
  if (!r.ok()) return Err(FrameError::kTruncated);
  if (htype != 1 || ptype != kEtherTypeIpv4 || hlen != 6 || plen != 4) return Err(FrameError::kNotArp);
  if (op != 1 && op != 2) return Err(FrameError::kBadArp);
  a.operation = static_cast<ArpOperation>(op);
  return a;
}

Result<std::size_t, FrameError> build_arp_frame(const ArpPacket& arp, MutableByteSpan out, const VlanTag* tag) {
  if (out.size() < kEthernetMinFrameSize) return Err(FrameError::kBufferTooSmall);
  ByteWriter w(out);
  EthernetHeader eh;
  eh.dst = arp.operation == ArpOperation::kRequest ? MacAddress::broadcast() : arp.target_mac;
  eh.src = arp.sender_mac;
  eh.ether_type = kEtherTypeArp;
  if (tag) {
    eh.tags[0] = *tag;
    eh.tag_count = 1;
  }
  if (auto s = write_ethernet_header(w, eh); !s) return Err(s.error());
  w.u16(1);
  w.u16(kEtherTypeIpv4);
  w.u8(6);
  w.u8(4);
  w.u16(static_cast<std::uint16_t>(arp.operation));
  write_mac(w, arp.sender_mac);
  w.u32(arp.sender_ip.value);
  write_mac(w, arp.target_mac);
  w.u32(arp.target_ip.value);
  if (w.size() < kEthernetMinFrameSize) w.fill(0, kEthernetMinFrameSize - w.size());
  if (!w.ok()) return Err(FrameError::kBufferTooSmall);
  return w.size();
}

}  // namespace layersec::net
