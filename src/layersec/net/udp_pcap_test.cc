#include "layersec/net/udp_pcap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "layersec/base/file.h"

namespace layersec::net {
namespace {

UdpCaptureRecord record_to(Ipv4Address dst) {
  return UdpCaptureRecord{TimePoint::from_ns(1'000'000'000), {Ipv4Address::from_octets(10, 0, 0, 1), 30490},
                          {dst, 30490}, {1, 2, 3}};
}

TEST(UdpPcap, UnicastFrameUsesHostMacsAndValidChecksums) {
  const auto f = udp_capture_frame(record_to(Ipv4Address::from_octets(10, 0, 0, 2)));
  EXPECT_EQ(f.size(), 14u + 20 + 8 + 3);  // not padded to 60
  auto v = parse_udp_frame(f);            // verifies both checksums
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->ethernet.dst, (MacAddress{{0x02, 0x00, 10, 0, 0, 2}}));
  EXPECT_EQ(v->ethernet.src, (MacAddress{{0x02, 0x00, 10, 0, 0, 1}}));
  EXPECT_EQ(v->src().to_string(), "10.0.0.1:30490");
  EXPECT_EQ(v->ip.header.identification, 1);
  ASSERT_EQ(v->payload().size(), 3u);
  EXPECT_EQ(v->payload()[2], 3);
}

TEST(UdpPcap, MulticastDestinationMapsToAGroupMac) {
  auto v = parse_udp_frame(udp_capture_frame(record_to(Ipv4Address::from_octets(224, 224, 224, 245))));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->ethernet.dst, (MacAddress{{0x01, 0x00, 0x5e, 0x60, 224, 245}}));
}

TEST(UdpPcap, WritesOneRecordPerDatagram) {
  char dir[] = "/tmp/udp_pcap_test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/c.pcap";
  const UdpCaptureRecord r = record_to(Ipv4Address::from_octets(10, 0, 0, 2));
  const UdpCaptureRecord two[] = {r, r};
  write_udp_pcap(path, two);
  const std::string bytes = read_regular_file(path, 1 << 16);
  EXPECT_EQ(bytes.size(), 24u + 2 * (16 + 45));  // global header + 2 x (record header + frame)
  std::remove(path.c_str());
  std::remove(dir);
  EXPECT_THROW(write_udp_pcap(std::string(dir) + "/missing/c.pcap", two), std::runtime_error);
}

}  // namespace
}  // namespace layersec::net
