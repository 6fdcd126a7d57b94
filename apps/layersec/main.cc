// layersec: secured SOME/IP, SecOC, MACsec and Sampled Values nodes, benchmarks
// and self tests. See README.md for the commands.
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "command_registry.h"

namespace {

// `layersec node ...` runs layersec-node, the same command linked with only
// what a node uses (docs/node.md, "Footprint": about 9 MiB resident instead
// of 14), when that binary sits next to this one; LAYERSEC_NODE_IN_PROCESS=1
// keeps the node in this process. Returns only when it did not exec.
void exec_lean_node(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "node") != 0) return;
  if (const char* e = std::getenv("LAYERSEC_NODE_IN_PROCESS"); e && *e) return;
  std::array<char, 4096> self{};
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return;
  std::string path(self.data(), static_cast<std::size_t>(n));
  path = path.substr(0, path.rfind('/') + 1) + "layersec-node";
  std::vector<char*> args(argv, argv + argc + 1);  // argv[argc] is the terminating nullptr
  args[0] = path.data();
  execv(path.c_str(), args.data());  // only returns on failure: run the node here
}

}  // namespace

int main(int argc, char** argv) {
  using namespace layersec::app;
  exec_lean_node(argc, argv);
  CLI::App app{"layersec: SOME/IP + SecOC, MACsec and IEC 61850 Sampled Values security stack"};
  app.require_subcommand(1);
  auto* bench = app.add_subcommand("bench", "Run benchmarks (secured figure beside its baseline)");
  bench->require_subcommand(1);
  return run_commands(app, argc, argv);
}
