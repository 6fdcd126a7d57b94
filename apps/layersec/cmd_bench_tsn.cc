// `layersec bench tsn`: ST and BE traffic at once between two network
// namespaces over our links with the TSN first hop (bench/tsn_bench.h): with
// and without MACsec, with and without the time-aware shaper, at emulated
// 100 and 1000 Mbit/s ports; iperf3 throughput, jitter and loss per class,
// one-way latency of an ST probe beside the analytic bound, the goals, and
// the TSN lab paper's figures labelled as the paper's. Root and iperf3.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "runner.h"
#include "cli_checks.h"
#include "command.h"
#include "layersec/bench/tsn_bench.h"

namespace layersec::app {
namespace {

struct Options {
  std::string json_path;
  std::vector<std::uint64_t> ports{100, 1000};
  std::string macsec = "both";
  std::string shaper = "both";
  std::string be = "both";
  double seconds = 3;
  double st_load = 0.7;
  std::string realtime = "off";
  std::string st_source = "gen";
};

std::vector<bool> flags(const std::string& v) {
  if (v == "on") return {true};
  if (v == "off") return {false};
  return {false, true};
}

void run(const Options& o) {
  bench::TsnBenchOptions bo;
  bo.ports_mbit = o.ports;
  bo.macsec = flags(o.macsec);
  bo.shaper = flags(o.shaper);
  bo.be_transports = o.be == "both" ? std::vector<std::string>{"udp", "tcp"} : std::vector<std::string>{o.be};
  bo.seconds = o.seconds;
  bo.st_load = o.st_load;
  bo.realtime = flags(o.realtime);
  bo.st_source = o.st_source;
  const auto rep = bench::run_tsn_bench(bo);
  bench::write_tsn_bench_table(std::cout, rep);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, bench::tsn_bench_json(rep));
}

const CommandRegistration reg(58, [](CLI::App& root) {
  auto o = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "tsn", "ST + BE traffic across namespaces: MACsec on/off, 802.1Qbv shaper on/off, 100/1000 Mbit/s ports");
  cmd->add_option("--json", o->json_path, "write {rows, goals, reference, method, notes} to FILE")->check(kOutputFile);
  cmd->add_option("--ports", o->ports, "emulated port speeds in Mbit/s (default 100 1000)")
      ->check(whole_in(10, 10000))
      ->expected(1, 4);
  cmd->add_option("--macsec", o->macsec, "on | off | both (default both)")->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--shaper", o->shaper, "on | off | both (default both; off = every gate open)")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--be", o->be, "BE transport: udp | tcp | both (default both)")
      ->check(CLI::IsMember({"udp", "tcp", "both"}));
  cmd->add_option("--seconds", o->seconds, "iperf3 duration per run (default 3)")->check(finite_in(1, 600));
  cmd->add_option("--st-load", o->st_load, "ST offered load as a fraction of its gate share (default 0.7)")
      ->check(finite_in(0.01, 1));
  cmd->add_option("--realtime", o->realtime,
                  "on | off | both (default off): the links', the probe's and the ST iperf3's threads in SCHED_FIFO")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--st-source", o->st_source,
                  "ST stream: gen (our time-triggered generator, every frame a latency sample; default) | iperf3")
      ->check(CLI::IsMember({"gen", "iperf3"}));
  cmd->callback([o] { run(*o); });
});

}  // namespace
}  // namespace layersec::app
