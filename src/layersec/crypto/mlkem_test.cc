// ML-KEM against the NIST ACVP subset in ../shared/vectors/mlkem (keyGen,
// encapsulation, decapsulation incl. implicit rejection, all three sets),
// plus input-check and round-trip tests.
#include "layersec/crypto/mlkem.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <openssl/evp.h>

#include "support/vectors.h"

namespace layersec::crypto {
namespace {

using layersec::testing::hex;

struct SetName {
  const char* json;
  MlKemParameterSet set;
};
constexpr SetName kSets[] = {{"ML-KEM-512", MlKemParameterSet::kMlKem512},
                             {"ML-KEM-768", MlKemParameterSet::kMlKem768},
                             {"ML-KEM-1024", MlKemParameterSet::kMlKem1024}};

const nlohmann::json& acvp() {
  static const nlohmann::json j = layersec::testing::load_vector_json("mlkem/mlkem_acvp_subset.json");
  return j;
}

class MlKemAcvp : public ::testing::TestWithParam<SetName> {};

TEST_P(MlKemAcvp, KeyGen) {
  const auto& cases = acvp()["sets"][GetParam().json]["keyGen"];
  ASSERT_EQ(cases.size(), 5u);
  MlKem kem(GetParam().set);
  for (const auto& tc : cases) {
    SCOPED_TRACE("tcId " + std::to_string(tc["tcId"].get<int>()));
    std::vector<std::uint8_t> ek(kem.params().encaps_key_size), dk(kem.params().decaps_key_size);
    auto st = kem.keygen_internal(hex(tc["d"]), hex(tc["z"]), ek, dk);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(ek, hex(tc["ek"]));
    EXPECT_EQ(dk, hex(tc["dk"]));
  }
}

TEST_P(MlKemAcvp, Encapsulation) {
  const auto& cases = acvp()["sets"][GetParam().json]["encapsulation"];
  ASSERT_EQ(cases.size(), 5u);
  MlKem kem(GetParam().set);
  for (const auto& tc : cases) {
    SCOPED_TRACE("tcId " + std::to_string(tc["tcId"].get<int>()));
    std::vector<std::uint8_t> c(kem.params().ciphertext_size), k(32);
    auto st = kem.encaps_internal(hex(tc["ek"]), hex(tc["m"]), c, k);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(c, hex(tc["c"]));
    EXPECT_EQ(k, hex(tc["k"]));
    // The case's dk decapsulates its own ciphertext to the same key.
    std::vector<std::uint8_t> k2(32);
    ASSERT_TRUE(kem.decaps(hex(tc["dk"]), c, k2).ok());
    EXPECT_EQ(k2, hex(tc["k"]));
  }
}

TEST_P(MlKemAcvp, Decapsulation) {
  const auto& cases = acvp()["sets"][GetParam().json]["decapsulation"];
  ASSERT_EQ(cases.size(), 5u);
  MlKem kem(GetParam().set);
  for (const auto& tc : cases) {
    SCOPED_TRACE("tcId " + std::to_string(tc["tcId"].get<int>()) + " " + tc["reason"].get<std::string>());
    std::vector<std::uint8_t> k(32);
    ASSERT_TRUE(kem.decaps(hex(tc["dk"]), hex(tc["c"]), k).ok());
    EXPECT_EQ(k, hex(tc["k"]));
  }
}

// Every "modified ciphertext" case must yield the implicit-rejection key
// J(z || c) (computed here independently with OpenSSL's SHAKE256), and every
// set must have both kinds of case. The README counts 8 rejection cases; the
// file holds 9 (4 valid, 5 per-set mix), so the count is read from the file.
TEST(MlKemAcvpFile, ImplicitRejectionCasesUseJ) {
  int rejections = 0;
  for (const auto& s : kSets) {
    int valid = 0, modified = 0;
    for (const auto& tc : acvp()["sets"][s.json]["decapsulation"]) {
      const auto dk = hex(tc["dk"]);
      const auto c = hex(tc["c"]);
      std::uint8_t j[32];
      EVP_MD_CTX* ctx = EVP_MD_CTX_new();
      ASSERT_NE(ctx, nullptr);
      ASSERT_EQ(EVP_DigestInit_ex(ctx, EVP_shake256(), nullptr), 1);
      ASSERT_EQ(EVP_DigestUpdate(ctx, dk.data() + dk.size() - 32, 32), 1);
      ASSERT_EQ(EVP_DigestUpdate(ctx, c.data(), c.size()), 1);
      ASSERT_EQ(EVP_DigestFinalXOF(ctx, j, 32), 1);
      EVP_MD_CTX_free(ctx);
      const bool is_j = std::vector<std::uint8_t>(j, j + 32) == hex(tc["k"]);
      if (tc["reason"].get<std::string>() == "modified ciphertext") {
        ++modified;
        EXPECT_TRUE(is_j) << s.json << " tcId " << tc["tcId"];
      } else {
        ++valid;
        EXPECT_FALSE(is_j) << s.json << " tcId " << tc["tcId"];
      }
    }
    EXPECT_GT(valid, 0) << s.json;
    EXPECT_GT(modified, 0) << s.json;
    rejections += modified;
  }
  EXPECT_GE(rejections, 8);
}

INSTANTIATE_TEST_SUITE_P(AllSets, MlKemAcvp, ::testing::ValuesIn(kSets),
                         [](const auto& info) {
                           std::string n = info.param.json;
                           for (auto& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

class MlKemApi : public ::testing::TestWithParam<SetName> {};

TEST_P(MlKemApi, RandomRoundTripAndImplicitRejection) {
  MlKem kem(GetParam().set);
  const auto& p = kem.params();
  std::vector<std::uint8_t> ek(p.encaps_key_size), dk(p.decaps_key_size), c(p.ciphertext_size);
  std::vector<std::uint8_t> k1(32), k2(32), k3(32);
  ASSERT_TRUE(kem.keygen(ek, dk).ok());
  ASSERT_TRUE(kem.encaps(ek, c, k1).ok());
  ASSERT_TRUE(kem.decaps(dk, c, k2).ok());
  EXPECT_EQ(k1, k2);
  // A flipped ciphertext bit gives J(z || c'), which differs and is stable.
  c[7] ^= 0x01;
  ASSERT_TRUE(kem.decaps(dk, c, k2).ok());
  ASSERT_TRUE(kem.decaps(dk, c, k3).ok());
  EXPECT_NE(k1, k2);
  EXPECT_EQ(k2, k3);
}

TEST_P(MlKemApi, InputChecks) {
  MlKem kem(GetParam().set);
  const auto& p = kem.params();
  std::vector<std::uint8_t> ek(p.encaps_key_size), dk(p.decaps_key_size), c(p.ciphertext_size), k(32);
  const std::vector<std::uint8_t> seed(32, 0x42);
  ASSERT_TRUE(kem.keygen_internal(seed, seed, ek, dk).ok());

  // Seeds must be 32 bytes.
  auto st = kem.keygen_internal(ByteSpan(seed).first(31), seed, ek, dk);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadSeedLength);
  st = kem.encaps_internal(ek, ByteSpan(seed).first(16), c, k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadSeedLength);

  // Encapsulation key: length and modulus check (a 12-bit value >= q).
  st = kem.encaps_internal(ByteSpan(ek).first(ek.size() - 1), seed, c, k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadEncapsKeyLength);
  auto bad_ek = ek;
  bad_ek[0] = 0xFF;
  bad_ek[1] |= 0x0F;  // first coefficient = 0xFFF
  st = kem.encaps_internal(bad_ek, seed, c, k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kEncapsKeyNotReduced);
  bad_ek = ek;
  bad_ek[3 * 127 + 2] = 0xD0;  // second coefficient of the last pair = 0xD0x >= 3329
  st = kem.check_encaps_key(bad_ek);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kEncapsKeyNotReduced);

  ASSERT_TRUE(kem.encaps_internal(ek, seed, c, k).ok());
  // Ciphertext length.
  st = kem.decaps(dk, ByteSpan(c).first(c.size() - 1), k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadCiphertextLength);
  // Decapsulation key: length and hash check.
  st = kem.decaps(ByteSpan(dk).first(dk.size() - 1), c, k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadDecapsKeyLength);
  auto bad_dk = dk;
  bad_dk[384 * p.k + 5] ^= 0x01;  // inside the embedded ek
  st = kem.decaps(bad_dk, c, k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kDecapsKeyHashMismatch);
  // Wrong output size.
  std::vector<std::uint8_t> short_k(16);
  st = kem.decaps(dk, c, short_k);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadOutputLength);
}

TEST_P(MlKemApi, CheckedKeyDecapsMatches) {
  MlKem kem(GetParam().set);
  const auto& p = kem.params();
  std::vector<std::uint8_t> ek(p.encaps_key_size), dk(p.decaps_key_size), c(p.ciphertext_size);
  std::vector<std::uint8_t> k1(32), k2(32), k3(32);
  ASSERT_TRUE(kem.keygen(ek, dk).ok());
  ASSERT_TRUE(kem.encaps(ek, c, k1).ok());
  ASSERT_TRUE(kem.check_decaps_key(dk).ok());
  ASSERT_TRUE(kem.decaps_checked_key(dk, c, k2).ok());
  EXPECT_EQ(k1, k2);
  c[0] ^= 1;
  ASSERT_TRUE(kem.decaps(dk, c, k2).ok());
  ASSERT_TRUE(kem.decaps_checked_key(dk, c, k3).ok());
  EXPECT_EQ(k2, k3);
  auto st = kem.decaps_checked_key(dk, ByteSpan(c).first(10), k3);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), MlKemError::kBadCiphertextLength);
}

TEST_P(MlKemApi, Sizes) {
  const auto& p = mlkem_params(GetParam().set);
  // FIPS 203 Table 3.
  switch (GetParam().set) {
    case MlKemParameterSet::kMlKem512:
      EXPECT_EQ(p.encaps_key_size, 800u); EXPECT_EQ(p.decaps_key_size, 1632u); EXPECT_EQ(p.ciphertext_size, 768u);
      break;
    case MlKemParameterSet::kMlKem768:
      EXPECT_EQ(p.encaps_key_size, 1184u); EXPECT_EQ(p.decaps_key_size, 2400u); EXPECT_EQ(p.ciphertext_size, 1088u);
      break;
    case MlKemParameterSet::kMlKem1024:
      EXPECT_EQ(p.encaps_key_size, 1568u); EXPECT_EQ(p.decaps_key_size, 3168u); EXPECT_EQ(p.ciphertext_size, 1568u);
      break;
  }
  EXPECT_EQ(to_string(GetParam().set), GetParam().json);
}

INSTANTIATE_TEST_SUITE_P(AllSets, MlKemApi, ::testing::ValuesIn(kSets),
                         [](const auto& info) {
                           std::string n = info.param.json;
                           for (auto& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace layersec::crypto
