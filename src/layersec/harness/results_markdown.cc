#include "layersec/harness/results_markdown.h"

#include <map>
#include <string>

#include "layersec/harness/results_table.h"

namespace layersec::harness {

void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<ScenarioResult>& rows) {
  out << "# layersec " << info.command << " results\n\n"
      << "- started (UTC): " << info.started_utc << "\n- host: " << info.host << "\n- build: "
      << info.build_type << "\n- seed: " << info.seed << ", iterations per scenario: " << info.iterations
      << "\n\n## How the figures were measured\n\n"
      << info.method << "\n\n"
      << "Columns: model = the timing model of the latency columns (parallel-ecus: the measured work of every "
         "node on its own simulated CPU, latency = the model's critical-path time, not elapsed time; "
         "serial-one-thread: every node's work one after the other on the measuring thread, latency = elapsed "
         "time; real-threads: elapsed time with every node on its own thread or process); latency = half the "
         "closed-loop round trip (the paper's method), microseconds under the row's model; 1-way = publisher "
         "notify call to the last subscriber's event callback; serial p99 = the same iterations' p99 under "
         "serial-one-thread; "
         "SecOC p50 us/it = median time inside SecOC protect + verify per iteration (one round trip: the event "
         "and every answer, each protected and verified, 1 + 3N calls), timed where the runtimes call the "
         "engines, summed over all nodes (the mean is in the JSON/CSV); "
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
    write_latency_table(out, by_series[s], TableFormat::kMarkdown);
    out << "\n";
    bool est = false;
    for (const auto& r : by_series[s]) est = est || r.establishment_ms.has_value();
    if (est) {
      out << "### Key establishment (once, before the measured loop)\n\n";
      write_establishment_table(out, by_series[s], TableFormat::kMarkdown);
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
