// IEC 61850-9-2 Sampled Values attack runner (`layersec attack`, issue 15):
// one in-memory SV publisher and subscriber on a single stream at an
// IEC 61869-9 profile, frames handed over as bytes with the attacker between
// them, once per security configuration ("sv-unsecured" and each scheme of
// sv/security.h). Every attempt is a frame the real sv::Subscriber parses and
// judges; accepted counts what it delivered as valid samples, rejections use
// the subscriber's own reasons.
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Runs every SV configuration and attack class with `options.attempts`
// attempts per class, deterministically from `options.seed`. Returns one row
// per configuration and class (layer "sv"). Never throws on packet paths.
[[nodiscard]] std::vector<AttackRow> run_sv_attacks(const AttackOptions& options);

}  // namespace layersec::attack
