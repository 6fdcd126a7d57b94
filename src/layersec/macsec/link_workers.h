// `layersec macsec up --workers N` (N = 2..4, static SAKs, user back end):
// the link spread over N threads (docs/macsec_link.md, "Workers").
//
//   TAP       one interface with IFF_MULTI_QUEUE, one queue per worker: the
//             kernel picks the queue of a frame it sends by flow.
//   lower     one AF_PACKET socket per worker, all in one PACKET_FANOUT
//             group (mode "cpu" by default, "lb" or "hash"): each received
//             frame goes to one worker.
//   worker    its own thread and net::EventLoop, buffers, TapLink and SecY
//             (its own cipher contexts: no EVP context is shared between
//             threads) and link / SecY counters.
//   shared    each SA's transmit PN allocation and receive replay state
//             (shared_pn_state.h WorkerPnState) with the PN state file: no
//             PN is handed out twice, a frame replayed to several workers is
//             accepted once, the file always covers every PN any worker may
//             use or accept (a block at a time; the exact values at exit).
//
// The main thread keeps the signals, the housekeeping (PN state ticks, "new
// SA needed"), the periodic statistics (summed over the workers from the
// snapshots each worker takes on its own thread, plus "workers": per worker)
// and the exit report. SIGHUP is refused with a JSON line (no SA switching
// at run time with workers). Refused at start-up (run_link): --tsn, --ptp,
// --mka, --rx-ring, --realtime and --backend kernel with --workers > 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_runner.h"

namespace layersec::macsec::runner {

// The workers' combined statistics from one snapshot per worker ({"secy":
// SecY counters, "link": link counters, "per_sc": per_sc_json}): "secy",
// "link", "tx_sc" and "rx_scs" with every counter summed (the non-counter
// fields an, sci, encoding, enabled, next_pn, lowest_pn, pn_persisted,
// exhausted from the first; the runner replaces the PN fields with the
// shared state's), and "workers": [{"worker", "secy", "link"}] per worker.
// Exposed for the unit test.
nlohmann::json sum_worker_counters(const std::vector<nlohmann::json>& snapshots);

// Runs the link with options.workers (2..4) workers until SIGINT/SIGTERM;
// same exit statuses and exceptions as run_link.
int run_user_workers(const LinkRunOptions& options, LinkConfig config);

}  // namespace layersec::macsec::runner
