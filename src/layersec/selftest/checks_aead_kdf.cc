// Known-answer checks of AES-GCM-128/256, AES-GMAC, HKDF-SHA256 and AES key
// wrap (known_answers.h).
#include <memory>

#include "layersec/base/bytes.h"
#include "layersec/crypto/aead.h"
#include "layersec/crypto/kdf.h"
#include "layersec/selftest/aead_vectors.h"
#include "layersec/selftest/kdf_vectors.h"
#include "layersec/selftest/known_answers.h"

namespace layersec::selftest {

namespace {

// Opens (a negative case must not), seals back to the same ciphertext and
// tag, and refuses a flipped tag bit.
bool gcm_case_ok(const GcmCase& c) {
  auto g = crypto::AesGcm::create(c.key);
  if (!g.ok()) return false;
  auto& gcm = g.value();
  Bytes buf = c.ciphertext;
  const bool opened = gcm.open(c.iv, c.aad, buf, c.tag).ok();
  if (!c.positive) return !opened;
  if (!opened || buf != c.plaintext) return false;
  Bytes tag(crypto::kGcmTagSize);
  if (!gcm.seal(c.iv, c.aad, buf, tag).ok()) return false;
  if (buf != c.ciphertext || tag != c.tag) return false;
  Bytes bad = c.tag;
  bad[0] ^= 0x01;
  return !gcm.open(c.iv, c.aad, buf, bad).ok();
}

// GMAC of the AAD: computes the tag, verifies it and refuses a flipped bit.
bool gmac_case_ok(const GcmCase& c) {
  auto g = crypto::AesGmac::create(c.key);
  if (!g.ok()) return false;
  const ByteSpan parts[1] = {c.aad};
  Bytes tag(crypto::kGcmTagSize);
  if (!g.value().compute(c.iv, parts, tag).ok()) return false;
  const bool verified = g.value().verify(c.iv, parts, c.tag);
  if (!c.positive) return !verified;
  Bytes bad = c.tag;
  bad[15] ^= 0x80;
  return tag == c.tag && verified && !g.value().verify(c.iv, parts, bad);
}

Primitive gcm(std::size_t key_len, const char* name) {
  auto check = [key_len](const VectorDirs& d, Tally& t) {
    for (const auto& c : gcm_spec_cases(d))
      if (c.key.size() == key_len) t.check(gcm_case_ok(c), c.name);
    for (const auto& c : macsec_gcm_cases(d))
      if (!c.integrity_only && c.key.size() == key_len) t.check(gcm_case_ok(c), "802.1AE " + c.name);
  };
  TimedOperation timed{"seal 1500 B + 28 B AAD", 1500, [key_len]() -> std::function<bool()> {
                         auto g = crypto::AesGcm::create(Bytes(key_len, 0x5A));
                         if (!g.ok()) return {};
                         auto gcm = std::make_shared<crypto::AesGcm>(std::move(g).value());
                         auto buf = std::make_shared<Bytes>(bench_message());
                         auto iv = std::make_shared<Bytes>(12, 0);
                         auto tag = std::make_shared<Bytes>(16);
                         auto aad = std::make_shared<const Bytes>(28, 0x11);
                         auto pn = std::make_shared<std::uint32_t>(0);
                         return [=] {
                           store_be32(iv->data() + 8, ++*pn);  // a fresh IV per message, as MACsec does
                           return gcm->seal(*iv, *aad, *buf, *tag).ok();
                         };
                       }};
  return {name,
          "GCM specification test cases (McGrew-Viega, NIST SP 800-38D; testdata/crypto) and IEEE 802.1AE-2018 "
          "Annex C, supplementary and negative frames (shared macsec/)",
          check, timed};
}

Primitive gmac() {
  auto check = [](const VectorDirs& d, Tally& t) {
    for (const auto& c : gcm_spec_cases(d))
      if (c.plaintext.empty()) t.check(gmac_case_ok(c), c.name);
    for (const auto& c : macsec_gcm_cases(d))
      if (c.integrity_only) t.check(gmac_case_ok(c), "802.1AE " + c.name);
  };
  TimedOperation timed{"GMAC-128 over 1500 B", 1500, []() -> std::function<bool()> {
                         auto g = crypto::AesGmac::create(Bytes(16, 0x5A));
                         if (!g.ok()) return {};
                         auto gmac = std::make_shared<crypto::AesGmac>(std::move(g).value());
                         auto msg = std::make_shared<const Bytes>(bench_message());
                         auto iv = std::make_shared<Bytes>(12, 0);
                         auto tag = std::make_shared<Bytes>(16);
                         auto pn = std::make_shared<std::uint32_t>(0);
                         return [=] {
                           store_be32(iv->data() + 8, ++*pn);
                           return gmac->compute(*iv, *msg, *tag).ok();
                         };
                       }};
  return {"AES-GMAC",
          "GCM specification cases with empty plaintext (testdata/crypto) and IEEE 802.1AE-2018 Annex C "
          "integrity-only frames (shared macsec/)",
          check, timed};
}

Primitive hkdf() {
  auto check = [](const VectorDirs& d, Tally& t) {
    for (const auto& c : hkdf_sha256_cases(d)) {
      Bytes out(c.okm.size());
      t.check(crypto::hkdf_sha256(c.salt, c.ikm, c.info, out).ok() && out == c.okm, c.name);
    }
  };
  TimedOperation timed{"derive 32 B", 32, []() -> std::function<bool()> {
                         auto ikm = std::make_shared<const Bytes>(32, 0x5A);
                         auto info = std::make_shared<const Bytes>(16, 0x01);
                         auto out = std::make_shared<Bytes>(32);
                         return [=] { return crypto::hkdf_sha256(ByteSpan{}, *ikm, *info, *out).ok(); };
                       }};
  return {"HKDF-SHA256", "RFC 5869 Appendix A.1-A.3 (testdata/crypto)", check, timed};
}

Primitive keywrap() {
  auto check = [](const VectorDirs& d, Tally& t) {
    for (const auto& c : keywrap_cases(d)) {
      Bytes w(c.key_data.size() + 8), u(c.key_data.size());
      bool ok = crypto::aes_key_wrap(c.kek, c.key_data, w).ok() && w == c.wrapped &&
                crypto::aes_key_unwrap(c.kek, c.wrapped, u).ok() && u == c.key_data;
      Bytes bad = c.wrapped;
      bad[bad.size() / 2] ^= 0x01;
      ok = ok && !crypto::aes_key_unwrap(c.kek, bad, u).ok();
      t.check(ok, c.name);
    }
  };
  TimedOperation timed{"wrap a 16 B key", 16, []() -> std::function<bool()> {
                         auto kek = std::make_shared<const Bytes>(16, 0x5A);
                         auto key = std::make_shared<const Bytes>(16, 0x33);
                         auto w = std::make_shared<Bytes>(24);
                         return [=] { return crypto::aes_key_wrap(*kek, *key, *w).ok(); };
                       }};
  return {"AES key wrap",
          "RFC 3394 §4.1-4.6 (testdata/crypto); IEEE 802.1X-2020 copies and SAKs wrapped in wpa_supplicant MKPDUs "
          "(shared mka/)",
          check, timed};
}

}  // namespace

std::vector<Primitive> aead_kdf_primitives() {
  std::vector<Primitive> out;
  out.push_back(gcm(16, "AES-GCM-128"));
  out.push_back(gcm(32, "AES-GCM-256"));
  out.push_back(gmac());
  out.push_back(hkdf());
  out.push_back(keywrap());
  return out;
}

}  // namespace layersec::selftest
