// `layersec bench someip`: SOME/IP request/response and event latency through
// the runtime, unsecured and SecOC-protected (vendor profile) in the same run,
// beside a bare UDP ping-pong over the same path (issue 4's benchmark).
#include <iostream>
#include <memory>
#include <string>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/someip_bench.h"
#include "layersec/harness/someip_bench_report.h"
#include "runner.h"

namespace layersec::app {
namespace {

struct Options {
  std::string json_path;
  std::string topology = "sim";
  std::size_t iterations = 2000;
  std::size_t warmup = 100;
  std::size_t payload = 64;
  std::size_t rounds = 20;
};

void run(const Options& o) {
  harness::SomeipBenchOptions so;
  so.iterations = o.iterations;
  so.warmup = o.warmup;
  so.payload_bytes = o.payload;
  so.rounds = o.rounds;
  if (o.topology == "sim")
    so.topologies = {harness::SomeipTopology::kSim};
  else if (o.topology == "netns")
    so.topologies = {harness::SomeipTopology::kNetns};
  else
    so.topologies = {harness::SomeipTopology::kSim, harness::SomeipTopology::kNetns};

  harness::write_someip_bench_method(std::cout, so);
  const auto rep = harness::run_someip_bench(so);
  harness::write_someip_bench_report(std::cout, rep);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, harness::someip_bench_json(rep));
}

const CommandRegistration reg(57, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "someip", "SOME/IP request/response and event latency, unsecured vs SecOC vs bare UDP");
  cmd->add_option("--json", opts->json_path, "write {rows, goals, notes, reference} to FILE")->check(kOutputFile);
  cmd->add_option("--topology", opts->topology, "sim | netns | both (default sim; netns needs root)")
      ->check(CLI::IsMember({"sim", "netns", "both"}));
  cmd->add_option("--iterations", opts->iterations, "measured exchanges per row (default 2000)")
      ->check(whole_in(1, 10000000));
  cmd->add_option("--warmup", opts->warmup, "unmeasured exchanges per row (default 100)")->check(whole_in(0, 10000000));
  cmd->add_option("--rounds", opts->rounds,
                  "interleave the rows in this many blocks each (default 20), so load changes hit every row")
      ->check(whole_in(1, 100000));
  cmd->add_option("--payload", opts->payload, "payload bytes (default 64)")->check(whole_in(8, 1400));
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
