// The soak runner of `layersec attack` (issue 15, second round): for a
// wall-clock duration, the real receivers — a SOME/IP + SecOC subscriber
// (node::build_stack on net::Simulator, vendor profile, counter freshness
// with sync), a MACsec SecY (GCM-AES-128, replayWindow 8) and an SV
// subscriber (IEC 61850-9-2, HMAC-SHA256 tag) — are fed in process as fast as
// the CPU allows (so above any line rate's saturation by construction) with a
// mix of attack frames (replays, bit flips, injected unprotected or unknown
// frames) and legitimate frames, in round-robin slices. Resident memory
// (/proc/self/statm) is sampled at the start, every second and at the end.
// When the load stops, 10 legitimate messages per receiver must be delivered
// at once.
//
// Rows: layer "soak", class "S.mixed-load", configurations
// "soak-secoc-vendor-counter", "soak-macsec-gcm-aes-128",
// "soak-sv-hmac-sha256"; attempts = attack frames, rejected by the
// receiver's own reasons, legit_delivered/lost (the after-load messages
// included), note: the rates measured and RSS start/max/end in MiB. Not
// deterministic in its counts (they depend on the CPU), only in its choices.
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Runs the soak for `seconds` of wall-clock time (> 0). Throws
// std::runtime_error when a set-up step fails.
[[nodiscard]] std::vector<AttackRow> run_soak(const AttackOptions& options, double seconds);

}  // namespace layersec::attack
