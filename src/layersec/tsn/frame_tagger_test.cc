#include "layersec/tsn/frame_tagger.h"

#include <gtest/gtest.h>

namespace layersec::tsn {
namespace {

std::vector<std::uint8_t> udp_frame(std::uint16_t dst_port, const net::VlanTag* tag = nullptr, std::uint8_t tos = 0) {
  net::UdpFrameSpec spec;
  spec.dst_mac = net::MacAddress::local(2);
  spec.src_mac = net::MacAddress::local(1);
  if (tag) {
    spec.tags[0] = *tag;
    spec.tag_count = 1;
  }
  spec.src = {net::Ipv4Address::from_octets(10, 0, 0, 1), 40000};
  spec.dst = {net::Ipv4Address::from_octets(10, 0, 0, 2), dst_port};
  spec.tos = tos;
  const std::uint8_t payload[16] = {1, 2, 3};
  std::vector<std::uint8_t> out(200);
  auto n = net::build_udp_frame(spec, payload, out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? n.value() : 0);
  return out;
}

TEST(FrameTagger, StreamKeyReadsLayerTwoThreeAndFour) {
  auto f = udp_frame(30501, nullptr, 46 << 2);
  auto k = stream_key(f);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->dst_mac, net::MacAddress::local(2).bytes);
  EXPECT_FALSE(k->vid);
  EXPECT_TRUE(k->ipv4);
  EXPECT_EQ(k->dst_ip, net::Ipv4Address::from_octets(10, 0, 0, 2).value);
  EXPECT_EQ(k->dscp, 46);
  EXPECT_EQ(k->protocol, 17);
  EXPECT_TRUE(k->has_ports);
  EXPECT_EQ(k->src_port, 40000);
  EXPECT_EQ(k->dst_port, 30501);
  std::vector<std::uint8_t> tiny(10, 0);
  EXPECT_FALSE(stream_key(tiny));
}

TEST(FrameTagger, UntaggedFrameMatchingARuleGetsTheRulesTag) {
  StreamIdentifier ids;
  StreamRule r;
  r.kind = StreamMatch::kIp;
  r.handle = 7;
  r.protocol = 17;
  r.dst_port = 30501;
  r.set_vid = 100;
  r.set_pcp = 6;
  ASSERT_TRUE(ids.add(r));
  auto classes = *TrafficClassMap::standard(2);
  auto f = udp_frame(30501);
  const std::size_t before = f.size();
  auto c = classify_egress(f, classes, &ids);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->tagged_here);
  EXPECT_EQ(c->stream_handle, 7u);
  EXPECT_EQ(c->traffic_class, 1);
  ASSERT_EQ(f.size(), before + 4);
  auto eth = net::parse_ethernet(f);
  ASSERT_TRUE(eth);
  ASSERT_EQ(eth->header.tag_count, 1);
  EXPECT_EQ(eth->header.tags[0].vid, 100);
  EXPECT_EQ(eth->header.tags[0].pcp, 6);
  // The datagram behind the new tag is intact.
  auto udp = net::parse_udp_frame(f);
  ASSERT_TRUE(udp);
  EXPECT_EQ(udp->dst().port, 30501);
}

TEST(FrameTagger, TaggedFramesKeepTheirTagAndOthersUseTheDefaultPriority) {
  StreamIdentifier ids;
  StreamRule r;
  r.kind = StreamMatch::kIp;
  r.set_pcp = 7;
  ASSERT_TRUE(ids.add(r));  // would match everything IPv4
  auto classes = *TrafficClassMap::standard(8);
  net::VlanTag t;
  t.pcp = 2;
  t.vid = 5;
  auto tagged = udp_frame(1, &t);
  auto c = classify_egress(tagged, classes, &ids);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->tagged_here);
  EXPECT_EQ(c->pcp, 2);
  EXPECT_EQ(c->traffic_class, 2);
  auto plain = udp_frame(1);
  auto d = classify_egress(plain, classes, nullptr, 0);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->traffic_class, 1);  // PCP 0 is class 1 of 8 (Table 8-5)
  EXPECT_FALSE(d->vid);
}

TEST(FrameTagger, InsertTagRefusesBadTagsAndAThirdTag) {
  auto f = udp_frame(1);
  net::VlanTag bad;
  bad.pcp = 9;
  EXPECT_EQ(insert_vlan_tag(f, bad).error(), net::FrameError::kBadVlanTag);
  net::VlanTag t;
  t.vid = 1;
  ASSERT_TRUE(insert_vlan_tag(f, t).ok());
  ASSERT_TRUE(insert_vlan_tag(f, t).ok());
  EXPECT_EQ(insert_vlan_tag(f, t).error(), net::FrameError::kTooManyVlanTags);
  std::vector<std::uint8_t> tiny(5, 0);
  EXPECT_FALSE(insert_vlan_tag(tiny, t).ok());
}

}  // namespace
}  // namespace layersec::tsn
