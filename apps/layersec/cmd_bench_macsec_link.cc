// `layersec bench macsec-link`: TCP and UDP (iperf3) through two real
// `layersec macsec up` links between network namespaces, beside the plain
// veth measured in the same run, with the links' CPU per Gbit/s and the
// ratio (bench/macsec_link_bench.h). Root and iperf3.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "runner.h"
#include "cli_checks.h"
#include "command.h"
#include "layersec/bench/macsec_link_bench.h"

namespace layersec::app {
namespace {

struct Options {
  std::string json_path;
  bench::MacsecLinkBenchOptions bench;
  bool no_tcp = false;
  bool no_udp = false;
  std::string offload = "both";
  std::string rx_ring = "off";
};

void run(Options o) {
  o.bench.tcp = !o.no_tcp;
  if (o.no_udp) o.bench.udp_sizes.clear();
  o.bench.with_offload = o.offload != "off";
  o.bench.without_offload = o.offload != "on";
  o.bench.rx_ring = o.rx_ring == "on";
  const auto rep = bench::run_macsec_link_bench(o.bench);
  bench::write_macsec_link_bench_table(std::cout, rep);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, bench::macsec_link_bench_json(rep));
}

const CommandRegistration reg(58, [](CLI::App& root) {
  auto o = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "macsec-link", "TCP/UDP through two `macsec up` links across namespaces vs the plain veth: Gbit/s, CPU, ratio");
  cmd->add_option("--json", o->json_path, "write {rows, goals, links, options, method, notes} to FILE")
      ->check(kOutputFile);
  cmd->add_option("--seconds", o->bench.seconds, "iperf3 duration per run (default 5)")->check(finite_in(1, 600));
  cmd->add_option("--udp-sizes", o->bench.udp_sizes, "UDP datagram payload sizes in octets, 16..1440 (default 64 512 1400)")
      ->check(whole_in(16, 1440))
      ->expected(1, 8);
  cmd->add_flag("--no-udp", o->no_udp, "skip the UDP runs");
  cmd->add_option("--offload", o->offload,
                  "macsec rows with the TAP offloads (on), with `macsec up --no-offload` (off), or both rounds in "
                  "this run (both, default)")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd->add_option("--rx-ring", o->rx_ring,
                  "the links' lower sockets with a PACKET_MMAP receive ring (on: `macsec up --rx-ring`) or "
                  "recvmmsg batches (off, default)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--workers", o->bench.workers,
                  "every link with `macsec up --workers N` (1..4, default 1; N > 1 with replay_window 4096)")
      ->check(whole_in(1, 4));
  cmd->add_option("--fanout", o->bench.fanout, "with --workers > 1: the links' `macsec up --fanout` (cpu, lb, hash)")
      ->check(CLI::IsMember({"cpu", "lb", "hash"}));
  cmd->add_flag("--no-tcp", o->no_tcp, "skip the TCP runs");
  cmd->add_option("--iperf3", o->bench.iperf3, "the iperf3 program (default: iperf3 on PATH)");
  cmd->add_option("--program", o->bench.program, "the layersec binary to run the links (default: this one)");
  cmd->callback([o] { run(*o); });
});

}  // namespace
}  // namespace layersec::app
