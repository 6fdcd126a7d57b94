#include "layersec/harness/results.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>
#include <utility>

#include "layersec/harness/paper.h"

namespace layersec::harness {

namespace {

std::string build_type_label() {
#ifdef NDEBUG
  return "optimised (NDEBUG)";
#else
  return "debug (assertions on; timings are not representative)";
#endif
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

RunInfo start_run_info(std::string command, std::uint64_t seed, int iterations) {
  RunInfo info;
  info.command = std::move(command);
  info.seed = seed;
  info.iterations = iterations;
  info.build_type = build_type_label();
  info.started_utc = utc_timestamp();
  info.host = host_name();
  return info;
}

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
                        {"units", "latency in microseconds of real (monotonic) time, placed per row's timing_model; "
                                  "paper figures in ms"},
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
         "establishment_ms,security_rejections,timeouts,paper_mean_ms,paper_p99_ms,paper_source,"
         "timing_model,serial_mean_us,serial_p99_us";
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
        << r.timeouts << ',' << paper_mean << ',' << paper_p99 << ',' << csv_field(paper_source) << ','
        << csv_field(r.timing_model) << ',' << (r.serial_latency ? num(r.serial_latency->mean) : std::string())
        << ',' << (r.serial_latency ? num(r.serial_latency->p99) : std::string()) << "\n";
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
    std::string l = "goal: group-keyed latency at N=" + std::to_string(g.n_large) + " within " + fixed(g.limit, 1) +
                    "x of N=2 (hybrid, " + g.key_distribution + " group key, multicast, " +
                    (g.timing_model.empty() ? std::string("model unstated") : g.timing_model) +
                    "; latency to the last receiver = one-way notify -> latest event callback): mean x" +
                    fixed(g.ratio_mean, 2) + ", p50 x" + fixed(g.ratio_p50, 2) + ", p99 x" + fixed(g.ratio_p99, 2) +
                    " -> " + (g.met ? "MET" : "NOT MET") + " (judged on one-way mean and p99; half RTT, which adds " +
                    "the publisher taking N answers: mean x" + fixed(g.ratio_half_rtt_mean, 2) + ", p99 x" +
                    fixed(g.ratio_half_rtt_p99, 2) + ")";
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
                    " vs N=" + std::to_string(a.subscribers) + ": mean x" + fixed(b.latency.mean / a.latency.mean, 2) +
                    ", p99 x" + fixed(b.latency.p99 / a.latency.p99, 2) + " (N x" +
                    fixed(static_cast<double>(b.subscribers) / a.subscribers, 0) + ")");
  }
  return lines;
}

namespace {

void latency_table(std::ostream& out, const std::vector<ScenarioResult>& rows, bool markdown) {
  const char* head[] = {"scenario",     "N",     "model", "mean us", "p50 us",  "p95 us",   "p99 us",
                        "max us",       "1-way p50 us", "serial p99 us", "SecOC p50 us/it", "CPU %",
                        "RSS KiB",      "x base p99",   "paper mean ms", "paper p99 ms", "paper x p99"};
  constexpr int kCols = 17;
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
    cells.push_back({name, std::to_string(r.subscribers), r.timing_model.empty() ? "-" : r.timing_model,
                     fixed(r.latency.mean), fixed(r.latency.p50), fixed(r.latency.p95), fixed(r.latency.p99),
                     fixed(r.latency.max), fixed(r.one_way.p50),
                     r.serial_latency ? fixed(r.serial_latency->p99) : "-",
                     r.security == "none" || r.secoc_path_p50_us <= 0 ? "-" : fixed(r.secoc_path_p50_us, 2),
                     fixed(r.cpu_pct, 2),
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
      << "Columns: model = the timing model of the latency columns (parallel-ecus: the measured work of every "
         "node on its own simulated CPU, latency along the causal critical path; serial-one-thread: every node's "
         "work one after the other on the measuring thread); latency = half the closed-loop round trip (the "
         "paper's method), microseconds of real time; 1-way = publisher notify call to the last subscriber's event "
         "callback; serial p99 = the same iterations' p99 under serial-one-thread; "
         "SecOC p50 us/it = median time inside SecOC protect + verify per iteration, timed where the runtimes call "
         "the engines, summed over all nodes (the mean is in the JSON/CSV); "
         "CPU % = CPU time per iteration divided by the row's pacing (pacing_ms in the JSON: the paper's 50 ms in "
         "the sim; netns rows: the publisher process over its measured phase at 1 ms pacing); RSS = peak "
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
  const auto goals = group_size_goal_lines(rows);
  if (!goals.empty()) {
    out << "## Goals\n\n";
    for (const auto& g : goals) out << (g.rfind("  ", 0) == 0 ? "  - " + g.substr(2) : "- " + g) << "\n";
    out << "\n";
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
