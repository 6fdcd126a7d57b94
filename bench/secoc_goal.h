// The SecOC cost goal of `layersec bench secoc` (issue 19): protect+verify of
// a 64-byte PDU of profiles 1-3 and the vendor profile within 1.15x of the
// two bare context-reusing OpenSSL MAC computations it needs (bare_mac.h),
// measured in the same run.
//
// The engine's CMAC is crypto::CbcCmac, which is cheaper per message than
// OpenSSL's EVP_MAC CMAC (crypto/cmac.h), so the goal ratio also counts that
// saving. What the engine adds around its MAC is shown apart: the same rounds
// also time two bare computations of the engine's own MAC (crypto::make_mac)
// over the same DataToAuthenticator, and `framing_ratio` is protect+verify
// over those.
//
// Method: per profile, `rounds` rounds; each round times `batch`
// protect+verify operations, `batch` pairs of bare OpenSSL MACs and `batch`
// pairs of the engine's own MAC back to back (the order rotates between
// rounds) on the thread's CPU clock, so both sides
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
  double own_mac_ns_per_op = 0;   // two bare crypto::make_mac MACs, median of the rounds
  double framing_ratio = 0;       // median of the per-round ours / own-MAC pair ratios
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
