// Fuzz target for the 4-step KEM negotiation (kex/negotiation.h) over
// ML-KEM-768 with fixed keys and nonces. The input is split into frames fed
// to both state machines in every position a peer could send them: Hello and
// KeyExchange to the responder, PublicKey and Finished to the initiator, each
// after a genuine prefix of the exchange. No input may crash either side, and
// no key may be released unless the Finished MAC verified: a session key only
// exists in kDone, and a fuzzed exchange that reaches kDone on both sides must
// agree on the key.
// fuzz-iterations: 3000
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/kex/kem.h"
#include "layersec/kex/negotiation.h"

using namespace layersec;

namespace {

struct Fixture {
  std::unique_ptr<kex::Kem> kem = kex::make_kem(kex::KemScheme::kMlKem768);
  kex::KemKeyPair pair;
  std::unique_ptr<kex::KemPrivateKey> priv;
  std::vector<std::uint8_t> nonce_i = std::vector<std::uint8_t>(32, 0x11);
  std::vector<std::uint8_t> nonce_r = std::vector<std::uint8_t>(32, 0x22);
  Fixture() {
    std::vector<std::uint8_t> seed(64, 0x5a);
    auto kp = kem->generate_from_seed(seed);
    if (!kp) std::abort();
    pair = std::move(kp).value();
    auto pk = kem->load_private_key(pair.private_key.span());
    if (!pk) std::abort();
    priv = std::move(pk).value();
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto& f = fixture();
  const ByteSpan in(data, size);
  const std::uint8_t mode = size ? data[0] % 4 : 0;
  const ByteSpan frame = size ? in.subspan(1) : in;

  kex::NegotiationInitiator ini(*f.kem, f.nonce_i);
  kex::NegotiationResponder res(*f.kem, f.pair.public_key, *f.priv, f.nonce_r);
  switch (mode) {
    case 0: {  // fuzzed Hello to a fresh responder
      auto r = res.on_hello(frame);
      if (!r.ok() && res.session_key().size() != 0) std::abort();
      break;
    }
    case 1: {  // fuzzed PublicKey to an initiator that sent Hello
      auto hello = ini.start();
      if (!hello) std::abort();
      auto r = ini.on_public_key(frame);
      r.ignore();
      if (ini.session_key().size() != 0) std::abort();  // not before Finished
      break;
    }
    case 2: {  // genuine Hello, fuzzed KeyExchange
      auto hello = ini.start();
      if (!hello) std::abort();
      auto pk = res.on_hello(hello.value());
      if (!pk) std::abort();
      auto r = res.on_key_exchange(frame);
      if (!r.ok() && res.session_key().size() != 0) std::abort();
      break;
    }
    default: {  // genuine exchange up to step 3, fuzzed Finished
      auto hello = ini.start();
      if (!hello) std::abort();
      auto pk = res.on_hello(hello.value());
      if (!pk) std::abort();
      auto kx = ini.on_public_key(pk.value());
      if (!kx) std::abort();
      auto fin = res.on_key_exchange(kx.value());
      if (!fin) std::abort();
      auto r = ini.on_finished(frame);
      if (r.ok()) {
        // Only the genuine Finished can verify; then both keys agree.
        const auto& a = ini.session_key();
        const auto& b = res.session_key();
        if (a.size() == 0 || a.size() != b.size() ||
            !std::equal(a.span().begin(), a.span().end(), b.span().begin()))
          std::abort();
      } else if (ini.session_key().size() != 0) {
        std::abort();
      }
      break;
    }
  }
  return 0;
}
