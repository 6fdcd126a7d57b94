// The F.disk-full rows of the fault runner (fault_attacks.h): the SecOC state
// file and the MACsec PN state file on a full file system.
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Rows "secoc-state-file" and "macsec-pn-state-file", class F.disk-full.
// Mounts a 64 KiB tmpfs on a mkdtemp directory (root only), fills it, and
// unmounts and removes it before returning; without root or when the mount
// fails each row has attempts = 0 and a note saying why.
[[nodiscard]] std::vector<AttackRow> run_disk_full(const AttackOptions& options);

}  // namespace layersec::attack
