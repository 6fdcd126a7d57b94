// The DTLS fan-out baseline as rows of the scenario harness: the runner of
// dtls_fanout.h run for `layersec bench scenarios --topology sim`'s group
// sizes, its FanoutRows converted to ScenarioResult rows (series
// "dtls-fanout") that the writers of the pipeline take like any other row
// (docs/harness.md, "One pipeline").
#pragma once

#include <ostream>
#include <vector>

#include "layersec/harness/dtls_fanout.h"
#include "layersec/harness/results.h"
#include "layersec/harness/scenario.h"

namespace layersec::harness {

// One FanoutRow in the scenario row layout: name "<variant>-nN", series
// "dtls-fanout", topology the transport, latency and one_way the latency to
// the last receiver (the fan-out measures one way), timing model the row's
// (memory transport without one: parallel-ecus), the DTLS handshakes as
// establishment_ms, undelivered messages as timeouts, and the publisher's
// crypto operations and CPU per message in notes.
[[nodiscard]] ScenarioResult to_scenario_result(const FanoutRow& row);

// The fan-out table over the memory transport for the group sizes of
// `options` (its group_sizes, else 2, 4, 8, 16, 32, 64; quick: 2, 8) and its
// iterations, as scenario rows. Says on `err` which DTLS it runs. Throws
// std::runtime_error as run_fanout_table does.
[[nodiscard]] std::vector<ScenarioResult> run_fanout_scenario_rows(const BenchScenarioOptions& options,
                                                                   std::ostream& err);

}  // namespace layersec::harness
