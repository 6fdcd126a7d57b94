// The machine a run measured on and the binary that measured it, for the
// reports (report_html.h): CPU model, cores, memory, kernel, OS, whether a
// hypervisor is present, the load average at the start, the build type,
// the compiler and the commit the binary was built from. Read from
// /proc/cpuinfo, /proc/meminfo, /etc/os-release, uname(2) and
// getloadavg(3); what cannot be read is "unknown", never an error.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace layersec::harness {

struct MachineInfo {
  std::string host;
  std::string cpu_model;      // "AMD EPYC 7763 64-Core Processor"
  int logical_cpus = 0;       // online (sysconf)
  int physical_cores = 0;     // distinct (physical id, core id) pairs; 0 when unknown
  bool hypervisor = false;    // the CPU's "hypervisor" flag: a virtual machine
  std::string memory;         // "23.5 GiB"
  std::string kernel;         // "Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC ... x86_64"
  std::string os;             // PRETTY_NAME of /etc/os-release
  std::string load_average;   // load_average_text() when read (the report shows the run's at start)
  std::string build_type;     // CMAKE_BUILD_TYPE of this binary, and whether assertions are on
  std::string compiler;       // "GCC 12.2.0" / "clang 14.0.6"
  std::string commit;         // git describe of the source tree at build time, or "unknown"
};

// Reads everything now (cheap: a few small files).
[[nodiscard]] MachineInfo collect_machine_info();

// The load average now, "1.02 0.87 0.55" (1, 5, 15 min), or "" when unknown.
[[nodiscard]] std::string load_average_text();

// The fields as labelled pairs for a report ("CPU", "AMD EPYC ..."), in a
// fixed order; cores as "2 logical CPUs (2 cores), virtual machine".
[[nodiscard]] std::vector<std::pair<std::string, std::string>> machine_facts(const MachineInfo& m);

// Parsers of the files above, exposed for the tests. `cpuinfo` is the text of
// /proc/cpuinfo: fills cpu_model, physical_cores and hypervisor.
void parse_cpuinfo(const std::string& cpuinfo, MachineInfo& m);
// PRETTY_NAME's value from the text of /etc/os-release (quotes removed), or "".
[[nodiscard]] std::string os_pretty_name(const std::string& os_release);

}  // namespace layersec::harness
