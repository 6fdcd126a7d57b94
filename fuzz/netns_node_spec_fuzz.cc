// Fuzz target: the netns scenario node spec and report codecs
// (harness/netns_node_spec.h: `layersec bench scenario-node --spec` and the
// report each node writes back). The first byte picks spec or report; the
// rest is the JSON text.
// Properties: every input is refused with NetnsJsonError or parses; a parsed
// value round-trips: from_json(to_json(v)) parses again and
// to_json(from_json(to_json(v))) == to_json(v). Any other exception, a crash
// or a sanitizer report is a finding.
#include <cstdint>

#include "fuzz_support.h"
#include "layersec/harness/netns_node_spec.h"

using namespace layersec;
using layersec::fuzz::require;

namespace {

template <typename Parse>
void round_trip(const nlohmann::json& j, Parse parse) {
  nlohmann::json once;
  try {
    once = to_json(parse(j));
  } catch (const harness::NetnsJsonError&) {
    return;
  }
  try {
    require(to_json(parse(once)) == once);
  } catch (const harness::NetnsJsonError&) {
    std::abort();  // what we wrote is refused by our own reader
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto j = fuzz::json_of(data + 1, size - 1);
  if (!j) return 0;
  if (data[0] & 1) {
    round_trip(*j, [](const nlohmann::json& v) { return harness::node_report_from_json(v); });
  } else {
    round_trip(*j, [](const nlohmann::json& v) { return harness::node_spec_from_json(v); });
  }
  return 0;
}
