#include "layersec/harness/demo.h"

#include <algorithm>
#include <exception>
#include <iomanip>
#include <memory>

#include "layersec/base/file.h"
#include "layersec/harness/plots.h"
#include "layersec/harness/report_scenarios.h"
#include "layersec/harness/report_tsn.h"
#include "layersec/harness/report_zonal.h"
#include "layersec/harness/results.h"
#include "layersec/harness/results_output.h"
#include "layersec/harness/results_table.h"
#include "layersec/harness/scenario.h"
#include "layersec/harness/sim_runner.h"
#include "layersec/harness/stats.h"
#include "layersec/harness/zonal.h"
#include "layersec/harness/zonal_report.h"

namespace layersec::harness {

namespace {

RunInfo demo_run_info(const DemoOptions& o) {
  RunInfo info = start_run_info("demo", o.seed, o.iterations);
  info.peak_rss_per_scenario = reset_peak_rss();
  info.method = measurement_method();
  info.notes = {
      "Topology: in-process simulated segment (one switch, 1 Gb/s links), not the paper's two VMs with virtio-net "
      "and the kernel macsec driver: our figures are built from the measured time of this implementation's code "
      "path (placed on the parallel-ECU model below), the paper's (milliseconds) include vsomeip's routing "
      "manager, sockets, the kernel and the VM datapath.",
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
      "Timing model parallel-ecus (every row here): the measured duration of each piece of work is placed on the "
      "CPU of the node that did it (one per node, one per switch port engine) and latency is the model's "
      "critical-path time along the causal chain, so receivers overlap as separate ECUs would; it is not the "
      "elapsed time of the run. The serial one-thread figure of the same iterations (elapsed time with every "
      "receiver's work after the other's; grows with N) is in serial_one_thread (JSON), serial_* (CSV) and the "
      "'serial p99' column. The model does not capture contention for memory, caches or the switch fabric: all "
      "nodes share this host's caches, and the shared links are simulated in simulated time only."};
  return info;
}

std::string join_numbers(const std::vector<int>& v) {
  std::string s;
  for (int n : v) s += (s.empty() ? "" : " ") + std::to_string(n);
  return s;
}

// Notes the rows whose loop saw security drops or timeouts (expected none).
void write_warnings(std::ostream& out, const std::vector<ScenarioResult>& rows) {
  for (const auto& r : rows) {
    if (r.security_rejections || r.timeouts) {
      out << "warning: " << r.name << ": " << r.security_rejections << " security drops, " << r.timeouts
          << " timeouts during the loop\n";
    }
  }
}

// The zonal network section (docs/tsn.md, "Zonal network (simulated)"):
// hops 1-4 with the shaper on / strict / FIFO and the compromised switch,
// printed, written to zonal.json and drawn as zonal.png; `json` receives
// zonal.json's document for report.html (left null when the sweep threw).
// False on a failure (a property broken or a file not written).
bool run_zonal_section(const DemoOptions& o, std::ostream& out, std::ostream& err, nlohmann::json& json) {
  ZonalSweepOptions zo;
  zo.cycles = o.quick ? 100 : 1000;
  zo.seed = o.seed;
  // Per-node clocks, +-100 ppm: gPTP at the automotive 125 ms, and free-running for contrast.
  zo.clocks = {ZonalClock::kGptp, ZonalClock::kFree};
  ZonalReport rep;
  try {
    rep = run_zonal_sweep(zo);
  } catch (const std::exception& e) {
    err << "layersec: zonal network: " << e.what() << "\n";
    return false;
  }
  out << "\nZonal network (simulated; issue 16 part 3): SOME/IP+SecOC control events as ST across 1-4 MACsec hops "
         "under 80 % camera load; then every node on its own clock (gPTP, free-running)\n";
  write_zonal_report(out, rep);
  bool ok = rep.compromise.accepted == 0;
  for (const auto& r : rep.rows)
    ok = ok && (r.shaper == ZonalShaper::kFifo || r.clock == ZonalClock::kFree || r.st_over_bound == 0);
  if (!ok) err << "layersec: zonal network: an ST event exceeded its bound or an altered event was accepted\n";
  json = zonal_json(rep);
  try {
    OutputFile f(o.out_dir + "/zonal.json");
    f.write(json.dump(2) + "\n");
    f.close();
  } catch (const FileError& e) {
    err << "layersec: cannot write zonal.json: " << e.what() << "\n";
    return false;
  }
  if (o.plots) {
    const PlotOutcome p = write_zonal_plot(o.out_dir, rep);
    if (!p.message.empty()) out << "zonal plot: " << p.message << "\n";
    for (const auto& file : p.files) out << "wrote " << file << "\n";
  }
  return ok;
}

}  // namespace

int run_demo(const DemoOptions& o, std::ostream& out, std::ostream& err) {
  // 1. Specs.
  std::vector<int> sizes = o.group_sizes;
  if (sizes.empty()) sizes = o.quick ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  const std::vector<ScenarioSpec> paper_specs = paper_scenario_specs(o.iterations, o.seed);
  const std::vector<ScenarioSpec> group_specs = group_size_specs(sizes, o.iterations, o.seed + 1000);
  std::vector<ScenarioSpec> all = paper_specs;
  all.insert(all.end(), group_specs.begin(), group_specs.end());

  RunInfo info = demo_run_info(o);
  info.settings = {{"group sizes", join_numbers(sizes)},
                   {"quick", o.quick ? "yes" : "no"},
                   {"gnuplot PNGs", o.plots ? "yes (when gnuplot is installed)" : "no (--no-plots)"},
                   {"results folder", o.out_dir}};
  if (!o.tsn_json.empty()) info.settings.emplace_back("bench tsn results", o.tsn_json);
  out << "layersec demo: the seed paper's ten sub-scenarios on the simulated segment (Table 14)\n"
      << "method: " << info.method << "\n\n";
  if (o.iterations < 1) {
    err << "layersec: --iterations must be at least 1\n";
    return 2;
  }
  // The bench tsn results for report.html, read now: a bad file fails before the run.
  const auto found =
      result_file_sections(o.out_dir, {.tsn_json = o.tsn_json, .zonal_json = "", .zonal = false}, out, err);
  if (!found) return 2;

  // 2. The simulated runner.
  std::shared_ptr<const Credentials> creds;
  try {
    const std::int64_t t0 = monotonic_ns();
    creds = provision_credentials(all);
    const double ms = static_cast<double>(monotonic_ns() - t0) / 1e6;
    out << "provisioned a demo CA and RSA-2048 certificates (" << std::fixed << std::setprecision(0) << ms
        << " ms, not part of any figure)\n\n"
        << std::defaultfloat;
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return 1;
  }
  SimRun paper = run_scenarios(paper_specs, creds, o.progress, err);
  SimRun groups = run_scenarios(group_specs, creds, o.progress, err);

  // 3. Rows: every secured row beside the unsecured one of the same run.
  apply_baselines(paper.rows, "unsecured-unicast", "unsecured-multicast");
  apply_group_size_baselines(groups.rows);

  // 4. Writers: the terminal, then the results folder.
  out << "Paper scenarios (latency = half RTT in us, the parallel-ECU model's critical-path time; paper columns "
         "are the seed paper's published ms, Tables 16-19)\n";
  write_text_table(out, paper.rows);
  out << "\nLatency against multicast group size, to the last receiver (paper: Table 21, hybrid PSK, ms)\n";
  write_text_table(out, groups.rows);
  for (const auto& line : group_size_goal_lines(groups.rows)) out << line << "\n";
  out << "\n";
  write_warnings(out, paper.rows);
  std::vector<ScenarioResult> rows = std::move(paper.rows);
  rows.insert(rows.end(), groups.rows.begin(), groups.rows.end());
  if (!write_results({.json_path = "", .out_dir = o.out_dir, .plots = o.plots, .html = false, .report_sections = {}},
                     info, rows, out, err))
    return 1;
  nlohmann::json zonal;
  const bool zonal_ok = run_zonal_section(o, out, err, zonal);
  // 5. report.html: every table and chart of the run on one page, the zonal section and the
  //    bench tsn results (when given or found) included.
  std::vector<ReportSection> extra;
  if (!zonal.is_null()) extra.push_back(zonal_report_section(zonal));
  extra.insert(extra.end(), found->begin(), found->end());
  if (!write_report_html(o.out_dir, info, rows, extra, out, err) || !zonal_ok) return 1;
  const int failures = paper.failures + groups.failures;
  if (failures) {
    err << "layersec: " << failures << " scenario(s) failed\n";
    return 1;
  }
  return 0;
}

}  // namespace layersec::harness
