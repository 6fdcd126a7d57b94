// Fuzz target: the SV subscriber's counter floor file parser
// (sv_io/floor_file.h).
//  - the input as a whole file: parse never crashes; whatever parses
//    serialises and parses back to the same records, and the text is stable;
//  - the input as the body of a file with a correct checksum line appended,
//    so the record grammar itself is exercised (random bytes almost never
//    carry a valid SHA-256): same round trip, records unique by (APPID,
//    svID), and an error always names a line inside the text (+1 for a
//    missing last line).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "layersec/base/hex.h"
#include "layersec/crypto/kdf.h"
#include "layersec/sv_io/floor_file.h"

namespace {

using namespace layersec;
using namespace layersec::sv_io;

void require(bool c) {
  if (!c) std::abort();
}

void check(const std::string& text) {
  std::size_t line = 0;
  auto parsed = parse_floor_state(text, &line);
  if (!parsed) {
    std::size_t lines = 0;
    for (char c : text) lines += c == '\n' ? 1 : 0;
    require(line >= 1 && line <= lines + 1);
    require(!floor_syntax_message(parsed.error(), line).empty());
    return;
  }
  std::set<sv::FloorKey> keys;
  for (const auto& r : *parsed) require(keys.insert(r.key).second && r.key.sv_id.size() <= 129);
  const std::string again = serialize_floor_state(*parsed);
  auto back = parse_floor_state(again);
  require(back.ok() && *back == *parsed);
  require(serialize_floor_state(*back) == again);
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
