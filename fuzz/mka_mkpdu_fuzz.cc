// Fuzz target: the MKPDU codec (mka/mkpdu.h).
//  - The input as a whole frame, and again with its first 18 octets replaced
//    by a valid Ethernet + EAPOL-MKA header whose body length matches (so
//    mutated inputs reach the parameter-set walk instead of stopping at the
//    header checks).
//  - Whatever decodes re-encodes (encode_mkpdu_with_icv with the received
//    ICV) to a frame of the same length that decodes to an equal Mkpdu and
//    ICV, and that is a fixed point of decode -> encode (the canonical form:
//    an input without reserved bits and with its sets in ascending order,
//    such as the eight wpa_supplicant seeds, is already one; the unit tests
//    check those byte-exact). encode_mkpdu with an ICK gives a frame whose
//    ICV verifies; a refused input yields a reason < kMkpduErrorCount.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_support.h"
#include "layersec/mka/mkpdu.h"

namespace {

using namespace layersec;
using namespace layersec::mka;
using layersec::fuzz::require;

const SecretBytes& ick() {
  static const SecretBytes k(std::vector<std::uint8_t>(16, 0x5A));
  return k;
}

void check(ByteSpan in) {
  auto d = decode_mkpdu(in);
  if (!d) {
    require(static_cast<std::size_t>(d.error()) < kMkpduErrorCount);
    return;
  }
  require(d->icv_covered.size() + kIcvSize == in.size());
  require(encoded_size(d->mkpdu) == in.size());
  std::vector<std::uint8_t> out(in.size());
  auto n = encode_mkpdu_with_icv(d->mkpdu, d->icv, out);
  require(n.ok() && *n == in.size());
  auto again = decode_mkpdu(out);
  require(again.ok() && again->mkpdu == d->mkpdu && again->icv == d->icv);
  std::vector<std::uint8_t> out2(out.size());
  auto n2 = encode_mkpdu_with_icv(again->mkpdu, again->icv, out2);
  require(n2.ok() && out2 == out);
  // Signed with an ICK, the same Mkpdu verifies.
  auto signed_frame = encode_mkpdu(d->mkpdu, ick());
  require(signed_frame.ok());
  auto s = decode_mkpdu(*signed_frame);
  require(s.ok() && s->mkpdu == d->mkpdu && verify_mkpdu_icv(*s, ick()));
  (void)verify_mkpdu_icv(*d, ick());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(ByteSpan(data, size));
  constexpr std::size_t kHeader = kEthernetHeaderSize + kEapolHeaderSize;
  const std::size_t body = size > kHeader ? size - kHeader : 0;
  if (body > 0xFFFF) return 0;
  std::vector<std::uint8_t> f(kHeader + body);
  const std::uint8_t header[kHeader] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x03, 0x02, 0x00, 0x00,
                                        0x00, 0x00, 0x01, 0x88, 0x8E, 0x03, 0x05, 0x00, 0x00};
  std::memcpy(f.data(), header, kHeader);
  store_be16(f.data() + 16, static_cast<std::uint16_t>(body));
  if (body > 0) std::memcpy(f.data() + kHeader, data + kHeader, body);
  check(f);
  return 0;
}
