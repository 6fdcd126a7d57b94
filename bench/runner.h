// Runs the registered Google Benchmark micro-benchmarks whose names match a
// filter and pairs every "ours" figure with the "baseline" figure of the same
// case measured in the same run. Figures are thread CPU time per operation
// (or the benchmark's own manual time), so preemption on a shared machine
// does not land in one side of a ratio.
//
// Benchmark names follow "<group>/<case...>/<role>/<bytes>", role being
// "ours" or "baseline"; e.g. "crypto/cmac-aes128/ours/64".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::benchrun {

struct PairedFigure {
  std::string group;              // "crypto"
  std::vector<std::string> key;   // case segments, e.g. {"cmac-aes128"}
  std::size_t bytes = 0;
  double ns_per_op = 0;           // ours
  double baseline_ns_per_op = 0;  // baseline; 0 if the case has none
  double ratio = 0;               // ns_per_op / baseline_ns_per_op (0 if no baseline)
};

struct RunOptions {
  std::string filter;      // regex over benchmark names
  double min_time_s = 0.2; // per benchmark
  bool smoke = false;      // tiny min_time, to prove the benchmarks still run
  bool quiet = false;      // suppress the console table of Google Benchmark
};

// Runs the matching benchmarks. Throws std::runtime_error if none matched.
std::vector<PairedFigure> run_paired(const RunOptions& options);

// Prints a table: case, bytes, ours ns, baseline ns, ratio.
void print_table(const std::vector<PairedFigure>& figures, const std::string& ours_label,
                 const std::string& baseline_label);

// Writes `rows` as pretty JSON to `path` ("-" for stdout). Throws on I/O error.
void write_json(const std::string& path, const nlohmann::json& rows);

}  // namespace layersec::benchrun
