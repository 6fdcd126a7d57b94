// `layersec attack`: the adversarial harness (issue 15). Runs the attack
// runners of src/layersec/attack/, prints their table and writes their rows
// as JSON:
//
//   layersec attack [--topology sim|netns] [--layer LAYER|all] [--attempts N] [--seed S]
//                   [--soak-seconds S] [--strict] [--json FILE]
//
//   --topology  sim (default): the in-process runners below; netns: real
//               `layersec node` and `layersec macsec up` processes in network
//               namespaces with an AF_PACKET attacker between them
//               (attack/netns_attacks.h; attempts capped at 10,000; root
//               only: exit 77 with the reason when namespaces are unavailable;
//               --layer someip or macsec picks one configuration; the other
//               layers have none there)
//   --layer     someip: SOME/IP unsecured, SecOC (profiles 1-3, vendor,
//               aead-gcm; counter and timestamp freshness), hybrid (SecOC
//               over hop-by-hop MACsec), multicast, request/response and sync;
//               sd: service discovery spoofing, unprotected and protected;
//               macsec: the SecY alone (incl. clear VLAN tags); sv: IEC
//               61850-9-2 Sampled Values; restart: killed and restarted
//               senders and receivers, deleted and rolled-back state files;
//               recovery: loss bursts, reorder, duplicates; fault: a peer
//               that goes and comes back, link flaps, a full disk under the
//               state files; all (default): every runner, in that order
//   --attempts  per class and configuration, 1..10^7 (default 100,000)
//   --seed      every random choice of every runner derives from it (default 1)
//   --soak-seconds  also run the soak for S seconds of wall-clock time,
//               0..86400 (default 0: none): in process (attack/soak_attacks.h)
//               with --topology sim, against the MACsec link and SV subscriber
//               processes with netns
//   --strict    rows that show a known, documented weakness fail too
//   --json      rows_json (attack/report.h) to FILE ("-": stdout), written
//               through base/file.h (a symlink at FILE is refused, write
//               errors are reported)
//
// Exit status: 0 when no row failed; 1 when a row failed (something forged,
// replayed or tampered was accepted where the configuration protects
// against it, or legitimate traffic was lost where the class allows none,
// other than a documented weakness the row names unless --strict), or a
// runner or the JSON write failed; 2 for a bad option value (the message
// names the option). The option values are checked here rather than by
// CLI11 validators so that every bad value gives status 2.
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "layersec/attack/fault_attacks.h"
#include "layersec/attack/macsec_attacks.h"
#include "layersec/attack/netns_attacks.h"
#include "layersec/attack/recovery_attacks.h"
#include "layersec/attack/report.h"
#include "layersec/attack/restart_attacks.h"
#include "layersec/attack/sd_attacks.h"
#include "layersec/attack/soak_attacks.h"
#include "layersec/attack/someip_attacks.h"
#include "layersec/attack/sv_attacks.h"
#include "layersec/base/file.h"

namespace layersec::app {
namespace {

constexpr std::uint64_t kMaxAttempts = 10'000'000;

using Runner = std::vector<attack::AttackRow> (*)(const attack::AttackOptions&);
struct SimLayer {
  const char* name;
  Runner runner;
};
// The in-process runners, in the order `all` runs them.
constexpr SimLayer kSimLayers[] = {
    {"someip", &attack::run_someip_attacks},     {"sd", &attack::run_sd_attacks},
    {"macsec", &attack::run_macsec_attacks},     {"sv", &attack::run_sv_attacks},
    {"restart", &attack::run_restart_attacks},   {"recovery", &attack::run_recovery_attacks},
    {"fault", &attack::run_fault_attacks},
};
constexpr const char* kLayerList = "someip, sd, macsec, sv, restart, recovery, fault, all";

struct Options {
  std::string topology = "sim";
  std::string layer = "all";
  std::string attempts = "100000";
  std::string seed = "1";
  std::string soak_seconds = "0";
  bool strict = false;
  std::string json_path;
};

bool known_layer(const std::string& layer) {
  if (layer == "all") return true;
  for (const auto& l : kSimLayers)
    if (layer == l.name) return true;
  return false;
}

// Reports a bad option value and ends with status 2.
void bad_option(const std::string& option, const std::string& problem) {
  std::cerr << "layersec attack: " << option << ": " << problem << "\n";
  set_exit_code(2);
}

// Parses an already checked whole number (decimal or 0x hex).
std::uint64_t to_u64(const std::string& text) { return std::stoull(text, nullptr, 0); }

// Validates every option; false (status 2 set) on the first bad one.
bool check_options(const Options& o, attack::AttackOptions& out) {
  if (o.topology != "sim" && o.topology != "netns") {
    bad_option("--topology", "'" + o.topology + "' is not one of sim, netns");
    return false;
  }
  if (!known_layer(o.layer)) {
    bad_option("--layer", "'" + o.layer + "' is not one of " + kLayerList);
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
  if (auto e = check_finite_in(o.soak_seconds, 0, 86400); !e.empty()) {
    bad_option("--soak-seconds", e);
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
  out.strict = o.strict;
  return true;
}

// Runs one layer's runner; a runner that throws (a set-up failure) is
// reported and makes the run fail, the other layers still run.
bool run_layer(const char* name, Runner runner, const attack::AttackOptions& options,
               std::vector<attack::AttackRow>& rows) {
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

// --topology netns: real processes in namespaces; --layer picks the
// configurations (someip: the SOME/IP nodes, unsecured baseline and SecOC;
// macsec: the MACsec link; sv: the SV publisher and subscriber).
// With --soak-seconds, the netns soak (macsec, sv) replaces the in-process one.
double netns_soak_seconds = 0;
std::vector<attack::AttackRow> run_netns_secoc(const attack::AttackOptions& o) {
  return attack::run_netns_attacks(o, {true, false, false, 0});
}
std::vector<attack::AttackRow> run_netns_macsec(const attack::AttackOptions& o) {
  return attack::run_netns_attacks(o, {false, true, false, netns_soak_seconds});
}
std::vector<attack::AttackRow> run_netns_sv(const attack::AttackOptions& o) {
  return attack::run_netns_attacks(o, {false, false, true, netns_soak_seconds});
}

void run(const Options& o) {
  attack::AttackOptions options;
  if (!check_options(o, options)) return;
  if (o.topology == "netns") {
    if (o.layer != "all" && o.layer != "someip" && o.layer != "macsec" && o.layer != "sv") {
      bad_option("--layer", o.layer + " has no netns configuration (use someip, macsec, sv or all)");
      return;
    }
    std::string reason;
    if (!attack::netns_attacks_available(&reason)) {
      std::cerr << "layersec attack: --topology netns unavailable: " << reason << "\n";
      set_exit_code(77);
      return;
    }
    if (options.attempts > attack::kNetnsMaxAttempts) {
      std::cerr << "layersec attack: --topology netns: attempts capped at " << attack::kNetnsMaxAttempts << "\n";
      options.attempts = attack::kNetnsMaxAttempts;
    }
  }
  std::cout << "layersec attack: " << (o.topology == "netns" ? "topology netns, " : "") << "layer " << o.layer
            << ", " << options.attempts
            << " attempts per class and configuration, seed " << options.seed << "\n";
  std::vector<attack::AttackRow> rows;
  bool runners_ok = true;
  const bool all = o.layer == "all";
  if (o.topology == "netns") {
    netns_soak_seconds = std::stod(o.soak_seconds);
    if (all || o.layer == "someip") runners_ok &= run_layer("netns secoc", &run_netns_secoc, options, rows);
    if (all || o.layer == "macsec") runners_ok &= run_layer("netns macsec", &run_netns_macsec, options, rows);
    if (all || o.layer == "sv") runners_ok &= run_layer("netns sv", &run_netns_sv, options, rows);
  } else {
    for (const auto& l : kSimLayers)
      if (all || o.layer == l.name) runners_ok &= run_layer(l.name, l.runner, options, rows);
  }
  if (const double soak = std::stod(o.soak_seconds); soak > 0 && o.topology == "sim") {
    try {
      auto got = attack::run_soak(options, soak);
      rows.insert(rows.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
    } catch (const std::exception& e) {
      std::cerr << "layersec attack: soak failed: " << e.what() << "\n";
      runners_ok = false;
    }
  }

  // The table goes to stderr when the JSON goes to stdout.
  std::ostream& table = o.json_path == "-" ? std::cerr : std::cout;
  attack::write_table(table, rows, options.strict);
  bool written = true;
  if (!o.json_path.empty()) {
    try {
      write_json(o.json_path, attack::rows_json(rows, options).dump(2) + "\n");
    } catch (const FileError& e) {
      std::cerr << "layersec attack: --json: " << e.what() << "\n";
      written = false;
    }
  }
  if (!runners_ok || !written || attack::any_failed(rows, options.strict)) set_exit_code(1);
}

const CommandRegistration reg(62, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = root.add_subcommand(
      "attack", "Attack every configuration (replay, tamper, forge, relabel, spoof, restart, eavesdrop, faults)");
  // Checked in run() (status 2); the type names show the rules, as the
  // cli_checks.h validators do for the other commands.
  cmd->add_option("--topology", opts->topology, "sim (in-process, default) | netns (real processes in namespaces)")
      ->type_name("{sim,netns}");
  cmd->add_option("--layer", opts->layer, std::string(kLayerList) + " (default all)")
      ->type_name("{someip,sd,macsec,sv,restart,recovery,fault,all}");
  cmd->add_option("--attempts", opts->attempts, "attempts per class and configuration (default 100000)")
      ->type_name("UINT in [1, 10000000]");
  cmd->add_option("--seed", opts->seed, "seed of every random choice (default 1)")
      ->type_name("UINT in [0, 18446744073709551615]");
  cmd->add_option("--soak-seconds", opts->soak_seconds, "also run the soak for S seconds (default 0: none)")
      ->type_name("FINITE in [0, 86400]");
  cmd->add_flag("--strict", opts->strict, "rows that show a known, documented weakness fail too");
  cmd->add_option("--json", opts->json_path, "write the rows as JSON to FILE (\"-\": stdout)")->type_name("OUTPUT");
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
