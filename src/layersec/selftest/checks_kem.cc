// Known-answer checks of the key establishment primitives (known_answers.h):
// ML-KEM-512/768/1024, X25519, ECDH P-256/P-521, RSA-OAEP-2048, NTRU
// EES613EP1/EES1171EP1 and the X25519+ML-KEM-768 hybrid, through the
// product's own interfaces (kex::Kem, kex::RawDh; crypto::MlKem as well for
// ML-KEM). Checks derived from a vector rather than published with it (a
// changed point, a flipped ciphertext byte, a round trip) say so in their name.
#include <algorithm>
#include <memory>
#include <string_view>

#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mlkem.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/raw_dh.h"
#include "layersec/selftest/kem_vectors.h"
#include "layersec/selftest/known_answers.h"
#include "layersec/selftest/mlkem_vectors.h"

namespace layersec::selftest {

namespace {

using kex::KemScheme;

bool equal(const SecretBytes& s, const Bytes& b) { return std::ranges::equal(s.span(), b); }

Bytes cat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The RFC 9180 DHKEM vectors of `scheme`: the recipient key from its private
// key, Encap with the vector's ephemeral key, and Decap.
void check_dhkem(const VectorDirs& d, KemScheme scheme, Tally& t) {
  auto kem = kex::make_kem(scheme);
  for (const auto& c : dhkem_cases(d)) {
    if (c.scheme != scheme) continue;
    auto kp = kem->generate_from_seed(c.sk_r);
    auto enc = kem->encapsulate_with_seed(c.pk_r, c.sk_e);
    auto ss = kem->decapsulate(ByteSpan(c.sk_r), c.pk_e);
    t.check(kp.ok() && kp->public_key == c.pk_r && enc.ok() && enc->ciphertext == c.pk_e &&
                equal(enc->shared_secret, c.shared) && ss.ok() && equal(*ss, c.shared),
            c.name + " DHKEM");
  }
}

// Raw DH both ways the source gives: the public key of the private key (where
// published) and the shared secret.
void check_raw_dh(const std::vector<RawDhCase>& cases, Tally& t) {
  for (const auto& c : cases) {
    kex::RawDh dh(c.scheme);
    auto ss = dh.shared_secret(c.private_key, c.peer_public);
    bool ok = ss.ok() && equal(*ss, c.shared);
    if (!c.own_public.empty()) {
      auto pub = dh.public_key(c.private_key);
      ok = ok && pub.ok() && *pub == c.own_public;
    }
    t.check(ok, c.name);
  }
}

TimedOperation timed_kem(KemScheme scheme, const char* what) {
  return {what, 0, [scheme]() -> std::function<bool()> {
            std::shared_ptr<kex::Kem> kem = kex::make_kem(scheme);
            auto kp = kem->generate();
            if (!kp) return {};
            auto key = kem->load_private_key(kp->private_key.span());
            if (!key) return {};
            std::shared_ptr<kex::KemPrivateKey> sk = std::move(key).value();
            auto pk = std::make_shared<const Bytes>(kp->public_key);
            return [kem, sk, pk] {
              auto e = kem->encapsulate(*pk);
              if (!e) return false;
              auto ss = kem->decapsulate(*sk, e->ciphertext);
              return ss.ok() && std::ranges::equal(ss->span(), e->shared_secret.span());
            };
          }};
}

Primitive mlkem(KemScheme scheme, crypto::MlKemParameterSet set, const char* name) {
  auto check = [scheme, set, name](const VectorDirs& d, Tally& t) {
    const MlKemCases cases = mlkem_cases(d, name);
    crypto::MlKem raw(set);
    auto kem = kex::make_kem(scheme);
    const auto& p = raw.params();
    for (const auto& c : cases.keygen) {
      Bytes ek(p.encaps_key_size), dk(p.decaps_key_size);
      const bool direct = raw.keygen_internal(c.d, c.z, ek, dk).ok() && ek == c.ek && dk == c.dk;
      auto kp = kem->generate_from_seed(cat(c.d, c.z));
      t.check(direct && kp.ok() && kp->public_key == c.ek && equal(kp->private_key, c.dk), c.name + " keyGen");
    }
    for (const auto& c : cases.encaps) {
      Bytes ct(p.ciphertext_size), k(32);
      const bool direct = raw.encaps_internal(c.ek, c.m, ct, k).ok() && ct == c.c && k == c.k;
      auto e = kem->encapsulate_with_seed(c.ek, c.m);
      t.check(direct && e.ok() && e->ciphertext == c.c && equal(e->shared_secret, c.k), c.name + " encapsulation");
    }
    for (const auto& c : cases.decaps) {
      Bytes k(32);
      const bool direct = raw.decaps(c.dk, c.c, k).ok() && k == c.k;
      auto ss = kem->decapsulate(ByteSpan(c.dk), c.c);
      t.check(direct && ss.ok() && equal(*ss, c.k), c.name + " decapsulation");
    }
  };
  return {name,
          "NIST ACVP-Server v1.1.0.40 ML-KEM keyGen and encapDecap (FIPS 203) subset, implicit rejection "
          "included (shared mlkem/)",
          check, timed_kem(scheme, "encaps + decaps")};
}

Primitive x25519() {
  auto check = [](const VectorDirs& d, Tally& t) {
    check_raw_dh(x25519_cases(d), t);
    kex::RawDh dh(KemScheme::kX25519);
    for (const auto& c : x25519_iteration_cases(d)) {
      Bytes k(32, 0), u(32, 0);
      k[0] = u[0] = 9;
      bool ok = true;
      for (std::size_t i = 0; i < c.iterations && ok; ++i) {
        auto r = dh.shared_secret(k, u);
        ok = r.ok();
        if (ok) {
          u = k;
          k.assign(r->span().begin(), r->span().end());
        }
      }
      t.check(ok && k == c.k, c.name);
    }
    // RFC 7748 §6.1: an all-zero output (here from the point u = 0) must be
    // refused.
    const auto any = x25519_cases(d);
    auto zero = any.empty() ? Result<SecretBytes, kex::KemError>(Err(kex::KemError::kBackend))
                            : dh.shared_secret(any.front().private_key, Bytes(32, 0));
    t.check(!any.empty() && !zero.ok() && zero.error() == kex::KemError::kBadCiphertext,
            "low-order point u = 0 refused (derived, RFC 7748 §6.1)");
    check_dhkem(d, KemScheme::kX25519, t);
  };
  return {"X25519",
          "RFC 7748 §5.2 (single and 1/1,000 iterations) and §6.1; RFC 9180 A.1.1 DHKEM (testdata/kex)", check,
          timed_kem(KemScheme::kX25519, "DHKEM encaps + decaps")};
}

Primitive ecdh(KemScheme scheme, const char* name, const char* rfc_sections) {
  auto check = [scheme](const VectorDirs& d, Tally& t) {
    const auto cases = ecdh_cases(d, scheme);
    check_raw_dh(cases, t);
    if (cases.empty()) throw VectorFileError("ecdh_rfc5903.json: no group for this curve");
    // The published peer point with its y changed is off the curve.
    Bytes off = cases.front().peer_public;
    off.back() ^= 0x01;
    kex::RawDh dh(scheme);
    auto bad = dh.shared_secret(cases.front().private_key, off);
    t.check(!bad.ok() && bad.error() == kex::KemError::kBadCiphertext, "point off the curve refused (derived)");
    check_dhkem(d, scheme, t);
  };
  return {name, rfc_sections, check, timed_kem(scheme, "DHKEM encaps + decaps")};
}

Primitive rsa_oaep() {
  auto check = [](const VectorDirs& d, Tally& t) {
    auto kem = kex::make_kem(KemScheme::kRsa2048);
    const auto cases = rsa_oaep_cases(d);
    for (const auto& c : cases) {
      auto ss = kem->decapsulate(ByteSpan(c.private_key), c.ciphertext);
      t.check(c.expect_secret ? (ss.ok() && equal(*ss, c.secret)) : !ss.ok(), c.name);
    }
    if (cases.empty()) throw VectorFileError("rsa_oaep_2048_sha256_wycheproof.json: no tests");
    // Our EME-OAEP encoder (encapsulate_with_seed) decoded by OpenSSL's OAEP.
    auto kp = kem->generate_from_seed(cases.front().private_key);
    Bytes seed(64);
    for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(0xA0 + i);
    auto e = kp.ok() ? kem->encapsulate_with_seed(kp->public_key, seed)
                     : Result<kex::Encapsulation, kex::KemError>(Err(kp.error()));
    auto ss = e.ok() ? kem->decapsulate(ByteSpan(cases.front().private_key), e->ciphertext)
                     : Result<SecretBytes, kex::KemError>(Err(e.error()));
    t.check(ss.ok() && std::ranges::equal(ss->span(), ByteSpan(seed).first(32)),
            "EME-OAEP encoder round trip on the Wycheproof key (derived)");
  };
  TimedOperation timed{"decaps (OAEP decrypt)", 0, []() -> std::function<bool()> {
                         std::shared_ptr<kex::Kem> kem = kex::make_kem(KemScheme::kRsa2048);
                         auto kp = kem->generate();
                         if (!kp) return {};
                         auto key = kem->load_private_key(kp->private_key.span());
                         auto e = kem->encapsulate(kp->public_key);
                         if (!key || !e) return {};
                         std::shared_ptr<kex::KemPrivateKey> sk = std::move(key).value();
                         auto ct = std::make_shared<const Bytes>(e->ciphertext);
                         return [kem, sk, ct] { return kem->decapsulate(*sk, *ct).ok(); };
                       }};
  return {"RSA-OAEP-2048",
          "Project Wycheproof rsa_oaep_2048_sha256_mgf1sha256_test.json subset (testdata/kex; decryption: "
          "encryption is randomised)",
          check, timed};
}

Primitive ntru(KemScheme scheme, const char* name) {
  auto check = [scheme](const VectorDirs& d, Tally& t) {
    const auto cases = ntru_cases(d, scheme);
    if (cases.empty()) throw VectorFileError("ntru_libntru_kat.json: no entry for this set");
    auto kem = kex::make_kem(scheme);
    for (const auto& c : cases) {
      auto kp = kem->generate_from_seed(c.keygen_seed);
      t.check(kp.ok() && kp->public_key == c.public_key && equal(kp->private_key, c.private_key), c.name + " keygen");
      auto e = kem->encapsulate_with_seed(c.public_key, c.encaps_seed);
      t.check(e.ok() && e->ciphertext == c.ciphertext && equal(e->shared_secret, c.shared), c.name + " encaps");
      auto ss = kem->decapsulate(ByteSpan(c.private_key), c.ciphertext);
      t.check(ss.ok() && equal(*ss, c.shared), c.name + " decaps");
      Bytes tampered = c.ciphertext;
      tampered[tampered.size() / 2] ^= 0x04;
      auto bad = kem->decapsulate(ByteSpan(c.private_key), tampered);
      t.check(!bad.ok() || !equal(*bad, c.shared), c.name + " tampered ciphertext refused (derived)");
    }
    // Round trip with fresh random keys.
    auto kp = kem->generate();
    auto e = kp.ok() ? kem->encapsulate(kp->public_key) : Result<kex::Encapsulation, kex::KemError>(Err(kp.error()));
    auto ss = e.ok() ? kem->decapsulate(kp->private_key.span(), e->ciphertext)
                     : Result<SecretBytes, kex::KemError>(Err(e.error()));
    t.check(ss.ok() && std::ranges::equal(ss->span(), e->shared_secret.span()), "random round trip");
  };
  return {name,
          "no published vectors: libntru 0.5 fixed-seed answers pinned in testdata/kex (regression), and a random "
          "round trip",
          check, timed_kem(scheme, "encaps + decaps")};
}

// The hybrid's combiner recomputed from published components: RFC 7748 §6.1
// X25519 keys (Alice the recipient, Bob's key as the ephemeral one) and the
// first ACVP ML-KEM-768 encapsulation case.
Primitive hybrid() {
  auto check = [](const VectorDirs& d, Tally& t) {
    const auto x = x25519_cases(d);
    const MlKemCases m = mlkem_cases(d, "ML-KEM-768");
    const auto alice = std::find_if(x.begin(), x.end(), [](const RawDhCase& c) { return c.name.ends_with(" Alice"); });
    if (alice == x.end() || m.encaps.empty()) throw VectorFileError("no RFC 7748 §6.1 or ACVP encapsulation case");
    const RawDhCase& a = *alice;  // private a, peer = Bob's public, shared K
    const MlKemEncapsCase& e = m.encaps.front();
    const auto bob = std::find_if(x.begin(), x.end(), [](const RawDhCase& c) { return c.name.ends_with(" Bob"); });
    if (bob == x.end()) throw VectorFileError("no RFC 7748 §6.1 Bob");
    const Bytes pk = cat(a.own_public, e.ek), sk = cat(a.private_key, e.dk);
    const Bytes ct = cat(bob->own_public, e.c);
    // HKDF-SHA256(salt = "", IKM = K || DH, info = label || ct_X || pk_X || c || ek, 32), docs/kex.md.
    constexpr std::string_view kLabel = "layersec hybrid x25519+ml-kem-768 v1";
    Bytes info(kLabel.begin(), kLabel.end());
    for (const Bytes* part : {&bob->own_public, &a.own_public, &e.c, &e.ek}) info.insert(info.end(), part->begin(), part->end());
    Bytes expected(32);
    if (!crypto::hkdf_sha256(ByteSpan{}, cat(e.k, a.shared), info, expected).ok()) throw VectorFileError("HKDF failed");
    auto kem = kex::make_kem(KemScheme::kHybridX25519MlKem768);
    auto enc = kem->encapsulate_with_seed(pk, cat(bob->private_key, e.m));
    t.check(enc.ok() && enc->ciphertext == ct, "ciphertext = RFC 7748 §6.1 Bob's key || ACVP " + e.name + " c");
    t.check(enc.ok() && equal(enc->shared_secret, expected), "encaps secret = HKDF over the published K and DH");
    auto ss = kem->decapsulate(ByteSpan(sk), ct);
    t.check(ss.ok() && equal(*ss, expected), "decaps secret = HKDF over the published K and DH");
  };
  return {"X25519+ML-KEM-768",
          "composition: RFC 7748 §6.1 X25519 keys and an ACVP ML-KEM-768 encapsulation case, combiner recomputed "
          "with HKDF-SHA256 (docs/kex.md)",
          check, timed_kem(KemScheme::kHybridX25519MlKem768, "encaps + decaps")};
}

}  // namespace

std::vector<Primitive> kem_primitives() {
  std::vector<Primitive> out;
  out.push_back(mlkem(KemScheme::kMlKem512, crypto::MlKemParameterSet::kMlKem512, "ML-KEM-512"));
  out.push_back(mlkem(KemScheme::kMlKem768, crypto::MlKemParameterSet::kMlKem768, "ML-KEM-768"));
  out.push_back(mlkem(KemScheme::kMlKem1024, crypto::MlKemParameterSet::kMlKem1024, "ML-KEM-1024"));
  out.push_back(x25519());
  out.push_back(ecdh(KemScheme::kEcdhP256, "ECDH-P256", "RFC 5903 §8.1; RFC 9180 A.3.1 DHKEM (testdata/kex)"));
  out.push_back(ecdh(KemScheme::kEcdhP521, "ECDH-P521", "RFC 5903 §8.3; RFC 9180 A.6.1 DHKEM (testdata/kex)"));
  out.push_back(rsa_oaep());
  out.push_back(ntru(KemScheme::kNtruEes613ep1, "NTRU-EES613EP1"));
  out.push_back(ntru(KemScheme::kNtruEes1171ep1, "NTRU-EES1171EP1"));
  out.push_back(hybrid());
  return out;
}

}  // namespace layersec::selftest
