// The netns node's spec and report JSON (netns_node_spec.h): round trips,
// defaults and errors that name the field. No root needed.
#include "layersec/harness/netns_node_spec.h"

#include <gtest/gtest.h>

#include <string>

#include "layersec/harness/netns_node_spec_test_support.h"

namespace layersec::harness {
namespace {

using namespace netns_test;  // NOLINT(google-build-using-namespace): test support

TEST(NetnsNodeJson, SpecRoundTrip) {
  const NetnsNodeSpec s = sample_spec();
  const json j = to_json(s);
  auto back = parse_spec(j);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(to_json(*back), j);
  EXPECT_EQ(back->path, LinkPath::kRaw);
  EXPECT_EQ(back->security, Security::kHybrid);
  EXPECT_EQ(back->keys, KeyDistribution::kPsk);
  EXPECT_EQ(back->peers.size(), 2u);
  EXPECT_EQ(back->peers[1].mac, s.peers[1].mac);
  EXPECT_EQ(back->pacing, Duration::microseconds(250));
  EXPECT_EQ(back->rate_duration, Duration::milliseconds(1500));
  EXPECT_EQ(back->ready_timeout, Duration::seconds(9));
  EXPECT_DOUBLE_EQ(back->rate_hz, 5000);
}

TEST(NetnsNodeJson, SpecDefaultsForOptionalFields) {
  json j{{"role", "publisher"}, {"ip", "10.77.0.1"}, {"mac", "02:00:00:00:00:01"}, {"publisher_ip", "10.77.0.1"}};
  auto s = parse_spec(j);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->path, LinkPath::kKernel);
  EXPECT_EQ(s->security, Security::kNone);
  EXPECT_EQ(s->iterations, 500);
  EXPECT_EQ(s->interface, "eth0");
}

// Every error names the field it is about.
TEST(NetnsNodeJson, SpecErrorsNameTheField) {
  const json good = to_json(sample_spec());
  struct Case {
    const char* field;
    json value;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"role", "router", "role"},
      {"role", nullptr, "role: missing"},
      {"index", "two", "index"},
      {"subscribers", 0, "subscribers"},
      {"path", "dpdk", "path"},
      {"security", "tls", "security"},
      {"keys", "group-mode-b", "keys"},
      {"multicast", 1, "multicast"},
      {"payload_bytes", 8, "payload_bytes"},
      {"ip", "10.77.0", "ip"},
      {"mac", "02:00", "mac"},
      {"publisher_ip", nullptr, "publisher_ip: missing"},
      {"mode", "burst", "mode"},
      {"timeout_ns", 0, "timeout_ns"},
      {"pacing_ns", -1, "pacing_ns"},
      {"rate_hz", "fast", "rate_hz"},
      {"secoc_key_file", "", "secoc_key_file"},
      {"macsec_key_file", "", "macsec_key_file"},
  };
  for (const auto& c : cases) {
    json j = good;
    if (c.value.is_null()) {
      j.erase(c.field);
    } else {
      j[c.field] = c.value;
    }
    auto s = parse_spec(j);
    ASSERT_FALSE(s.ok()) << c.field;
    EXPECT_NE(s.error().find(c.expect), std::string::npos) << c.field << ": " << s.error();
  }
  json j = good;
  j["peers"][1]["mac"] = "zz";
  auto s = parse_spec(j);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("peers[1].mac"), std::string::npos) << s.error();
  j = good;
  j["keys"] = "none";  // secured without keys
  s = parse_spec(j);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("keys"), std::string::npos) << s.error();
  s = parse_spec(json::array());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("object"), std::string::npos) << s.error();
}

TEST(NetnsNodeJson, ReportRoundTripAndErrors) {
  NetnsNodeReport r;
  r.role = "publisher";
  r.ok = true;
  r.half_rtt_ns = {1000, 2000};
  r.one_way_ns = {900, 1900};
  r.iterations_completed = 2;
  r.timeouts = 1;
  r.sent = 3;
  r.achieved_rate_hz = 4999.5;
  r.secoc_protect_ns = 11;
  r.secoc_verify_ns = 12;
  r.secoc_protected = 2;
  r.secoc_verified = 2;
  r.cpu_ns = 123456;
  r.wall_ns = 654321;
  r.rss_kib = 4096;
  r.security_rejections = 0;
  r.establishment_ns = 42'000'000;
  r.transport = {{"path", "kernel"}};
  r.ready_probes = 2;
  r.ready_ns = 77;
  const json j = to_json(r);
  auto back = parse_report(j);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(to_json(*back), j);
  EXPECT_EQ(back->half_rtt_ns, r.half_rtt_ns);
  EXPECT_EQ(back->establishment_ns, r.establishment_ns);

  NetnsNodeReport empty;
  empty.role = "subscriber";
  auto e = parse_report(to_json(empty));
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_FALSE(e->establishment_ns.has_value());
  EXPECT_FALSE(e->ready_ns.has_value());

  json bad = j;
  bad["half_rtt_ns"] = json::array({1, "x"});
  auto b = parse_report(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("half_rtt_ns"), std::string::npos) << b.error();
  bad = j;
  bad.erase("ok");
  b = parse_report(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("ok: missing"), std::string::npos) << b.error();
  bad = j;
  bad["cpu_ns"] = -5;
  b = parse_report(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("cpu_ns"), std::string::npos) << b.error();
}

}  // namespace
}  // namespace layersec::harness
