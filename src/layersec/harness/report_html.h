// The HTML report (`report.html` of `layersec demo` and `layersec bench
// scenarios --out DIR`; docs/harness.md, "report.html"): one self-contained
// page a person opens in a browser and can send on. Everything is inline:
// the stylesheet in a <style> element, the charts as SVG (svg_chart.h); no
// script, font, image or stylesheet is fetched, and the page's
// Content-Security-Policy (default-src 'none') forbids any fetch even if
// markup were injected. Every string put into the page is escaped
// (html_escape), ids are sanitised (html_id).
//
// This file is the generic page: a document of sections holding key/value
// lists, tables, figures and notes. report_scenarios.h fills it from
// scenario rows; report_zonal.h adds the zonal network's section.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "layersec/harness/svg_chart.h"

namespace layersec::harness {

struct ReportColumn {
  std::string head;        // "p99"
  std::string unit;        // "µs" (shown in the header under the name); "" for none
  bool numeric = true;     // right-aligned, tabular figures
  bool paper = false;      // the paper's published figure: shaded, in the "paper" header group
  std::string help;        // tooltip: what the column is
};

struct ReportTable {
  std::string id;
  std::string caption;
  std::vector<ReportColumn> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column (missing cells are empty)
  std::vector<std::string> row_flags;          // per row: "" or a CSS-safe flag ("failed", "baseline")
  // Columns after the first whose cell is the same in every row (3 rows or
  // more) leave the table and are listed under it ("The same in every row: ...").
  bool fold_constant_columns = false;
  std::string ours_group = "this run";         // header over the non-paper columns when paper columns exist
  std::string paper_group = "the paper's (published)";
};

struct ReportFigure {
  std::string caption;
  std::variant<LineChart, BarChart> chart;
};

// A line of a section's list; `status` "met", "not-met", "inconclusive" or ""
// draws a badge.
struct ReportNote {
  std::string text;
  std::string status;
};

// A titled key/value list ("Settings", "Machine"); groups of a section sit side by side.
struct ReportFacts {
  std::string title;
  std::vector<std::pair<std::string, std::string>> items;
};

// A figure shown large at the top of the page.
struct ReportHighlight {
  std::string label;   // "Hybrid-PSK multicast p99 over unsecured"
  std::string value;   // "×1.21"
  std::string detail;  // "the paper's: ×1.35 (Table 19)"
  std::string status;  // as ReportNote::status
};

struct ReportSection {
  std::string id;
  std::string title;
  std::vector<std::string> paragraphs;
  std::vector<ReportFacts> facts;
  std::vector<ReportTable> tables;
  std::vector<ReportFigure> figures;
  std::vector<ReportNote> notes;
  std::vector<std::string> details;  // long text, folded (<details>)
  std::string details_summary = "details";
  // Figures this section wants at the top of the page: render_report_html
  // shows them after the document's own highlights.
  std::vector<ReportHighlight> highlights;
};

struct ReportDocument {
  std::string title;                                      // "layersec demo"
  std::string subtitle;                                   // one line under the title
  std::vector<ReportHighlight> highlights;               // the figures at the top
  std::vector<ReportSection> sections;
  std::string footer;
};

// The whole page (<!DOCTYPE html> ... </html>).
[[nodiscard]] std::string render_report_html(const ReportDocument& doc);

// Formatting for cells: a figure with `digits` decimals, "–" when not finite.
[[nodiscard]] std::string cell_number(double v, int digits = 1);
// "×1.23" (two decimals), "–" when not finite or not positive.
[[nodiscard]] std::string cell_ratio(double v);

}  // namespace layersec::harness
