// `layersec tsn schedule`: checks an 802.1Qbv schedule written in the Linux
// taprio syntax against a port and prints what it gives each traffic class.
//
//   layersec tsn schedule (--taprio TEXT | --file FILE) [--link-mbit N]
//       [--frame-bytes B] [--expansion-bytes E] [--processing-us P] [--json FILE]
//
// Per class: open windows per cycle, open time, share of the cycle, the
// longest window, and the analytic worst-case latency of one frame of
// --frame-bytes (gate wait + transmission + blocking by another class's frame
// + processing; tsn/gate_analysis.h) with --expansion-bytes added after the
// shaper (32 for MACsec with an SCI and a 16-byte ICV). A malformed schedule
// ends with status 1 and a message naming the sched-entry or keyword; a bad
// option value with the CLI's option error. The schedule parsing, checking
// and analysis live in src/layersec/tsn/; this file parses options and prints.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/tsn/gate_analysis.h"
#include "layersec/tsn/taprio.h"

namespace layersec::app {
namespace {

struct Options {
  std::string taprio;
  std::string file;
  std::uint64_t link_mbit = 1000;
  std::uint64_t frame_bytes = 1518;
  std::uint64_t expansion_bytes = 0;
  double processing_us = 0;
  std::string json_path;
};

constexpr std::size_t kMaxScheduleFile = 1 << 20;

std::string us(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1000.0);
  return buf;
}

void run(const Options& o) {
  if (o.taprio.empty() == o.file.empty()) {
    std::cerr << "layersec tsn schedule: give exactly one of --taprio and --file\n";
    set_exit_code(2);
    return;
  }
  std::string text = o.taprio;
  if (!o.file.empty()) {
    try {
      text = read_regular_file(o.file, kMaxScheduleFile);
    } catch (const FileError& e) {
      std::cerr << "layersec tsn schedule: --file: " << e.what() << "\n";
      set_exit_code(2);
      return;
    }
  }
  tsn::GclLimits limits;
  limits.link_bps = o.link_mbit * 1'000'000;
  const auto parsed = tsn::parse_taprio(text, limits);
  if (!parsed.ok()) {
    std::cerr << "layersec tsn schedule: " << (o.file.empty() ? "--taprio" : o.file) << ": " << parsed.message << "\n";
    set_exit_code(1);
    return;
  }
  const auto& s = *parsed.schedule;
  const auto windows = tsn::class_windows(s.gcl, s.num_tc);
  tsn::BoundInputs in;
  in.frame_bytes = o.frame_bytes;
  in.expansion_bytes = o.expansion_bytes;
  in.link_bps = limits.link_bps;
  in.processing_ns = static_cast<std::int64_t>(o.processing_us * 1000.0);

  const std::int64_t cycle = tsn::cycle_time_of(s.gcl);
  std::ostream& out = o.json_path == "-" ? std::cerr : std::cout;
  out << "schedule: " << s.num_tc << " traffic classes, " << s.gcl.entries.size() << " sched-entries, cycle "
      << us(cycle) << " us, base-time " << s.gcl.base_time_ns << " ns (" << s.clockid << "), port "
      << o.link_mbit << " Mbit/s\n";
  out << "bound: one " << o.frame_bytes << "-byte frame (+" << o.expansion_bytes
      << " after the shaper), processing " << o.processing_us << " us\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-5s %-9s %8s %12s %7s %14s %14s %12s %s\n", "class", "pcp", "windows", "open_us",
                "share", "max_window_us", "gate_wait_us", "bound_us", "note");
  out << line;
  nlohmann::json rows = nlohmann::json::array();
  const auto map = s.traffic_classes();
  for (const auto& w : windows) {
    const auto b = tsn::latency_bound(s.gcl, w.traffic_class, in);
    std::string pcps;
    for (int p = 0; p < tsn::kPriorities; ++p) {
      if (map.traffic_class(static_cast<std::uint8_t>(p)) == w.traffic_class) pcps += (pcps.empty() ? "" : ",") + std::to_string(p);
    }
    std::string note = !b.feasible ? "frame fits no window" : (b.higher_priority_overlap ? "shares its window with a higher class" : "");
    std::snprintf(line, sizeof line, "%-5d %-9s %8zu %12s %6.1f%% %14s %14s %12s %s\n", w.traffic_class,
                  pcps.empty() ? "-" : pcps.c_str(), w.windows, us(w.open_ns).c_str(), 100.0 * w.share,
                  us(w.max_window_ns).c_str(), b.feasible ? us(b.max_gate_wait_ns).c_str() : "-",
                  b.feasible ? us(b.total_ns).c_str() : "-", note.c_str());
    out << line;
    nlohmann::json row = {{"class", w.traffic_class},   {"pcp", pcps},         {"windows", w.windows},
                          {"open_ns", w.open_ns},       {"share", w.share},    {"max_window_ns", w.max_window_ns},
                          {"feasible", b.feasible},     {"higher_priority_overlap", b.higher_priority_overlap}};
    if (b.feasible) {
      row["gate_wait_ns"] = b.max_gate_wait_ns;
      row["transmission_ns"] = b.transmission_ns;
      row["blocking_ns"] = b.blocking_ns;
      row["processing_ns"] = b.processing_ns;
      row["bound_ns"] = b.total_ns;
    }
    rows.push_back(row);
  }
  if (o.json_path.empty()) return;
  const nlohmann::json doc = {{"cycle_ns", cycle},
                              {"num_tc", s.num_tc},
                              {"link_mbit_s", o.link_mbit},
                              {"frame_bytes", o.frame_bytes},
                              {"expansion_bytes", o.expansion_bytes},
                              {"taprio", tsn::to_taprio(s)},
                              {"classes", rows}};
  try {
    if (o.json_path == "-") {
      std::cout << doc.dump(2) << "\n";
    } else {
      OutputFile f(o.json_path);
      f.write(doc.dump(2) + "\n");
      f.close();
    }
  } catch (const FileError& e) {
    std::cerr << "layersec tsn schedule: --json: " << e.what() << "\n";
    set_exit_code(1);
  }
}

const CommandRegistration reg(64, [](CLI::App& root) {
  auto* tsn = root.add_subcommand("tsn", "Time-sensitive networking: check 802.1Qbv schedules");
  tsn->require_subcommand(1);
  auto opts = std::make_shared<Options>();
  auto* cmd = tsn->add_subcommand("schedule", "Check a taprio schedule against a port; per-class windows and latency bounds");
  cmd->add_option("--taprio", opts->taprio, "the schedule in taprio syntax (\"num_tc 2 ... sched-entry S 01 300000 ...\")");
  cmd->add_option("--file", opts->file, "read the schedule from FILE")->check(kRegularFile);
  cmd->add_option("--link-mbit", opts->link_mbit, "port speed in Mbit/s (default 1000)")->check(whole_in(1, 400000));
  cmd->add_option("--frame-bytes", opts->frame_bytes, "frame size for the latency bound, without FCS (default 1518)")
      ->check(whole_in(14, 9018));
  cmd->add_option("--expansion-bytes", opts->expansion_bytes, "bytes added after the shaper (MACsec: 32; default 0)")
      ->check(whole_in(0, 64));
  cmd->add_option("--processing-us", opts->processing_us, "per-hop processing added to the bound (default 0)")
      ->check(finite_in(0, 1e6));
  cmd->add_option("--json", opts->json_path, "write the result as JSON to FILE (\"-\": stdout)")->check(kOutputFile);
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
