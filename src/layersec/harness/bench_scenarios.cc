#include "layersec/harness/bench_scenarios.h"

#include <exception>
#include <memory>
#include <sstream>
#include <vector>

#include "layersec/harness/dtls_fanout_rows.h"
#include "layersec/harness/netns_scenarios.h"
#include "layersec/harness/report_tsn.h"
#include "layersec/harness/results.h"
#include "layersec/harness/results_output.h"
#include "layersec/harness/results_table.h"
#include "layersec/harness/sim_runner.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

namespace {

int run_sim(const BenchScenarioOptions& o, std::ostream& out, std::ostream& err) {
  // 1. Specs.
  const std::vector<ScenarioSpec> specs = bench_scenario_specs(o);
  RunInfo info = start_run_info("bench scenarios", o.seed, o.iterations);
  info.peak_rss_per_scenario = reset_peak_rss();
  info.method = measurement_method();
  info.notes = {"Beyond the paper's operating point: payload sweep, SOME/IP-TP 64 KiB events, group sizes with a "
                "kex::GroupKeyManager group key delivered by Mode B, and best-effort background load (UDP datagrams "
                "from a load host to every subscriber; their processing is measured like any other work and placed on "
                "the subscribers' simulated CPUs, where it delays the iteration's work it overlaps)."};
  info.settings = bench_settings(o);
  out << "layersec bench scenarios --topology sim\nmethod: " << info.method << "\n\n";

  // 2. Runners: the simulated segment, then the DTLS fan-out baseline.
  std::shared_ptr<const Credentials> creds;
  try {
    creds = provision_credentials(specs);
  } catch (const std::exception& e) {
    err << "layersec: " << e.what() << "\n";
    return 1;
  }
  SimRun run = run_scenarios(specs, creds, o.progress, err);
  // 3. Rows: each against the unsecured row of the same series and parameter.
  apply_sweep_baselines(run.rows);
  std::vector<ScenarioResult> rows = std::move(run.rows);
  if (o.dtls) {
    for (auto& r : run_fanout_scenario_rows(o, err)) rows.push_back(std::move(r));
  }

  // 4. Writers.
  write_text_table(out, rows);
  for (const auto& line : group_size_goal_lines(rows)) out << line << "\n";
  if (!write_results(
          {.json_path = o.json_path, .out_dir = o.out_dir, .plots = true, .report_sections = o.report_sections}, info,
          rows, out, err))
    return 1;
  return run.failures ? 1 : 0;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> bench_settings(const BenchScenarioOptions& o) {
  auto list = [](const auto& v) {
    std::ostringstream s;
    for (const auto& x : v) s << (s.tellp() > 0 ? " " : "") << x;
    return v.empty() ? std::string("default") : s.str();
  };
  std::vector<std::pair<std::string, std::string>> out = {{"topology", o.topology},
                                                          {"quick", o.quick ? "yes" : "no"},
                                                          {"payloads (bytes)", list(o.payloads)},
                                                          {"group sizes", list(o.group_sizes)}};
  if (o.topology == "sim") {
    out.insert(out.end(), {{"background load (Mb/s per subscriber)", list(o.load_mbps)},
                           {"SOME/IP-TP rows", o.tp ? "yes" : "no (--no-tp)"},
                           {"DTLS fan-out rows", o.dtls ? "yes" : "no (--no-dtls)"}});
  }
  if (!o.json_path.empty()) out.emplace_back("json", o.json_path);
  if (!o.out_dir.empty()) out.emplace_back("results folder", o.out_dir);
  if (!o.tsn_json.empty()) out.emplace_back("bench tsn results", o.tsn_json);
  if (!o.zonal_json.empty()) out.emplace_back("bench zonal results", o.zonal_json);
  return out;
}

int run_bench_scenarios(const BenchScenarioOptions& options, const NetnsScenarioOptions& netns, std::ostream& out,
                        std::ostream& err) {
  if (options.topology != "sim" && options.topology != "netns") {
    err << "layersec: unknown topology '" << options.topology << "' (sim | netns)\n";
    return 2;
  }
  // The bench tsn / zonal results for report.html, read before the run.
  BenchScenarioOptions o = options;
  if (!o.out_dir.empty() || !o.tsn_json.empty() || !o.zonal_json.empty()) {
    auto sections = result_file_sections(
        o.out_dir, {.tsn_json = o.tsn_json, .zonal_json = o.zonal_json, .zonal = true}, out, err);
    if (!sections) return 2;
    o.report_sections = std::move(*sections);
  }
  if (o.topology == "netns") return run_netns_scenarios(o, netns, out, err);
  return run_sim(o, out, err);
}

}  // namespace layersec::harness
