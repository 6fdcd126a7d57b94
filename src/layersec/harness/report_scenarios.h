// report.html for scenario rows (docs/harness.md, "report.html"): the
// writer stage of the harness pipeline that a person opens in a browser.
// From the rows of one run (results.h) it builds the page of report_html.h:
// the run's settings and the machine it ran on, the paper's ten
// sub-scenarios with the paper's published figures beside ours (labelled as
// the paper's), the key establishment, the group-size series with its goal,
// every other series (payload, SOME/IP-TP, background load, DTLS fan-out,
// rate sweep) as a table, and inline SVG charts: latency CDFs, overhead
// over unsecured against the paper's, latency against group size (and
// growth against the paper's Table 21), payload, DTLS fan-out and the rate
// sweep. Sections made elsewhere (the demo's zonal network,
// report_zonal.h) are added after the scenario sections.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "layersec/harness/machine_info.h"
#include "layersec/harness/report_html.h"
#include "layersec/harness/results.h"

namespace layersec::harness {

// The page for `rows` of the run `info` on `machine`, with `extra` sections
// after the scenario sections (their highlights join the page's).
[[nodiscard]] ReportDocument scenario_report(const RunInfo& info, const MachineInfo& machine,
                                             const std::vector<ScenarioResult>& rows,
                                             const std::vector<ReportSection>& extra = {});

// Writes `dir`/report.html (through OutputFile: a symlink is refused) for
// the rows, with the machine read now. Says "report: PATH" on `out`; a
// failure is reported on `err` ("layersec: PATH: reason") and returns false.
bool write_report_html(const std::string& dir, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                       const std::vector<ReportSection>& extra, std::ostream& out, std::ostream& err);

}  // namespace layersec::harness
