// Static SAKs handed to the Linux macsec driver (kernel_backend.h): the
// driver owns its PNs and they are not read back, so a key given to it can
// serve one run only. Before the driver sees the configuration, every SA
// starts after its PN record and the record is then marked used up (the
// suite's last PN), so no later run, kernel or user space, reuses its PNs.
// Pure logic over a PnStore (which may do I/O); time plays no part.
#pragma once

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/pn_state.h"

namespace layersec::macsec {

// For every transmit SA (key: `sci`) and receive SA (key: its SC's SCI) of
// `config`: raises sa.pn past the persisted highest PN, then saves the
// suite's last PN as that SA's record. Throws std::runtime_error naming the
// SA's JSON pointer when the store fails, when an SA has no record and
// neither `new_key` nor its "new_key" says the key is new, or when the record
// is already used up; SAs before the failing one may already be consumed
// (which only ever costs PN space, never reuses it).
void consume_pn_state_for_kernel(LinkConfig& config, Sci sci, PnStore& store, bool new_key);

}  // namespace layersec::macsec
