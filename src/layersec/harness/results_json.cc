#include "layersec/harness/results_json.h"

#include <optional>
#include <string>

#include "layersec/harness/paper.h"

namespace layersec::harness {

namespace {

nlohmann::json summary_json(const Summary& s) {
  return {{"count", s.count}, {"mean_us", s.mean}, {"stddev_us", s.stddev}, {"min_us", s.min},
          {"p50_us", s.p50},  {"p95_us", s.p95},   {"p99_us", s.p99},       {"max_us", s.max}};
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void add_latency_fields(nlohmann::json& row, const Summary& s) {
  row["completed"] = s.count;
  row["mean_us"] = s.mean;
  row["stddev_us"] = s.stddev;
  row["min_us"] = s.min;
  row["p50_us"] = s.p50;
  row["p95_us"] = s.p95;
  row["p99_us"] = s.p99;
  row["max_us"] = s.max;
}

nlohmann::json paper_json(const ScenarioResult& r) {
  if (const auto* p = r.paper_id.empty() ? nullptr : paper_scenario(r.paper_id)) {
    nlohmann::json j = {{"label", "paper"},
                        {"id", p->id},
                        {"source", "seed paper " + p->source},
                        {"mean_ms", p->mean_ms},
                        {"p50_ms", p->p50_ms},
                        {"p95_ms", p->p95_ms},
                        {"p99_ms", p->p99_ms},
                        {"sd_ms", p->sd_ms},
                        {"secoc_path_ms", opt(p->secoc_path_ms)},
                        {"cpu_pct", p->cpu_pct},
                        {"mem_mib", p->mem_mib},
                        {"establishment_ms", opt(p->establishment_ms)}};
    // The paper's own ratio to its unsecured baseline (same delivery mode).
    const auto* base = paper_scenario(p->id.back() == 'A' ? "1-A" : "1-B");
    if (base) {
      j["ratio_p99"] = p->p99_ms / base->p99_ms;
      j["ratio_mean"] = p->mean_ms / base->mean_ms;
    }
    return j;
  }
  if (r.series == "group-size" && r.security == "hybrid") {
    if (auto ms = paper_hybrid_group_ms(r.subscribers)) {
      return {{"label", "paper"}, {"source", "seed paper Table 21 (hybrid PSK, latency to last receiver)"},
              {"mean_ms", *ms}};
    }
  }
  return nullptr;
}

nlohmann::json to_json(const ScenarioResult& r, bool with_samples) {
  nlohmann::json j = {
      {"name", r.name},
      {"series", r.series},
      {"paper_id", r.paper_id},
      {"label", r.label},
      {"topology", r.topology},
      {"security", r.security},
      {"key_distribution", r.key_distribution},
      {"delivery", r.delivery},
      {"subscribers", r.subscribers},
      {"payload_bytes", r.payload_bytes},
      {"iterations", r.iterations},
      {"timing_model", r.timing_model.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.timing_model)},
      {"one_way", summary_json(r.one_way)},
      {"serial_one_thread", r.serial_latency ? nlohmann::json{{"timing_model", kSerialOneThread},
                                                              {"half_rtt", summary_json(*r.serial_latency)},
                                                              {"one_way", r.serial_one_way
                                                                              ? summary_json(*r.serial_one_way)
                                                                              : nlohmann::json(nullptr)}}
                                             : nlohmann::json(nullptr)},
      {"secoc_path_us", r.secoc_path_us},
      {"secoc_path_p50_us", r.secoc_path_p50_us},
      {"secoc_ops_per_iteration", r.secoc_ops_per_iteration},
      {"cpu_us_per_iteration", r.cpu_us_per_iteration},
      {"cpu_pct", r.cpu_pct},
      {"pacing_ms", r.pacing_ms},
      {"rss_kib", r.rss_kib},
      {"baseline_p99_us", opt(r.baseline_p99_us)},
      {"baseline_mean_us", opt(r.baseline_mean_us)},
      {"ratio_p99", opt(r.ratio_p99)},
      {"ratio_mean", opt(r.ratio_mean)},
      {"establishment_ms", opt(r.establishment_ms)},
      {"security_rejections", r.security_rejections},
      {"timeouts", r.timeouts},
      {"frames_on_wire", r.frames_on_wire},
      {"notes", r.notes},
      {"paper", paper_json(r)},
  };
  add_latency_fields(j, r.latency);
  if (with_samples) j["samples_us"] = r.samples_us;
  return j;
}

nlohmann::json results_json(const RunInfo& info, const std::vector<ScenarioResult>& rows) {
  nlohmann::json run = {{"command", info.command},
                        {"seed", info.seed},
                        {"iterations", info.iterations},
                        {"build_type", info.build_type},
                        {"started_utc", info.started_utc},
                        {"host", info.host},
                        {"peak_rss_per_scenario", info.peak_rss_per_scenario},
                        {"units", "latency in microseconds, built from work timed on CLOCK_MONOTONIC and combined "
                                  "per row's timing_model (parallel-ecus: the model's critical-path time; "
                                  "serial-one-thread and real-threads: elapsed time); paper figures in ms"},
                        {"method", info.method},
                        {"notes", info.notes}};
  nlohmann::json scenarios = nlohmann::json::array();
  nlohmann::json establishment = nlohmann::json::array();
  for (const auto& r : rows) {
    scenarios.push_back(to_json(r));
    if (r.establishment_ms) {
      nlohmann::json e = {{"name", r.name},
                          {"paper_id", r.paper_id},
                          {"subscribers", r.subscribers},
                          {"key_distribution", r.key_distribution},
                          {"establishment_ms", *r.establishment_ms}};
      const auto* p = r.paper_id.empty() ? nullptr : paper_scenario(r.paper_id);
      if (p && p->establishment_ms) {
        e["paper"] = {{"label", "paper"},
                      {"source", "seed paper Table 17"},
                      {"establishment_ms", *p->establishment_ms},
                      {"sd_ms", opt(p->establishment_sd_ms)}};
      } else {
        e["paper"] = nullptr;
      }
      establishment.push_back(std::move(e));
    }
  }
  return {{"run", run}, {"scenarios", scenarios}, {"establishment", establishment}};
}

}  // namespace layersec::harness
