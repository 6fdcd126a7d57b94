// The kex KEM interface: RFC 9180 DHKEM known answers, the ACVP ML-KEM cases
// through the interface, round trips for every scheme (RSA-15360 excepted:
// its key generation takes minutes), typed errors for bad inputs, and
// cross-checks of the deterministic RSA-OAEP encoder against OpenSSL's OAEP
// decoding.
#include "layersec/kex/kem.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include "support/vectors.h"

namespace layersec::kex {
namespace {

using layersec::testing::hex;
using Bytes = std::vector<std::uint8_t>;

Bytes to_vec(const SecretBytes& s) { return Bytes(s.span().begin(), s.span().end()); }

TEST(KemNames, RoundTrip) {
  for (KemScheme s : kAllKemSchemes) {
    auto parsed = parse_scheme(scheme_name(s));
    ASSERT_TRUE(parsed.has_value()) << scheme_name(s);
    EXPECT_EQ(*parsed, s);
    EXPECT_GT(security_bits(s), 0);
  }
  EXPECT_FALSE(parse_scheme("rsa-1024").has_value());
  EXPECT_EQ(scheme_name(KemScheme::kNtruEes613ep1), "ntru-ees613ep1");
  EXPECT_EQ(scheme_name(KemScheme::kHybridX25519MlKem768), "x25519+ml-kem-768");
}

TEST(DhKem, Rfc9180KnownAnswers) {
  const auto doc = layersec::testing::load_testdata_json("kex/dhkem_rfc9180.json");
  ASSERT_EQ(doc["vectors"].size(), 3u);
  for (const auto& v : doc["vectors"]) {
    SCOPED_TRACE(v["source"].get<std::string>());
    auto scheme = parse_scheme(v["scheme"].get<std::string>());
    ASSERT_TRUE(scheme.has_value());
    auto kem = make_kem(*scheme);
    // The recipient key pair from its private key.
    auto kp = kem->generate_from_seed(hex(v["skRm"]));
    ASSERT_TRUE(kp.ok());
    EXPECT_EQ(kp->public_key, hex(v["pkRm"]));
    // Encap with the vector's ephemeral key.
    auto enc = kem->encapsulate_with_seed(hex(v["pkRm"]), hex(v["skEm"]));
    ASSERT_TRUE(enc.ok());
    EXPECT_EQ(enc->ciphertext, hex(v["pkEm"]));
    EXPECT_EQ(to_vec(enc->shared_secret), hex(v["shared_secret"]));
    // Decap.
    auto ss = kem->decapsulate(ByteSpan(hex(v["skRm"])), hex(v["pkEm"]));
    ASSERT_TRUE(ss.ok());
    EXPECT_EQ(to_vec(*ss), hex(v["shared_secret"]));
    // The private key may also carry its public key, which must match.
    Bytes sk_pk = hex(v["skRm"]);
    const Bytes pk = hex(v["pkRm"]);
    sk_pk.insert(sk_pk.end(), pk.begin(), pk.end());
    EXPECT_TRUE(kem->load_private_key(sk_pk).ok());
    sk_pk.back() ^= 1;
    auto bad = kem->load_private_key(sk_pk);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), KemError::kBadPrivateKey);
  }
}

TEST(DhKem, RejectsBadPoints) {
  auto p256 = make_kem(KemScheme::kEcdhP256);
  auto kp = p256->generate();
  ASSERT_TRUE(kp.ok());
  Bytes off_curve = kp->public_key;
  off_curve[64] ^= 0x01;  // y changed: no longer on the curve
  auto e = p256->encapsulate(off_curve);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), KemError::kBadPublicKey);
  Bytes compressed = kp->public_key;
  compressed[0] = 0x02;
  e = p256->encapsulate(compressed);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), KemError::kBadPublicKey);
  // A ciphertext that is not a point.
  auto ss = p256->decapsulate(kp->private_key.span(), off_curve);
  ASSERT_FALSE(ss.ok());
  EXPECT_EQ(ss.error(), KemError::kBadCiphertext);
  // Scalar out of range (zero).
  auto z = p256->generate_from_seed(Bytes(32, 0));
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.error(), KemError::kBadSeed);
  // X25519: the all-zero point is of low order; the DH output is rejected.
  auto x = make_kem(KemScheme::kX25519);
  auto xkp = x->generate();
  ASSERT_TRUE(xkp.ok());
  auto xs = x->decapsulate(xkp->private_key.span(), Bytes(32, 0));
  ASSERT_FALSE(xs.ok());
  EXPECT_EQ(xs.error(), KemError::kBadCiphertext);
}

TEST(MlKemInterface, AcvpCasesThroughKem) {
  const auto doc = layersec::testing::load_vector_json("mlkem/mlkem_acvp_subset.json");
  const std::map<std::string, KemScheme> sets = {{"ML-KEM-512", KemScheme::kMlKem512},
                                                 {"ML-KEM-768", KemScheme::kMlKem768},
                                                 {"ML-KEM-1024", KemScheme::kMlKem1024}};
  for (const auto& [name, scheme] : sets) {
    auto kem = make_kem(scheme);
    for (const auto& tc : doc["sets"][name]["keyGen"]) {
      Bytes seed = hex(tc["d"]);
      const Bytes z = hex(tc["z"]);
      seed.insert(seed.end(), z.begin(), z.end());
      auto kp = kem->generate_from_seed(seed);
      ASSERT_TRUE(kp.ok());
      EXPECT_EQ(kp->public_key, hex(tc["ek"]));
      EXPECT_EQ(to_vec(kp->private_key), hex(tc["dk"]));
    }
    for (const auto& tc : doc["sets"][name]["encapsulation"]) {
      auto e = kem->encapsulate_with_seed(hex(tc["ek"]), hex(tc["m"]));
      ASSERT_TRUE(e.ok());
      EXPECT_EQ(e->ciphertext, hex(tc["c"]));
      EXPECT_EQ(to_vec(e->shared_secret), hex(tc["k"]));
    }
    for (const auto& tc : doc["sets"][name]["decapsulation"]) {
      auto ss = kem->decapsulate(ByteSpan(hex(tc["dk"])), hex(tc["c"]));
      ASSERT_TRUE(ss.ok());
      EXPECT_EQ(to_vec(*ss), hex(tc["k"]));
    }
  }
}

// Key pairs are generated once per scheme (RSA-3072 generation is slow under
// sanitizers).
const KemKeyPair& cached_pair(KemScheme s) {
  static std::map<KemScheme, KemKeyPair> pairs;
  auto it = pairs.find(s);
  if (it == pairs.end()) {
    auto kp = make_kem(s)->generate();
    if (!kp.ok()) std::abort();
    it = pairs.emplace(s, std::move(kp).value()).first;
  }
  return it->second;
}

class EveryScheme : public ::testing::TestWithParam<KemScheme> {};

TEST_P(EveryScheme, RoundTripAndTypedErrors) {
  auto kem = make_kem(GetParam());
  const KemKeyPair& kp = cached_pair(GetParam());
  if (kem->public_key_size() != 0) {
    EXPECT_EQ(kp.public_key.size(), kem->public_key_size());
  }
  auto e = kem->encapsulate(kp.public_key);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->ciphertext.size(), kem->ciphertext_size());
  EXPECT_EQ(e->shared_secret.size(), kem->shared_secret_size());
  auto key = kem->load_private_key(kp.private_key.span());
  ASSERT_TRUE(key.ok());
  auto ss = kem->decapsulate(**key, e->ciphertext);
  ASSERT_TRUE(ss.ok());
  EXPECT_EQ(to_vec(*ss), to_vec(e->shared_secret));
  // Two encapsulations give different secrets and ciphertexts.
  auto e2 = kem->encapsulate(kp.public_key);
  ASSERT_TRUE(e2.ok());
  EXPECT_NE(e2->ciphertext, e->ciphertext);
  EXPECT_NE(to_vec(e2->shared_secret), to_vec(e->shared_secret));

  // Ciphertext of the wrong length.
  Bytes longer = e->ciphertext;
  longer.push_back(0);
  auto bad = kem->decapsulate(**key, longer);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), KemError::kBadCiphertextLength);
  bad = kem->decapsulate(**key, ByteSpan(e->ciphertext).first(e->ciphertext.size() - 1));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), KemError::kBadCiphertextLength);
  // A truncated public key.
  auto bad_e = kem->encapsulate(ByteSpan(kp.public_key).first(kp.public_key.size() - 1));
  ASSERT_FALSE(bad_e.ok());
  EXPECT_EQ(bad_e.error(), KemError::kBadPublicKey);
  // A truncated private key.
  auto bad_k = kem->load_private_key(kp.private_key.span().first(kp.private_key.size() - 1));
  ASSERT_FALSE(bad_k.ok());
  // A private key of another scheme.
  const KemScheme other = GetParam() == KemScheme::kX25519 ? KemScheme::kMlKem512 : KemScheme::kX25519;
  auto other_key = make_kem(other)->load_private_key(cached_pair(other).private_key.span());
  ASSERT_TRUE(other_key.ok());
  bad = kem->decapsulate(**other_key, e->ciphertext);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), KemError::kWrongScheme);

  // A modified ciphertext never yields the encapsulated secret: ML-KEM and
  // the hybrid return the implicit-rejection key, the rest an error (or, for
  // DH-KEMs, the secret of a different point).
  Bytes flipped = e->ciphertext;
  flipped[flipped.size() / 2] ^= 0x04;
  auto fs = kem->decapsulate(**key, flipped);
  if (fs.ok()) {
    EXPECT_NE(to_vec(*fs), to_vec(e->shared_secret));
  }
}

INSTANTIATE_TEST_SUITE_P(Kex, EveryScheme,
                         ::testing::Values(KemScheme::kMlKem512, KemScheme::kMlKem768, KemScheme::kMlKem1024,
                                           KemScheme::kX25519, KemScheme::kEcdhP256, KemScheme::kEcdhP521,
                                           KemScheme::kRsa2048, KemScheme::kRsa3072, KemScheme::kNtruEes613ep1,
                                           KemScheme::kNtruEes1171ep1, KemScheme::kHybridX25519MlKem768),
                         [](const auto& info) {
                           std::string n(scheme_name(info.param));
                           for (auto& c : n)
                             if (c == '-' || c == '+') c = '_';
                           return n;
                         });

TEST(RsaKem, DeterministicOaepDecodesWithOpenSsl) {
  auto kem = make_kem(KemScheme::kRsa2048);
  const KemKeyPair& kp = cached_pair(KemScheme::kRsa2048);
  Bytes seed(64);
  for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(i * 7 + 1);
  auto e = kem->encapsulate_with_seed(kp.public_key, seed);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(to_vec(e->shared_secret), Bytes(seed.begin(), seed.begin() + 32));
  // Deterministic: the same seed gives the same ciphertext.
  auto e2 = kem->encapsulate_with_seed(kp.public_key, seed);
  ASSERT_TRUE(e2.ok());
  EXPECT_EQ(e2->ciphertext, e->ciphertext);
  // OpenSSL's OAEP decoding recovers the secret from our encoding.
  auto ss = kem->decapsulate(kp.private_key.span(), e->ciphertext);
  ASSERT_TRUE(ss.ok());
  EXPECT_EQ(to_vec(*ss), to_vec(e->shared_secret));
  // A tampered ciphertext fails OAEP decoding: a typed error, no key.
  Bytes bad = e->ciphertext;
  bad[10] ^= 0x80;
  auto r = kem->decapsulate(kp.private_key.span(), bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KemError::kBadCiphertext);
  // Key "seed" = a DER private key: the same key pair comes back.
  auto again = kem->generate_from_seed(kp.private_key.span());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->public_key, kp.public_key);
  // Seeds of the wrong size.
  auto s = kem->encapsulate_with_seed(kp.public_key, ByteSpan(seed).first(63));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), KemError::kBadSeed);
  // A 2048-bit key is refused by the 3072-bit scheme.
  auto wrong = make_kem(KemScheme::kRsa3072)->load_private_key(kp.private_key.span());
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error(), KemError::kBadPrivateKey);
}

TEST(RsaKem, PemLoaderRefusesLooseModes) {
  auto kem = make_kem(KemScheme::kRsa2048);
  const KemKeyPair& kp = cached_pair(KemScheme::kRsa2048);
  // Write the DER key as PEM via base64 lines.
  const auto dir = std::filesystem::temp_directory_path() / ("layersec_kex_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "rsa.pem").string();
  {
    const auto der = kp.private_key.span();
    const unsigned char* p = der.data();
    EVP_PKEY* pkey = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()));
    ASSERT_NE(pkey, nullptr);
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(PEM_write_PrivateKey(f, pkey, nullptr, nullptr, 0, nullptr, nullptr), 1);  // PKCS#8
    std::fclose(f);
    EVP_PKEY_free(pkey);
  }
  ::chmod(path.c_str(), 0644);
  auto loose = load_rsa_private_key_pem(path, 2048);
  ASSERT_FALSE(loose.ok());
  EXPECT_EQ(loose.error(), KeyFileError::kLooseMode);
  ::chmod(path.c_str(), 0600);
  auto wrong_size = load_rsa_private_key_pem(path, 3072);
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_EQ(wrong_size.error(), KeyFileError::kWrongSize);
  auto ok = load_rsa_private_key_pem(path, 2048);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(kem->load_private_key(ok->span()).ok());
  std::filesystem::remove_all(dir);
}

TEST(NtruKem, DeterministicAndNamed) {
  for (KemScheme s : {KemScheme::kNtruEes613ep1, KemScheme::kNtruEes1171ep1}) {
    auto kem = make_kem(s);
    const Bytes seed = {'l', 'a', 'y', 'e', 'r', 's', 'e', 'c'};
    auto a = kem->generate_from_seed(seed);
    auto b = kem->generate_from_seed(seed);
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a->public_key, b->public_key);
    EXPECT_EQ(to_vec(a->private_key), to_vec(b->private_key));
    Bytes eseed(40, 0x5A);
    auto e1 = kem->encapsulate_with_seed(a->public_key, eseed);
    auto e2 = kem->encapsulate_with_seed(a->public_key, eseed);
    ASSERT_TRUE(e1.ok());
    ASSERT_TRUE(e2.ok());
    EXPECT_EQ(e1->ciphertext, e2->ciphertext);
    EXPECT_EQ(to_vec(e1->shared_secret), Bytes(32, 0x5A));
    auto ss = kem->decapsulate(a->private_key.span(), e1->ciphertext);
    ASSERT_TRUE(ss.ok());
    EXPECT_EQ(to_vec(*ss), Bytes(32, 0x5A));
    Bytes bad = e1->ciphertext;
    bad[3] ^= 0x10;
    auto r = kem->decapsulate(a->private_key.span(), bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), KemError::kBadCiphertext);
  }
  EXPECT_NE(scheme_name(KemScheme::kNtruEes613ep1).find("ees613ep1"), std::string_view::npos);
}

TEST(HybridKem, DeterministicAndBindsBothParts) {
  auto kem = make_kem(KemScheme::kHybridX25519MlKem768);
  Bytes seed(96);
  for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(i + 1);
  auto kp = kem->generate_from_seed(seed);
  ASSERT_TRUE(kp.ok());
  EXPECT_EQ(kp->public_key.size(), 32u + 1184u);
  Bytes eseed(64, 0x11);
  auto e = kem->encapsulate_with_seed(kp->public_key, eseed);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->ciphertext.size(), 32u + 1088u);
  auto key = kem->load_private_key(kp->private_key.span());
  ASSERT_TRUE(key.ok());
  auto ss = kem->decapsulate(**key, e->ciphertext);
  ASSERT_TRUE(ss.ok());
  EXPECT_EQ(to_vec(*ss), to_vec(e->shared_secret));
  // The hybrid secret differs from the ML-KEM secret alone (HKDF over both).
  auto m = make_kem(KemScheme::kMlKem768)->encapsulate_with_seed(ByteSpan(kp->public_key).subspan(32),
                                                                    ByteSpan(eseed).subspan(32));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(Bytes(e->ciphertext.begin() + 32, e->ciphertext.end()), m->ciphertext);
  EXPECT_NE(to_vec(e->shared_secret), to_vec(m->shared_secret));
  // Changing the X25519 half changes the secret.
  Bytes other = e->ciphertext;
  other[0] ^= 0x01;
  auto ss2 = kem->decapsulate(**key, other);
  if (ss2.ok()) {
    EXPECT_NE(to_vec(*ss2), to_vec(e->shared_secret));
  }
}

}  // namespace
}  // namespace layersec::kex
