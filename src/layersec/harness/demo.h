// `layersec demo` and `layersec bench scenarios --topology sim`: run a set of
// scenarios, print the tables, and write the results folder
// (results.json, results.csv, report.md, PNG plots when gnuplot exists).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "layersec/harness/results.h"
#include "layersec/harness/scenario.h"

namespace layersec::harness {

struct DemoOptions {
  int iterations = 500;
  std::uint64_t seed = 1;
  std::string out_dir = "build/demo-results";
  bool quick = false;        // few iterations, small group sweep (smoke tests)
  bool progress = false;     // progress lines on the error stream
  bool plots = true;
  std::vector<int> group_sizes;  // empty: 1, 2, 4, 8, 16, 32, 64 (quick: 1, 2, 4)
};

// Runs the paper's ten sub-scenarios and the group-size sweep, writes the
// results folder and prints the tables to `out`. Returns the exit status
// (0 when every scenario ran; plots missing is not a failure).
int run_demo(const DemoOptions& options, std::ostream& out, std::ostream& err);

// Options of `layersec bench scenarios`.
struct BenchScenarioOptions {
  std::string topology = "sim";
  int iterations = 200;
  std::uint64_t seed = 1;
  std::string json_path;          // optional: write results.json-style output here
  std::string out_dir;            // optional: full results folder
  bool quick = false;
  bool progress = false;
  std::vector<std::size_t> payloads;   // empty: 64, 256, 512, 1024, 1400
  std::vector<int> group_sizes;        // empty: 2, 4, 8, 16, 32, 64
  std::vector<double> load_mbps;       // empty: 0, 100, 400
  bool tp = true;                      // SOME/IP-TP 64 KiB rows
};

// Extra rows other harnesses contribute (e.g. the DTLS fan-out baseline);
// each gets the options and appends its rows. Empty by default.
using ExtraRows = std::function<void(const BenchScenarioOptions&, std::vector<ScenarioResult>&)>;
void register_bench_extra_rows(ExtraRows extra);

// Runs the sweep beyond the paper's operating point. Returns the exit status;
// `--topology netns` is refused with a clear message in this build.
int run_bench_scenarios(const BenchScenarioOptions& options, std::ostream& out, std::ostream& err);

// The scenario sets (exposed for tests).
[[nodiscard]] std::vector<ScenarioSpec> bench_scenario_specs(const BenchScenarioOptions& options);

// Writes results.json, results.csv, report.md (and plots if asked) into
// `dir`; reports what it wrote on `out`. Returns false when a file could not
// be written (err says which).
bool write_results_folder(const std::string& dir, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                          bool plots, std::ostream& out, std::ostream& err);

}  // namespace layersec::harness
