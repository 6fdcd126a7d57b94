#include "layersec/harness/results.h"

#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>

#include "layersec/harness/paper.h"

namespace layersec::harness {

namespace {

std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string opt_fixed(const std::optional<double>& v, int digits = 2) {
  return v ? fixed(*v, digits) : std::string("-");
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

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
    r.baseline_p99_us = b->first;
    r.baseline_mean_us = b->second;
    if (b->first > 0) r.ratio_p99 = r.latency.p99 / b->first;
    if (b->second > 0) r.ratio_mean = r.latency.mean / b->second;
  }
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
      {"one_way", summary_json(r.one_way)},
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
                        {"units", "latency in microseconds of real (monotonic) time; paper figures in ms"},
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

std::string csv_header() {
  return "name,series,paper_id,topology,security,key_distribution,delivery,subscribers,payload_bytes,"
         "iterations,completed,mean_us,p50_us,p95_us,p99_us,max_us,one_way_mean_us,one_way_p99_us,"
         "secoc_path_us,cpu_pct,cpu_us_per_iteration,rss_kib,baseline_p99_us,ratio_p99,ratio_mean,"
         "establishment_ms,security_rejections,timeouts,paper_mean_ms,paper_p99_ms,paper_source";
}

void write_csv(std::ostream& out, const std::vector<ScenarioResult>& rows) {
  out << csv_header() << "\n";
  auto num = [](double v) { return fixed(v, 3); };
  auto onum = [](const std::optional<double>& v) { return v ? fixed(*v, 4) : std::string(); };
  for (const auto& r : rows) {
    const nlohmann::json p = paper_json(r);
    std::string paper_mean, paper_p99, paper_source;
    if (p.is_object()) {
      paper_mean = fixed(p["mean_ms"].get<double>(), 2);
      if (p.contains("p99_ms")) paper_p99 = fixed(p["p99_ms"].get<double>(), 2);
      paper_source = p["source"].get<std::string>();
    }
    out << csv_field(r.name) << ',' << csv_field(r.series) << ',' << csv_field(r.paper_id) << ','
        << csv_field(r.topology) << ',' << csv_field(r.security) << ',' << csv_field(r.key_distribution)
        << ',' << csv_field(r.delivery) << ',' << r.subscribers << ',' << r.payload_bytes << ','
        << r.iterations << ',' << r.latency.count << ',' << num(r.latency.mean) << ','
        << num(r.latency.p50) << ',' << num(r.latency.p95) << ',' << num(r.latency.p99) << ','
        << num(r.latency.max) << ',' << num(r.one_way.mean) << ',' << num(r.one_way.p99) << ','
        << num(r.secoc_path_us) << ',' << fixed(r.cpu_pct, 4) << ',' << num(r.cpu_us_per_iteration) << ','
        << r.rss_kib << ',' << onum(r.baseline_p99_us) << ',' << onum(r.ratio_p99) << ','
        << onum(r.ratio_mean) << ',' << onum(r.establishment_ms) << ',' << r.security_rejections << ','
        << r.timeouts << ',' << paper_mean << ',' << paper_p99 << ',' << csv_field(paper_source) << "\n";
  }
}

namespace {

void latency_table(std::ostream& out, const std::vector<ScenarioResult>& rows, bool markdown) {
  const char* head[] = {"scenario",     "N",     "mean us", "p50 us",  "p95 us",   "p99 us",
                        "max us",       "1-way p50 us", "SecOC p50 us/it", "CPU %@50ms", "RSS KiB",
                        "x base p99",   "paper mean ms", "paper p99 ms", "paper x p99"};
  constexpr int kCols = 15;
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    const nlohmann::json p = paper_json(r);
    std::string pm = "-", pp = "-", pr = "-";
    if (p.is_object()) {
      pm = fixed(p["mean_ms"].get<double>(), 2);
      if (p.contains("p99_ms")) pp = fixed(p["p99_ms"].get<double>(), 2);
      if (p.contains("ratio_p99")) pr = fixed(p["ratio_p99"].get<double>(), 2);
    }
    std::string name = r.paper_id.empty() ? r.name : r.paper_id + " " + r.name;
    cells.push_back({name, std::to_string(r.subscribers), fixed(r.latency.mean), fixed(r.latency.p50),
                     fixed(r.latency.p95), fixed(r.latency.p99), fixed(r.latency.max), fixed(r.one_way.p50),
                     r.security == "none" ? "-" : fixed(r.secoc_path_p50_us, 2), fixed(r.cpu_pct, 2),
                     std::to_string(r.rss_kib), opt_fixed(r.ratio_p99), pm, pp, pr});
  }
  if (markdown) {
    out << "|";
    for (const char* h : head) out << ' ' << h << " |";
    out << "\n|";
    for (int i = 0; i < kCols; ++i) out << (i == 0 ? " --- |" : " ---: |");
    out << "\n";
    for (const auto& row : cells) {
      out << "|";
      for (const auto& c : row) out << ' ' << c << " |";
      out << "\n";
    }
    return;
  }
  std::vector<std::size_t> width(kCols);
  for (int i = 0; i < kCols; ++i) width[i] = std::string(head[i]).size();
  for (const auto& row : cells) {
    for (int i = 0; i < kCols; ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (int i = 0; i < kCols; ++i) {
    out << (i ? "  " : "") << (i == 0 ? std::left : std::right) << std::setw(static_cast<int>(width[i]))
        << head[i];
  }
  out << "\n";
  for (const auto& row : cells) {
    for (int i = 0; i < kCols; ++i) {
      out << (i ? "  " : "") << (i == 0 ? std::left : std::right) << std::setw(static_cast<int>(width[i]))
          << row[i];
    }
    out << "\n";
  }
  out << std::right;
}

void establishment_table(std::ostream& out, const std::vector<ScenarioResult>& rows, bool markdown) {
  bool any = false;
  for (const auto& r : rows) any = any || r.establishment_ms.has_value();
  if (!any) return;
  if (markdown) {
    out << "| scenario | N | key establishment | measured ms | paper ms (Table 17) |\n"
        << "| --- | ---: | --- | ---: | ---: |\n";
  } else {
    out << "\nKey establishment (once, before measurement; wall time, ms)\n";
  }
  for (const auto& r : rows) {
    if (!r.establishment_ms) continue;
    const auto* p = r.paper_id.empty() ? nullptr : paper_scenario(r.paper_id);
    const std::string paper =
        p && p->establishment_ms ? fixed(*p->establishment_ms, 2) + " +- " + opt_fixed(p->establishment_sd_ms, 1)
                                 : "-";
    const std::string name = r.paper_id.empty() ? r.name : r.paper_id + " " + r.name;
    if (markdown) {
      out << "| " << name << " | " << r.subscribers << " | " << r.key_distribution << " | "
          << fixed(*r.establishment_ms, 2) << " | " << paper << " |\n";
    } else {
      out << "  " << std::left << std::setw(34) << name << std::right << " N=" << r.subscribers << "  "
          << std::setw(10) << fixed(*r.establishment_ms, 2) << " ms   paper: " << paper << "\n";
    }
  }
}

}  // namespace

void write_text_table(std::ostream& out, const std::vector<ScenarioResult>& rows) {
  latency_table(out, rows, false);
  establishment_table(out, rows, false);
}

void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<ScenarioResult>& rows) {
  out << "# layersec " << info.command << " results\n\n"
      << "- started (UTC): " << info.started_utc << "\n- host: " << info.host << "\n- build: "
      << info.build_type << "\n- seed: " << info.seed << ", iterations per scenario: " << info.iterations
      << "\n\n## How the figures were measured\n\n"
      << info.method << "\n\n"
      << "Columns: latency = half the closed-loop round trip (the paper's method), microseconds of real "
         "time; 1-way = publisher notify call to the last subscriber's event callback on the same clock; "
         "SecOC p50 us/it = median time inside SecOC protect + verify per iteration (all messages of the iteration; the mean is in the JSON/CSV); "
         "CPU %@50ms = thread CPU time per iteration divided by the paper's 50 ms pacing; RSS = peak "
         "resident set of the whole process during the scenario; x base p99 = p99 over the unsecured row "
         "of the same delivery mode measured in this run. Columns marked *paper* are the seed paper's "
         "published figures (milliseconds, their two-VM testbed), not measurements of this run.\n\n";
  std::map<std::string, std::vector<ScenarioResult>> by_series;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    if (!by_series.count(r.series)) order.push_back(r.series);
    by_series[r.series].push_back(r);
  }
  for (const auto& s : order) {
    out << "## " << s << "\n\n";
    latency_table(out, by_series[s], true);
    out << "\n";
    bool est = false;
    for (const auto& r : by_series[s]) est = est || r.establishment_ms.has_value();
    if (est) {
      out << "### Key establishment (once, before the measured loop)\n\n";
      establishment_table(out, by_series[s], true);
      out << "\n";
    }
  }
  bool any_notes = false;
  for (const auto& r : rows) any_notes = any_notes || !r.notes.empty();
  if (!info.notes.empty() || any_notes) {
    out << "## Notes\n\n";
    for (const auto& n : info.notes) out << "- " << n << "\n";
    for (const auto& r : rows) {
      if (!r.notes.empty()) out << "- " << r.name << ": " << r.notes << "\n";
    }
  }
}

}  // namespace layersec::harness
