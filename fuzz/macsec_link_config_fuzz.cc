// Fuzz target: the MACsec link configuration reader (macsec/link_config.h,
// `layersec macsec up --config`): SecY settings, transmit and receive SAs,
// SCI/SSCI/salt hex fields, key files. The key files k16a, k16b, k16c, k32
// (and tx.key, rx.key) exist in a private temporary directory used as the
// configuration's directory. Property: every input is refused with
// LinkConfigError or yields a configuration whose SecY can be made; any other
// exception, a crash or a sanitizer report is a finding. No serialiser: no
// round trip.
#include <cstdint>

#include "fuzz_support.h"
#include "layersec/macsec/link_config.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::KeyDir keys({{"k16a", 16}, {"k16b", 16}, {"k16c", 16}, {"k32", 32}, {"k32b", 32},
                                  {"tx.key", 16}, {"rx.key", 16}});
  const auto j = fuzz::json_of(data, size);
  if (!j) return 0;
  try {
    const macsec::LinkConfig c = macsec::parse_link_config(*j, keys.path());
    (void)c;
  } catch (const macsec::LinkConfigError&) {
  }
  return 0;
}
