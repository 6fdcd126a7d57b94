// MacsecFilter: the net::LinkFilter face of a MacsecLink (what
// someip::RawTransport puts between its own framing and the wire). Round
// trips of IPv4/UDP frames, the overhead bound the transport's MTU check
// relies on, and the drops: tampered, replayed, plain, unknown SCI, and a
// SecY with no transmit SA.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "layersec/macsec/link.h"
#include "layersec/net/frame.h"
#include "layersec/net/link_filter.h"

namespace layersec::macsec {
namespace {

using net::Ipv4Address;
using net::MacAddress;

const MacAddress kMacA = MacAddress::local(0x5101);
const MacAddress kMacB = MacAddress::local(0x5102);
const Sci kSciA = Sci::from_parts(kMacA.bytes.data(), 1);
const Sci kSciB = Sci::from_parts(kMacB.bytes.data(), 1);

std::vector<std::uint8_t> sak(std::uint8_t seed = 1) {
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed * 17 + i);
  return k;
}

// GCM-AES-128, Strict, one SAK for both directions.
SecY make(Sci self, Sci peer, bool include_sci = true, bool with_tx_sa = true) {
  const auto k = sak();
  SecYConfig c;
  c.sci = self;
  c.suite = CipherSuite::kGcmAes128;
  c.validate_frames = ValidateFrames::kStrict;
  c.confidentiality = true;
  c.include_sci = include_sci;
  SecY s(c);
  if (with_tx_sa) {
    EXPECT_TRUE(s.install_tx_sa(0, SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
    EXPECT_TRUE(s.set_encoding_sa(0).ok());
  }
  EXPECT_TRUE(s.add_rx_sc(peer).ok());
  EXPECT_TRUE(s.install_rx_sa(peer, 0, SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  return s;
}

std::vector<std::uint8_t> udp_frame(std::size_t payload_size, MacAddress src = kMacA, MacAddress dst = kMacB) {
  net::UdpFrameSpec spec;
  spec.src_mac = src;
  spec.dst_mac = dst;
  spec.src = {Ipv4Address::from_octets(10, 0, 0, 1), 30509};
  spec.dst = {Ipv4Address::from_octets(10, 0, 0, 2), 30501};
  spec.pad_to_minimum = false;
  std::vector<std::uint8_t> payload(payload_size);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7 + 3);
  std::vector<std::uint8_t> out(2000);
  auto n = net::build_udp_frame(spec, payload, out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? *n : 0);
  return out;
}

std::uint16_t ether_type(ByteSpan f) { return static_cast<std::uint16_t>((f[12] << 8) | f[13]); }

TEST(MacsecFilterTest, DescribesTheWire) {
  MacsecLink link(make(kSciA, kSciB));
  MacsecFilter filter(link);
  const net::LinkFilter& f = filter;
  EXPECT_EQ(f.wire_ether_type(), 0x88E5);
  EXPECT_EQ(f.wire_ether_type(), net::kEtherTypeMacsec);
  // SecTAG with SCI (16) + ICV (16).
  EXPECT_EQ(f.overhead(), 32u);
  EXPECT_EQ(f.overhead(), kSecTagSizeWithSci + kIcvSize);
  EXPECT_EQ(&filter.link(), &link);
}

TEST(MacsecFilterTest, RoundTripOfUdpFramesThroughTheInterface) {
  MacsecLink la(make(kSciA, kSciB)), lb(make(kSciB, kSciA));
  MacsecFilter fa(la), fb(lb);
  net::LinkFilter& out = fa;
  net::LinkFilter& in = fb;
  for (std::size_t size : {0u, 1u, 5u, 6u, 17u, 100u, 1000u, 1440u}) {
    SCOPED_TRACE(size);
    const auto plain = udp_frame(size);
    auto secure = out.outbound(plain);
    ASSERT_TRUE(secure.has_value());
    // Exactly the overhead with an explicit SCI, on EtherType 88-E5, and
    // the plain bytes do not appear (confidentiality).
    EXPECT_EQ(secure->size(), plain.size() + out.overhead());
    EXPECT_EQ(ether_type(*secure), out.wire_ether_type());
    std::vector<std::uint8_t> wire(secure->begin(), secure->end());
    auto back = in.inbound(wire);
    ASSERT_TRUE(back.has_value());
    ASSERT_EQ(back->size(), plain.size());
    EXPECT_TRUE(std::equal(back->begin(), back->end(), plain.begin()));
    auto v = net::parse_udp_frame(*back);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->payload().size(), size);
  }
  EXPECT_EQ(la.stats().tx_frames, 8u);
  EXPECT_EQ(la.stats().tx_sent, 8u);
  EXPECT_EQ(lb.stats().rx_frames, 8u);
  EXPECT_EQ(lb.stats().rx_delivered, 8u);
  EXPECT_EQ(lb.secy().stats().InPktsOK, 8u);
}

TEST(MacsecFilterTest, OverheadIsAnUpperBoundWithoutAnExplicitSci) {
  MacsecLink la(make(kSciA, kSciB, /*include_sci=*/false));
  MacsecFilter fa(la);
  for (std::size_t size : {0u, 10u, 1400u}) {
    const auto plain = udp_frame(size);
    auto secure = fa.outbound(plain);
    ASSERT_TRUE(secure.has_value());
    EXPECT_LE(secure->size(), plain.size() + fa.overhead());
    EXPECT_EQ(secure->size(), plain.size() + kSecTagSizeNoSci + kIcvSize);
  }
}

TEST(MacsecFilterTest, TamperedReplayedPlainAndUnknownFramesAreDropped) {
  MacsecLink la(make(kSciA, kSciB)), lb(make(kSciB, kSciA));
  MacsecFilter fa(la), fb(lb);
  const auto plain = udp_frame(64);
  auto s1 = fa.outbound(plain);
  ASSERT_TRUE(s1.has_value());
  const std::vector<std::uint8_t> first(s1->begin(), s1->end());
  auto s2 = fa.outbound(plain);
  ASSERT_TRUE(s2.has_value());
  const std::vector<std::uint8_t> second(s2->begin(), s2->end());

  // Tampered ciphertext: the ICV fails.
  std::vector<std::uint8_t> bad = second;
  bad[30] ^= 0x80;
  EXPECT_FALSE(fb.inbound(bad).has_value());
  EXPECT_EQ(lb.stats().rx_dropped, 1u);
  // The genuine frame still verifies (the tampered copy did not move the window).
  std::vector<std::uint8_t> good = second;
  EXPECT_TRUE(fb.inbound(good).has_value());
  // Replay of an older PN (replay window 0).
  std::vector<std::uint8_t> old = first;
  EXPECT_FALSE(fb.inbound(old).has_value());
  EXPECT_EQ(lb.stats().rx_dropped, 2u);
  // A plain IPv4 frame: no fallback to clear delivery.
  std::vector<std::uint8_t> clear = plain;
  EXPECT_FALSE(fb.inbound(clear).has_value());
  EXPECT_EQ(lb.stats().rx_not_macsec, 1u);
  // A secure frame from an SCI the receiver does not know.
  const MacAddress stranger = MacAddress::local(0x5199);
  MacsecLink lc(make(Sci::from_parts(stranger.bytes.data(), 1), kSciB));
  MacsecFilter fc(lc);
  auto s3 = fc.outbound(udp_frame(10, stranger));
  ASSERT_TRUE(s3.has_value());
  std::vector<std::uint8_t> unknown(s3->begin(), s3->end());
  EXPECT_FALSE(fb.inbound(unknown).has_value());
  EXPECT_EQ(lb.stats().rx_dropped, 3u);
  EXPECT_EQ(lb.stats().rx_delivered, 1u);
  // Truncated below a SecTAG.
  std::vector<std::uint8_t> stub(second.begin(), second.begin() + 16);
  EXPECT_FALSE(fb.inbound(stub).has_value());
  EXPECT_EQ(lb.stats().rx_delivered, 1u);
}

TEST(MacsecFilterTest, OutboundRefusalIsCountedByTheLink) {
  MacsecLink la(make(kSciA, kSciB, true, /*with_tx_sa=*/false));
  MacsecFilter fa(la);
  EXPECT_FALSE(fa.outbound(udp_frame(10)).has_value());
  EXPECT_EQ(la.stats().tx_protect_errors, 1u);
  EXPECT_EQ(la.stats().tx_sent, 0u);
}

}  // namespace
}  // namespace layersec::macsec
