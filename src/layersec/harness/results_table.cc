#include "layersec/harness/results_table.h"

#include <algorithm>
#include <iomanip>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/harness/paper.h"
#include "layersec/harness/results_format.h"
#include "layersec/harness/results_json.h"

namespace layersec::harness {

namespace {

constexpr int kCols = 17;
constexpr const char* kHead[kCols] = {"scenario",     "N",     "model", "mean us", "p50 us",  "p95 us",   "p99 us",
                                      "max us",       "1-way p50 us", "serial p99 us", "SecOC p50 us/it", "CPU %",
                                      "RSS KiB",      "x base p99",   "paper mean ms", "paper p99 ms", "paper x p99"};

std::string row_name(const ScenarioResult& r) { return r.paper_id.empty() ? r.name : r.paper_id + " " + r.name; }

std::vector<std::string> cells_of(const ScenarioResult& r) {
  const nlohmann::json p = paper_json(r);
  std::string pm = "-", pp = "-", pr = "-";
  if (p.is_object()) {
    pm = format_fixed(p["mean_ms"].get<double>(), 2);
    if (p.contains("p99_ms")) pp = format_fixed(p["p99_ms"].get<double>(), 2);
    if (p.contains("ratio_p99")) pr = format_fixed(p["ratio_p99"].get<double>(), 2);
  }
  return {row_name(r), std::to_string(r.subscribers), r.timing_model.empty() ? "-" : r.timing_model,
          format_fixed(r.latency.mean), format_fixed(r.latency.p50), format_fixed(r.latency.p95),
          format_fixed(r.latency.p99), format_fixed(r.latency.max), format_fixed(r.one_way.p50),
          r.serial_latency ? format_fixed(r.serial_latency->p99) : "-",
          r.security == "none" || r.secoc_path_p50_us <= 0 ? "-" : format_fixed(r.secoc_path_p50_us, 2),
          format_fixed(r.cpu_pct, 2), std::to_string(r.rss_kib), format_optional(r.ratio_p99), pm, pp, pr};
}

void write_aligned(std::ostream& out, const std::vector<std::size_t>& width, const std::vector<std::string>& row) {
  for (int i = 0; i < kCols; ++i) {
    out << (i ? "  " : "") << (i == 0 ? std::left : std::right) << std::setw(static_cast<int>(width[i])) << row[i];
  }
  out << "\n";
}

}  // namespace

void write_latency_table(std::ostream& out, const std::vector<ScenarioResult>& rows, TableFormat format) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) cells.push_back(cells_of(r));
  if (format == TableFormat::kMarkdown) {
    out << "|";
    for (const char* h : kHead) out << ' ' << h << " |";
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
  const std::vector<std::string> head(std::begin(kHead), std::end(kHead));
  std::vector<std::size_t> width(kCols);
  for (int i = 0; i < kCols; ++i) width[i] = head[i].size();
  for (const auto& row : cells) {
    for (int i = 0; i < kCols; ++i) width[i] = std::max(width[i], row[i].size());
  }
  write_aligned(out, width, head);
  for (const auto& row : cells) write_aligned(out, width, row);
  out << std::right;
}

void write_establishment_table(std::ostream& out, const std::vector<ScenarioResult>& rows, TableFormat format) {
  const bool markdown = format == TableFormat::kMarkdown;
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
    const std::string paper = p && p->establishment_ms ? format_fixed(*p->establishment_ms, 2) + " +- " +
                                                             format_optional(p->establishment_sd_ms, 1)
                                                       : "-";
    if (markdown) {
      out << "| " << row_name(r) << " | " << r.subscribers << " | " << r.key_distribution << " | "
          << format_fixed(*r.establishment_ms, 2) << " | " << paper << " |\n";
    } else {
      out << "  " << std::left << std::setw(34) << row_name(r) << std::right << " N=" << r.subscribers << "  "
          << std::setw(10) << format_fixed(*r.establishment_ms, 2) << " ms   paper: " << paper << "\n";
    }
  }
}

void write_text_table(std::ostream& out, const std::vector<ScenarioResult>& rows) {
  write_latency_table(out, rows, TableFormat::kText);
  write_establishment_table(out, rows, TableFormat::kText);
}

}  // namespace layersec::harness
