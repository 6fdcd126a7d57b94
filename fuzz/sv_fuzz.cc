// Fuzz target: the SV frame decoder on arbitrary bytes, the parse ->
// serialize -> parse round trip, the security extension parser, and the
// subscriber (decode, verify, supervise) on the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layersec/sv/frame.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"

using namespace layersec;
using namespace layersec::sv;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "sv_fuzz: %s\n", what);
  std::abort();
}

Subscriber& subscriber() {
  static Subscriber* s = [] {
    auto* sub = new Subscriber();
    SubscriptionConfig plain;
    plain.appid = 0x4000;
    plain.sv_id = "TESTMU0101";
    sub->add_stream(plain);
    SubscriptionConfig secured = plain;
    secured.appid = 0x4001;
    secured.security = *parse_scheme("chaskey12-selective");
    KeyMaterial k;
    k.key_id = 1;
    k.key = SecretBytes(16);
    sub->add_stream(secured, std::move(k));
    return sub;
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  auto f = decode_frame(in);
  if (f.ok()) {
    // Re-encode; the result must decode to the same content, and encoding
    // that again must give the same bytes (minimal form is a fixed point).
    const std::size_t n = encoded_size(*f);
    if (n == 0) fail("decoded frame has no encoded size");
    std::vector<std::uint8_t> out(n);
    auto w = encode_frame(*f, out);
    if (!w.ok() || *w != n) fail("decoded frame does not encode");
    auto g = decode_frame(out);
    if (!g.ok()) fail("re-encoded frame does not decode");
    if (!same_content(*f, *g)) fail("round trip changed the content");
    std::vector<std::uint8_t> again(n);
    auto w2 = encode_frame(*g, again);
    if (!w2.ok() || again != out) fail("encoding is not a fixed point");
    // A decoder that accepted minimal-length input must reproduce it exactly.
    if (n == f->frame_end && std::memcmp(out.data(), data, n) != 0 && f->frame_end == size) {
      // Non-minimal BER lengths in the input are legal and re-encode shorter,
      // so equal size means every length was already minimal.
      fail("same-size re-encoding differs");
    }
    if (!f->extension.empty()) parse_extension(f->extension).ignore();
  }
  subscriber().on_frame(in, TimePoint{}).ignore();
  return 0;
}
