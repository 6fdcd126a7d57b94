// Tests of the gPTP port of a MACsec link without sockets: which lower-link
// frames go to the port in each protection mode, the --ptp file's parser (every
// error names its JSON pointer), and the shaper's clock over the gPTP clock
// (a fake local time line and a fake timer: gates open on synchronised time,
// and a stepped clock does not stall the shaper). The sockets and the SecY
// together are exercised as root by tests/cli/ptp_macsec_netns.sh.
#include "layersec/macsec/link_ptp.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layersec/macsec/link_config.h"
#include "layersec/tsn/egress_port.h"
#include "layersec/tsn/gate_control_list.h"

namespace layersec::macsec {
namespace {

std::vector<std::uint8_t> eth(std::array<std::uint8_t, 6> dst, std::uint16_t type, std::size_t body = 44) {
  std::vector<std::uint8_t> f(14 + body, 0);
  std::copy(dst.begin(), dst.end(), f.begin());
  for (std::size_t i = 6; i < 12; ++i) f[i] = static_cast<std::uint8_t>(0x10 + i);
  f[12] = static_cast<std::uint8_t>(type >> 8);
  f[13] = static_cast<std::uint8_t>(type);
  return f;
}

constexpr std::array<std::uint8_t, 6> kGroup = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};
constexpr std::array<std::uint8_t, 6> kUnicast = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

ByteSpan span(const std::vector<std::uint8_t>& v) { return ByteSpan(v.data(), v.size()); }

TEST(LinkPtpClassify, ProtectedAcceptsOnlyVerifiedGptp) {
  const auto plain = eth(kGroup, 0x88F7);
  const auto secure = eth(kGroup, 0x88E5);
  const auto ip = eth(kUnicast, 0x0800);
  EXPECT_EQ(classify_lower_frame(span(plain), true), PtpFrameVerdict::kRefusedPlain);
  EXPECT_EQ(classify_lower_frame(span(secure), true), PtpFrameVerdict::kNotPtp);  // to the SecY
  EXPECT_EQ(classify_lower_frame(span(ip), true), PtpFrameVerdict::kNotPtp);
  EXPECT_EQ(classify_verified_frame(span(plain), true), PtpFrameVerdict::kToPort);
  EXPECT_EQ(classify_verified_frame(span(ip), true), PtpFrameVerdict::kNotPtp);  // to the TAP
  EXPECT_EQ(classify_verified_frame(span(eth(kUnicast, 0x88F7)), true), PtpFrameVerdict::kRefusedDestination);
}

TEST(LinkPtpClassify, UnprotectedAcceptsOnlyPlainGptpToTheGroup) {
  const auto plain = eth(kGroup, 0x88F7);
  EXPECT_EQ(classify_lower_frame(span(plain), false), PtpFrameVerdict::kToPort);
  EXPECT_EQ(classify_lower_frame(span(eth(kUnicast, 0x88F7)), false), PtpFrameVerdict::kRefusedDestination);
  EXPECT_EQ(classify_lower_frame(span(eth(kGroup, 0x88E5)), false), PtpFrameVerdict::kNotPtp);
  // gPTP that came inside MACsec is not this link's form: refused, not delivered to the TAP.
  EXPECT_EQ(classify_verified_frame(span(plain), false), PtpFrameVerdict::kRefusedProtected);
  EXPECT_EQ(classify_verified_frame(span(eth(kUnicast, 0x0806)), false), PtpFrameVerdict::kNotPtp);
}

TEST(LinkPtpClassify, TaggedAndShortFramesAreNotGptp) {
  // 802.1AS frames are untagged; a C-tagged 0x88F7 is not taken for gPTP
  // (the SecY then refuses it as not MACsec).
  auto tagged = eth(kGroup, 0x8100);
  tagged[16] = 0x88;
  tagged[17] = 0xF7;
  EXPECT_EQ(classify_lower_frame(span(tagged), true), PtpFrameVerdict::kNotPtp);
  EXPECT_EQ(classify_lower_frame(span(tagged), false), PtpFrameVerdict::kNotPtp);
  const std::vector<std::uint8_t> runt(13, 0x88);
  EXPECT_EQ(classify_lower_frame(span(runt), false), PtpFrameVerdict::kNotPtp);
  EXPECT_EQ(classify_verified_frame(span(runt), true), PtpFrameVerdict::kNotPtp);
  EXPECT_STREQ(to_string(PtpFrameVerdict::kRefusedPlain), "refused_plain");
}

// ---- the --ptp file ----

std::string error_of(const std::string& text) {
  try {
    (void)parse_link_ptp_config_text(text);
  } catch (const LinkConfigError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(LinkPtpConfig, DefaultsAreProtectedGptp) {
  const LinkPtpConfig c = parse_link_ptp_config_text("{}");
  EXPECT_TRUE(c.protect);
  EXPECT_EQ(c.system.profile, ptp::Profile::kGptp);
  EXPECT_EQ(c.system.role, ptp::Role::kAuto);
  EXPECT_EQ(c.system.log_sync_interval, -3);
  EXPECT_EQ(c.system.pdelay.neighbor_prop_delay_thresh_ns, 800);
  EXPECT_EQ(c.tx_timestamp_timeout_ms, 50);
  EXPECT_FALSE(c.software_servo);
  EXPECT_NE(describe(c).find("protected"), std::string::npos);
}

TEST(LinkPtpConfig, ParsesEveryMember) {
  const LinkPtpConfig c = parse_link_ptp_config_text(
      R"({"protect": false, "profile": "automotive", "role": "slave", "domain": 3, "priority1": 10,
          "priority2": 20, "log_sync_interval": -4, "log_announce_interval": 1, "log_pdelay_interval": 2,
          "neighbor_prop_delay_thresh_ns": 100000, "minor_version": 0, "servo": "sw",
          "interval_request": true, "offset_threshold_ns": 5000, "tx_timestamp_timeout_ms": 20})");
  EXPECT_FALSE(c.protect);
  EXPECT_EQ(c.system.profile, ptp::Profile::kAutomotive);
  EXPECT_EQ(c.system.role, ptp::Role::kSlave);
  EXPECT_EQ(c.system.domain, 3);
  EXPECT_EQ(c.system.priority1, 10);
  EXPECT_EQ(c.system.priority2, 20);
  EXPECT_EQ(c.system.log_sync_interval, -4);
  EXPECT_EQ(c.system.log_announce_interval, 1);
  EXPECT_EQ(c.system.pdelay.log_interval, 2);
  EXPECT_EQ(c.system.pdelay.neighbor_prop_delay_thresh_ns, 100000);
  EXPECT_EQ(c.system.minor_version, 0);
  EXPECT_TRUE(c.software_servo);
  EXPECT_DOUBLE_EQ(c.system.servo.kp_scale, ptp::software_timestamp_servo().kp_scale);
  EXPECT_DOUBLE_EQ(c.system.servo.step_threshold_ns, 1e9);  // automotive-slave.cfg's step_threshold
  EXPECT_TRUE(c.system.interval_request);
  EXPECT_DOUBLE_EQ(c.system.offset_threshold_ns, 5000);
  EXPECT_EQ(c.tx_timestamp_timeout_ms, 20);
  EXPECT_NE(describe(c).find("unprotected"), std::string::npos);
}

TEST(LinkPtpConfig, EveryErrorNamesItsField) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  // A number beyond a double is nlohmann's out_of_range, not a parse_error
  // (fuzz campaign finding, fuzz/corpus/macsec_link_ptp/regress_number_overflow).
  EXPECT_NE(error_of(R"({"sync_interval_log": 3333333E33333333333333333333})").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(error_of("[]"), "/: expected an object");
  EXPECT_EQ(error_of(R"({"protected": true})"), "/protected: unknown member");
  EXPECT_EQ(error_of(R"({"protect": 1})"), "/protect: expected true or false");
  EXPECT_EQ(error_of(R"({"profile": "802.1AS"})"), "/profile: '802.1AS' is neither \"gptp\" nor \"automotive\"");
  EXPECT_EQ(error_of(R"({"profile": 1})"), "/profile: expected a string");
  EXPECT_EQ(error_of(R"({"role": "master"})"), "/role: 'master' is not \"gm\", \"slave\" or \"auto\"");
  EXPECT_EQ(error_of(R"({"profile": "automotive"})").rfind("/role: required", 0), 0u);
  EXPECT_EQ(error_of(R"({"profile": "automotive", "role": "auto"})").rfind("/role: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"domain": 128})").rfind("/domain: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"domain": -1})").rfind("/domain: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"priority1": 256})").rfind("/priority1: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"priority2": "x"})"), "/priority2: expected an integer");
  EXPECT_EQ(error_of(R"({"log_sync_interval": 9})").rfind("/log_sync_interval: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"log_announce_interval": -9})").rfind("/log_announce_interval: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"log_pdelay_interval": 1.5})"), "/log_pdelay_interval: expected an integer");
  EXPECT_EQ(error_of(R"({"neighbor_prop_delay_thresh_ns": 0})").rfind("/neighbor_prop_delay_thresh_ns: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"minor_version": 2})").rfind("/minor_version: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"servo": "pid"})"), "/servo: 'pid' is neither \"hw\" nor \"sw\"");
  EXPECT_EQ(error_of(R"({"interval_request": true})").rfind("/interval_request: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"offset_threshold_ns": 0})").rfind("/offset_threshold_ns: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"tx_timestamp_timeout_ms": 1001})").rfind("/tx_timestamp_timeout_ms: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"tx_timestamp_timeout_ms": 18446744073709551615})").rfind("/tx_timestamp_timeout_ms: ", 0),
            0u);
}

TEST(LinkPtpConfig, LoadNamesTheFile) {
  try {
    (void)load_link_ptp_config("/nonexistent/ptp.json");
    FAIL() << "a missing file was accepted";
  } catch (const LinkConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ptp.json"), std::string::npos);
  }
}

// ---- the shaper's clock ----

TEST(SyncedShaperClock, FollowsTheDisciplinedClock) {
  std::int64_t local = 1'000'000;
  ptp::SyncedClock synced(500);  // synced = local + 500 ns at 0 ppb
  const SyncedShaperClock clock(synced, [&] { return local; });
  EXPECT_EQ(clock.now_ns(), 1'000'500);
  synced.set_frequency_ppb(1000, local);  // the servo: 1 ppm fast from here
  local += 1'000'000'000;
  EXPECT_EQ(clock.now_ns(), 1'000'500 + 1'000'000'000 + 1000);
  synced.step(-250'000);
  EXPECT_EQ(clock.now_ns(), 1'000'500 + 1'000'000'000 + 1000 - 250'000);
}

class FakeTimer final : public tsn::ShaperTimer {
 public:
  void arm(std::int64_t at_ns) override {
    armed = true;
    at = at_ns;
  }
  void disarm() override { armed = false; }
  bool armed = false;
  std::int64_t at = 0;
};

constexpr std::int64_t kUs = 1000;

// ST = class 1 in [0, 300 us), BE = class 0 in [300 us, 1 ms) of each 1 ms
// cycle from 0: a 100 Mbit/s port whose schedule is on gPTP time.
struct ShaperBed {
  ShaperBed()
      : synced(400 * kUs),  // this node's gPTP time is 400 us ahead of its local time line
        clock(synced, [this] { return local; }),
        driver(tsn::EgressPort(port_config(), schedule()), clock, timer,
               [this](ByteSpan, int c) {
                 sent.push_back({c, clock.now_ns()});
                 return true;
               }) {}
  static tsn::PortConfig port_config() {
    tsn::PortConfig c;
    c.link_bps = 100'000'000;
    c.num_classes = 2;
    return c;
  }
  static tsn::GateSchedule schedule() {
    tsn::GateControlList g;
    g.entries = {{0x02, 300 * kUs}, {0x01, 700 * kUs}};
    tsn::GateSchedule s;
    s.set_admin(g, 0);
    return s;
  }
  std::int64_t local = 5'000'000'000;
  ptp::SyncedClock synced;
  SyncedShaperClock clock;
  FakeTimer timer;
  struct Sent {
    int traffic_class;
    std::int64_t at;  // gPTP time
  };
  std::vector<Sent> sent;
  tsn::ShaperDriver driver;
};

TEST(SyncedShaperClock, GatesOpenOnGptpTime) {
  ShaperBed b;
  const std::vector<std::uint8_t> frame(200, 1);
  // Local 5 s is gPTP 5 s + 400 us: the BE window, so an ST frame waits for
  // the next ST window at gPTP 5.001 s (local 5 s + 600 us), where a shaper
  // on the local time line would have sent it at once.
  ASSERT_EQ(b.driver.submit(ByteSpan(frame.data(), frame.size()), 1), tsn::EnqueueResult::kQueued);
  EXPECT_TRUE(b.sent.empty());
  ASSERT_TRUE(b.timer.armed);
  EXPECT_EQ(b.timer.at, 5'001'000'000);
  b.local += 600 * kUs;
  b.driver.service();
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(b.sent[0].traffic_class, 1);
  EXPECT_EQ(b.sent[0].at, 5'001'000'000);
}

TEST(SyncedShaperClock, AServoStepDoesNotStallTheShaper) {
  ShaperBed b;
  const std::vector<std::uint8_t> big(1500, 1);
  b.local += 600 * kUs;  // gPTP 5.001 s: an ST window
  ASSERT_EQ(b.driver.submit(ByteSpan(big.data(), big.size()), 1), tsn::EnqueueResult::kQueued);
  ASSERT_EQ(b.sent.size(), 1u);  // on the wire for ~123 us of gPTP time
  // The servo steps the clock back by 1 s (e.g. the grandmaster changed).
  b.synced.step(-1e9);
  ASSERT_EQ(b.driver.submit(ByteSpan(big.data(), big.size()), 1), tsn::EnqueueResult::kQueued);
  // Unaware of the step, the model waits for the old wire end, 1 s away.
  EXPECT_EQ(b.sent.size(), 1u);
  ASSERT_TRUE(b.timer.armed);
  EXPECT_GT(b.timer.at - b.clock.now_ns(), 900'000'000);
  // Told (as LinkPtp tells the link after each kJump), it restarts at the new
  // time: the ST gate is open (gPTP 4.001 s), so the frame leaves now.
  b.driver.clock_stepped();
  ASSERT_EQ(b.sent.size(), 2u);
  EXPECT_EQ(b.sent[1].at, 4'001'000'000);
  EXPECT_EQ(b.driver.counters().clock_steps, 1u);
}

}  // namespace
}  // namespace layersec::macsec
