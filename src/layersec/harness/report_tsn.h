// Sections of report.html from results other commands wrote (docs/harness.md,
// "report.html"): `layersec bench tsn --json FILE` (the TSN first hop across
// network namespaces, bench/tsn_bench.h) and `layersec bench zonal --json
// FILE` (report_zonal.h). Built from the JSON documents, not from the bench
// structs (the harness does not link the bench module): known fields get
// named columns with units and charts, a missing or mistyped field shows as
// "–", never an error.
//
// Where they come from: a file given on the command line (`--tsn-json`,
// `--zonal-json` of `layersec demo` / `bench scenarios`), else `tsn.json` /
// `zonal.json` in the results folder when it exists before the run. Both are
// read when the command starts, so a bad file fails before a long run.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/harness/report_html.h"

namespace layersec::harness {

// The section ("tsn"): the rows (per class, port, MACsec, shaper), the goals
// as met / not-met notes with a highlight, the TSN lab paper's figures beside
// this run's per port (the paper's columns labelled as the paper's), a
// throughput chart (with and without MACsec) and an ST latency chart against
// the analytic bound. `source` names the file in the section's text.
[[nodiscard]] ReportSection tsn_report_section(const nlohmann::json& tsn, const std::string& source = "");

struct ResultFiles {
  std::string tsn_json;    // given: must be readable JSON; empty: DIR/tsn.json when it exists
  std::string zonal_json;  // given: must be readable JSON; empty: DIR/zonal.json when it exists
  bool zonal = true;       // false: the caller makes its own zonal section (the demo)
};

// The sections for report.html in `dir` from `files`, read now. A given
// file that cannot be read (missing, not a regular file, over 16 MiB) or is
// not a JSON object is an error: reported on `err` ("layersec: PATH:
// reason") and nullopt. A file found in `dir` that cannot be used is
// reported on `err` and left out. Says which files it took on `out`.
[[nodiscard]] std::optional<std::vector<ReportSection>> result_file_sections(const std::string& dir,
                                                                             const ResultFiles& files,
                                                                             std::ostream& out, std::ostream& err);

}  // namespace layersec::harness
