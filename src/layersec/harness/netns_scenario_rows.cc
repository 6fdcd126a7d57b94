// Result rows of the netns scenario sweep (netns_scenario_rows.h).
#include "layersec/harness/netns_scenario_rows.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace layersec::harness {

std::string netns_rate_text(double hz) {
  std::ostringstream s;
  s << static_cast<long long>(std::llround(hz));
  return s.str();
}

std::string netns_fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

namespace {

std::vector<double> to_us(const std::vector<std::int64_t>& ns) {
  std::vector<double> us;
  us.reserve(ns.size());
  for (std::int64_t v : ns) us.push_back(static_cast<double>(v) / 1e3);
  return us;
}

std::string report_name(std::size_t k) {
  if (k == 0) return "publisher";
  return "subscriber-" + std::to_string(k - 1);
}

}  // namespace

RateJudgement judge_rate(const NetnsScenario& s, const std::vector<NetnsNodeReport>& reports) {
  RateJudgement j;
  if (reports.empty()) {
    j.reason = "no reports";
    return j;
  }
  const NetnsNodeReport& pub = reports[0];
  std::vector<double> one_way;
  std::uint64_t received = 0;
  std::uint64_t gaps = 0;
  std::string failed;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    if (!reports[k].ok) failed += (failed.empty() ? "" : ", ") + report_name(k);
    if (k == 0) continue;
    for (std::int64_t v : reports[k].one_way_ns) one_way.push_back(static_cast<double>(v) / 1e3);
    received += reports[k].received;
    gaps += reports[k].lost;
  }
  j.p99_us = summarize(one_way).p99;
  const std::uint64_t expected = pub.sent * (reports.size() - 1);
  const std::uint64_t missing = expected > received ? expected - received : 0;
  const std::uint64_t lost = std::max(gaps, missing);
  j.loss = expected ? static_cast<double>(lost) / static_cast<double>(expected) : 1.0;
  j.achieved_hz = pub.achieved_rate_hz;
  std::vector<std::string> why;
  if (!failed.empty()) why.push_back("node failed: " + failed);
  if (one_way.empty()) why.push_back("no events received");
  if (!one_way.empty() && j.p99_us >= kSaturationP99Us) {
    why.push_back("one-way p99 " + netns_fixed(j.p99_us, 1) + " us >= 1 ms");
  }
  if (j.loss > kSaturationMaxLoss) why.push_back("loss " + netns_fixed(j.loss * 100, 3) + " % > 0.1 %");
  if (s.rate_hz <= 0 || std::abs(j.achieved_hz - s.rate_hz) > kSaturationRateTolerance * s.rate_hz) {
    why.push_back("achieved " + netns_fixed(j.achieved_hz, 0) + " events/s, target " + netns_rate_text(s.rate_hz));
  }
  for (const auto& w : why) j.reason += (j.reason.empty() ? "" : "; ") + w;
  j.ok = why.empty();
  return j;
}

ScenarioResult netns_result_row(const NetnsScenario& s, const std::vector<NetnsNodeReport>& reports,
                                const std::string& error) {
  ScenarioResult r;
  r.name = s.name;
  r.series = s.series;
  r.paper_id = s.paper_id;
  r.label = s.label;
  r.topology = netns_topology_name(s.path);
  r.timing_model = "real-processes";  // one process per node, real kernel scheduling on this host
  r.security = to_string(s.security);
  r.key_distribution = to_string(s.security == Security::kNone ? KeyDistribution::kNone : s.keys);
  r.delivery = s.multicast ? "multicast" : "unicast";
  r.subscribers = s.subscribers;
  r.payload_bytes = s.payload_bytes;
  const bool rate = s.mode == "rate";
  r.iterations = rate ? static_cast<int>(std::llround(s.rate_hz * s.rate_duration.s())) : s.iterations;
  r.pacing_ms = rate ? (s.rate_hz > 0 ? 1000.0 / s.rate_hz : 0) : s.pacing.ms();

  std::string fail = error;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    if (!reports[k].ok) {
      fail += (fail.empty() ? "" : "; ") + report_name(k) + ": " +
              (reports[k].error.empty() ? std::string("not ok") : reports[k].error);
    }
  }
  if (reports.empty() && fail.empty()) fail = "no node reports";
  std::string notes;
  if (!reports.empty()) {
    const NetnsNodeReport& pub = reports[0];
    double per = 0;  // iterations (closed loop) or events sent (rate) the costs are divided by
    if (!rate) {
      std::vector<double> half = to_us(pub.half_rtt_ns);
      r.latency = summarize(half);
      r.one_way = summarize(to_us(pub.one_way_ns));
      r.samples_us = std::move(half);
      r.timeouts = pub.timeouts;
      per = static_cast<double>(pub.iterations_completed ? pub.iterations_completed : r.latency.count);
    } else {
      std::vector<double> merged;
      for (std::size_t k = 1; k < reports.size(); ++k) {
        for (std::int64_t v : reports[k].one_way_ns) merged.push_back(static_cast<double>(v) / 1e3);
      }
      r.latency = summarize(merged);
      r.one_way = r.latency;
      r.samples_us = std::move(merged);
      const RateJudgement j = judge_rate(s, reports);
      const std::uint64_t expected = pub.sent * static_cast<std::uint64_t>(reports.size() - 1);
      r.timeouts = static_cast<std::uint64_t>(std::llround(j.loss * static_cast<double>(expected)));
      per = static_cast<double>(pub.sent);
      notes += "rate mode: latency columns are the merged subscribers' one-way latency (not half RTT); target " +
               netns_rate_text(s.rate_hz) + "/s for " + netns_fixed(s.rate_duration.s(), 1) + " s, achieved " +
               netns_fixed(j.achieved_hz, 0) + "/s, sent " + std::to_string(pub.sent) + ", lost " +
               std::to_string(r.timeouts) + " of " + std::to_string(expected) + " (" + netns_fixed(j.loss * 100, 3) +
               " %; timeouts = lost events); " +
               (j.ok ? std::string("within the saturation limits") : "beyond saturation: " + j.reason) + "; ";
    }
    std::uint64_t secoc_ns = 0;
    std::uint64_t secoc_ops = 0;
    std::uint64_t cpu_ns = 0;
    for (const auto& rep : reports) {
      secoc_ns += rep.secoc_protect_ns + rep.secoc_verify_ns;
      secoc_ops += rep.secoc_protected + rep.secoc_verified;
      cpu_ns += rep.cpu_ns;
      r.security_rejections += rep.security_rejections;
    }
    if (per > 0) {
      r.secoc_path_us = static_cast<double>(secoc_ns) / 1e3 / per;
      r.secoc_path_p50_us = r.secoc_path_us;  // only totals are reported: the mean stands in
      r.secoc_ops_per_iteration = static_cast<std::uint64_t>(std::llround(static_cast<double>(secoc_ops) / per));
      r.cpu_us_per_iteration = static_cast<double>(cpu_ns) / 1e3 / per;
    }
    if (pub.wall_ns > 0) r.cpu_pct = static_cast<double>(pub.cpu_ns) / static_cast<double>(pub.wall_ns) * 100.0;
    r.rss_kib = pub.rss_kib;
    if (pub.establishment_ns) r.establishment_ms = static_cast<double>(*pub.establishment_ns) / 1e6;
    if (!rate && r.timeouts) notes += std::to_string(r.timeouts) + " iterations timed out; ";
    if (r.security_rejections) notes += std::to_string(r.security_rejections) + " security drops; ";
    notes += "CPU % = publisher process CPU / wall time of its measured phase; SecOC path = mean over every node";
  }
  r.notes = fail.empty() ? notes : "FAILED: " + fail + (notes.empty() ? "" : "; " + notes);
  return r;
}

std::string netns_goal_verdict(const Summary& secured, const Summary& baseline, double limit) {
  if (secured.count == 0 || baseline.count == 0 || baseline.p99 <= 0) return "inconclusive (not measured)";
  std::string noisy;
  for (const auto& [what, s] : {std::pair<const char*, const Summary*>{"secured", &secured}, {"baseline", &baseline}}) {
    if (s->p99 > kOutlierDominated * s->p50) {
      noisy += std::string(noisy.empty() ? "" : ", ") + what + " p99/p50 = " + netns_fixed(s->p99 / s->p50, 1);
    }
  }
  if (!noisy.empty()) return "inconclusive (p99 dominated by outliers: " + noisy + "; rerun on an idle machine)";
  return secured.p99 <= limit * baseline.p99 ? "met" : "not met";
}

bool netns_row_failed(const ScenarioResult& row) { return row.notes.rfind("FAILED:", 0) == 0; }

void apply_netns_baselines(std::vector<ScenarioResult>& rows, const std::vector<NetnsScenario>& scenarios) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) index[rows[i].name] = i;
  for (std::size_t i = 0; i < rows.size() && i < scenarios.size(); ++i) {
    const auto it = index.find(scenarios[i].baseline);
    if (it == index.end()) continue;
    const ScenarioResult& b = rows[it->second];
    // Never across paths: the kernel and raw rows are different systems.
    if (b.topology != rows[i].topology || b.latency.count == 0 || rows[i].latency.count == 0) continue;
    if (netns_row_failed(b)) continue;
    const double p99 = b.latency.p99;
    const double mean = b.latency.mean;
    rows[i].baseline_p99_us = p99;
    rows[i].baseline_mean_us = mean;
    if (p99 > 0) rows[i].ratio_p99 = rows[i].latency.p99 / p99;
    if (mean > 0) rows[i].ratio_mean = rows[i].latency.mean / mean;
  }
}

}  // namespace layersec::harness
