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

#include "layersec/harness/bench_scenarios.h"
#include "layersec/harness/netns_scenario_rows.h"
#include "layersec/harness/results_output.h"
#include "layersec/harness/results_table.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

namespace fs = std::filesystem;

namespace {

std::string path_name(LinkPath p) { return p == LinkPath::kRaw ? "raw" : "kernel"; }

std::string node_name(const NetnsNodeSpec& s) {
  return s.role == "publisher" ? std::string("publisher") : "subscriber-" + std::to_string(s.index);
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
  if (timed_out) o.error = "the publisher did not finish within " + netns_fixed(limit.s(), 0) + " s (terminated)";
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
  const std::string rs = netns_rate_text(rate_hz);
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

namespace {

// --- the run: a table of phases ---------------------------------------------------

// A rate sweep's outcome for one path and security.
struct Saturation {
  LinkPath path;
  std::string security;
  std::optional<double> rate;
  std::string stopped;  // why the sweep stopped ("" when every step passed)
};

// What the phases of one run share, filled in phase order.
struct NetnsRun {
  NetnsRun(const BenchScenarioOptions& options, const NetnsScenarioOptions& netns, std::ostream& out_stream,
           std::ostream& err_stream)
      : o(options), nn(netns), out(out_stream), err(err_stream) {}

  const BenchScenarioOptions& o;
  const NetnsScenarioOptions& nn;
  std::ostream& out;
  std::ostream& err;
  std::vector<int> groups;  // check_options
  int max_group = 0;
  std::string program;  // prepare_work_dir
  std::string work;
  bool temp_work = false;
  RunInfo info;                          // describe_run
  NetnsKeyFiles keys;                    // provision_keys
  std::optional<InterruptGuard> guard;   // run_sweep, until the run ends
  std::vector<ScenarioResult> rows;      // run_sweep: one per scenario run
  std::vector<NetnsScenario> scenarios;  // run_sweep: the scenario of each row
  std::vector<Saturation> saturation;
  int failures = 0;
  std::size_t done = 0;
  std::size_t total = 0;
  int status = 0;  // write_run_results
};

// What a phase reports: go on with the next one, or end the run with `status`.
struct PhaseOutcome {
  bool proceed = true;
  int status = 0;
};
PhaseOutcome proceed() { return {}; }
PhaseOutcome stop(int status) { return {false, status}; }

// Namespaces available, options in range (status 2 otherwise).
PhaseOutcome check_options(NetnsRun& r) {
  const BenchScenarioOptions& o = r.o;
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& err = r.err;
  std::string reason;
  if (!net::netns_available(&reason)) {
    err << "layersec: bench scenarios --topology netns needs network namespaces, which this process cannot "
           "build: "
        << reason << " (use --topology sim)\n";
    return stop(2);
  }
  if (o.iterations < 1) {
    err << "layersec: --iterations must be at least 1\n";
    return stop(2);
  }
  if (nn.paths.empty()) {
    err << "layersec: --paths needs at least one of kernel, raw\n";
    return stop(2);
  }
  r.groups = netns_group_sizes(o);
  const std::vector<int>& groups = r.groups;
  for (int n : groups) {
    if (n < 1 || n > 128) {
      err << "layersec: netns group sizes must be 1..128 (got " << n << ")\n";
      return stop(2);
    }
  }
  for (std::size_t p : o.payloads) {
    if (p < 16 || p > 1400) {
      err << "layersec: netns payloads must be 16..1400 bytes (the node's header needs 16; got " << p << ")\n";
      return stop(2);
    }
  }
  r.max_group = *std::max_element(groups.begin(), groups.end());
  return proceed();
}

// The node program and the work directory (status 1 when unusable).
PhaseOutcome prepare_work_dir(NetnsRun& r) {
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& err = r.err;
  try {
    r.program = resolve_node_program(nn.node_program);
    if (nn.work_dir.empty()) {
      r.work = make_temp_dir();
      r.temp_work = true;
    } else {
      r.work = nn.work_dir;
      fs::create_directories(r.work);
    }
    fs::permissions(r.work, fs::perms::owner_all, fs::perm_options::replace);
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return stop(1);
  }
  return proceed();
}

// The run's notes and method, and the header lines.
PhaseOutcome describe_run(NetnsRun& r) {
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& out = r.out;
  r.info = start_run_info("bench scenarios --topology netns", r.o.seed, r.o.iterations);
  r.info.peak_rss_per_scenario = true;  // every node is a fresh process
  r.info.settings = bench_settings(r.o);
  std::string paths;
  for (LinkPath p : nn.paths) paths += (paths.empty() ? "" : ",") + std::string(path_name(p));
  r.info.settings.emplace_back("paths", paths);
  r.info.method = netns_method();
  r.info.notes = {
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
          std::string(r.o.quick ? "0.2 s" : "1 s") +
          " per step (multicast, N=2); the saturation rate is the highest rate whose merged subscriber one-way "
          "p99 stays under 1 ms with at most 0.1 % loss and an achieved rate within 5 % of the target; the sweep "
          "stops at the first failing rate.",
      "All nodes share the machine's cores: with more processes than cores the latency includes scheduling "
      "(wake-ups of the next process), which the paper's two VMs also paid."};

  out << "layersec bench scenarios --topology netns (paths:";
  for (LinkPath p : nn.paths) out << " " << path_name(p);
  out << ")\nmethod: " << r.info.method << "\n\n";
  if (r.max_group > 16) {
    out << "note: group sizes above 16 start " << r.max_group + 1
        << " processes and namespaces per row; the run takes noticeably longer\n";
  }
  return proceed();
}

// One PSK and one SAK per run; RSA material once, for the RSA rows.
PhaseOutcome provision_keys(NetnsRun& r) {
  std::ostream& out = r.out;
  std::ostream& err = r.err;
  const std::string key_dir = (fs::path(r.work) / "keys").string();
  try {
    fs::create_directories(key_dir);
    fs::permissions(key_dir, fs::perms::owner_all, fs::perm_options::replace);
    r.keys = write_netns_psk_files(key_dir);
    const MonotonicClock clock;
    const TimePoint t0 = clock.now();
    write_netns_rsa_files(key_dir, 2, r.keys);
    out << "provisioned a demo CA and RSA-2048 certificates in " << key_dir << " ("
        << netns_fixed((clock.now() - t0).ms(), 0) << " ms, not part of any figure)\n\n";
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return stop(1);
  }
  return proceed();
}

// Every closed-loop scenario, then the rate sweeps, per path; stops early on
// SIGINT/SIGTERM (nodes terminated, namespaces removed).
PhaseOutcome run_sweep(NetnsRun& r) {
  const BenchScenarioOptions& o = r.o;
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& err = r.err;
  r.guard.emplace();
  const std::size_t rate_steps = netns_rate_steps(o.quick).size();
  for (LinkPath p : nn.paths) r.total += netns_closed_loop_scenarios(o, p).size() + 2 * rate_steps;

  // Runs one scenario and appends its row; returns the row. Rate steps also
  // get their saturation judgement in `judged`.
  auto run = [&](const NetnsScenario& s, RateJudgement* judged) -> const ScenarioResult& {
    ++r.done;
    if (o.progress) err << "[" << r.done << "/" << r.total << "] " << s.name << " ..." << std::flush;
    const std::string dir = (fs::path(r.work) / (std::to_string(r.done) + "-" + file_safe(s.name))).string();
    NodeOutcome outcome;
    ScenarioResult row;
    try {
      outcome = run_nodes(s, r.keys, dir, r.program);
      row = netns_result_row(s, outcome.reports, outcome.error);
      if (judged) *judged = judge_rate(s, outcome.reports);
    } catch (const std::exception& e) {
      row = netns_result_row(s, {}, e.what());
      if (judged) *judged = RateJudgement{false, 0, 1.0, 0, e.what()};
    }
    if (o.progress) {
      err << (netns_row_failed(row) ? " FAILED" : "") << " p50 " << netns_fixed(row.latency.p50, 1) << " us, p99 "
          << netns_fixed(row.latency.p99, 1) << " us\n";
    }
    if (netns_row_failed(row) && !outcome.interrupted) {
      ++r.failures;
      err << "layersec: scenario " << s.name << " " << row.notes.substr(0, row.notes.find("; CPU %")) << "\n";
      for (std::size_t k = 0; k < outcome.reports.size() && k < outcome.logs.size(); ++k) {
        if (outcome.reports[k].ok && outcome.error.empty()) continue;
        err << "  " << outcome.logs[k] << " (last lines):\n" << file_tail(outcome.logs[k], 15);
      }
    }
    r.rows.push_back(std::move(row));
    r.scenarios.push_back(s);
    return r.rows.back();
  };

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
          sat.stopped = netns_rate_text(hz) + "/s: node failure";
          break;
        }
        if (!j.ok) {
          sat.stopped = netns_rate_text(hz) + "/s: " + j.reason;
          break;
        }
        sat.rate = hz;
      }
      if (!g_interrupted) r.saturation.push_back(sat);
    }
    if (g_interrupted) break;
  }
  if (g_interrupted) err << "\nlayersec: interrupted; nodes terminated, namespaces removed\n";
  return proceed();
}

// Ratios against the unsecured row of the same path.
PhaseOutcome compare_with_baselines(NetnsRun& r) {
  apply_netns_baselines(r.rows, r.scenarios);
  return proceed();
}

// Tables, one block per path and series.
PhaseOutcome print_tables(NetnsRun& r) {
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& out = r.out;
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
      for (const auto& row : r.rows) {
        if (row.topology == topo && row.series == series) subset.push_back(row);
      }
      if (subset.empty()) continue;
      out << "\n[" << topo << "] " << title << "\n";
      write_text_table(out, subset);
    }
  }
  out << "\n";
  return proceed();
}

// One line per rate sweep, also in the run's notes.
PhaseOutcome print_saturation(NetnsRun& r) {
  std::ostream& out = r.out;
  for (const auto& s : r.saturation) {
    std::string line = "saturation [" + netns_topology_name(s.path) + "] " + s.security + " multicast N=2: ";
    line += s.rate ? netns_rate_text(*s.rate) + " events/s" : std::string("below the first step");
    if (!s.stopped.empty()) {
      line += " (stopped at " + s.stopped + ")";
    } else if (s.rate) {
      line += " (every step passed; the sweep's top rate, not the limit)";
    }
    out << line << "\n";
    r.info.notes.push_back(line);
  }
  return proceed();
}

// The goals of issue 8 per path, also in the run's notes.
PhaseOutcome print_goals(NetnsRun& r) {
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& out = r.out;
  for (LinkPath p : nn.paths) {
    const std::string sfx = "@" + path_name(p);
    const std::string topo = netns_topology_name(p);
    const ScenarioResult* h = find_row(r.rows, "hybrid-psk-multicast" + sfx);
    const ScenarioResult* u = find_row(r.rows, "unsecured-multicast" + sfx);
    std::string line = "goal [" + topo + "] Hybrid-PSK multicast p99 within 1.2x of unsecured multicast p99: ";
    if (h && u && h->latency.count && u->latency.count && u->latency.p99 > 0 && u->latency.p50 > 0) {
      const double ratio = h->latency.p99 / u->latency.p99;
      line += netns_fixed(h->latency.p99, 1) + " us vs " + netns_fixed(u->latency.p99, 1) + " us = " + netns_fixed(ratio, 2) +
              "x (p50 " + netns_fixed(h->latency.p50, 1) + " vs " + netns_fixed(u->latency.p50, 1) + " us = " +
              netns_fixed(h->latency.p50 / u->latency.p50, 2) + "x) -> " + netns_goal_verdict(h->latency, u->latency, 1.2) +
              " (paper: 5.5x on the mean)";
    } else {
      line += "not measured";
    }
    out << line << "\n";
    r.info.notes.push_back(line);
    const int n_max = r.max_group;
    const int n_min = *std::min_element(r.groups.begin(), r.groups.end());
    const ScenarioResult* gmax = find_row(r.rows, "group-n" + std::to_string(n_max) + "-hybrid-psk" + sfx);
    const ScenarioResult* gmin = find_row(r.rows, "group-n" + std::to_string(n_min) + "-hybrid-psk" + sfx);
    line = "group [" + topo + "] Hybrid-PSK multicast p99 at N=" + std::to_string(n_max) + " vs N=" +
           std::to_string(n_min) + ": ";
    if (gmax && gmin && gmax != gmin && gmax->latency.count && gmin->latency.count && gmin->latency.p99 > 0 &&
        gmin->latency.p50 > 0) {
      const double ratio = gmax->latency.p99 / gmin->latency.p99;
      line += netns_fixed(gmax->latency.p99, 1) + " us vs " + netns_fixed(gmin->latency.p99, 1) + " us = " + netns_fixed(ratio, 2) +
              "x (p50 " + netns_fixed(gmax->latency.p50 / gmin->latency.p50, 2) +
              "x); issue goal N=64 within 1.2x of N=2: " + netns_goal_verdict(gmax->latency, gmin->latency, 1.2) +
              (n_max < 64 ? " at N=" + std::to_string(n_max) + " (N=64 not run)" : std::string());
    } else {
      line += "not measured";
    }
    out << line << "\n";
    r.info.notes.push_back(line);
  }
  return proceed();
}

// Rows that passed with security drops or timeouts.
PhaseOutcome print_warnings(NetnsRun& r) {
  std::ostream& out = r.out;
  for (const auto& row : r.rows) {
    if (!netns_row_failed(row) && (row.security_rejections || (row.series != "rate" && row.timeouts))) {
      out << "warning: " << row.name << ": " << row.security_rejections << " security drops, " << row.timeouts
          << " timeouts\n";
    }
  }
  return proceed();
}

// JSON / CSV / plots; the exit status.
PhaseOutcome write_run_results(NetnsRun& r) {
  const BenchScenarioOptions& o = r.o;
  std::ostream& out = r.out;
  std::ostream& err = r.err;
  r.status = r.failures ? 1 : 0;
  if (g_interrupted) r.status = 130;
  if (!write_results(
          {.json_path = o.json_path, .out_dir = o.out_dir, .plots = true, .report_sections = o.report_sections},
          r.info, r.rows, out, err))
    r.status = r.status ? r.status : 1;
  if (r.failures) err << "layersec: " << r.failures << " scenario(s) failed\n";
  return proceed();
}

// Keeps the work directory when asked, not temporary or after a failure.
PhaseOutcome clean_up(NetnsRun& r) {
  const NetnsScenarioOptions& nn = r.nn;
  std::ostream& out = r.out;
  const bool keep = nn.keep_work_dir || !r.temp_work || r.failures > 0;
  if (keep) {
    out << "work dir (specs, keys, reports, node logs): " << r.work << "\n";
  } else {
    std::error_code ec;
    fs::remove_all(r.work, ec);
  }
  return proceed();
}

// The run, in order; the first phase that stops ends it.
struct NetnsPhase {
  const char* name;
  PhaseOutcome (*run)(NetnsRun&);
};
constexpr NetnsPhase kNetnsPhases[] = {
    {"check the options", check_options},
    {"prepare the work directory", prepare_work_dir},
    {"describe the run", describe_run},
    {"provision keys", provision_keys},
    {"run the scenarios", run_sweep},
    {"compare with the baselines", compare_with_baselines},
    {"print the tables", print_tables},
    {"print the saturation rates", print_saturation},
    {"print the goals", print_goals},
    {"print warnings", print_warnings},
    {"write the results", write_run_results},
    {"clean up", clean_up},
};

}  // namespace

int run_netns_scenarios(const BenchScenarioOptions& o, const NetnsScenarioOptions& nn, std::ostream& out,
                        std::ostream& err) {
  NetnsRun run(o, nn, out, err);
  for (const NetnsPhase& phase : kNetnsPhases) {
    const PhaseOutcome outcome = phase.run(run);
    if (!outcome.proceed) return outcome.status;
  }
  return run.status;
}

}  // namespace layersec::harness
