// `layersec demo [--iterations 500] [--seed N] [--out DIR] [--quick]`: the
// main job. Runs the seed paper's ten sub-scenarios (unsecured, SecOC-PSK,
// SecOC-RSA, Hybrid-PSK, Hybrid-RSA; unicast and multicast) and a group-size
// sweep on the simulated segment with real SOME/IP, SecOC and MACsec nodes,
// prints the tables beside the paper's published figures and writes
// results.json, results.csv, report.md, raw samples and PNG plots into the
// results folder. See docs/harness.md for what is measured and how.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/demo.h"

namespace layersec::app {
namespace {

struct Options {
  int iterations = 500;
  bool iterations_set = false;
  std::uint64_t seed = 1;
  std::string out = "build/demo-results";
  bool quick = false;
  bool no_plots = false;
  std::vector<int> groups;
  std::string tsn_json;
};

const CommandRegistration reg(5, [](CLI::App& root) {
  auto o = std::make_shared<Options>();
  auto* cmd = root.add_subcommand(
      "demo", "Run the seed paper's ten scenarios (SOME/IP, SecOC, MACsec, RSA Mode B) on the simulated segment "
              "and write results.json/csv, report.md and plots");
  auto* it = cmd->add_option("--iterations", o->iterations, "measured iterations per scenario (default 500)")
                 ->check(whole_in(1, 1000000));
  cmd->add_option("--seed", o->seed, "simulation seed (default 1)")->check(whole_in(0, ~std::uint64_t{0}));
  cmd->add_option("--out", o->out, "results folder: json, csv, report.md, report.html, plots (default build/demo-results)")->check(kOutputDir);
  cmd->add_flag("--quick", o->quick, "smoke run: 20 iterations and group sizes 1, 2, 4 (unless given)");
  cmd->add_flag("--no-plots", o->no_plots, "do not call gnuplot");
  cmd->add_option("--tsn-json", o->tsn_json,
                  "`layersec bench tsn --json` results to show in report.html (default: OUT/tsn.json when it exists)")
      ->check(kRegularFile);
  cmd->add_option("--groups", o->groups, "multicast group sizes for the group-size sweep (default 1 2 4 8 16)")
      ->check(whole_in(1, 200));
  cmd->callback([o, it] {
    harness::DemoOptions d;
    d.iterations = (o->quick && it->count() == 0) ? 20 : o->iterations;
    d.seed = o->seed;
    d.out_dir = o->out;
    d.quick = o->quick;
    d.plots = !o->no_plots;
    d.group_sizes = o->groups;
    d.tsn_json = o->tsn_json;
    d.progress = ::isatty(STDERR_FILENO) != 0;
    set_exit_code(harness::run_demo(d, std::cout, std::cerr));
  });
});

}  // namespace
}  // namespace layersec::app
