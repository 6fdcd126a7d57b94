// Scenario definitions and the runner shared by `layersec demo` and
// `layersec bench scenarios`: build a Testbed, bring it up (SD, keys), run
// the closed loop, and summarise what was measured into a ScenarioResult.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "layersec/harness/results.h"
#include "layersec/harness/testbed.h"

namespace layersec::harness {

struct ScenarioSpec {
  std::string name;
  std::string series;
  std::string paper_id;  // empty unless it reproduces a paper sub-scenario
  std::string label;
  TestbedOptions testbed;
  int iterations = 500;
  int warmup = 10;       // unmeasured iterations first (caches, first-use allocation)
  Duration pacing = Duration::milliseconds(50);  // simulated time between iterations
  Duration timeout = Duration::seconds(1);       // simulated time per iteration
};

// The paper's five configurations (Table 14: 1, 2a, 2b, 3a, 3b), each run
// unicast (sub-scenario A) and multicast (B).
struct PaperConfiguration {
  const char* id;     // "1", "2a", ...
  const char* name;   // "unsecured", "secoc-psk", ...
  const char* label;  // "Unsecured", "SecOC-PSK", ...
  Security security;
  KeyDistribution keys;
};
[[nodiscard]] const std::vector<PaperConfiguration>& paper_configurations();

// The paper's ten sub-scenarios (Table 14), in its order: 1-A, 1-B, 2a-A, ...
// Unicast = 1 subscriber, multicast = 2 subscribers on a multicast eventgroup.
[[nodiscard]] std::vector<ScenarioSpec> paper_scenario_specs(int iterations, std::uint64_t seed,
                                                             std::size_t payload_bytes = 64);
// Hybrid-PSK and unsecured multicast at each group size (series "group-size").
// run_scenario reports them, like every testbed row, under the parallel-ECU
// timing model; their latency to the last receiver is the one_way summary.
[[nodiscard]] std::vector<ScenarioSpec> group_size_specs(const std::vector<int>& sizes, int iterations,
                                                         std::uint64_t seed, bool hybrid_only = false);

// Called with (done, total) iterations of the current scenario.
using Progress = std::function<void(const ScenarioSpec&, int done, int total)>;

// Runs one scenario. `credentials` must cover the subscribers of Mode B
// scenarios. Throws std::runtime_error when the testbed does not come up.
// The result's latency, one_way and samples_us follow timing_model
// "parallel-ecus"; serial_latency / serial_one_way hold the same iterations'
// serial one-thread figures; the SecOC path comes from the runtimes' call-site
// counters over the measured loop.
[[nodiscard]] ScenarioResult run_scenario(const ScenarioSpec& spec,
                                          const std::shared_ptr<const Credentials>& credentials,
                                          const Progress& progress = {});

// The method paragraph printed with every result set.
[[nodiscard]] std::string measurement_method();

}  // namespace layersec::harness
