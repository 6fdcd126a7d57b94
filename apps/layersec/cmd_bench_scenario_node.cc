// `layersec bench scenario-node --spec FILE` (hidden): one node of
// `layersec bench scenarios --topology netns`, started by the orchestrator
// (harness/netns_scenarios.h) inside the node's network namespace. Reads the
// NetnsNodeSpec JSON, runs harness::run_netns_node until the publisher's
// phase ends or SIGTERM/SIGINT arrives (subscribers run until signalled),
// writes the report file named in the spec and exits 0 when the node's
// report is ok, 1 otherwise (the reason is on stderr and in the report).
#include <csignal>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/harness/netns_node.h"

namespace layersec::app {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler stores into it");

extern "C" void on_stop_signal(int) { g_stop.store(true); }

int run_scenario_node(const std::string& spec_path) {
  std::string text;
  try {
    text = read_regular_file(spec_path, kMaxConfigFileSize);  // base/file.h: no FIFO hang, bounded
  } catch (const FileError& e) {
    std::cerr << "layersec bench scenario-node: --spec: " << e.what() << "\n";
    return 1;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "layersec bench scenario-node: " << spec_path << ": not JSON: " << e.what() << "\n";
    return 1;
  }
  harness::NetnsNodeSpec spec;
  try {
    spec = harness::node_spec_from_json(j);
  } catch (const harness::NetnsJsonError& e) {
    std::cerr << "layersec bench scenario-node: " << spec_path << ": " << e.what() << "\n";
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  const harness::NetnsNodeReport report = harness::run_netns_node(spec, g_stop, std::cerr);
  return report.ok ? 0 : 1;
}

const CommandRegistration reg(58, [](CLI::App& root) {
  auto path = std::make_shared<std::string>();
  auto* cmd = bench_group(root).add_subcommand(
      "scenario-node", "one node of `bench scenarios --topology netns` (started by the orchestrator)");
  cmd->group("");  // hidden
  cmd->add_option("--spec", *path, "node specification (JSON, harness/netns_node.h)")->required()->check(kRegularFile);
  cmd->callback([path] { set_exit_code(run_scenario_node(*path)); });
});

}  // namespace
}  // namespace layersec::app
