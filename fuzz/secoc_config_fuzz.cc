// Fuzz target: the SecOC engine configuration reader (secoc/config.h,
// config_from_json: key groups, PDU profiles, freshness layouts, sync
// channels). Property: every input is refused with ConfigError or yields a
// configuration; any other exception, a crash or a sanitizer report is a
// finding. No serialiser: no round trip.
#include <cstdint>

#include "fuzz_support.h"
#include "layersec/secoc/config.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = fuzz::json_of(data, size);
  if (!j) return 0;
  try {
    const secoc::EngineConfig c = secoc::config_from_json(*j);
    (void)c;
  } catch (const secoc::ConfigError&) {
  }
  return 0;
}
