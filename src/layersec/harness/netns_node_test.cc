// netns_node: invalid specs and the namespace check (no root needed), then
// whole runs of a publisher and two subscribers, each on its own thread
// inside its own namespace of a star topology (root needed; skipped with the
// reason otherwise). Counts are small so every run ends in a few seconds.
#include "layersec/harness/netns_node.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/harness/netns_node_spec_test_support.h"
#include "layersec/kex/pki.h"
#include "layersec/net/netns.h"

namespace layersec::harness {
namespace {


using nlohmann::json;

using namespace netns_test;  // NOLINT(google-build-using-namespace): test support

TEST(NetnsNodeRun, InvalidSpecIsReportedNotThrown) {
  NetnsNodeSpec s = sample_spec();
  s.payload_bytes = 4;
  std::atomic<bool> stop{true};
  std::ostringstream err;
  const auto r = run_netns_node(s, stop, err);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("payload_bytes"), std::string::npos) << r.error;
  EXPECT_NE(err.str().find("payload_bytes"), std::string::npos);
}

// The node reconfigures its interface, so it refuses to run outside a named
// namespace (this test process runs in an unnamed one, the host's).
TEST(NetnsNodeRun, RefusesAnUnnamedNamespace) {
  NetnsNodeSpec s = sample_spec();
  s.report_file.clear();
  std::atomic<bool> stop{true};
  std::ostringstream err;
  const auto r = run_netns_node(s, stop, err);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("outside a named network namespace"), std::string::npos) << r.error;
}

// --- runs in namespaces ------------------------------------------------------------

#define REQUIRE_NETNS()                                    \
  do {                                                     \
    std::string reason;                                    \
    if (!net::netns_available(&reason)) GTEST_SKIP() << reason; \
  } while (0)

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/layersec-netns-node-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (!d) throw std::runtime_error("mkdtemp");
    path_ = d;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string write_random_key(const std::string& path, std::size_t n) {
  std::vector<std::uint8_t> k(n);
  EXPECT_TRUE(crypto::random_bytes(k).ok());
  EXPECT_TRUE(write_key_file_hex(path, k).ok()) << path;
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  return path;
}

struct StarRun {
  Security security = Security::kNone;
  KeyDistribution keys = KeyDistribution::kNone;
  LinkPath path = LinkPath::kKernel;
  bool multicast = true;
  std::string mode = "closed-loop";
  int iterations = 30;
  double rate_hz = 0;
  Duration ready_timeout = Duration::seconds(8);
  Duration timeout = Duration::milliseconds(500);
  bool wrong_secoc_key_on_subscriber_0 = false;
  bool wrong_sak_on_subscriber_0 = false;
};

struct StarResult {
  NetnsNodeReport publisher;
  std::vector<NetnsNodeReport> subscribers;
  std::vector<std::string> logs;
};

// Publisher on node 0, subscribers on nodes 1 and 2, one thread each inside
// the node's namespace; subscribers are stopped once the publisher is done.
StarResult run_star(const StarRun& o) {
  constexpr int kSubscribers = 2;
  TempDir dir;
  auto topo = net::NetnsTopology::star(kSubscribers + 1, "nn");
  const std::string secoc = write_random_key(dir.path() + "/secoc.key", 32);
  const std::string secoc_wrong = write_random_key(dir.path() + "/secoc-wrong.key", 32);
  const std::string sak = write_random_key(dir.path() + "/sak.key", 16);
  const std::string sak_wrong = write_random_key(dir.path() + "/sak-wrong.key", 16);
  if (o.keys == KeyDistribution::kRsaModeB) {
    const std::int64_t now = static_cast<std::int64_t>(::time(nullptr));
    auto ca = kex::create_ca({"netns-test-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                              kex::Validity::days_from(now, 30)});
    EXPECT_TRUE(ca.ok());
    EXPECT_TRUE(kex::save_ca(dir.path(), *ca).ok());
    for (const char* name : {"publisher", "subscriber-1", "subscriber-2"}) {
      auto id = kex::issue_certificate(*ca, {name, {0x1234}, kex::KeyAlgorithm::kRsa2048, kex::Validity::days_from(now, 30)});
      EXPECT_TRUE(id.ok());
      EXPECT_TRUE(kex::save_identity(dir.path(), name, *id).ok());
    }
  }
  std::vector<NetnsNodeSpec> specs;
  for (int n = 0; n <= kSubscribers; ++n) {
    const auto& node = topo.node(static_cast<std::size_t>(n));
    NetnsNodeSpec s;
    s.role = n == 0 ? "publisher" : "subscriber";
    s.index = n == 0 ? 0 : n - 1;
    const std::string name = n == 0 ? "publisher" : "subscriber-" + std::to_string(n);
    s.subscribers = kSubscribers;
    s.path = o.path;
    s.security = o.security;
    s.keys = o.keys;
    s.multicast = o.multicast;
    s.payload_bytes = 64;
    s.interface = node.interface;
    s.ip = node.ip;
    s.mac = node.mac;
    for (int m = 0; m <= kSubscribers; ++m) {
      if (m == n) continue;
      const auto& peer = topo.node(static_cast<std::size_t>(m));
      s.peers.push_back({m == 0 ? "publisher" : "subscriber-" + std::to_string(m), peer.ip, peer.mac});
    }
    s.publisher_ip = topo.node(0).ip;
    const bool wrong = n == 1;
    if (o.keys == KeyDistribution::kPsk) s.secoc_key_file = wrong && o.wrong_secoc_key_on_subscriber_0 ? secoc_wrong : secoc;
    if (o.security == Security::kHybrid) s.macsec_key_file = wrong && o.wrong_sak_on_subscriber_0 ? sak_wrong : sak;
    if (o.keys == KeyDistribution::kRsaModeB) {
      s.ca_cert_file = dir.path() + "/ca.pem";
      s.cert_file = dir.path() + "/" + name + ".pem";
      s.key_file = dir.path() + "/" + name + ".key";
    }
    s.mode = o.mode;
    s.iterations = o.iterations;
    s.warmup = 5;
    s.pacing = Duration::milliseconds(1);
    s.timeout = o.timeout;
    s.rate_hz = o.rate_hz;
    s.rate_duration = Duration::milliseconds(500);
    s.ready_timeout = o.ready_timeout;
    s.report_file = dir.path() + "/" + name + ".json";
    specs.push_back(std::move(s));
  }

  StarResult out;
  out.subscribers.resize(kSubscribers);
  out.logs.resize(kSubscribers + 1);
  std::atomic<bool> stop{false};
  std::atomic<bool> publisher_stop{false};
  auto run_in = [&](int n, const std::atomic<bool>& flag, NetnsNodeReport& report) {
    std::ostringstream err;
    try {
      net::NetnsScope scope(topo.node(static_cast<std::size_t>(n)).netns);
      report = run_netns_node(specs[static_cast<std::size_t>(n)], flag, err);
    } catch (const std::exception& e) {
      report.ok = false;
      report.error = e.what();
    }
    out.logs[static_cast<std::size_t>(n)] = err.str();
  };
  std::vector<std::thread> subs;
  for (int i = 0; i < kSubscribers; ++i)
    subs.emplace_back([&, i] { run_in(i + 1, stop, out.subscribers[static_cast<std::size_t>(i)]); });
  std::thread pub([&] { run_in(0, publisher_stop, out.publisher); });
  pub.join();
  stop = true;
  for (auto& t : subs) t.join();

  // The report files match what run_netns_node returned.
  for (int n = 0; n <= kSubscribers; ++n) {
    const auto& spec = specs[static_cast<std::size_t>(n)];
    std::ifstream f(spec.report_file);
    EXPECT_TRUE(f.good()) << spec.report_file;
    if (!f) continue;
    json j;
    f >> j;
    auto r = parse_report(j);
    EXPECT_TRUE(r.ok()) << r.error();
    if (r.ok()) {
      EXPECT_EQ(r->ok, n == 0 ? out.publisher.ok : out.subscribers[static_cast<std::size_t>(n - 1)].ok);
    }
  }
  return out;
}

std::string describe(const StarResult& r) {
  std::string s = "publisher: " + to_json(r.publisher).dump() + "\n";
  for (const auto& x : r.subscribers) s += "subscriber: " + to_json(x).dump() + "\n";
  for (const auto& l : r.logs) s += l;
  return s;
}

double median_us(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]) / 1e3;
}

void expect_clean_closed_loop(const StarResult& r, int iterations, bool secured) {
  const auto& p = r.publisher;
  ASSERT_TRUE(p.ok) << describe(r);
  EXPECT_EQ(p.iterations_completed, static_cast<std::uint64_t>(iterations)) << describe(r);
  EXPECT_EQ(p.timeouts, 0u);
  EXPECT_EQ(p.security_rejections, 0u) << describe(r);
  ASSERT_EQ(p.half_rtt_ns.size(), static_cast<std::size_t>(iterations));
  ASSERT_EQ(p.one_way_ns.size(), static_cast<std::size_t>(iterations));
  for (std::size_t i = 0; i < p.half_rtt_ns.size(); ++i) {
    EXPECT_GT(p.half_rtt_ns[i], 0);
    EXPECT_GT(p.one_way_ns[i], 0);
    EXPECT_LT(p.one_way_ns[i], 2 * p.half_rtt_ns[i]);  // the event came before the last answer
  }
  EXPECT_GT(p.cpu_ns, 0u);
  EXPECT_GT(p.wall_ns, 0u);
  EXPECT_GT(p.rss_kib, 0u);
  EXPECT_TRUE(p.ready_ns.has_value());
  if (secured) {
    EXPECT_GE(p.secoc_protected, static_cast<std::uint64_t>(iterations));
    EXPECT_GE(p.secoc_verified, static_cast<std::uint64_t>(2 * iterations));
    EXPECT_GT(p.secoc_protect_ns, 0u);
    EXPECT_GT(p.secoc_verify_ns, 0u);
  } else {
    EXPECT_EQ(p.secoc_protected, 0u);
  }
  for (const auto& s : r.subscribers) {
    EXPECT_TRUE(s.ok) << s.error;
    EXPECT_EQ(s.security_rejections, 0u) << describe(r);
    EXPECT_EQ(s.one_way_ns.size(), static_cast<std::size_t>(iterations));
    for (auto v : s.one_way_ns) EXPECT_GT(v, 0);
  }
  std::cerr << "  half RTT median " << median_us(p.half_rtt_ns) << " us, one-way (last subscriber) median "
            << median_us(p.one_way_ns) << " us, ready after " << (p.ready_ns ? *p.ready_ns / 1e6 : -1) << " ms, "
            << p.ready_probes << " probe(s)";
  if (secured && p.secoc_protected > 0)
    std::cerr << ", protect " << p.secoc_protect_ns / p.secoc_protected << " ns/op, verify "
              << (p.secoc_verified ? p.secoc_verify_ns / p.secoc_verified : 0) << " ns/op";
  std::cerr << "\n";
}

TEST(NetnsNodeRun, KernelUnsecuredMulticast) {
  REQUIRE_NETNS();
  StarRun o;
  expect_clean_closed_loop(run_star(o), o.iterations, false);
}

TEST(NetnsNodeRun, KernelSecocPskMulticast) {
  REQUIRE_NETNS();
  StarRun o;
  o.security = Security::kSecoc;
  o.keys = KeyDistribution::kPsk;
  const auto r = run_star(o);
  expect_clean_closed_loop(r, o.iterations, true);
  for (const auto& s : r.subscribers) EXPECT_GE(s.transport["runtime"]["secoc_syncs_accepted"].get<int>(), 1);
}

TEST(NetnsNodeRun, KernelHybridPskMulticast) {
  REQUIRE_NETNS();
  StarRun o;
  o.security = Security::kHybrid;
  o.keys = KeyDistribution::kPsk;
  const auto r = run_star(o);
  expect_clean_closed_loop(r, o.iterations, true);
  // Everything crossed the TAP through the SecY.
  EXPECT_GT(r.publisher.transport["macsec"]["link"]["rx_delivered"].get<std::uint64_t>(), 0u);
}

TEST(NetnsNodeRun, KernelSecocRsaModeBUnicast) {
  REQUIRE_NETNS();
  StarRun o;
  o.security = Security::kSecoc;
  o.keys = KeyDistribution::kRsaModeB;
  o.multicast = false;
  const auto r = run_star(o);
  expect_clean_closed_loop(r, o.iterations, true);
  ASSERT_TRUE(r.publisher.establishment_ns.has_value());
  EXPECT_GT(*r.publisher.establishment_ns, 0);
  std::cerr << "  establishment " << *r.publisher.establishment_ns / 1e6 << " ms\n";
}

TEST(NetnsNodeRun, RawUnsecuredMulticast) {
  REQUIRE_NETNS();
  StarRun o;
  o.path = LinkPath::kRaw;
  const auto r = run_star(o);
  expect_clean_closed_loop(r, o.iterations, false);
  EXPECT_GT(r.publisher.transport["raw"]["rx_datagrams"].get<std::uint64_t>(), 0u);
}

TEST(NetnsNodeRun, RawHybridPskMulticast) {
  REQUIRE_NETNS();
  StarRun o;
  o.path = LinkPath::kRaw;
  o.security = Security::kHybrid;
  o.keys = KeyDistribution::kPsk;
  const auto r = run_star(o);
  expect_clean_closed_loop(r, o.iterations, true);
  EXPECT_GT(r.publisher.transport["macsec"]["link"]["rx_delivered"].get<std::uint64_t>(), 0u);
}

TEST(NetnsNodeRun, KernelRateUnsecuredMulticast) {
  REQUIRE_NETNS();
  StarRun o;
  o.mode = "rate";
  o.rate_hz = 2000;
  const auto r = run_star(o);
  ASSERT_TRUE(r.publisher.ok) << describe(r);
  EXPECT_EQ(r.publisher.sent, 1000u);
  EXPECT_GT(r.publisher.achieved_rate_hz, 1500);
  for (const auto& s : r.subscribers) {
    EXPECT_TRUE(s.ok) << s.error;
    EXPECT_EQ(s.received + s.lost, 1000u) << describe(r);
    EXPECT_EQ(s.one_way_ns.size(), s.received);
    EXPECT_GT(s.received, 900u);
  }
}

// A subscriber with another SecOC key rejects every event: the publisher
// never gets a complete probe and reports why.
TEST(NetnsNodeRun, WrongSecocKeyOnOneSubscriber) {
  REQUIRE_NETNS();
  StarRun o;
  o.security = Security::kSecoc;
  o.keys = KeyDistribution::kPsk;
  o.wrong_secoc_key_on_subscriber_0 = true;
  o.ready_timeout = Duration::seconds(2);
  o.timeout = Duration::milliseconds(300);
  const auto r = run_star(o);
  EXPECT_FALSE(r.publisher.ok);
  EXPECT_EQ(r.publisher.iterations_completed, 0u);
  EXPECT_GE(r.publisher.ready_probes, 2u);
  EXPECT_NE(r.publisher.error.find("not ready"), std::string::npos) << r.publisher.error;
  EXPECT_NE(r.publisher.error.find("subscriber 0"), std::string::npos) << r.publisher.error;
  EXPECT_GT(r.subscribers[0].security_rejections, 0u) << describe(r);
  EXPECT_EQ(r.subscribers[0].one_way_ns.size(), 0u);
  EXPECT_EQ(r.subscribers[1].security_rejections, 0u) << describe(r);
}

// With another SAK the subscriber's SecY drops every frame (and the
// publisher's drops the subscriber's).
TEST(NetnsNodeRun, WrongSakOnOneSubscriberRaw) {
  REQUIRE_NETNS();
  StarRun o;
  o.path = LinkPath::kRaw;
  o.security = Security::kHybrid;
  o.keys = KeyDistribution::kPsk;
  o.wrong_sak_on_subscriber_0 = true;
  o.ready_timeout = Duration::seconds(2);
  o.timeout = Duration::milliseconds(300);
  const auto r = run_star(o);
  EXPECT_FALSE(r.publisher.ok);
  EXPECT_EQ(r.publisher.iterations_completed, 0u);
  EXPECT_GT(r.subscribers[0].security_rejections, 0u) << describe(r);
  EXPECT_GT(r.publisher.security_rejections, 0u) << describe(r);
}

// Key files go through base/keyfile: a SecOC key readable by the group is
// refused before the node runs, and the node says which file and why.
TEST(NetnsNodeRun, KeyFileReadableByGroupIsRefused) {
  REQUIRE_NETNS();
  TempDir dir;
  auto topo = net::NetnsTopology::pair("nk");
  const std::string key = write_random_key(dir.path() + "/secoc.key", 32);
  ASSERT_EQ(::chmod(key.c_str(), 0640), 0);
  NetnsNodeSpec s;
  s.role = "subscriber";
  s.security = Security::kSecoc;
  s.keys = KeyDistribution::kPsk;
  s.interface = topo.node(0).interface;
  s.ip = topo.node(0).ip;
  s.mac = topo.node(0).mac;
  s.publisher_ip = topo.node(1).ip;
  s.peers = {{"publisher", topo.node(1).ip, topo.node(1).mac}};
  s.secoc_key_file = key;
  s.report_file = dir.path() + "/report.json";
  std::atomic<bool> stop{true};
  std::ostringstream err;
  NetnsNodeReport r;
  {
    net::NetnsScope scope(topo.node(0).netns);
    r = run_netns_node(s, stop, err);
  }
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(key), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(std::string(to_string(KeyFileError::kInsecureMode))), std::string::npos) << r.error;
  EXPECT_NE(err.str().find("subscriber-1"), std::string::npos) << err.str();
  std::ifstream f(s.report_file);
  ASSERT_TRUE(f.good());
}

}  // namespace
}  // namespace layersec::harness
