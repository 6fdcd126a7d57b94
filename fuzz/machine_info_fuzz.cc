// Fuzz target: the machine description's parsers (harness/machine_info.h):
// parse_cpuinfo (the text of /proc/cpuinfo) and os_pretty_name (the text of
// /etc/os-release), whose results report.html shows. The first byte picks
// the parser; the rest is the file's text.
// Properties: no exception or crash; the CPU model and the OS name are a
// single line taken from the input (a substring of it); the core count is at
// most the number of "core id" lines; the hypervisor flag is set only when
// the input names it; the names reach the page escaped (no '<' left). No
// serialiser: no round trip.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "layersec/harness/machine_info.h"
#include "layersec/harness/svg_chart.h"

using namespace layersec;
using layersec::fuzz::require;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

void single_line_from(const std::string& value, const std::string& input) {
  require(value.find('\n') == std::string::npos);
  require(input.find(value) != std::string::npos);
  require(harness::html_escape(value).find('<') == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    single_line_from(harness::os_pretty_name(text), text);
    return 0;
  }
  harness::MachineInfo m;
  harness::parse_cpuinfo(text, m);
  single_line_from(m.cpu_model, text);
  require(m.physical_cores >= 0 && static_cast<std::size_t>(m.physical_cores) <= count(text, "core id"));
  require(!m.hypervisor || text.find("hypervisor") != std::string::npos);
  return 0;
}
