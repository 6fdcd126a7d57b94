#include "layersec/harness/netns_scenarios.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/harness/results_output.h"
#include "layersec/harness/results_table.h"
#include "layersec/harness/stats.h"
#include "layersec/keymgmt/wire.h"
#include "layersec/kex/pki.h"

namespace layersec::harness {

namespace fs = std::filesystem;

namespace {

// The SOME/IP service the scenario nodes protect.
constexpr std::uint16_t kScenarioService = kNetnsScenarioService;

std::string path_name(LinkPath p) { return p == LinkPath::kRaw ? "raw" : "kernel"; }

std::string rate_text(double hz) {
  std::ostringstream s;
  s << static_cast<long long>(std::llround(hz));
  return s.str();
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::vector<double> to_us(const std::vector<std::int64_t>& ns) {
  std::vector<double> us;
  us.reserve(ns.size());
  for (std::int64_t v : ns) us.push_back(static_cast<double>(v) / 1e3);
  return us;
}

std::string node_name(const NetnsNodeSpec& s) {
  return s.role == "publisher" ? std::string("publisher") : "subscriber-" + std::to_string(s.index);
}

std::string report_name(std::size_t k) {
  if (k == 0) return "publisher";
  return "subscriber-" + std::to_string(k - 1);
}

// Set by SIGINT / SIGTERM while a run is in progress: the sweep stops, the
// current nodes are terminated and the namespaces removed.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// Installs on_interrupt for SIGINT and SIGTERM for its lifetime.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

void sleep_ms(int ms) {
  const timespec pause{0, static_cast<long>(ms) * 1'000'000L};
  ::nanosleep(&pause, nullptr);
}

// The last `lines` lines of a text file ("" when it cannot be read).
std::string file_tail(const std::string& path, std::size_t lines) {
  std::ifstream f(path);
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(f, line)) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += "    " + l + "\n";
  return out;
}

std::string resolve_node_program(const std::string& given) {
  if (!given.empty() && given != "/proc/self/exe") return given;
  // `ip netns exec` would resolve /proc/self/exe to itself: pass the real path.
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot resolve /proc/self/exe: " + ec.message());
  return p.string();
}

std::string make_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "layersec-netns-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::runtime_error("cannot create a work directory: " + std::string(std::strerror(errno)));
  }
  return buf.data();
}

std::string file_safe(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    if (c == '@' || c == '/') c = '_';
  }
  return s;
}

// How long the orchestrator waits for the publisher before it gives up.
Duration overall_timeout(const NetnsScenario& s) {
  const Duration ready = Duration::seconds(15);
  if (s.mode == "rate") return ready + s.rate_duration + Duration::seconds(20);
  const Duration per_iteration = s.pacing + Duration::milliseconds(5);
  return ready + per_iteration * (s.warmup + s.iterations) + Duration::seconds(20);
}

NetnsScenario make_scenario(const BenchScenarioOptions& o, LinkPath path, const std::string& name,
                            const std::string& series, const std::string& paper_id, const std::string& label,
                            const std::string& baseline, Security security, KeyDistribution keys, int subscribers,
                            bool multicast, std::size_t payload) {
  NetnsScenario s;
  const std::string suffix = "@" + path_name(path);
  s.name = name + suffix;
  s.series = series;
  s.paper_id = paper_id;
  s.label = label + " (" + path_name(path) + " path)";
  s.baseline = baseline + suffix;
  s.path = path;
  s.security = security;
  s.keys = keys;
  s.subscribers = subscribers;
  s.multicast = multicast;
  s.payload_bytes = payload;
  s.iterations = o.iterations;
  s.warmup = o.quick ? 10 : 20;
  return s;
}

struct NodeOutcome {
  std::vector<NetnsNodeReport> reports;  // [0] publisher, always subscribers + 1 entries
  std::vector<std::string> logs;
  std::string error;  // orchestration failure ("" when every node ran to the end)
  bool interrupted = false;
};

// Writes the specs, starts the nodes, waits and collects the reports.
NodeOutcome run_nodes(const NetnsScenario& s, const NetnsKeyFiles& keys, const std::string& dir,
                      const std::string& program) {
  NodeOutcome o;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir + ": " + ec.message());
  net::NetnsTopology topo = net::NetnsTopology::star(static_cast<std::size_t>(s.subscribers) + 1, "lsb");
  const std::vector<NetnsNodeSpec> specs = netns_node_specs(s, topo.nodes(), keys, dir);
  std::vector<std::string> spec_paths;
  for (const auto& sp : specs) {
    const std::string p = (fs::path(dir) / (node_name(sp) + ".spec.json")).string();
    std::ofstream f(p);
    f << to_json(sp).dump(2) << "\n";
    f.flush();
    if (!f) throw std::runtime_error("cannot write " + p);
    spec_paths.push_back(p);
    o.logs.push_back((fs::path(dir) / (node_name(sp) + ".log")).string());
  }
  auto argv = [&](std::size_t k) {
    return std::vector<std::string>{program, "bench", "scenario-node", "--spec", spec_paths[k]};
  };
  std::vector<net::ChildProcess> subscribers;
  subscribers.reserve(specs.size());
  for (std::size_t k = 1; k < specs.size(); ++k) subscribers.push_back(topo.spawn(k, argv(k), o.logs[k]));
  net::ChildProcess publisher = topo.spawn(0, argv(0), o.logs[0]);

  const MonotonicClock clock;
  const Duration limit = overall_timeout(s);
  const TimePoint give_up = clock.now() + limit;
  bool timed_out = false;
  while (publisher.running()) {
    if (g_interrupted) {
      o.interrupted = true;
      break;
    }
    if (clock.now() >= give_up) {
      timed_out = true;
      break;
    }
    sleep_ms(10);
  }
  const int publisher_status = publisher.terminate(Duration::seconds(3));
  std::vector<int> status(specs.size(), -1);
  status[0] = publisher_status;
  // Subscribers run until stopped; SIGTERM makes them write their reports.
  for (std::size_t k = 0; k < subscribers.size(); ++k) status[k + 1] = subscribers[k].terminate(Duration::seconds(3));
  if (timed_out) o.error = "the publisher did not finish within " + fixed(limit.s(), 0) + " s (terminated)";
  if (o.interrupted) o.error = "interrupted";

  for (std::size_t k = 0; k < specs.size(); ++k) {
    NetnsNodeReport r;
    r.role = specs[k].role;
    r.index = specs[k].index;
    std::ifstream f(specs[k].report_file);
    if (!f) {
      r.error = "wrote no report (exit status " + std::to_string(status[k]) + ")";
    } else {
      nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
      if (j.is_discarded()) {
        r.error = "report is not valid JSON (exit status " + std::to_string(status[k]) + ")";
      } else {
        try {
          r = node_report_from_json(j);
        } catch (const NetnsJsonError& e) {
          r.error = std::string("report refused: ") + e.what();
        }
      }
    }
    o.reports.push_back(std::move(r));
  }
  return o;  // the topology's destructor removes the namespaces
}

std::string secure_name(Security s, KeyDistribution k) {
  if (s == Security::kNone) return "unsecured";
  return (s == Security::kHybrid ? std::string("hybrid-") : std::string("secoc-")) +
         (k == KeyDistribution::kRsaModeB ? "rsa" : "psk");
}

const ScenarioResult* find_row(const std::vector<ScenarioResult>& rows, const std::string& name) {
  for (const auto& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string netns_method() {
  return "Every node is its own process (`layersec bench scenario-node`) in its own network namespace: the "
         "publisher in one, each subscriber in another, every namespace joined by a veth pair to a Linux bridge "
         "in a hub namespace (STP and multicast snooping off, so multicast floods). Each closed-loop iteration "
         "has one message in flight: the publisher notifies one event (unicast to one subscriber, or once to the "
         "eventgroup's multicast group), every subscriber answers with a fire-and-forget request, and the "
         "iteration ends when the publisher has the last answer; latency is half that round trip on the "
         "publisher's CLOCK_MONOTONIC (the paper's method), one way is the send time carried in the payload to "
         "the last subscriber's event handler (CLOCK_MONOTONIC is one clock for every namespace of the machine). "
         "Iterations are paced 1 ms apart (not the paper's 50 ms) after a warm-up and a readiness probe. Two link "
         "paths: kernel (UDP sockets; with MACsec the node runs its SecY between a TAP interface and the veth, "
         "one extra hop through the TAP) and raw (the node frames Ethernet/IPv4/UDP itself, applies MACsec "
         "in-process and sends with one AF_PACKET send). Rate rows notify at a fixed rate with absolute deadlines "
         "and report every subscriber's one-way latency and losses. SecOC path = runtime call-site time inside "
         "SecOC protect + verify, summed over every node, per iteration (a mean). CPU % = the publisher process's "
         "CPU time over the wall time of its measured phase; CPU us/iteration in the JSON sums every node. RSS = "
         "the publisher's peak. Key establishment (Mode B, RSA-2048 OAEP with X.509 certificates, over SOME/IP "
         "between the namespaces) is timed once before measurement; RSA key generation is provisioning.";
}

}  // namespace

std::string netns_topology_name(LinkPath p) { return "netns-" + path_name(p); }

std::optional<LinkPath> link_path_from_string(std::string_view s) {
  if (s == "kernel") return LinkPath::kKernel;
  if (s == "raw") return LinkPath::kRaw;
  return std::nullopt;
}

std::vector<int> netns_group_sizes(const BenchScenarioOptions& o) {
  if (!o.group_sizes.empty()) return o.group_sizes;
  return o.quick ? std::vector<int>{2, 4} : std::vector<int>{2, 4, 8, 16};
}

std::vector<double> netns_rate_steps(bool quick) {
  if (quick) return {1000, 5000};
  return {1000, 2000, 5000, 10000, 20000, 50000, 100000};
}

std::vector<NetnsScenario> netns_closed_loop_scenarios(const BenchScenarioOptions& o, LinkPath path) {
  // The paper's ten sub-scenarios (Table 14), named as paper_scenario_specs does.
  std::vector<NetnsScenario> out;
  for (const auto& r : paper_configurations()) {
    for (int multicast = 0; multicast < 2; ++multicast) {
      const std::string suffix = multicast ? "multicast" : "unicast";
      out.push_back(make_scenario(o, path, std::string(r.name) + "-" + suffix, "paper-scenarios",
                                  std::string(r.id) + (multicast ? "-B" : "-A"),
                                  std::string(r.label) + (multicast ? " Multicast" : " Unicast"),
                                  "unsecured-" + suffix, r.security, r.keys, multicast ? 2 : 1, multicast != 0, 64));
    }
  }
  std::vector<std::size_t> payloads = o.payloads;
  if (payloads.empty()) {
    payloads = o.quick ? std::vector<std::size_t>{64, 1400} : std::vector<std::size_t>{64, 256, 512, 1024, 1400};
  }
  for (std::size_t p : payloads) {
    const std::string ps = std::to_string(p);
    for (auto [sec, keys] : {std::pair{Security::kNone, KeyDistribution::kNone},
                             std::pair{Security::kHybrid, KeyDistribution::kPsk}}) {
      const std::string sn = secure_name(sec, keys);
      out.push_back(make_scenario(o, path, "payload-" + ps + "-" + sn, "payload", "",
                                  (sec == Security::kNone ? "Unsecured" : "Hybrid-PSK") +
                                      std::string(" multicast N=2, ") + ps + " B",
                                  "payload-" + ps + "-unsecured", sec, keys, 2, true, p));
    }
  }
  for (int n : netns_group_sizes(o)) {
    const std::string ns = std::to_string(n);
    for (auto [sec, keys] : {std::pair{Security::kNone, KeyDistribution::kNone},
                             std::pair{Security::kHybrid, KeyDistribution::kPsk}}) {
      const std::string sn = secure_name(sec, keys);
      out.push_back(make_scenario(o, path, "group-n" + ns + "-" + sn, "group-size", "",
                                  (sec == Security::kNone ? "Unsecured" : "Hybrid-PSK") +
                                      std::string(" multicast, N=") + ns,
                                  "group-n" + ns + "-unsecured", sec, keys, n, true, 64));
    }
  }
  return out;
}

NetnsScenario netns_rate_scenario(const BenchScenarioOptions& o, LinkPath path, Security security, double rate_hz) {
  const KeyDistribution keys = security == Security::kNone ? KeyDistribution::kNone : KeyDistribution::kPsk;
  const std::string sn = secure_name(security, keys);
  const std::string rs = rate_text(rate_hz);
  NetnsScenario s = make_scenario(o, path, "rate-" + rs + "-" + sn, "rate", "",
                                  (security == Security::kNone ? "Unsecured" : "Hybrid-PSK") +
                                      std::string(" multicast N=2 at ") + rs + " events/s",
                                  "rate-" + rs + "-unsecured", security, keys, 2, true, 64);
  s.mode = "rate";
  s.rate_hz = rate_hz;
  s.rate_duration = o.quick ? Duration::milliseconds(200) : Duration::seconds(1);
  // The readiness probe is closed loop; a handful of iterations is enough.
  s.iterations = std::min(o.iterations, 20);
  s.warmup = 5;
  return s;
}

std::vector<std::uint16_t> netns_certificate_services() {
  std::vector<std::uint16_t> s = {kScenarioService, keymgmt::kDefaultServiceId};
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

NetnsKeyFiles write_netns_psk_files(const std::string& dir) {
  NetnsKeyFiles files;
  auto write = [&](const std::string& name, std::size_t size) {
    const std::string path = (fs::path(dir) / name).string();
    const SecretBytes key = crypto::random_key(size);
    auto st = write_key_file_hex(path, key.span(), /*overwrite=*/true);
    if (!st.ok()) throw std::runtime_error("cannot write " + path + ": " + std::string(to_string(st.error())));
    return path;
  };
  files.secoc_key = write("secoc-psk.key", 32);
  files.macsec_key = write("macsec-sak.key", 16);
  return files;
}

void write_netns_rsa_files(const std::string& dir, int subscribers, NetnsKeyFiles& files) {
  auto fail = [](const std::string& what, kex::PkiError e) {
    throw std::runtime_error("RSA provisioning: " + what + ": " + std::string(kex::to_string(e)));
  };
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  auto ca = kex::create_ca({"layersec-netns-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                            kex::Validity::days_from(now, 30)});
  if (!ca.ok()) fail("CA", ca.error());
  files.ca_cert = (fs::path(dir) / "ca.pem").string();
  if (auto st = ca->certificate.save(files.ca_cert, true); !st.ok()) fail(files.ca_cert, st.error());
  files.certs.clear();
  files.keys.clear();
  for (int k = 0; k <= subscribers; ++k) {
    const std::string name = k == 0 ? "publisher" : "subscriber-" + std::to_string(k - 1);
    auto id = kex::issue_certificate(
        *ca, {"netns-" + name, netns_certificate_services(), kex::KeyAlgorithm::kRsa2048,
              kex::Validity::days_from(now, 30)});
    if (!id.ok()) fail(name + " certificate", id.error());
    const std::string cert = (fs::path(dir) / (name + ".pem")).string();
    const std::string key = (fs::path(dir) / (name + ".key")).string();
    if (auto st = id->certificate.save(cert, true); !st.ok()) fail(cert, st.error());
    if (auto st = id->key.save(key, nullptr, true); !st.ok()) fail(key, st.error());
    files.certs.push_back(cert);
    files.keys.push_back(key);
  }
}

std::vector<NetnsNodeSpec> netns_node_specs(const NetnsScenario& s, const std::vector<net::NetnsNode>& nodes,
                                            const NetnsKeyFiles& keys, const std::string& dir) {
  const std::size_t n = static_cast<std::size_t>(s.subscribers) + 1;
  if (s.subscribers < 1 || nodes.size() != n) {
    throw std::invalid_argument(s.name + ": " + std::to_string(nodes.size()) + " nodes for " +
                                std::to_string(s.subscribers) + " subscribers (need subscribers + 1)");
  }
  const bool secoc_psk = s.security != Security::kNone && s.keys == KeyDistribution::kPsk;
  const bool rsa = s.security != Security::kNone && s.keys == KeyDistribution::kRsaModeB;
  if (secoc_psk && keys.secoc_key.empty()) throw std::invalid_argument(s.name + ": no SecOC key file");
  if (s.security == Security::kHybrid && keys.macsec_key.empty()) {
    throw std::invalid_argument(s.name + ": no MACsec key file");
  }
  if (rsa && (keys.ca_cert.empty() || keys.certs.size() < n || keys.keys.size() < n)) {
    throw std::invalid_argument(s.name + ": RSA credentials for " + std::to_string(keys.certs.size()) +
                                " nodes, need " + std::to_string(n));
  }
  auto peer_name = [](std::size_t k) {
    return k == 0 ? std::string("publisher") : "subscriber-" + std::to_string(k - 1);
  };
  std::vector<NetnsNodeSpec> specs;
  for (std::size_t k = 0; k < n; ++k) {
    NetnsNodeSpec sp;
    sp.role = k == 0 ? "publisher" : "subscriber";
    sp.index = k == 0 ? 0 : static_cast<int>(k - 1);
    sp.subscribers = s.subscribers;
    sp.path = s.path;
    sp.security = s.security;
    sp.keys = s.security == Security::kNone ? KeyDistribution::kNone : s.keys;
    sp.multicast = s.multicast;
    sp.payload_bytes = s.payload_bytes;
    sp.interface = nodes[k].interface;
    sp.ip = nodes[k].ip;
    sp.mac = nodes[k].mac;
    for (std::size_t j = 0; j < n; ++j) {
      if (j != k) sp.peers.push_back({peer_name(j), nodes[j].ip, nodes[j].mac});
    }
    sp.publisher_ip = nodes[0].ip;
    if (secoc_psk) sp.secoc_key_file = keys.secoc_key;
    if (s.security == Security::kHybrid) sp.macsec_key_file = keys.macsec_key;
    if (rsa) {
      sp.ca_cert_file = keys.ca_cert;
      sp.cert_file = keys.certs[k];
      sp.key_file = keys.keys[k];
    }
    sp.mode = s.mode;
    sp.iterations = s.iterations;
    sp.warmup = s.warmup;
    sp.pacing = s.pacing;
    sp.timeout = s.timeout;
    sp.rate_hz = s.rate_hz;
    sp.rate_duration = s.rate_duration;
    sp.report_file = (fs::path(dir) / (peer_name(k) + ".report.json")).string();
    specs.push_back(std::move(sp));
  }
  return specs;
}

RateJudgement judge_rate(const NetnsScenario& s, const std::vector<NetnsNodeReport>& reports) {
  RateJudgement j;
  if (reports.empty()) {
    j.reason = "no reports";
    return j;
  }
  const NetnsNodeReport& pub = reports[0];
  std::vector<double> one_way;
  std::uint64_t received = 0;
  std::uint64_t gaps = 0;
  std::string failed;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    if (!reports[k].ok) failed += (failed.empty() ? "" : ", ") + report_name(k);
    if (k == 0) continue;
    for (std::int64_t v : reports[k].one_way_ns) one_way.push_back(static_cast<double>(v) / 1e3);
    received += reports[k].received;
    gaps += reports[k].lost;
  }
  j.p99_us = summarize(one_way).p99;
  const std::uint64_t expected = pub.sent * (reports.size() - 1);
  const std::uint64_t missing = expected > received ? expected - received : 0;
  const std::uint64_t lost = std::max(gaps, missing);
  j.loss = expected ? static_cast<double>(lost) / static_cast<double>(expected) : 1.0;
  j.achieved_hz = pub.achieved_rate_hz;
  std::vector<std::string> why;
  if (!failed.empty()) why.push_back("node failed: " + failed);
  if (one_way.empty()) why.push_back("no events received");
  if (!one_way.empty() && j.p99_us >= kSaturationP99Us) {
    why.push_back("one-way p99 " + fixed(j.p99_us, 1) + " us >= 1 ms");
  }
  if (j.loss > kSaturationMaxLoss) why.push_back("loss " + fixed(j.loss * 100, 3) + " % > 0.1 %");
  if (s.rate_hz <= 0 || std::abs(j.achieved_hz - s.rate_hz) > kSaturationRateTolerance * s.rate_hz) {
    why.push_back("achieved " + fixed(j.achieved_hz, 0) + " events/s, target " + rate_text(s.rate_hz));
  }
  for (const auto& w : why) j.reason += (j.reason.empty() ? "" : "; ") + w;
  j.ok = why.empty();
  return j;
}

ScenarioResult netns_result_row(const NetnsScenario& s, const std::vector<NetnsNodeReport>& reports,
                                const std::string& error) {
  ScenarioResult r;
  r.name = s.name;
  r.series = s.series;
  r.paper_id = s.paper_id;
  r.label = s.label;
  r.topology = netns_topology_name(s.path);
  r.timing_model = "real-processes";  // one process per node, real kernel scheduling on this host
  r.security = to_string(s.security);
  r.key_distribution = to_string(s.security == Security::kNone ? KeyDistribution::kNone : s.keys);
  r.delivery = s.multicast ? "multicast" : "unicast";
  r.subscribers = s.subscribers;
  r.payload_bytes = s.payload_bytes;
  const bool rate = s.mode == "rate";
  r.iterations = rate ? static_cast<int>(std::llround(s.rate_hz * s.rate_duration.s())) : s.iterations;
  r.pacing_ms = rate ? (s.rate_hz > 0 ? 1000.0 / s.rate_hz : 0) : s.pacing.ms();

  std::string fail = error;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    if (!reports[k].ok) {
      fail += (fail.empty() ? "" : "; ") + report_name(k) + ": " +
              (reports[k].error.empty() ? std::string("not ok") : reports[k].error);
    }
  }
  if (reports.empty() && fail.empty()) fail = "no node reports";
  std::string notes;
  if (!reports.empty()) {
    const NetnsNodeReport& pub = reports[0];
    double per = 0;  // iterations (closed loop) or events sent (rate) the costs are divided by
    if (!rate) {
      std::vector<double> half = to_us(pub.half_rtt_ns);
      r.latency = summarize(half);
      r.one_way = summarize(to_us(pub.one_way_ns));
      r.samples_us = std::move(half);
      r.timeouts = pub.timeouts;
      per = static_cast<double>(pub.iterations_completed ? pub.iterations_completed : r.latency.count);
    } else {
      std::vector<double> merged;
      for (std::size_t k = 1; k < reports.size(); ++k) {
        for (std::int64_t v : reports[k].one_way_ns) merged.push_back(static_cast<double>(v) / 1e3);
      }
      r.latency = summarize(merged);
      r.one_way = r.latency;
      r.samples_us = std::move(merged);
      const RateJudgement j = judge_rate(s, reports);
      const std::uint64_t expected = pub.sent * static_cast<std::uint64_t>(reports.size() - 1);
      r.timeouts = static_cast<std::uint64_t>(std::llround(j.loss * static_cast<double>(expected)));
      per = static_cast<double>(pub.sent);
      notes += "rate mode: latency columns are the merged subscribers' one-way latency (not half RTT); target " +
               rate_text(s.rate_hz) + "/s for " + fixed(s.rate_duration.s(), 1) + " s, achieved " +
               fixed(j.achieved_hz, 0) + "/s, sent " + std::to_string(pub.sent) + ", lost " +
               std::to_string(r.timeouts) + " of " + std::to_string(expected) + " (" + fixed(j.loss * 100, 3) +
               " %; timeouts = lost events); " +
               (j.ok ? std::string("within the saturation limits") : "beyond saturation: " + j.reason) + "; ";
    }
    std::uint64_t secoc_ns = 0;
    std::uint64_t secoc_ops = 0;
    std::uint64_t cpu_ns = 0;
    for (const auto& rep : reports) {
      secoc_ns += rep.secoc_protect_ns + rep.secoc_verify_ns;
      secoc_ops += rep.secoc_protected + rep.secoc_verified;
      cpu_ns += rep.cpu_ns;
      r.security_rejections += rep.security_rejections;
    }
    if (per > 0) {
      r.secoc_path_us = static_cast<double>(secoc_ns) / 1e3 / per;
      r.secoc_path_p50_us = r.secoc_path_us;  // only totals are reported: the mean stands in
      r.secoc_ops_per_iteration = static_cast<std::uint64_t>(std::llround(static_cast<double>(secoc_ops) / per));
      r.cpu_us_per_iteration = static_cast<double>(cpu_ns) / 1e3 / per;
    }
    if (pub.wall_ns > 0) r.cpu_pct = static_cast<double>(pub.cpu_ns) / static_cast<double>(pub.wall_ns) * 100.0;
    r.rss_kib = pub.rss_kib;
    if (pub.establishment_ns) r.establishment_ms = static_cast<double>(*pub.establishment_ns) / 1e6;
    if (!rate && r.timeouts) notes += std::to_string(r.timeouts) + " iterations timed out; ";
    if (r.security_rejections) notes += std::to_string(r.security_rejections) + " security drops; ";
    notes += "CPU % = publisher process CPU / wall time of its measured phase; SecOC path = mean over every node";
  }
  r.notes = fail.empty() ? notes : "FAILED: " + fail + (notes.empty() ? "" : "; " + notes);
  return r;
}

std::string netns_goal_verdict(const Summary& secured, const Summary& baseline, double limit) {
  if (secured.count == 0 || baseline.count == 0 || baseline.p99 <= 0) return "inconclusive (not measured)";
  std::string noisy;
  for (const auto& [what, s] : {std::pair<const char*, const Summary*>{"secured", &secured}, {"baseline", &baseline}}) {
    if (s->p99 > kOutlierDominated * s->p50) {
      noisy += std::string(noisy.empty() ? "" : ", ") + what + " p99/p50 = " + fixed(s->p99 / s->p50, 1);
    }
  }
  if (!noisy.empty()) return "inconclusive (p99 dominated by outliers: " + noisy + "; rerun on an idle machine)";
  return secured.p99 <= limit * baseline.p99 ? "met" : "not met";
}

bool netns_row_failed(const ScenarioResult& row) { return row.notes.rfind("FAILED:", 0) == 0; }

void apply_netns_baselines(std::vector<ScenarioResult>& rows, const std::vector<NetnsScenario>& scenarios) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) index[rows[i].name] = i;
  for (std::size_t i = 0; i < rows.size() && i < scenarios.size(); ++i) {
    const auto it = index.find(scenarios[i].baseline);
    if (it == index.end()) continue;
    const ScenarioResult& b = rows[it->second];
    // Never across paths: the kernel and raw rows are different systems.
    if (b.topology != rows[i].topology || b.latency.count == 0 || rows[i].latency.count == 0) continue;
    if (netns_row_failed(b)) continue;
    const double p99 = b.latency.p99;
    const double mean = b.latency.mean;
    rows[i].baseline_p99_us = p99;
    rows[i].baseline_mean_us = mean;
    if (p99 > 0) rows[i].ratio_p99 = rows[i].latency.p99 / p99;
    if (mean > 0) rows[i].ratio_mean = rows[i].latency.mean / mean;
  }
}

int run_netns_scenarios(const BenchScenarioOptions& o, const NetnsScenarioOptions& nn, std::ostream& out,
                        std::ostream& err) {
  std::string reason;
  if (!net::netns_available(&reason)) {
    err << "layersec: bench scenarios --topology netns needs network namespaces, which this process cannot "
           "build: "
        << reason << " (use --topology sim)\n";
    return 2;
  }
  if (o.iterations < 1) {
    err << "layersec: --iterations must be at least 1\n";
    return 2;
  }
  if (nn.paths.empty()) {
    err << "layersec: --paths needs at least one of kernel, raw\n";
    return 2;
  }
  const std::vector<int> groups = netns_group_sizes(o);
  for (int n : groups) {
    if (n < 1 || n > 128) {
      err << "layersec: netns group sizes must be 1..128 (got " << n << ")\n";
      return 2;
    }
  }
  for (std::size_t p : o.payloads) {
    if (p < 16 || p > 1400) {
      err << "layersec: netns payloads must be 16..1400 bytes (the node's header needs 16; got " << p << ")\n";
      return 2;
    }
  }
  const int max_group = *std::max_element(groups.begin(), groups.end());

  std::string program;
  std::string work;
  bool temp_work = false;
  try {
    program = resolve_node_program(nn.node_program);
    if (nn.work_dir.empty()) {
      work = make_temp_dir();
      temp_work = true;
    } else {
      work = nn.work_dir;
      fs::create_directories(work);
    }
    fs::permissions(work, fs::perms::owner_all, fs::perm_options::replace);
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return 1;
  }

  RunInfo info = start_run_info("bench scenarios --topology netns", o.seed, o.iterations);
  info.peak_rss_per_scenario = true;  // every node is a fresh process
  info.method = netns_method();
  info.notes = {
      "Topology: every node is a separate `layersec bench scenario-node` process in its own network namespace "
      "(publisher + N subscribers), each joined by a veth pair to a Linux bridge in a hub namespace (STP and "
      "multicast snooping off). Paths: kernel = UDP sockets through the kernel stack (with MACsec, a user-space "
      "SecY between a TAP interface and the veth: one extra hop); raw = the node builds Ethernet/IPv4/UDP "
      "frames, applies MACsec in-process and sends them with AF_PACKET. Every ratio compares a row with the "
      "unsecured row of the same path (never across paths).",
      "MACsec in netns is end to end between hosts (GCM-AES-128, one SAK for every SC as MKA distributes one "
      "SAK per CA): the bridge forwards the 88-E5 frames without validating them. In the sim topology MACsec "
      "is hop by hop (host and switch port SecYs).",
      "CPU % is the publisher process's CPU time divided by the wall time of its measured phase (1 ms pacing, "
      "not the paper's 50 ms); cpu_us_per_iteration sums the CPU of every node per iteration. RSS is the "
      "publisher process's peak. SecOC path is the mean per iteration of the runtime's call-site timing of "
      "protect + verify over every node (the SecOC p50 column shows that mean).",
      "Rate rows (series rate): the publisher notifies at a fixed rate for " +
          std::string(o.quick ? "0.2 s" : "1 s") +
          " per step (multicast, N=2); the saturation rate is the highest rate whose merged subscriber one-way "
          "p99 stays under 1 ms with at most 0.1 % loss and an achieved rate within 5 % of the target; the sweep "
          "stops at the first failing rate.",
      "All nodes share the machine's cores: with more processes than cores the latency includes scheduling "
      "(wake-ups of the next process), which the paper's two VMs also paid."};

  out << "layersec bench scenarios --topology netns (paths:";
  for (LinkPath p : nn.paths) out << " " << path_name(p);
  out << ")\nmethod: " << info.method << "\n\n";
  if (max_group > 16) {
    out << "note: group sizes above 16 start " << max_group + 1
        << " processes and namespaces per row; the run takes noticeably longer\n";
  }

  // Keys: one PSK and one SAK per run; RSA material once, for the RSA rows.
  NetnsKeyFiles keys;
  const std::string key_dir = (fs::path(work) / "keys").string();
  try {
    fs::create_directories(key_dir);
    fs::permissions(key_dir, fs::perms::owner_all, fs::perm_options::replace);
    keys = write_netns_psk_files(key_dir);
    const MonotonicClock clock;
    const TimePoint t0 = clock.now();
    write_netns_rsa_files(key_dir, 2, keys);
    out << "provisioned a demo CA and RSA-2048 certificates in " << key_dir << " ("
        << fixed((clock.now() - t0).ms(), 0) << " ms, not part of any figure)\n\n";
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return 1;
  }

  InterruptGuard guard;
  std::vector<ScenarioResult> rows;
  std::vector<NetnsScenario> scenarios;
  int failures = 0;
  std::size_t done = 0;
  std::size_t total = 0;
  const std::size_t rate_steps = netns_rate_steps(o.quick).size();
  for (LinkPath p : nn.paths) total += netns_closed_loop_scenarios(o, p).size() + 2 * rate_steps;

  // Runs one scenario and appends its row; returns the row. Rate steps also
  // get their saturation judgement in `judged`.
  auto run = [&](const NetnsScenario& s, RateJudgement* judged) -> const ScenarioResult& {
    ++done;
    if (o.progress) err << "[" << done << "/" << total << "] " << s.name << " ..." << std::flush;
    const std::string dir = (fs::path(work) / (std::to_string(done) + "-" + file_safe(s.name))).string();
    NodeOutcome outcome;
    ScenarioResult row;
    try {
      outcome = run_nodes(s, keys, dir, program);
      row = netns_result_row(s, outcome.reports, outcome.error);
      if (judged) *judged = judge_rate(s, outcome.reports);
    } catch (const std::exception& e) {
      row = netns_result_row(s, {}, e.what());
      if (judged) *judged = RateJudgement{false, 0, 1.0, 0, e.what()};
    }
    if (o.progress) {
      err << (netns_row_failed(row) ? " FAILED" : "") << " p50 " << fixed(row.latency.p50, 1) << " us, p99 "
          << fixed(row.latency.p99, 1) << " us\n";
    }
    if (netns_row_failed(row) && !outcome.interrupted) {
      ++failures;
      err << "layersec: scenario " << s.name << " " << row.notes.substr(0, row.notes.find("; CPU %")) << "\n";
      for (std::size_t k = 0; k < outcome.reports.size() && k < outcome.logs.size(); ++k) {
        if (outcome.reports[k].ok && outcome.error.empty()) continue;
        err << "  " << outcome.logs[k] << " (last lines):\n" << file_tail(outcome.logs[k], 15);
      }
    }
    rows.push_back(std::move(row));
    scenarios.push_back(s);
    return rows.back();
  };

  struct Saturation {
    LinkPath path;
    std::string security;
    std::optional<double> rate;
    std::string stopped;  // why the sweep stopped ("" when every step passed)
  };
  std::vector<Saturation> saturation;
  for (LinkPath p : nn.paths) {
    for (const NetnsScenario& s : netns_closed_loop_scenarios(o, p)) {
      if (g_interrupted) break;
      (void)run(s, nullptr);
    }
    for (Security sec : {Security::kNone, Security::kHybrid}) {
      Saturation sat{p, secure_name(sec, sec == Security::kNone ? KeyDistribution::kNone : KeyDistribution::kPsk),
                     std::nullopt, ""};
      for (double hz : netns_rate_steps(o.quick)) {
        if (g_interrupted) break;
        RateJudgement j;
        const ScenarioResult& row = run(netns_rate_scenario(o, p, sec, hz), &j);
        if (netns_row_failed(row)) {
          sat.stopped = rate_text(hz) + "/s: node failure";
          break;
        }
        if (!j.ok) {
          sat.stopped = rate_text(hz) + "/s: " + j.reason;
          break;
        }
        sat.rate = hz;
      }
      if (!g_interrupted) saturation.push_back(sat);
    }
    if (g_interrupted) break;
  }
  if (g_interrupted) err << "\nlayersec: interrupted; nodes terminated, namespaces removed\n";

  apply_netns_baselines(rows, scenarios);

  // Tables, one block per path and series.
  for (LinkPath p : nn.paths) {
    const std::string topo = netns_topology_name(p);
    for (const auto& [series, title] :
         std::vector<std::pair<std::string, std::string>>{
             {"paper-scenarios", "the paper's ten sub-scenarios (latency = half RTT, us; paper columns: the "
                                 "seed paper's published ms, Tables 16-19)"},
             {"payload", "payload sweep, multicast N=2"},
             {"group-size", "group size, multicast (paper: Table 21, hybrid PSK, ms)"},
             {"rate", "rate sweep, multicast N=2 (latency = merged subscriber one way, us)"}}) {
      std::vector<ScenarioResult> subset;
      for (const auto& r : rows) {
        if (r.topology == topo && r.series == series) subset.push_back(r);
      }
      if (subset.empty()) continue;
      out << "\n[" << topo << "] " << title << "\n";
      write_text_table(out, subset);
    }
  }
  out << "\n";

  // Saturation.
  for (const auto& s : saturation) {
    std::string line = "saturation [" + netns_topology_name(s.path) + "] " + s.security + " multicast N=2: ";
    line += s.rate ? rate_text(*s.rate) + " events/s" : std::string("below the first step");
    if (!s.stopped.empty()) {
      line += " (stopped at " + s.stopped + ")";
    } else if (s.rate) {
      line += " (every step passed; the sweep's top rate, not the limit)";
    }
    out << line << "\n";
    info.notes.push_back(line);
  }

  // Goals (issue 8).
  for (LinkPath p : nn.paths) {
    const std::string sfx = "@" + path_name(p);
    const std::string topo = netns_topology_name(p);
    const ScenarioResult* h = find_row(rows, "hybrid-psk-multicast" + sfx);
    const ScenarioResult* u = find_row(rows, "unsecured-multicast" + sfx);
    std::string line = "goal [" + topo + "] Hybrid-PSK multicast p99 within 1.2x of unsecured multicast p99: ";
    if (h && u && h->latency.count && u->latency.count && u->latency.p99 > 0 && u->latency.p50 > 0) {
      const double ratio = h->latency.p99 / u->latency.p99;
      line += fixed(h->latency.p99, 1) + " us vs " + fixed(u->latency.p99, 1) + " us = " + fixed(ratio, 2) +
              "x (p50 " + fixed(h->latency.p50, 1) + " vs " + fixed(u->latency.p50, 1) + " us = " +
              fixed(h->latency.p50 / u->latency.p50, 2) + "x) -> " + netns_goal_verdict(h->latency, u->latency, 1.2) +
              " (paper: 5.5x on the mean)";
    } else {
      line += "not measured";
    }
    out << line << "\n";
    info.notes.push_back(line);
    const int n_max = max_group;
    const int n_min = *std::min_element(groups.begin(), groups.end());
    const ScenarioResult* gmax = find_row(rows, "group-n" + std::to_string(n_max) + "-hybrid-psk" + sfx);
    const ScenarioResult* gmin = find_row(rows, "group-n" + std::to_string(n_min) + "-hybrid-psk" + sfx);
    line = "group [" + topo + "] Hybrid-PSK multicast p99 at N=" + std::to_string(n_max) + " vs N=" +
           std::to_string(n_min) + ": ";
    if (gmax && gmin && gmax != gmin && gmax->latency.count && gmin->latency.count && gmin->latency.p99 > 0 &&
        gmin->latency.p50 > 0) {
      const double ratio = gmax->latency.p99 / gmin->latency.p99;
      line += fixed(gmax->latency.p99, 1) + " us vs " + fixed(gmin->latency.p99, 1) + " us = " + fixed(ratio, 2) +
              "x (p50 " + fixed(gmax->latency.p50 / gmin->latency.p50, 2) +
              "x); issue goal N=64 within 1.2x of N=2: " + netns_goal_verdict(gmax->latency, gmin->latency, 1.2) +
              (n_max < 64 ? " at N=" + std::to_string(n_max) + " (N=64 not run)" : std::string());
    } else {
      line += "not measured";
    }
    out << line << "\n";
    info.notes.push_back(line);
  }
  for (const auto& r : rows) {
    if (!netns_row_failed(r) && (r.security_rejections || (r.series != "rate" && r.timeouts))) {
      out << "warning: " << r.name << ": " << r.security_rejections << " security drops, " << r.timeouts
          << " timeouts\n";
    }
  }

  int status = failures ? 1 : 0;
  if (g_interrupted) status = 130;
  if (!write_results({.json_path = o.json_path, .out_dir = o.out_dir, .plots = true}, info, rows, out, err))
    status = status ? status : 1;
  if (failures) err << "layersec: " << failures << " scenario(s) failed\n";

  const bool keep = nn.keep_work_dir || !temp_work || failures > 0;
  if (keep) {
    out << "work dir (specs, keys, reports, node logs): " << work << "\n";
  } else {
    std::error_code ec;
    fs::remove_all(work, ec);
  }
  return status;
}

}  // namespace layersec::harness
