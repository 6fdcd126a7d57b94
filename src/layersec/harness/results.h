// Result rows: the third stage of the harness pipeline (docs/harness.md,
// "One pipeline"). Runners (sim_runner.h, netns_scenarios.h, the DTLS
// fan-out through dtls_fanout_rows.h) make ScenarioResult rows; the
// functions here only complete them (baselines from rows of the same run,
// the group-size goal); the writers (results_json.h, results_csv.h,
// results_table.h, results_markdown.h, plots.h, results_output.h) print
// and store them.
//
// One row per measured scenario, the same layout for `layersec demo` and
// `layersec bench scenarios`. Latency figures are microseconds built from
// work timed on CLOCK_MONOTONIC, combined as the row's timing_model says
// (parallel-ecus: the model's critical-path time; serial-one-thread: elapsed
// time on the one measuring thread; real-threads: elapsed time;
// docs/harness.md). Paper figures are the seed paper's published
// milliseconds, converted only where a ratio needs them, always labelled
// "paper".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layersec/harness/stats.h"

namespace layersec::harness {

// How a row's latency figures relate to the work measured (docs/harness.md):
// every node's work serially on the one measuring thread, or the same
// measured work placed on one simulated CPU per node along the causal
// critical path (net::Simulator CPU attribution). Rows from real threads or
// processes name their own model (e.g. "real-threads").
inline constexpr const char* kSerialOneThread = "serial-one-thread";
inline constexpr const char* kParallelEcus = "parallel-ecus";

struct ScenarioResult {
  std::string name;        // "hybrid-psk-multicast", "group-n8", ...
  std::string series;      // "paper-scenarios", "group-size", "payload", ...
  std::string paper_id;    // "3a-B" when the row reproduces a paper sub-scenario
  std::string label;       // human-readable
  std::string topology = "sim";
  std::string security;    // "none", "secoc", "hybrid", "macsec"
  std::string key_distribution;  // "none", "psk", "rsa-mode-b", "group-mode-b"
  std::string delivery;    // "unicast" or "multicast"
  int subscribers = 1;
  std::size_t payload_bytes = 64;
  int iterations = 0;      // requested
  // The model latency, one_way and samples_us follow (kParallelEcus,
  // kSerialOneThread, or the row's own, e.g. "real-threads"); empty: the tool
  // that made the row did not say (written as null).
  std::string timing_model;
  Summary latency;         // half round trip, us (count = completed iterations)
  Summary one_way;         // publisher notify -> last subscriber's event handler, us
  std::vector<double> samples_us;  // half-RTT samples, in order (for the CDF)
  // The same iterations under kSerialOneThread when timing_model is another
  // model (the testbed measures both in one run).
  std::optional<Summary> serial_latency;
  std::optional<Summary> serial_one_way;
  // SecOC protect + verify time per iteration (one round trip: 1 + 3N calls
  // in the sim), us, summed over all nodes: mean and median (the median is
  // robust against a preempted sample).
  double secoc_path_us = 0;
  double secoc_path_p50_us = 0;
  std::uint64_t secoc_ops_per_iteration = 0;
  double cpu_us_per_iteration = 0; // thread CPU inside the measured windows / iterations
  double cpu_pct = 0;              // cpu_us_per_iteration / pacing, % of one core
  double pacing_ms = 50;           // the paper's pacing (Table 15)
  std::uint64_t rss_kib = 0;       // peak RSS of the process during this scenario
  std::optional<double> baseline_p99_us;
  std::optional<double> baseline_mean_us;
  std::optional<double> ratio_p99;
  std::optional<double> ratio_mean;
  std::optional<double> establishment_ms;  // RSA / group key establishment (wall, once)
  std::uint64_t security_rejections = 0;   // SecOC + MACsec drops during the run (expected 0)
  std::uint64_t timeouts = 0;              // iterations that did not complete
  std::uint64_t frames_on_wire = 0;
  std::string notes;
};

// Facts about the run printed with the results.
struct RunInfo {
  std::string command;      // "demo" / "bench scenarios"
  std::uint64_t seed = 0;
  int iterations = 0;
  std::string build_type;   // CMAKE_BUILD_TYPE of this binary
  std::string started_utc;
  std::string host;
  bool peak_rss_per_scenario = false;
  std::string method;       // one paragraph on how latency was measured
  std::vector<std::string> notes;
  // The options the run was given, as the reports print them ("group sizes",
  // "1 2 4"); filled by the command (report.html's settings).
  std::vector<std::pair<std::string, std::string>> settings;
  std::int64_t started_monotonic_ns = 0;  // monotonic_ns() at start_run_info (the run's duration)
  std::string load_average;               // the machine's load average at start ("" when unknown)
};

// Now in UTC as "2026-11-30T08:00:00Z".
[[nodiscard]] std::string utc_timestamp();

// What a latency under `timing_model` is, in a few words for labels:
// "critical-path time of the parallel-ECU model" (kParallelEcus), "elapsed
// time on one thread" (kSerialOneThread), "elapsed time, <model>" (others,
// e.g. real-threads), "timing model unstated" (empty).
[[nodiscard]] std::string timing_model_text(const std::string& timing_model);

// A RunInfo for a run starting now: command, seed and iterations as given,
// build_type of this binary, started_utc ("2026-11-30T08:00:00Z") and host.
[[nodiscard]] RunInfo start_run_info(std::string command, std::uint64_t seed, int iterations);

// --- baselines: every secured figure beside the unsecured one of the same run ---

// Fills baseline_* and ratio_* of every row from the row named
// `unicast_baseline` (rows whose delivery is "unicast") or
// `multicast_baseline` ("multicast"); a baseline row gets ratio 1. Rows
// without completed iterations, or a missing baseline, are left alone.
void apply_baselines(std::vector<ScenarioResult>& rows, const std::string& unicast_baseline,
                     const std::string& multicast_baseline);
// Group-size rows (series "group-size"): each secured row against the
// unsecured row of the same N; the unsecured rows get ratio 1.
void apply_group_size_baselines(std::vector<ScenarioResult>& rows);
// Sweep rows: each row against the unsecured row of the same series, payload
// and N (background-load rows: also the same load, by the name's
// "load-<rate>mbps" prefix).
void apply_sweep_baselines(std::vector<ScenarioResult>& rows);

// --- the group-size goal ---------------------------------------------------------

// The goal "group-keyed latency at N = max within 1.2x of N = 2" evaluated
// on the group-size rows (series "group-size", security "hybrid"), one entry
// per key distribution and timing model that has an N = 2 row and a larger
// one. The latency judged is the latency to the last receiver, i.e. the
// one-way figure (notify -> the latest subscriber's event callback): the
// half round trip also contains the publisher taking N answers, which grows
// with N under any keying. Judged on mean and p99 (both must be within the
// limit); p50 and the half-RTT ratios are shown beside it.
struct GroupGoal {
  std::string key_distribution;
  std::string timing_model;
  int n_small = 2;
  int n_large = 0;
  double ratio_mean = 0;  // one-way
  double ratio_p50 = 0;
  double ratio_p99 = 0;
  double ratio_half_rtt_mean = 0;
  double ratio_half_rtt_p99 = 0;
  double limit = 1.2;
  bool met = false;
};
[[nodiscard]] std::vector<GroupGoal> group_size_goals(const std::vector<ScenarioResult>& rows);
// One line per goal, e.g. "goal: group-keyed latency at N=64 within 1.2x of
// N=2 (...): mean x1.04, p50 x1.02, p99 x1.10 -> MET (...)" (or "-> NOT
// MET"); beside it, where the rows exist, the DTLS fan-out's growth over the
// same N range. Empty when no group-size rows qualify.
[[nodiscard]] std::vector<std::string> group_size_goal_lines(const std::vector<ScenarioResult>& rows);

}  // namespace layersec::harness
