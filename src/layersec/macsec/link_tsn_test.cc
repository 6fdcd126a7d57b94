// The TSN first hop of a MACsec link without sockets: the --tsn file's parser
// (every error names its JSON pointer), classification and tagging, the
// clear-tag and standard layouts through two SecYs, and the receiver's
// checked tag pop.
#include "layersec/macsec/link_tsn.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layersec/macsec/link_config.h"
#include "layersec/net/frame.h"

namespace layersec::macsec {
namespace {

using net::Ipv4Address;
using net::MacAddress;

const MacAddress kMacA = MacAddress::local(0x7901);
const MacAddress kMacB = MacAddress::local(0x7902);
const Sci kSciA = Sci::from_parts(kMacA.bytes.data(), 1);
const Sci kSciB = Sci::from_parts(kMacB.bytes.data(), 1);

const char* kSchedule =
    "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 "
    "sched-entry S 02 300000 sched-entry S 01 700000";

std::string config_text(const std::string& layout = "clear-tag", const std::string& extra = "") {
  return std::string(R"({"port_mbit_s": 100, "taprio": ")") + kSchedule + R"(", "layout": ")" + layout +
         R"(", "streams": [
      {"match": "ip", "handle": 1, "dst_ip": "10.0.0.2", "protocol": "udp", "dst_port": 5000,
       "set_vid": 10, "set_pcp": 5},
      {"match": "null", "handle": 2, "dst_mac": "02:00:00:00:79:02", "untagged_only": true,
       "set_vid": 20, "set_pcp": 0}])" +
         extra + "}";
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_link_tsn_config_text(text, {});
  } catch (const LinkConfigError& e) {
    return e.what();
  }
  return "accepted";
}

std::vector<std::uint8_t> udp_frame(std::uint16_t dst_port, std::uint8_t fill = 0x5A) {
  net::UdpFrameSpec spec;
  spec.dst_mac = kMacB;
  spec.src_mac = kMacA;
  spec.src = {Ipv4Address::from_octets(10, 0, 0, 1), 4000};
  spec.dst = {Ipv4Address::from_octets(10, 0, 0, 2), dst_port};
  const std::vector<std::uint8_t> payload(100, fill);
  std::vector<std::uint8_t> out(400);
  auto n = net::build_udp_frame(spec, payload, out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? n.value() : 0);
  return out;
}

SecY make(Sci self, Sci peer, VlanMode layout, bool tags_in_icv) {
  static const std::vector<std::uint8_t> kKeyA(16, 0x11), kKeyB(16, 0x22);
  SecYConfig c;
  c.sci = self;
  c.vlan_mode = layout;
  c.clear_tags_in_icv = tags_in_icv;
  SecY s(c);
  const auto& tx = self == kSciA ? kKeyA : kKeyB;
  const auto& rx = self == kSciA ? kKeyB : kKeyA;
  EXPECT_TRUE(s.install_tx_sa(0, SaKeys{ByteSpan(tx.data(), tx.size())}, 1).ok());
  EXPECT_TRUE(s.set_encoding_sa(0).ok());
  EXPECT_TRUE(s.add_rx_sc(peer).ok());
  EXPECT_TRUE(s.install_rx_sa(peer, 0, SaKeys{ByteSpan(rx.data(), rx.size())}, 1).ok());
  return s;
}

TEST(LinkTsnConfig, ParsesTheExample) {
  const LinkTsnConfig c = parse_link_tsn_config_text(config_text(), {});
  EXPECT_EQ(c.port_bps, 100'000'000u);
  EXPECT_EQ(c.schedule.num_tc, 2);
  ASSERT_EQ(c.schedule.gcl.entries.size(), 2u);
  EXPECT_EQ(c.layout, VlanMode::kClearTag);
  EXPECT_FALSE(c.clear_tags_in_icv);
  EXPECT_EQ(c.streams.size(), 2u);
  EXPECT_EQ(c.tags.count({10, 5}), 1u);
  EXPECT_EQ(c.tags.count({20, 0}), 1u);
  EXPECT_EQ(c.queue_limit_frames, 256u);
  EXPECT_EQ(parse_link_tsn_config_text(config_text("standard"), {}).layout, VlanMode::kStandard);
}

TEST(LinkTsnConfig, EveryErrorNamesItsField) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  // A number beyond a double is nlohmann's out_of_range, not a parse_error
  // (fuzz campaign finding, fuzz/corpus/macsec_link_tsn/regress_number_overflow).
  EXPECT_NE(error_of(R"({"port_mbit_s": 888888888888888.8E8888888888})").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(error_of(R"({"taprio": "x"})"), "/port_mbit_s: required");
  EXPECT_EQ(error_of(R"({"port_mbit_s": 0})").rfind("/port_mbit_s: must be in 1..100000", 0), 0u);
  EXPECT_EQ(error_of(R"({"port_mbit_s": 1e3})"), "/port_mbit_s: expected an integer");
  EXPECT_EQ(error_of(R"({"port_mbit_s": 100})"), "/taprio: required (or \"taprio_file\")");
  EXPECT_EQ(error_of(R"({"port_mbit_s": 100, "taprio": "taprio num_tc 9"})").rfind("/taprio: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"port_mbit_s": 100, "taprio_file": "s.txt"})"),
            "/taprio_file: schedule files are not read here");
  EXPECT_EQ(error_of(R"({"port_mbit_s": 100, "bogus": 1})"), "/bogus: unknown member");
  EXPECT_EQ(error_of(config_text("sideways")), "/layout: 'sideways' is neither \"clear-tag\" nor \"standard\"");
  EXPECT_EQ(error_of(config_text("standard", R"(, "clear_tags_in_icv": true)")),
            "/clear_tags_in_icv: only meaningful with \"layout\": \"clear-tag\"");
  EXPECT_EQ(error_of(config_text("clear-tag", R"(, "queue_limit_frames": 0)")).rfind("/queue_limit_frames: ", 0),
            0u);
  EXPECT_EQ(error_of(config_text("clear-tag", R"(, "default_pcp": 8)")).rfind("/default_pcp: ", 0), 0u);
  const std::string head = std::string(R"({"port_mbit_s": 100, "taprio": ")") + kSchedule + R"(", "streams": [)";
  EXPECT_EQ(error_of(head + R"({"match": "ip", "set_vid": 10, "set_pcp": 8}]})").rfind("/streams/0/set_pcp: ", 0),
            0u);
  EXPECT_EQ(error_of(head + R"({"match": "ip", "set_vid": 4095, "set_pcp": 1}]})").rfind("/streams/0/set_vid: ", 0),
            0u);
  EXPECT_EQ(error_of(head + R"({"match": "ip", "set_pcp": 1}]})"), "/streams/0/set_vid: required");
  EXPECT_EQ(error_of(head + R"({"match": "ip", "dst_ip": "10.0.0.256", "set_vid": 1, "set_pcp": 1}]})"),
            "/streams/0/dst_ip: '10.0.0.256' is not a dotted-quad IPv4 address");
  EXPECT_EQ(error_of(head + R"({"match": "ip", "protocol": "icmp", "set_vid": 1, "set_pcp": 1}]})")
                .rfind("/streams/0/protocol: ", 0),
            0u);
  EXPECT_EQ(error_of(head + R"({"match": "ip", "protocol": 1, "dst_port": 7, "set_vid": 1, "set_pcp": 1}]})"),
            "/streams/0/protocol: ports are matched only for udp (17) and tcp (6)");
  EXPECT_EQ(error_of(head + R"({"match": "null", "vid": 3, "set_vid": 1, "set_pcp": 1}]})"),
            "/streams/0/dst_mac: required for null stream identification");
  EXPECT_EQ(error_of(head + R"({"match": "null", "dst_mac": "02:00:00:00:00:01", "set_vid": 1, "set_pcp": 1}]})"),
            "/streams/0/vid: null identification needs \"vid\" or \"untagged_only\"");
  EXPECT_EQ(error_of(head + R"({"match": "ip", "dst_port": 0, "set_vid": 1, "set_pcp": 1}]})")
                .rfind("/streams/0/dst_port: ", 0),
            0u);
  EXPECT_EQ(error_of(head + R"({"match": "eth", "set_vid": 1, "set_pcp": 1}]})"),
            "/streams/0/match: 'eth' is neither \"ip\" nor \"null\"");
  EXPECT_EQ(error_of(head + R"({"match": "ip", "set_vid": 1, "set_pcp": 1, "x": 0}]})"), "/streams/0/x: unknown member");
}

TEST(TsnFramePath, TagsMatchingFramesAndClassifiesTheRest) {
  TsnFramePath path(parse_link_tsn_config_text(config_text(), {}));
  auto st = udp_frame(5000);
  const std::size_t plain_size = st.size();
  auto c = path.egress(st);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 1);  // PCP 5 -> class 1 by the taprio map
  ASSERT_EQ(st.size(), plain_size + 4);
  EXPECT_EQ(st[12], 0x81);
  EXPECT_EQ(st[13], 0x00);
  EXPECT_EQ((st[14] >> 5), 5);
  EXPECT_EQ(((st[14] & 0x0F) << 8) | st[15], 10);
  // The null rule (untagged frames to B's MAC) tags the other UDP port.
  auto be = udp_frame(6000);
  c = path.egress(be);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 0);
  EXPECT_EQ(((be[14] & 0x0F) << 8) | be[15], 20);
  // An untagged frame to another MAC: default PCP 0, class 0, untagged.
  auto other = udp_frame(6000);
  other[5] ^= 0x01;
  c = path.egress(other);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 0);
  EXPECT_EQ(other.size(), plain_size);
  std::vector<std::uint8_t> runt(10, 0);
  EXPECT_FALSE(path.egress(runt));
  EXPECT_EQ(path.stats().tx_classified, 3u);
  EXPECT_EQ(path.stats().tx_tagged, 2u);
  EXPECT_EQ(path.stats().tx_classify_errors, 1u);
}

TEST(TsnFramePath, ClassOfTaggedReadsTheOuterTagOnly) {
  TsnFramePath path(parse_link_tsn_config_text(config_text(), {}));
  auto st = udp_frame(5000);
  const auto untagged = st;
  ASSERT_TRUE(path.egress(st));
  const TsnLinkStats before = path.stats();
  EXPECT_EQ(path.class_of_tagged(st), 1);  // PCP 5
  st[12] = 0x88;
  st[13] = 0xA8;  // an S-tag with the same TCI
  EXPECT_EQ(path.class_of_tagged(st), 1);
  st[14] = static_cast<std::uint8_t>(st[14] & 0x1F);  // PCP 0
  EXPECT_EQ(path.class_of_tagged(st), 0);
  EXPECT_EQ(path.class_of_tagged(untagged), -1);
  EXPECT_EQ(path.class_of_tagged(std::vector<std::uint8_t>(15, 0x81)), -1);  // too short for a tag
  EXPECT_EQ(path.stats().tx_classified, before.tx_classified);
  EXPECT_EQ(path.stats().rx_tag_popped, before.rx_tag_popped);
}

// Both layouts through two SecYs: what the wire shows, and that the receiver
// delivers exactly the original untagged frame.
void round_trip(VlanMode layout, bool tags_in_icv) {
  const std::string extra = tags_in_icv ? R"(, "clear_tags_in_icv": true)" : "";
  TsnFramePath a(parse_link_tsn_config_text(config_text(layout == VlanMode::kClearTag ? "clear-tag" : "standard", extra), {}));
  TsnFramePath b(a.config());
  SecY tx = make(kSciA, kSciB, layout, tags_in_icv);
  SecY rx = make(kSciB, kSciA, layout, tags_in_icv);
  const auto original = udp_frame(5000, 0xC3);
  auto frame = original;
  ASSERT_TRUE(a.egress(frame));
  std::vector<std::uint8_t> wire(frame.size() + 64);
  auto n = tx.protect(ByteSpan(frame.data(), frame.size()), MutableByteSpan(wire.data(), wire.size()));
  ASSERT_TRUE(n.ok());
  wire.resize(*n);
  if (layout == VlanMode::kClearTag) {
    // A bridge reads the C-tag (PCP 5, VID 10) before the SecTAG.
    EXPECT_EQ(wire[12], 0x81);
    EXPECT_EQ(wire[14] >> 5, 5);
    EXPECT_EQ(wire[16], 0x88);
    EXPECT_EQ(wire[17], 0xE5);
  } else {
    // Nothing but the SecTAG: the tag is in the Secure Data.
    EXPECT_EQ(wire[12], 0x88);
    EXPECT_EQ(wire[13], 0xE5);
  }
  auto v = rx.validate(MutableByteSpan(wire.data(), wire.size()));
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->verified());
  auto plain = wire.data() + (v->frame.data() - wire.data());
  auto delivered = b.ingress(MutableByteSpan(plain, v->frame.size()));
  ASSERT_TRUE(delivered);
  EXPECT_EQ(std::vector<std::uint8_t>(delivered->begin(), delivered->end()), original);
  EXPECT_EQ(b.stats().rx_tag_popped, 1u);
}

TEST(TsnFramePath, ClearTagRoundTrip) { round_trip(VlanMode::kClearTag, false); }
TEST(TsnFramePath, ClearTagInIcvRoundTrip) { round_trip(VlanMode::kClearTag, true); }
TEST(TsnFramePath, StandardLayoutRoundTrip) { round_trip(VlanMode::kStandard, false); }

TEST(TsnFramePath, ClearTagRewrittenOnPathIsRefusedWhenCoveredAndCheckedOtherwise) {
  for (bool in_icv : {false, true}) {
    TsnFramePath a(parse_link_tsn_config_text(config_text("clear-tag", in_icv ? R"(, "clear_tags_in_icv": true)" : ""), {}));
    SecY tx = make(kSciA, kSciB, VlanMode::kClearTag, in_icv);
    SecY rx = make(kSciB, kSciA, VlanMode::kClearTag, in_icv);
    auto frame = udp_frame(5000);
    ASSERT_TRUE(a.egress(frame));
    std::vector<std::uint8_t> wire(frame.size() + 64);
    auto n = tx.protect(ByteSpan(frame.data(), frame.size()), MutableByteSpan(wire.data(), wire.size()));
    ASSERT_TRUE(n.ok());
    wire.resize(*n);
    wire[14] = static_cast<std::uint8_t>((7 << 5) | (wire[14] & 0x1F));  // PCP 5 -> 7 on the path
    auto v = rx.validate(MutableByteSpan(wire.data(), wire.size()));
    if (in_icv) {
      EXPECT_FALSE(v.ok() && v->verified()) << "a rewritten tag covered by the ICV must not verify";
      continue;
    }
    ASSERT_TRUE(v.ok() && v->verified());  // the tag is not authenticated in this layout
    TsnFramePath b(a.config());
    auto plain = wire.data() + (v->frame.data() - wire.data());
    EXPECT_FALSE(b.ingress(MutableByteSpan(plain, v->frame.size())));  // (VID 10, PCP 7): no rule sets it
    EXPECT_EQ(b.stats().rx_unknown_tag, 1u);
  }
}

TEST(TsnFramePath, UntaggedFramesPassAndThePortFollowsTheConfig) {
  TsnFramePath b(parse_link_tsn_config_text(config_text("clear-tag", R"(, "queue_limit_frames": 9)"), {}));
  auto f = udp_frame(7000);
  const auto copy = f;
  auto d = b.ingress(MutableByteSpan(f.data(), f.size()));
  ASSERT_TRUE(d);
  EXPECT_EQ(std::vector<std::uint8_t>(d->begin(), d->end()), copy);
  EXPECT_EQ(b.stats().rx_untagged, 1u);
  std::vector<std::uint8_t> runt(8, 0);
  EXPECT_FALSE(b.ingress(MutableByteSpan(runt.data(), runt.size())));
  EXPECT_EQ(b.stats().rx_malformed, 1u);
  const tsn::PortConfig pc = b.port_config();
  EXPECT_EQ(pc.link_bps, 100'000'000u);
  EXPECT_EQ(pc.num_classes, 2);
  EXPECT_EQ(pc.queue_limit_frames, 9u);
  const tsn::GateSchedule gs = b.gate_schedule(5'000'000);
  EXPECT_TRUE(gs.open(1, 5'000'000));   // cycle starts at 5 ms on base-time 0: ST window
  EXPECT_FALSE(gs.open(0, 5'000'000));
  EXPECT_TRUE(gs.open(0, 5'300'000));
}

}  // namespace
}  // namespace layersec::macsec
