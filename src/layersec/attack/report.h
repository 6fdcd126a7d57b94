// The adversarial harness's result rows (`layersec attack`, issue 15): one row
// per configuration and attack class, shared by every layer's attack runner
// (someip_attacks.h, macsec_attacks.h, sv_attacks.h).
//
// A row counts what the attacker tried and what the defender did with it:
//   attempts         frames (or messages) the attacker sent, altered or replayed
//   accepted         attacker frames the receiving application took as valid
//                    (A1 passive rows: captured frames in which protected
//                    plaintext was readable)
//   rejected         attacker frames refused, by the defender's own reason
//                    (counter names such as "secoc_rejected_mac", "icv", ...)
//   legit_delivered  legitimate messages delivered while the attack ran
//   legit_lost       legitimate messages not delivered while it ran
//   recovery_ms      time until legitimate traffic flowed again (classes that
//                    disturb it), in simulated milliseconds; absent otherwise
// A row violates (row_violates) its configuration when it accepted anything
// without `acceptance_expected` (e.g. the unsecured configuration, or
// plaintext under an integrity-only profile, which the row reports but does
// not fail on), or lost legitimate traffic without `loss_allowed`. A
// violating row fails (row_failed) unless it names a known `weakness`: a
// limitation the project documents (docs/attack.md "Known weaknesses") and
// has not fixed yet, which the row demonstrates. Such a row is reported as
// WEAK, listed with its weakness, and fails only in a strict run
// (AttackOptions::strict, `layersec attack --strict`). A row that names a
// weakness but no longer violates (it was fixed) is reported as such. Any
// failing row makes `layersec attack` exit non-zero.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::attack {

struct AttackRow {
  std::string layer;          // "someip", "secoc", "hybrid", "macsec", "sv"
  std::string configuration;  // e.g. "secoc-profile1-counter", "macsec-gcm-aes-128", "sv-62351-hmac"
  std::string attack_class;   // e.g. "A1.passive", "A2.replay.immediate", "A2.bitflip.payload"
  std::uint64_t attempts = 0;
  std::uint64_t accepted = 0;
  std::map<std::string, std::uint64_t> rejected;  // reason -> count
  std::uint64_t legit_delivered = 0;
  std::uint64_t legit_lost = 0;
  std::optional<double> recovery_ms;
  bool acceptance_expected = false;  // accepted > 0 is reported, not a failure
  bool loss_allowed = false;         // legit_lost > 0 is reported, not a failure
  std::string note;                  // one line: what the class does, or why a row is as it is
  std::string weakness;              // a documented, unfixed limitation this row shows (see above)
};

// Options every runner takes.
struct AttackOptions {
  std::uint64_t attempts = 100000;  // per class and configuration (the smoke run uses 1,000)
  std::uint64_t seed = 1;           // every random choice of a runner derives from it
  bool strict = false;              // known weaknesses fail too
};

[[nodiscard]] std::uint64_t total_rejected(const AttackRow& row);
[[nodiscard]] bool row_violates(const AttackRow& row);
[[nodiscard]] bool row_failed(const AttackRow& row, bool strict = false);
[[nodiscard]] bool any_failed(const std::vector<AttackRow>& rows, bool strict = false);

// {"run": {"attempts_per_class", "seed", "strict", "failed", "weaknesses"},
// "rows": [{"layer", "configuration", "class", "attempts", "accepted",
// "rejected": {reason: n}, "rejected_total", "legit_delivered", "legit_lost",
// "recovery_ms" (null when absent), "acceptance_expected", "loss_allowed",
// "violates", "weakness" (null when none), "failed", "note"}]}
[[nodiscard]] nlohmann::json rows_json(const std::vector<AttackRow>& rows, const AttackOptions& options);

// A fixed-width text table, one line per row, then one line per failing row
// saying why, one per known weakness shown, then a summary line.
void write_table(std::ostream& out, const std::vector<AttackRow>& rows, bool strict = false);

}  // namespace layersec::attack
