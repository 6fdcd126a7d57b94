// CbcCmac against OpenSSL's own EVP_MAC CMAC (an independent implementation
// of the same mode): one long-lived context of each, fed the same messages
// through every path of the interface in a random order, so the chaining
// value CbcCmac carries from one message to the next is exercised across
// one-shot, incremental, abandoned and truncated computations. The published
// vectors run in mac_test.cc (CmacAes.PublishedVectors).
#include "layersec/crypto/cmac.h"

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace layersec::crypto {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes random_bytes(std::mt19937& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

Bytes openssl_tag(Mac& ref, const Bytes& msg) {
  Bytes t(16);
  EXPECT_TRUE(ref.compute(ByteSpan(msg), t).ok());
  return t;
}

class CbcCmacCrossCheck : public ::testing::TestWithParam<MacAlgorithm> {};

TEST_P(CbcCmacCrossCheck, AgreesWithOpenSslCmacOnEveryPathOfOneContext) {
  const MacAlgorithm alg = GetParam();
  std::mt19937 rng(0x5ec0c + static_cast<unsigned>(alg));
  for (int key_round = 0; key_round < 3; ++key_round) {
    const Bytes key = random_bytes(rng, mac_key_size(alg));
    auto ours = CbcCmac::create(alg, key);
    auto ref = make_openssl_cmac(alg, key);
    ASSERT_TRUE(ours.ok());
    ASSERT_TRUE(ref.ok());
    Mac& m = **ours;
    for (int i = 0; i < 400; ++i) {
      // Lengths around the block edges and the one-shot bound, and beyond.
      const std::size_t len = i % 4 == 0 ? rng() % 40 : i % 4 == 1 ? 240 + rng() % 40 : rng() % 700;
      const Bytes msg = random_bytes(rng, len);
      const Bytes want = openssl_tag(**ref, msg);
      Bytes got(16);
      switch (rng() % 5) {
        case 0:  // one-shot
          ASSERT_TRUE(m.compute(ByteSpan(msg), got).ok());
          break;
        case 1: {  // incremental, random split points (empty updates included)
          m.begin();
          std::size_t at = 0;
          while (at < len) {
            const std::size_t step = std::min<std::size_t>(len - at, rng() % 37);
            m.update(ByteSpan(msg.data() + at, step));
            at += step;
          }
          ASSERT_TRUE(m.finish(got).ok());
          break;
        }
        case 2: {  // a message abandoned half-way, then this one
          const Bytes other = random_bytes(rng, rng() % 90);
          m.begin();
          m.update(ByteSpan(other));
          ASSERT_TRUE(m.compute(ByteSpan(msg), got).ok());
          break;
        }
        case 3: {  // truncated output
          const std::size_t n = 1 + rng() % 15;
          Bytes short_tag(n);
          ASSERT_TRUE(m.compute(ByteSpan(msg), short_tag).ok());
          ASSERT_EQ(short_tag, Bytes(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(n)));
          got = want;  // compared above
          break;
        }
        default: {  // parts, and the bit-truncated verify
          const std::size_t cut = len == 0 ? 0 : rng() % (len + 1);
          const ByteSpan parts[2] = {ByteSpan(msg.data(), cut), ByteSpan(msg.data() + cut, len - cut)};
          ASSERT_TRUE(m.compute(parts, got).ok());
          EXPECT_TRUE(m.verify_bits(parts, want, 28));
          Bytes wrong = want;
          wrong[2] ^= 0x10;
          EXPECT_FALSE(m.verify_bits(parts, wrong, 28));
          break;
        }
      }
      ASSERT_EQ(got, want) << "algorithm " << to_string(alg) << ", message " << i << ", length " << len;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKeySizes, CbcCmacCrossCheck,
                         ::testing::Values(MacAlgorithm::kCmacAes128, MacAlgorithm::kCmacAes192,
                                           MacAlgorithm::kCmacAes256),
                         [](const auto& info) {
                           std::string n(to_string(info.param));
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(CbcCmac, ReadyForUpdateWithoutBeginAndAfterFinish) {
  const Bytes key(16, 0x2b);
  auto ours = CbcCmac::create(MacAlgorithm::kCmacAes128, key);
  auto ref = make_openssl_cmac(MacAlgorithm::kCmacAes128, key);
  ASSERT_TRUE(ours.ok());
  ASSERT_TRUE(ref.ok());
  const Bytes msg = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
  for (int i = 0; i < 2; ++i) {  // fresh, then right after a finish()
    (*ours)->update(ByteSpan(msg));
    Bytes got(16);
    ASSERT_TRUE((*ours)->finish(got).ok());
    EXPECT_EQ(got, openssl_tag(**ref, msg));
  }
}

TEST(CbcCmac, RefusesWrongKeyLengthsAndEmptyOutput) {
  EXPECT_EQ(CbcCmac::create(MacAlgorithm::kCmacAes256, Bytes(16)).error(), CryptoError::kBadKeyLength);
  EXPECT_EQ(CbcCmac::create(MacAlgorithm::kCmacAes128, Bytes(32)).error(), CryptoError::kBadKeyLength);
  EXPECT_EQ(CbcCmac::create(MacAlgorithm::kHmacSha256, Bytes(32)).error(), CryptoError::kBackend);
  EXPECT_EQ(make_openssl_cmac(MacAlgorithm::kHmacSha256, Bytes(32)).error(), CryptoError::kBackend);
  auto m = CbcCmac::create(MacAlgorithm::kCmacAes128, Bytes(16));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->compute(ByteSpan(Bytes{1}), MutableByteSpan()).error(), CryptoError::kBufferTooSmall);
  EXPECT_EQ((*m)->finish(MutableByteSpan()).error(), CryptoError::kBufferTooSmall);
}

TEST(CbcCmac, MakeMacBuildsIt) {
  auto m = make_mac(MacAlgorithm::kCmacAes256, Bytes(32, 7));
  ASSERT_TRUE(m.ok());
  EXPECT_NE(dynamic_cast<CbcCmac*>(m->get()), nullptr);
  EXPECT_EQ((*m)->algorithm(), MacAlgorithm::kCmacAes256);
  EXPECT_EQ((*m)->tag_size(), 16u);
}

}  // namespace
}  // namespace layersec::crypto
