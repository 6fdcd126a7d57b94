// FirstHopPath (classification, tagging, the ingress tag check and pop) and
// FirstHopStage (the path plus the shaper, on a fake clock and timer).
#include "layersec/tsn/first_hop.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/tsn/first_hop_stage.h"
#include "layersec/tsn/shaper_test_support.h"

namespace layersec::tsn {
namespace {

constexpr std::uint16_t kStPort = 30501;
constexpr std::uint16_t kBePort = 30502;
const net::Ipv4Address kA = net::Ipv4Address::from_octets(10, 0, 0, 1);
const net::Ipv4Address kB = net::Ipv4Address::from_octets(10, 0, 0, 2);

// ST: to B's port 30501 -> VID 10 PCP 5; BE: to B's port 30502 -> VID 20 PCP 0.
StreamIdentifier streams() {
  StreamIdentifier s;
  StreamRule st;
  st.kind = StreamMatch::kIp;
  st.handle = 1;
  st.dst_ip = kB.value;
  st.protocol = 17;
  st.dst_port = kStPort;
  st.set_vid = 10;
  st.set_pcp = 5;
  EXPECT_TRUE(s.add(st));
  StreamRule be = st;
  be.handle = 2;
  be.dst_port = kBePort;
  be.set_vid = 20;
  be.set_pcp = 0;
  EXPECT_TRUE(s.add(be));
  return s;
}

TrafficClassMap two_classes() { return *TrafficClassMap::standard(2); }

std::vector<std::uint8_t> udp_frame(std::uint16_t dst_port, std::size_t payload = 16) {
  net::UdpFrameSpec spec;
  spec.dst_mac = net::MacAddress::local(kB.value);
  spec.src_mac = net::MacAddress::local(kA.value);
  spec.src = {kA, 40000};
  spec.dst = {kB, dst_port};
  spec.pad_to_minimum = false;
  std::vector<std::uint8_t> body(payload, 0x5A);
  std::vector<std::uint8_t> out(2000);
  auto n = net::build_udp_frame(spec, body, out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? n.value() : 0);
  return out;
}

std::uint16_t be16(const std::vector<std::uint8_t>& f, std::size_t at) {
  return static_cast<std::uint16_t>((f[at] << 8) | f[at + 1]);
}

// Rewrites the outer tag's TCI of a tagged frame.
void set_tci(std::vector<std::uint8_t>& f, std::uint8_t pcp, std::uint16_t vid) {
  const std::uint16_t tci = static_cast<std::uint16_t>((pcp << 13) | vid);
  f[14] = static_cast<std::uint8_t>(tci >> 8);
  f[15] = static_cast<std::uint8_t>(tci);
}

TEST(FirstHopPath, TagsEachStreamWithItsRuleAndLeavesOthersInTheDefaultClass) {
  FirstHopPath p(streams(), two_classes(), 0);
  auto st = udp_frame(kStPort);
  const auto plain = st;
  auto c = p.egress(st);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->tagged_here);
  EXPECT_EQ(c->stream_handle, 1u);
  EXPECT_EQ(c->traffic_class, 1);  // PCP 5 of two classes (Table 8-5)
  ASSERT_EQ(st.size(), plain.size() + 4);
  EXPECT_EQ(be16(st, 12), 0x8100);
  EXPECT_EQ(be16(st, 14), (5 << 13) | 10);
  EXPECT_EQ(be16(st, 16), 0x0800);
  EXPECT_TRUE(std::equal(plain.begin(), plain.begin() + 12, st.begin()));

  auto be = udp_frame(kBePort);
  c = p.egress(be);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->traffic_class, 0);
  EXPECT_EQ(be16(be, 14), 20);

  auto sd = udp_frame(30490);  // no rule: untagged, default PCP 0
  const auto sd_plain = sd;
  c = p.egress(sd);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->tagged_here);
  EXPECT_EQ(c->traffic_class, 0);
  EXPECT_EQ(sd, sd_plain);

  std::vector<std::uint8_t> runt(10, 0);
  EXPECT_FALSE(p.egress(runt));
  const auto& k = p.counters();
  EXPECT_EQ(k.tx_classified, 3u);
  EXPECT_EQ(k.tx_tagged, 2u);
  EXPECT_EQ(k.tx_default_class, 1u);
  EXPECT_EQ(k.tx_classify_errors, 1u);
}

TEST(FirstHopPath, DefaultPcpPicksTheClassOfUntaggedFrames) {
  FirstHopPath p(streams(), two_classes(), 6);
  auto sd = udp_frame(30490);
  auto c = p.egress(sd);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->pcp, 6);
  EXPECT_EQ(c->traffic_class, 1);
  EXPECT_FALSE(c->vid);
}

TEST(FirstHopPath, IngressPopsTheTagOfAKnownStream) {
  FirstHopPath tx(streams(), two_classes(), 0);
  FirstHopPath rx(streams(), two_classes(), 0);
  const auto plain = udp_frame(kStPort);
  auto f = plain;
  ASSERT_TRUE(tx.egress(f));
  auto r = rx.ingress(f);
  ASSERT_TRUE(r);
  EXPECT_EQ(std::vector<std::uint8_t>(r->begin(), r->end()), plain);
  EXPECT_EQ(rx.counters().rx_tag_popped, 1u);
}

TEST(FirstHopPath, IngressFailsClosedAndLeavesDroppedFramesUnchanged) {
  FirstHopPath tx(streams(), two_classes(), 0);
  FirstHopPath rx(streams(), two_classes(), 0);
  auto tagged_st = udp_frame(kStPort);
  ASSERT_TRUE(tx.egress(tagged_st));

  auto expect_drop = [&](std::vector<std::uint8_t> f, IngressDrop why) {
    const auto before = f;
    auto r = rx.ingress(f);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), why) << to_string(why);
    EXPECT_EQ(f, before);
  };
  // A VID no rule sets.
  auto unknown = tagged_st;
  set_tci(unknown, 5, 99);
  expect_drop(unknown, IngressDrop::kUnknownVid);
  // ST content relabelled with BE's (VID, PCP), and ST's VID with another PCP.
  auto relabelled = tagged_st;
  set_tci(relabelled, 0, 20);
  expect_drop(relabelled, IngressDrop::kTagMismatch);
  auto repriced = tagged_st;
  set_tci(repriced, 7, 10);
  expect_drop(repriced, IngressDrop::kTagMismatch);
  // A known tag on a frame no rule matches (injected).
  auto sd = udp_frame(30490);
  auto sd_tagged = sd;
  ASSERT_TRUE(insert_vlan_tag(sd_tagged, net::VlanTag{net::kEtherTypeCTag, 5, false, 10}).ok());
  expect_drop(sd_tagged, IngressDrop::kTagMismatch);
  // An S-tag, two tags.
  auto stag = udp_frame(kStPort);
  ASSERT_TRUE(insert_vlan_tag(stag, net::VlanTag{net::kEtherTypeSTag, 5, false, 10}).ok());
  expect_drop(stag, IngressDrop::kBadTag);
  auto two = tagged_st;
  ASSERT_TRUE(insert_vlan_tag(two, net::VlanTag{net::kEtherTypeCTag, 5, false, 10}).ok());
  expect_drop(two, IngressDrop::kBadTag);
  // ST content arriving untagged (tag stripped on the way).
  expect_drop(udp_frame(kStPort), IngressDrop::kUntaggedStream);
  expect_drop(std::vector<std::uint8_t>(9, 0), IngressDrop::kMalformed);

  const auto& k = rx.counters();
  EXPECT_EQ(k.rx_unknown_vid, 1u);
  EXPECT_EQ(k.rx_tag_mismatch, 3u);
  EXPECT_EQ(k.rx_bad_tag, 2u);
  EXPECT_EQ(k.rx_untagged_stream, 1u);
  EXPECT_EQ(k.rx_malformed, 1u);
  EXPECT_EQ(k.rx_tag_popped, 0u);
  // Untagged frames of no stream (SD) pass as they are.
  auto r = rx.ingress(sd);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->size(), sd.size());
  EXPECT_EQ(rx.counters().rx_untagged, 1u);
}

// --- the stage: path + shaper on a fake clock ---------------------------------

using testing_support::FakeClock;
using testing_support::FakeTimer;

// 1 ms cycle: ST (class 1) 300 us, then BE (class 0) 700 us; 100 Mbit/s.
FirstHopSettings settings() {
  FirstHopSettings s;
  s.port_bps = 100'000'000;
  s.schedule = testing_support::st_be_schedule(s.port_bps);
  s.streams = streams();
  s.queue_limit_frames = 4;
  return s;
}

struct StageBed {
  StageBed() : stage(settings(), clock, timer) {
    stage.connect([this](ByteSpan f) {
      wire.emplace_back(f.begin(), f.end());
      at.push_back(clock.now);
      return true;
    });
  }
  // Runs the shaper's timer up to `t`.
  void advance_to(std::int64_t t) {
    while (timer.armed && timer.at <= t) {
      clock.now = timer.at;
      timer.armed = false;
      stage.service();
    }
    clock.now = t;
  }
  FakeClock clock;
  FakeTimer timer;
  FirstHopStage stage;
  std::vector<std::vector<std::uint8_t>> wire;
  std::vector<std::int64_t> at;
};

TEST(FirstHopStage, StOvertakesQueuedBeAndBeWaitsForItsGate) {
  StageBed b;
  b.clock.now = 100'000;  // in the ST window
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.stage.outbound(udp_frame(kBePort, 200)));
  EXPECT_TRUE(b.stage.outbound(udp_frame(kStPort, 100)));
  ASSERT_EQ(b.wire.size(), 1u);  // ST went at once; BE is held
  EXPECT_EQ(be16(b.wire[0], 14), (5 << 13) | 10);
  EXPECT_EQ(b.at[0], 100'000);
  b.advance_to(1'000'000);
  ASSERT_EQ(b.wire.size(), 4u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(be16(b.wire[i], 14), 20);
    EXPECT_GE(b.at[i], 300'000);  // BE's gate opens at 300 us
  }
  EXPECT_EQ(b.at[1], 300'000);
  // `held` counts a frame that reached the head of its queue with the gate
  // closed: the first BE; the others left in their open window.
  EXPECT_EQ(b.stage.shaper().port().counters(0).held, 1u);
  EXPECT_EQ(b.stage.shaper().port().counters(0).transmission_overruns, 0u);
}

TEST(FirstHopStage, RefusalsAndDetachedTransmitsAreCounted) {
  StageBed b;
  b.clock.now = 100'000;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(b.stage.outbound(udp_frame(kBePort)));
  EXPECT_FALSE(b.stage.outbound(udp_frame(kBePort)));  // queue limit 4
  EXPECT_EQ(b.stage.shaper_refused(), 1u);
  EXPECT_EQ(b.stage.shaper().port().counters(0).dropped_queue_full, 1u);
  EXPECT_FALSE(b.stage.outbound(ByteSpan()));  // not a frame
  EXPECT_EQ(b.stage.path().counters().tx_classify_errors, 1u);
  b.stage.connect(nullptr);  // the transport went away
  b.advance_to(1'000'000);
  EXPECT_EQ(b.wire.size(), 0u);
  EXPECT_EQ(b.stage.unconnected_drops(), 4u);
  EXPECT_EQ(b.stage.overhead(), 4u);
}

}  // namespace
}  // namespace layersec::tsn
