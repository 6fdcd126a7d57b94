#include "layersec/harness/report_zonal.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace layersec::harness {

namespace {

using nlohmann::json;

// A JSON scalar as cell text; numbers with `digits` decimals unless whole.
std::string scalar_text(const json& v, int digits = 2) {
  if (v.is_null()) return "–";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) return "–";
    return std::floor(d) == d && std::abs(d) < 1e15 ? cell_number(d, 0) : cell_number(d, digits);
  }
  return "–";
}

}  // namespace

std::optional<double> json_field_number(const json& o, const char* key) {
  if (!o.is_object()) return std::nullopt;
  const auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  const double d = it->get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::string json_field_text(const json& o, const char* key) {
  if (!o.is_object()) return "–";
  const auto it = o.find(key);
  return it == o.end() ? "–" : scalar_text(*it);
}

namespace {

// The unit a field's name ends with.
std::pair<std::string, std::string> head_and_unit(const std::string& key) {
  static const std::vector<std::pair<std::string, std::string>> suffixes = {
      {"_mbit_s", "Mbit/s"}, {"_mbit", "Mbit/s"}, {"_us", "µs"}, {"_ns", "ns"}, {"_ms", "ms"}, {"_pct", "%"},
      {"_bytes", "bytes"}};
  for (const auto& [suffix, unit] : suffixes) {
    if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
      std::string head = key.substr(0, key.size() - suffix.size());
      std::replace(head.begin(), head.end(), '_', ' ');
      return {head, unit};
    }
  }
  std::string head = key;
  std::replace(head.begin(), head.end(), '_', ' ');
  return {head, ""};
}

struct KnownColumn {
  const char* key;
  const char* head;
  const char* unit;
  const char* help;
};

// The zonal row fields this file names (zonal_report.h's to_json(ZonalRow)).
const std::vector<KnownColumn>& known_columns() {
  static const std::vector<KnownColumn> cols = {
      {"hops", "hops", "switches", "zonal switches between the farthest ECU and the central node"},
      {"shaper", "shaper", "", "on: 802.1Qbv windows; strict: priority only; fifo: no shaper"},
      {"st_sent", "ST sent", "events", "control events of the farthest ECU"},
      {"st_lost", "ST lost", "events", ""},
      {"st_p50_us", "ST p50", "µs", "simulated time, ECU send to SecOC verified at C"},
      {"st_p99_us", "ST p99", "µs", "simulated time"},
      {"st_max_us", "ST max", "µs", "simulated time, the worst case"},
      {"planned_us", "planned", "µs", "where the ST windows expect the frame"},
      {"bound_us", "bound", "µs", "analytic worst case (none for FIFO)"},
      {"st_over_bound", "over bound", "events", "accepted events later than the bound, every ECU"},
      {"be_offered_mbit_s", "BE offered", "Mbit/s", "camera load offered, wire rate"},
      {"be_throughput_mbit_s", "BE delivered", "Mbit/s", "camera traffic delivered to C, wire rate"},
      {"be_dropped", "BE dropped", "frames", ""},
      {"transmission_overruns", "overruns", "frames", "frames on the wire when their gate closed"},
      {"macsec_drops", "MACsec drops", "frames", "frames a SecY refused (0 unless attacked)"}};
  return cols;
}

// Per-row constants shown once as facts, and nested arrays: not columns.
const std::set<std::string>& row_non_columns() {
  static const std::set<std::string> keys = {"be_load_pct", "port_mbit", "ecu_mbit", "cycles", "streams", "st_min_us",
                                             "be_sent"};
  return keys;
}

int shaper_color(const std::string& s) { return s == "on" ? 2 : s == "strict" ? 0 : s == "fifo" ? 1 : 8; }

std::string shaper_name(const std::string& s) {
  if (s == "on") return "802.1Qbv shaper";
  if (s == "strict") return "strict priority";
  if (s == "fifo") return "FIFO";
  return s;
}

// Names for the sweep's options (zonal_json's "options"); others keep their JSON name.
std::string option_label(const std::string& key) {
  static const std::map<std::string, std::string> names = {{"min_hops", "hops from"},
                                                           {"max_hops", "hops to"},
                                                           {"be_load_pct", "camera (BE) load, % of the backbone"},
                                                           {"port_mbit", "backbone and camera links, Mbit/s"},
                                                           {"cycles", "cycles of 1 ms per row"},
                                                           {"seed", "seed"}};
  const auto it = names.find(key);
  return it == names.end() ? std::string() : it->second;
}

ReportTable rows_table(const json& rows) {
  ReportTable t;
  t.id = "table-zonal";
  t.fold_constant_columns = true;
  t.caption = "The farthest ECU's control events (ST) per hop count and shaper, under camera load (BE); simulated time";
  std::vector<std::string> keys;
  for (const auto& k : known_columns()) {
    t.columns.push_back({k.head, k.unit, std::string(k.key) != "shaper", false, k.help});
    keys.push_back(k.key);
  }
  // Fields this file does not know yet: a column each, named after the field.
  std::set<std::string> seen(keys.begin(), keys.end());
  for (const auto& r : rows) {
    if (!r.is_object()) continue;
    for (const auto& [k, v] : r.items()) {
      if (seen.count(k) || row_non_columns().count(k) || v.is_structured()) continue;
      seen.insert(k);
      keys.push_back(k);
      const auto [head, unit] = head_and_unit(k);
      t.columns.push_back({head, unit, v.is_number(), false, "zonal.json field " + k});
    }
  }
  for (const auto& r : rows) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::string c = json_field_text(r, keys[i].c_str());
      if (keys[i] == "shaper") c = shaper_name(c);
      cells.push_back(std::move(c));
    }
    t.rows.push_back(std::move(cells));
    const auto over = json_field_number(r, "st_over_bound");
    t.row_flags.push_back(over && *over > 0 ? "failed" : "");
  }
  return t;
}

std::vector<ReportFigure> zonal_figures(const json& rows) {
  const char* hops = "zonal switches between the ECU and the central node";
  LineChart lat;
  lat.id = "chart-zonal";
  lat.title = "Control-event (ST) latency against hops";
  lat.x_label = hops;
  lat.y_label = "ST latency (µs, simulated time, log scale)";
  lat.y_scale = AxisScale::kLog10;
  lat.x_integer = true;
  LineChart be;
  be.id = "chart-zonal-be";
  be.title = "Camera traffic (BE) delivered against hops";
  be.x_label = hops;
  be.y_label = "BE delivered to C (Mbit/s, wire rate)";
  be.x_integer = true;
  std::map<std::string, std::vector<const json*>> by;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    if (!r.is_object() || !json_field_number(r, "hops")) continue;
    const std::string s = json_field_text(r, "shaper");
    if (!by.count(s)) order.push_back(s);
    by[s].push_back(&r);
  }
  for (const auto& s : order) {
    auto list = by[s];
    std::sort(list.begin(), list.end(), [](const json* a, const json* b) { return *json_field_number(*a, "hops") < *json_field_number(*b, "hops"); });
    const int c = shaper_color(s);
    ChartSeries mx{shaper_name(s) + ", max", {}, SeriesStyle::kLineMarkers, c, false, false};
    ChartSeries p99{shaper_name(s) + ", p99", {}, SeriesStyle::kLine, c, true, false};
    ChartSeries bound{"bound, " + shaper_name(s), {}, SeriesStyle::kLine, c, false, false};
    ChartSeries thr{shaper_name(s), {}, SeriesStyle::kLineMarkers, c, false, false};
    for (const json* r : list) {
      const double h = *json_field_number(*r, "hops");
      if (auto v = json_field_number(*r, "st_max_us")) mx.points.emplace_back(h, *v);
      if (auto v = json_field_number(*r, "st_p99_us")) p99.points.emplace_back(h, *v);
      if (auto v = json_field_number(*r, "bound_us")) bound.points.emplace_back(h, *v);
      if (auto v = json_field_number(*r, "be_throughput_mbit_s")) thr.points.emplace_back(h, *v);
    }
    lat.series.push_back(std::move(mx));
    lat.series.push_back(std::move(p99));
    if (!bound.points.empty()) {
      bound.color = 7;
      bound.dashed = true;
      lat.series.push_back(std::move(bound));
    }
    be.series.push_back(std::move(thr));
  }
  return {{"Simulated time of this run, the farthest ECU: worst case with markers, p99 dashed, the analytic bounds "
           "grey dashed.",
           std::move(lat)},
          {"What the shaping costs the cameras (wire rate into the central node).", std::move(be)}};
}

}  // namespace

ReportTable json_rows_table(const json& array, const std::string& id, const std::string& caption,
                            const std::vector<std::string>& skip) {
  ReportTable t;
  t.id = id;
  t.caption = caption;
  std::vector<std::string> keys;
  std::set<std::string> seen(skip.begin(), skip.end());
  if (!array.is_array()) return t;
  for (const auto& r : array) {
    if (!r.is_object()) continue;
    for (const auto& [k, v] : r.items()) {
      if (seen.count(k) || v.is_structured()) continue;
      seen.insert(k);
      keys.push_back(k);
      const auto [head, unit] = head_and_unit(k);
      t.columns.push_back({head, unit, v.is_number(), false, k});
    }
  }
  for (const auto& r : array) {
    if (!r.is_object()) continue;
    std::vector<std::string> cells;
    for (const auto& k : keys) cells.push_back(json_field_text(r, k.c_str()));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

ReportSection zonal_report_section(const json& z) {
  ReportSection s;
  s.id = "zonal";
  s.title = "Zonal network (simulated TSN + MACsec + SecOC)";
  s.paragraphs = {"SOME/IP + SecOC control events travel as scheduled traffic (ST) from an ECU behind 1 to 4 zonal "
                  "switches to the central node, with MACsec hop by hop on every link, while cameras load the "
                  "backbone with best-effort traffic (BE). Every figure is exact simulated time, not the host's clock. "
                  "A compromised switch holds its links' MACsec keys: what it can read and what SecOC still rejects "
                  "is below."};
  const json empty = json::object();
  const json& options = z.is_object() && z.contains("options") ? z["options"] : empty;
  ReportFacts facts{"Settings", {}};
  if (options.is_object()) {
    // The known options in a reading order, then any other.
    std::vector<std::pair<std::string, json>> ordered;
    for (const char* k : {"min_hops", "max_hops", "be_load_pct", "port_mbit", "cycles", "seed"}) {
      if (options.contains(k)) ordered.emplace_back(k, options[k]);
    }
    for (const auto& [k, v] : options.items()) {
      if (option_label(k).empty()) ordered.emplace_back(k, v);
    }
    for (const auto& [k, v] : ordered) {
      if (v.is_structured()) continue;
      const auto [head, unit] = head_and_unit(k);
      const std::string label = option_label(k);
      facts.items.push_back({label.empty() ? head : label,
                             scalar_text(v) + (label.empty() && !unit.empty() ? " " + unit : "")});
    }
  }
  if (!facts.items.empty()) s.facts.push_back(std::move(facts));
  const json& rows = z.is_object() && z.contains("rows") && z["rows"].is_array() ? z["rows"] : json::array();
  if (!rows.empty()) {
    s.tables.push_back(rows_table(rows));
    s.figures = zonal_figures(rows);
  }
  if (z.is_object() && z.contains("compromised_switch") && z["compromised_switch"].is_object()) {
    const json& c = z["compromised_switch"];
    const auto accepted = json_field_number(c, "accepted");
    s.notes.push_back({"Compromised switch " + json_field_text(c, "switch") + " (" + json_field_text(c, "hops") + " hops, shaper on) read " +
                           json_field_text(c, "read_plaintext") + " of " + json_field_text(c, "st_sent") + " events in the clear (e.g. " +
                           json_field_text(c, "example_read") + ").",
                       ""});
    s.notes.push_back({"It altered and re-protected " + json_field_text(c, "altered") + "; MACsec at the central node accepted " +
                           json_field_text(c, "macsec_accepted_at_central") + " of them, SecOC rejected " +
                           json_field_text(c, "secoc_rejected") + "; altered events accepted: " + json_field_text(c, "accepted") + ".",
                       accepted ? (*accepted == 0 ? "met" : "not-met") : ""});
    s.highlights.push_back({"Zonal: altered events accepted at C", accepted ? scalar_text(c["accepted"]) : "–",
                            "of " + json_field_text(c, "altered") + " a compromised switch altered and re-protected (MACsec accepted " +
                                json_field_text(c, "macsec_accepted_at_central") + "; SecOC must reject all)",
                            accepted ? (*accepted == 0 ? "met" : "not-met") : ""});
  }
  // Anything else the zonal section reports, so nothing is dropped.
  static const std::set<std::string> known = {"method", "options", "rows", "compromised_switch"};
  if (z.is_object()) {
    for (const auto& [k, v] : z.items()) {
      if (known.count(k)) continue;
      if (v.is_array() && !v.empty() && v.front().is_object()) {
        s.tables.push_back(json_rows_table(v, "table-zonal-" + k, head_and_unit(k).first));
      } else if (v.is_object()) {
        ReportFacts f{head_and_unit(k).first, {}};
        for (const auto& [kk, vv] : v.items()) {
          if (!vv.is_structured()) f.items.push_back({head_and_unit(kk).first, scalar_text(vv) +
                                                                                   (head_and_unit(kk).second.empty() ? "" : " " + head_and_unit(kk).second)});
        }
        if (!f.items.empty()) s.facts.push_back(std::move(f));
      } else if (!v.is_structured()) {
        s.paragraphs.push_back(head_and_unit(k).first + ": " + scalar_text(v));
      }
    }
  }
  if (z.is_object() && z.contains("method") && z["method"].is_string()) {
    s.details = {z["method"].get<std::string>()};
    s.details_summary = "How the zonal network is built and measured";
  }
  return s;
}

}  // namespace layersec::harness
