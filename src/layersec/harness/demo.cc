#include "layersec/harness/demo.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <sstream>

#include "layersec/harness/plots.h"
#include "layersec/harness/scenario_layout.h"

namespace layersec::harness {

namespace {

constexpr std::uint16_t kDemoService = layout::kService;

std::vector<ExtraRows>& extra_rows() {
  static std::vector<ExtraRows> v;
  return v;
}

Progress make_progress(bool enabled, std::ostream& err, std::size_t index, std::size_t total) {
  if (!enabled) return {};
  return [&err, index, total](const ScenarioSpec& s, int done, int all) {
    err << "\r[" << index << "/" << total << "] " << std::left << std::setw(34) << s.name << std::right << " "
        << std::setw(5) << done << "/" << all << std::flush;
    if (done == all) err << "\n";
  };
}

// Runs `specs` in order; on a scenario failure prints it and continues.
// Returns the number of failures.
int run_all(const std::vector<ScenarioSpec>& specs, const std::shared_ptr<const Credentials>& creds, bool progress,
            std::ostream& err, std::vector<ScenarioResult>& rows) {
  int failures = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    try {
      rows.push_back(run_scenario(specs[i], creds, make_progress(progress, err, i + 1, specs.size())));
    } catch (const std::exception& e) {
      err << "\nlayersec: scenario " << specs[i].name << " failed: " << e.what() << "\n";
      ++failures;
    }
  }
  return failures;
}

void apply_group_baselines(std::vector<ScenarioResult>& rows) {
  // Group-size rows: ratio to the unsecured row of the same N.
  for (auto& r : rows) {
    if (r.series != "group-size" || r.security == "none") continue;
    for (const auto& b : rows) {
      if (b.series == "group-size" && b.security == "none" && b.subscribers == r.subscribers && b.latency.count) {
        r.baseline_p99_us = b.latency.p99;
        r.baseline_mean_us = b.latency.mean;
        r.ratio_p99 = r.latency.p99 / b.latency.p99;
        r.ratio_mean = r.latency.mean / b.latency.mean;
      }
    }
  }
  for (auto& r : rows) {
    if (r.series == "group-size" && r.security == "none" && r.latency.count) {
      r.baseline_p99_us = r.latency.p99;
      r.baseline_mean_us = r.latency.mean;
      r.ratio_p99 = 1.0;
      r.ratio_mean = 1.0;
    }
  }
}

}  // namespace

bool write_results_folder(const std::string& dir, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                          bool plots, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    err << "layersec: cannot create " << dir << ": " << ec.message() << "\n";
    return false;
  }
  bool ok = true;
  auto write = [&](const std::string& name, const std::function<void(std::ostream&)>& body) {
    const fs::path p = fs::path(dir) / name;
    std::ofstream f(p);
    if (f) body(f);
    f.flush();
    if (!f) {
      err << "layersec: cannot write " << p.string() << "\n";
      ok = false;
    }
  };
  write("results.json", [&](std::ostream& o) { o << results_json(info, rows).dump(2) << "\n"; });
  write("results.csv", [&](std::ostream& o) { write_csv(o, rows); });
  write("report.md", [&](std::ostream& o) { write_markdown(o, info, rows); });
  // Raw half-RTT samples, one file per scenario, for anyone re-plotting.
  fs::create_directories(fs::path(dir) / "samples", ec);
  for (const auto& r : rows) {
    write("samples/" + r.name + ".txt", [&](std::ostream& o) {
      o << "# " << r.name << ": half-RTT latency per iteration, us (real time, CLOCK_MONOTONIC; timing model "
        << (r.timing_model.empty() ? std::string("unstated") : r.timing_model) << ")\n";
      for (double v : r.samples_us) o << v << "\n";
    });
  }
  out << "results: " << (fs::path(dir) / "results.json").string() << ", results.csv, report.md, samples/\n";
  if (plots) {
    const PlotOutcome p = write_plots(dir, rows);
    if (!p.files.empty()) out << "plots: " << p.files.size() << " PNG files in " << dir << "\n";
    if (!p.message.empty()) out << "plots: " << p.message << "\n";
  }
  return ok;
}

int run_demo(const DemoOptions& o, std::ostream& out, std::ostream& err) {
  const int iterations = o.iterations;
  std::vector<int> sizes = o.group_sizes;
  if (sizes.empty()) sizes = o.quick ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  const int max_n = std::max(2, *std::max_element(sizes.begin(), sizes.end()));

  RunInfo info = start_run_info("demo", o.seed, iterations);
  info.peak_rss_per_scenario = reset_peak_rss();
  info.method = measurement_method();
  info.notes = {
      "Topology: in-process simulated segment (one switch, 1 Gb/s links), not the paper's two VMs with virtio-net "
      "and the kernel macsec driver: our figures are the real CPU time of this implementation's code path, the "
      "paper's (milliseconds) include vsomeip's routing manager, sockets, the kernel and the VM datapath.",
      "MACsec here is layersec's user-space SecY (GCM-AES-128) on both ends of every link (hop by hop, the switch "
      "holds per-link keys); the paper used the Linux kernel driver on one inter-VM link.",
      "SecOC: vendor profile (CMAC-AES-256, 64-bit MAC, 64-bit freshness value, 16 bits transmitted), one key "
      "group for the event and the answers, receivers' freshness provisioned at start (no sync messages).",
      "RSA: kex Mode B (RSA-2048 OAEP key transport, X.509 certificates from a demo CA, publisher RSA-PSS "
      "signature, HMAC key confirmation) carried as SOME/IP requests on the segment; RSA key generation is "
      "provisioning and not timed.",
      "Everything runs on one thread of one process: CPU % is the share of one core the whole network's code "
      "path (all nodes together) would need at the paper's 20 messages/s; RSS is the whole process (all nodes), "
      "not one ECU.",
      "Timing model parallel-ecus (every row here): the measured real time of each piece of work is placed on the "
      "CPU of the node that did it (one per node, one per switch port engine) and latency follows the causal "
      "critical path, so receivers overlap as separate ECUs would. The serial one-thread figure of the same "
      "iterations (every receiver's work after the other's; grows with N) is in serial_one_thread (JSON), "
      "serial_* (CSV) and the 'serial p99' column. The model does not capture contention for memory, caches or "
      "the switch fabric: all nodes share this host's caches, and the shared links are simulated in simulated "
      "time only."};
  out << "layersec demo: the seed paper's ten sub-scenarios on the simulated segment (Table 14)\n"
      << "method: " << info.method << "\n\n";
  if (iterations < 1) {
    err << "layersec: --iterations must be at least 1\n";
    return 2;
  }

  std::shared_ptr<const Credentials> creds;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    creds = Credentials::create(max_n, kDemoService);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    out << "provisioned a demo CA and RSA-2048 certificates (" << std::fixed << std::setprecision(0) << ms
        << " ms, not part of any figure)\n\n"
        << std::defaultfloat;
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return 1;
  }

  std::vector<ScenarioResult> rows;
  int failures = run_all(paper_scenario_specs(iterations, o.seed), creds, o.progress, err, rows);
  apply_baselines(rows, "unsecured-unicast", "unsecured-multicast");
  std::vector<ScenarioResult> groups;
  failures += run_all(group_size_specs(sizes, iterations, o.seed + 1000), creds, o.progress, err, groups);
  apply_group_baselines(groups);

  out << "Paper scenarios (latency = half RTT in us of real time; paper columns are the seed paper's "
         "published ms, Tables 16-19)\n";
  write_text_table(out, rows);
  out << "\nLatency against multicast group size, to the last receiver (paper: Table 21, hybrid PSK, ms)\n";
  write_text_table(out, groups);
  for (const auto& line : group_size_goal_lines(groups)) out << line << "\n";
  out << "\n";
  for (const auto& r : rows) {
    if (r.security_rejections || r.timeouts) {
      out << "warning: " << r.name << ": " << r.security_rejections << " security drops, " << r.timeouts
          << " timeouts during the loop\n";
    }
  }
  rows.insert(rows.end(), groups.begin(), groups.end());
  if (!write_results_folder(o.out_dir, info, rows, o.plots, out, err)) return 1;
  if (failures) {
    err << "layersec: " << failures << " scenario(s) failed\n";
    return 1;
  }
  return 0;
}

void register_bench_extra_rows(ExtraRows extra) { extra_rows().push_back(std::move(extra)); }

std::vector<ScenarioSpec> bench_scenario_specs(const BenchScenarioOptions& o) {
  std::vector<ScenarioSpec> specs;
  const int it = o.iterations;
  std::uint64_t k = 0;
  auto base = [&](std::string name, std::string series, std::string label, Security sec, KeyDistribution keys,
                  int n, bool multicast, std::size_t payload) {
    ScenarioSpec s;
    s.name = std::move(name);
    s.series = std::move(series);
    s.label = std::move(label);
    s.testbed.security = sec;
    s.testbed.keys = keys;
    s.testbed.subscribers = n;
    s.testbed.multicast = multicast;
    s.testbed.payload_bytes = payload;
    s.testbed.seed = o.seed + 10 * (k++);
    s.iterations = it;
    return s;
  };
  std::vector<std::size_t> payloads = o.payloads;
  if (payloads.empty()) payloads = o.quick ? std::vector<std::size_t>{64, 1400} : std::vector<std::size_t>{64, 256, 512, 1024, 1400};
  std::vector<int> groups = o.group_sizes;
  if (groups.empty()) groups = o.quick ? std::vector<int>{2, 8} : std::vector<int>{2, 4, 8, 16, 32, 64};
  std::vector<double> loads = o.load_mbps;
  if (loads.empty()) loads = o.quick ? std::vector<double>{0, 200} : std::vector<double>{0, 100, 400};

  // Payload sweep (unicast): unsecured, SecOC and hybrid at each size.
  for (std::size_t p : payloads) {
    const std::string ps = std::to_string(p);
    specs.push_back(base("payload-" + ps + "-unsecured", "payload", "unsecured, " + ps + " B", Security::kNone,
                         KeyDistribution::kNone, 1, false, p));
    specs.push_back(base("payload-" + ps + "-secoc-psk", "payload", "SecOC-PSK, " + ps + " B", Security::kSecoc,
                         KeyDistribution::kPsk, 1, false, p));
    specs.push_back(base("payload-" + ps + "-hybrid-psk", "payload", "Hybrid-PSK, " + ps + " B", Security::kHybrid,
                         KeyDistribution::kPsk, 1, false, p));
  }
  // SOME/IP-TP: 64 KiB events, segmented by the runtime, reassembled by the subscriber.
  if (o.tp) {
    const std::size_t tp = 65536 - 256;  // leaves room for the SecOC trailer within the runtime's limit
    for (auto [sec, keys, nm] : {std::tuple{Security::kNone, KeyDistribution::kNone, "unsecured"},
                                 std::tuple{Security::kSecoc, KeyDistribution::kPsk, "secoc-psk"},
                                 std::tuple{Security::kHybrid, KeyDistribution::kPsk, "hybrid-psk"}}) {
      auto s = base(std::string("tp-64k-") + nm, "someip-tp", std::string("SOME/IP-TP 64 KiB, ") + nm, sec, keys, 1,
                    false, tp);
      s.iterations = std::max(1, it / 4);
      specs.push_back(std::move(s));
    }
  }
  // Group sizes with a group key distributed by Mode B (kex::GroupKeyManager).
  for (int n : groups) {
    const std::string ns = std::to_string(n);
    specs.push_back(base("group-n" + ns + "-unsecured", "group-size", "unsecured multicast, N=" + ns, Security::kNone,
                         KeyDistribution::kNone, n, true, 64));
    specs.push_back(base("group-n" + ns + "-hybrid-group", "group-size", "hybrid, group key, N=" + ns,
                         Security::kHybrid, KeyDistribution::kGroupModeB, n, true, 64));
  }
  // Background best-effort load towards every subscriber.
  for (double l : loads) {
    if (l <= 0) continue;
    const std::string ls = std::to_string(static_cast<int>(l));
    for (auto [sec, keys, nm] : {std::tuple{Security::kNone, KeyDistribution::kNone, "unsecured"},
                                 std::tuple{Security::kHybrid, KeyDistribution::kPsk, "hybrid-psk"}}) {
      auto s = base("load-" + ls + "mbps-" + nm, "background-load",
                    std::string(nm) + ", multicast N=2, " + ls + " Mb/s best-effort load per subscriber", sec, keys, 2,
                    true, 64);
      s.testbed.background_mbps = l;
      specs.push_back(std::move(s));
    }
  }
  return specs;
}

int run_bench_scenarios(const BenchScenarioOptions& o, std::ostream& out, std::ostream& err) {
  if (o.topology == "netns") {
    err << "layersec: bench scenarios --topology netns is not implemented in this build (it needs root and the "
           "netns harness, harness/someip_bench); use --topology sim\n";
    return 2;
  }
  if (o.topology != "sim") {
    err << "layersec: unknown topology '" << o.topology << "' (sim | netns)\n";
    return 2;
  }
  const auto specs = bench_scenario_specs(o);
  int max_n = 2;
  for (const auto& s : specs) max_n = std::max(max_n, s.testbed.subscribers);
  RunInfo info = start_run_info("bench scenarios", o.seed, o.iterations);
  info.peak_rss_per_scenario = reset_peak_rss();
  info.method = measurement_method();
  info.notes = {"Beyond the paper's operating point: payload sweep, SOME/IP-TP 64 KiB events, group sizes with a "
                "kex::GroupKeyManager group key delivered by Mode B, and best-effort background load (UDP datagrams "
                "from a load host to every subscriber; their processing is measured like any other work and placed on "
                "the subscribers' simulated CPUs, where it delays the iteration's work it overlaps)."};
  out << "layersec bench scenarios --topology sim\nmethod: " << info.method << "\n\n";
  std::shared_ptr<const Credentials> creds;
  try {
    creds = Credentials::create(max_n, kDemoService);
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return 1;
  }
  std::vector<ScenarioResult> rows;
  const int failures = run_all(specs, creds, o.progress, err, rows);
  // Baselines: the unsecured row of the same series and parameter.
  for (auto& r : rows) {
    for (const auto& b : rows) {
      if (b.security != "none" || b.series != r.series || !b.latency.count) continue;
      const bool same = b.payload_bytes == r.payload_bytes && b.subscribers == r.subscribers &&
                        (r.series != "background-load" || b.name.substr(0, b.name.find("mbps")) ==
                                                              r.name.substr(0, r.name.find("mbps")));
      if (!same) continue;
      r.baseline_p99_us = b.latency.p99;
      r.baseline_mean_us = b.latency.mean;
      r.ratio_p99 = r.latency.p99 / b.latency.p99;
      r.ratio_mean = r.latency.mean / b.latency.mean;
    }
  }
  const std::size_t own_rows = rows.size();
  for (const auto& extra : extra_rows()) extra(o, rows);
  // The DTLS fan-out rows come through ExtraRows; over the memory transport
  // their latency is the parallel-ECU figure (harness/dtls_fanout.h), which
  // the converter may not have said.
  for (std::size_t i = own_rows; i < rows.size(); ++i) {
    if (rows[i].timing_model.empty() && rows[i].series == "dtls-fanout" && rows[i].topology == "memory")
      rows[i].timing_model = kParallelEcus;
  }
  write_text_table(out, rows);
  for (const auto& line : group_size_goal_lines(rows)) out << line << "\n";
  if (!o.json_path.empty()) {
    std::ofstream f(o.json_path);
    f << results_json(info, rows).dump(2) << "\n";
    if (!f) {
      err << "layersec: cannot write " << o.json_path << "\n";
      return 1;
    }
    out << "json: " << o.json_path << "\n";
  }
  if (!o.out_dir.empty() && !write_results_folder(o.out_dir, info, rows, true, out, err)) return 1;
  return failures ? 1 : 0;
}

}  // namespace layersec::harness
