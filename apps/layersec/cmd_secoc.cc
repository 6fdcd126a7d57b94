// `layersec bench secoc`: protect / verify / protect+verify per SecOC profile
// beside bare OpenSSL MAC (or AES-GCM) computations over the same
// DataToAuthenticator, the cost goal of issue 19 (secoc_goal.h: 64-byte
// protect+verify within 1.15x of its two bare MACs, interleaved, with a
// met / NOT met verdict per profile), plus the simulated resynchronisation
// time after a burst loss larger than W. `layersec secoc describe --config FILE` prints a
// configuration with the per-attempt forgery probability of every PDU.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/secoc/config.h"
#include "layersec/secoc/simulation.h"
#include "runner.h"
#include "secoc_goal.h"

namespace layersec::app {
namespace {

struct BenchOptions {
  std::string json_path;
  bool smoke = false;
  double min_time = 0.2;
  std::string filter = ".*";
};

void print_resync(bool smoke) {
  using secoc::FreshnessMode;
  std::cout << "\nresynchronisation after a burst loss > W (simulated time; W=32, sync period 1 s):\n";
  std::printf("%-18s %-10s %8s %10s %10s %10s %9s\n", "mode", "interval", "burst", "mean_ms",
              "min_ms", "max_ms", "dropped");
  for (FreshnessMode mode : {FreshnessMode::kStrict, FreshnessMode::kReorderTolerant}) {
    for (int interval_ms : {1, 10}) {
      secoc::LinkOptions o;
      o.mode = mode;
      o.window = 32;
      o.sync_period = Duration::seconds(1);
      const int trials = smoke ? 4 : 50;
      const auto r = secoc::measure_burst_resync(o, Duration::milliseconds(interval_ms), 40, trials);
      std::printf("%-18s %7d ms %8d %10.1f %10.1f %10.1f %9llu\n",
                  mode == FreshnessMode::kStrict ? "strict" : "reorder-tolerant", interval_ms, 40,
                  r.mean.ms(), r.recovered ? r.min.ms() : 0.0, r.max.ms(),
                  static_cast<unsigned long long>(r.rejected_after_burst));
    }
  }
}

void run_bench(const BenchOptions& o) {
  benchrun::RunOptions ro;
  ro.filter = "^secoc/(" + o.filter + ")/";
  ro.smoke = o.smoke;
  ro.min_time_s = o.min_time;
  ro.quiet = true;
  auto figures = benchrun::run_paired(ro);
  std::cout << "layersec bench secoc: ns per operation, ours beside bare OpenSSL MAC/GCM "
               "computation(s) over the same DataToAuthenticator (ratio = ours / baseline)\n";
  benchrun::print_table(figures, "ours_ns", "baseline_ns");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& f : figures) {
    rows.push_back({{"profile", f.key.size() > 0 ? f.key[0] : ""},
                    {"op", f.key.size() > 1 ? f.key[1] : ""},
                    {"bytes", f.bytes},
                    {"ns_per_op", f.ns_per_op},
                    {"baseline_ns_per_op", f.baseline_ns_per_op},
                    {"ratio", f.ratio}});
  }
  // The issue-19 goal (profiles 1-3 and vendor, 64 bytes, protect+verify
  // within 1.15x of the two bare MACs), measured interleaved in this run.
  const auto goal = benchrun::run_secoc_goal(o.smoke);
  benchrun::print_secoc_goal(goal);
  for (const auto& g : goal) {
    rows.push_back({{"profile", g.profile},
                    {"op", "protect+verify"},
                    {"bytes", benchrun::kSecocGoalBytes},
                    {"method", "interleaved rounds, thread CPU time, median of per-round ratios"},
                    {"ns_per_op", g.ns_per_op},
                    {"baseline_ns_per_op", g.baseline_ns_per_op},
                    {"ratio", g.ratio},
                    {"ratio_min", g.ratio_min},
                    {"ratio_max", g.ratio_max},
                    {"own_mac_ns_per_op", g.own_mac_ns_per_op},
                    {"framing_ratio", g.framing_ratio},
                    {"rounds", g.rounds},
                    {"goal_ratio", benchrun::kSecocGoalRatio},
                    {"goal_met", g.met()}});
  }
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, rows);
  print_resync(o.smoke);
}

void describe(const std::string& path) {
  try {
    const auto c = secoc::load_config_file(path);
    std::cout << c.describe();
  } catch (const secoc::ConfigError& e) {
    std::cerr << "layersec secoc: " << e.what() << "\n";
    set_exit_code(2);
  }
}

const CommandRegistration reg(40, [](CLI::App& root) {
  auto opts = std::make_shared<BenchOptions>();
  auto* cmd = bench_group(root).add_subcommand(
      "secoc", "SecOC protect/verify per profile beside bare OpenSSL MAC computations");
  cmd->add_option("--json", opts->json_path,
                  "write rows {profile, op, bytes, ns_per_op, baseline_ns_per_op, ratio} to FILE")
      ->check(kOutputFile);
  cmd->add_flag("--smoke", opts->smoke, "tiny run that only proves the benchmarks work");
  cmd->add_option("--min-time", opts->min_time, "seconds per benchmark (default 0.2)")
      ->check(finite_in(0.001, 3600));
  cmd->add_option("--filter", opts->filter, "regex over profile names (profile1, vendor, ...)");
  cmd->callback([opts] { run_bench(*opts); });
  auto* sc = root.add_subcommand("secoc", "SecOC engine tools");
  sc->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  auto* d = sc->add_subcommand("describe", "validate a SecOC JSON config and print every PDU's "
                                           "profile and forgery probability");
  d->add_option("--config", *path, "JSON configuration")->required();
  d->callback([path] { describe(*path); });
  auto* rs = sc->add_subcommand("resync", "simulate burst loss > W and print the resync time");
  auto smoke = std::make_shared<bool>(false);
  rs->add_flag("--smoke", *smoke, "few trials");
  rs->callback([smoke] { print_resync(*smoke); });
});

}  // namespace
}  // namespace layersec::app
