#include "layersec/harness/scenario.h"

#include <stdexcept>

#include "layersec/harness/stats.h"

namespace layersec::harness {

namespace {

ScenarioSpec make_spec(std::string name, std::string series, std::string paper_id, std::string label,
                       Security security, KeyDistribution keys, int subscribers, bool multicast, int iterations,
                       std::uint64_t seed, std::size_t payload) {
  ScenarioSpec s;
  s.name = std::move(name);
  s.series = std::move(series);
  s.paper_id = std::move(paper_id);
  s.label = std::move(label);
  s.testbed.security = security;
  s.testbed.keys = keys;
  s.testbed.subscribers = subscribers;
  s.testbed.multicast = multicast;
  s.testbed.payload_bytes = payload;
  s.testbed.seed = seed;
  s.iterations = iterations;
  return s;
}

}  // namespace

std::vector<ScenarioSpec> paper_scenario_specs(int iterations, std::uint64_t seed, std::size_t payload_bytes) {
  struct Row {
    const char* id;
    const char* name;
    const char* label;
    Security security;
    KeyDistribution keys;
  };
  const Row rows[] = {
      {"1", "unsecured", "Unsecured", Security::kNone, KeyDistribution::kNone},
      {"2a", "secoc-psk", "SecOC-PSK", Security::kSecoc, KeyDistribution::kPsk},
      {"2b", "secoc-rsa", "SecOC-RSA", Security::kSecoc, KeyDistribution::kRsaModeB},
      {"3a", "hybrid-psk", "Hybrid-PSK", Security::kHybrid, KeyDistribution::kPsk},
      {"3b", "hybrid-rsa", "Hybrid-RSA", Security::kHybrid, KeyDistribution::kRsaModeB},
  };
  std::vector<ScenarioSpec> out;
  std::uint64_t k = 0;
  for (const auto& r : rows) {
    for (int multicast = 0; multicast < 2; ++multicast) {
      const std::string suffix = multicast ? "multicast" : "unicast";
      out.push_back(make_spec(std::string(r.name) + "-" + suffix, "paper-scenarios",
                              std::string(r.id) + (multicast ? "-B" : "-A"),
                              std::string(r.label) + (multicast ? " Multicast" : " Unicast"), r.security, r.keys,
                              multicast ? 2 : 1, multicast != 0, iterations, seed + (k++), payload_bytes));
    }
  }
  return out;
}

std::vector<ScenarioSpec> group_size_specs(const std::vector<int>& sizes, int iterations, std::uint64_t seed,
                                           bool hybrid_only) {
  std::vector<ScenarioSpec> out;
  std::uint64_t k = 100;
  for (int n : sizes) {
    out.push_back(make_spec("group-hybrid-psk-n" + std::to_string(n), "group-size", "",
                            "Hybrid-PSK multicast, N=" + std::to_string(n), Security::kHybrid, KeyDistribution::kPsk,
                            n, true, iterations, seed + (k++), 64));
    if (!hybrid_only) {
      out.push_back(make_spec("group-unsecured-n" + std::to_string(n), "group-size", "",
                              "Unsecured multicast, N=" + std::to_string(n), Security::kNone, KeyDistribution::kNone,
                              n, true, iterations, seed + (k++), 64));
    }
  }
  return out;
}

std::string measurement_method() {
  return "Every node (publisher, subscribers) is a real layersec SOME/IP runtime with its real SecOC engine and "
         "MACsec SecYs, exchanging real Ethernet/IPv4/UDP frames through the in-process simulated switch "
         "(net::Simulator, deterministic given the seed). Each iteration is a closed loop with one message in "
         "flight: the publisher notifies a 64-byte event (unicast to one subscriber, or once to the eventgroup's "
         "multicast group for two or more), each subscriber echoes it back as a fire-and-forget request on its own "
         "method, and the iteration ends when the publisher's handler has taken the last answer. The simulator "
         "runs on the measuring thread, step by step, so the CLOCK_MONOTONIC time from the notify() call to the "
         "last answer's dispatch is the real time the whole code path took in both directions (serialise, SecOC "
         "protect, MACsec protect, frame build, switch, MACsec validate, parse, SecOC verify, dispatch, answer). "
         "Latency is half of that round trip (the paper's method); one-way is notify() to the last subscriber's "
         "event callback on the same clock. Simulated link delays (propagation, serialisation) advance only "
         "simulated time, cost no real time and are not part of any figure. Iterations are paced 50 ms apart in "
         "simulated time (the paper's pacing); SD and other timers run between iterations, outside the measured "
         "windows. SecOC path = the time inside SecOC protect + verify for one iteration's messages, measured on "
         "the scenario's own engines right after its loop. CPU = thread CPU time inside the measured windows per "
         "iteration, expressed as a share of one core at the paper's 50 ms pacing. RSS = peak resident set of the "
         "whole process during the scenario (Linux VmHWM, reset per scenario). Key establishment (Mode B, "
         "RSA-2048 OAEP with X.509 certificates, over SOME/IP on the same segment) is the wall time from the first "
         "KeyRequest to the last accepted KeyConfirm, once, before the loop; it is not averaged into the latency.";
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
  std::vector<double> half_rtt;
  std::vector<double> one_way;
  half_rtt.reserve(static_cast<std::size_t>(spec.iterations));
  one_way.reserve(static_cast<std::size_t>(spec.iterations));
  for (int i = 0; i < spec.iterations; ++i) {
    bed.idle(spec.pacing);
    sampler.start();
    const IterationSample s = bed.run_iteration(seq++, spec.timeout);
    sampler.stop();
    if (s.completed) {
      half_rtt.push_back(static_cast<double>(s.round_trip_ns) / 2e3);
      one_way.push_back(static_cast<double>(s.one_way_ns) / 1e3);
    } else {
      ++r.timeouts;
    }
    if (progress && ((i + 1) % 50 == 0 || i + 1 == spec.iterations)) progress(spec, i + 1, spec.iterations);
  }
  r.security_rejections = bed.security_rejections() - rejections_before;
  r.frames_on_wire = bed.frames_on_wire() - frames_before;
  r.latency = summarize(half_rtt);
  r.one_way = summarize(one_way);
  r.samples_us = std::move(half_rtt);
  if (!r.samples_us.empty()) {
    r.cpu_us_per_iteration = static_cast<double>(sampler.cpu_ns()) / 1e3 / static_cast<double>(spec.iterations);
    r.cpu_pct = r.cpu_us_per_iteration / (spec.pacing.us()) * 100.0;
  }
  if (spec.testbed.security != Security::kNone) {
    std::vector<double> path;
    for (int i = 0; i < spec.iterations; ++i) {
      const SecocPathSample p = bed.measure_secoc_path(seq++);
      if (!p.ok) continue;
      path.push_back(static_cast<double>(p.ns) / 1e3);
      r.secoc_ops_per_iteration = p.operations;
    }
    const Summary ps = summarize(path);
    r.secoc_path_us = ps.mean;
    r.secoc_path_p50_us = ps.p50;
    const int ok = static_cast<int>(path.size());
    if (ok < spec.iterations) r.notes += "SecOC path: " + std::to_string(spec.iterations - ok) + " iterations failed; ";
  }
  r.rss_kib = sampler.peak_rss_kib();
  if (!sampler.peak_reset_ok()) r.notes += "peak RSS is process-wide (clear_refs refused); ";
  if (r.timeouts) r.notes += std::to_string(r.timeouts) + " iterations timed out; ";
  if (r.security_rejections) r.notes += std::to_string(r.security_rejections) + " security drops during the loop; ";
  return r;
}

}  // namespace layersec::harness
