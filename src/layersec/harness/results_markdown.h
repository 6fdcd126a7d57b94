// The Markdown writer of the harness pipeline (docs/harness.md, "One
// pipeline"): report.md from the result rows (results.h) and the run's facts.
#pragma once

#include <ostream>
#include <vector>

#include "layersec/harness/results.h"

namespace layersec::harness {

// Sections: the run (start, host, build, seed, iterations), "How the
// figures were measured" (info.method and what every column is), one table
// per series in first-seen order (with its key establishment table), "Goals"
// (group_size_goal_lines) and "Notes" (run notes, then rows' notes).
void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<ScenarioResult>& rows);

}  // namespace layersec::harness
