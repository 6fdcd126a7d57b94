// `layersec bench zonal`: the multi-hop zonal network on the simulator
// (issue 16, part 3; docs/tsn.md "Zonal network (simulated)"): SOME/IP+SecOC
// control events as ST across 1-4 zonal switches under camera BE load, with
// the 802.1Qbv shaper on, strict priority only and FIFO, against the
// analytic bound, plus a compromised switch altering the events; with
// --clock gptp/free, rows where every node runs its own drifting clock
// (issue 17: gPTP keeps the gate schedules aligned) and the gate
// misalignment between hops.
#include <cmath>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "layersec/harness/zonal.h"
#include "layersec/harness/zonal_report.h"
#include "runner.h"

namespace layersec::app {
namespace {

struct Options {
  std::string hops = "1-4";
  double be_load = 80;
  std::uint64_t port_mbit = 1000;
  int cycles = 1000;
  std::uint64_t seed = 1;
  std::string json_path;
  std::vector<std::string> clocks = {"ideal"};
  std::vector<std::string> drift_ppm = {"100"};
  std::vector<std::string> wander = {"0"};
  std::vector<std::string> sync_interval_ms = {"125"};
};

// A sync interval of 2^n s, n in [-7, 0] (7.8125 ms .. 1 s); empty when valid.
std::string check_sync_interval(const std::string& text, int* log_interval) {
  if (std::string why = check_finite_in(text, 7.8125, 1000); !why.empty()) return why;
  const double ms = std::stod(text);
  const double l = std::log2(ms / 1000.0);
  if (std::fabs(l - std::round(l)) > 1e-9)
    return "must be 1000 ms times a power of two (7.8125, 15.625, 31.25, 62.5, 125, 250, 500 or 1000), got " + text;
  if (log_interval) *log_interval = static_cast<int>(std::lround(l));
  return {};
}

// "N" or "A-B" with 1 <= A <= B <= 4; empty string when valid.
std::string parse_hops(const std::string& text, int& lo, int& hi) {
  const std::string why = "must be N or A-B with 1 <= A <= B <= 4 (e.g. 1-4 or 3), got '" + text + "'";
  auto digit = [](char c) { return c >= '1' && c <= '4'; };
  if (text.size() == 1 && digit(text[0])) {
    lo = hi = text[0] - '0';
    return {};
  }
  if (text.size() == 3 && digit(text[0]) && text[1] == '-' && digit(text[2]) && text[0] <= text[2]) {
    lo = text[0] - '0';
    hi = text[2] - '0';
    return {};
  }
  return why;
}

void run(const Options& o) {
  harness::ZonalSweepOptions so;
  if (std::string why = parse_hops(o.hops, so.min_hops, so.max_hops); !why.empty())
    throw std::invalid_argument("--hops " + why);
  so.be_load_pct = o.be_load;
  so.port_bps = o.port_mbit * 1'000'000;
  so.cycles = o.cycles;
  so.seed = o.seed;
  for (const auto& c : o.clocks) so.clocks.push_back(*harness::zonal_clock_from(c));  // checked by the option
  so.drift_ppm.clear();
  for (const auto& d : o.drift_ppm) so.drift_ppm.push_back(std::stod(d));
  so.wander_ppm_per_s.clear();
  for (const auto& w : o.wander) so.wander_ppm_per_s.push_back(std::stod(w));
  so.log_sync_intervals.clear();
  for (const auto& t : o.sync_interval_ms) {
    int l = 0;
    (void)check_sync_interval(t, &l);
    so.log_sync_intervals.push_back(l);
  }
  harness::write_zonal_method(std::cout, so);
  const harness::ZonalReport rep = harness::run_zonal_sweep(so);
  harness::write_zonal_report(std::cout, rep);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, harness::zonal_json(rep));
  // The properties the network is built for; a figure that breaks one fails the command.
  int failures = 0;
  // Free-running clocks are the contrast: their rows are reported, never failed.
  for (const auto& r : rep.rows) {
    if (r.clock == harness::ZonalClock::kFree) continue;
    if (r.shaper != harness::ZonalShaper::kFifo && r.st_over_bound > 0) {
      std::cerr << "layersec: FAIL: " << r.hops << " hops, shaper " << to_string(r.shaper) << ", clock "
                << to_string(r.clock) << ": " << r.st_over_bound << " ST events later than the analytic bound\n";
      ++failures;
    }
    if (r.shaper == harness::ZonalShaper::kOn && r.st_lost > 0) {
      std::cerr << "layersec: FAIL: " << r.hops << " hops, shaper on, clock " << to_string(r.clock) << ": "
                << r.st_lost << " ST events lost\n";
      ++failures;
    }
  }
  if (rep.compromise.accepted > 0) {
    std::cerr << "layersec: FAIL: SecOC accepted " << rep.compromise.accepted << " altered events\n";
    ++failures;
  }
  set_exit_code(failures ? 1 : 0);
}

const CommandRegistration reg(59, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "zonal", "Zonal network (simulated): SOME/IP+SecOC ST over 1-4 MACsec hops under camera load, 802.1Qbv "
               "shaper on / strict / FIFO against the analytic bound, and a compromised switch");
  cmd->add_option("--hops", opts->hops, "zonal switches: N or A-B within 1-4 (default 1-4)")
      ->check(CLI::Validator(
          [](std::string& v) {
            int lo = 0, hi = 0;
            return parse_hops(v, lo, hi);
          },
          "N|A-B in [1, 4]"));
  cmd->add_option("--be-load", opts->be_load, "camera load into the central node's link, % of the port (default 80)")
      ->check(finite_in(0, 95));
  cmd->add_option("--port-mbit", opts->port_mbit, "backbone and camera link speed, Mbit/s: 100 or 1000 (default 1000)")
      ->check(CLI::IsMember({std::uint64_t{100}, std::uint64_t{1000}}));
  cmd->add_option("--cycles", opts->cycles, "1 ms cycles (ST events per ECU) per row (default 1000)")
      ->check(whole_in(1, 100000));
  cmd->add_option("--seed", opts->seed, "simulation seed (default 1)")->check(whole_in(0, ~std::uint64_t{0}));
  cmd->add_option("--clock", opts->clocks,
                  "node clocks, comma separated: ideal (every node on simulated time; always run), gptp (drifting "
                  "oscillators disciplined by gPTP), free (drifting, unsynchronised); gptp and free add shaper-on rows "
                  "(default ideal)")
      ->delimiter(',')
      ->check(CLI::IsMember({"ideal", "gptp", "free"}));
  cmd->add_option("--drift-ppm", opts->drift_ppm,
                  "bound of every node's oscillator error, ppm, comma separated (each node seeded uniform in "
                  "+-X; default 100)")
      ->delimiter(',')
      ->check(finite_in(0, 200));
  cmd->add_option("--wander-ppm-s", opts->wander,
                  "bound of the rate at which every node's error changes, ppm/s, comma separated (a temperature "
                  "ramp, each node seeded uniform in +-X; default 0: constant)")
      ->delimiter(',')
      ->check(finite_in(0, 1));
  cmd->add_option("--sync-interval-ms", opts->sync_interval_ms,
                  "gPTP Sync interval, ms, comma separated: 1000 times a power of two, 7.8125..1000 (default 125, "
                  "the automotive profile's)")
      ->delimiter(',')
      ->check(CLI::Validator([](std::string& v) { return check_sync_interval(v, nullptr); }, "MS"));
  cmd->add_option("--json", opts->json_path, "write {method, options, rows, compromised_switch} to FILE")
      ->check(kOutputFile);
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
