// `layersec node --config FILE [--duration SEC] [--json] [--seed N]`: runs one
// SOME/IP node on real UDP sockets (node::run_node, node/runner.h: the node
// builder's SocketTransport + someip::Runtime, plus a secoc::Engine when the
// file has a "secoc" section). The node offers and requires what the file
// configures, serves the "test" methods, publishes the "test" events and
// sends the "test" requests, and prints every availability change,
// notification, request served, response and security rejection as one line
// on stdout (JSON with --json, a readable line otherwise). SIGINT / SIGTERM
// or --duration end it; final counters are printed last. Exit status: 0
// after a clean run, 2 for a configuration error, 3 when the node cannot
// start (sockets, SecOC state file, keys).
//
// Keys are loaded by the configuration loader (0600 only), installed into the
// engine and wiped; only key ids are printed.
#include <cstdint>
#include <iostream>
#include <memory>

#include "cli_checks.h"
#include "command.h"
#include "layersec/node/runner.h"

namespace layersec::app {
namespace {

const CommandRegistration reg(60, [](CLI::App& root) {
  auto opts = std::make_shared<node::NodeRunOptions>();
  auto* cmd = root.add_subcommand(
      "node", "run a SOME/IP node (SD, methods, events, optional SecOC) from a JSON config (docs/node.md)");
  cmd->add_option("--config", opts->config, "node configuration (JSON, vsomeip-like)")->required();
  // Finite and at most ~31 years: "nan" used to pass NonNegativeNumber and
  // run forever; duration_s * 1e9 ns must fit the int64 deadline.
  cmd->add_option("--duration", opts->duration_s, "stop after SEC seconds (default: run until SIGINT/SIGTERM)")
      ->check(finite_in(0, 1e9));
  cmd->add_flag("--json", opts->json, "one JSON object per line on stdout");
  cmd->add_flag("--first-start", opts->first_start,
                "first provisioning of new keys: create a missing SecOC state file and MACsec PN state "
                "file (without it a missing one is an error: a restarted trip counter or PN would reuse "
                "freshness values or GCM nonces)");
  auto seed = std::make_shared<std::uint64_t>(0);
  cmd->add_option("--seed", *seed, "seed of the SD random delays (default: random)")
      ->check(whole_in(0, ~std::uint64_t{0}));
  cmd->callback([opts, seed, cmd] {
    node::NodeRunOptions o = *opts;
    if (cmd->count("--seed") > 0) o.seed = *seed;
    set_exit_code(node::run_node(o, std::cout, std::cerr));
  });
});

}  // namespace
}  // namespace layersec::app
