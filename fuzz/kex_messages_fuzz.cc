// Fuzz target for the key-establishment wire parsers: Mode B KeyRequest,
// KeyDelivery and KeyConfirm, the GroupKeyDistribution message, and the
// authorised-services certificate extension. Parsers must never crash, read
// out of bounds or accept trailing bytes; the services extension must also
// round-trip (parse -> encode gives the same DER).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/kex/group_keys.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  if (auto h = kex::parse_mode_b_header(in); h.ok()) {
    // A header that parses names a message type; nothing more to check here.
  }
  if (auto r = kex::parse_key_request(in); r.ok()) {
    const auto& v = r.value();
    if (v.signed_length > size) std::abort();
    if (v.nonce_s.size() + v.certificate.size() + v.kem_public_key.size() + v.signature.size() > size)
      std::abort();
  }
  if (auto r = kex::parse_key_delivery(in); r.ok()) {
    const auto& v = r.value();
    if (v.signed_length > size || v.kek_transcript_length > v.signed_length) std::abort();
  }
  if (auto r = kex::parse_key_confirm(in); r.ok()) {
    if (r.value().mac_length > size) std::abort();
  }
  if (auto r = kex::parse_group_key_distribution(in); r.ok()) {
    const auto& v = r.value();
    if (v.header_length > size || v.wrapped_key.size() > size) std::abort();
  }
  if (auto s = kex::parse_services(in); s.ok()) {
    auto again = kex::encode_services(s.value());
    if (!again.ok()) std::abort();
    const auto& der = again.value();
    // Strict DER: the encoding of what was parsed is the input itself.
    if (der.size() != size || !std::equal(der.begin(), der.end(), data)) std::abort();
  }
  return 0;
}
