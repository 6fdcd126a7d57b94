// complete_offload (offload.h): checksums finished in place, TCP segments
// split with every header field a NIC's TSO would set, and typed refusals
// that emit nothing.
#include "layersec/net/offload.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "layersec/net/frame.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Collect final : FrameSink {
  std::vector<Bytes> frames;
  void frame(ByteSpan f) override { frames.emplace_back(f.begin(), f.end()); }
};

std::uint32_t folded(ByteSpan d) { return static_cast<std::uint16_t>(~internet_checksum(d)); }

// Ethernet + IPv4 (or IPv6) + TCP (20 octets + `options`) + payload, with
// the lengths set as the kernel sets them on a GSO frame.
Bytes tcp_frame(bool v6, std::size_t payload, std::uint8_t flags, std::size_t options = 0) {
  Bytes f(14, 0);
  f[0] = 0x02;
  f[6] = 0x02;
  f[11] = 1;
  store_be16(f.data() + 12, v6 ? 0x86DD : 0x0800);
  const std::size_t tcp_len = 20 + options;
  if (!v6) {
    Bytes ip(20, 0);
    ip[0] = 0x45;
    store_be16(ip.data() + 2, static_cast<std::uint16_t>(20 + tcp_len + payload));
    store_be16(ip.data() + 4, 0xFFFE);  // wraps while segmenting
    store_be16(ip.data() + 6, 0x4000);  // DF
    ip[8] = 64;
    ip[9] = 6;
    const std::uint8_t addrs[8] = {10, 0, 0, 1, 10, 0, 0, 2};
    std::memcpy(ip.data() + 12, addrs, 8);
    f.insert(f.end(), ip.begin(), ip.end());
  } else {
    Bytes ip(40, 0);
    ip[0] = 0x60;
    store_be16(ip.data() + 4, static_cast<std::uint16_t>(tcp_len + payload));
    ip[6] = 6;
    ip[7] = 64;
    ip[8] = 0xFD;
    ip[23] = 1;
    ip[24] = 0xFD;
    ip[39] = 2;
    f.insert(f.end(), ip.begin(), ip.end());
  }
  Bytes tcp(tcp_len, 0);
  store_be16(tcp.data(), 40000);
  store_be16(tcp.data() + 2, 5201);
  store_be32(tcp.data() + 4, 0xFFFFF000);  // wraps while segmenting
  store_be32(tcp.data() + 8, 77);
  tcp[12] = static_cast<std::uint8_t>((tcp_len / 4) << 4);
  tcp[13] = flags;
  store_be16(tcp.data() + 14, 512);
  for (std::size_t i = 20; i < tcp_len; ++i) tcp[i] = 1;  // NOPs
  f.insert(f.end(), tcp.begin(), tcp.end());
  for (std::size_t i = 0; i < payload; ++i) f.push_back(static_cast<std::uint8_t>(i * 7 + i / 251));
  return f;
}

// `f` with `n` VLAN tags (an S-tag outside, C-tags inside) after the MAC addresses.
Bytes with_tags(const Bytes& f, std::size_t n) {
  Bytes t(f.begin(), f.begin() + 12);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t tpid = (i == 0 && n > 1) ? 0x88A8 : 0x8100;
    t.push_back(static_cast<std::uint8_t>(tpid >> 8));
    t.push_back(static_cast<std::uint8_t>(tpid & 0xFF));
    t.push_back(0x20);
    t.push_back(static_cast<std::uint8_t>(10 + i));
  }
  t.insert(t.end(), f.begin() + 12, f.end());
  return t;
}

bool tcp_checksum_ok(const Bytes& f, bool v6) {
  const std::size_t ip_len = v6 ? 40 : 20;
  const ByteSpan ip(f.data() + 14, ip_len);
  const ByteSpan tcp(f.data() + 14 + ip_len, f.size() - 14 - ip_len);
  std::uint8_t pseudo[40] = {};
  std::size_t n = 0;
  if (!v6) {
    std::memcpy(pseudo, ip.data() + 12, 8);
    pseudo[9] = 6;
    store_be16(pseudo + 10, static_cast<std::uint16_t>(tcp.size()));
    n = 12;
  } else {
    std::memcpy(pseudo, ip.data() + 8, 32);
    store_be32(pseudo + 32, static_cast<std::uint32_t>(tcp.size()));
    pseudo[39] = 6;
    n = 40;
  }
  return internet_checksum(tcp, folded(ByteSpan(pseudo, n))) == 0;
}

// The header the kernel puts in front of a TCP GSO frame.
VnetHeader tso_header(bool v6, std::size_t mss) {
  VnetHeader h;
  h.flags = kVnetNeedsCsum;
  h.gso_type = v6 ? kVnetGsoTcpV6 : kVnetGsoTcpV4;
  h.gso_size = static_cast<std::uint16_t>(mss);
  return h;
}

void check_segments(bool v6, std::size_t payload, std::size_t mss, std::size_t options) {
  const std::uint8_t flags = 0x80 | 0x10 | 0x08 | 0x01;  // CWR ACK PSH FIN
  Bytes f = tcp_frame(v6, payload, flags, options);
  const Bytes original = f;
  Bytes scratch(2000);
  Collect c;
  auto r = complete_offload(tso_header(v6, mss), f, scratch, 1514, c);
  ASSERT_TRUE(r.ok());
  const std::size_t count = (payload + mss - 1) / mss;
  ASSERT_EQ(*r, count);
  ASSERT_EQ(c.frames.size(), count);
  const std::size_t ip_len = v6 ? 40 : 20;
  const std::size_t headers = 14 + ip_len + 20 + options;
  Bytes joined;
  for (std::size_t i = 0; i < count; ++i) {
    const Bytes& s = c.frames[i];
    const std::size_t chunk = std::min(mss, payload - i * mss);
    ASSERT_EQ(s.size(), headers + chunk) << i;
    EXPECT_EQ(0, std::memcmp(s.data(), original.data(), 14));
    const std::uint8_t* ip = s.data() + 14;
    const std::uint8_t* tcp = ip + ip_len;
    if (!v6) {
      EXPECT_EQ(load_be16(ip + 2), 20 + 20 + options + chunk);
      EXPECT_EQ(load_be16(ip + 4), static_cast<std::uint16_t>(0xFFFE + i));
      EXPECT_EQ(internet_checksum(ByteSpan(ip, 20)), 0) << "IPv4 header checksum, segment " << i;
    } else {
      EXPECT_EQ(load_be16(ip + 4), 20 + options + chunk);
    }
    EXPECT_EQ(load_be32(tcp + 4), static_cast<std::uint32_t>(0xFFFFF000u + i * mss));
    EXPECT_EQ(load_be32(tcp + 8), 77u);
    const bool last = i + 1 == count;
    EXPECT_EQ((tcp[13] & 0x01) != 0, last);
    EXPECT_EQ((tcp[13] & 0x08) != 0, last);
    EXPECT_EQ((tcp[13] & 0x80) != 0, i == 0);
    EXPECT_NE(tcp[13] & 0x10, 0);
    EXPECT_EQ(0, std::memcmp(tcp + 20, original.data() + 14 + ip_len + 20, options));
    EXPECT_TRUE(tcp_checksum_ok(s, v6)) << "TCP checksum, segment " << i;
    joined.insert(joined.end(), s.begin() + static_cast<long>(headers), s.end());
  }
  EXPECT_EQ(joined, Bytes(original.begin() + static_cast<long>(headers), original.end()));
}

TEST(Offload, TcpV4SegmentsCarryEveryFieldATsoNicSets) {
  check_segments(false, 4000, 1448, 12);
  check_segments(false, 2896, 1448, 0);  // exactly two
  check_segments(false, 100, 1448, 0);   // one, shorter than the MSS
}

TEST(Offload, TcpV6SegmentsCarryEveryFieldATsoNicSets) {
  check_segments(true, 64000, 1428, 12);
  check_segments(true, 1, 1428, 0);
}

TEST(Offload, PartialChecksumIsFinishedInPlace) {
  // UDP/IPv4 with the pseudo-header sum in the checksum field, as the kernel
  // leaves it for a device with checksum offload.
  UdpFrameSpec spec;
  spec.dst_mac = MacAddress::local(2);
  spec.src_mac = MacAddress::local(1);
  spec.src = {Ipv4Address::from_octets(10, 0, 0, 1), 4000};
  spec.dst = {Ipv4Address::from_octets(10, 0, 0, 2), 5000};
  const std::string payload = "a datagram whose checksum the device computes";
  Bytes f(200);
  auto n = build_udp_frame(spec, ByteSpan(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()), f);
  ASSERT_TRUE(n.ok());
  f.resize(*n);
  const Bytes complete = f;
  const std::uint16_t udp_len = load_be16(f.data() + 34 + 4);
  std::uint8_t pseudo[12] = {10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, 0};
  store_be16(pseudo + 10, udp_len);
  store_be16(f.data() + 34 + 6, static_cast<std::uint16_t>(folded(ByteSpan(pseudo, 12))));
  VnetHeader h;
  h.flags = kVnetNeedsCsum;
  h.csum_start = 34;
  h.csum_offset = 6;
  Bytes scratch(2000);
  Collect c;
  auto r = complete_offload(h, f, scratch, 1514, c);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(c.frames.size(), 1u);
  EXPECT_EQ(c.frames[0], complete);
  // No flag, no GSO: the frame as it is.
  Collect d;
  ASSERT_TRUE(complete_offload(VnetHeader{}, f, scratch, 1514, d).ok());
  ASSERT_EQ(d.frames.size(), 1u);
  EXPECT_EQ(d.frames[0], f);
}

TEST(Offload, RefusalsAreTypedAndEmitNothing) {
  Bytes scratch(2000);
  const auto refuse = [&](VnetHeader h, Bytes f, OffloadError want, std::size_t max = 1514) {
    Collect c;
    auto r = complete_offload(h, f, scratch, max, c);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), want) << to_string(r.error());
    EXPECT_TRUE(c.frames.empty());
  };
  VnetHeader tso;
  tso.flags = kVnetNeedsCsum;
  tso.gso_type = kVnetGsoTcpV4;
  tso.gso_size = 1448;
  const Bytes good = tcp_frame(false, 3000, 0x10);
  VnetHeader h = tso;
  h.gso_type = kVnetGsoUdp;
  refuse(h, good, OffloadError::kUnsupportedGso);
  h = tso;
  h.gso_type = kVnetGsoTcpV4 | kVnetGsoEcn;
  refuse(h, good, OffloadError::kUnsupportedGso);
  h = tso;
  h.gso_size = 0;
  refuse(h, good, OffloadError::kUnsupportedGso);
  // The v6 type on a v4 frame; a tagged frame; UDP inside.
  h = tso;
  h.gso_type = kVnetGsoTcpV6;
  refuse(h, good, OffloadError::kNotTcpIp);
  Bytes tagged = good;
  store_be16(tagged.data() + 12, 0x8100);
  refuse(tso, tagged, OffloadError::kNotTcpIp);
  Bytes udp = good;
  udp[14 + 9] = 17;
  refuse(tso, udp, OffloadError::kNotTcpIp);
  // Lengths that do not add up; a fragment; a TCP header beyond the frame.
  Bytes longer = good;
  longer.push_back(0);
  refuse(tso, longer, OffloadError::kMalformed);
  Bytes frag = good;
  store_be16(frag.data() + 14 + 6, 0x2000);
  refuse(tso, frag, OffloadError::kMalformed);
  Bytes doff = tcp_frame(false, 0, 0x10);
  doff[14 + 20 + 12] = 0xF0;
  refuse(tso, doff, OffloadError::kMalformed);
  Bytes ihl = good;
  ihl[14] = 0x44;
  refuse(tso, ihl, OffloadError::kMalformed);
  refuse(tso, Bytes(good.begin(), good.begin() + 40), OffloadError::kMalformed);
  refuse(tso, Bytes(good.begin(), good.begin() + 10), OffloadError::kNotTcpIp);
  // An MSS the link cannot carry; a tiny MSS that would make too many segments.
  h = tso;
  h.gso_size = 1500;
  refuse(h, good, OffloadError::kSegmentTooLong);
  h = tso;
  h.gso_size = 1;
  refuse(h, tcp_frame(false, 3000, 0x10), OffloadError::kMalformed);
  // Checksum offsets outside the frame.
  VnetHeader cs;
  cs.flags = kVnetNeedsCsum;
  cs.csum_start = 100;
  cs.csum_offset = 6;
  refuse(cs, Bytes(100, 0), OffloadError::kBadChecksumOffsets);
  cs.csum_start = 34;
  cs.csum_offset = 65;
  refuse(cs, Bytes(100, 0), OffloadError::kBadChecksumOffsets);
  refuse(VnetHeader{}, Bytes(1515, 0), OffloadError::kSegmentTooLong);
  // A checksum that would start inside the Ethernet header.
  cs.csum_start = 12;
  cs.csum_offset = 0;
  refuse(cs, Bytes(100, 0), OffloadError::kBadChecksumOffsets);
  // Flag bits the kernel never sets (RSC_INFO, undefined bits), with and without GSO.
  for (std::uint8_t bad : {std::uint8_t{0x04}, std::uint8_t{0x08}, std::uint8_t{0x80}}) {
    h = tso;
    h.flags = static_cast<std::uint8_t>(h.flags | bad);
    refuse(h, good, OffloadError::kUnknownFlags);
    VnetHeader plain;
    plain.flags = bad;
    refuse(plain, Bytes(100, 0), OffloadError::kUnknownFlags);
  }
  // Unknown GSO types; TSO of an IPv6 frame with an extension header first.
  for (std::uint8_t type : {std::uint8_t{2}, std::uint8_t{5}, std::uint8_t{0x7F}}) {
    h = tso;
    h.gso_type = type;
    refuse(h, good, OffloadError::kUnsupportedGso);
  }
  VnetHeader tso6 = tso;
  tso6.gso_type = kVnetGsoTcpV6;
  Bytes ext = tcp_frame(true, 3000, 0x10);
  ext[14 + 6] = 0;  // hop-by-hop options
  refuse(tso6, ext, OffloadError::kNotTcpIp);
  // A third tag; an IPv6 payload length that does not match.
  refuse(tso, with_tags(good, 3), OffloadError::kNotTcpIp);
  Bytes v6len = tcp_frame(true, 3000, 0x10);
  store_be16(v6len.data() + 14 + 4, 100);
  refuse(tso6, v6len, OffloadError::kMalformed);
  // The frame is left as it was after a refusal (nothing patched in place).
  Bytes kept = good;
  h = tso;
  h.gso_size = 1500;
  Collect c;
  ASSERT_FALSE(complete_offload(h, kept, scratch, 1514, c).ok());
  EXPECT_EQ(kept, good);
}

TEST(Offload, DataValidAloneLeavesTheFrameAsItIs) {
  Bytes f = tcp_frame(false, 100, 0x10);
  const Bytes original = f;
  VnetHeader h;
  h.flags = kVnetDataValid;
  Bytes scratch(2000);
  Collect c;
  auto r = complete_offload(h, f, scratch, 1514, c);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(c.frames.size(), 1u);
  EXPECT_EQ(c.frames[0], original);
}

TEST(Offload, TaggedSegmentsKeepTheirTags) {
  for (std::size_t tags : {1u, 2u}) {
    const Bytes f = with_tags(tcp_frame(false, 3000, 0x18), tags);
    Bytes in = f;
    VnetHeader h;
    h.flags = kVnetNeedsCsum;
    h.gso_type = kVnetGsoTcpV4;
    h.gso_size = 1400;
    Bytes scratch(2000);
    Collect c;
    auto r = complete_offload(h, in, scratch, 1514 + 8, c);
    ASSERT_TRUE(r.ok()) << to_string(r.error());
    ASSERT_EQ(c.frames.size(), 3u);
    const std::size_t l2 = 14 + 4 * tags;
    std::size_t payload = 0;
    for (const Bytes& s : c.frames) {
      EXPECT_EQ(0, std::memcmp(s.data(), f.data(), l2)) << "tags copied";
      EXPECT_EQ(internet_checksum(ByteSpan(s.data() + l2, 20)), 0);
      payload += s.size() - l2 - 40;
      EXPECT_TRUE(tcp_checksum_ok(Bytes(s.begin() + static_cast<long>(4 * tags), s.end()), false));
    }
    EXPECT_EQ(payload, 3000u);
  }
}

}  // namespace
}  // namespace layersec::net

// ---- receive side: TcpCoalescer ----

namespace layersec::net {
namespace {

// The segments a TSO NIC would send for `payload` octets (flags of the GSO
// frame: PSH/FIN end up on the last segment only).
std::vector<Bytes> split(bool v6, std::size_t payload, std::size_t mss, std::uint8_t flags) {
  Bytes f = tcp_frame(v6, payload, flags);
  Bytes scratch(2000);
  Collect c;
  EXPECT_TRUE(complete_offload(tso_header(v6, mss), f, scratch, 1514, c).ok());
  return c.frames;
}

using Offer = TcpCoalescer::Offer;

void check_round_trip(bool v6, std::size_t payload, std::size_t mss) {
  const std::vector<Bytes> segs = split(v6, payload, mss, 0x10 | 0x08);  // ACK, PSH on the last
  ASSERT_GE(segs.size(), 2u);
  TcpCoalescer gro;
  for (const Bytes& s : segs) ASSERT_EQ(gro.offer(s), Offer::kHeld);
  const TcpCoalescer::Frame f = gro.take();
  EXPECT_EQ(gro.segments(), 0u);
  ASSERT_EQ(f.segments, segs.size());
  const std::size_t ip_len = v6 ? 40 : 20;
  EXPECT_EQ(f.header.flags, kVnetNeedsCsum);
  EXPECT_EQ(f.header.gso_type, v6 ? kVnetGsoTcpV6 : kVnetGsoTcpV4);
  EXPECT_EQ(f.header.gso_size, mss);
  EXPECT_EQ(f.header.hdr_len, 14 + ip_len + 20);
  EXPECT_EQ(f.header.csum_start, 14 + ip_len);
  EXPECT_EQ(f.header.csum_offset, 16);
  ASSERT_EQ(f.frame.size(), 14 + ip_len + 20 + payload);
  const std::uint8_t* ip = f.frame.data() + 14;
  if (!v6) {
    EXPECT_EQ(load_be16(ip + 2), 20 + 20 + payload);
    EXPECT_EQ(load_be16(ip + 4), load_be16(segs[0].data() + 18)) << "the first segment's identification";
    EXPECT_EQ(internet_checksum(ByteSpan(ip, 20)), 0);
  } else {
    EXPECT_EQ(load_be16(ip + 4), 20 + payload);
  }
  EXPECT_EQ(ip[ip_len + 13], 0x18) << "ACK, and PSH of the last segment";
  // What a device makes of it (complete_offload: the same code path a TSO
  // frame from the TAP takes) is exactly the segments that came in.
  Bytes again(f.frame.begin(), f.frame.end());
  Bytes scratch(2000);
  Collect c;
  auto r = complete_offload(f.header, again, scratch, 1514, c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(c.frames, segs);
}

TEST(Offload, CoalescerJoinsWhatTsoSplitAndADeviceSplitsItBackTheSame) {
  check_round_trip(false, 4000, 1448);
  check_round_trip(false, 2896, 1448);
  check_round_trip(true, 20000, 1428);
  // The join of a stream's segments up to the 64 KiB bound: 45 x 1448 + 40
  // octets of headers fit an IPv4 packet, the 46th segment waits.
  std::vector<Bytes> segs = split(false, 30 * 1448, 1448, 0x10);
  for (Bytes s : split(false, 16 * 1448, 1448, 0x10)) {  // the stream's next 16
    store_be16(s.data() + 18, static_cast<std::uint16_t>(load_be16(s.data() + 18) + 30));
    store_be32(s.data() + 38, load_be32(s.data() + 38) + 30 * 1448);
    ASSERT_TRUE(refresh_tcp_checksums(s));
    segs.push_back(std::move(s));
  }
  ASSERT_EQ(segs.size(), 46u);
  TcpCoalescer gro;
  for (std::size_t i = 0; i < 45; ++i) ASSERT_EQ(gro.offer(segs[i]), Offer::kHeld) << i;
  EXPECT_EQ(gro.offer(segs[45]), Offer::kFlushFirst);
  EXPECT_EQ(gro.take().frame.size(), 14 + 40 + 45 * 1448u);
  EXPECT_EQ(gro.offer(segs[45]), Offer::kHeld);
}

TEST(Offload, CoalescerHandsOneSegmentBackAsItCame) {
  const Bytes s = split(false, 1000, 1448, 0x10)[0];
  TcpCoalescer gro;
  ASSERT_EQ(gro.offer(s), Offer::kHeld);
  const TcpCoalescer::Frame f = gro.take();
  EXPECT_EQ(f.segments, 1u);
  EXPECT_EQ(Bytes(f.frame.begin(), f.frame.end()), s);
  EXPECT_EQ(f.header.flags, 0);
  EXPECT_EQ(f.header.gso_type, kVnetGsoNone);
  EXPECT_EQ(gro.take().segments, 0u) << "nothing pending after take()";
}

TEST(Offload, CoalescerNeverJoinsControlSegmentsBadChecksumsOrOtherProtocols) {
  const std::vector<Bytes> segs = split(false, 4000, 1448, 0x10);
  TcpCoalescer gro;
  ASSERT_EQ(gro.offer(segs[0]), Offer::kHeld);
  const auto not_joined = [&](Bytes s, bool fix, const char* what) {
    if (fix) (void)refresh_tcp_checksums(s);  // false where the edit broke the layout
    EXPECT_EQ(gro.offer(s), Offer::kNotCoalescable) << what;
    EXPECT_EQ(gro.segments(), 1u) << what << ": the pending frame is untouched";
  };
  for (std::uint8_t flags : {0x12, 0x11, 0x14, 0x30, 0x90, 0x50, 0x00, 0x02}) {
    Bytes s = segs[1];
    s[14 + 20 + 13] = flags;
    not_joined(s, true, "SYN/FIN/RST/URG/CWR/ECE/no ACK");
  }
  Bytes bad_tcp = segs[1];
  bad_tcp.back() ^= 1;
  not_joined(bad_tcp, false, "TCP checksum");
  Bytes bad_ip = segs[1];
  bad_ip[14 + 8] -= 1;  // TTL changed, header checksum not
  not_joined(bad_ip, false, "IPv4 header checksum");
  not_joined(with_tags(segs[1], 1), false, "tagged");
  Bytes pure_ack(segs[1].begin(), segs[1].begin() + 54);
  store_be16(pure_ack.data() + 16, 40);
  not_joined(pure_ack, true, "no payload");
  Bytes padded = segs[1];
  padded.push_back(0);
  not_joined(padded, false, "Ethernet padding beyond the IP length");
  Bytes udp = segs[1];
  udp[14 + 9] = 17;
  not_joined(udp, true, "not TCP");
  Bytes frag = segs[1];
  store_be16(frag.data() + 14 + 6, 0x2000);
  not_joined(frag, true, "fragment");
  // Longer than the coalescer's buffer (a jumbo segment on a 1514 one).
  TcpCoalescer small(1514);
  Bytes big = tcp_frame(false, 1600, 0x10);
  ASSERT_TRUE(refresh_tcp_checksums(big));
  EXPECT_EQ(small.offer(big), Offer::kNotCoalescable);
  EXPECT_EQ(gro.take().segments, 1u);
}

TEST(Offload, CoalescerAsksForAFlushWhenTheFlowDoesNotContinueExactly) {
  for (bool v6 : {false, true}) {
    const std::vector<Bytes> segs = split(v6, 5 * 1000, 1000, 0x10);
    const std::size_t ip_len = v6 ? 40 : 20;
    const std::size_t tcp_at = 14 + ip_len;
    const auto flush_first = [&](Bytes next, const char* what, bool fix = true) {
      TcpCoalescer gro;
      ASSERT_EQ(gro.offer(segs[0]), Offer::kHeld);
      if (fix) {
        ASSERT_TRUE(refresh_tcp_checksums(next));
      }
      EXPECT_EQ(gro.offer(next), Offer::kFlushFirst) << what << (v6 ? " (IPv6)" : " (IPv4)");
      EXPECT_EQ(gro.segments(), 1u);
    };
    flush_first(segs[2], "a gap", false);
    flush_first(segs[0], "a retransmission", false);
    Bytes port = segs[1];
    port[tcp_at + 1] ^= 1;
    flush_first(port, "another source port");
    Bytes ack = segs[1];
    ack[tcp_at + 11] ^= 1;
    flush_first(ack, "another acknowledgement");
    Bytes window = segs[1];
    window[tcp_at + 15] ^= 1;
    flush_first(window, "another window");
    Bytes mac = segs[1];
    mac[5] ^= 1;
    flush_first(mac, "another destination MAC");
    Bytes hop = segs[1];
    hop[14 + (v6 ? 7 : 8)] -= 1;
    flush_first(hop, "another TTL / hop limit");
    Bytes addr = segs[1];
    addr[14 + (v6 ? 39 : 19)] ^= 1;
    flush_first(addr, "another destination address");
    if (!v6) {
      Bytes id = segs[1];
      id[14 + 6] = 0;  // DF off, identification +1 kept: joins ...
      id[14 + 5] = static_cast<std::uint8_t>(id[14 + 5] + 7);  // ... but not with a jump
      flush_first(id, "an identification jump without DF");
      Bytes tos = segs[1];
      tos[14 + 1] = 0x03;  // ECN CE
      flush_first(tos, "another TOS (ECN CE)");
    } else {
      Bytes flow = segs[1];
      flow[14 + 3] ^= 1;
      flush_first(flow, "another flow label");
    }
    // A payload longer than the first segment's; anything after a short or a PSH segment.
    const std::vector<Bytes> longer = split(v6, 3000, 1500 - 14 - ip_len - 20, 0x10);
    TcpCoalescer gro;
    ASSERT_EQ(gro.offer(segs[0]), Offer::kHeld);
    Bytes big = longer[0];
    store_be32(big.data() + tcp_at + 4, load_be32(segs[1].data() + tcp_at + 4));
    ASSERT_TRUE(refresh_tcp_checksums(big));
    EXPECT_EQ(gro.offer(big), Offer::kFlushFirst) << "longer than gso_size";
    const std::vector<Bytes> tail = split(v6, 2500, 1000, 0x18);  // 1000, 1000, 500+PSH
    TcpCoalescer g2;
    for (const Bytes& s : tail) ASSERT_EQ(g2.offer(s), Offer::kHeld);
    Bytes after = tail[0];
    store_be32(after.data() + tcp_at + 4, load_be32(tail[0].data() + tcp_at + 4) + 2500);
    after[tcp_at + 13] = 0x10;
    ASSERT_TRUE(refresh_tcp_checksums(after));
    EXPECT_EQ(g2.offer(after), Offer::kFlushFirst) << "after the short PSH segment";
    EXPECT_EQ(g2.take().segments, 3u);
    EXPECT_EQ(g2.offer(after), Offer::kHeld);
  }
}

}  // namespace
}  // namespace layersec::net
