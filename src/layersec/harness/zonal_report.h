// The writers of `layersec bench zonal` and the demo's zonal section
// (zonal.h): the method text, the terminal table and the JSON document.
// Builds text and JSON only; callers put the JSON into a file.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "layersec/harness/zonal.h"

namespace layersec::harness {

// One row: hops, shaper (on/strict/fifo), st_sent, st_lost, st_min_us,
// st_p50_us, st_p99_us, st_max_us, bound_us (null for fifo), planned_us,
// st_over_bound, be_offered_mbit_s, be_throughput_mbit_s, be_dropped,
// transmission_overruns, macsec_drops, streams (per ECU zone).
[[nodiscard]] nlohmann::json to_json(const ZonalRow& row);
// hops, st_sent, read_plaintext, example_read, altered,
// macsec_accepted_at_central, secoc_rejected, accepted.
[[nodiscard]] nlohmann::json to_json(const ZonalCompromise& c);
// {method, options, rows, compromised_switch}.
[[nodiscard]] nlohmann::json zonal_json(const ZonalReport& report);

// What the run does and how (before the run).
void write_zonal_method(std::ostream& out, const ZonalSweepOptions& options);
// The table (one line per hop count and shaper setting) and the
// compromised-switch lines.
void write_zonal_report(std::ostream& out, const ZonalReport& report);

}  // namespace layersec::harness
