#include "layersec/bench/macsec_link_bench.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "layersec/base/keyfile.h"
#include "layersec/base/secret.h"
#include "layersec/bench/bench_env.h"
#include "layersec/crypto/kdf.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/sectag.h"
#include "layersec/net/netns.h"

namespace layersec::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTap = "mlb0";
constexpr std::size_t kTcpWrite = 131072;  // iperf3's TCP write size (its default)
constexpr double kTcpGoalGbit = 5;
constexpr double kRatioGoal = 0.5;

double mono_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The last pretty-printed JSON object of a `macsec up` log (its exit
// statistics, which start with a line holding only "{"), or null.
json exit_report(const fs::path& log) {
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  const auto at = text.rfind("\n{\n");
  if (at == std::string::npos) return nullptr;
  json j = json::parse(text.substr(at + 1), nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

std::string log_tail(const fs::path& log) {
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  return t.size() > 2000 ? t.substr(t.size() - 2000) : t;
}

class Bench {
 public:
  explicit Bench(const MacsecLinkBenchOptions& o)
      : o_(o), work_("layersec-macsec-link-bench"), topo_(net::NetnsTopology::pair("mlb")) {}

  MacsecLinkBenchReport run() {
    MacsecLinkBenchReport rep;
    rep.options = o_;
    rep.notes.push_back("load average at the start: " + first_line("/proc/loadavg") + "; " +
                        std::to_string(std::thread::hardware_concurrency()) + " CPUs");
    const std::string plain_b = topo_.node(1).ip.to_string();
    runs("plain", plain_b, {}, rep.rows);
    for (std::size_t i : {0U, 1U}) {
      must(topo_.exec(i, {"ip", "addr", "flush", "dev", topo_.node(i).interface}), "ip addr flush");
    }
    rep.links = json::object();
    for (const bool offload : {true, false}) {
      if (!(offload ? o_.with_offload : o_.without_offload)) continue;
      round(offload, rep);
    }
    for (auto& r : rep.rows) {
      if (r.path != "macsec") continue;
      for (const auto& p : rep.rows) {
        if (p.path == "plain" && p.proto == r.proto && p.bytes == r.bytes && p.gbit_s > 0) r.ratio = r.gbit_s / p.gbit_s;
      }
    }
    rep.notes.push_back("plain: iperf3 between the veth ends before the links start (no AF_PACKET socket on the "
                        "veth); macsec: the same runs between the MACsec TAPs (veth addresses removed, lower link "
                        "isolated as `macsec up` does by default); offload true: the links' TAPs with IFF_VNET_HDR "
                        "offloads (TCP segments up to 64 KiB split and joined in user space), false: `macsec up "
                        "--no-offload` (one TAP read/write per frame); fresh keys and processes per round");
    rep.notes.push_back("cpu_pct: utime+stime of both `macsec up` processes over the run (/proc/PID/stat), percent "
                        "of one core; system_cpu_pct: every core's busy time (/proc/stat), iperf3 and other work "
                        "on the machine included");
    return rep;
  }

 private:
  static void must(int status, const std::string& what) {
    if (status != 0) throw std::runtime_error("bench macsec-link: " + what + " failed (exit " + std::to_string(status) + ")");
  }

  void runs(const std::string& path, const std::string& server_ip, const std::vector<pid_t>& links,
            std::vector<MacsecLinkBenchRow>& rows, std::optional<bool> offload = std::nullopt) {
    // iperf3 appends to its --logfile: every run gets a file of its own.
    const std::string label = offload ? path + (*offload ? "_offload" : "_no_offload") : path;
    if (o_.tcp) rows.push_back(one(path, label, server_ip, "tcp", kTcpWrite, links));
    for (std::size_t size : o_.udp_sizes) rows.push_back(one(path, label, server_ip, "udp", size, links));
    if (offload) {
      for (std::size_t i = rows.size() - (o_.tcp ? 1 : 0) - o_.udp_sizes.size(); i < rows.size(); ++i) {
        rows[i].offload = offload;
      }
    }
  }

  // One round of macsec rows: fresh keys and PN state, a `macsec up` per
  // namespace (with or without --no-offload), the runs, both exit reports.
  void round(bool offload, MacsecLinkBenchReport& rep) {
    const std::string tag = offload ? "offload" : "no_offload";
    write_configs(tag);
    net::ChildProcess a = up(0, tag, offload), b = up(1, tag, offload);
    wait_up(0, a, tag);
    wait_up(1, b, tag);
    address(0, "10.78.0.1", "10.78.0.2", topo_.node(1).mac);
    address(1, "10.78.0.2", "10.78.0.1", topo_.node(0).mac);
    runs("macsec", "10.78.0.2", {a.pid(), b.pid()}, rep.rows, offload);
    const int sa = a.terminate(), sb = b.terminate();
    rep.links[tag] = {{"a", exit_report(work_.path() / (tag + "_a.log"))},
                      {"b", exit_report(work_.path() / (tag + "_b.log"))}};
    if (sa != 0 || sb != 0) {
      throw std::runtime_error("macsec up (" + tag + ") exited " + std::to_string(sa) + "/" + std::to_string(sb) +
                               ":\n" + log_tail(work_.path() / (tag + (sa != 0 ? "_a.log" : "_b.log"))));
    }
  }

  MacsecLinkBenchRow one(const std::string& path, const std::string& label, const std::string& server_ip,
                         const std::string& proto, std::size_t bytes, const std::vector<pid_t>& links) {
    const std::string tag = label + "_" + proto + "_" + std::to_string(bytes);
    const std::string result = (work_.path() / (tag + ".json")).string();
    auto server = topo_.spawn(1, {o_.iperf3, "-s", "-1", "-B", server_ip}, (work_.path() / "server.log").string());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<std::string> argv{o_.iperf3, "-c", server_ip, "-t", std::to_string(o_.seconds), "-J", "--logfile", result};
    if (proto == "udp") {
      for (const std::string& a : {std::string("-u"), std::string("-b"), std::string("0"), std::string("-l"),
                                   std::to_string(bytes)}) {
        argv.push_back(a);
      }
    }
    std::vector<ProcessCpu> cpu0;
    for (pid_t p : links) cpu0.push_back(process_cpu(p).value_or(ProcessCpu{}));
    const auto sys0 = system_cpu();
    const double t0 = mono_s();
    auto client = topo_.spawn(0, argv, (work_.path() / "client.log").string());
    const int status = client.wait();
    const double t1 = mono_s();
    const auto sys1 = system_cpu();
    std::vector<ProcessCpu> cpu1;
    for (pid_t p : links) cpu1.push_back(process_cpu(p).value_or(ProcessCpu{}));
    server.terminate();
    if (status != 0) {
      throw std::runtime_error("bench macsec-link: iperf3 " + tag + " exited " + std::to_string(status) + ": " +
                               log_tail(work_.path() / "client.log") + log_tail(result));
    }
    const IperfResult r = read_iperf(result, proto == "udp");
    MacsecLinkBenchRow row;
    row.path = path;
    row.proto = proto;
    row.bytes = bytes;
    row.seconds = t1 - t0;
    row.gbit_s = r.mbit_s / 1e3;
    row.loss_pct = r.loss_pct;
    if (sys0 && sys1) row.system_cpu_pct = (sys1->busy_s - sys0->busy_s) / row.seconds * 100;
    if (row.gbit_s > 0) row.system_cpu_pct_per_gbit = row.system_cpu_pct / row.gbit_s;
    if (!links.empty()) {
      double user = 0, sys = 0;
      for (std::size_t i = 0; i < links.size(); ++i) {
        user += cpu1[i].user_s - cpu0[i].user_s;
        sys += cpu1[i].sys_s - cpu0[i].sys_s;
      }
      row.cpu_user_pct = user / row.seconds * 100;
      row.cpu_sys_pct = sys / row.seconds * 100;
      row.cpu_pct = *row.cpu_user_pct + *row.cpu_sys_pct;
      if (row.gbit_s > 0) row.cpu_pct_per_gbit = *row.cpu_pct / row.gbit_s;
    }
    return row;
  }

  // Static GCM-AES-128 SAKs (random, 0600 key files), SCIs from the veth
  // MACs (the TAPs take them), new keys: fresh PN state files.
  void write_configs(const std::string& tag) {
    const std::string ak = tag + "_a.key", bk = tag + "_b.key";
    for (const std::string& name : {ak, bk}) {
      SecretBytes key(16);
      if (!crypto::random_bytes(key.mutable_span()).ok()) throw std::runtime_error("bench macsec-link: no random SAK");
      std::string detail;
      if (!write_key_file_hex((work_.path() / name).string(), key.span(), false, &detail).ok()) {
        throw std::runtime_error("bench macsec-link: key file: " + detail);
      }
    }
    const auto sci = [&](std::size_t i) {
      return macsec::sci_text(macsec::Sci::from_parts(topo_.node(i).mac.bytes.data(), 1));
    };
    const auto config = [&](const std::string& tx, const std::string& rx, const std::string& peer,
                            const std::string& pn) {
      return json{{"cipher_suite", "GCM-AES-128"},
                  {"pn_state_file", pn},
                  {"port", 1},
                  {"validate_frames", "strict"},
                  {"replay_protect", true},
                  {"replay_window", o_.workers > 1 ? kWorkersReplayWindow : 0},
                  {"tx", {{"encoding_an", 0}, {"sas", {{{"an", 0}, {"pn", 1}, {"key_file", tx}}}}}},
                  {"rx", {{{"sci", peer}, {"sas", {{{"an", 0}, {"pn", 1}, {"key_file", rx}}}}}}}};
    };
    write_text(work_.path() / (tag + "_a.json"), config(ak, bk, sci(1), tag + "_a.pn-state").dump(2));
    write_text(work_.path() / (tag + "_b.json"), config(bk, ak, sci(0), tag + "_b.pn-state").dump(2));
  }

  net::ChildProcess up(std::size_t i, const std::string& tag, bool offload) {
    const std::string side = i == 0 ? "_a" : "_b";
    std::vector<std::string> argv{program_path(o_.program), "macsec", "up", "--link", topo_.node(i).interface,
                                  "--name", kTap, "--config", (work_.path() / (tag + side + ".json")).string(),
                                  "--new-key"};
    if (!offload) argv.push_back("--no-offload");
    if (o_.rx_ring) argv.push_back("--rx-ring");
    if (o_.workers > 1) {
      argv.push_back("--workers");
      argv.push_back(std::to_string(o_.workers));
      if (!o_.fanout.empty()) {
        argv.push_back("--fanout");
        argv.push_back(o_.fanout);
      }
    }
    return topo_.spawn(i, argv, (work_.path() / (tag + side + ".log")).string());
  }

  void wait_up(std::size_t i, net::ChildProcess& child, const std::string& tag) {
    for (int n = 0; n < 200; ++n) {
      std::string out;
      if (topo_.exec(i, {"ip", "-o", "link", "show", kTap}, &out) == 0 &&
          (out.find(",UP") != std::string::npos || out.find("<UP") != std::string::npos)) {
        return;
      }
      if (!child.running()) {
        throw std::runtime_error("bench macsec-link: macsec up exited:\n" +
                                 log_tail(work_.path() / (tag + (i == 0 ? "_a.log" : "_b.log"))));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("bench macsec-link: the MACsec interface did not come up");
  }

  void address(std::size_t i, const char* ip, const char* peer_ip, const net::MacAddress& peer_mac) {
    must(topo_.exec(i, {"ip", "addr", "add", std::string(ip) + "/24", "dev", kTap}), "ip addr add");
    must(topo_.exec(i, {"ip", "neigh", "replace", peer_ip, "lladdr", peer_mac.to_string(), "dev", kTap, "nud",
                        "permanent"}),
         "ip neigh replace");
  }

  MacsecLinkBenchOptions o_;
  WorkDir work_;
  net::NetnsTopology topo_;
};

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

const MacsecLinkBenchRow* find_row(const MacsecLinkBenchReport& r, const std::string& path, const std::string& proto,
                                   std::size_t bytes) {
  for (const auto& row : r.rows) {
    if (row.path == path && row.proto == proto && row.bytes == bytes) return &row;
  }
  return nullptr;
}

}  // namespace

MacsecLinkBenchReport run_macsec_link_bench(const MacsecLinkBenchOptions& o) {
  std::string why;
  if (!net::netns_available(&why)) throw std::runtime_error("bench macsec-link needs network namespaces: " + why);
  if (net::run_command({o.iperf3, "--version"}) != 0) {
    throw std::runtime_error("bench macsec-link needs iperf3 (" + o.iperf3 + ")");
  }
  if (!(o.seconds >= 1 && o.seconds <= 600)) throw std::runtime_error("--seconds must be in 1..600");
  if (!o.tcp && o.udp_sizes.empty()) throw std::runtime_error("bench macsec-link: nothing to run (no TCP, no UDP size)");
  for (std::size_t s : o.udp_sizes) {
    // The MACsec TAP's MTU is 1468: larger datagrams would be fragmented.
    if (s < 16 || s > 1440) throw std::runtime_error("--udp-sizes: " + std::to_string(s) + " is outside 16..1440");
  }
  Bench b(o);
  return b.run();
}

json macsec_link_bench_json(const MacsecLinkBenchReport& r) {
  json rows = json::array();
  for (const auto& x : r.rows) {
    rows.push_back({{"path", x.path},
                    {"offload", x.offload ? json(*x.offload) : json(nullptr)},
                    {"proto", x.proto},
                    {"bytes", x.bytes},
                    {"seconds", x.seconds},
                    {"gbit_s", x.gbit_s},
                    {"loss_pct", opt(x.loss_pct)},
                    {"cpu_pct", opt(x.cpu_pct)},
                    {"cpu_user_pct", opt(x.cpu_user_pct)},
                    {"cpu_sys_pct", opt(x.cpu_sys_pct)},
                    {"cpu_pct_per_gbit", opt(x.cpu_pct_per_gbit)},
                    {"system_cpu_pct", x.system_cpu_pct},
                    {"system_cpu_pct_per_gbit", opt(x.system_cpu_pct_per_gbit)},
                    {"ratio", opt(x.ratio)}});
  }
  json goals{{"tcp_gbit_s_min", kTcpGoalGbit}, {"tcp_ratio_min", kRatioGoal}};
  if (const auto* t = find_row(r, "macsec", "tcp", kTcpWrite)) {
    goals["tcp_gbit_s"] = t->gbit_s;
    goals["tcp_ratio"] = opt(t->ratio);
    goals["offload"] = t->offload.value_or(false);
    goals["met"] = t->gbit_s >= kTcpGoalGbit && t->ratio && *t->ratio >= kRatioGoal;
  }
  return json{{"rows", std::move(rows)},
              {"goals", std::move(goals)},
              {"links", r.links},
              {"options",
               {{"seconds", r.options.seconds},
                {"tcp", r.options.tcp},
                {"udp_sizes", r.options.udp_sizes},
                {"with_offload", r.options.with_offload},
                {"without_offload", r.options.without_offload},
                {"rx_ring", r.options.rx_ring},
                {"workers", r.options.workers},
                {"fanout", r.options.fanout}}},
              {"method",
               "iperf3 (one stream, TCP and UDP -b 0) between two network namespaces joined by a veth pair: plain "
               "between the veth ends, then through a `layersec macsec up` process on each end (GCM-AES-128, "
               "static SAKs); same run, same machine"},
              {"notes", r.notes}};
}

void write_macsec_link_bench_table(std::ostream& out, const MacsecLinkBenchReport& r) {
  const auto f = [](double v, int p) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(p) << v;
    return s.str();
  };
  const auto fo = [&](const std::optional<double>& v, int p) { return v ? f(*v, p) : std::string("-"); };
  out << "bench macsec-link: iperf3 through two `layersec macsec up` links vs the plain veth, same run ("
      << f(r.options.seconds, 0) << " s per run)\n";
  // Two header lines over the columns below (widths 6 8 9 10 10 8 11 10 10 12 12 14).
  out << "                             macsec     plain           links     links     links     machine     machine          UDP\n";
  out << "proto     bytes  offload    Gbit/s    Gbit/s   ratio      CPU %   usr/sys    %/Gbit      %/Gbit      %/Gbit    loss % m/p\n";
  out << "                                                                                       (macsec)     (plain)\n";
  for (const auto& m : r.rows) {
    if (m.path != "macsec") continue;
    const auto* p = find_row(r, "plain", m.proto, m.bytes);
    const std::string split = fo(m.cpu_user_pct, 0) + "/" + fo(m.cpu_sys_pct, 0);
    const std::string loss = m.loss_pct ? fo(m.loss_pct, 1) + "/" + (p ? fo(p->loss_pct, 1) : "-") : "-";
    out << std::left << std::setw(6) << m.proto << std::right << std::setw(8) << m.bytes << std::setw(9)
        << (m.offload ? (*m.offload ? "on" : "off") : "-") << std::setw(10) << f(m.gbit_s, 2) << std::setw(10) << (p ? f(p->gbit_s, 2) : "-") << std::setw(8) << fo(m.ratio, 2)
        << std::setw(11) << fo(m.cpu_pct, 0) << std::setw(10) << split << std::setw(10) << fo(m.cpu_pct_per_gbit, 1)
        << std::setw(12) << fo(m.system_cpu_pct_per_gbit, 1) << std::setw(12)
        << (p ? fo(p->system_cpu_pct_per_gbit, 1) : "-") << std::setw(14) << loss << "\n";
  }
  if (const auto* t = find_row(r, "macsec", "tcp", kTcpWrite)) {
    out << "goal: TCP >= " << f(kTcpGoalGbit, 0) << " Gbit/s and >= " << f(kRatioGoal, 1) << "x the plain veth"
        << (t->offload.value_or(false) ? " (offload on)" : " (offload off)") << ": "
        << f(t->gbit_s, 2) << " Gbit/s, " << fo(t->ratio, 2) << "x -> "
        << (t->gbit_s >= kTcpGoalGbit && t->ratio && *t->ratio >= kRatioGoal ? "met" : "NOT met") << "\n";
  }
  for (const auto& n : r.notes) out << "note: " << n << "\n";
}

}  // namespace layersec::bench
