// `layersec bench tsn`: Scheduled (ST) and Best-Effort (BE) traffic at once
// between two network namespaces over our links (bench/tsn_bench_link.h), as
// the TSN lab paper ran them: iperf3 UDP for ST, iperf3 UDP or TCP for BE,
// with and without MACsec, with and without the time-aware shaper, at an
// emulated 100 and 1000 Mbit/s port; plus our own timestamped UDP probe in the
// ST class for one-way latency (both namespaces read one CLOCK_MONOTONIC).
//
// Schedule (cycle 1 ms on CLOCK_TAI from 0): ST (class 1, PCP 5..7) 600 us,
// then BE (class 0) 400 us. "Without the shaper" is the same port (speed,
// strict priority, queues) with every gate open all the time. The sender's
// first hop tags ST (UDP to ports 5201 and the probe's 5000: VID 10, PCP 5)
// and everything else to the peer (VID 20, PCP 0), clear-tag layout.
//
// Loads: ST iperf3 UDP at `st_load` of its gate share (default 0.7), BE
// iperf3 UDP at the port's full rate (saturating) or TCP (as fast as it
// goes); the probe sends 200-byte datagrams every 997 us (sweeping the cycle).
// Figures per class from iperf3's JSON (receiver throughput, jitter, loss),
// beside what the port model carries (ideal_mbit_s, tsn::carried_load),
// probe latency p50/p99/max, and the analytic bound of the ST class
// (tsn::latency_bound for the probe's frame, one blocking frame of another
// class, no processing time). Root, `ip` and iperf3 required.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::bench {

struct TsnBenchOptions {
  std::vector<std::uint64_t> ports_mbit{100, 1000};
  std::vector<bool> macsec{false, true};
  std::vector<bool> shaper{false, true};
  std::vector<std::string> be_transports{"udp", "tcp"};
  double seconds = 3;      // iperf3 -t
  double st_load = 0.7;    // ST offered load as a fraction of its gate share
  // Both links' threads and the probe's in SCHED_FIFO (net::set_thread_fifo),
  // and the ST iperf3 client and server (chrt -f; BE iperf3 stays as it is):
  // false, true or both, to tell what our code costs from what waiting for a
  // CPU costs. Throws when SCHED_FIFO is refused.
  std::vector<bool> realtime{false};
  std::string iperf3 = "iperf3";
};

struct TsnBenchRow {
  std::string name;
  std::string cls;        // "ST" or "BE"
  std::string transport;  // "udp" or "tcp"
  bool macsec = false;
  bool shaper = false;
  std::uint64_t port_mbit_s = 0;
  std::string be_transport;  // the BE stream running beside this row's run
  double offered_mbit_s = 0;  // 0 for TCP (unpaced)
  double share_mbit_s = 0;    // gate share x port speed
  // What the port model carries for this class (tsn::carried_load: whole
  // frames per window, headers, the guard band), in iperf3 payload Mbit/s:
  // the figure a perfect shaper would measure.
  double ideal_mbit_s = 0;
  bool realtime = false;      // the run's links and probe ran SCHED_FIFO
  std::string realtime_refused;  // asked for, but a thread was refused SCHED_FIFO: why
  double throughput_mbit_s = 0;
  std::optional<double> jitter_ms, loss_pct;
  std::optional<double> latency_p50_us, latency_p99_us, latency_max_us, bound_us;
  std::uint64_t probe_sent = 0, probe_received = 0;
  nlohmann::json link_stats;  // {sender, receiver}: both links' counters (shaper per class)
};

struct TsnBenchReport {
  std::vector<TsnBenchRow> rows;
  std::vector<std::string> notes;
};

// Runs every combination of the options. Throws std::runtime_error when the
// environment cannot run it (not root, no iperf3, ...), naming what is missing.
TsnBenchReport run_tsn_bench(const TsnBenchOptions& options);

// {"rows": [...], "goals": [...], "reference": {the paper's figures}, "method", "notes"}.
nlohmann::json tsn_bench_json(const TsnBenchReport& report);
// The table, goals and the paper's figures for the console.
void write_tsn_bench_table(std::ostream& out, const TsnBenchReport& report);

}  // namespace layersec::bench
