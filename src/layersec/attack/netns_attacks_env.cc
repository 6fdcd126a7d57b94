#include "layersec/attack/netns_attacks_env.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "layersec/base/file.h"

namespace layersec::attack::netns {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_interrupted{false};

void on_interrupt(int) { g_interrupted.store(true); }

net::PacketSocket open_in(const std::string& ns, const std::string& interface) {
  net::NetnsScope scope(ns);
  auto s = net::PacketSocket::open(interface, net::kEtherTypeAll, true);
  if (!s) throw std::runtime_error("cannot open an AF_PACKET socket on " + interface + " in " + ns);
  net::PacketSocket sock = std::move(s).value();
  if (!sock.set_promiscuous(true)) throw std::runtime_error("cannot make " + interface + " promiscuous");
  sock.set_receive_buffer(4 << 20);
  return sock;
}

}  // namespace

struct InterruptGuard::Saved {
  struct sigaction int_action {};
  struct sigaction term_action {};
};

// The flag is never reset: once interrupted, every later runner of this
// process stops at once too.
InterruptGuard::InterruptGuard() : saved_(std::make_unique<Saved>()) {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &saved_->int_action);
  ::sigaction(SIGTERM, &sa, &saved_->term_action);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &saved_->int_action, nullptr);
  ::sigaction(SIGTERM, &saved_->term_action, nullptr);
}

bool InterruptGuard::interrupted() { return g_interrupted.load(); }

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "layersec-attack-netns-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw std::runtime_error("cannot create a work directory: " + std::string(std::strerror(errno)));
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (std::getenv("LAYERSEC_ATTACK_KEEP_WORK") != nullptr) return;  // debugging a failed set-up
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string p = path_ + "/" + name;
  OutputFile f(p, 0600);
  f.write(text);
  f.close();
  return p;
}

void MitmTopology::ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out;
  if (net::run_command(argv, &out) != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += a + " ";
    throw std::runtime_error("'" + cmd + "' failed: " + out);
  }
}

MitmTopology::MitmTopology(const std::string& tag, const std::string& mac_a, const std::string& mac_b) {
  const std::string base = "lsatk" + tag + std::to_string(::getpid());
  try {
    for (const char* s : {"a", "b", "x"}) {
      const std::string name = base + s;
      ip({"netns", "add", name});
      ns_.push_back(name);
      (void)net::run_command({"ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                              "net.ipv6.conf.default.disable_ipv6=1"});
      ip({"-n", name, "link", "set", "lo", "up"});
    }
    ip({"link", "add", "eth0", "netns", ns_[0], "address", mac_a, "type", "veth", "peer", "name", "xa", "netns",
        ns_[2]});
    ip({"link", "add", "eth0", "netns", ns_[1], "address", mac_b, "type", "veth", "peer", "name", "xb", "netns",
        ns_[2]});
    for (int i = 0; i < 2; ++i) ip({"-n", ns_[static_cast<std::size_t>(i)], "link", "set", "eth0", "up"});
    ip({"-n", ns_[2], "link", "set", "xa", "up"});
    ip({"-n", ns_[2], "link", "set", "xb", "up"});
  } catch (...) {
    for (const auto& n : ns_) (void)net::run_command({"ip", "netns", "del", n});
    throw;
  }
}

MitmTopology::~MitmTopology() {
  for (const auto& n : ns_) (void)net::run_command({"ip", "netns", "del", n});
}

net::ChildProcess MitmTopology::spawn(const std::string& ns, const std::vector<std::string>& argv,
                                      const std::string& log) {
  std::vector<std::string> full{"ip", "netns", "exec", ns};
  full.insert(full.end(), argv.begin(), argv.end());
  return net::ChildProcess::spawn(full, log);
}

Mitm::Mitm(const MitmTopology& t) : xa_(open_in(t.ns_x(), "xa")), xb_(open_in(t.ns_x(), "xb")) {}

void Mitm::inject(const Frame& frame, bool towards_b) {
  auto& s = towards_b ? xb_ : xa_;
  for (int tries = 0; tries < 100; ++tries) {
    if (s.send(frame)) return;
    ::usleep(200);  // a full transmit queue: wait for it to drain
  }
  throw std::runtime_error("the attacker's AF_PACKET send failed");
}

void Mitm::run(std::chrono::milliseconds duration, const Hook& hook, const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + duration;
  Frame buf(65536);
  while (true) {
    if (InterruptGuard::interrupted()) throw std::runtime_error("interrupted");
    if (done && done()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - now).count();
    pollfd fds[2] = {{xa_.fd(), POLLIN, 0}, {xb_.fd(), POLLIN, 0}};
    // At most 1 ms: `done` also paces the caller's own sends (legitimate
    // frames, injections), which must not wait for the next frame.
    const int r = ::poll(fds, 2, left > 0 ? 1 : 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("poll: " + std::string(std::strerror(errno)));
    }
    for (int i = 0; i < 2; ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      auto& from = i == 0 ? xa_ : xb_;
      for (int burst = 0; burst < 64; ++burst) {
        buf.resize(65536);
        auto got = from.receive(buf);
        if (!got) break;
        buf.resize(got.value());
        Frame frame = buf;
        // A veth hands frames over with checksum offload pending: complete it.
        refresh(frame);
        if (hook && !hook(frame, i == 0)) continue;
        inject(frame, i == 0);
        ++forwarded_;
      }
    }
  }
}

std::string self_program() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot resolve /proc/self/exe: " + ec.message());
  return p.string();
}

std::string read_log(const std::string& path) {
  try {
    return read_regular_file(path, 256u << 20);
  } catch (const FileError&) {
    return "";
  }
}

double rss_mib(pid_t pid) {
  // procfs files report size 0, so read_regular_file does not apply.
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  std::string status;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    status.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const std::size_t at = status.find("VmRSS:");
  if (at == std::string::npos) return 0;
  return static_cast<double>(std::strtoull(status.c_str() + at + 6, nullptr, 10)) / 1024.0;
}

SoakLoad::SoakLoad(pid_t pid, double seconds)
    : pid_(pid),
      seconds_(seconds),
      t0_(std::chrono::steady_clock::now()),
      end_(t0_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds))),
      next_sample_(t0_ + std::chrono::seconds(1)),
      stopped_(end_),
      rss_start_(rss_mib(pid)),
      rss_max_(rss_start_) {}

std::chrono::milliseconds SoakLoad::limit() const {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds_ * 1000) + 60000);
}

bool SoakLoad::over() {
  const auto now = std::chrono::steady_clock::now();
  if (now >= end_) {
    if (stopped_ == end_) stopped_ = now;
    return true;
  }
  if (now >= next_sample_) {
    rss_max_ = std::max(rss_max_, rss_mib(pid_));
    next_sample_ += std::chrono::seconds(1);
  }
  return false;
}

double SoakLoad::seconds_run() const { return std::chrono::duration<double>(stopped_ - t0_).count(); }

void SoakLoad::finish() {
  rss_end_ = rss_mib(pid_);
  rss_max_ = std::max(rss_max_, rss_end_);
}

void kill_hard(net::ChildProcess& child) {
  if (child.running()) ::kill(child.pid(), SIGKILL);
  (void)child.wait();
}

std::string random_hex(std::size_t bytes) {
  std::vector<std::uint8_t> b(bytes);
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(b.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed");
    }
    got += static_cast<std::size_t>(n);
  }
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  std::fill(b.begin(), b.end(), 0);
  return s;
}

}  // namespace layersec::attack::netns
