// `layersec bench scenarios --topology sim|netns [--json FILE] [--out DIR]`:
// the scenario harness beyond the paper's single operating point. Same row
// layout as `layersec demo` in both topologies.
//
//   sim    (harness/sim_runner.h) the simulated segment in one process: payloads 64
//          to 1400 bytes, SOME/IP-TP 64 KiB events, multicast groups of 2 to
//          64 subscribers with a group key (kex::GroupKeyManager, delivered by
//          Mode B), best-effort background load, and the DTLS fan-out baseline
//          (harness/dtls_fanout_rows.h, in-process memory transport) beside
//          group-keyed SecOC for the same group sizes, unless --no-dtls.
//   netns  (harness/netns_scenarios.h) every node its own process in its own
//          network namespace joined by a Linux bridge, on the kernel UDP path
//          and the raw AF_PACKET path (--paths): the paper's ten
//          sub-scenarios, payload sweep, group sizes and a rate sweep to
//          saturation, each compared with the unsecured row of the same path.
//          Needs root; the DTLS rows stay sim-only.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/bench_scenarios.h"
#include "layersec/harness/netns_scenarios.h"

namespace layersec::app {
namespace {

const CommandRegistration reg(57, [](CLI::App& root) {
  auto o = std::make_shared<harness::BenchScenarioOptions>();
  auto netns = std::make_shared<harness::NetnsScenarioOptions>();
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* cmd = bench_group(root).add_subcommand(
      "scenarios", "Scenario sweep beyond the paper's operating point: on the simulated segment (payload sizes, "
                   "SOME/IP-TP 64 KiB, group sizes with group keys, background load, DTLS fan-out) or across "
                   "network namespaces (--topology netns, root: the paper's ten, payloads, group sizes, rate "
                   "sweep to saturation, kernel and raw paths)");
  cmd->add_option("--topology", o->topology,
                  "sim (default) | netns (one process per node in its own namespace; needs root)")
      ->check(CLI::IsMember({"sim", "netns"}));
  cmd->add_option("--iterations", o->iterations,
                  "measured iterations per row (default 200; sim TP rows a quarter)")
      ->check(whole_in(1, 1000000));
  cmd->add_option("--seed", o->seed, "simulation seed (default 1)")->check(whole_in(0, ~std::uint64_t{0}));
  cmd->add_option("--json", o->json_path, "write the rows (results.json layout) to FILE")->check(kOutputFile);
  auto* out_opt = cmd->add_option("--out", o->out_dir, "also write a full results folder (csv, report.md, report.html, plots)")
                      ->check(kOutputDir);
  cmd->add_option("--tsn-json", o->tsn_json,
                  "`layersec bench tsn --json` results to show in report.html (default: OUT/tsn.json when it exists)")
      ->check(kRegularFile)
      ->needs(out_opt);
  cmd->add_option("--zonal-json", o->zonal_json,
                  "`layersec bench zonal --json` results to show in report.html (default: OUT/zonal.json when it "
                  "exists)")
      ->check(kRegularFile)
      ->needs(out_opt);
  cmd->add_flag("--quick", o->quick, "fewer sizes (smoke run)");
  cmd->add_option("--payloads", o->payloads, "payload sizes in bytes (default 64 256 512 1024 1400)")
      ->check(whole_in(8, 1400));
  cmd->add_option("--groups", o->group_sizes,
                  "group sizes (default sim: 2 4 8 16 32 64; netns: 2 4 8 16, quick 2 4; 32 and 64 are allowed "
                  "in netns but start that many processes per row)")
      ->check(whole_in(1, 200));
  cmd->add_option("--load", o->load_mbps, "background load per subscriber, Mb/s (default 0 100 400)")
      ->check(finite_in(0.0, 900.0));
  cmd->add_flag("!--no-tp", o->tp, "skip the SOME/IP-TP 64 KiB rows");
  cmd->add_flag("!--no-dtls", o->dtls, "skip the DTLS 1.2 fan-out baseline rows (sim only)");
  cmd->add_option("--paths", *paths, "netns link paths, comma separated: kernel,raw (default both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"kernel", "raw"}));
  cmd->add_option("--work-dir", netns->work_dir,
                  "netns: directory for node specs, key files, reports and node logs (kept; default a "
                  "temporary directory removed after a clean run)")
      ->check(kOutputDir);
  cmd->add_flag("--keep-work-dir", netns->keep_work_dir, "netns: keep the temporary work directory");
  cmd->callback([o, netns, paths] {
    o->progress = ::isatty(STDERR_FILENO) != 0;
    if (!paths->empty()) {
      netns->paths.clear();
      for (const auto& p : *paths) {
        const auto lp = harness::link_path_from_string(p);
        if (lp && std::find(netns->paths.begin(), netns->paths.end(), *lp) == netns->paths.end()) {
          netns->paths.push_back(*lp);
        }
      }
    }
    set_exit_code(harness::run_bench_scenarios(*o, *netns, std::cout, std::cerr));
  });
});

}  // namespace
}  // namespace layersec::app
