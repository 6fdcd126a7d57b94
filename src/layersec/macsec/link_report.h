// What `layersec macsec up` tells the operator about a link's SAs, as pure
// formatting over the configuration and the SecY (no I/O of its own; the
// caller owns the streams):
//   rotation_actions_json   the SA changes of a reload or a retirement, one
//                           JSON object per action (sa_rotation.h)
//   print_link_sas          one line per configured SA (AN, PN, key id)
//   report_pn_resumption    what the PN state said per SA at start-up: a
//                           static SAK used before is warned about, a resumed
//                           receive SA says which PNs it refuses
//   every_key_new           whether the operator vouched that every key is new
// Only key ids (link_config.h key_id) ever appear, never key material.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/sa_rotation.h"
#include "layersec/macsec/secy.h"

namespace layersec::macsec {

// A JSON array with one object per action: {"action", "an"} plus "sci" for
// receive actions, "pn" when non-zero and the detail as "setting" (a changed
// setting), "previous" (the previous encoding AN) or "key_id" (the others).
nlohmann::json rotation_actions_json(const std::vector<RotationAction>& actions);

// Writes "  tx an A pn P key id K[ (encoding)]" per transmit SA, then
// "  rx sci S an A pn P key id K" per receive SA, to `out`.
void print_link_sas(std::ostream& out, const LinkConfig& config);

// After the SecY was built from `config` over a PN store: a note per transmit
// SA that was declared new (`new_key` or its "new_key") but has PN state, a
// warning per transmit SA that resumed after a persisted PN, and a line per
// receive SA that resumed after one (the PNs it now refuses), to `out`.
void report_pn_resumption(std::ostream& out, const SecY& secy, const LinkConfig& config, bool new_key);

// True when `new_key` is set or every transmit and receive SA of `config`
// says "new_key": only then may a missing PN state file be created.
bool every_key_new(const LinkConfig& config, bool new_key);

}  // namespace layersec::macsec
