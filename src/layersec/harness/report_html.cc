#include "layersec/harness/report_html.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace layersec::harness {

namespace {

// The page's whole stylesheet. Fonts are the system's (no web font).
constexpr const char* kStyle = R"css(
:root{--fg:#111827;--muted:#4b5563;--line:#e5e7eb;--paper:#fff6e0;--paper-head:#fde6ad;--ours-head:#dbe8f6;--accent:#0b4a7d}
*{box-sizing:border-box}
body{margin:0;background:#f4f5f7;color:var(--fg);font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;line-height:1.45;font-size:15px}
header.page{background:#0f2a44;color:#fff;padding:22px 32px 18px}
header.page h1{margin:0;font-size:26px;font-weight:650;letter-spacing:.2px}
header.page p{margin:6px 0 0;color:#c9d6e3;font-size:14px}
main{max-width:1340px;margin:0 auto;padding:10px 28px 40px}
nav.toc{margin:14px 0 0;font-size:13px}
nav.toc a{color:var(--accent);text-decoration:none;margin-right:14px;white-space:nowrap}
nav.toc a:hover{text-decoration:underline}
.highlights{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0 4px}
.highlight{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 16px;min-width:220px;max-width:420px;flex:1}
.highlight .label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.4px}
.highlight .value{font-size:24px;font-weight:650;margin:2px 0;font-variant-numeric:tabular-nums}
.highlight .detail{font-size:13px;color:var(--muted)}
section{background:#fff;border:1px solid var(--line);border-radius:10px;padding:16px 24px 20px;margin:18px 0}
section h2{margin:0 0 10px;font-size:20px;font-weight:650}
section p{margin:6px 0 10px;max-width:110ch}
.facts-row{display:flex;flex-wrap:wrap;gap:10px 40px}
div.facts{flex:1 1 420px;min-width:0}
.facts h3{font-size:14px;margin:4px 0 6px;color:var(--accent)}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 18px;margin:0;font-size:14px}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.table-wrap{overflow-x:auto;margin:10px 0 16px;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;font-size:13px;width:100%}
caption{caption-side:top;text-align:left;font-weight:600;padding:8px 10px 6px;font-size:14px}
th,td{padding:4px 7px;border-bottom:1px solid var(--line)}
tbody th{text-align:left;font-weight:600;white-space:nowrap}
td.text{white-space:nowrap}
thead th{background:#f3f4f6;font-weight:600;text-align:left;vertical-align:bottom;min-width:3.5em}
thead th.num{text-align:right}
thead th .unit{display:block;font-weight:400;color:var(--muted);font-size:11px}
thead th.group{text-align:center;font-size:12px;letter-spacing:.3px;text-transform:uppercase}
thead th.group-ours{background:var(--ours-head)}
thead th.group-paper,thead th.paper{background:var(--paper-head)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.paper{background:var(--paper)}
th.paper-first,td.paper-first{border-left:2px solid #e0b44c}
tbody tr:nth-child(even) td,tbody tr:nth-child(even) th{background-color:#fafafa}
tbody tr:nth-child(even) td.paper{background:#fbefd2}
tbody tr.failed td,tbody tr.failed th{background:#fde2e1}
p.table-note{font-size:12.5px;color:var(--muted);margin:-10px 0 14px;padding:0 4px}
tbody tr.baseline td:first-child{font-style:italic}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px;margin:10px 0}
figure.chart{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:#fff}
figure.chart .chart-title{font-weight:600;font-size:14px;margin-bottom:2px}
figure.chart svg{width:100%;height:auto;display:block}
figure.chart figcaption{font-size:12.5px;color:var(--muted);margin-top:4px}
ul.notes{margin:6px 0 6px 0;padding-left:20px}
ul.notes li{margin:4px 0}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:650;margin-right:6px}
.badge.met{background:#d1fae5;color:#065f46}.badge.not-met{background:#fee2e2;color:#991b1b}.badge.inconclusive{background:#fef3c7;color:#92400e}
.paper-key{display:inline-block;background:var(--paper-head);border:1px solid #e0b44c;border-radius:3px;padding:0 6px;font-size:12px}
details{margin:8px 0}details summary{cursor:pointer;color:var(--accent);font-size:14px}
details p{font-size:14px;color:#1f2937}
footer.page{max-width:1340px;margin:0 auto;padding:0 28px 30px;color:var(--muted);font-size:12.5px}
@media print{body{background:#fff}header.page{background:#fff;color:#000;border-bottom:2px solid #000}header.page p{color:#333}section{break-inside:avoid-page;border:none;padding:0}nav.toc{display:none}.figures{grid-template-columns:1fr}}
)css";

std::string badge(const std::string& status) {
  if (status == "met") return "<span class=\"badge met\">MET</span>";
  if (status == "not-met") return "<span class=\"badge not-met\">NOT MET</span>";
  if (status == "inconclusive") return "<span class=\"badge inconclusive\">INCONCLUSIVE</span>";
  return {};
}

// Columns (after the first) with one value in every row, folded out of
// `t` into "head: value unit" texts (fold_constant_columns).
std::vector<std::string> fold_constants(ReportTable& t) {
  std::vector<std::string> folded;
  if (!t.fold_constant_columns || t.rows.size() < 3) return folded;
  for (std::size_t c = t.columns.size(); c-- > 1;) {
    bool same = true;
    for (const auto& r : t.rows) same = same && c < r.size() && r[c] == t.rows[0][c];
    if (!same) continue;
    const auto& col = t.columns[c];
    folded.insert(folded.begin(), col.head + " " + t.rows[0][c] + (col.unit.empty() ? "" : " " + col.unit));
    t.columns.erase(t.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& r : t.rows) r.erase(r.begin() + static_cast<std::ptrdiff_t>(c));
  }
  return folded;
}

void render_table(std::ostringstream& o, ReportTable t) {
  const std::vector<std::string> folded = fold_constants(t);
  const auto& cols = t.columns;
  bool any_paper = false;
  for (const auto& c : cols) any_paper = any_paper || c.paper;
  o << "<div class=\"table-wrap\"><table class=\"results\" id=\"" << html_id(t.id) << "\" data-rows=\"" << t.rows.size()
    << "\">";
  if (!t.caption.empty()) o << "<caption>" << html_escape(t.caption) << "</caption>";
  o << "<thead>";
  if (any_paper) {
    // One group cell over each run of our / the paper's columns.
    o << "<tr>";
    for (std::size_t i = 0; i < cols.size();) {
      std::size_t j = i;
      while (j < cols.size() && cols[j].paper == cols[i].paper) ++j;
      o << "<th class=\"group " << (cols[i].paper ? "group-paper paper-first" : "group-ours") << "\" colspan=\""
        << (j - i) << "\">" << html_escape(cols[i].paper ? t.paper_group : t.ours_group) << "</th>";
      i = j;
    }
    o << "</tr>";
  }
  o << "<tr>";
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const auto& c = cols[i];
    const bool first_paper = c.paper && (i == 0 || !cols[i - 1].paper);
    o << "<th scope=\"col\" class=\"" << (c.numeric ? "num" : "text") << (c.paper ? " paper" : "")
      << (first_paper ? " paper-first" : "") << "\"" << (c.help.empty() ? "" : " title=\"" + html_escape(c.help) + "\"")
      << ">" << html_escape(c.head);
    if (!c.unit.empty()) o << "<span class=\"unit\">" << html_escape(c.unit) << "</span>";
    o << "</th>";
  }
  o << "</tr></thead><tbody>";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const std::string flag = r < t.row_flags.size() ? html_id(t.row_flags[r]) : std::string();
    o << "<tr" << (r < t.row_flags.size() && !t.row_flags[r].empty() ? " class=\"" + flag + "\"" : "") << ">";
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const auto& c = cols[i];
      const bool first_paper = c.paper && (i == 0 || !cols[i - 1].paper);
      const std::string text = i < t.rows[r].size() ? t.rows[r][i] : std::string();
      o << (i == 0 ? "<th scope=\"row\"" : "<td") << " class=\"" << (c.numeric ? "num" : "text")
        << (c.paper ? " paper" : "") << (first_paper ? " paper-first" : "") << "\">" << html_escape(text)
        << (i == 0 ? "</th>" : "</td>");
    }
    o << "</tr>";
  }
  o << "</tbody></table></div>";
  if (!folded.empty()) {
    std::string text = "The same in every row: ";
    for (std::size_t i = 0; i < folded.size(); ++i) text += (i ? "; " : "") + folded[i];
    o << "<p class=\"table-note\">" << html_escape(text) << ".</p>";
  }
}

void render_figure(std::ostringstream& o, const ReportFigure& f) {
  const std::string& id = std::visit([](const auto& c) -> const std::string& { return c.id; }, f.chart);
  const std::string& title = std::visit([](const auto& c) -> const std::string& { return c.title; }, f.chart);
  const bool paper = std::visit(
      [](const auto& c) {
        for (const auto& s : c.series) {
          if (s.paper) return true;
        }
        return false;
      },
      f.chart);
  o << "<figure class=\"chart" << (paper ? " with-paper" : "") << "\" id=\"" << html_id(id) << "\">"
    << "<div class=\"chart-title\">" << html_escape(title) << "</div>"
    << std::visit([](const auto& c) { return render_svg(c); }, f.chart);
  if (!f.caption.empty() || paper) {
    o << "<figcaption>" << html_escape(f.caption);
    if (paper) {
      o << (f.caption.empty() ? "" : " ")
        << "<span class=\"paper-key\">the paper's</span> dotted lines, hollow markers and hatched bars are the seed "
           "paper's published figures, not measurements of this run.";
    }
    o << "</figcaption>";
  }
  o << "</figure>";
}

void render_section(std::ostringstream& o, const ReportSection& s) {
  o << "<section id=\"" << html_id(s.id) << "\"><h2>" << html_escape(s.title) << "</h2>";
  for (const auto& p : s.paragraphs) o << "<p>" << html_escape(p) << "</p>";
  if (!s.facts.empty()) {
    o << "<div class=\"facts-row\">";
    for (const auto& g : s.facts) {
      o << "<div class=\"facts\" id=\"" << html_id(s.id + "-" + g.title) << "\">";
      if (!g.title.empty()) o << "<h3>" << html_escape(g.title) << "</h3>";
      o << "<dl class=\"facts\">";
      for (const auto& [k, v] : g.items) o << "<dt>" << html_escape(k) << "</dt><dd>" << html_escape(v) << "</dd>";
      o << "</dl></div>";
    }
    o << "</div>";
  }
  if (!s.notes.empty()) {
    o << "<ul class=\"notes\">";
    for (const auto& n : s.notes) o << "<li>" << badge(n.status) << html_escape(n.text) << "</li>";
    o << "</ul>";
  }
  for (const auto& t : s.tables) render_table(o, t);
  if (!s.figures.empty()) {
    o << "<div class=\"figures\">";
    for (const auto& f : s.figures) render_figure(o, f);
    o << "</div>";
  }
  if (!s.details.empty()) {
    o << "<details><summary>" << html_escape(s.details_summary) << "</summary>";
    for (const auto& d : s.details) o << "<p>" << html_escape(d) << "</p>";
    o << "</details>";
  }
  o << "</section>";
}

}  // namespace

std::string cell_number(double v, int digits) {
  if (!std::isfinite(v)) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string cell_ratio(double v) {
  if (!std::isfinite(v) || v <= 0) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, "×%.2f", v);
  return buf;
}

std::string render_report_html(const ReportDocument& doc) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "img-src data:\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<meta name=\"generator\" content=\"layersec\">"
    << "<title>" << html_escape(doc.title) << "</title><style>" << kStyle << "</style></head><body>"
    << "<header class=\"page\"><h1>" << html_escape(doc.title) << "</h1>";
  if (!doc.subtitle.empty()) o << "<p>" << html_escape(doc.subtitle) << "</p>";
  o << "</header><main>";
  if (!doc.sections.empty()) {
    o << "<nav class=\"toc\" aria-label=\"contents\">";
    for (const auto& s : doc.sections) o << "<a href=\"#" << html_id(s.id) << "\">" << html_escape(s.title) << "</a>";
    o << "</nav>";
  }
  std::vector<ReportHighlight> highlights = doc.highlights;
  for (const auto& s : doc.sections) highlights.insert(highlights.end(), s.highlights.begin(), s.highlights.end());
  if (!highlights.empty()) {
    o << "<div class=\"highlights\">";
    for (const auto& h : highlights) {
      o << "<div class=\"highlight\"><div class=\"label\">" << html_escape(h.label) << "</div><div class=\"value\">"
        << badge(h.status) << html_escape(h.value) << "</div>";
      if (!h.detail.empty()) o << "<div class=\"detail\">" << html_escape(h.detail) << "</div>";
      o << "</div>";
    }
    o << "</div>";
  }
  for (const auto& s : doc.sections) render_section(o, s);
  o << "</main><footer class=\"page\">" << html_escape(doc.footer) << "</footer></body></html>\n";
  return o.str();
}

}  // namespace layersec::harness
