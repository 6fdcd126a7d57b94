// `layersec bench dtls`: the seed paper's Table 21 comparison, measured here:
// DTLS unicast fan-out (one DTLS 1.2 session per subscriber) against the
// group-keyed equivalent (one SecOC vendor-profile protect + one multicast
// send) and unsecured multicast, for N = 2 .. n-max, over loopback UDP and an
// in-process (memory) transport, all in one run.
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/dtls_fanout.h"
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

void print_row(const harness::FanoutRow& r) {
  std::printf("%-9s %3zu  %-20s %9.1f %9.1f %9.1f %9.1f %9.1f  %6.1f  %8.2f  %7.2f  %6.1f",
              harness::to_string(r.transport), r.n, harness::to_string(r.variant), r.latency.mean,
              r.latency.p50, r.latency.p95, r.latency.p99, r.latency.max, r.crypto_ops_per_msg,
              r.publisher_cpu_us_per_msg, r.ratio_p99, r.cpu_pct);
  if (r.variant == harness::FanoutVariant::kDtlsFanout)
    std::printf("  vs group p99 x%.2f, handshakes %.1f ms (%.2f ms each)", r.ratio_p99_vs_group,
                r.handshake_ms_total, r.handshake_ms_per_session);
  std::printf("\n");
  std::fflush(stdout);
}

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

  std::cout << "layersec bench dtls: DTLS unicast fan-out vs group-keyed SecOC (seed paper 6.5, Table 21)\n"
               "note: Debian 12 ships no DTLS 1.3 library (OpenSSL 3.0 has none), so DTLS 1.2 with\n"
               "      ECDHE-ECDSA-AES128-GCM-SHA256 stands in for DTLS 1.3 TLS_AES_128_GCM_SHA256\n"
               "      (the same AES-128-GCM record protection per subscriber).\n"
               "method: closed loop, one message in flight, "
            << o.payload << "-byte payload, " << o.iterations << " measured + " << o.warmup
            << " warm-up messages per row;\n"
               "        latency = publisher starts sending -> last subscriber has decrypted/verified\n"
               "        (CLOCK_MONOTONIC); every delivery compared byte for byte. DTLS handshakes\n"
               "        are done before measurement and reported separately. loopback: UDP on\n"
               "        127.0.0.1, one thread + socket per subscriber, multicast via lo; memory:\n"
               "        one thread, in-process datagram queues; latency under the parallel-ECU\n"
               "        model: the publisher's sends are serial on its CPU, each subscriber\n"
               "        processes on its own CPU from when its datagram was sent (the serial\n"
               "        one-thread figure is kept in --json as serial_one_thread).\n"
               "        ops = publisher crypto operations per message (counted); pub_cpu = publisher\n"
               "        thread CPU per message for the publish step; ratio = p99 / p99 of\n"
               "        multicast-unsecured at the same N and transport, same run.\n\n";
  std::printf("%-9s %3s  %-20s %9s %9s %9s %9s %9s  %6s  %8s  %7s  %6s\n", "transport", "N", "name", "mean_us",
              "p50_us", "p95_us", "p99_us", "max_us", "ops", "pub_cpu", "ratio", "cpu%");
  std::vector<harness::FanoutRow> rows;
  // Rows are printed as their N completes (baselines filled per N).
  rows = harness::run_fanout_table(fo, [](const harness::FanoutRow& r) { print_row(r); });
  if (!rows.empty()) {
    for (const auto& r : rows)
      if (r.variant == harness::FanoutVariant::kDtlsFanout) {
        std::cout << "\nDTLS negotiated: " << r.protocol << " " << r.cipher << "\n";
        break;
      }
  }
  if (!o.json_path.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows) j.push_back(harness::to_json(r));
    benchrun::write_json(o.json_path, j);
  }
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
