// The CSV writer of the harness pipeline (docs/harness.md, "One pipeline"):
// result rows (results.h) as results.csv, one flat line per row.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "layersec/harness/results.h"

namespace layersec::harness {

// The header line (no newline): name, series, ..., timing_model,
// serial_mean_us, serial_p99_us.
[[nodiscard]] std::string csv_header();
// The header line, then one line per row (fields quoted where needed).
void write_csv(std::ostream& out, const std::vector<ScenarioResult>& rows);

}  // namespace layersec::harness
