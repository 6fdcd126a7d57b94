// The output stage of the harness pipeline (docs/harness.md, "One
// pipeline"): puts what the writers make (results_json.h, results_csv.h,
// results_markdown.h, plots.h) into files. Every file is written through
// base/file.h's OutputFile: a symlink at the path is refused, never
// followed, and every write, fsync or close error is reported with the path.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "layersec/harness/report_html.h"
#include "layersec/harness/results.h"

namespace layersec::harness {

// Where the results of one run go; an empty path writes nothing there.
struct ResultsOutput {
  std::string json_path;  // results.json layout (results_json) in one file
  std::string out_dir;    // the results folder (write_results_folder)
  bool plots = true;      // PNG plots in the folder when gnuplot exists
  // report.html in the folder (report_scenarios.h). The demo turns it off
  // here and writes the page itself after its zonal section.
  bool html = true;
  // Sections added to report.html after the scenario sections (report_tsn.h).
  std::vector<ReportSection> report_sections;
};

// Writes `text` to `path` (created 0644 or truncated). Throws FileError
// (base/file.h) naming the path and the reason.
void write_text_file(const std::string& path, const std::string& text);

// Writes into `dir` (created if missing): results.json, results.csv,
// report.md, samples/NAME.txt (every half-RTT sample of a row, in order),
// if `html` report.html (report_scenarios.h, with `extra` sections) and, if `plots`, the PNGs and
// their data (plots.h). Says what it wrote on `out`;
// a file that cannot be written is reported on `err` ("layersec: PATH:
// reason") and the others are still written. Returns false when any file
// (not a plot) could not be written.
bool write_results_folder(const std::string& dir, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                          bool plots, std::ostream& out, std::ostream& err, bool html = true,
                          const std::vector<ReportSection>& extra = {});

// The json file ("json: PATH" on `out`), then the folder, as `output` asks.
// Returns false when anything could not be written (reported on `err`).
bool write_results(const ResultsOutput& output, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                   std::ostream& out, std::ostream& err);

}  // namespace layersec::harness
