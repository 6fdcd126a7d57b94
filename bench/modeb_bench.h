// Mode B group-key establishment for N subscribers (bench/modeb_bench.cc),
// run by `layersec bench modeb`. See the .cc for what each figure means.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/kex/kem.h"

namespace layersec::modebbench {

struct Options {
  std::vector<kex::KemScheme> schemes;   // empty: rsa-2048, rsa-3072, x25519, ecdh-p256,
                                         // ml-kem-768, x25519+ml-kem-768, ntru-ees613ep1
  std::vector<std::size_t> group_sizes;  // empty: 1, 2, 4, 8, 16, 32, 64
  bool smoke = false;                    // one timed round per (KEM, N)
  int min_rounds = 3;
  int max_rounds = 25;
  double seconds_per_case = 0.5;         // round budget per (KEM, N) after min_rounds
  // Also key the same group over SOME/IP (keymgmt on the simulated segment,
  // one run per case): someip_cpu_us, someip_sim_ms, someip_handshakes, ...
  bool someip = false;
};

// One JSON row per (KEM, N). Throws std::runtime_error if a handshake fails.
nlohmann::json run(const Options& options, std::ostream& log);
// Human-readable tables and the per-subscriber slope.
void print(const nlohmann::json& rows, std::ostream& out);

}  // namespace layersec::modebbench
