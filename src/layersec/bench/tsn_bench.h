// `layersec bench tsn`: Scheduled (ST) and Best-Effort (BE) traffic at once
// between two network namespaces over our links (bench/tsn_bench_link.h), as
// the TSN lab paper ran them: ST UDP, BE iperf3 UDP or TCP, with and without
// MACsec, with and without the time-aware shaper, at an emulated 100 and
// 1000 Mbit/s port. ST comes from our time-triggered generator
// (tsn_st_gen.h: releases phase-locked to the ST window, every frame a
// one-way latency sample on CLOCK_MONOTONIC, which both namespaces read) or,
// with st_source "iperf3", from iperf3 UDP plus a timestamped 200-byte probe.
//
// Schedule (cycle 1 ms on CLOCK_TAI from 0): ST (class 1, PCP 5..7) 600 us,
// then BE (class 0) 400 us. "Without the shaper" is the same port (speed,
// strict priority, queues) with every gate open all the time. The sender's
// first hop tags ST (UDP to ports 5201 and the probe's 5000: VID 10, PCP 5)
// and everything else to the peer (VID 20, PCP 0), clear-tag layout.
//
// Loads: ST at `st_load` of its gate share (default 0.7), BE iperf3 UDP at
// the port's full rate (saturating) or TCP (as fast as it goes); the probe
// sends 200-byte datagrams every 997 us (sweeping the cycle). Figures per
// class (receiver throughput, jitter as iperf3 computes it, loss), beside
// what the port model carries (ideal_mbit_s, tsn::carried_load), ST latency
// p50/p99/max, and the ST bound with its terms apart: bound_network_us
// (tsn::latency_bound + own-class frames ahead) and processing_p99_us
// measured in the run (tsn/pass_through.h). Root, `ip` and iperf3 required.
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
  // The ST stream: "gen", our time-triggered generator (tsn_st_gen.h: every
  // ST frame a latency sample, releases phase-locked to the ST window), or
  // "iperf3" (iperf3 UDP plus the 200-byte probe for latency).
  std::string st_source = "gen";
  std::string iperf3 = "iperf3";
};

// What the generator's listener counted (gen rows only).
struct StGenCounts {
  std::uint64_t sent = 0, received = 0, lost = 0, duplicates = 0, reordered = 0, refused = 0, send_errors = 0;
  std::uint64_t latency_samples = 0;
  std::uint64_t planned_max_ahead = 0;  // own-class frames the plan can put ahead of one (computed)
  double spacing_us = 0, wire_us = 0, tail_slack_us = 0;
  std::optional<double> release_late_p99_us, release_late_max_us;
  // Frames the talker sent in their slot (less than one release spacing
  // after their planned release) and their latency p99: what the path does
  // when the talker itself was on time (a diagnostic; the row's figures
  // and the goal count every frame).
  std::uint64_t on_time_received = 0;
  std::optional<double> on_time_latency_p99_us;
  nlohmann::json refused_by_reason;
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
  // bound_us = bound_network_us + processing_p99_us (ST rows):
  //   bound_network_us  tsn::latency_bound (worst gate wait + blocking frame
  //                     of another class + serialisation) + own-class frames
  //                     ahead x their wire time (gen: computed from the plan;
  //                     iperf3: unbounded, not counted, own_class_ahead null)
  //   processing_p99_us measured in this run: p99 of the sender link's
  //                     TAP -> shaper and model start -> send returned, plus
  //                     the receiving link's lower -> TAP (tsn/pass_through.h)
  std::optional<double> bound_network_us, processing_p99_us;
  std::optional<std::uint64_t> own_class_ahead;
  std::string st_source;  // "gen" or "iperf3": what carried ST in this run
  std::optional<StGenCounts> gen;
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
