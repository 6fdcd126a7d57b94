// Fuzz target: the parser of the kernel's MACsec statistics reply
// (macsec/kernel_backend.h parse_txsc_dump: one MACSEC_CMD_GET_TXSC generic
// netlink message with nested SecY, TX SC, TX SA, RX SC and RX SA
// attributes, 4- or 8-octet counters). The input is the whole netlink
// message. Properties: no crash or sanitizer report; every SA of a message
// that parses has AN 0..3, and its JSON form (to_json) can be built and
// printed. No serialiser: no round trip.
#include <cstdint>

#include "fuzz_support.h"
#include "layersec/macsec/kernel_backend.h"

using namespace layersec;
using layersec::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto s = macsec::kernel::parse_txsc_dump(ByteSpan(data, size));
  if (!s) return 0;
  for (const auto& sa : s->tx_sas) require(sa.an <= 3);
  for (const auto& sc : s->rx_scs)
    for (const auto& sa : sc.sas) require(sa.an <= 3);
  (void)macsec::kernel::to_json(*s).dump();
  return 0;
}
