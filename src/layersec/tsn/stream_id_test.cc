#include "layersec/tsn/stream_id.h"

#include <gtest/gtest.h>

namespace layersec::tsn {
namespace {

constexpr std::array<std::uint8_t, 6> kCam{0x02, 0, 0, 0, 0, 0x10};
constexpr std::array<std::uint8_t, 6> kEcu{0x02, 0, 0, 0, 0, 0x20};

StreamKey udp(std::array<std::uint8_t, 6> mac, std::uint16_t dport, std::uint8_t dscp = 0) {
  StreamKey k;
  k.dst_mac = mac;
  k.ipv4 = true;
  k.src_ip = 0x0A000001;
  k.dst_ip = 0x0A000002;
  k.protocol = 17;
  k.dscp = dscp;
  k.has_ports = true;
  k.src_port = 40000;
  k.dst_port = dport;
  return k;
}

TEST(StreamIdentifier, FirstMatchingRuleWins) {
  StreamIdentifier id;
  StreamRule control;
  control.kind = StreamMatch::kIp;
  control.handle = 1;
  control.protocol = 17;
  control.dst_port = 30501;
  control.set_vid = 10;
  control.set_pcp = 6;
  ASSERT_TRUE(id.add(control));
  StreamRule camera;
  camera.kind = StreamMatch::kNull;
  camera.handle = 2;
  camera.dst_mac = kCam;
  camera.untagged_only = true;
  camera.set_vid = 20;
  camera.set_pcp = 1;
  ASSERT_TRUE(id.add(camera));

  const StreamRule* r = id.match(udp(kEcu, 30501));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->handle, 1u);
  EXPECT_EQ(r->set_pcp, 6);
  r = id.match(udp(kCam, 5000));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->handle, 2u);
  EXPECT_EQ(id.match(udp(kEcu, 5000)), nullptr);
  auto tagged = udp(kCam, 5000);
  tagged.vid = 20;
  EXPECT_EQ(id.match(tagged), nullptr);  // untagged_only
}

TEST(StreamIdentifier, IpRuleNeedsIpv4AndPorts) {
  StreamIdentifier id;
  StreamRule r;
  r.kind = StreamMatch::kIp;
  r.dscp = 46;
  r.src_port = 40000;
  ASSERT_TRUE(id.add(r));
  StreamKey plain;
  plain.dst_mac = kEcu;
  EXPECT_EQ(id.match(plain), nullptr);
  EXPECT_NE(id.match(udp(kEcu, 1, 46)), nullptr);
  EXPECT_EQ(id.match(udp(kEcu, 1, 0)), nullptr);
  auto noports = udp(kEcu, 1, 46);
  noports.has_ports = false;
  EXPECT_EQ(id.match(noports), nullptr);
}

TEST(StreamIdentifier, InconsistentRulesAreRefusedByField) {
  StreamIdentifier id;
  std::string why;
  StreamRule r;
  r.kind = StreamMatch::kNull;
  EXPECT_FALSE(id.add(r, &why));
  EXPECT_NE(why.find("destination MAC"), std::string::npos);
  r.dst_mac = kCam;
  r.set_pcp = 8;
  EXPECT_FALSE(id.add(r, &why));
  EXPECT_NE(why.find("pcp 8"), std::string::npos);
  r.set_pcp = 0;
  r.set_vid = 4095;
  EXPECT_FALSE(id.add(r, &why));
  EXPECT_NE(why.find("vid 4095"), std::string::npos);
  r.set_vid = 1;
  r.dst_port = 5;
  EXPECT_FALSE(id.add(r, &why));
  StreamRule ip;
  ip.kind = StreamMatch::kIp;
  ip.protocol = 1;
  ip.dst_port = 5;
  EXPECT_FALSE(id.add(ip, &why));
  ip.protocol = 6;
  ip.dscp = 64;
  EXPECT_FALSE(id.add(ip, &why));
  EXPECT_NE(why.find("dscp 64"), std::string::npos);
  EXPECT_EQ(id.size(), 0u);
}

}  // namespace
}  // namespace layersec::tsn
