// Loss and recovery runner of `layersec attack` (issue 15, classes "L.*"):
// the channels of restart_channel.h without state files (SecOC vendor
// profile with counter freshness and sync, SecOC timestamp freshness, MACsec
// GCM-AES-128, SV HMAC-SHA256), legitimate traffic only, and a switch that
// drops, reorders and duplicates it. Classes (A = AttackOptions::attempts):
//   L.loss-burst-N (N = 1, 10, 100, 1000)  drop N consecutive frames (sync
//       messages inside the burst too), again and again until A frames were
//       dropped (attempts = frames dropped); every frame after a burst the
//       receiver refuses is legit_lost (with its reason in rejected), allowed
//       only for bursts beyond the acceptance window; recovery_ms = the worst
//       simulated time from the first frame after a burst to the first one
//       delivered again
//   L.reorder-in-window  A blocks of 2..W-1 frames delivered shuffled
//       (attempts = blocks): every frame must be delivered
//   L.duplicate  A frames delivered twice, the copy 0..W-1 frames later:
//       accepted (copies delivered) must be 0
// Deterministic from AttackOptions::seed (simulated time only).
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Throws std::runtime_error when a set-up step fails.
[[nodiscard]] std::vector<AttackRow> run_recovery_attacks(const AttackOptions& options);

}  // namespace layersec::attack
