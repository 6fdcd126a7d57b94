// `layersec bench dtls`: the seed paper's Table 21 comparison, measured here:
// DTLS unicast fan-out (one DTLS 1.2 session per subscriber) against the
// group-keyed equivalent (one SecOC vendor-profile protect + one multicast
// send) and unsecured multicast, for N = 2 .. n-max, over loopback UDP and an
// in-process (memory) transport, all in one run.
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/dtls_fanout.h"
#include "layersec/harness/dtls_fanout_report.h"
#include "runner.h"

namespace layersec::app {
namespace {

struct Options {
  std::size_t n_max = 64;
  std::size_t iterations = 200;
  std::size_t warmup = 20;
  std::size_t payload = 64;
  std::string transport = "both";
  std::string json_path;
};

void run(const Options& o) {
  harness::FanoutOptions fo;
  fo.iterations = o.iterations;
  fo.warmup = o.warmup;
  fo.payload_bytes = o.payload;
  fo.group_sizes.clear();
  for (std::size_t n = 2; n <= o.n_max; n *= 2) fo.group_sizes.push_back(n);
  if (fo.group_sizes.empty()) throw std::invalid_argument("--n-max must be at least 2");
  if (o.transport == "memory")
    fo.transports = {harness::FanoutTransport::kMemory};
  else if (o.transport == "loopback")
    fo.transports = {harness::FanoutTransport::kLoopback};
  else
    fo.transports = {harness::FanoutTransport::kMemory, harness::FanoutTransport::kLoopback};

  harness::write_fanout_method(std::cout, fo);
  // Rows are printed as their N completes (baselines filled per N).
  const std::vector<harness::FanoutRow> rows =
      harness::run_fanout_table(fo, [](const harness::FanoutRow& r) { harness::write_fanout_row(std::cout, r); });
  harness::write_fanout_negotiated(std::cout, rows);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, harness::fanout_json(rows));
}

const CommandRegistration reg(56, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "dtls", "DTLS 1.2 unicast fan-out vs group-keyed SecOC multicast for N = 2..n-max (Table 21)");
  cmd->add_option("--n-max", opts->n_max, "largest group size; N doubles from 2 (default 64)")
      ->check(whole_in(2, 512));
  cmd->add_option("--iterations", opts->iterations, "measured messages per row (default 200)")
      ->check(whole_in(1, 1000000));
  cmd->add_option("--warmup", opts->warmup, "unmeasured messages per row (default 20)")->check(whole_in(0, 1000000));
  cmd->add_option("--payload", opts->payload, "payload bytes (default 64, as the paper)")->check(whole_in(8, 1200));
  cmd->add_option("--transport", opts->transport, "memory | loopback | both (default both)")
      ->check(CLI::IsMember({"memory", "loopback", "both"}));
  cmd->add_option("--json", opts->json_path, "write the rows (scenario harness layout) to FILE")->check(kOutputFile);
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
