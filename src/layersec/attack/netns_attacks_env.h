// The set-up of the netns attack runner (netns_attacks.h): namespaces joined
// by veth pairs through an attacker namespace, the attacker's two AF_PACKET
// sockets that forward between them (the man in the middle, which can
// record, alter, drop and inject), the real processes under attack and the
// run's temporary directory. Everything is removed by the destructors (also
// when a phase throws), and SIGINT/SIGTERM make the forwarding loop throw so
// that the destructors run. Root only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "layersec/attack/netns_attacks_frames.h"
#include "layersec/net/netns.h"
#include "layersec/net/packet_socket.h"

namespace layersec::attack::netns {

// Installs the SIGINT/SIGTERM handlers of the run (restored by the
// destructor); interrupted() is true once one arrived.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  static bool interrupted();

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

// A temporary directory (mode 0700), removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  // Writes a file (mode 0600, O_NOFOLLOW through base/file.h); returns its path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// Two end namespaces ("a", "b"), each with eth0, and an attacker namespace
// between them holding the peer ends ("xa", "xb"). IPv6 is off everywhere.
class MitmTopology {
 public:
  // `tag` names the run ("lsatk" + tag + pid); MACs are fixed.
  MitmTopology(const std::string& tag, const std::string& mac_a, const std::string& mac_b);
  ~MitmTopology();
  MitmTopology(const MitmTopology&) = delete;
  MitmTopology& operator=(const MitmTopology&) = delete;

  [[nodiscard]] const std::string& ns_a() const { return ns_[0]; }
  [[nodiscard]] const std::string& ns_b() const { return ns_[1]; }
  [[nodiscard]] const std::string& ns_x() const { return ns_[2]; }
  // Runs `ip ...`; throws std::runtime_error with the output on failure.
  static void ip(const std::vector<std::string>& args);
  // Starts `argv` inside namespace `ns` (through `ip netns exec`), output
  // appended to `log`.
  static net::ChildProcess spawn(const std::string& ns, const std::vector<std::string>& argv, const std::string& log);

 private:
  std::vector<std::string> ns_;
};

// The attacker: AF_PACKET sockets on xa and xb (promiscuous), forwarding
// every frame to the other side unless the hook says otherwise.
class Mitm {
 public:
  // Hook: sees each frame (from_a: it came from namespace a), may change it;
  // returns false to drop it.
  using Hook = std::function<bool(Frame& frame, bool from_a)>;
  explicit Mitm(const MitmTopology& topology);
  // Forwards for `duration` (or until `done` returns true), calling `hook`.
  // Throws std::runtime_error when interrupted or a socket fails.
  void run(std::chrono::milliseconds duration, const Hook& hook, const std::function<bool()>& done = {});
  // Sends a frame towards namespace b (from_a = true) or a.
  void inject(const Frame& frame, bool towards_b);
  [[nodiscard]] std::uint64_t forwarded() const { return forwarded_; }

 private:
  net::PacketSocket xa_;
  net::PacketSocket xb_;
  std::uint64_t forwarded_ = 0;
};

// The real path of this program (for `ip netns exec`, which would resolve
// /proc/self/exe to itself).
std::string self_program();
// The whole content of a log file written by a child ("" when missing).
std::string read_log(const std::string& path);
// Resident memory of process `pid` in MiB (VmRSS of /proc/PID/status; 0
// when it is gone).
double rss_mib(pid_t pid);

// The clock and memory samples of a soak (N.soak) against process `pid`:
// the load lasts `seconds` from construction; over() samples the RSS once a
// second while it runs and notes when it first says the load is over;
// finish() (once the receiver has drained) takes the last sample.
class SoakLoad {
 public:
  SoakLoad(pid_t pid, double seconds);
  // A bound for Mitm::run that the load's own end comes well before.
  [[nodiscard]] std::chrono::milliseconds limit() const;
  // True once the load time is over.
  bool over();
  // How long the load ran (until over() first returned true).
  [[nodiscard]] double seconds_run() const;
  // Samples the RSS a last time.
  void finish();
  [[nodiscard]] double rss_start() const { return rss_start_; }
  [[nodiscard]] double rss_max() const { return rss_max_; }
  [[nodiscard]] double rss_end() const { return rss_end_; }

 private:
  pid_t pid_;
  double seconds_;
  std::chrono::steady_clock::time_point t0_;
  std::chrono::steady_clock::time_point end_;
  std::chrono::steady_clock::time_point next_sample_;
  std::chrono::steady_clock::time_point stopped_;
  double rss_start_ = 0;
  double rss_max_ = 0;
  double rss_end_ = 0;
};
// SIGKILL, then reap (the restart class's crash).
void kill_hard(net::ChildProcess& child);
// Random bytes as lowercase hex (key material for the run's key files).
std::string random_hex(std::size_t bytes);

}  // namespace layersec::attack::netns

namespace layersec::attack {
struct AttackRow;
struct AttackOptions;
namespace netns {
// The configurations of netns_attacks.h (netns_attacks_secoc.cc,
// netns_attacks_macsec.cc, netns_attacks_sv.cc); attempts already capped.
std::vector<AttackRow> run_secoc(const AttackOptions& options);
std::vector<AttackRow> run_macsec(const AttackOptions& options, double soak_seconds);
// With soak_seconds > 0 also the soak row (N.soak) of each.
std::vector<AttackRow> run_sv(const AttackOptions& options, double soak_seconds);
}  // namespace netns
}  // namespace layersec::attack
