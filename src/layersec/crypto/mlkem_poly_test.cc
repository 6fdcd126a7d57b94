// ML-KEM arithmetic: reductions, compression (exhaustive against the
// division formula of FIPS 203 eq. 4.7/4.8) and the NTT against schoolbook
// multiplication in Z_q[X]/(X^256+1).
#include "layersec/crypto/mlkem_poly.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace layersec::crypto::mlkem {
namespace {

int mod_q(long v) { return static_cast<int>(((v % kQ) + kQ) % kQ); }

TEST(MlKemPoly, CompressMatchesDivisionExhaustively) {
  for (int d : {1, 4, 5, 10, 11}) {
    for (int x = 0; x < kQ; ++x) {
      // round(2^d * x / q) mod 2^d with exact integer arithmetic.
      const long num = (static_cast<long>(x) << d);
      const long rounded = (2 * num + kQ) / (2 * kQ);
      ASSERT_EQ(compress(static_cast<std::uint16_t>(x), d), static_cast<std::uint32_t>(rounded & ((1 << d) - 1)))
          << "d=" << d << " x=" << x;
    }
    for (std::uint32_t y = 0; y < (1u << d); ++y) {
      const long expect = (static_cast<long>(y) * kQ * 2 + (1L << d)) / (2L << d);
      ASSERT_EQ(decompress(y, d), expect) << "d=" << d << " y=" << y;
      // Compress_d(Decompress_d(y)) = y (§4.2.1).
      ASSERT_EQ(compress(static_cast<std::uint16_t>(decompress(y, d)), d), y);
    }
  }
}

TEST(MlKemPoly, Reductions) {
  for (int a = -32768; a <= 32767; ++a) {
    const std::int16_t r = barrett_reduce(static_cast<std::int16_t>(a));
    ASSERT_LE(std::abs(r), (kQ - 1) / 2);
    ASSERT_EQ(mod_q(r), mod_q(a));
  }
  std::mt19937 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const std::int32_t a = static_cast<std::int32_t>(rng() % (2u * kQ * 32768u)) - kQ * 32768;
    const std::int16_t r = montgomery_reduce(a);
    ASSERT_LT(std::abs(r), kQ);
    ASSERT_EQ(mod_q(static_cast<long>(r) * 65536), mod_q(a));
  }
}

TEST(MlKemPoly, NttMultiplicationMatchesSchoolbook) {
  std::mt19937 rng(7);
  for (int round = 0; round < 4; ++round) {
    Poly a, b, a_hat, b_hat, cache, r;
    for (int i = 0; i < kN; ++i) {
      a.c[i] = static_cast<std::int16_t>(static_cast<int>(rng() % kQ) - kQ / 2);
      b.c[i] = static_cast<std::int16_t>(static_cast<int>(rng() % 5) - 2);  // small, like CBD output
    }
    a_hat = a;
    b_hat = b;
    ntt(a_hat);
    ntt(b_hat);
    mulcache_compute(cache, b_hat);
    basemul_acc(r, &a_hat, &b_hat, &cache, 1);
    invntt_tomont(r);
    for (int i = 0; i < kN; ++i) {
      long expect = 0;
      for (int j = 0; j < kN; ++j) {
        const int idx = i - j;
        const long prod = static_cast<long>(a.c[j]) * b.c[idx >= 0 ? idx : idx + kN];
        expect += idx >= 0 ? prod : -prod;  // X^256 = -1
      }
      ASSERT_EQ(mod_q(r.c[i]), mod_q(expect)) << "coefficient " << i;
    }
  }
}

TEST(MlKemPoly, Encode12RoundTripAndModulusCheck) {
  Poly p, q;
  for (int i = 0; i < kN; ++i) p.c[i] = static_cast<std::int16_t>((i * 13) % kQ);
  std::uint8_t buf[384];
  encode12(p, buf);
  EXPECT_TRUE(decode12_is_reduced(buf));
  decode12(buf, q);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(q.c[i], p.c[i]);
  buf[0] = 0x01;
  buf[1] = static_cast<std::uint8_t>((buf[1] & 0xF0) | 0x0D);  // 0xD01 = 3329 = q
  EXPECT_FALSE(decode12_is_reduced(buf));
  decode12(buf, q);
  EXPECT_EQ(q.c[0], 0);  // ByteDecode_12 reduces mod q
}

TEST(MlKemPoly, MessageRoundTrip) {
  std::uint8_t m[32], out[32];
  for (int i = 0; i < 32; ++i) m[i] = static_cast<std::uint8_t>(i * 37 + 5);
  Poly p;
  from_message(m, p);
  to_message(p, out);
  EXPECT_EQ(0, std::memcmp(m, out, 32));
}

TEST(MlKemPoly, CbdRange) {
  std::uint8_t buf[192];
  for (int i = 0; i < 192; ++i) buf[i] = static_cast<std::uint8_t>(i * 91 + 3);
  for (int eta : {2, 3}) {
    Poly p;
    sample_cbd(buf, eta, p);
    for (auto c : p.c) {
      EXPECT_GE(c, -eta);
      EXPECT_LE(c, eta);
    }
  }
  // All-ones bytes: x = y = eta, so every coefficient is 0.
  std::memset(buf, 0xFF, sizeof(buf));
  Poly p;
  sample_cbd(buf, 2, p);
  for (auto c : p.c) EXPECT_EQ(c, 0);
}

// SampleNTT over a stream delivered in pieces (the re-squeeze path of
// mlkem.cc) gives the same polynomial as over the whole stream. The ACVP
// subset also contains 5 matrix entries that need more than 504 bytes.
TEST(MlKemPoly, SampleNttContinues) {
  std::vector<std::uint8_t> stream(168 * 6);
  std::mt19937 rng(3);
  for (auto& b : stream) b = static_cast<std::uint8_t>(rng());
  // Make the first 3 blocks mostly rejections (12-bit values >= q).
  for (std::size_t i = 0; i < 504; i += 3) {
    stream[i] = 0xFF;
    stream[i + 1] = static_cast<std::uint8_t>(i % 7 == 0 ? 0x00 : 0xFF);
    stream[i + 2] = 0xFF;
  }
  Poly whole, pieces;
  ASSERT_EQ(sample_ntt(stream.data(), stream.size(), whole, 0), kN);
  const int first = sample_ntt(stream.data(), 504, pieces, 0);
  ASSERT_LT(first, kN);
  ASSERT_EQ(sample_ntt(stream.data() + 504, stream.size() - 504, pieces, first), kN);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(pieces.c[i], whole.c[i]) << i;
    ASSERT_GE(whole.c[i], 0);
    ASSERT_LT(whole.c[i], kQ);
  }
}

}  // namespace
}  // namespace layersec::crypto::mlkem
