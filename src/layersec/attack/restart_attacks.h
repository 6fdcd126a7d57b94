// Restart attack runner of `layersec attack` (issue 15, classes "R.*"):
// a sender and a receiver of SecOC (vendor profile, counter and timestamp
// freshness), MACsec (GCM-AES-128 and GCM-AES-XPN-128, static SAK) and SV
// (HMAC-SHA256, IEC 62351-6), each end persisted through the project's own
// store (secoc::FileStateStore, macsec::FilePnStore, the SV subscriber's
// sv_io::FileFloorStore; the SV publisher persists nothing: its frameCounter
// starts at the wall clock), in a mkdtemp directory removed at the end. An end is "killed" by destroying its objects with no clean
// shutdown, then rebuilt from its state file.
//
// Classes (one row per configuration and class; attempts = A =
// AttackOptions::attempts unless said):
//   R.sender-restart          A frames, kill + rebuild the sender, A frames:
//                             accepted = FVs / PNs / frameCounters sent again
//                             (reuse; must be 0), legit = delivery after it
//   R.receiver-restart-replay record A frames, kill + rebuild the receiver,
//                             replay the recording before and after the first
//                             new legitimate frame: accepted must be 0
//   R.earlier-run-replay      record a whole run, kill both, a new run from
//                             the persisted state, replay the old run into it
//   R.state-deleted.{sender,receiver}, R.state-rolled-back.{sender,receiver}
//                             (SecOC, MACsec; SV: the receiver only, the
//                             publisher has no state file) delete the
//                             state file or restore a copy taken one restart
//                             earlier, then restart that end: a refusal to
//                             start counts as rejected with the stack's reason
//                             (fail closed, loss allowed); a started sender's
//                             reuses are accepted, and the recording is
//                             replayed into the receiver
// Deterministic from AttackOptions::seed (simulated time only).
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Throws std::runtime_error when a set-up step fails (temp directory, keys).
[[nodiscard]] std::vector<AttackRow> run_restart_attacks(const AttackOptions& options);

}  // namespace layersec::attack
