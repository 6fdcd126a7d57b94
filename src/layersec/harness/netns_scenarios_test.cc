#include "layersec/harness/netns_scenarios.h"

#include "layersec/harness/netns_scenario_rows.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "layersec/base/keyfile.h"
#include "layersec/harness/scenario.h"
#include "layersec/kex/pki.h"

namespace layersec::harness {
namespace {

namespace fs = std::filesystem;

// A scratch directory removed with the fixture.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "layersec_netns_scen_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<net::NetnsNode> fake_nodes(std::size_t n) {
  std::vector<net::NetnsNode> nodes;
  for (std::size_t i = 0; i < n; ++i) {
    nodes.push_back({"lsbtestn" + std::to_string(i), "eth0",
                     net::Ipv4Address::from_octets(10, 77, 0, static_cast<std::uint8_t>(i + 1)),
                     net::MacAddress::local(static_cast<std::uint32_t>(0x100 + i))});
  }
  return nodes;
}

unsigned file_mode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0xFFFF;
  return st.st_mode & 0777;
}

const NetnsScenario& by_name(const std::vector<NetnsScenario>& v, const std::string& name) {
  auto it = std::find_if(v.begin(), v.end(), [&](const NetnsScenario& s) { return s.name == name; });
  if (it == v.end()) throw std::runtime_error("no scenario " + name);
  return *it;
}

NetnsNodeReport report(const std::string& role, int index) {
  NetnsNodeReport r;
  r.role = role;
  r.index = index;
  r.ok = true;
  return r;
}

TEST(NetnsScenarios, PathNames) {
  EXPECT_EQ(netns_topology_name(LinkPath::kKernel), "netns-kernel");
  EXPECT_EQ(netns_topology_name(LinkPath::kRaw), "netns-raw");
  EXPECT_EQ(link_path_from_string("kernel"), LinkPath::kKernel);
  EXPECT_EQ(link_path_from_string("raw"), LinkPath::kRaw);
  EXPECT_FALSE(link_path_from_string("sim").has_value());
  EXPECT_FALSE(link_path_from_string("").has_value());
}

TEST(NetnsScenarios, PaperRowsMatchTheSimNamesWithThePathSuffix) {
  BenchScenarioOptions o;
  o.iterations = 50;
  const auto raw = netns_closed_loop_scenarios(o, LinkPath::kRaw);
  const auto sim = paper_scenario_specs(50, 1);
  ASSERT_EQ(sim.size(), 10u);
  for (std::size_t i = 0; i < sim.size(); ++i) {
    SCOPED_TRACE(sim[i].name);
    EXPECT_EQ(raw[i].name, sim[i].name + "@raw");
    EXPECT_EQ(raw[i].paper_id, sim[i].paper_id);
    EXPECT_EQ(raw[i].series, "paper-scenarios");
    EXPECT_EQ(raw[i].security, sim[i].testbed.security);
    EXPECT_EQ(raw[i].keys, sim[i].testbed.keys);
    EXPECT_EQ(raw[i].subscribers, sim[i].testbed.subscribers);
    EXPECT_EQ(raw[i].multicast, sim[i].testbed.multicast);
    EXPECT_EQ(raw[i].path, LinkPath::kRaw);
    EXPECT_EQ(raw[i].iterations, 50);
    EXPECT_EQ(raw[i].baseline, std::string(raw[i].multicast ? "unsecured-multicast" : "unsecured-unicast") + "@raw");
  }
  // Every name is unique and every baseline names a row of the same path.
  std::set<std::string> names;
  for (const auto& s : raw) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_NE(s.name.find("@raw"), std::string::npos);
  }
  for (const auto& s : raw) EXPECT_TRUE(names.count(s.baseline)) << s.name << " -> " << s.baseline;
}

TEST(NetnsScenarios, PayloadAndGroupSweeps) {
  BenchScenarioOptions o;
  const auto k = netns_closed_loop_scenarios(o, LinkPath::kKernel);
  // 10 paper rows + 5 payloads x 2 + 4 group sizes x 2.
  EXPECT_EQ(k.size(), 10u + 10u + 8u);
  const auto& p = by_name(k, "payload-1400-hybrid-psk@kernel");
  EXPECT_EQ(p.payload_bytes, 1400u);
  EXPECT_EQ(p.subscribers, 2);
  EXPECT_TRUE(p.multicast);
  EXPECT_EQ(p.security, Security::kHybrid);
  EXPECT_EQ(p.keys, KeyDistribution::kPsk);
  EXPECT_EQ(p.baseline, "payload-1400-unsecured@kernel");
  const auto& g = by_name(k, "group-n16-hybrid-psk@kernel");
  EXPECT_EQ(g.series, "group-size");
  EXPECT_EQ(g.subscribers, 16);
  EXPECT_EQ(g.baseline, "group-n16-unsecured@kernel");

  o.quick = true;
  EXPECT_EQ(netns_group_sizes(o), (std::vector<int>{2, 4}));
  EXPECT_EQ(netns_closed_loop_scenarios(o, LinkPath::kKernel).size(), 10u + 4u + 4u);
  o.group_sizes = {2, 32};
  EXPECT_EQ(netns_group_sizes(o), (std::vector<int>{2, 32}));
  o.quick = false;
  o.group_sizes.clear();
  EXPECT_EQ(netns_group_sizes(o), (std::vector<int>{2, 4, 8, 16}));
}

TEST(NetnsScenarios, RateSteps) {
  EXPECT_EQ(netns_rate_steps(false), (std::vector<double>{1000, 2000, 5000, 10000, 20000, 50000, 100000}));
  EXPECT_EQ(netns_rate_steps(true), (std::vector<double>{1000, 5000}));
  BenchScenarioOptions o;
  const NetnsScenario s = netns_rate_scenario(o, LinkPath::kRaw, Security::kHybrid, 5000);
  EXPECT_EQ(s.name, "rate-5000-hybrid-psk@raw");
  EXPECT_EQ(s.baseline, "rate-5000-unsecured@raw");
  EXPECT_EQ(s.series, "rate");
  EXPECT_EQ(s.mode, "rate");
  EXPECT_EQ(s.subscribers, 2);
  EXPECT_TRUE(s.multicast);
  EXPECT_EQ(s.keys, KeyDistribution::kPsk);
  EXPECT_EQ(s.rate_duration, Duration::seconds(1));
  o.quick = true;
  const NetnsScenario q = netns_rate_scenario(o, LinkPath::kKernel, Security::kNone, 1000);
  EXPECT_EQ(q.name, "rate-1000-unsecured@kernel");
  EXPECT_EQ(q.keys, KeyDistribution::kNone);
  EXPECT_EQ(q.rate_duration, Duration::milliseconds(200));
}

TEST(NetnsScenarios, PskFilesAre0600WithTheRightSizes) {
  TempDir dir;
  const NetnsKeyFiles f = write_netns_psk_files(dir.path());
  EXPECT_EQ(file_mode(f.secoc_key), 0600u);
  EXPECT_EQ(file_mode(f.macsec_key), 0600u);
  auto psk = load_key_file(f.secoc_key, {KeyFileFormat::kHex, 32});
  ASSERT_TRUE(psk.ok());
  auto sak = load_key_file(f.macsec_key, {KeyFileFormat::kHex, 16});
  ASSERT_TRUE(sak.ok());
  EXPECT_EQ(fs::file_size(f.secoc_key), 65u);  // hex and a newline (base/keyfile.h)
  EXPECT_EQ(fs::file_size(f.macsec_key), 33u);
}

TEST(NetnsScenarios, RsaFilesLoadAndKeysAre0600) {
  TempDir dir;
  NetnsKeyFiles f = write_netns_psk_files(dir.path());
  write_netns_rsa_files(dir.path(), 2, f);
  ASSERT_EQ(f.certs.size(), 3u);
  ASSERT_EQ(f.keys.size(), 3u);
  auto ca = kex::Certificate::load(f.ca_cert);
  ASSERT_TRUE(ca.ok());
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca.value(), 1));
  ASSERT_TRUE(trust.ok());
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(f.certs[i]);
    EXPECT_EQ(file_mode(f.keys[i]), 0600u);
    auto cert = kex::Certificate::load(f.certs[i]);
    ASSERT_TRUE(cert.ok());
    auto key = kex::PrivateKey::load(f.keys[i]);
    ASSERT_TRUE(key.ok());
    EXPECT_EQ(key->algorithm(), kex::KeyAlgorithm::kRsa2048);
    EXPECT_EQ(cert->public_key().der(), key->public_key().der());
    for (std::uint16_t service : netns_certificate_services()) {
      EXPECT_TRUE(trust->verify_for_service(*cert, static_cast<std::int64_t>(std::time(nullptr)), service).ok());
    }
  }
}

TEST(NetnsScenarios, NodeSpecsCarryAddressesPeersAndKeys) {
  BenchScenarioOptions o;
  o.iterations = 77;
  const auto scen = netns_closed_loop_scenarios(o, LinkPath::kRaw);
  const NetnsScenario& s = by_name(scen, "group-n4-hybrid-psk@raw");
  NetnsKeyFiles keys;
  keys.secoc_key = "/k/secoc";
  keys.macsec_key = "/k/sak";
  const auto nodes = fake_nodes(5);
  const auto specs = netns_node_specs(s, nodes, keys, "/w");
  ASSERT_EQ(specs.size(), 5u);
  std::set<std::string> reports;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const NetnsNodeSpec& sp = specs[k];
    SCOPED_TRACE(k);
    EXPECT_EQ(sp.role, k == 0 ? "publisher" : "subscriber");
    EXPECT_EQ(sp.index, k == 0 ? 0 : static_cast<int>(k) - 1);
    EXPECT_EQ(sp.subscribers, 4);
    EXPECT_EQ(sp.path, LinkPath::kRaw);
    EXPECT_EQ(sp.security, Security::kHybrid);
    EXPECT_EQ(sp.keys, KeyDistribution::kPsk);
    EXPECT_TRUE(sp.multicast);
    EXPECT_EQ(sp.ip, nodes[k].ip);
    EXPECT_EQ(sp.mac, nodes[k].mac);
    EXPECT_EQ(sp.interface, "eth0");
    EXPECT_EQ(sp.publisher_ip, nodes[0].ip);
    ASSERT_EQ(sp.peers.size(), 4u);
    for (const auto& peer : sp.peers) EXPECT_NE(peer.ip, sp.ip);
    EXPECT_EQ(sp.peers.front().name, k == 0 ? "subscriber-0" : "publisher");
    EXPECT_EQ(sp.secoc_key_file, "/k/secoc");
    EXPECT_EQ(sp.macsec_key_file, "/k/sak");
    EXPECT_TRUE(sp.cert_file.empty());
    EXPECT_EQ(sp.iterations, 77);
    EXPECT_EQ(sp.mode, "closed-loop");
    EXPECT_EQ(fs::path(sp.report_file).parent_path(), fs::path("/w"));
    reports.insert(sp.report_file);
  }
  EXPECT_EQ(reports.size(), 5u);

  // Unsecured: no key files at all.
  const auto plain = netns_node_specs(by_name(scen, "unsecured-unicast@raw"), fake_nodes(2), keys, "/w");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_TRUE(plain[1].secoc_key_file.empty());
  EXPECT_TRUE(plain[1].macsec_key_file.empty());
  EXPECT_EQ(plain[1].keys, KeyDistribution::kNone);

  // Wrong node count, missing keys.
  EXPECT_THROW((void)netns_node_specs(s, fake_nodes(3), keys, "/w"), std::invalid_argument);
  EXPECT_THROW((void)netns_node_specs(s, nodes, NetnsKeyFiles{}, "/w"), std::invalid_argument);
  EXPECT_THROW((void)netns_node_specs(by_name(scen, "hybrid-rsa-multicast@raw"), fake_nodes(3), keys, "/w"),
               std::invalid_argument);
}

TEST(NetnsScenarios, RsaSpecsUseEachNodesOwnIdentity) {
  BenchScenarioOptions o;
  const auto scen = netns_closed_loop_scenarios(o, LinkPath::kKernel);
  NetnsKeyFiles keys;
  keys.macsec_key = "/k/sak";
  keys.ca_cert = "/k/ca.pem";
  keys.certs = {"/k/p.pem", "/k/s0.pem", "/k/s1.pem"};
  keys.keys = {"/k/p.key", "/k/s0.key", "/k/s1.key"};
  const auto specs = netns_node_specs(by_name(scen, "hybrid-rsa-multicast@kernel"), fake_nodes(3), keys, "/w");
  ASSERT_EQ(specs.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(specs[k].keys, KeyDistribution::kRsaModeB);
    EXPECT_EQ(specs[k].ca_cert_file, "/k/ca.pem");
    EXPECT_EQ(specs[k].cert_file, keys.certs[k]);
    EXPECT_EQ(specs[k].key_file, keys.keys[k]);
    EXPECT_TRUE(specs[k].secoc_key_file.empty());  // the group key comes from Mode B
    EXPECT_EQ(specs[k].macsec_key_file, "/k/sak");
  }
}

TEST(NetnsScenarios, ClosedLoopRowFromReports) {
  BenchScenarioOptions o;
  o.iterations = 4;
  const NetnsScenario s = by_name(netns_closed_loop_scenarios(o, LinkPath::kKernel), "secoc-rsa-multicast@kernel");
  std::vector<NetnsNodeReport> reps = {report("publisher", 0), report("subscriber", 0), report("subscriber", 1)};
  reps[0].half_rtt_ns = {10000, 20000, 30000, 40000};
  reps[0].one_way_ns = {8000, 16000, 24000, 32000};
  reps[0].iterations_completed = 4;
  reps[0].secoc_protect_ns = 4000;
  reps[0].secoc_verify_ns = 8000;
  reps[0].secoc_protected = 4;
  reps[0].secoc_verified = 8;
  reps[0].cpu_ns = 2'000'000;
  reps[0].wall_ns = 8'000'000;
  reps[0].rss_kib = 5120;
  reps[0].establishment_ns = 3'500'000;
  for (int i = 1; i <= 2; ++i) {
    reps[i].secoc_protect_ns = 2000;
    reps[i].secoc_verify_ns = 2000;
    reps[i].secoc_protected = 4;
    reps[i].secoc_verified = 4;
    reps[i].cpu_ns = 1'000'000;
    reps[i].security_rejections = static_cast<std::uint64_t>(i);
  }
  const ScenarioResult r = netns_result_row(s, reps);
  EXPECT_FALSE(netns_row_failed(r)) << r.notes;
  EXPECT_EQ(r.topology, "netns-kernel");
  EXPECT_EQ(r.paper_id, "2b-B");
  EXPECT_EQ(r.security, "secoc");
  EXPECT_EQ(r.key_distribution, "rsa-mode-b");
  EXPECT_EQ(r.delivery, "multicast");
  EXPECT_EQ(r.subscribers, 2);
  EXPECT_EQ(r.iterations, 4);
  EXPECT_EQ(r.latency.count, 4u);
  EXPECT_DOUBLE_EQ(r.latency.mean, 25.0);
  EXPECT_DOUBLE_EQ(r.latency.min, 10.0);
  EXPECT_DOUBLE_EQ(r.one_way.max, 32.0);
  EXPECT_EQ(r.samples_us, (std::vector<double>{10, 20, 30, 40}));
  // (12000 + 2 x 4000) ns over 4 iterations = 5 us; (12 + 2 x 8) ops / 4 = 7.
  EXPECT_DOUBLE_EQ(r.secoc_path_us, 5.0);
  EXPECT_EQ(r.secoc_ops_per_iteration, 7u);
  EXPECT_DOUBLE_EQ(r.cpu_pct, 25.0);                // publisher: 2 ms CPU over 8 ms wall
  EXPECT_DOUBLE_EQ(r.cpu_us_per_iteration, 1000.0);  // 4 ms of every node's CPU over 4 iterations
  EXPECT_EQ(r.rss_kib, 5120u);
  ASSERT_TRUE(r.establishment_ms.has_value());
  EXPECT_DOUBLE_EQ(*r.establishment_ms, 3.5);
  EXPECT_EQ(r.security_rejections, 3u);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_NE(r.notes.find("CPU %"), std::string::npos);
}

TEST(NetnsScenarios, FailedNodesMarkTheRow) {
  BenchScenarioOptions o;
  const NetnsScenario s = by_name(netns_closed_loop_scenarios(o, LinkPath::kRaw), "hybrid-psk-multicast@raw");
  std::vector<NetnsNodeReport> reps = {report("publisher", 0), report("subscriber", 0), report("subscriber", 1)};
  reps[2].ok = false;
  reps[2].error = "cannot open AF_PACKET socket";
  const ScenarioResult r = netns_result_row(s, reps);
  EXPECT_TRUE(netns_row_failed(r));
  EXPECT_NE(r.notes.find("subscriber-1: cannot open AF_PACKET socket"), std::string::npos) << r.notes;

  const ScenarioResult t = netns_result_row(s, {report("publisher", 0)}, "the publisher did not finish within 50 s");
  EXPECT_TRUE(netns_row_failed(t));
  EXPECT_NE(t.notes.find("did not finish"), std::string::npos);

  const ScenarioResult none = netns_result_row(s, {});
  EXPECT_TRUE(netns_row_failed(none));
  EXPECT_EQ(none.latency.count, 0u);
}

std::vector<NetnsNodeReport> rate_reports(std::uint64_t sent, double achieved, std::vector<std::int64_t> one_way_ns,
                                          std::uint64_t received_each, std::uint64_t lost_each) {
  std::vector<NetnsNodeReport> reps = {report("publisher", 0), report("subscriber", 0), report("subscriber", 1)};
  reps[0].sent = sent;
  reps[0].achieved_rate_hz = achieved;
  for (int i = 1; i <= 2; ++i) {
    reps[i].one_way_ns = one_way_ns;
    reps[i].received = received_each;
    reps[i].lost = lost_each;
  }
  return reps;
}

TEST(NetnsScenarios, SaturationJudgement) {
  BenchScenarioOptions o;
  const NetnsScenario s = netns_rate_scenario(o, LinkPath::kKernel, Security::kNone, 10000);
  const std::vector<std::int64_t> fast(100, 50'000);  // 50 us

  auto ok = judge_rate(s, rate_reports(10000, 9990, fast, 10000, 0));
  EXPECT_TRUE(ok.ok) << ok.reason;
  EXPECT_DOUBLE_EQ(ok.loss, 0.0);
  EXPECT_DOUBLE_EQ(ok.p99_us, 50.0);

  // p99 at or above 1 ms.
  std::vector<std::int64_t> slow = fast;
  for (int i = 0; i < 5; ++i) slow[static_cast<std::size_t>(i)] = 2'000'000;
  auto late = judge_rate(s, rate_reports(10000, 10000, slow, 10000, 0));
  EXPECT_FALSE(late.ok);
  EXPECT_NE(late.reason.find("p99"), std::string::npos);

  // Loss: 0.1 % is allowed, more is not; trailing losses (no gap seen) count too.
  EXPECT_TRUE(judge_rate(s, rate_reports(10000, 10000, fast, 9990, 10)).ok);
  auto lossy = judge_rate(s, rate_reports(10000, 10000, fast, 9950, 50));
  EXPECT_FALSE(lossy.ok);
  EXPECT_NEAR(lossy.loss, 0.005, 1e-12);
  auto trailing = judge_rate(s, rate_reports(10000, 10000, fast, 9900, 0));
  EXPECT_FALSE(trailing.ok);
  EXPECT_NEAR(trailing.loss, 0.01, 1e-12);

  // The achieved rate must be within 5 % of the target.
  EXPECT_TRUE(judge_rate(s, rate_reports(10000, 9600, fast, 10000, 0)).ok);
  auto slow_pub = judge_rate(s, rate_reports(9000, 9000, fast, 9000, 0));
  EXPECT_FALSE(slow_pub.ok);
  EXPECT_NE(slow_pub.reason.find("achieved"), std::string::npos);

  // Nothing received; a failed node.
  EXPECT_FALSE(judge_rate(s, rate_reports(10000, 10000, {}, 0, 0)).ok);
  auto reps = rate_reports(10000, 10000, fast, 10000, 0);
  reps[1].ok = false;
  EXPECT_FALSE(judge_rate(s, reps).ok);
  EXPECT_FALSE(judge_rate(s, {}).ok);
}

TEST(NetnsScenarios, RateRowUsesMergedOneWay) {
  BenchScenarioOptions o;
  const NetnsScenario s = netns_rate_scenario(o, LinkPath::kRaw, Security::kHybrid, 1000);
  auto reps = rate_reports(1000, 1000, {10'000, 30'000}, 1000, 0);
  reps[1].one_way_ns = {10'000, 30'000};
  reps[2].one_way_ns = {20'000, 40'000};
  const ScenarioResult r = netns_result_row(s, reps);
  EXPECT_FALSE(netns_row_failed(r)) << r.notes;
  EXPECT_EQ(r.series, "rate");
  EXPECT_EQ(r.iterations, 1000);
  EXPECT_EQ(r.latency.count, 4u);
  EXPECT_DOUBLE_EQ(r.latency.mean, 25.0);
  EXPECT_DOUBLE_EQ(r.one_way.mean, 25.0);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_NE(r.notes.find("within the saturation limits"), std::string::npos) << r.notes;
}

TEST(NetnsScenarios, BaselinesNeverCrossPaths) {
  BenchScenarioOptions o;
  o.quick = true;
  std::vector<NetnsScenario> scen;
  std::vector<ScenarioResult> rows;
  auto add = [&](const NetnsScenario& s, double p99_us) {
    std::vector<NetnsNodeReport> reps = {report("publisher", 0)};
    for (int i = 0; i < s.subscribers; ++i) reps.push_back(report("subscriber", i));
    reps[0].half_rtt_ns = {static_cast<std::int64_t>(p99_us * 1000), static_cast<std::int64_t>(p99_us * 1000)};
    reps[0].iterations_completed = 2;
    scen.push_back(s);
    rows.push_back(netns_result_row(s, reps));
  };
  const auto kernel = netns_closed_loop_scenarios(o, LinkPath::kKernel);
  const auto raw = netns_closed_loop_scenarios(o, LinkPath::kRaw);
  add(by_name(kernel, "unsecured-multicast@kernel"), 100);
  add(by_name(kernel, "hybrid-psk-multicast@kernel"), 110);
  // The raw path has no unsecured multicast row: its hybrid row stays without a baseline.
  add(by_name(raw, "hybrid-psk-multicast@raw"), 50);
  add(by_name(raw, "unsecured-unicast@raw"), 20);
  add(by_name(raw, "secoc-psk-unicast@raw"), 30);
  apply_netns_baselines(rows, scen);

  ASSERT_TRUE(rows[0].ratio_p99.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].ratio_p99, 1.0);
  ASSERT_TRUE(rows[1].ratio_p99.has_value());
  EXPECT_DOUBLE_EQ(*rows[1].ratio_p99, 1.1);
  EXPECT_DOUBLE_EQ(*rows[1].baseline_p99_us, 100.0);
  EXPECT_FALSE(rows[2].ratio_p99.has_value());
  EXPECT_FALSE(rows[2].baseline_p99_us.has_value());
  ASSERT_TRUE(rows[4].ratio_p99.has_value());
  EXPECT_DOUBLE_EQ(*rows[4].ratio_p99, 1.5);

  // A failed baseline row is not used.
  rows[0].notes = "FAILED: x";
  rows[1].ratio_p99.reset();
  apply_netns_baselines(rows, scen);
  EXPECT_FALSE(rows[1].ratio_p99.has_value());
}

TEST(NetnsScenarios, GoalVerdict) {
  auto summary = [](double p50, double p99) {
    Summary s;
    s.count = 100;
    s.p50 = p50;
    s.p99 = p99;
    return s;
  };
  EXPECT_EQ(netns_goal_verdict(summary(60, 110), summary(50, 100), 1.2), "met");
  EXPECT_EQ(netns_goal_verdict(summary(60, 120), summary(50, 100), 1.2), "met");
  EXPECT_EQ(netns_goal_verdict(summary(60, 121), summary(50, 100), 1.2), "not met");
  // A p99 decided by a few stalls proves nothing either way.
  const std::string noisy = netns_goal_verdict(summary(60, 110), summary(50, 2000), 1.2);
  EXPECT_EQ(noisy.rfind("inconclusive", 0), 0u) << noisy;
  EXPECT_NE(noisy.find("baseline p99/p50 = 40.0"), std::string::npos) << noisy;
  EXPECT_EQ(netns_goal_verdict(summary(60, 900), summary(50, 100), 1.2).rfind("inconclusive", 0), 0u);
  EXPECT_EQ(netns_goal_verdict(Summary{}, summary(50, 100), 1.2).rfind("inconclusive", 0), 0u);
}

}  // namespace
}  // namespace layersec::harness
