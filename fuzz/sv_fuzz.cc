// Fuzz target: the SV frame decoder on arbitrary bytes, the parse ->
// serialize -> parse round trip, the security extension parser (with its
// mandatory senderId ‖ frameCounter field) and its parse -> encode round
// trip, and the subscriber (decode, verify, frame-counter and smpCnt checks,
// supervise) on the same bytes. The secured stream's key is 16 zero bytes,
// so the seed layersec_selective_verifies.bin (sv pcap --auth
// chaskey12-selective --appid 0x4001 --sv-id TESTMU0101, key all zero)
// passes the tag and reaches the counter and smpCnt checks.
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

// A parsed extension's fields agree with its bytes, and encoding them gives
// the bytes back when the input used minimal (one-byte) lengths, which is
// exactly when the sizes agree.
void check_extension(ByteSpan ext) {
  auto e = parse_extension(ext);
  if (!e.ok()) return;
  if (e->freshness.size() != kFreshnessBytes) fail("freshness field of the wrong size");
  if (load_be32(e->freshness.data()) != e->sender_id || load_be64(e->freshness.data() + 4) != e->counter) {
    fail("senderId/frameCounter disagree with the freshness bytes");
  }
  if (e->tag.empty() || e->tag_offset + e->tag.size() != ext.size()) fail("tag is not the extension's last field");
  const std::size_t minimal = 2 + 6 + 6 + 4 + 3 + 2 + kFreshnessBytes + 2 + e->tag.size();
  if (e->tag.size() > 127 || minimal - 2 > 127) return;
  std::vector<std::uint8_t> out(minimal);
  if (!encode_extension(*e, out)) fail("a parsed extension does not encode");
  auto again = parse_extension(out);
  if (!again.ok() || again->counter != e->counter || again->key_id != e->key_id) fail("re-encoded extension differs");
  if (ext.size() == minimal && std::memcmp(out.data(), ext.data(), minimal) != 0) fail("extension round trip differs");
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
    if (!f->extension.empty()) check_extension(f->extension);
  }
  subscriber().on_frame(in, TimePoint{}).ignore();
  return 0;
}
