// Fuzz target: the node configuration reader (node/node_config.h,
// `layersec node --config`), including its "secoc" section (the SecOC engine
// configuration, key files, bindings), its "test" section and its "raw" and
// "tsn" sections (the AF_PACKET transport and its TSN first hop: the
// `macsec up --tsn` reader, taprio schedules included). The input is
// the JSON text; the key files the examples name exist (keys/*.key in a
// private temporary directory used as the configuration's directory).
// Property: every input is either refused with NodeConfigError (or the SecOC
// engine's ConfigError) or yields a configuration; any other exception, a
// crash or a sanitizer report is a finding. No serialiser: no round trip.
#include <cstdint>

#include "fuzz_support.h"
#include "layersec/node/node_config.h"
#include "layersec/secoc/config.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::KeyDir keys({{"keys/pair.key", 32}, {"keys/group.key", 32}, {"keys/a.key", 16},
                                  {"keys/b.key", 16}, {"pair.key", 32}, {"k16", 16}, {"k32", 32}});
  const auto j = fuzz::json_of(data, size);
  if (!j) return 0;
  try {
    const node::NodeConfig c = node::node_config_from_json(*j, keys.path().string());
    (void)c;
  } catch (const node::NodeConfigError&) {
  } catch (const secoc::ConfigError&) {
  }
  return 0;
}
