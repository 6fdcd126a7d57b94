// Scenario specs: the first stage of the harness pipeline (docs/harness.md,
// "One pipeline"). A spec says what to build and run (security, keys,
// subscribers, payload, seed, iterations) and how to name the row it makes;
// it runs nothing. The sets here are the demo's (the paper's ten
// sub-scenarios, the group-size sweep) and `layersec bench scenarios`'s
// (payload, SOME/IP-TP, group keys, background load). The runners take
// them: harness/sim_runner.h on the simulated segment,
// harness/netns_scenarios.h across network namespaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/harness/report_html.h"
#include "layersec/harness/testbed.h"

namespace layersec::harness {

// One scenario: a testbed and its closed loop. Pure data.
struct ScenarioSpec {
  std::string name;
  std::string series;
  std::string paper_id;  // empty unless it reproduces a paper sub-scenario
  std::string label;
  TestbedOptions testbed;
  int iterations = 500;
  int warmup = 10;       // unmeasured iterations first (caches, first-use allocation)
  Duration pacing = Duration::milliseconds(50);  // simulated time between iterations
  Duration timeout = Duration::seconds(1);       // simulated time per iteration
};

// The paper's five configurations (Table 14: 1, 2a, 2b, 3a, 3b), each run
// unicast (sub-scenario A) and multicast (B).
struct PaperConfiguration {
  const char* id;     // "1", "2a", ...
  const char* name;   // "unsecured", "secoc-psk", ...
  const char* label;  // "Unsecured", "SecOC-PSK", ...
  Security security;
  KeyDistribution keys;
};
[[nodiscard]] const std::vector<PaperConfiguration>& paper_configurations();

// The paper's ten sub-scenarios (Table 14), in its order: 1-A, 1-B, 2a-A, ...
// Unicast = 1 subscriber, multicast = 2 subscribers on a multicast eventgroup.
// Seeds seed, seed + 1, ... in that order.
[[nodiscard]] std::vector<ScenarioSpec> paper_scenario_specs(int iterations, std::uint64_t seed,
                                                             std::size_t payload_bytes = 64);
// Hybrid-PSK and unsecured multicast at each group size (series "group-size";
// names "group-hybrid-psk-nN" / "group-unsecured-nN"; seeds seed + 100, ...).
// run_scenario reports them, like every testbed row, under the parallel-ECU
// timing model; their latency to the last receiver is the one_way summary.
[[nodiscard]] std::vector<ScenarioSpec> group_size_specs(const std::vector<int>& sizes, int iterations,
                                                         std::uint64_t seed, bool hybrid_only = false);

// Options of `layersec bench scenarios`: what to sweep (both runners read
// them), which runner, and where the writers put the results.
struct BenchScenarioOptions {
  std::string topology = "sim";        // "sim" | "netns"
  int iterations = 200;
  std::uint64_t seed = 1;
  std::string json_path;               // optional: results.json layout written here
  std::string out_dir;                 // optional: full results folder
  bool quick = false;
  bool progress = false;
  std::vector<std::size_t> payloads;   // empty: 64, 256, 512, 1024, 1400
  std::vector<int> group_sizes;        // empty: 2, 4, 8, 16, 32, 64
  std::vector<double> load_mbps;       // empty: 0, 100, 400
  bool tp = true;                      // SOME/IP-TP 64 KiB rows
  bool dtls = true;                    // sim: the DTLS fan-out baseline rows (harness/dtls_fanout_rows.h)
  // report.html's sections from other commands' results (report_tsn.h):
  // given files, else tsn.json / zonal.json found in out_dir; read by
  // run_bench_scenarios before the run into report_sections.
  std::string tsn_json;
  std::string zonal_json;
  std::vector<ReportSection> report_sections;
};

// The sim sweep of `bench scenarios`, in run order: payload sweep (unicast;
// unsecured, SecOC-PSK, Hybrid-PSK at each size), SOME/IP-TP 64 KiB events
// (a quarter of the iterations), group sizes with a Mode B group key, and
// background load (rates above 0). Seeds options.seed + 10 k for the k-th spec.
[[nodiscard]] std::vector<ScenarioSpec> bench_scenario_specs(const BenchScenarioOptions& options);

// The largest subscriber count of `specs`, at least 2: what the RSA and
// group-key credentials must cover (Credentials::create).
[[nodiscard]] int max_subscribers(const std::vector<ScenarioSpec>& specs);

}  // namespace layersec::harness
