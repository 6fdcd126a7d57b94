// `layersec bench sv` (without --micro): every row of bench_rows.h over the
// paper's eight profiles, printed as three tables (per profile x scheme
// beside the unsecured baseline measured in the same run; paced sending;
// KDC handshakes per ML-KEM set) and returned as one JSON document.
#pragma once

#include <cstddef>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace layersec::sv_io {

struct SvBenchOptions {
  bool smoke = false;      // tiny run (500 frames, 1,000 MACs, 0.01 s pacing, 5 handshakes)
  std::size_t frames = 0;  // frames per row; 0: 100,000 (smoke 500)
  double pacing_s = 0.5;   // paced-sending run per profile (smoke 0.01)
};

// Runs the benchmark, printing the tables to `out` as it goes. Returns
// {rows, loadavg_before, loadavg_after, frames_per_row, mac_iterations,
//  pacing, kdc, smoke, paper_reference}; every secured row carries
// p99_vs_none, its p99 over the "none" row's of the same profile.
nlohmann::json run_sv_bench(const SvBenchOptions& options, std::FILE* out = stdout);

}  // namespace layersec::sv_io
