// Pieces the namespace benchmarks share (bench mka, bench tsn, bench
// macsec-link): the layersec binary they spawn in a namespace, a private work
// directory, iperf3's JSON result, and CPU time read from /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace layersec::bench {

// `given`, or this program's own path when it is empty or /proc/self/exe
// (`ip netns exec` would resolve /proc/self/exe to itself). Throws
// std::runtime_error when the link cannot be read.
std::string program_path(const std::string& given);

// A private work directory (mode 0700, /tmp/PREFIX-XXXXXX) removed with
// everything in it when this object goes. Throws std::runtime_error when it
// cannot be created.
class WorkDir {
 public:
  explicit WorkDir(const std::string& prefix);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// Writes `text` to `p` (not for secrets: see base/keyfile.h). Throws
// std::runtime_error naming the file.
void write_text(const std::filesystem::path& p, const std::string& text);

// The figures of one `iperf3 -J --logfile FILE` client run: the receiver's
// throughput, and for UDP its jitter and loss. Throws std::runtime_error when
// the file is unreadable or iperf3 reported an error.
struct IperfResult {
  double mbit_s = 0;
  std::optional<double> jitter_ms, loss_pct;
};
IperfResult read_iperf(const std::string& path, bool udp);

// CPU time a process has used so far (/proc/PID/stat utime and stime), in
// seconds; nullopt when the process is gone or the file is unreadable.
struct ProcessCpu {
  double user_s = 0;
  double sys_s = 0;
};
std::optional<ProcessCpu> process_cpu(pid_t pid);

// The machine's CPU time so far (/proc/stat "cpu" line), in seconds summed
// over every core: busy (everything but idle and iowait) and total.
struct SystemCpu {
  double busy_s = 0;
  double total_s = 0;
};
std::optional<SystemCpu> system_cpu();

}  // namespace layersec::bench
