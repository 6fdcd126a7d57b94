// The SecOC cost goal of `layersec bench secoc` (issue 19): protect+verify of
// a 64-byte PDU of profiles 1-3 and the vendor profile within 1.15x of the
// two bare context-reusing OpenSSL MAC computations it needs (bare_mac.h),
// measured in the same run.
//
// Method: per profile, `rounds` rounds; each round times `batch`
// protect+verify operations and `batch` pairs of bare MACs back to back (the
// order alternates between rounds) on the thread's CPU clock, so both sides
// see the same machine state. The ratio is the median of the per-round
// ratios; the per-operation figures are the medians of the rounds. On a
// shared machine this paired median moves far less than two separately
// timed figures do (docs/bench.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace layersec::benchrun {

inline constexpr double kSecocGoalRatio = 1.15;
inline constexpr std::size_t kSecocGoalBytes = 64;

struct SecocGoalRow {
  std::string profile;         // profile1, profile2, profile3, vendor
  std::string mac;             // cmac-aes128, cmac-aes256
  double ns_per_op = 0;        // protect+verify, median of the rounds
  double baseline_ns_per_op = 0;  // two bare MACs, median of the rounds
  double ratio = 0;            // median of the per-round ratios
  double ratio_min = 0;        // smallest and largest per-round ratio
  double ratio_max = 0;
  int rounds = 0;
  [[nodiscard]] bool met() const { return ratio <= kSecocGoalRatio; }
};

// Runs the measurement (smoke: 3 short rounds, only proves it runs). Throws
// std::runtime_error if an operation fails.
std::vector<SecocGoalRow> run_secoc_goal(bool smoke);

// Prints the rows and one verdict line per profile ("goal met" / "goal NOT met").
void print_secoc_goal(const std::vector<SecocGoalRow>& rows);

}  // namespace layersec::benchrun
