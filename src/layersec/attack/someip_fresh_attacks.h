// Classes of the SOME/IP + SecOC attack runner beyond the first slice, run
// on the same bed (someip_attack_bed.h) after its A1/A2 classes:
//   A3.switch.read-plaintext, A3.switch.alter   hybrid configurations: the
//       switch holds the MACsec link keys, reads and alters past MACsec
//   A2.replay.after-wrap   short-FV profiles (1 and 3): replay after the
//       transmitted counter bits wrapped
//   A2.sync.{replay,forge,bitflip,holdback}   counter freshness: attacks on
//       the SecOC sync messages; accepted = a sync the subscriber applied
// docs/attack.md says what each does and how its rows read.
#pragma once

#include <vector>

#include "layersec/attack/report.h"
#include "layersec/attack/someip_attack_bed.h"

namespace layersec::attack::someip_bed {

// Appends the rows of the classes above that apply to `info` to `rows`.
void run_fresh_classes(Bed& bed, const ConfigInfo& info, const AttackOptions& options, std::vector<AttackRow>& rows);

}  // namespace layersec::attack::someip_bed
