// `layersec bench scenarios --topology sim|netns [--json FILE] [--out DIR]`:
// the scenario harness beyond the paper's single operating point. Same row
// layout as `layersec demo` in both topologies.
//
//   sim    (harness/demo.h) the simulated segment in one process: payloads 64
//          to 1400 bytes, SOME/IP-TP 64 KiB events, multicast groups of 2 to
//          64 subscribers with a group key (kex::GroupKeyManager, delivered by
//          Mode B), best-effort background load, and the DTLS fan-out baseline
//          (harness/dtls_fanout.h, in-process memory transport) beside
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
#include "layersec/harness/demo.h"
#include "layersec/harness/dtls_fanout.h"
#include "layersec/harness/netns_scenarios.h"

namespace layersec::app {
namespace {

// A DTLS fan-out table row in the scenario harness's row layout.
harness::ScenarioResult from_fanout(const harness::FanoutRow& f) {
  harness::ScenarioResult r;
  const std::string variant = harness::to_string(f.variant);
  r.name = variant + "-n" + std::to_string(f.n);
  r.series = "dtls-fanout";
  r.label = variant + ", " + std::to_string(f.n) + " subscribers (" + harness::to_string(f.transport) +
            " transport, latency to the last receiver)";
  r.topology = harness::to_string(f.transport);
  r.security = f.variant == harness::FanoutVariant::kDtlsFanout   ? "dtls"
               : f.variant == harness::FanoutVariant::kGroupSecoc ? "secoc"
                                                                    : "none";
  r.key_distribution = f.variant == harness::FanoutVariant::kDtlsFanout   ? "dtls-handshake"
                       : f.variant == harness::FanoutVariant::kGroupSecoc ? "group-psk"
                                                                            : "none";
  r.delivery = f.variant == harness::FanoutVariant::kDtlsFanout ? "unicast" : "multicast";
  r.subscribers = static_cast<int>(f.n);
  r.payload_bytes = f.payload_bytes;
  r.iterations = static_cast<int>(f.iterations);
  r.timing_model = f.timing_model;
  r.latency = f.latency;
  r.one_way = f.latency;  // the fan-out measures one way (publish -> last receiver)
  if (f.latency_serial.count > 0) {
    r.serial_latency = f.latency_serial;
    r.serial_one_way = f.latency_serial;
  }
  r.cpu_us_per_iteration = f.publisher_cpu_us_per_msg;
  r.cpu_pct = f.cpu_pct;
  r.rss_kib = f.rss_kib;
  if (f.baseline_p99_us > 0) {
    r.baseline_p99_us = f.baseline_p99_us;
    r.ratio_p99 = f.ratio_p99;
  }
  if (f.handshake_ms_total > 0) r.establishment_ms = f.handshake_ms_total;
  r.timeouts = f.expected - f.delivered;
  r.notes = "publisher crypto ops per message " + std::to_string(f.crypto_ops_per_msg) +
            "; publisher CPU per message " + std::to_string(f.publisher_cpu_us_per_msg) + " us" +
            (f.protocol.empty() ? std::string() : "; " + f.protocol + " " + f.cipher +
                                                      " (Debian 12 ships no DTLS 1.3 library)");
  return r;
}

const CommandRegistration reg(57, [](CLI::App& root) {
  auto o = std::make_shared<harness::BenchScenarioOptions>();
  auto dtls = std::make_shared<bool>(true);
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
  cmd->add_option("--out", o->out_dir, "also write a full results folder (csv, report.md, plots)")->check(kOutputDir);
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
  cmd->add_flag("!--no-dtls", *dtls, "skip the DTLS 1.2 fan-out baseline rows (sim only)");
  cmd->add_option("--paths", *paths, "netns link paths, comma separated: kernel,raw (default both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"kernel", "raw"}));
  cmd->add_option("--work-dir", netns->work_dir,
                  "netns: directory for node specs, key files, reports and node logs (kept; default a "
                  "temporary directory removed after a clean run)")
      ->check(kOutputDir);
  cmd->add_flag("--keep-work-dir", netns->keep_work_dir, "netns: keep the temporary work directory");
  cmd->callback([o, dtls, netns, paths] {
    o->progress = ::isatty(STDERR_FILENO) != 0;
    if (o->topology == "netns") {
      // The netns sweep has its own runner (run_bench_scenarios is the sim's).
      if (!paths->empty()) {
        netns->paths.clear();
        for (const auto& p : *paths) {
          const auto lp = harness::link_path_from_string(p);
          if (lp && std::find(netns->paths.begin(), netns->paths.end(), *lp) == netns->paths.end()) {
            netns->paths.push_back(*lp);
          }
        }
      }
      set_exit_code(harness::run_netns_scenarios(*o, *netns, std::cout, std::cerr));
      return;
    }
    if (*dtls && o->topology == "sim") {
      harness::register_bench_extra_rows([](const harness::BenchScenarioOptions& opt,
                                            std::vector<harness::ScenarioResult>& rows) {
        harness::FanoutOptions fo;
        fo.transports = {harness::FanoutTransport::kMemory};
        fo.group_sizes.clear();
        if (opt.group_sizes.empty()) {
          fo.group_sizes = opt.quick ? std::vector<std::size_t>{2, 8} : std::vector<std::size_t>{2, 4, 8, 16, 32, 64};
        } else {
          for (int n : opt.group_sizes) fo.group_sizes.push_back(static_cast<std::size_t>(n));
        }
        fo.iterations = static_cast<std::size_t>(opt.iterations);
        std::cerr << "dtls fan-out baseline: OpenSSL DTLS 1.2 (Debian 12 ships no DTLS 1.3 library), "
                     "in-process memory transport\n";
        for (const auto& f : harness::run_fanout_table(fo)) rows.push_back(from_fanout(f));
      });
    }
    set_exit_code(harness::run_bench_scenarios(*o, std::cout, std::cerr));
  });
});

}  // namespace
}  // namespace layersec::app
