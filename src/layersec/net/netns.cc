#include "layersec/net/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <stdexcept>
#include <utility>

#include "layersec/net/io.h"

extern char** environ;

namespace layersec::net {

int run_command(const std::vector<std::string>& argv, std::string* output) {
  if (argv.empty()) return -1;
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int pipe_fds[2] = {-1, -1};
  if (output && ::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output) {
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (output) {
    ::close(pipe_fds[1]);
    if (rc == 0) {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(pipe_fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) output->append(buf, static_cast<std::size_t>(n));
    }
    ::close(pipe_fds[0]);
  }
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

namespace {
int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}
}  // namespace

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) throw std::runtime_error("spawn: empty command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const char* out = log_path.empty() ? "/dev/null" : log_path.c_str();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  ChildProcess c;
  const int rc = ::posix_spawnp(&c.pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    c.pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + errno_text(rc));
  }
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), status_(std::exchange(o.status_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    terminate();
    pid_ = std::exchange(o.pid_, -1);
    status_ = std::exchange(o.status_, -1);
  }
  return *this;
}

ChildProcess::~ChildProcess() { terminate(); }

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  status_ = r == pid_ ? decode_status(status) : -1;
  pid_ = -1;
  return false;
}

int ChildProcess::wait() {
  if (pid_ <= 0) return status_;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  status_ = r == pid_ ? decode_status(status) : -1;
  pid_ = -1;
  return status_;
}

int ChildProcess::terminate(Duration grace) {
  if (!running()) return status_;
  ::kill(pid_, SIGTERM);
  const MonotonicClock clock;
  const TimePoint give_up = clock.now() + grace;
  while (running()) {
    if (clock.now() >= give_up) {
      ::kill(pid_, SIGKILL);
      return wait();
    }
    const timespec pause{0, 5'000'000};
    ::nanosleep(&pause, nullptr);
  }
  return status_;
}

bool process_in_netns(pid_t pid, const std::string& name) {
  struct stat proc_ns {};
  struct stat named {};
  if (::stat(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), &proc_ns) != 0) return false;
  if (::stat(("/run/netns/" + name).c_str(), &named) != 0) return false;
  return proc_ns.st_dev == named.st_dev && proc_ns.st_ino == named.st_ino;
}

bool netns_available(std::string* reason) {
  auto why = [reason](const char* r) {
    if (reason) *reason = r;
    return false;
  };
  if (::geteuid() != 0) return why("needs root (CAP_SYS_ADMIN/CAP_NET_ADMIN) to create network namespaces");
  std::string out;
  if (run_command({"ip", "-V"}, &out) != 0) return why("the iproute2 `ip` program is not available");
  if (::access("/proc/thread-self/ns/net", R_OK) != 0) return why("/proc/thread-self/ns/net is not readable");
  return true;
}

NetnsScope::NetnsScope(const std::string& name) {
  original_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original_ < 0) throw std::runtime_error("cannot open own network namespace: " + errno_text(errno));
  UniqueFd target(::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC));
  if (!target.valid() || ::setns(target.get(), CLONE_NEWNET) != 0) {
    const int err = errno;
    ::close(original_);
    throw std::runtime_error("cannot enter network namespace " + name + ": " + errno_text(err));
  }
}

NetnsScope::~NetnsScope() {
  if (original_ >= 0) {
    // Cannot fail for a descriptor of a namespace we were in; if it does the
    // thread stays in the topology namespace, which the tests would notice.
    (void)::setns(original_, CLONE_NEWNET);
    ::close(original_);
  }
}

std::string NetnsTopology::unique_prefix(const std::string& tag) {
  static std::atomic<unsigned> counter{0};
  return tag + std::to_string(::getpid()) + "x" + std::to_string(counter++);
}

void NetnsTopology::must(const std::vector<std::string>& argv) {
  std::string out;
  const int rc = run_command(argv, &out);
  if (rc != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error("`" + cmd + "` failed (" + std::to_string(rc) + "): " + out);
  }
}

void NetnsTopology::add_namespace(const std::string& name) {
  must({"ip", "netns", "add", name});
  created_.push_back(name);
  must({"ip", "-n", name, "link", "set", "lo", "up"});
  // No IPv6 in the topology: no router solicitations or DAD noise on the links.
  std::string ignored;
  run_command({"ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"}, &ignored);
  run_command({"ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"}, &ignored);
}

namespace {
NetnsNode make_node(const std::string& ns, std::size_t i) {
  NetnsNode n;
  n.netns = ns;
  n.interface = "eth0";
  n.ip = Ipv4Address::from_octets(10, 77, 0, static_cast<std::uint8_t>(i + 1));
  n.mac = MacAddress{{0x02, 0x00, 0x00, 0x77, 0x00, static_cast<std::uint8_t>(i + 1)}};
  return n;
}
}  // namespace

NetnsTopology NetnsTopology::pair(const std::string& tag) {
  NetnsTopology t;
  const std::string prefix = unique_prefix(tag);
  try {
    for (std::size_t i = 0; i < 2; ++i) {
      t.nodes_.push_back(make_node(prefix + "n" + std::to_string(i), i));
      t.add_namespace(t.nodes_.back().netns);
    }
    const NetnsNode& a = t.nodes_[0];
    const NetnsNode& b = t.nodes_[1];
    t.must({"ip", "link", "add", a.interface, "netns", a.netns, "address", a.mac.to_string(), "type", "veth", "peer",
            "name", b.interface, "netns", b.netns, "address", b.mac.to_string()});
    for (const auto& n : t.nodes_) {
      t.must({"ip", "-n", n.netns, "addr", "add", n.ip.to_string() + "/24", "dev", n.interface});
      t.must({"ip", "-n", n.netns, "link", "set", n.interface, "up"});
    }
  } catch (...) {
    t.teardown();
    throw;
  }
  return t;
}

NetnsTopology NetnsTopology::star(std::size_t n, const std::string& tag) {
  if (n == 0 || n > 250) throw std::runtime_error("star topology needs 1..250 nodes");
  NetnsTopology t;
  const std::string prefix = unique_prefix(tag);
  try {
    t.hub_ = prefix + "hub";
    t.add_namespace(t.hub_);
    t.must({"ip", "-n", t.hub_, "link", "add", "br0", "type", "bridge", "stp_state", "0", "mcast_snooping", "0"});
    t.must({"ip", "-n", t.hub_, "link", "set", "br0", "up"});
    for (std::size_t i = 0; i < n; ++i) {
      t.nodes_.push_back(make_node(prefix + "n" + std::to_string(i), i));
      const NetnsNode& node = t.nodes_.back();
      t.add_namespace(node.netns);
      const std::string hub_if = "p" + std::to_string(i);
      t.must({"ip", "link", "add", node.interface, "netns", node.netns, "address", node.mac.to_string(), "type",
              "veth", "peer", "name", hub_if, "netns", t.hub_});
      t.must({"ip", "-n", t.hub_, "link", "set", hub_if, "master", "br0"});
      t.must({"ip", "-n", t.hub_, "link", "set", hub_if, "up"});
      t.must({"ip", "-n", node.netns, "addr", "add", node.ip.to_string() + "/24", "dev", node.interface});
      t.must({"ip", "-n", node.netns, "link", "set", node.interface, "up"});
    }
  } catch (...) {
    t.teardown();
    throw;
  }
  return t;
}

NetnsTopology::NetnsTopology(NetnsTopology&& o) noexcept
    : nodes_(std::move(o.nodes_)), hub_(std::move(o.hub_)), created_(std::exchange(o.created_, {})) {}

NetnsTopology& NetnsTopology::operator=(NetnsTopology&& o) noexcept {
  if (this != &o) {
    teardown();
    nodes_ = std::move(o.nodes_);
    hub_ = std::move(o.hub_);
    created_ = std::exchange(o.created_, {});
  }
  return *this;
}

NetnsTopology::~NetnsTopology() { teardown(); }

int NetnsTopology::exec(std::size_t i, const std::vector<std::string>& argv, std::string* output) const {
  std::vector<std::string> full = {"ip", "netns", "exec", nodes_.at(i).netns};
  full.insert(full.end(), argv.begin(), argv.end());
  return run_command(full, output);
}

ChildProcess NetnsTopology::spawn(std::size_t i, const std::vector<std::string>& argv,
                                  const std::string& log_path) const {
  std::vector<std::string> full = {"ip", "netns", "exec", nodes_.at(i).netns};
  full.insert(full.end(), argv.begin(), argv.end());
  ChildProcess child = ChildProcess::spawn(full, log_path);
  // `ip netns exec` enters the namespace just before exec: wait for it so
  // the caller can rely on where the child runs.
  const MonotonicClock clock;
  const TimePoint give_up = clock.now() + Duration::seconds(5);
  while (!process_in_netns(child.pid(), nodes_.at(i).netns) && child.running() && clock.now() < give_up) {
    const timespec pause{0, 1'000'000};
    ::nanosleep(&pause, nullptr);
  }
  return child;
}

void NetnsTopology::teardown() {
  // Deleting a namespace destroys its veth ends, and with them their peers.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    std::string ignored;
    run_command({"ip", "netns", "del", *it}, &ignored);
  }
  created_.clear();
}

}  // namespace layersec::net
