// Summary figures of nanosecond samples as the SV tools report them (sv
// publish jitter, bench sv rows): mean, p50, p99, p99.9 and max in
// microseconds.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::sv_io {

// In microseconds; all 0 for no samples.
struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

// Sorts `ns` and takes p-quantiles as the sample at index
// min(n - 1, floor(q * n)) (no interpolation); max is the largest sample.
Percentiles percentiles(std::vector<std::int64_t>& ns);

// {"samples", "mean", "p50", "p99", "p999", "max"} of `ns` (sorts it).
nlohmann::json stats_json(std::vector<std::int64_t>& ns);

}  // namespace layersec::sv_io
