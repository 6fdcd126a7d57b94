#include "layersec/harness/results_output.h"

#include <filesystem>
#include <functional>
#include <sstream>
#include <system_error>

#include "layersec/base/file.h"
#include "layersec/harness/plots.h"
#include "layersec/harness/report_scenarios.h"
#include "layersec/harness/results_csv.h"
#include "layersec/harness/results_json.h"
#include "layersec/harness/results_markdown.h"

namespace layersec::harness {

void write_text_file(const std::string& path, const std::string& text) {
  OutputFile f(path);
  f.write(text);
  f.close();
}

bool write_results_folder(const std::string& dir, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                          bool plots, std::ostream& out, std::ostream& err, bool html,
                          const std::vector<ReportSection>& extra) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "samples", ec);
  if (ec) {
    err << "layersec: cannot create " << (fs::path(dir) / "samples").string() << ": " << ec.message() << "\n";
    return false;
  }
  bool ok = true;
  auto write = [&](const std::string& name, const std::function<void(std::ostream&)>& body) {
    std::ostringstream text;
    body(text);
    try {
      write_text_file((fs::path(dir) / name).string(), text.str());
    } catch (const FileError& e) {
      err << "layersec: " << e.what() << "\n";
      ok = false;
    }
  };
  write("results.json", [&](std::ostream& o) { o << results_json(info, rows).dump(2) << "\n"; });
  write("results.csv", [&](std::ostream& o) { write_csv(o, rows); });
  write("report.md", [&](std::ostream& o) { write_markdown(o, info, rows); });
  // Raw half-RTT samples, one file per scenario, for anyone re-plotting.
  for (const auto& r : rows) {
    write("samples/" + r.name + ".txt", [&](std::ostream& o) {
      o << "# " << r.name << ": half-RTT latency per iteration, us (" << timing_model_text(r.timing_model)
        << "; work timed on CLOCK_MONOTONIC)\n";
      for (double v : r.samples_us) o << v << "\n";
    });
  }
  out << "results: " << (fs::path(dir) / "results.json").string() << ", results.csv, report.md, samples/\n";
  if (html) ok = write_report_html(dir, info, rows, extra, out, err) && ok;
  if (plots) {
    const PlotOutcome p = write_plots(dir, rows);
    if (!p.files.empty()) out << "plots: " << p.files.size() << " PNG files in " << dir << "\n";
    if (!p.message.empty()) out << "plots: " << p.message << "\n";
  }
  return ok;
}

bool write_results(const ResultsOutput& output, const RunInfo& info, const std::vector<ScenarioResult>& rows,
                   std::ostream& out, std::ostream& err) {
  bool ok = true;
  if (!output.json_path.empty()) {
    try {
      write_text_file(output.json_path, results_json(info, rows).dump(2) + "\n");
      out << "json: " << output.json_path << "\n";
    } catch (const FileError& e) {
      err << "layersec: " << e.what() << "\n";
      ok = false;
    }
  }
  if (!output.out_dir.empty()) {
    ok = write_results_folder(output.out_dir, info, rows, output.plots, out, err, output.html,
                              output.report_sections) &&
         ok;
  }
  return ok;
}

}  // namespace layersec::harness
