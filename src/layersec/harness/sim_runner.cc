#include "layersec/harness/sim_runner.h"

#include <algorithm>
#include <exception>
#include <iomanip>
#include <stdexcept>

#include "layersec/harness/scenario_layout.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

namespace {

Progress make_progress(bool enabled, std::ostream& err, std::size_t index, std::size_t total) {
  if (!enabled) return {};
  return [&err, index, total](const ScenarioSpec& s, int done, int all) {
    err << "\r[" << index << "/" << total << "] " << std::left << std::setw(34) << s.name << std::right << " "
        << std::setw(5) << done << "/" << all << std::flush;
    if (done == all) err << "\n";
  };
}

}  // namespace

std::string measurement_method() {
  return "Every node (publisher, subscribers) is a real layersec SOME/IP runtime with its real SecOC engine and "
         "MACsec SecYs, exchanging real Ethernet/IPv4/UDP frames through the in-process simulated switch "
         "(net::Simulator, deterministic given the seed). Each iteration is a closed loop with one message in "
         "flight: the publisher notifies a 64-byte event (unicast to one subscriber, or once to the eventgroup's "
         "multicast group for two or more), each subscriber echoes it back as a fire-and-forget request on its own "
         "method, and the iteration ends when the publisher's handler has taken the last answer. The simulator "
         "runs on the measuring thread, step by step, and the duration (CLOCK_MONOTONIC) of every piece of work "
         "is measured: serialise, SecOC protect, MACsec protect, frame build, switch, MACsec validate, parse, "
         "SecOC verify, dispatch, answer. Timing model parallel-ecus (the reported latency): each piece is "
         "attributed to the CPU that would do it in a vehicle (one per node, one per switch port engine); a piece "
         "starts when its input is ready and its CPU is free, so the latency is the model's critical-path time: "
         "the causal critical path of the measured work, where independent receivers overlap as separate ECUs "
         "would, not the elapsed time of the run. Model serial-one-thread (kept beside it as serial_one_thread / "
         "serial p99): the elapsed time from the notify() call to the last answer with every node's work done one "
         "after the other on the one thread, as if the network shared one CPU; it grows with every receiver's "
         "work. Latency is half the round trip (the paper's method); one-way is notify() to the last subscriber's "
         "event callback. Simulated link delays (propagation, serialisation) advance only simulated time and are "
         "in neither figure. Iterations are paced 50 ms apart in simulated time (the paper's pacing; every "
         "simulated CPU is idle at the start of an iteration); SD and other timers run between iterations, outside "
         "the measured windows. SecOC path = the time inside SecOC protect + verify during the iteration (one "
         "round trip), timed where the runtimes call the engines and summed over all nodes (1 + 3N calls: 4 for "
         "one subscriber, i.e. two messages each protected and verified). CPU = thread CPU time inside the "
         "measured windows per iteration (all nodes), as a share of one core at the paper's 50 ms pacing. RSS = "
         "peak resident set of the whole process during the scenario (Linux VmHWM, reset per scenario). Key "
         "establishment (Mode B, RSA-2048 OAEP with X.509 certificates, over SOME/IP on the same segment) is the "
         "wall time from the first KeyRequest to the last accepted KeyConfirm, once, before the loop; it is not "
         "averaged into the latency.";
}

ScenarioResult run_scenario(const ScenarioSpec& spec, const std::shared_ptr<const Credentials>& credentials,
                            const Progress& progress) {
  ResourceSampler sampler;  // resets the peak RSS for this scenario
  ScenarioResult r;
  r.name = spec.name;
  r.series = spec.series;
  r.paper_id = spec.paper_id;
  r.label = spec.label;
  r.topology = "sim";
  r.security = to_string(spec.testbed.security);
  r.key_distribution = to_string(spec.testbed.keys);
  r.delivery = spec.testbed.multicast ? "multicast" : "unicast";
  r.subscribers = spec.testbed.subscribers;
  r.payload_bytes = spec.testbed.payload_bytes;
  r.iterations = spec.iterations;
  r.pacing_ms = spec.pacing.ms();

  Testbed bed(spec.testbed, credentials);
  bed.start();
  if (auto e = bed.establishment_ns()) r.establishment_ms = static_cast<double>(*e) / 1e6;

  std::uint32_t seq = 1;
  for (int i = 0; i < spec.warmup; ++i) {
    bed.idle(spec.pacing);
    (void)bed.run_iteration(seq++, spec.timeout);
  }
  const std::uint64_t rejections_before = bed.security_rejections();
  const std::uint64_t frames_before = bed.frames_on_wire();
  std::vector<double> half_rtt, one_way, serial_half_rtt, serial_one_way, secoc_path;
  for (auto* v : {&half_rtt, &one_way, &serial_half_rtt, &serial_one_way, &secoc_path})
    v->reserve(static_cast<std::size_t>(spec.iterations));
  std::uint64_t secoc_ops = 0;
  bool secoc_ops_vary = false;
  for (int i = 0; i < spec.iterations; ++i) {
    bed.idle(spec.pacing);
    sampler.start();
    const IterationSample s = bed.run_iteration(seq++, spec.timeout);
    sampler.stop();
    if (s.completed) {
      half_rtt.push_back(static_cast<double>(s.model_round_trip_ns) / 2e3);
      one_way.push_back(static_cast<double>(s.model_one_way_ns) / 1e3);
      serial_half_rtt.push_back(static_cast<double>(s.round_trip_ns) / 2e3);
      serial_one_way.push_back(static_cast<double>(s.one_way_ns) / 1e3);
      secoc_path.push_back(static_cast<double>(s.secoc_ns) / 1e3);
      if (secoc_path.size() > 1 && s.secoc_ops != secoc_ops) secoc_ops_vary = true;
      secoc_ops = std::max(secoc_ops, s.secoc_ops);
    } else {
      ++r.timeouts;
    }
    if (progress && ((i + 1) % 50 == 0 || i + 1 == spec.iterations)) progress(spec, i + 1, spec.iterations);
  }
  r.security_rejections = bed.security_rejections() - rejections_before;
  r.frames_on_wire = bed.frames_on_wire() - frames_before;
  r.timing_model = kParallelEcus;
  r.latency = summarize(half_rtt);
  r.one_way = summarize(one_way);
  r.samples_us = std::move(half_rtt);
  r.serial_latency = summarize(serial_half_rtt);
  r.serial_one_way = summarize(serial_one_way);
  if (!r.samples_us.empty()) {
    r.cpu_us_per_iteration = static_cast<double>(sampler.cpu_ns()) / 1e3 / static_cast<double>(spec.iterations);
    r.cpu_pct = r.cpu_us_per_iteration / (spec.pacing.us()) * 100.0;
  }
  if (spec.testbed.security != Security::kNone && !secoc_path.empty()) {
    const Summary ps = summarize(secoc_path);
    r.secoc_path_us = ps.mean;
    r.secoc_path_p50_us = ps.p50;
    r.secoc_ops_per_iteration = secoc_ops;
    if (secoc_ops_vary) r.notes += "SecOC calls per iteration varied (the largest is reported); ";
  }
  r.rss_kib = sampler.peak_rss_kib();
  if (!sampler.peak_reset_ok()) r.notes += "peak RSS is process-wide (clear_refs refused); ";
  if (r.timeouts) r.notes += std::to_string(r.timeouts) + " iterations timed out; ";
  if (r.security_rejections) r.notes += std::to_string(r.security_rejections) + " security drops during the loop; ";
  return r;
}

SimRun run_scenarios(const std::vector<ScenarioSpec>& specs, const std::shared_ptr<const Credentials>& credentials,
                     bool progress, std::ostream& err) {
  SimRun run;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    try {
      run.rows.push_back(run_scenario(specs[i], credentials, make_progress(progress, err, i + 1, specs.size())));
    } catch (const std::exception& e) {
      err << "\nlayersec: scenario " << specs[i].name << " failed: " << e.what() << "\n";
      ++run.failures;
    }
  }
  return run;
}

std::shared_ptr<const Credentials> provision_credentials(const std::vector<ScenarioSpec>& specs) {
  return Credentials::create(max_subscribers(specs), layout::kService);
}

}  // namespace layersec::harness
