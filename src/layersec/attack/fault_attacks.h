// Fault rows of `layersec attack` (issue 15, second round): not an attacker
// but the faults a deployed node meets, on the real code paths, with the
// figures that show whether the stack recovers by itself and never sends a
// counter it could not persist. Rows use layer "fault".
//
//   F.peer-gone-back  the publisher disappears (its host crashes and is
//                     silent past the SD TTL), then comes back rebuilt by
//                     node::build_stack from its persisted SecOC state file:
//                     SD rediscovers, freshness sync resumes, events flow
//                     again without a manual step; recovery_ms = from its
//                     return to the first delivered event (max over cycles)
//   F.link-flap       the subscriber's link goes down (a hook at the switch
//                     drops every frame from or to it) and up again, many
//                     times for random lengths; recovery_ms = max over flaps
//                     of link-up to first delivered event; losses counted
//   F.disk-full       the SecOC state file and the MACsec PN state file on a
//                     full file system (a small tmpfs mounted on a mkdtemp
//                     directory, unmounted and removed at the end):
//                     attempts = sends tried, accepted = messages sent whose
//                     FV/PN was not persisted (must be 0)
//
// The first two run on net::Simulator (simulated time, deterministic from
// AttackOptions::seed) for "secoc-vendor-counter" and
// "hybrid-vendor-macsec-hop" (hop-by-hop MACsec GCM-AES-128 under SecOC).
// F.disk-full needs root to mount; without it the rows say why they were
// skipped (attempts = 0).
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Every fault class above. `options.attempts` bounds the cycles and flaps
// (each costs simulated seconds: at most 3 gone/back cycles and 20 flaps)
// and is the number of sends tried under a full disk. Throws
// std::runtime_error when a set-up step fails (a harness failure, not a row).
[[nodiscard]] std::vector<AttackRow> run_fault_attacks(const AttackOptions& options);

}  // namespace layersec::attack
