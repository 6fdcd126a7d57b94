// `layersec bench someip`: SOME/IP request/response and event latency through
// the runtime, unsecured and SecOC-protected (vendor profile) in the same run,
// beside a bare UDP ping-pong over the same path (issue 4's benchmark).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/someip_bench.h"
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

  std::cout << "layersec bench someip: SOME/IP runtime latency, unsecured and SecOC (vendor profile:\n"
               "CMAC-AES256, 64-bit MAC, 16-bit truncated FV) beside bare UDP, all measured in this run.\n"
               "method: closed loop, one message in flight, "
            << o.payload << "-byte payload, " << o.iterations << " measured + " << o.warmup
            << " warm-up exchanges per row,\n"
               "  rows interleaved in " << o.rounds << " blocks each.\n"
               "  udp-bare / rr-*: round trip on the client's CLOCK_MONOTONIC; event-*: one way,\n"
               "  server notify() -> client event handler (same machine, same clock).\n"
               "  sim: both runtimes on the in-process simulator, one thread; figures are REAL\n"
               "       wall time of the code path (framing, simulated switch, runtime, SecOC);\n"
               "       simulated link delay is not included.\n"
               "  netns: two network namespaces + veth, server on a thread in the other\n"
               "       namespace, SocketTransport + EventLoop on both sides, kernel UDP.\n\n";
  const auto rep = harness::run_someip_bench(so);
  for (const auto& n : rep.notes) std::cout << "note: " << n << "\n";
  std::printf("%-8s %-16s %-10s %9s %9s %9s %9s %10s  %-16s %7s %7s\n", "topology", "name", "measure", "mean_us",
              "p50_us", "p99_us", "max_us", "msgs/s", "baseline", "x p50", "x p99");
  for (const auto& r : rep.rows) {
    std::printf("%-8s %-16s %-10s %9.2f %9.2f %9.2f %9.2f %10.0f  %-16s", r.topology.c_str(), r.name.c_str(),
                r.measure.c_str(), r.latency.mean, r.latency.p50, r.latency.p99, r.latency.max, r.msgs_per_s,
                r.baseline.empty() ? "-" : r.baseline.c_str());
    if (r.baseline.empty())
      std::printf(" %7s %7s\n", "-", "-");
    else
      std::printf(" %7.3f %7.3f\n", r.ratio_p50, r.ratio_p99);
  }
  std::cout << "\ngoals (issue 4):\n";
  for (const auto& g : rep.goals)
    std::printf("  %-6s %-24s <= %.1fx: p50 %.3fx %s, p99 %.3fx %s\n", g.topology.c_str(), g.what.c_str(), g.limit,
                g.ratio_p50, g.met_p50 ? "met" : "NOT met", g.ratio_p99, g.met_p99 ? "met" : "NOT met");
  std::cout << "reference (the issue's figure, not measured here): vsomeip ~204 us median / 263 us p99\n"
               "round trip between two namespaces on this machine class, bare UDP ~53 / 74 us.\n";
  if (!o.json_path.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : rep.rows) rows.push_back(harness::to_json(r));
    nlohmann::json goals = nlohmann::json::array();
    for (const auto& g : rep.goals) goals.push_back(harness::to_json(g));
    benchrun::write_json(o.json_path, {{"rows", rows},
                                       {"goals", goals},
                                       {"notes", rep.notes},
                                       {"reference",
                                        {{"source", "issue 4 (not measured by layersec)"},
                                         {"vsomeip_rtt_p50_us", 204},
                                         {"vsomeip_rtt_p99_us", 263},
                                         {"udp_rtt_p50_us", 53},
                                         {"udp_rtt_p99_us", 74}}}});
  }
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
