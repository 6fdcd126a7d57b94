// Known-answer checks of the handshake signatures (known_answers.h):
// Ed25519 and ECDSA P-256 through kex/pki.h's sign() and verify_signature(),
// the functions Mode B and the negotiation sign their transcripts with.
#include <memory>

#include "layersec/kex/pki.h"
#include "layersec/selftest/known_answers.h"
#include "layersec/selftest/signature_vectors.h"

namespace layersec::selftest {

namespace {

bool verifies(const kex::PublicKey& key, const Bytes& msg, const Bytes& sig) {
  const ByteSpan parts[1] = {msg};
  return verify_signature(key, parts, sig).ok();
}

// Every case verifies; a deterministic one is also reproduced by signing; a
// signature over the message with its last bit changed is refused.
void check_signatures(const std::vector<SignatureCase>& cases, Tally& t) {
  for (const auto& c : cases) {
    auto pub = kex::PublicKey::from_der(c.public_key);
    bool ok = pub.ok() && verifies(*pub, c.message, c.signature);
    if (c.deterministic) {
      auto key = kex::PrivateKey::from_der(c.private_key);
      const ByteSpan parts[1] = {c.message};
      auto sig = key.ok() ? kex::sign(*key, parts) : Result<std::vector<std::uint8_t>, kex::PkiError>(Err(key.error()));
      ok = ok && sig.ok() && *sig == c.signature;
    }
    t.check(ok, c.name);
    Bytes other = c.message;
    if (other.empty()) {
      other.push_back(0x00);
    } else {
      other.back() ^= 0x01;
    }
    t.check(pub.ok() && !verifies(*pub, other, c.signature), c.name + ", other message refused (derived)");
  }
}

TimedOperation timed_sign(kex::KeyAlgorithm alg) {
  return {"sign 1500 B", 1500, [alg]() -> std::function<bool()> {
            auto k = kex::PrivateKey::generate(alg);
            if (!k) return {};
            auto key = std::make_shared<kex::PrivateKey>(std::move(k).value());
            auto msg = std::make_shared<const Bytes>(bench_message());
            return [key, msg] {
              const ByteSpan parts[1] = {*msg};
              return kex::sign(*key, parts).ok();
            };
          }};
}

}  // namespace

std::vector<Primitive> signature_primitives() {
  std::vector<Primitive> out;
  out.push_back({"Ed25519", "RFC 8032 §7.1 TEST 1-3, signing and verification (testdata/kex)",
                 [](const VectorDirs& d, Tally& t) { check_signatures(ed25519_cases(d), t); },
                 timed_sign(kex::KeyAlgorithm::kEd25519)});
  out.push_back({"ECDSA-P256",
                 "RFC 6979 A.2.5 SHA-256 signatures, verification (OpenSSL 3.0 signs with a random k; testdata/kex)",
                 [](const VectorDirs& d, Tally& t) {
                   check_signatures(ecdsa_p256_cases(d), t);
                   // The product's own signature on a fresh key verifies.
                   auto key = kex::PrivateKey::generate(kex::KeyAlgorithm::kEcdsaP256);
                   const Bytes msg = bench_message();
                   const ByteSpan parts[1] = {msg};
                   auto sig = key.ok() ? kex::sign(*key, parts)
                                       : Result<std::vector<std::uint8_t>, kex::PkiError>(Err(key.error()));
                   t.check(sig.ok() && verifies(key->public_key(), msg, *sig), "sign and verify round trip");
                 },
                 timed_sign(kex::KeyAlgorithm::kEcdsaP256)});
  return out;
}

}  // namespace layersec::selftest
