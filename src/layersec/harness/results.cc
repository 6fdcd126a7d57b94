#include "layersec/harness/results.h"

#include <unistd.h>

#include <ctime>
#include <map>
#include <utility>

#include "layersec/harness/machine_info.h"
#include "layersec/harness/results_format.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

namespace {

std::string build_type_label() {
#ifdef NDEBUG
  return "optimised (NDEBUG)";
#else
  return "debug (assertions on; timings are not representative)";
#endif
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// r against baseline figures (p99, mean); ratios only over a non-zero baseline
// when `guard` is set (apply_baselines), unconditionally otherwise (the
// sweeps, whose baselines always completed).
void set_baseline(ScenarioResult& r, double p99, double mean, bool guard) {
  r.baseline_p99_us = p99;
  r.baseline_mean_us = mean;
  if (!guard || p99 > 0) r.ratio_p99 = r.latency.p99 / p99;
  if (!guard || mean > 0) r.ratio_mean = r.latency.mean / mean;
}

}  // namespace

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string timing_model_text(const std::string& timing_model) {
  if (timing_model == kParallelEcus) return "critical-path time of the parallel-ECU model";
  if (timing_model == kSerialOneThread) return "elapsed time on one thread";
  if (timing_model.empty()) return "timing model unstated";
  return "elapsed time, " + timing_model;
}

RunInfo start_run_info(std::string command, std::uint64_t seed, int iterations) {
  RunInfo info;
  info.command = std::move(command);
  info.seed = seed;
  info.iterations = iterations;
  info.build_type = build_type_label();
  info.started_utc = utc_timestamp();
  info.host = host_name();
  info.started_monotonic_ns = monotonic_ns();
  info.load_average = load_average_text();
  return info;
}

void apply_baselines(std::vector<ScenarioResult>& rows, const std::string& unicast_baseline,
                     const std::string& multicast_baseline) {
  std::map<std::string, const ScenarioResult*> by_name;
  for (const auto& r : rows) by_name[r.name] = &r;
  const ScenarioResult* uni = by_name.count(unicast_baseline) ? by_name[unicast_baseline] : nullptr;
  const ScenarioResult* multi = by_name.count(multicast_baseline) ? by_name[multicast_baseline] : nullptr;
  // Copy the baseline figures first: rows may be their own baseline.
  std::optional<std::pair<double, double>> u, m;
  if (uni && uni->latency.count) u = std::make_pair(uni->latency.p99, uni->latency.mean);
  if (multi && multi->latency.count) m = std::make_pair(multi->latency.p99, multi->latency.mean);
  for (auto& r : rows) {
    const auto& b = r.delivery == "multicast" ? m : u;
    if (!b || r.latency.count == 0) continue;
    set_baseline(r, b->first, b->second, /*guard=*/true);
  }
}

void apply_group_size_baselines(std::vector<ScenarioResult>& rows) {
  for (auto& r : rows) {
    if (r.series != "group-size" || r.security == "none") continue;
    for (const auto& b : rows) {
      if (b.series == "group-size" && b.security == "none" && b.subscribers == r.subscribers && b.latency.count)
        set_baseline(r, b.latency.p99, b.latency.mean, /*guard=*/false);
    }
  }
  for (auto& r : rows) {
    if (r.series == "group-size" && r.security == "none" && r.latency.count) {
      r.baseline_p99_us = r.latency.p99;
      r.baseline_mean_us = r.latency.mean;
      r.ratio_p99 = 1.0;
      r.ratio_mean = 1.0;
    }
  }
}

void apply_sweep_baselines(std::vector<ScenarioResult>& rows) {
  auto load_prefix = [](const std::string& name) { return name.substr(0, name.find("mbps")); };
  for (auto& r : rows) {
    for (const auto& b : rows) {
      if (b.security != "none" || b.series != r.series || !b.latency.count) continue;
      const bool same = b.payload_bytes == r.payload_bytes && b.subscribers == r.subscribers &&
                        (r.series != "background-load" || load_prefix(b.name) == load_prefix(r.name));
      if (same) set_baseline(r, b.latency.p99, b.latency.mean, /*guard=*/false);
    }
  }
}

std::vector<GroupGoal> group_size_goals(const std::vector<ScenarioResult>& rows) {
  // (key distribution, timing model) -> rows by N.
  std::map<std::pair<std::string, std::string>, std::map<int, const ScenarioResult*>> sets;
  for (const auto& r : rows) {
    if (r.series != "group-size" || r.security != "hybrid" || r.latency.count == 0) continue;
    sets[{r.key_distribution, r.timing_model}][r.subscribers] = &r;
  }
  std::vector<GroupGoal> out;
  for (const auto& [key, by_n] : sets) {
    auto small = by_n.find(2);
    if (small == by_n.end()) continue;
    const ScenarioResult* large = by_n.rbegin()->second;
    if (large->subscribers <= 2) continue;
    auto ratio = [](double x, double y) { return y > 0 ? x / y : 0.0; };
    const Summary& a = small->second->one_way;
    const Summary& b = large->one_way;
    GroupGoal g;
    g.key_distribution = key.first;
    g.timing_model = key.second;
    g.n_large = large->subscribers;
    g.ratio_mean = ratio(b.mean, a.mean);
    g.ratio_p50 = ratio(b.p50, a.p50);
    g.ratio_p99 = ratio(b.p99, a.p99);
    g.ratio_half_rtt_mean = ratio(large->latency.mean, small->second->latency.mean);
    g.ratio_half_rtt_p99 = ratio(large->latency.p99, small->second->latency.p99);
    g.met = g.ratio_mean > 0 && g.ratio_p99 > 0 && g.ratio_mean <= g.limit && g.ratio_p99 <= g.limit;
    out.push_back(g);
  }
  return out;
}

std::vector<std::string> group_size_goal_lines(const std::vector<ScenarioResult>& rows) {
  std::vector<std::string> lines;
  for (const auto& g : group_size_goals(rows)) {
    std::string l = "goal: group-keyed latency at N=" + std::to_string(g.n_large) + " within " +
                    format_fixed(g.limit, 1) + "x of N=2 (hybrid, " + g.key_distribution +
                    " group key, multicast, " +
                    (g.timing_model.empty() ? std::string("model unstated") : g.timing_model) +
                    "; latency to the last receiver = one-way notify -> latest event callback): mean x" +
                    format_fixed(g.ratio_mean, 2) + ", p50 x" + format_fixed(g.ratio_p50, 2) + ", p99 x" +
                    format_fixed(g.ratio_p99, 2) + " -> " + (g.met ? "MET" : "NOT MET") +
                    " (judged on one-way mean and p99; half RTT, which adds the publisher taking N answers: mean x" +
                    format_fixed(g.ratio_half_rtt_mean, 2) + ", p99 x" + format_fixed(g.ratio_half_rtt_p99, 2) + ")";
    if (g.n_large != 64) l += "; note: the largest N measured here is " + std::to_string(g.n_large) + ", the goal names N=64";
    lines.push_back(std::move(l));
  }
  // The DTLS fan-out series beside it: growth from its smallest to largest N.
  std::map<std::pair<std::string, std::string>, std::map<int, const ScenarioResult*>> fanout;
  for (const auto& r : rows) {
    if (r.series != "dtls-fanout" || r.latency.count == 0) continue;
    fanout[{r.security + "/" + r.delivery, r.topology + ", " + (r.timing_model.empty() ? "model unstated" : r.timing_model)}]
          [r.subscribers] = &r;
  }
  for (const auto& [key, by_n] : fanout) {
    if (by_n.size() < 2) continue;
    const ScenarioResult& a = *by_n.begin()->second;
    const ScenarioResult& b = *by_n.rbegin()->second;
    if (a.latency.mean <= 0 || a.latency.p99 <= 0) continue;
    const std::string what = a.security == "dtls" ? "DTLS 1.2 fan-out (one session per subscriber)"
                             : a.security == "secoc" ? "group-keyed SecOC (one protect, one send)"
                                                     : "unsecured multicast";
    lines.push_back("  dtls-fanout series, " + what + " [" + key.second + "]: N=" + std::to_string(b.subscribers) +
                    " vs N=" + std::to_string(a.subscribers) + ": mean x" +
                    format_fixed(b.latency.mean / a.latency.mean, 2) + ", p99 x" +
                    format_fixed(b.latency.p99 / a.latency.p99, 2) + " (N x" +
                    format_fixed(static_cast<double>(b.subscribers) / a.subscribers, 0) + ")");
  }
  return lines;
}

}  // namespace layersec::harness
