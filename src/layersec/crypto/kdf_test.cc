// HKDF-SHA256 (RFC 5869), AES key wrap (RFC 3394, and the wrapped SAK of a
// real MKA exchange), SHA-256 and the random helpers (kdf.h).
#include "layersec/crypto/kdf.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/vectors.h"

namespace layersec::crypto {
namespace {

using Bytes = std::vector<std::uint8_t>;
using layersec::testing::hex;

std::string str(const nlohmann::json& j) { return j.get<std::string>(); }

TEST(HkdfSha256, Rfc5869) {
  const auto j = layersec::testing::load_testdata_json("crypto/hkdf_rfc5869.json");
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j.at("vectors").size(), 3u);
  for (const auto& v : j.at("vectors")) {
    SCOPED_TRACE(str(v.at("name")));
    const Bytes ikm = hex(str(v.at("ikm"))), salt = hex(str(v.at("salt"))), info = hex(str(v.at("info")));
    const Bytes okm = hex(str(v.at("okm")));
    ASSERT_EQ(okm.size(), v.at("length").get<std::size_t>());
    Bytes out(okm.size());
    ASSERT_TRUE(hkdf_sha256(salt, ikm, info, out).ok());
    EXPECT_EQ(out, okm);
    // Every prefix length gives the prefix of the OKM (RFC 5869 §2.3).
    for (std::size_t n = 1; n <= okm.size(); n += 5) {
      Bytes p(n);
      ASSERT_TRUE(hkdf_sha256(salt, ikm, info, p).ok());
      EXPECT_EQ(p, Bytes(okm.begin(), okm.begin() + static_cast<long>(n))) << n;
    }
    // Any change of an input changes the output.
    Bytes ikm2 = ikm;
    ikm2[0] ^= 1;
    Bytes o2(okm.size());
    ASSERT_TRUE(hkdf_sha256(salt, ikm2, info, o2).ok());
    EXPECT_NE(o2, okm);
    Bytes info2 = info;
    info2.push_back(0);
    ASSERT_TRUE(hkdf_sha256(salt, ikm, info2, o2).ok());
    EXPECT_NE(o2, okm);
  }
}

TEST(HkdfSha256, EmptySaltEqualsZeroSalt) {
  // RFC 5869 §2.2: a missing salt is HashLen zero octets.
  const Bytes ikm(22, 0x0b);
  Bytes a(42), b(42);
  ASSERT_TRUE(hkdf_sha256(ByteSpan{}, ikm, ByteSpan{}, a).ok());
  ASSERT_TRUE(hkdf_sha256(Bytes(32, 0), ikm, ByteSpan{}, b).ok());
  EXPECT_EQ(a, b);
}

TEST(HkdfSha256, EmptyInputKeyingMaterial) {
  // RFC 5869 does not forbid an empty IKM: PRK = HMAC(0^32, ""), and
  // OKM = HMAC(PRK, 0x01) for 32 bytes (value from Python hmac/hashlib).
  Bytes out(32);
  ASSERT_TRUE(hkdf_sha256(ByteSpan{}, ByteSpan{}, ByteSpan{}, out).ok());
  EXPECT_EQ(out, hex("eb70f01dede9afafa449eee1b1286504e1f62388b3f7dd4f956697b0e828fe18"));
}

TEST(HkdfSha256, OutputLengthLimits) {
  const Bytes ikm(16, 1);
  Bytes max(255 * 32);
  EXPECT_TRUE(hkdf_sha256(ByteSpan{}, ikm, ByteSpan{}, max).ok());
  Bytes too_long(255 * 32 + 1);
  auto st = hkdf_sha256(ByteSpan{}, ikm, ByteSpan{}, too_long);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), CryptoError::kBadInput);
  auto st0 = hkdf_sha256(ByteSpan{}, ikm, ByteSpan{}, MutableByteSpan{});
  ASSERT_FALSE(st0.ok());
  EXPECT_EQ(st0.error(), CryptoError::kBadInput);
}

struct WrapVector {
  std::string name;
  Bytes kek, key_data, wrapped;
};

std::vector<WrapVector> wrap_vectors() {
  std::vector<WrapVector> out;
  const auto j = layersec::testing::load_testdata_json("crypto/keywrap_rfc3394.json");
  if (!j.is_null())
    for (const auto& v : j.at("vectors"))
      out.push_back({str(v.at("name")), hex(str(v.at("kek"))), hex(str(v.at("key_data"))), hex(str(v.at("wrapped")))});
  const auto m = layersec::testing::load_vector_json("mka/mka_vectors.json");
  if (!m.is_null()) {
    for (const auto& v : m.at("vectors")) {
      const std::string kind = str(v.at("kind"));
      if (kind.rfind("AES Key Wrap", 0) == 0)
        out.push_back({"MKA " + str(v.at("id")), hex(str(v.at("inputs").at("kek"))),
                       hex(str(v.at("inputs").at("plaintext"))), hex(str(v.at("expected")))});
      if (!v.contains("mkpdus")) continue;
      const Bytes kek = hex(str(v.at("inputs").at("derived_kek")));
      for (const auto& p : v.at("mkpdus")) {
        if (!p.contains("distributed_sak")) continue;
        const auto& s = p.at("distributed_sak");
        out.push_back({"MKPDU frame " + std::to_string(p.at("frame_no").get<int>()) + " SAK", kek,
                       hex(str(s.at("unwrapped_sak"))), hex(str(s.at("wrapped_sak")))});
      }
    }
  }
  return out;
}

TEST(AesKeyWrap, Rfc3394AndMkaVectors) {
  const auto vs = wrap_vectors();
  ASSERT_GE(vs.size(), 6u + 6u + 2u);
  for (const auto& v : vs) {
    SCOPED_TRACE(v.name);
    Bytes w(v.key_data.size() + 8);
    ASSERT_TRUE(aes_key_wrap(v.kek, v.key_data, w).ok());
    EXPECT_EQ(w, v.wrapped);
    Bytes u(v.wrapped.size() - 8);
    ASSERT_TRUE(aes_key_unwrap(v.kek, v.wrapped, u).ok());
    EXPECT_EQ(u, v.key_data);
  }
}

TEST(AesKeyWrap, UnwrapRejectsModifiedInput) {
  for (const auto& v : wrap_vectors()) {
    SCOPED_TRACE(v.name);
    for (std::size_t i = 0; i < v.wrapped.size(); ++i) {
      Bytes w = v.wrapped;
      w[i] ^= static_cast<std::uint8_t>(1u << (i % 8));
      Bytes u(w.size() - 8, 0xEE);
      auto st = aes_key_unwrap(v.kek, w, u);
      ASSERT_FALSE(st.ok()) << "byte " << i;
      EXPECT_EQ(st.error(), CryptoError::kAuthFailed);
      EXPECT_EQ(u, Bytes(u.size(), 0)) << "output must be zeroed";
    }
    Bytes k2 = v.kek;
    k2[0] ^= 0x80;
    Bytes u(v.wrapped.size() - 8);
    auto st = aes_key_unwrap(k2, v.wrapped, u);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error(), CryptoError::kAuthFailed);
    // Dropping the last semiblock changes the length and must not verify.
    if (v.wrapped.size() >= 32) {
      Bytes shorter(v.wrapped.begin(), v.wrapped.end() - 8);
      Bytes u2(shorter.size() - 8);
      EXPECT_FALSE(aes_key_unwrap(v.kek, shorter, u2).ok());
    }
  }
}

TEST(AesKeyWrap, RejectsBadLengths) {
  const Bytes kek(16, 1);
  Bytes out(64);
  auto expect_error = [](Status<CryptoError> st, CryptoError e) {
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error(), e);
  };
  expect_error(aes_key_wrap(Bytes(15, 1), Bytes(16, 2), MutableByteSpan(out).first(24)),
               CryptoError::kBadKeyLength);
  expect_error(aes_key_wrap(kek, Bytes(8, 2), MutableByteSpan(out).first(16)), CryptoError::kBadInput);
  expect_error(aes_key_wrap(kek, Bytes(20, 2), MutableByteSpan(out).first(28)), CryptoError::kBadInput);
  expect_error(aes_key_wrap(kek, Bytes(16, 2), MutableByteSpan(out).first(16)), CryptoError::kBufferTooSmall);
  expect_error(aes_key_unwrap(kek, Bytes(16, 2), MutableByteSpan(out).first(8)), CryptoError::kBadInput);
  expect_error(aes_key_unwrap(kek, Bytes(25, 2), MutableByteSpan(out).first(17)), CryptoError::kBadInput);
  expect_error(aes_key_unwrap(kek, Bytes(24, 2), MutableByteSpan(out).first(24)), CryptoError::kBufferTooSmall);
  expect_error(aes_key_unwrap(Bytes(20, 1), Bytes(24, 2), MutableByteSpan(out).first(16)), CryptoError::kBadKeyLength);
}

TEST(Sha256, KnownAnswersAndParts) {
  // FIPS 180-4 examples ("abc" and the 448-bit message).
  const std::string abc = "abc";
  const ByteSpan p1[1] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(abc.data()), abc.size())};
  Bytes out(32);
  ASSERT_TRUE(sha256(p1, out).ok());
  EXPECT_EQ(out, hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  const std::string m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  const auto* d = reinterpret_cast<const std::uint8_t*>(m.data());
  const ByteSpan p2[3] = {ByteSpan(d, 10), ByteSpan{}, ByteSpan(d + 10, m.size() - 10)};
  ASSERT_TRUE(sha256(p2, out).ok());
  EXPECT_EQ(out, hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  ASSERT_TRUE(sha256({}, out).ok());
  EXPECT_EQ(out, hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  Bytes small(31);
  auto st = sha256(p1, small);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), CryptoError::kBufferTooSmall);
}

TEST(Random, BytesAndKeys) {
  std::set<Bytes> seen;
  for (int i = 0; i < 16; ++i) {
    Bytes r(16);
    ASSERT_TRUE(random_bytes(r).ok());
    seen.insert(r);
  }
  EXPECT_EQ(seen.size(), 16u);  // 128-bit values do not repeat
  EXPECT_TRUE(random_bytes(MutableByteSpan{}).ok());
  auto k1 = random_key(32);
  auto k2 = random_key(32);
  ASSERT_EQ(k1.size(), 32u);
  EXPECT_NE(Bytes(k1.span().begin(), k1.span().end()), Bytes(k2.span().begin(), k2.span().end()));
}

}  // namespace
}  // namespace layersec::crypto
