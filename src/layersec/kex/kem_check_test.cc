// check_public_key names the check a refused public key failed: length,
// the FIPS 203 §7.2 modulus check, or the X25519 low-order check; and each
// key it finds bad is indeed refused by encapsulation (kBadPublicKey).
#include "layersec/kex/kem_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace layersec::kex {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes public_key(KemScheme s) {
  auto kp = make_kem(s)->generate();
  EXPECT_TRUE(kp.ok());
  return kp.ok() ? kp->public_key : Bytes();
}

// Sets the first 12-bit coefficient of an ML-KEM ek at `offset` to 4095 >= q.
void unreduce(Bytes& pk, std::size_t offset) {
  pk[offset] = 0xff;
  pk[offset + 1] |= 0x0f;
}

void expect_refused(KemScheme s, const Bytes& pk) {
  auto e = make_kem(s)->encapsulate(pk);
  ASSERT_FALSE(e.ok()) << scheme_name(s);
  EXPECT_EQ(e.error(), KemError::kBadPublicKey) << scheme_name(s);
}

TEST(KemCheck, ValidKeysPass) {
  for (KemScheme s : {KemScheme::kMlKem512, KemScheme::kMlKem768, KemScheme::kMlKem1024, KemScheme::kX25519,
                      KemScheme::kEcdhP256, KemScheme::kHybridX25519MlKem768}) {
    const auto f = check_public_key(s, public_key(s));
    EXPECT_EQ(f.check, PublicKeyCheck::kPassed) << scheme_name(s);
  }
}

TEST(KemCheck, LengthNamesGotAndWant) {
  const Bytes pk(4, 0);
  const auto f = check_public_key(KemScheme::kMlKem768, pk);
  EXPECT_EQ(f.check, PublicKeyCheck::kLength);
  EXPECT_EQ(f.size, 4u);
  EXPECT_EQ(f.expected_size, 1184u);
  EXPECT_EQ(describe(KemScheme::kMlKem768, f), "has 4 bytes; ml-kem-768 public keys have 1184 (length check)");
  expect_refused(KemScheme::kMlKem768, pk);
  // One byte too many for the hybrid.
  Bytes hy = public_key(KemScheme::kHybridX25519MlKem768);
  hy.push_back(0);
  EXPECT_EQ(check_public_key(KemScheme::kHybridX25519MlKem768, hy).check, PublicKeyCheck::kLength);
}

TEST(KemCheck, RsaHasNoFixedLength) {
  // An RSA DER key has no fixed size: garbage is not a length failure.
  const auto f = check_public_key(KemScheme::kRsa2048, Bytes(7, 0x30));
  EXPECT_EQ(f.check, PublicKeyCheck::kPassed);
  EXPECT_NE(describe(KemScheme::kRsa2048, f).find("is not a valid rsa-2048 public key"), std::string::npos);
  expect_refused(KemScheme::kRsa2048, Bytes(7, 0x30));
}

TEST(KemCheck, ModulusCheckPerParameterSet) {
  for (KemScheme s : {KemScheme::kMlKem512, KemScheme::kMlKem768, KemScheme::kMlKem1024}) {
    Bytes pk = public_key(s);
    unreduce(pk, 0);
    const auto f = check_public_key(s, pk);
    EXPECT_EQ(f.check, PublicKeyCheck::kModulus) << scheme_name(s);
    EXPECT_FALSE(f.hybrid_part);
    EXPECT_NE(describe(s, f).find("FIPS 203 §7.2 encapsulation key modulus check"), std::string::npos);
    expect_refused(s, pk);
  }
}

TEST(KemCheck, HybridParts) {
  const KemScheme s = KemScheme::kHybridX25519MlKem768;
  Bytes pk = public_key(s);
  Bytes unreduced = pk;
  unreduce(unreduced, 32);
  auto f = check_public_key(s, unreduced);
  EXPECT_EQ(f.check, PublicKeyCheck::kModulus);
  EXPECT_TRUE(f.hybrid_part);
  EXPECT_NE(describe(s, f).find("in its ML-KEM-768 part"), std::string::npos);
  expect_refused(s, unreduced);

  Bytes low = pk;
  std::fill(low.begin(), low.begin() + 32, 0);  // u = 0 has order 1
  f = check_public_key(s, low);
  EXPECT_EQ(f.check, PublicKeyCheck::kLowOrder);
  EXPECT_NE(describe(s, f).find("X25519 part"), std::string::npos);
  expect_refused(s, low);
}

TEST(KemCheck, X25519LowOrder) {
  Bytes one(32, 0);
  one[0] = 1;  // u = 1 has order 4
  const auto f = check_public_key(KemScheme::kX25519, one);
  EXPECT_EQ(f.check, PublicKeyCheck::kLowOrder);
  EXPECT_NE(describe(KemScheme::kX25519, f).find("low-order point"), std::string::npos);
  expect_refused(KemScheme::kX25519, one);
}

}  // namespace
}  // namespace layersec::kex
