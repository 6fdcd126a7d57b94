#include "layersec/bench/bench_env.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "layersec/base/file.h"

namespace layersec::bench {

namespace fs = std::filesystem;

std::string program_path(const std::string& given) {
  if (!given.empty() && given != "/proc/self/exe") return given;
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot resolve /proc/self/exe: " + ec.message());
  return p.string();
}

WorkDir::WorkDir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
  dir_ = tmpl;
}

WorkDir::~WorkDir() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

IperfResult read_iperf(const std::string& path, bool udp) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_regular_file(path, 16 << 20));
  } catch (const std::exception& e) {
    throw std::runtime_error("iperf3 result " + path + ": " + e.what());
  }
  if (j.contains("error")) throw std::runtime_error("iperf3: " + j["error"].get<std::string>());
  IperfResult r;
  const auto& end = j.at("end");
  if (udp) {
    // The receiver's figures (iperf3 >= 3.9 reports them as sum_received;
    // "sum" is the sender's view and shows no loss).
    const auto& s = end.contains("sum_received") ? end.at("sum_received") : end.at("sum");
    const double packets = s.at("packets").get<double>();
    const double lost = s.at("lost_packets").get<double>();
    r.loss_pct = packets > 0 ? lost / packets * 100 : 0;
    r.jitter_ms = s.at("jitter_ms").get<double>();
    r.mbit_s = s.at("bits_per_second").get<double>() / 1e6;
  } else {
    r.mbit_s = end.at("sum_received").at("bits_per_second").get<double>() / 1e6;
  }
  return r;
}

std::optional<ProcessCpu> process_cpu(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "pid (comm) state ppid ..." where comm may hold spaces and ')': the
  // fields after the last ')' are state (3), ..., utime (14), stime (15).
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  if (!rest) return std::nullopt;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ProcessCpu{static_cast<double>(utime) / tick, static_cast<double>(stime) / tick};
}

std::optional<SystemCpu> system_cpu() {
  std::ifstream in("/proc/stat");
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal (guest is inside user).
  unsigned long long v[8] = {};
  for (auto& x : v) {
    if (!(in >> x)) return std::nullopt;
  }
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  unsigned long long total = 0;
  for (auto x : v) total += x;
  const unsigned long long idle = v[3] + v[4];
  return SystemCpu{static_cast<double>(total - idle) / tick, static_cast<double>(total) / tick};
}

}  // namespace layersec::bench
