// Network-namespace topologies for the netns deployment: nodes are network
// namespaces joined by veth pairs, built with iproute2 (`ip netns add`,
// `ip link add ... type veth`, `ip addr add`, `ip link set up`) and torn down
// in the destructor. Everything here needs root (CAP_SYS_ADMIN and
// CAP_NET_ADMIN) and the `ip` program.
//
// Namespace names include the process id and a per-process counter, so
// parallel tests and workers never collide. Interfaces are created directly
// inside the namespaces; nothing is left in the caller's namespace.
//
// Sockets keep the namespace they were created in: open them inside a
// NetnsScope (which switches only the calling thread) and use them anywhere.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/net/frame.h"

namespace layersec::net {

// Runs `argv` (argv[0] looked up on PATH) without a shell and waits. Returns
// the exit status (128 + signal when killed, -1 when it could not start).
// stdout and stderr go to `output` when given, else are discarded.
int run_command(const std::vector<std::string>& argv, std::string* output = nullptr);

// A child process started without a shell (a node binary in a namespace, a
// foreign peer such as a scapy script). The destructor terminates it if it is
// still running, so a failing test leaves no process behind. Only the pid we
// started is ever signalled.
class ChildProcess {
 public:
  // Starts `argv` (argv[0] looked up on PATH) with stdout and stderr appended
  // to `log_path` (discarded when empty). Throws std::runtime_error when the
  // program cannot be started.
  static ChildProcess spawn(const std::vector<std::string>& argv, const std::string& log_path = "");
  ChildProcess(ChildProcess&& o) noexcept;
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  [[nodiscard]] pid_t pid() const { return pid_; }
  // True until the process has exited (reaps it when it has).
  bool running();
  // Waits for exit; status as run_command reports it.
  int wait();
  // SIGTERM, then SIGKILL if it has not exited after `grace`; returns the
  // exit status (143 for a process that died of SIGTERM). Idempotent.
  int terminate(Duration grace = Duration::seconds(2));

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int status_ = -1;  // once reaped
};

// True when process `pid` is in the named network namespace (compares the
// namespace inodes of /proc/PID/ns/net and /run/netns/NAME).
bool process_in_netns(pid_t pid, const std::string& name);

// True when this process can build namespace topologies; otherwise `reason`
// says why not (not root, no `ip`, no /dev/net/tun, ...).
bool netns_available(std::string* reason = nullptr);

// Moves the calling thread into the named namespace (/run/netns/NAME) for the
// scope's lifetime and back afterwards. Throws std::runtime_error when the
// namespace cannot be entered.
class NetnsScope {
 public:
  explicit NetnsScope(const std::string& name);
  ~NetnsScope();
  NetnsScope(const NetnsScope&) = delete;
  NetnsScope& operator=(const NetnsScope&) = delete;

 private:
  int original_ = -1;
};

struct NetnsNode {
  std::string netns;      // namespace name
  std::string interface;  // the node's veth end ("eth0")
  Ipv4Address ip;         // on `interface`, /24
  MacAddress mac;
};

class NetnsTopology {
 public:
  // Two namespaces joined directly by one veth pair: 10.77.0.1 and 10.77.0.2.
  // Throws std::runtime_error (after removing what it created) on failure.
  static NetnsTopology pair(const std::string& tag = "ls");
  // `n` namespaces, each with a veth to a hub namespace that bridges them
  // (Linux bridge, STP and multicast snooping off, so multicast floods like
  // the simulated switch): nodes get 10.77.0.1 .. 10.77.0.n.
  static NetnsTopology star(std::size_t n, const std::string& tag = "ls");

  NetnsTopology(NetnsTopology&& o) noexcept;
  NetnsTopology& operator=(NetnsTopology&& o) noexcept;
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;
  // Tears down (never throws).
  ~NetnsTopology();

  [[nodiscard]] const std::vector<NetnsNode>& nodes() const { return nodes_; }
  [[nodiscard]] const NetnsNode& node(std::size_t i) const { return nodes_.at(i); }
  // The bridge namespace of a star ("" for a pair).
  [[nodiscard]] const std::string& hub() const { return hub_; }
  // Every namespace this topology created.
  [[nodiscard]] const std::vector<std::string>& namespaces() const { return created_; }

  // Runs a command inside node i's namespace (`ip netns exec`); exit status.
  int exec(std::size_t i, const std::vector<std::string>& argv, std::string* output = nullptr) const;
  // Starts a long-running command inside node i's namespace (`ip netns exec`
  // execs it, so the child's pid is the command's own). Returns once the
  // child is inside the namespace (or has exited, or 5 s passed).
  ChildProcess spawn(std::size_t i, const std::vector<std::string>& argv, const std::string& log_path = "") const;
  // Deletes every namespace (and with them their interfaces). Idempotent.
  void teardown();

 private:
  NetnsTopology() = default;
  void add_namespace(const std::string& name);
  void must(const std::vector<std::string>& argv);
  static std::string unique_prefix(const std::string& tag);

  std::vector<NetnsNode> nodes_;
  std::string hub_;
  std::vector<std::string> created_;
};

}  // namespace layersec::net
