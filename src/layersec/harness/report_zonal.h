// The zonal network's section of report.html (the demo's zonal section,
// harness/zonal.h; docs/tsn.md "Zonal network (simulated)"), built from the
// JSON document the zonal section writes to zonal.json (zonal_report.h's
// zonal_json), not from its structs: the zonal code can grow without this
// file changing. Known fields get named columns with units and a chart (ST
// latency against hops per shaper, with the analytic bound; BE throughput);
// any other scalar field of a row becomes a column under its JSON name, any
// other top-level object a key/value list and any other array of objects a
// table, so nothing the zonal section reports is dropped. Missing or
// mistyped fields show as "–", never an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/harness/report_html.h"

namespace layersec::harness {

// The section ("zonal"), with a highlight for the compromised switch: the
// altered events SecOC accepted (expected 0).
[[nodiscard]] ReportSection zonal_report_section(const nlohmann::json& zonal);

// A table of an array of flat JSON objects: one column per scalar key (in
// the JSON's key order, objects' keys first seen first; units from the
// names' suffixes: _us, _ns, _ms, _mbit_s, _pct, _bytes); `skip` keys left out. Used for fields this file does not
// know.
[[nodiscard]] ReportTable json_rows_table(const nlohmann::json& array, const std::string& id,
                                          const std::string& caption, const std::vector<std::string>& skip = {});

// A field of a JSON object for a cell: the number when it is a finite number
// (nullopt otherwise, or when `o` is not an object); the text ("–" when
// missing; booleans "yes"/"no"; numbers with 2 decimals unless whole). Used
// by the sections built from other commands' JSON (report_tsn.h).
[[nodiscard]] std::optional<double> json_field_number(const nlohmann::json& o, const char* key);
[[nodiscard]] std::string json_field_text(const nlohmann::json& o, const char* key);

}  // namespace layersec::harness
