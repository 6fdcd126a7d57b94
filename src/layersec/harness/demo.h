// `layersec demo`: the harness pipeline (docs/harness.md, "One pipeline")
// for the seed paper's evaluation. Specs (scenario.h: the paper's ten
// sub-scenarios, the group-size sweep) -> the simulated runner
// (sim_runner.h) -> rows with their baselines (results.h) -> the terminal
// tables (results_table.h) and the results folder (results_output.h:
// results.json, results.csv, report.md, samples, PNG plots when gnuplot
// exists), then the zonal network section, then report.html
// (report_scenarios.h: every table and chart on one self-contained page).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace layersec::harness {

struct DemoOptions {
  int iterations = 500;
  std::uint64_t seed = 1;
  std::string out_dir = "build/demo-results";
  bool quick = false;        // few iterations, small group sweep (smoke tests)
  bool progress = false;     // progress lines on the error stream
  bool plots = true;
  std::vector<int> group_sizes;  // empty: 1, 2, 4, 8, 16, 32, 64 (quick: 1, 2, 4)
  // `layersec bench tsn --json` results for report.html (report_tsn.h);
  // empty: out_dir/tsn.json when it exists. Read before the run.
  std::string tsn_json;
};

// Runs the paper's ten sub-scenarios and the group-size sweep, prints the
// tables to `out` and writes the results folder. Returns the exit status: 0
// when every scenario ran and every file was written (plots missing is not a
// failure), 1 otherwise, 2 for iterations < 1.
int run_demo(const DemoOptions& options, std::ostream& out, std::ostream& err);

}  // namespace layersec::harness
