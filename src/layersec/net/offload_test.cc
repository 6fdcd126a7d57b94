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

void check_segments(bool v6, std::size_t payload, std::size_t mss, std::size_t options) {
  const std::uint8_t flags = 0x80 | 0x10 | 0x08 | 0x01;  // CWR ACK PSH FIN
  Bytes f = tcp_frame(v6, payload, flags, options);
  const Bytes original = f;
  VnetHeader h;
  h.flags = kVnetNeedsCsum;
  h.gso_type = v6 ? kVnetGsoTcpV6 : kVnetGsoTcpV4;
  h.gso_size = static_cast<std::uint16_t>(mss);
  Bytes scratch(2000);
  Collect c;
  auto r = complete_offload(h, f, scratch, 1514, c);
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
}

}  // namespace
}  // namespace layersec::net
