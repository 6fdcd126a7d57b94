// `layersec attack`: the adversarial harness (issue 15, first slice). Runs
// the attack runners of src/layersec/attack/ on the simulated segment, prints
// their table and writes their rows as JSON:
//
//   layersec attack [--layer someip|macsec|sv|all] [--attempts N] [--seed S] [--json FILE]
//
//   --layer     someip: SOME/IP unsecured, SecOC (counter and timestamp
//               freshness) and hybrid (SecOC over hop-by-hop MACsec);
//               macsec: the SecY alone; sv: IEC 61850-9-2 Sampled Values;
//               all (default): every runner, in that order
//   --attempts  per class and configuration, 1..10^7 (default 100,000)
//   --seed      every random choice of every runner derives from it (default 1)
//   --json      rows_json (attack/report.h) to FILE ("-": stdout), written
//               through base/file.h (a symlink at FILE is refused, write
//               errors are reported)
//
// Exit status: 0 when no row failed; 1 when a row failed (something forged,
// replayed or tampered was accepted where the configuration protects
// against it, or legitimate traffic was lost where the class allows none),
// or a runner or the JSON write failed; 2 for a bad option value (the
// message names the option). The option values are checked here rather
// than by CLI11 validators so that every bad value gives status 2.
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "layersec/attack/macsec_attacks.h"
#include "layersec/attack/report.h"
#include "layersec/attack/someip_attacks.h"
#include "layersec/attack/sv_attacks.h"
#include "layersec/base/file.h"

namespace layersec::app {
namespace {

constexpr std::uint64_t kMaxAttempts = 10'000'000;

struct Options {
  std::string layer = "all";
  std::string attempts = "100000";
  std::string seed = "1";
  std::string json_path;
};

// Reports a bad option value and ends with status 2.
void bad_option(const std::string& option, const std::string& problem) {
  std::cerr << "layersec attack: " << option << ": " << problem << "\n";
  set_exit_code(2);
}

// Parses an already checked whole number (decimal or 0x hex).
std::uint64_t to_u64(const std::string& text) { return std::stoull(text, nullptr, 0); }

// Validates every option; false (status 2 set) on the first bad one.
bool check_options(const Options& o, attack::AttackOptions& out) {
  if (o.layer != "someip" && o.layer != "macsec" && o.layer != "sv" && o.layer != "all") {
    bad_option("--layer", "'" + o.layer + "' is not one of someip, macsec, sv, all");
    return false;
  }
  if (auto e = check_whole_in(o.attempts, 1, kMaxAttempts); !e.empty()) {
    bad_option("--attempts", e);
    return false;
  }
  if (auto e = check_whole_in(o.seed, 0, UINT64_MAX); !e.empty()) {
    bad_option("--seed", e);
    return false;
  }
  if (!o.json_path.empty()) {
    if (auto e = check_output_file(o.json_path); !e.empty()) {
      bad_option("--json", e);
      return false;
    }
  }
  out.attempts = to_u64(o.attempts);
  out.seed = to_u64(o.seed);
  return true;
}

// Runs one layer's runner; a runner that throws (a set-up failure) is
// reported and makes the run fail, the other layers still run.
bool run_layer(const char* name, std::vector<attack::AttackRow> (*runner)(const attack::AttackOptions&),
               const attack::AttackOptions& options, std::vector<attack::AttackRow>& rows) {
  try {
    auto got = runner(options);
    rows.insert(rows.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
    return true;
  } catch (const std::exception& e) {
    std::cerr << "layersec attack: " << name << " runner failed: " << e.what() << "\n";
    return false;
  }
}

void write_json(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  OutputFile f(path);
  f.write(text);
  f.close();
}

void run(const Options& o) {
  attack::AttackOptions options;
  if (!check_options(o, options)) return;
  std::cout << "layersec attack: layer " << o.layer << ", " << options.attempts
            << " attempts per class and configuration, seed " << options.seed << "\n";
  std::vector<attack::AttackRow> rows;
  bool runners_ok = true;
  const bool all = o.layer == "all";
  if (all || o.layer == "someip") runners_ok &= run_layer("someip", &attack::run_someip_attacks, options, rows);
  if (all || o.layer == "macsec") runners_ok &= run_layer("macsec", &attack::run_macsec_attacks, options, rows);
  if (all || o.layer == "sv") runners_ok &= run_layer("sv", &attack::run_sv_attacks, options, rows);

  // The table goes to stderr when the JSON goes to stdout.
  std::ostream& table = o.json_path == "-" ? std::cerr : std::cout;
  attack::write_table(table, rows);
  bool written = true;
  if (!o.json_path.empty()) {
    try {
      write_json(o.json_path, attack::rows_json(rows, options).dump(2) + "\n");
    } catch (const FileError& e) {
      std::cerr << "layersec attack: --json: " << e.what() << "\n";
      written = false;
    }
  }
  if (!runners_ok || !written || attack::any_failed(rows)) set_exit_code(1);
}

const CommandRegistration reg(62, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = root.add_subcommand(
      "attack", "Attack every configuration on the simulated segment (replay, tamper, forge, relabel, eavesdrop)");
  // Checked in run() (status 2); the type names show the rules, as the
  // cli_checks.h validators do for the other commands.
  cmd->add_option("--layer", opts->layer, "someip | macsec | sv | all (default all)")
      ->type_name("{someip,macsec,sv,all}");
  cmd->add_option("--attempts", opts->attempts, "attempts per class and configuration (default 100000)")
      ->type_name("UINT in [1, 10000000]");
  cmd->add_option("--seed", opts->seed, "seed of every random choice (default 1)")
      ->type_name("UINT in [0, 18446744073709551615]");
  cmd->add_option("--json", opts->json_path, "write the rows as JSON to FILE (\"-\": stdout)")->type_name("OUTPUT");
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
