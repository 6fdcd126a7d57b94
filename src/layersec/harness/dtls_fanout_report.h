// The writers of `layersec bench dtls` (docs/bench.md): fan-out rows
// (dtls_fanout.h) as the terminal table, printed row by row as the runner
// finishes them, and as the --json document. Builds text and JSON only; the
// command puts the JSON into the file. (The same rows in the scenario
// harness's layout: dtls_fanout_rows.h.)
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/harness/dtls_fanout.h"

namespace layersec::harness {

// The row in the scenario harness's JSON layout (results_json.h key names):
// name, topology, timing_model, iterations, completed, mean_us, stddev_us,
// min_us, p50_us, p95_us, p99_us, max_us, cpu_pct, rss_kib, baseline,
// baseline_p99_us, ratio_p99, subscribers, payload_bytes, serial_one_thread
// (memory: the serial figures, else null), plus n, crypto_ops_per_msg,
// publisher_cpu_us_per_msg, delivered, expected and, for dtls-fanout rows,
// establishment_ms (the handshakes), handshake_ms_*, cipher, protocol,
// group_p99_us and ratio_p99_vs_group.
[[nodiscard]] nlohmann::json to_json(const FanoutRow& row);
// The rows as a JSON array, in order.
[[nodiscard]] nlohmann::json fanout_json(const std::vector<FanoutRow>& rows);

// What the run measures and how, then the table's header line.
void write_fanout_method(std::ostream& out, const FanoutOptions& options);
// One table line (flushed, so a long run shows its progress).
void write_fanout_row(std::ostream& out, const FanoutRow& row);
// "DTLS negotiated: <protocol> <cipher>" from the first DTLS row, if any.
void write_fanout_negotiated(std::ostream& out, const std::vector<FanoutRow>& rows);

}  // namespace layersec::harness
