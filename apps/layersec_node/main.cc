// layersec-node: `layersec node` alone. The same command (apps/layersec/
// cmd_node.cc, the same options and output), linked --as-needed with only the
// libraries a node uses, so a running node maps libcrypto, libstdc++, libm
// and libc and none of the benchmark, pcap, netlink, NTRU and TLS libraries
// (and their dependencies) the full CLI links, and runs none of the other
// commands' static registrations: about 9 MiB resident instead of 14
// (docs/node.md, "Footprint"). `layersec node ...` executes this binary when
// it sits next to layersec.
//
// Usage: layersec-node [node] --config FILE [--duration SEC] [--json] [--seed N] [--first-start]
#include <cstring>
#include <vector>

#include "command.h"
#include "command_registry.h"

int main(int argc, char** argv) {
  using namespace layersec::app;
  CLI::App app{"layersec node: one SOME/IP node (SD, methods, events, optional SecOC) from a JSON config"};
  app.name("layersec");
  app.require_subcommand(1);
  // Accept both `layersec-node --config F` and `layersec-node node --config F`
  // (what `layersec node` passes on).
  std::vector<const char*> args(argv, argv + argc);
  if (argc < 2 || std::strcmp(argv[1], "node") != 0) args.insert(args.begin() + 1, "node");
  return run_commands(app, static_cast<int>(args.size()), args.data());
}
