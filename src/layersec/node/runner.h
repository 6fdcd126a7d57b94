// `layersec node`: one SOME/IP node on real UDP sockets, from a JSON
// configuration (node_config.h), until SIGINT/SIGTERM or a duration.
//
// run_node loads the configuration, builds the node through the node
// builder (stack.h: SocketTransport on a net::EventLoop, someip::Runtime and,
// with a "secoc" section, a secoc::Engine on a FileStateStore with the
// configured keys, bound to the runtime on the host's CLOCK_REALTIME as the
// freshness clock), runs the configuration's test application
// (test_traffic.h) and prints every observation as one line on `out` (JSON
// with options.json), the final counters last. Diagnostics (configuration
// errors, the SecOC trip counter and configuration summary, ignored vsomeip
// keys) go to `err`. The formats are docs/node.md's.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace layersec::node {

struct NodeRunOptions {
  std::string config;        // the configuration file (named in messages)
  double duration_s = 0;     // 0 = until a signal
  bool json = false;         // one JSON object per line on `out`
  bool first_start = false;  // new keys: create a missing SecOC state file and MACsec PN state file
  std::optional<std::uint64_t> seed;  // SD random delays (default: random)
};

// Exit status of a run.
inline constexpr int kNodeExitOk = 0;      // the duration elapsed or SIGINT/SIGTERM ended it
inline constexpr int kNodeExitConfig = 2;  // configuration error (nothing was opened)
inline constexpr int kNodeExitStart = 3;   // the node could not start (sockets, state file, keys)

// Runs one node in the calling thread (SIGINT and SIGTERM are blocked for
// the run and read through a signalfd). Configuration and start-up
// failures are reported on `err` and in the status, never thrown.
[[nodiscard]] int run_node(const NodeRunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace layersec::node
