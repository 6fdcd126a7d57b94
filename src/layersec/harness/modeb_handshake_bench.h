// `layersec keys handshake`: complete in-process Mode B handshakes
// (kex/mode_b.h) between a freshly provisioned publisher and subscriber,
// timed per handshake and per step (no transmission; one core), beside the
// bare KEM operations a handshake contains, measured in the same loop.
// Statistics are harness/stats.h (linearly interpolated percentiles).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <optional>
#include "layersec/harness/stats.h"
#include "layersec/kex/kem.h"

namespace layersec::harness {

// Steps of one handshake, in order (names as reported).
inline constexpr std::array<std::string_view, 4> kModeBSteps = {
    "subscriber request", "publisher validate+encaps+sign", "subscriber verify+decaps", "publisher confirm"};

// Figures of `iterations` timed handshakes (after 5 untimed warm-ups), in us.
struct ModeBHandshakeTiming {
  std::string kem;  // as given, for the report
  int iterations = 0;
  bool rsa = false;  // rsa-*: the baseline is encaps+decaps, else keygen+encaps+decaps
  Summary wall;      // whole handshake, wall clock
  Summary cpu;       // whole handshake, thread CPU time
  Summary baseline;  // bare KEM operations, thread CPU time
  std::array<Summary, kModeBSteps.size()> steps;  // wall clock per step
  std::size_t bytes_on_wire = 0;                  // KeyRequest + KeyDelivery + KeyConfirm
};

// Provisions a CA (P-256) and two identities valid for a day from `now_s`
// (Unix seconds; the subscriber's key is RSA for rsa-* KEMs), then runs the
// handshakes with protocol time injected (now_s + i us). `scheme` must not
// be rsa-15360 and `iterations` must be positive. On failure nullopt and in
// *why the reason (e.g. "handshake failed: <ModeBError>").
[[nodiscard]] std::optional<ModeBHandshakeTiming> time_mode_b_handshakes(kex::KemScheme scheme, std::string kem_name,
                                                                        int iterations, std::int64_t now_s,
                                                                        std::string* why);

// The report printed by `layersec keys handshake` (several lines, each ending in '\n').
[[nodiscard]] std::string format_mode_b_timing(const ModeBHandshakeTiming& t);
// The --json figures: kem, iterations, mean/p50/p95/p99/max_us, cpu_*_us,
// baseline_bare_kem_cpu_p50_us, ratio, bytes, steps {name: {mean_us, p50_us}}.
[[nodiscard]] nlohmann::json mode_b_timing_json(const ModeBHandshakeTiming& t);

}  // namespace layersec::harness
