#include "layersec/harness/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

// LAYERSEC_BUILD_COMMIT and LAYERSEC_BUILD_TYPE, written at build time by
// cmake/build_info.cmake (only when they change, so nothing else rebuilds).
#include "layersec_build_info.h"

namespace layersec::harness {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return {};
  const auto b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string compiler_text() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string memory_text(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    const unsigned long long kib = std::strtoull(line.c_str() + 9, nullptr, 10);
    if (kib == 0) break;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(kib) / (1024.0 * 1024.0));
    return buf;
  }
  return "unknown";
}

}  // namespace

void parse_cpuinfo(const std::string& cpuinfo, MachineInfo& m) {
  std::istringstream in(cpuinfo);
  std::string line, physical = "0";
  std::set<std::pair<std::string, std::string>> cores;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if ((key == "model name" || key == "Model" || key == "cpu model") && m.cpu_model.empty()) m.cpu_model = value;
    if (key == "physical id") physical = value;
    if (key == "core id") cores.emplace(physical, value);
    if (key == "flags" && (" " + value + " ").find(" hypervisor ") != std::string::npos) m.hypervisor = true;
  }
  m.physical_cores = static_cast<int>(cores.size());
}

std::string os_pretty_name(const std::string& os_release) {
  std::istringstream in(os_release);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = trim(line.substr(12));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

std::string load_average_text() {
  double load[3] = {};
  if (::getloadavg(load, 3) != 3) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return buf;
}

MachineInfo collect_machine_info() {
  MachineInfo m;
  char host[256] = {};
  m.host = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  parse_cpuinfo(read_text("/proc/cpuinfo"), m);
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.logical_cpus = online > 0 ? static_cast<int>(online) : 0;
  m.memory = memory_text(read_text("/proc/meminfo"));
  struct utsname u {};
  m.kernel = ::uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine
                              : std::string("unknown");
  m.os = os_pretty_name(read_text("/etc/os-release"));
  if (m.os.empty()) m.os = "unknown";
  m.load_average = load_average_text();
#ifdef NDEBUG
  const char* asserts = "assertions off";
#else
  const char* asserts = "assertions on: timings are not representative";
#endif
  const std::string type = LAYERSEC_BUILD_TYPE;
  m.build_type = (type.empty() ? std::string("(no CMAKE_BUILD_TYPE)") : type) + ", " + asserts;
  m.compiler = compiler_text();
  m.commit = LAYERSEC_BUILD_COMMIT;
  if (m.commit.empty()) m.commit = "unknown";
  return m;
}

std::vector<std::pair<std::string, std::string>> machine_facts(const MachineInfo& m) {
  std::string cores = std::to_string(m.logical_cpus) + " logical CPUs online";
  if (m.physical_cores > 0) cores += " (" + std::to_string(m.physical_cores) + " cores)";
  if (m.hypervisor) cores += ", virtual machine (hypervisor flag set)";
  return {{"host", m.host},
          {"CPU", m.cpu_model},
          {"cores", cores},
          {"memory", m.memory},
          {"kernel", m.kernel},
          {"OS", m.os},
          {"load average at start (1, 5, 15 min)", m.load_average.empty() ? "unknown" : m.load_average},
          {"build type", m.build_type},
          {"compiler", m.compiler},
          {"commit", m.commit}};
}

}  // namespace layersec::harness
