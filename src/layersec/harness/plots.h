// PNG plots of scenario results, drawn by gnuplot run as a subprocess on a
// generated script (no shell in between). Without gnuplot on PATH nothing is
// drawn and the caller is told why: plots are optional output, never an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "layersec/harness/results.h"
#include "layersec/harness/zonal.h"

namespace layersec::harness {

// Absolute path of `name` found on PATH and executable, or nullopt.
[[nodiscard]] std::optional<std::string> find_program(const std::string& name);

struct PlotOutcome {
  bool gnuplot_found = false;
  std::vector<std::string> files;  // PNGs written
  std::string message;             // why nothing was drawn / what failed
};

// Writes into `dir`:
//   cdf_<name>.png    latency CDF (half RTT) of every row with samples
//   cdf_all.png       the CDFs of `rows` on one chart
//   group_size.png    latency (mean, p99) against subscribers for rows of
//                     series "group-size", with the paper's Table 21 points
// plus the data (plot-data/*.dat) and script (plots.gp) it used.
[[nodiscard]] PlotOutcome write_plots(const std::string& dir, const std::vector<ScenarioResult>& rows);

// Writes zonal.png into `dir`: the farthest ECU's ST worst case and p99
// against hops for shaper on / strict / FIFO, with the analytic bounds (on,
// strict) as lines, log scale; plus plot-data/zonal.dat and zonal.gp (its
// own script, so write_plots' files are untouched).
[[nodiscard]] PlotOutcome write_zonal_plot(const std::string& dir, const ZonalReport& report);

// Runs `argv` (argv[0] looked up on PATH) and waits; returns the exit status
// (or -1 when it could not start). Output goes to the given file if set.
int run_program(const std::vector<std::string>& argv, const std::string& output_file = "");

// True if the file starts with the PNG signature.
[[nodiscard]] bool is_png(const std::string& path);

}  // namespace layersec::harness
