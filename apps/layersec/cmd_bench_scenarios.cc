// `layersec bench scenarios --topology sim [--json FILE] [--out DIR]`: the
// scenario harness beyond the paper's single operating point: payloads 64 to
// 1400 bytes, SOME/IP-TP 64 KiB events, multicast groups of 2 to 64
// subscribers with a group key (kex::GroupKeyManager, delivered by Mode B),
// and best-effort background load. Same row layout as `layersec demo`.
// `--topology netns` is refused in this build (see docs/harness.md).
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "layersec/harness/demo.h"

namespace layersec::app {
namespace {

const CommandRegistration reg(57, [](CLI::App& root) {
  auto o = std::make_shared<harness::BenchScenarioOptions>();
  auto* cmd = bench_group(root).add_subcommand(
      "scenarios", "Scenario sweep on the simulated segment: payload sizes, SOME/IP-TP 64 KiB, group sizes "
                   "with group keys, background load");
  cmd->add_option("--topology", o->topology, "sim (default) | netns (not implemented in this build)");
  cmd->add_option("--iterations", o->iterations, "measured iterations per row (default 200; TP rows a quarter)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--seed", o->seed, "simulation seed (default 1)");
  cmd->add_option("--json", o->json_path, "write the rows (results.json layout) to FILE");
  cmd->add_option("--out", o->out_dir, "also write a full results folder (csv, report.md, plots)");
  cmd->add_flag("--quick", o->quick, "fewer sizes (smoke run)");
  cmd->add_option("--payloads", o->payloads, "payload sizes in bytes (default 64 256 512 1024 1400)")
      ->check(CLI::Range(8, 1400));
  cmd->add_option("--groups", o->group_sizes, "group sizes (default 2 4 8 16 32 64)")->check(CLI::Range(1, 200));
  cmd->add_option("--load", o->load_mbps, "background load per subscriber, Mb/s (default 0 100 400)")
      ->check(CLI::Range(0.0, 900.0));
  cmd->add_flag("!--no-tp", o->tp, "skip the SOME/IP-TP 64 KiB rows");
  cmd->callback([o] {
    o->progress = ::isatty(STDERR_FILENO) != 0;
    set_exit_code(harness::run_bench_scenarios(*o, std::cout, std::cerr));
  });
});

}  // namespace
}  // namespace layersec::app
