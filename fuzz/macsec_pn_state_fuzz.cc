// Fuzz target: the MACsec PN state file parser (macsec/pn_state_file.h).
//  - the input as a whole file: parse never crashes; whatever parses
//    serializes and parses back to the same records;
//  - the input as the body of a file with a correct checksum line appended,
//    so the record grammar itself is exercised (random bytes almost never
//    carry a valid SHA-256): same round trip, and every parsed record is
//    unique by (direction, SCI, fingerprint).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "layersec/base/hex.h"
#include "layersec/crypto/kdf.h"
#include "layersec/macsec/pn_state_file.h"

namespace {

using namespace layersec;
using namespace layersec::macsec;

void require(bool c) {
  if (!c) std::abort();
}

void check(const std::string& text) {
  auto parsed = parse_pn_state(text);
  if (!parsed) return;
  std::set<PnKey> keys;
  for (const auto& r : *parsed) require(keys.insert(r.key).second && r.an <= 3);
  const std::string again = serialize_pn_state(*parsed);
  auto back = parse_pn_state(again);
  require(back.ok() && *back == *parsed);
  require(serialize_pn_state(*back) == again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  check(input);
  std::uint8_t digest[32];
  const ByteSpan parts[1] = {ByteSpan(data, size)};
  require(crypto::sha256(parts, MutableByteSpan(digest, sizeof digest)).ok());
  check(input + "end " + to_hex(ByteSpan(digest, sizeof digest)) + "\n");
  return 0;
}
