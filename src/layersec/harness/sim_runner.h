// The simulated-segment runner: the second stage of the harness pipeline
// (docs/harness.md, "One pipeline") for `layersec demo` and `layersec bench
// scenarios --topology sim`. Takes ScenarioSpecs (scenario.h), builds a
// Testbed per spec, brings it up (SD, keys), runs the closed loop and
// summarises what was measured into ScenarioResult rows (results.h). It
// writes no files; the writers (results_output.h) take the rows.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "layersec/harness/results.h"
#include "layersec/harness/scenario.h"
#include "layersec/harness/testbed.h"

namespace layersec::harness {

// Called with (done, total) iterations of the current scenario.
using Progress = std::function<void(const ScenarioSpec&, int done, int total)>;

// Runs one scenario. `credentials` must cover the subscribers of Mode B
// scenarios. Throws std::runtime_error when the testbed does not come up.
// The result's latency, one_way and samples_us follow timing_model
// "parallel-ecus" (the model's critical-path time built from the measured
// work, not elapsed time); serial_latency / serial_one_way hold the same
// iterations' serial one-thread figures (elapsed time on the one thread); the
// SecOC path comes from the runtimes' call-site counters over the measured
// loop (per iteration: 1 + 3N protect/verify calls).
[[nodiscard]] ScenarioResult run_scenario(const ScenarioSpec& spec,
                                          const std::shared_ptr<const Credentials>& credentials,
                                          const Progress& progress = {});

// Rows of a set of specs, and how many specs failed to run.
struct SimRun {
  std::vector<ScenarioResult> rows;  // in spec order, failed specs left out
  int failures = 0;
};

// Runs `specs` in order with run_scenario. A spec that throws is reported on
// `err` ("layersec: scenario NAME failed: ...") and counted; the others still
// run. With `progress`, a progress line per scenario goes to `err`.
[[nodiscard]] SimRun run_scenarios(const std::vector<ScenarioSpec>& specs,
                                   const std::shared_ptr<const Credentials>& credentials, bool progress,
                                   std::ostream& err);

// The demo CA and RSA-2048 identities that the Mode B and group-key specs of
// `specs` need (max_subscribers(specs) subscribers). Key generation is
// provisioning, never part of a figure. Throws std::runtime_error when
// OpenSSL fails.
[[nodiscard]] std::shared_ptr<const Credentials> provision_credentials(const std::vector<ScenarioSpec>& specs);

// The method paragraph printed with every simulated result set (RunInfo::method).
[[nodiscard]] std::string measurement_method();

}  // namespace layersec::harness
