// Fuzz target: report.html's sections read from other commands' JSON by field
// name: the zonal section (harness/report_zonal.h, the zonal JSON) and the
// bench tsn section (harness/report_tsn.h, `layersec bench tsn --json`), both
// built from the same input, and the page writer (harness/report_html.h) with
// them. The input is the JSON text. Properties:
// any JSON value yields both sections without an exception or a crash, and the
// rendered page holds only the writer's own tags: whatever strings, keys or
// numbers the document carries reach the page as text (escaped), never as
// markup. No serialiser: no round trip.
#include <cctype>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_support.h"
#include "layersec/harness/report_html.h"
#include "layersec/harness/report_tsn.h"
#include "layersec/harness/report_zonal.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = fuzz::json_of(data, size);
  if (!j) return 0;
  harness::ReportDocument doc;
  doc.title = "fuzz";
  doc.sections.push_back(harness::zonal_report_section(*j));
  doc.sections.push_back(harness::tsn_report_section(*j, "fuzz.json"));
  const std::string html = harness::render_report_html(doc);
  static const std::set<std::string> allowed = {
      "html",    "head",    "meta", "title", "style",   "body", "header", "h1",   "h2",    "h3",     "p",
      "main",    "nav",     "a",    "div",   "section", "dl",   "dt",     "dd",   "ul",    "li",     "span",
      "table",   "caption", "thead", "tbody", "tr",     "th",   "td",     "figure", "figcaption", "svg", "g",
      "line",    "rect",    "text", "path",  "circle",  "details", "summary", "footer", "defs", "pattern"};
  const std::string body = html.substr(html.find("</style>"));  // the stylesheet holds no '<'
  for (std::size_t p = body.find('<'); p != std::string::npos; p = body.find('<', p + 1)) {
    std::size_t q = p + 1;
    if (q < body.size() && (body[q] == '/' || body[q] == '!')) ++q;
    std::string tag;
    while (q < body.size() && std::isalnum(static_cast<unsigned char>(body[q]))) tag += body[q++];
    fuzz::require(allowed.count(tag) == 1);
  }
  return 0;
}
