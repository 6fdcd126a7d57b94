// The writers of `layersec bench someip` (docs/bench.md): its rows
// (someip_bench.h) as the terminal report and as the --json document.
// Builds text and JSON only; the command puts the JSON into the file.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "layersec/harness/someip_bench.h"

namespace layersec::harness {

// One row: name, topology, measure, iterations, payload_bytes, msgs_per_s,
// cpu_pct, timeouts, secoc_{protected,verified,rejected}, baseline,
// baseline_{mean,p50,p99}_us, ratio_{mean,p50,p99} and the latency fields
// (results_json.h add_latency_fields).
[[nodiscard]] nlohmann::json to_json(const SomeipBenchRow& row);
// One goal: topology, what, limit, ratio_p50, ratio_p99, met_p50, met_p99.
[[nodiscard]] nlohmann::json to_json(const SomeipGoal& goal);
// {rows, goals, notes, reference}; reference carries the vsomeip and
// UDP figures, labelled as not measured by layersec.
[[nodiscard]] nlohmann::json someip_bench_json(const SomeipBenchReport& report);

// What the run measures and how (before the run).
void write_someip_bench_method(std::ostream& out, const SomeipBenchOptions& options);
// The notes, the table (one line per row, with its baseline and ratios), the
// issue's goals (met / NOT met) and the reference figures.
void write_someip_bench_report(std::ostream& out, const SomeipBenchReport& report);

}  // namespace layersec::harness
