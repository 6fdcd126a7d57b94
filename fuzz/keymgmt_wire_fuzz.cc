// Parsers of the key-management service payloads (src/layersec/keymgmt/wire.h):
// every input is either rejected with a typed error or parses to fields that
// re-encode to the same bytes (Hello: to the same KEM list once unknown ids
// are dropped). The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/keymgmt/wire.h"

using namespace layersec;
using namespace layersec::keymgmt;

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const ByteSpan in(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto h = parse_hello(in);
      if (!h.ok()) return 0;
      auto again = parse_hello(encode_hello(*h));
      if (h->kems.empty()) {
        check(!again.ok());
      } else {
        check(again.ok() && again->kems == h->kems);
      }
      break;
    }
    case 1: {
      auto r = parse_hello_response(in);
      if (!r.ok()) return 0;
      const auto bytes = encode_hello_response(r->kem, r->mac_id, r->certificate);
      check(std::vector<std::uint8_t>(in.begin(), in.end()) == bytes);
      break;
    }
    case 2: {
      auto a = parse_confirm_ack(in);
      if (!a.ok()) return 0;
      check(std::vector<std::uint8_t>(in.begin(), in.end()) == encode_confirm_ack(*a));
      break;
    }
    default: {
      auto n = parse_rekey_notice(in);
      if (!n.ok()) return 0;
      check(n->signed_length == kRekeySignedLength && n->key_id != 0 && !n->signature.empty());
      auto bytes = encode_rekey_notice_body(*n);
      append_signature(bytes, n->signature);
      check(std::vector<std::uint8_t>(in.begin(), in.end()) == bytes);
      break;
    }
  }
  return 0;
}
