#include "layersec/harness/report_tsn.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "layersec/base/file.h"
#include "layersec/harness/report_zonal.h"

namespace layersec::harness {

namespace {

using nlohmann::json;

const json& member(const json& o, const char* key) {
  static const json null;
  if (!o.is_object()) return null;
  const auto it = o.find(key);
  return it == o.end() ? null : *it;
}

bool flag(const json& o, const char* key) {
  const json& v = member(o, key);
  return v.is_boolean() && v.get<bool>();
}

std::string number_cell(const json& o, const char* key, int digits) {
  const auto v = json_field_number(o, key);
  return v ? cell_number(*v, digits) : "–";
}

// The row columns of tsn_bench_json's rows (bench/tsn_bench_report.cc).
ReportTable rows_table(const json& rows, const std::map<std::string, bool>& row_met) {
  ReportTable t;
  t.id = "table-tsn";
  t.fold_constant_columns = true;
  t.caption = "Each class of each run: the receiver's figures (BE: iperf3; ST: our generator, every frame timed, or "
              "iperf3 and a latency probe) and ST one-way latency (this host's links, wall-clock time)";
  t.columns = {{"row", "", false, false, "the run and class"},
               {"class", "", false, false, "ST: scheduled (PCP 5, 600 µs of each 1 ms cycle); BE: best effort"},
               {"transport", "", false, false, "iperf3's transport for this class"},
               {"BE beside", "", false, false, "the BE stream running during this row's run"},
               {"MACsec", "", false, false, "layersec's user-space SecY on the link"},
               {"shaper", "", false, false, "802.1Qbv gates on (off: every gate open)"},
               {"port", "Mbit/s", true, false, "emulated port speed"},
               {"offered", "Mbit/s", true, false, "iperf3's target rate (0: TCP, unpaced)"},
               {"gate share", "Mbit/s", true, false, "the class's gate time x the port speed"},
               {"delivered", "Mbit/s", true, false, "iperf3 receiver throughput"},
               {"jitter", "ms", true, false, "iperf3 UDP jitter"},
               {"loss", "%", true, false, "iperf3 UDP loss"},
               {"timed", "recv/sent", true, false, "ST frames timed: the generator's frames, or the probe's datagrams"},
               {"p50", "µs", true, false, "ST one-way latency"},
               {"p99", "µs", true, false, "ST one-way latency"},
               {"max", "µs", true, false, "ST one-way latency"},
               {"bound", "µs", true, false,
                "the ST bound: gate wait + blocking + serialisation + own-class frames ahead + measured processing p99"}};
  for (const auto& r : rows) {
    if (!r.is_object()) continue;
    std::string probe = "–";
    if (json_field_number(r, "probe_sent")) {
      probe = json_field_text(r, "probe_received") + "/" + json_field_text(r, "probe_sent");
    } else if (r.contains("generator") && r["generator"].is_object()) {
      probe = json_field_text(r["generator"], "received") + "/" + json_field_text(r["generator"], "sent");
    }
    t.rows.push_back({json_field_text(r, "name"), json_field_text(r, "class"), json_field_text(r, "transport"),
                      json_field_text(r, "be_transport"), json_field_text(r, "macsec"), json_field_text(r, "shaper"),
                      json_field_text(r, "port_mbit_s"), number_cell(r, "offered_mbit_s", 1),
                      number_cell(r, "share_mbit_s", 1), number_cell(r, "throughput_mbit_s", 1),
                      number_cell(r, "jitter_ms", 3), number_cell(r, "loss_pct", 2), probe,
                      number_cell(r, "latency_p50_us", 1), number_cell(r, "latency_p99_us", 1),
                      number_cell(r, "latency_max_us", 1), number_cell(r, "bound_us", 1)});
    const auto it = row_met.find(json_field_text(r, "name"));
    t.row_flags.push_back(it != row_met.end() && !it->second ? "failed" : "");
  }
  return t;
}

// The rows' port speeds, ascending.
std::vector<double> port_speeds(const json& rows) {
  std::vector<double> ports;
  for (const auto& r : rows) {
    if (auto p = json_field_number(r, "port_mbit_s"); p && std::find(ports.begin(), ports.end(), *p) == ports.end())
      ports.push_back(*p);
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

// "a–b" of the values (one value: itself); "–" for none.
std::string range_text(std::vector<double> v, int digits) {
  if (v.empty()) return "–";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (*lo == *hi) return cell_number(*lo, digits);
  return cell_number(*lo, digits) + "–" + cell_number(*hi, digits);
}

std::string paper_range(const json& ref, const char* group, const char* key, int digits) {
  const json& v = member(member(ref, group), key);
  std::vector<double> values;
  if (v.is_number()) values.push_back(v.get<double>());
  if (v.is_array()) {
    for (const auto& x : v) {
      if (x.is_number()) values.push_back(x.get<double>());
    }
  }
  return range_text(values, digits);
}

// The paper's figures (tsn_bench_json's "reference") beside this run's, per port.
ReportTable paper_table(const json& rows, const json& ref) {
  const std::vector<double> ports = port_speeds(rows);
  ReportTable t;
  t.id = "table-tsn-paper";
  t.caption = "The TSN lab paper's figures (its hardware testbed) beside this run's, per emulated port speed: the "
              "range over this run's rows of that kind";
  t.ours_group = "this run";
  t.paper_group = "the TSN lab paper's (published)";
  t.columns = {{"figure", "", false, false, ""}, {"unit", "", false, false, ""}};
  for (double p : ports) t.columns.push_back({cell_number(p, 0) + " Mbit/s port", "", true, false, ""});
  t.columns.push_back({"the paper's", "", true, true, "published, not measured here"});
  struct Line {
    const char* figure;
    const char* unit;
    const char* cls;  // "ST", "BE" or "" for both
    bool macsec;
    const char* field;
    bool max_only;
    int digits;
    const char* group;
    const char* ref_key;
  };
  const Line lines[] = {
      {"ST throughput, without MACsec", "Mbit/s", "ST", false, "throughput_mbit_s", false, 1, "without_macsec", "st_throughput_mbit_s"},
      {"BE throughput, without MACsec", "Mbit/s", "BE", false, "throughput_mbit_s", false, 1, "without_macsec", "be_throughput_mbit_s"},
      {"ST jitter, without MACsec", "ms", "ST", false, "jitter_ms", false, 3, "without_macsec", "st_jitter_ms"},
      {"BE loss, without MACsec, at most", "%", "BE", false, "loss_pct", true, 1, "without_macsec", "be_loss_pct_max"},
      {"ST throughput, with MACsec", "Mbit/s", "ST", true, "throughput_mbit_s", false, 1, "with_macsec", "st_throughput_mbit_s"},
      {"loss with MACsec, at most", "%", "", true, "loss_pct", true, 1, "with_macsec", "loss_pct_max"}};
  for (const auto& l : lines) {
    std::vector<std::string> cells = {l.figure, l.unit};
    for (double p : ports) {
      std::vector<double> v;
      for (const auto& r : rows) {
        if (json_field_number(r, "port_mbit_s") != p || flag(r, "macsec") != l.macsec) continue;
        if (*l.cls && json_field_text(r, "class") != l.cls) continue;
        if (auto x = json_field_number(r, l.field)) v.push_back(*x);
      }
      if (l.max_only && !v.empty()) v = {*std::max_element(v.begin(), v.end())};
      cells.push_back(range_text(v, l.digits));
    }
    cells.push_back(paper_range(ref, l.group, l.ref_key, l.digits));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// Short category labels (a bar chart's labels are not wrapped): "Qbv" for the
// shaper, "open" for every gate open; the BE transport only when the run used several.
std::string gates(const json& r) { return flag(r, "shaper") ? "Qbv" : "open"; }

bool several_be(const json& rows) {
  std::set<std::string> be;
  for (const auto& r : rows) be.insert(json_field_text(r, "be_transport"));
  return be.size() > 1;
}

// Per port: throughput per (class, shaper, BE beside), without and with MACsec.
ReportFigure throughput_chart(const json& rows, double port) {
  BarChart c;
  c.id = "chart-tsn-throughput-" + cell_number(port, 0);
  c.title = "Delivered throughput per class, " + cell_number(port, 0) + " Mbit/s port";
  c.y_label = "iperf3 receiver throughput (Mbit/s)";
  BarSeries plain{"without MACsec", {}, 0, false};
  BarSeries sec{"with MACsec", {}, 2, false};
  const bool be = several_be(rows);
  std::map<std::string, std::size_t> index;
  for (const auto& r : rows) {
    if (!r.is_object() || json_field_number(r, "port_mbit_s") != port) continue;
    const std::string cat =
        json_field_text(r, "class") + " " + gates(r) + (be ? " " + json_field_text(r, "be_transport") : "");
    if (!index.count(cat)) {
      index[cat] = c.categories.size();
      c.categories.push_back(cat);
      plain.values.emplace_back();
      sec.values.emplace_back();
    }
    (flag(r, "macsec") ? sec : plain).values[index[cat]] = json_field_number(r, "throughput_mbit_s");
  }
  c.series = {std::move(plain), std::move(sec)};
  return {"This run's iperf3 figures at the " + cell_number(port, 0) + " Mbit/s port (Qbv: the 802.1Qbv shaper; "
              "open: every gate open" + (be ? "; then the BE stream's transport" : "") +
              "). The paper's ranges are in the table above (its testbed, not this run).",
          std::move(c)};
}

// Per port: the ST probe's p99 and max against the analytic bound, per ST row.
ReportFigure latency_chart(const json& rows, double port) {
  BarChart c;
  c.id = "chart-tsn-latency-" + cell_number(port, 0);
  c.title = "ST probe one-way latency against the bound, " + cell_number(port, 0) + " Mbit/s port";
  c.y_label = "latency (µs, log scale)";
  c.y_scale = AxisScale::kLog10;
  BarSeries p99{"p99", {}, 0, false};
  BarSeries mx{"max", {}, 1, false};
  BarSeries bound{"analytic bound", {}, 7, false};
  const bool be = several_be(rows);
  for (const auto& r : rows) {
    if (!r.is_object() || json_field_text(r, "class") != "ST" || json_field_number(r, "port_mbit_s") != port) continue;
    c.categories.push_back(std::string(flag(r, "macsec") ? "MACsec " : "plain ") + gates(r) +
                           (be ? " " + json_field_text(r, "be_transport") : ""));
    p99.values.push_back(json_field_number(r, "latency_p99_us"));
    mx.values.push_back(json_field_number(r, "latency_max_us"));
    bound.values.push_back(json_field_number(r, "bound_us"));
  }
  c.series = {std::move(p99), std::move(mx), std::move(bound)};
  return {"Both namespaces read one CLOCK_MONOTONIC; a p99 above the bound is a goal not met (the bound counts no "
          "processing time, this host's user-space links take some).",
          std::move(c)};
}

std::optional<json> read_json_object(const std::string& path, std::ostream& err) {
  try {
    json j = json::parse(read_regular_file(path, kMaxConfigFileSize));
    if (!j.is_object()) {
      err << "layersec: " << path << ": not a JSON object (expected the --json output of layersec bench)\n";
      return std::nullopt;
    }
    return j;
  } catch (const FileError& e) {
    err << "layersec: " << e.what() << "\n";
  } catch (const json::exception& e) {
    err << "layersec: " << path << ": not valid JSON: " << e.what() << "\n";
  }
  return std::nullopt;
}

// The document of a given file (nullopt on error: `failed` set), or of
// DIR/NAME when present (nullopt when absent or unusable, reported).
std::optional<json> given_or_found(const std::string& given, const std::string& dir, const char* name,
                                   std::ostream& err, bool& failed, std::string& used) {
  if (!given.empty()) {
    used = given;
    auto j = read_json_object(given, err);
    if (!j) failed = true;
    return j;
  }
  if (dir.empty()) return std::nullopt;
  const std::filesystem::path p = std::filesystem::path(dir) / name;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) return std::nullopt;
  used = p.string();
  auto j = read_json_object(used, err);
  if (!j) err << "layersec: " << used << " left out of report.html\n";
  return j;
}

}  // namespace

ReportSection tsn_report_section(const json& tsn, const std::string& source) {
  ReportSection s;
  s.id = "tsn";
  s.title = "TSN first hop across network namespaces (layersec bench tsn)";
  s.paragraphs = {"Scheduled (ST) and best-effort (BE) traffic at once between two network namespaces over "
                  "layersec's links with the TSN first hop, with and without MACsec and the 802.1Qbv shaper, at "
                  "emulated port speeds: measured on this host in wall-clock time, not simulated."};
  if (!source.empty()) s.paragraphs.push_back("From " + source + " (the per-link counters are there too).");
  const json& rows = member(tsn, "rows").is_array() ? member(tsn, "rows") : json::array();
  std::map<std::string, bool> row_met;  // a row with any goal not met is flagged
  const json& goals = member(tsn, "goals");
  int met = 0;
  int total = 0;
  if (goals.is_array()) {
    for (const auto& g : goals) {
      if (!g.is_object()) continue;
      const bool ok = flag(g, "met");
      ++total;
      met += ok ? 1 : 0;
      const std::string row = json_field_text(g, "row");
      auto [it, fresh] = row_met.emplace(row, ok);
      if (!fresh) it->second = it->second && ok;
      s.notes.push_back({json_field_text(g, "goal") + " — " + row + ": " + json_field_text(g, "detail"),
                         ok ? "met" : "not-met"});
    }
  }
  if (!rows.empty()) {
    s.tables.push_back(rows_table(rows, row_met));
    s.tables.push_back(paper_table(rows, member(tsn, "reference")));
    for (double port : port_speeds(rows)) {
      s.figures.push_back(throughput_chart(rows, port));
      s.figures.push_back(latency_chart(rows, port));
    }
  }
  if (total > 0) {
    s.highlights.push_back({"TSN bench: goals met", std::to_string(met) + " of " + std::to_string(total),
                            "ST loss, ST p99 within the bound, throughput of the gate share, MACsec cost (bench tsn)",
                            met == total ? "met" : "not-met"});
  }
  const json& source_text = member(member(tsn, "reference"), "source");
  if (source_text.is_string()) {
    s.paragraphs.push_back("The paper's figures: " + source_text.get<std::string>() + ".");
  }
  const json& notes = member(tsn, "notes");
  if (notes.is_array()) {
    for (const auto& n : notes) {
      if (n.is_string()) s.notes.push_back({n.get<std::string>(), ""});
    }
  }
  if (member(tsn, "method").is_string()) {
    s.details = {member(tsn, "method").get<std::string>()};
    s.details_summary = "How the TSN bench is built and measured";
  }
  return s;
}

std::optional<std::vector<ReportSection>> result_file_sections(const std::string& dir, const ResultFiles& files,
                                                               std::ostream& out, std::ostream& err) {
  std::vector<ReportSection> sections;
  bool failed = false;
  std::string used;
  if (auto tsn = given_or_found(files.tsn_json, dir, "tsn.json", err, failed, used)) {
    sections.push_back(tsn_report_section(*tsn, used));
    out << "report.html: the bench tsn results of " << used << "\n";
  }
  if (files.zonal) {
    used.clear();
    if (auto zonal = given_or_found(files.zonal_json, dir, "zonal.json", err, failed, used)) {
      sections.push_back(zonal_report_section(*zonal));
      out << "report.html: the bench zonal results of " << used << "\n";
    }
  }
  if (failed) return std::nullopt;
  return sections;
}

}  // namespace layersec::harness
