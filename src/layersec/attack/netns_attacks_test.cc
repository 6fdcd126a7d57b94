// The pure parts of the netns attack runner (netns_attacks_frames.h): frame
// surgery on hand-built Ethernet/IPv4/UDP/SOME/IP frames and the judging of
// `layersec node --json` lines. No namespaces needed.
#include "layersec/attack/netns_attacks_frames.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace layersec::attack::netns {
namespace {

void put16(Frame& f, std::uint16_t v) {
  f.push_back(static_cast<std::uint8_t>(v >> 8));
  f.push_back(static_cast<std::uint8_t>(v));
}
void put32(Frame& f, std::uint32_t v) {
  put16(f, static_cast<std::uint16_t>(v >> 16));
  put16(f, static_cast<std::uint16_t>(v));
}

// Ethernet/IPv4/UDP around `message`, 10.77.0.1:sport -> 10.77.0.2:dport.
Frame udp_frame(const Frame& message, std::uint16_t sport, std::uint16_t dport) {
  Frame f = {0x02, 0, 0, 0x7b, 0, 2, 0x02, 0, 0, 0x7b, 0, 1, 0x08, 0x00};
  const std::size_t total = 20 + 8 + message.size();
  Frame ip = {0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 77, 0, 1, 10, 77, 0, 2};
  ip[2] = static_cast<std::uint8_t>(total >> 8);
  ip[3] = static_cast<std::uint8_t>(total);
  f.insert(f.end(), ip.begin(), ip.end());
  put16(f, sport);
  put16(f, dport);
  put16(f, static_cast<std::uint16_t>(8 + message.size()));
  put16(f, 0);
  f.insert(f.end(), message.begin(), message.end());
  refresh(f);
  return f;
}

// A notification 0x1234.0x8001 with the test publisher's 16-byte payload
// for `seq` and a 10-byte trailer (2-byte FV 0x0102, 8-byte MAC 0xAA..).
Frame notification(std::uint32_t seq) {
  Frame m;
  put16(m, 0x1234);
  put16(m, 0x8001);
  put32(m, 8 + 16 + 10);
  put16(m, 0);
  put16(m, 1);
  m.insert(m.end(), {1, 1, 0x02, 0});
  const Frame p = sequenced_payload(seq, 16);
  m.insert(m.end(), p.begin(), p.end());
  m.insert(m.end(), {0x01, 0x02});
  m.insert(m.end(), 8, 0xAA);
  return udp_frame(m, 30509, 30501);
}

// An SD message: one OfferService entry for `service` (TTL 3) with one IPv4
// endpoint option (10.77.0.1:30509), and a 16-byte SecOC trailer.
Frame sd_offer(std::uint16_t service) {
  Frame m;
  put16(m, 0xFFFF);
  put16(m, 0x8100);
  put32(m, 0);  // length, set below
  put16(m, 0);
  put16(m, 1);
  m.insert(m.end(), {1, 1, 0x02, 0});
  m.insert(m.end(), {0xC0, 0, 0, 0});  // flags
  put32(m, 16);
  m.insert(m.end(), {0x01, 0, 0, 0x10});
  put16(m, service);
  put16(m, 1);
  m.insert(m.end(), {1, 0, 0, 3});
  put32(m, 0);
  put32(m, 12);
  m.insert(m.end(), {0, 9, 0x04, 0, 10, 77, 0, 1, 0, 0x11});
  put16(m, 30509);
  m.insert(m.end(), 16, 0x55);  // FV + MAC
  const std::uint32_t length = static_cast<std::uint32_t>(m.size() - 8);
  for (int i = 0; i < 4; ++i) m[4 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(length >> (24 - 8 * i));
  return udp_frame(m, 30490, 30490);
}

int differing_bits(const Frame& a, const Frame& b, std::size_t from, std::size_t to) {
  int n = 0;
  for (std::size_t i = from; i < to; ++i) n += __builtin_popcount(static_cast<unsigned>(a[i] ^ b[i]));
  return n;
}

TEST(NetnsAttackFrames, LocatesANotificationAndItsSequence) {
  const Frame f = notification(77);
  const auto n = locate_notification(f);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->service, 0x1234);
  EXPECT_EQ(n->event, 0x8001);
  EXPECT_EQ(n->payload_length, 26u);
  EXPECT_EQ(n->udp.src_ip, ipv4(10, 77, 0, 1));
  EXPECT_EQ(n->udp.dst_port, 30501);
  EXPECT_EQ(notification_sequence(f), 77u);
  EXPECT_FALSE(locate_notification(sd_offer(0x1234)).has_value());
  EXPECT_TRUE(is_sd(sd_offer(0x1234)));
  EXPECT_FALSE(is_sd(f));
  Frame cut(f.begin(), f.begin() + 30);
  EXPECT_FALSE(locate_udp(cut).has_value());
}

TEST(NetnsAttackFrames, TamperFlipsExactlyOneBitInTheChosenRegion) {
  std::mt19937_64 rng(1);
  const Frame original = notification(5);
  const auto n = locate_notification(original);
  ASSERT_TRUE(n.has_value());
  const std::size_t data_end = n->payload + 16;
  const std::size_t end = n->payload + n->payload_length;
  struct Case {
    TamperRegion region;
    std::size_t from, to;
  };
  for (const Case c : {Case{TamperRegion::kHeader, n->header, n->payload}, Case{TamperRegion::kPayload, n->payload, data_end},
                       Case{TamperRegion::kAuth, data_end, end}}) {
    for (int i = 0; i < 50; ++i) {
      Frame f = original;
      ASSERT_TRUE(tamper_notification(f, c.region, 10, rng));
      EXPECT_EQ(differing_bits(f, original, n->header, end), 1) << to_string(c.region);
      EXPECT_EQ(differing_bits(f, original, c.from, c.to), 1) << to_string(c.region);
      // Checksums were refreshed: refreshing again changes nothing.
      Frame again = f;
      refresh(again);
      EXPECT_EQ(again, f);
    }
  }
  Frame sd = sd_offer(0x1234);
  EXPECT_FALSE(tamper_notification(sd, TamperRegion::kPayload, 10, rng));
}

TEST(NetnsAttackFrames, ForgeRelabelAndFreshness) {
  std::mt19937_64 rng(2);
  Frame f = notification(9);
  ASSERT_TRUE(forge_notification(f, 0xEE, 10, 8, rng));
  const auto n = locate_notification(f);
  ASSERT_TRUE(n.has_value());
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(f[n->payload + i], 0xEE);
  EXPECT_EQ(f[n->payload + 16], 0x01);  // the FV is kept
  EXPECT_EQ(f[n->payload + 17], 0x02);
  ASSERT_TRUE(bump_freshness(f, 2, 8, 0xFF));
  EXPECT_EQ(f[n->payload + 16], 0x02);
  EXPECT_EQ(f[n->payload + 17], 0x01);
  Frame r = notification(9);
  ASSERT_TRUE(relabel_notification(r, 0x8002));
  EXPECT_EQ(locate_notification(r)->event, 0x8002);
  EXPECT_EQ(notification_sequence(r), 9u);
}

TEST(NetnsAttackFrames, SdStopOfferAndHijack) {
  Frame f = sd_offer(0x1234);
  Frame other = f;
  EXPECT_EQ(sd_stop_offer(other, 0x4321), 0);
  EXPECT_EQ(other, f);
  EXPECT_EQ(sd_stop_offer(f, 0x1234), 1);
  EXPECT_EQ(sd_stop_offer(f, 0x1234), 0);  // already TTL 0
  Frame h = sd_offer(0x1234);
  EXPECT_EQ(sd_hijack_endpoint(h, ipv4(10, 77, 0, 66)), 1);
  const Frame pattern = {10, 77, 0, 66};
  EXPECT_NE(std::search(h.begin(), h.end(), pattern.begin(), pattern.end()), h.end());
  // The SD trailer's FV (8 bytes before the 8-byte MAC) can be moved on.
  Frame b = sd_offer(0x1234);
  ASSERT_TRUE(bump_freshness(b, 8, 8, 1));
  EXPECT_EQ(b[b.size() - 9], 0x56);
}

TEST(NetnsAttackFrames, JudgesDeliveriesRejectionsAndStopOffers) {
  const std::string lines =
      R"({"event":32769,"payload":"00000001a5a5a5a5a5a5a5a5a5a5a5a5","service":4660,"size":16,"type":"event"})"
      "\n"
      R"({"event":32769,"payload":"00000001a5a5a5a5a5a5a5a5a5a5a5a5","service":4660,"size":16,"type":"event"})"
      "\n"
      R"({"event":32769,"payload":"00000002a5a5a5a5a5a5a5a5a5a5a5a5","service":4660,"size":16,"type":"event"})"
      "\n"
      R"({"event":32770,"payload":"00000003a5a5a5a5a5a5a5a5a5a5a5a5","service":4660,"size":16,"type":"event"})"
      "\n"
      R"({"event":32769,"payload":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee","service":4660,"size":16,"type":"event"})"
      "\n"
      R"({"event":36863,"payload":"00","service":24256,"size":1,"type":"event"})"
      "\n"
      R"({"id":32769,"reason":"mac-mismatch","sd":false,"service":4660,"type":"rejection"})"
      "\n"
      R"({"id":0,"reason":"replay","sd":true,"service":65535,"type":"rejection"})"
      "\n"
      R"({"available":false,"instance":1,"service":4660,"type":"availability"})"
      "\n"
      "layersec node: not json\n";
  const std::set<std::pair<std::size_t, std::uint32_t>> untouched = {{16, 1}, {16, 3}};
  std::set<std::pair<std::size_t, std::uint32_t>> seen;
  const Judged j = judge_lines(lines, 0x1234, 0x8001, untouched, seen);
  EXPECT_EQ(j.legit, 1u);     // seq 1, the first time
  EXPECT_EQ(j.accepted, 4u);  // seq 1 again, seq 2 (never forwarded), the relabelled seq 3, the forged payload
  EXPECT_EQ(j.stop_offers, 1u);
  EXPECT_EQ(j.rejections.at("secoc:mac-mismatch"), 1u);
  EXPECT_EQ(j.rejections.at("sd:replay"), 1u);
  EXPECT_EQ(seen.size(), 1u);
  // A later phase: seq 1 was delivered already, so it counts as accepted.
  const Judged k = judge_lines(lines.substr(0, lines.find('\n') + 1), 0x1234, 0x8001, untouched, seen);
  EXPECT_EQ(k.legit, 0u);
  EXPECT_EQ(k.accepted, 1u);
}

}  // namespace
}  // namespace layersec::attack::netns
