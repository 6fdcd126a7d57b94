#include "layersec/net/frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "layersec/base/hex.h"
#include "support/vectors.h"

namespace layersec::net {
namespace {

using ::layersec::testing::hex;
using ::layersec::testing::load_testdata_json;

Ipv4Address ip(const std::string& s) { return *Ipv4Address::parse(s); }
MacAddress mac(const std::string& s) { return *MacAddress::parse(s); }

UdpFrameSpec basic_spec() {
  UdpFrameSpec s;
  s.dst_mac = mac("02:00:00:00:00:02");
  s.src_mac = mac("02:00:00:00:00:01");
  s.src = {ip("10.0.0.1"), 30501};
  s.dst = {ip("10.0.0.2"), 30509};
  s.identification = 0x1234;
  return s;
}

std::vector<std::uint8_t> build(const UdpFrameSpec& spec, ByteSpan payload) {
  std::vector<std::uint8_t> out(kEthernetMaxFrameSize);
  auto n = build_udp_frame(spec, payload, out);
  EXPECT_TRUE(n.ok());
  if (!n.ok()) return {};
  out.resize(*n);
  return out;
}

TEST(AddressTest, ParseAndFormat) {
  EXPECT_EQ(ip("10.0.0.1").value, 0x0A000001u);
  EXPECT_EQ(ip("255.255.255.255").to_string(), "255.255.255.255");
  EXPECT_FALSE(Ipv4Address::parse("10.0.0").has_value());
  EXPECT_FALSE(Ipv4Address::parse("10.0.0.256").has_value());
  EXPECT_FALSE(Ipv4Address::parse("10.0.0.1 ").has_value());
  EXPECT_FALSE(Ipv4Address::parse("1..0.1").has_value());
  EXPECT_EQ(mac("02:AB:cd:00:00:ff").to_string(), "02:ab:cd:00:00:ff");
  EXPECT_FALSE(MacAddress::parse("02:ab:cd:00:00").has_value());
  EXPECT_FALSE(MacAddress::parse("02:ab:cd:00:00:fg").has_value());
  EXPECT_TRUE(ip("239.255.0.1").is_multicast());
  EXPECT_FALSE(ip("240.0.0.1").is_multicast());
  EXPECT_TRUE(MacAddress::broadcast().is_multicast());
  EXPECT_FALSE(MacAddress::local(5).is_multicast());
  EXPECT_EQ((Ipv4Endpoint{ip("10.0.0.1"), 30490}).to_string(), "10.0.0.1:30490");
}

TEST(AddressTest, MulticastMacKeepsLow23Bits) {
  // RFC 1112 §6.4.
  EXPECT_EQ(multicast_mac(ip("239.255.0.1")).to_string(), "01:00:5e:7f:00:01");
  EXPECT_EQ(multicast_mac(ip("224.129.2.3")).to_string(), "01:00:5e:01:02:03");
  EXPECT_EQ(multicast_mac(ip("224.1.2.3")), multicast_mac(ip("224.129.2.3")));
}

TEST(ChecksumTest, Rfc1071AndKnownHeader) {
  // A well-known IPv4 header whose checksum field is 0xb861.
  auto hdr = hex("450000730000400040110000c0a80001c0a800c7");
  EXPECT_EQ(internet_checksum(hdr), 0xb861);
  hdr[10] = 0xb8;
  hdr[11] = 0x61;
  EXPECT_EQ(internet_checksum(hdr), 0);
  // RFC 1071 §3 example words 0001 f203 f4f5 f6f7 sum to ddf2.
  EXPECT_EQ(internet_checksum(hex("0001f203f4f5f6f7")), static_cast<std::uint16_t>(~0xddf2));
  // Odd length pads with a zero byte.
  EXPECT_EQ(internet_checksum(hex("01")), static_cast<std::uint16_t>(~0x0100));
}

// RFC 1071 §4.1 word by word, the way the checksum was computed before the
// native-word sum: the reference the fast one must agree with.
std::uint16_t reference_checksum(ByteSpan data, std::uint32_t partial) {
  std::uint64_t acc = partial;
  std::size_t i = 0;
  for (; i + 1 < data.size(); i += 2) acc += std::uint32_t{data[i]} << 8 | data[i + 1];
  if (i < data.size()) acc += std::uint32_t{data[i]} << 8;
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<std::uint16_t>(~acc);
}

TEST(ChecksumTest, AgreesWithWordByWordSumOnRandomBuffers) {
  std::mt19937_64 rng(0x1071);  // fixed seed: the same buffers every run
  std::vector<std::uint8_t> buf(9000 + 8);
  for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
  const std::uint32_t partials[] = {0, 1, 0xFFFF, 0x10000, 0xFFFFFFFFu};
  int checked = 0;
  for (int t = 0; t < 4000; ++t) {
    const std::size_t offset = rng() % 8;
    const std::size_t len = t < 200 ? static_cast<std::size_t>(t) : rng() % 9001;  // 0..199, then any
    const std::uint32_t partial = t % 2 == 0 ? partials[(t / 2) % 5] : static_cast<std::uint32_t>(rng());
    std::uint8_t* p = buf.data() + offset;
    // Every fifth buffer all ones or all zeros: the sums at the fold edges.
    if (t % 5 == 1) std::memset(p, 0xFF, len);
    if (t % 5 == 3) std::memset(p, 0x00, len);
    const ByteSpan data(p, len);
    ASSERT_EQ(internet_checksum(data, partial), reference_checksum(data, partial))
        << "length " << len << " offset " << offset << " partial " << partial;
    ++checked;
    if (t % 5 == 1 || t % 5 == 3) {
      for (std::size_t i = 0; i < len; ++i) p[i] = static_cast<std::uint8_t>(rng());
    }
  }
  EXPECT_EQ(checked, 4000);
  // A buffer with its own checksum stored sums to zero, at every length.
  for (std::size_t len = 2; len <= 64; len += 2) {
    std::vector<std::uint8_t> d(len);
    for (auto& b : d) b = static_cast<std::uint8_t>(rng());
    d[0] = d[1] = 0;
    const std::uint16_t c = internet_checksum(d);
    d[0] = static_cast<std::uint8_t>(c >> 8);
    d[1] = static_cast<std::uint8_t>(c);
    EXPECT_EQ(internet_checksum(d), 0) << len;
  }
}

TEST(FrameTest, MatchesIndependentImplementation) {
  const auto j = load_testdata_json("net/frames.json");
  ASSERT_FALSE(j.is_null());
  for (const auto& v : j["frames"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    UdpFrameSpec s;
    s.dst_mac = mac(v["dst_mac"]);
    s.src_mac = mac(v["src_mac"]);
    for (const auto& t : v["tags"]) {
      s.tags[s.tag_count++] = VlanTag{t["tpid"].get<std::uint16_t>(), t["pcp"].get<std::uint8_t>(), t["dei"].get<bool>(),
                                      t["vid"].get<std::uint16_t>()};
    }
    s.src = {ip(v["src"]), v["src_port"].get<std::uint16_t>()};
    s.dst = {ip(v["dst"]), v["dst_port"].get<std::uint16_t>()};
    s.identification = v["id"].get<std::uint16_t>();
    s.dont_fragment = v["dont_fragment"].get<bool>();
    s.ttl = v["ttl"].get<std::uint8_t>();
    s.tos = v["tos"].get<std::uint8_t>();
    s.pad_to_minimum = false;
    const auto payload = hex(v["payload"]);
    const auto expected = hex(v["frame"]);
    EXPECT_EQ(to_hex(build(s, payload)), to_hex(expected));

    // Parsing the reference frame gives back every field.
    auto p = parse_udp_frame(expected);
    ASSERT_TRUE(p.ok()) << to_string(p.error());
    EXPECT_EQ(p->ethernet.dst, s.dst_mac);
    EXPECT_EQ(p->ethernet.src, s.src_mac);
    ASSERT_EQ(p->ethernet.tag_count, s.tag_count);
    for (std::size_t i = 0; i < s.tag_count; ++i) EXPECT_EQ(p->ethernet.tags[i], s.tags[i]);
    EXPECT_EQ(p->src(), s.src);
    EXPECT_EQ(p->dst(), s.dst);
    EXPECT_EQ(p->ip.header.ttl, s.ttl);
    EXPECT_EQ(p->ip.header.tos, s.tos);
    EXPECT_EQ(p->ip.header.identification, s.identification);
    EXPECT_EQ(p->ip.header.dont_fragment, s.dont_fragment);
    EXPECT_EQ(to_hex(p->payload()), to_hex(payload));

    // With padding on, short frames grow to 60 bytes and still parse the same.
    s.pad_to_minimum = true;
    const auto padded = build(s, payload);
    EXPECT_EQ(padded.size(), std::max(expected.size(), kEthernetMinFrameSize));
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), padded.begin()));
    auto pp = parse_udp_frame(padded);
    ASSERT_TRUE(pp.ok());
    EXPECT_EQ(to_hex(pp->payload()), to_hex(payload));
  }
}

TEST(FrameTest, ArpMatchesIndependentImplementation) {
  const auto j = load_testdata_json("net/frames.json");
  ASSERT_FALSE(j.is_null());
  for (const auto& v : j["arp"]) {
    ArpPacket a;
    a.operation = static_cast<ArpOperation>(v["operation"].get<int>());
    a.sender_mac = mac(v["sender_mac"]);
    a.sender_ip = ip(v["sender_ip"]);
    a.target_mac = mac(v["target_mac"]);
    a.target_ip = ip(v["target_ip"]);
    std::vector<std::uint8_t> out(64);
    auto n = build_arp_frame(a, out);
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(*n, kEthernetMinFrameSize);
    const auto expected = hex(v["frame"]);
    EXPECT_EQ(to_hex(ByteSpan(out.data(), expected.size())), to_hex(expected));
    auto eth = parse_ethernet(expected);
    ASSERT_TRUE(eth.ok());
    EXPECT_EQ(eth->header.ether_type, kEtherTypeArp);
    auto p = parse_arp(eth->payload);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->operation, a.operation);
    EXPECT_EQ(p->sender_mac, a.sender_mac);
    EXPECT_EQ(p->sender_ip, a.sender_ip);
    EXPECT_EQ(p->target_ip, a.target_ip);
  }
}

TEST(FrameTest, ArpRejections) {
  auto body = hex("0001080006040002020000000001 0a000001 020000000002 0a000002");
  EXPECT_TRUE(parse_arp(body).ok());
  EXPECT_EQ(parse_arp(ByteSpan(body).first(27)).error(), FrameError::kTruncated);
  auto bad = body;
  bad[1] = 6;  // IEEE 802 htype
  EXPECT_EQ(parse_arp(bad).error(), FrameError::kNotArp);
  bad = body;
  bad[7] = 3;  // RARP request
  EXPECT_EQ(parse_arp(bad).error(), FrameError::kBadArp);
}

TEST(FrameTest, ZeroUdpChecksumIsAcceptedAndVerifiedOtherwise) {
  UdpFrameSpec s = basic_spec();
  const std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5};
  s.compute_udp_checksum = false;
  auto f = build(s, payload);
  auto p = parse_udp_frame(f);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->udp.header.checksum, 0);
  s.compute_udp_checksum = true;
  f = build(s, payload);
  p = parse_udp_frame(f);
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p->udp.header.checksum, 0);
  f[42] ^= 0x01;  // first payload byte
  EXPECT_EQ(parse_udp_frame(f).error(), FrameError::kBadUdpChecksum);
}

TEST(FrameTest, ComputedZeroChecksumIsSentAsOnes) {
  // Choose the payload word so the one's-complement sum is 0xFFFF: then the
  // computed checksum is 0 and RFC 768 sends 0xFFFF instead.
  UdpFrameSpec s = basic_spec();
  std::vector<std::uint8_t> payload = {0, 0};
  auto f = build(s, payload);
  const std::uint16_t c = load_be16(f.data() + 40);
  // Adding `c` to the payload word lowers the complemented sum by c, to 0.
  store_be16(payload.data(), c);
  f = build(s, payload);
  EXPECT_EQ(load_be16(f.data() + 40), 0xFFFF);
  EXPECT_TRUE(parse_udp_frame(f).ok());
}

struct Mutation {
  const char* name;
  std::size_t offset;
  std::uint8_t value;
  FrameError expected;
  bool fix_ip_checksum;
};

TEST(FrameTest, TypedRejections) {
  const std::vector<std::uint8_t> payload(20, 0xAB);
  const auto good = build(basic_spec(), payload);
  ASSERT_TRUE(parse_udp_frame(good).ok());
  // Offsets: 12 EtherType, 14 IPv4 header, 34 UDP header, 42 payload.
  const Mutation cases[] = {
      {"length frame", 12, 0x05, FrameError::kLengthFrame, false},
      {"not ipv4", 12, 0x86, FrameError::kNotIpv4, false},
      {"ip version 6", 14, 0x65, FrameError::kBadIpVersion, true},
      {"ihl 4", 14, 0x44, FrameError::kBadIpHeaderLength, true},
      {"total length beyond frame", 16, 0x10, FrameError::kBadIpTotalLength, true},
      {"ttl changed, checksum stale", 22, 0x3F, FrameError::kBadIpChecksum, false},
      {"more fragments", 20, 0x20, FrameError::kIpFragment, true},
      {"fragment offset", 21, 0x01, FrameError::kIpFragment, true},
      {"reserved flag", 20, 0xC0, FrameError::kIpReservedFlag, true},
      {"tcp", 23, 0x06, FrameError::kNotUdp, true},
      {"udp length short", 39, 0x07, FrameError::kBadUdpLength, false},
      {"udp length long", 39, 0xFF, FrameError::kBadUdpLength, false},
  };
  for (const auto& m : cases) {
    SCOPED_TRACE(m.name);
    auto f = good;
    f[m.offset] = m.value;
    if (m.fix_ip_checksum) {
      store_be16(f.data() + 24, 0);
      const std::size_t ihl = std::size_t{f[14] & 0x0Fu} * 4;
      store_be16(f.data() + 24, internet_checksum(ByteSpan(f).subspan(14, std::max<std::size_t>(ihl, 20))));
    }
    auto p = parse_udp_frame(f);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error(), m.expected) << to_string(p.error());
  }
  for (std::size_t n = 0; n < 42; ++n) {
    auto p = parse_udp_frame(ByteSpan(good).first(n));
    ASSERT_FALSE(p.ok()) << n;
    EXPECT_TRUE(p.error() == FrameError::kTruncated || p.error() == FrameError::kBadIpTotalLength) << n;
  }
}

TEST(FrameTest, ThirdVlanTagIsRejected) {
  auto f = hex("020000000002020000000001 88a8000a 8100000b 8100000c 0800");
  EXPECT_EQ(parse_ethernet(f).error(), FrameError::kTooManyVlanTags);
  auto two = hex("020000000002020000000001 88a8e00a 8100000b 88b5 aabb");
  auto e = parse_ethernet(two);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->header.tag_count, 2);
  EXPECT_EQ(e->header.tags[0].tpid, kEtherTypeSTag);
  EXPECT_EQ(e->header.tags[0].pcp, 7);
  EXPECT_EQ(e->header.tags[0].vid, 10);
  EXPECT_EQ(e->header.ether_type, kEtherTypeLocalExperimental1);
  EXPECT_EQ(e->payload.size(), 2u);
  EXPECT_EQ(parse_ethernet(hex("020000000002020000000001 8100 00")).error(), FrameError::kTruncated);
}

TEST(FrameTest, BuilderRejectsBadInput) {
  UdpFrameSpec s = basic_spec();
  std::vector<std::uint8_t> out(kEthernetMaxFrameSize);
  std::vector<std::uint8_t> big(kMaxUdpPayload + 1);
  EXPECT_EQ(build_udp_frame(s, big, out).error(), FrameError::kPayloadTooLarge);
  big.pop_back();
  auto n = build_udp_frame(s, big, out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, kEthernetHeaderSize + kEthernetMtu);
  EXPECT_EQ(build_udp_frame(s, big, MutableByteSpan(out).first(*n - 1)).error(), FrameError::kBufferTooSmall);
  s.tag_count = 1;
  s.tags[0].vid = 4096;
  EXPECT_EQ(build_udp_frame(s, ByteSpan{}, out).error(), FrameError::kBadVlanTag);
  s.tags[0] = VlanTag{0x9100, 0, false, 1};
  EXPECT_EQ(build_udp_frame(s, ByteSpan{}, out).error(), FrameError::kBadVlanTag);
}

TEST(FrameTest, OptionsToleratedAndPaddingTrimmed) {
  // An IPv4 header with 4 bytes of options (IHL 6) and Ethernet padding.
  const std::vector<std::uint8_t> payload = {9, 8, 7};
  auto f = build(basic_spec(), payload);
  std::vector<std::uint8_t> g(f.begin(), f.begin() + 34);
  g.insert(g.end(), {0x01, 0x01, 0x01, 0x00});  // NOP NOP NOP EOL
  g.insert(g.end(), f.begin() + 34, f.begin() + 34 + 11);
  g[14] = 0x46;
  store_be16(g.data() + 16, static_cast<std::uint16_t>(24 + 11));
  store_be16(g.data() + 24, 0);
  store_be16(g.data() + 24, internet_checksum(ByteSpan(g).subspan(14, 24)));
  g.resize(70, 0);  // padding
  auto p = parse_udp_frame(g);
  ASSERT_TRUE(p.ok()) << to_string(p.error());
  EXPECT_EQ(p->ip.options.size(), 4u);
  EXPECT_EQ(p->ip.header.header_length, 24);
  EXPECT_EQ(to_hex(p->payload()), "090807");
}

}  // namespace
}  // namespace layersec::net
