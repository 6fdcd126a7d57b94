// The table writer of the harness pipeline (docs/harness.md, "One
// pipeline"): result rows (results.h) as the latency table (17 columns:
// scenario, N, model, mean/p50/p95/p99/max us, 1-way p50, serial p99, SecOC
// p50 us/it, CPU %, RSS, x base p99, the paper's mean, p99 and ratio) and
// the key establishment table, in plain text for the terminal or as
// Markdown for report.md (results_markdown.h).
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "layersec/harness/results.h"

namespace layersec::harness {

enum class TableFormat : std::uint8_t { kText, kMarkdown };

// One line per row, columns aligned (text) or a Markdown table.
void write_latency_table(std::ostream& out, const std::vector<ScenarioResult>& rows, TableFormat format);
// The rows with an establishment_ms beside the paper's Table 17 figure;
// writes nothing when no row has one. The text form starts with a blank
// line and its own title.
void write_establishment_table(std::ostream& out, const std::vector<ScenarioResult>& rows, TableFormat format);
// The latency table and the establishment table in text, for the terminal.
void write_text_table(std::ostream& out, const std::vector<ScenarioResult>& rows);

}  // namespace layersec::harness
