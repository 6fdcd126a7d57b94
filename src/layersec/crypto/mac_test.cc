// Known-answer and negative tests for the MACs behind make_mac() (mac.h):
// AES-CMAC (RFC 4493, NIST SP 800-38B), HMAC-SHA256 (RFC 4231), keyed
// BLAKE2s-256 (RFC 7693, BLAKE2 reference KAT), plus the bit-exact
// truncation used by SecOC (AUTOSAR SWS SecOC, MSB-first truncation).
#include "layersec/crypto/mac.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "layersec/base/hex.h"
#include "support/vectors.h"

namespace layersec::crypto {
namespace {

using Bytes = std::vector<std::uint8_t>;
using layersec::testing::hex;
using layersec::testing::load_testdata_json;
using layersec::testing::load_vector_json;

std::unique_ptr<Mac> must_make(MacAlgorithm alg, ByteSpan key) {
  auto m = make_mac(alg, key);
  if (!m.ok()) {
    ADD_FAILURE() << "make_mac(" << to_string(alg) << ") failed: " << to_string(m.error());
    return nullptr;
  }
  return std::move(m).value();
}

std::string str(const nlohmann::json& j) { return j.get<std::string>(); }

Bytes full_tag(Mac& mac, ByteSpan msg) {
  Bytes out(mac.tag_size());
  auto st = mac.compute(msg, out);
  EXPECT_TRUE(st.ok());
  return out;
}

// Hex of a bit string given MSB-first with an odd number of digits allowed
// ("5a11dc6" = 28 bits): pads the last nibble with zero bits.
Bytes hex_bits(std::string s) {
  if (s.size() % 2) s += '0';
  return hex(s);
}

// The first `bits` bits of `full`, computed bit by bit (independent of
// truncate_bits()).
Bytes mask_by_hand(const Bytes& full, std::size_t bits) {
  Bytes out((bits + 7) / 8, 0);
  for (std::size_t i = 0; i < bits; ++i) {
    const std::uint8_t bit = (full[i / 8] >> (7 - i % 8)) & 1;
    out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (bit << (7 - i % 8)));
  }
  return out;
}

struct Kat {
  std::string name;
  MacAlgorithm alg;
  Bytes key;
  Bytes msg;
  Bytes tag;         // the expected (possibly truncated) tag
  std::size_t bits;  // length of `tag` in bits
};

MacAlgorithm cmac_for_key(std::size_t n) {
  return n == 16 ? MacAlgorithm::kCmacAes128 : n == 24 ? MacAlgorithm::kCmacAes192 : MacAlgorithm::kCmacAes256;
}

std::vector<Kat> cmac_kats() {
  std::vector<Kat> out;
  const auto j = load_vector_json("secoc/cmac_secoc_vectors.json");
  if (j.is_null()) return out;
  for (const char* set : {"cmac_aes128_rfc4493", "cmac_aes192_sp800_38b", "cmac_aes256_sp800_38b"}) {
    for (const auto& v : j.at(set)) {
      const auto key = hex(str(v.at("key")));
      out.push_back({str(v.at("name")), cmac_for_key(key.size()), key, hex(str(v.at("message"))),
                     hex(str(v.at("expected_mac"))), 128});
    }
  }
  for (const auto& v : j.at("secoc_external")) {
    const auto key = hex(str(v.at("key")));
    const auto msg = hex(str(v.at("data_to_authenticator")));
    out.push_back({str(v.at("name")), MacAlgorithm::kCmacAes128, key, msg, hex(str(v.at("full_cmac_openssl"))), 128});
    out.push_back({str(v.at("name")) + " (24-bit, as published)", MacAlgorithm::kCmacAes128, key, msg,
                   hex(str(v.at("expected_truncated_mac_24bit"))), 24});
  }
  for (const auto& v : j.at("secoc_derived")) {
    const auto key = hex(str(v.at("key")));
    const auto msg = hex(str(v.at("data_to_authenticator")));
    out.push_back({str(v.at("name")), MacAlgorithm::kCmacAes128, key, msg, hex(str(v.at("full_cmac"))), 128});
    const auto bits = v.at("mac_trunc_bits").get<std::size_t>();
    out.push_back({str(v.at("name")) + " (truncated)", MacAlgorithm::kCmacAes128, key, msg,
                   hex_bits(str(v.at("truncated_mac"))), bits});
  }
  // IEEE 802.1X-2020 vectors: the RFC 4493 examples again, and the ICVs of
  // MKPDUs captured from wpa_supplicant (ICV = AES-CMAC(ICK, frame w/o ICV)).
  const auto m = load_vector_json("mka/mka_vectors.json");
  if (m.is_null()) return out;
  for (const auto& v : m.at("vectors")) {
    const std::string kind = str(v.at("kind"));
    if (kind.rfind("AES-CMAC", 0) == 0) {
      const auto key = hex(str(v.at("inputs").at("key")));
      out.push_back({str(v.at("id")), cmac_for_key(key.size()), key, hex(str(v.at("inputs").at("msg"))),
                     hex(str(v.at("expected"))), 128});
    }
    if (v.contains("mkpdus")) {
      const auto ick = hex(str(v.at("inputs").at("derived_ick")));
      for (const auto& p : v.at("mkpdus")) {
        if (!p.value("icv_ok", false)) continue;
        auto frame = hex(str(p.at("mkpdu_hex")));
        const auto icv = hex(str(p.at("icv")));
        frame.resize(frame.size() - icv.size());
        out.push_back({"MKPDU frame " + std::to_string(p.at("frame_no").get<int>()), MacAlgorithm::kCmacAes128, ick,
                       frame, icv, 128});
      }
    }
  }
  return out;
}

std::vector<Kat> hmac_kats() {
  std::vector<Kat> out;
  const auto j = load_testdata_json("crypto/hmac_sha256_rfc4231.json");
  if (j.is_null()) return out;
  for (const auto& v : j.at("vectors"))
    out.push_back({str(v.at("name")), MacAlgorithm::kHmacSha256, hex(str(v.at("key"))),
                   hex(str(v.at("message"))), hex(str(v.at("tag"))), v.at("tag_bits").get<std::size_t>()});
  return out;
}

std::vector<Kat> blake2s_kats() {
  std::vector<Kat> out;
  const auto j = load_testdata_json("crypto/blake2s_keyed_kat.json");
  if (j.is_null()) return out;
  const auto key = hex(str(j.at("key")));
  for (const auto& v : j.at("vectors")) {
    const auto n = v.at("msg_len").get<std::size_t>();
    Bytes msg(n);
    for (std::size_t i = 0; i < n; ++i) msg[i] = static_cast<std::uint8_t>(i);
    out.push_back({"blake2s keyed KAT len " + std::to_string(n), MacAlgorithm::kBlake2s256, key, msg,
                   hex(str(v.at("tag"))), 256});
  }
  return out;
}

// Checks one vector every way the API allows: one-shot, parts split at
// every position, incremental, compute_bits and verify_bits.
void check_kat(const Kat& k) {
  SCOPED_TRACE(k.name);
  auto mac = must_make(k.alg, k.key);
  ASSERT_NE(mac, nullptr);
  ASSERT_EQ(k.tag.size(), (k.bits + 7) / 8);
  const ByteSpan msg(k.msg);
  const Bytes full = full_tag(*mac, msg);
  EXPECT_EQ(mask_by_hand(full, k.bits), k.tag);

  Bytes tb(k.tag.size());
  const ByteSpan one[1] = {msg};
  ASSERT_TRUE(mac->compute_bits(one, k.bits, tb).ok());
  EXPECT_EQ(tb, k.tag);
  EXPECT_TRUE(mac->verify_bits(one, k.tag, k.bits));

  // The same message given in two parts, split at every position (step
  // chosen so long messages stay quick).
  const std::size_t step = msg.size() > 80 ? 7 : 1;
  for (std::size_t cut = 0; cut <= msg.size(); cut += step) {
    const ByteSpan parts[2] = {msg.first(cut), msg.subspan(cut)};
    Bytes t(k.tag.size());
    ASSERT_TRUE(mac->compute_bits(parts, k.bits, t).ok());
    EXPECT_EQ(t, k.tag) << "cut at " << cut;
  }
  // Byte by byte through the incremental interface.
  mac->begin();
  for (std::uint8_t b : k.msg) mac->update(ByteSpan(&b, 1));
  Bytes inc(mac->tag_size());
  ASSERT_TRUE(mac->finish(inc).ok());
  EXPECT_EQ(inc, full);
}

TEST(CmacAes, PublishedVectors) {
  const auto kats = cmac_kats();
  // 12 RFC 4493 / SP 800-38B, 2 external SecOC, 10 SecOC profile, 4 MKA
  // RFC 4493 copies and the captured MKPDUs.
  ASSERT_GE(kats.size(), 28u);
  for (const auto& k : kats) check_kat(k);
}

TEST(CmacAes, SecocNegativeVectorDoesNotVerify) {
  const auto j = load_vector_json("secoc/cmac_secoc_vectors.json");
  ASSERT_FALSE(j.is_null());
  const auto key = hex(str(j.at("secoc_derived")[0].at("key")));
  auto mac = must_make(MacAlgorithm::kCmacAes128, key);
  ASSERT_NE(mac, nullptr);
  for (const auto& v : j.at("secoc_negative")) {
    const auto msg = hex(str(v.at("data_to_authenticator")));
    const ByteSpan parts[1] = {msg};
    EXPECT_EQ(full_tag(*mac, msg), hex(str(v.at("full_cmac"))));
    EXPECT_FALSE(mac->verify_bits(parts, hex(str(v.at("expected_truncated_mac_of_original"))), 24));
  }
}

// RFC 4493 §2.3 subkeys, checked through the MAC itself: for a one-block
// message CMAC(K, M) = AES_K(M ^ K1); for the empty message
// CMAC(K, "") = AES_K(0x80 00.. ^ K2).
Bytes aes128_block(const Bytes& key, const Bytes& block) {
  Bytes out(16 + 16);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int l1 = 0, l2 = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, key.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &l1, block.data(), 16), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, out.data() + l1, &l2), 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(16);
  return out;
}

Bytes dbl(const Bytes& in) {  // multiplication by x in GF(2^128), RFC 4493 §2.3
  Bytes out(16);
  for (int i = 0; i < 16; ++i) {
    const int next = i < 15 ? in[static_cast<std::size_t>(i + 1)] >> 7 : 0;
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((in[static_cast<std::size_t>(i)] << 1) | next);
  }
  if (in[0] & 0x80) out[15] ^= 0x87;
  return out;
}

TEST(CmacAes, Rfc4493Subkeys) {
  const auto j = load_vector_json("secoc/cmac_secoc_vectors.json");
  ASSERT_FALSE(j.is_null());
  const auto& s = j.at("cmac_aes128_rfc4493_subkeys");
  const auto key = hex(str(s.at("K")));
  const auto l = aes128_block(key, Bytes(16, 0));
  EXPECT_EQ(l, hex(str(s.at("L=AES(K,0^128)"))));
  const auto k1 = dbl(l);
  const auto k2 = dbl(k1);
  EXPECT_EQ(k1, hex(str(s.at("K1"))));
  EXPECT_EQ(k2, hex(str(s.at("K2"))));

  auto mac = must_make(MacAlgorithm::kCmacAes128, key);
  ASSERT_NE(mac, nullptr);
  Bytes m = hex("6bc1bee22e409f96e93d7e117393172a");
  Bytes x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = m[static_cast<std::size_t>(i)] ^ k1[static_cast<std::size_t>(i)];
  EXPECT_EQ(full_tag(*mac, m), aes128_block(key, x));
  Bytes pad(16, 0);
  pad[0] = 0x80;
  for (int i = 0; i < 16; ++i) pad[static_cast<std::size_t>(i)] ^= k2[static_cast<std::size_t>(i)];
  EXPECT_EQ(full_tag(*mac, {}), aes128_block(key, pad));
}

TEST(HmacSha256, Rfc4231) {
  const auto kats = hmac_kats();
  ASSERT_EQ(kats.size(), 7u);
  for (const auto& k : kats) check_kat(k);
  EXPECT_EQ(kats[4].bits, 128u);  // test case 5 is the truncated one
}

TEST(Blake2s256, KeyedReferenceKat) {
  const auto kats = blake2s_kats();
  ASSERT_EQ(kats.size(), 256u);
  for (const auto& k : kats) check_kat(k);
}

TEST(Blake2s256, ShortKeysAreAllowed) {
  // RFC 7693 allows keys of 1..32 bytes; different keys give different tags.
  const Bytes msg = {1, 2, 3};
  Bytes prev;
  for (std::size_t n = 1; n <= 32; ++n) {
    auto mac = must_make(MacAlgorithm::kBlake2s256, Bytes(n, 0x42));
    ASSERT_NE(mac, nullptr);
    auto t = full_tag(*mac, msg);
    EXPECT_NE(t, prev);
    prev = t;
  }
}

// ---------------------------------------------------------------------------
// Truncation and negative tests for every algorithm.

const MacAlgorithm kAll[] = {MacAlgorithm::kCmacAes128, MacAlgorithm::kCmacAes192, MacAlgorithm::kCmacAes256,
                             MacAlgorithm::kHmacSha256, MacAlgorithm::kBlake2s256, MacAlgorithm::kChaskey8,
                             MacAlgorithm::kChaskey12};

Bytes test_key(MacAlgorithm a, std::uint8_t seed) {
  Bytes k(mac_key_size(a));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed + 17 * i);
  return k;
}

Bytes test_message(std::size_t n) {
  Bytes m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(i * 31 + 5);
  return m;
}

class EveryMac : public ::testing::TestWithParam<MacAlgorithm> {};

TEST_P(EveryMac, ReportsSizes) {
  auto mac = must_make(GetParam(), test_key(GetParam(), 1));
  ASSERT_NE(mac, nullptr);
  EXPECT_EQ(mac->algorithm(), GetParam());
  EXPECT_EQ(mac->tag_size(), mac_tag_size(GetParam()));
  EXPECT_FALSE(to_string(GetParam()).empty());
}

TEST_P(EveryMac, TruncationIsBitExactForEveryLength) {
  auto mac = must_make(GetParam(), test_key(GetParam(), 2));
  ASSERT_NE(mac, nullptr);
  const Bytes msg = test_message(37);
  const ByteSpan parts[1] = {msg};
  const Bytes full = full_tag(*mac, msg);
  for (std::size_t bits = 1; bits <= 8 * mac->tag_size(); ++bits) {
    SCOPED_TRACE(bits);
    const std::size_t n = (bits + 7) / 8;
    Bytes t(n + 2, 0xEE);  // larger buffer: only n bytes may be written
    ASSERT_TRUE(mac->compute_bits(parts, bits, t).ok());
    EXPECT_EQ(Bytes(t.begin(), t.begin() + static_cast<long>(n)), mask_by_hand(full, bits));
    EXPECT_EQ(t[n], 0xEE);
    EXPECT_EQ(t[n + 1], 0xEE);
    Bytes tt(n);
    truncate_bits(full, bits, tt);
    EXPECT_EQ(tt, mask_by_hand(full, bits));
    EXPECT_TRUE(mac->verify_bits(parts, tt, bits));
    // Flipping the last kept bit must fail ...
    Bytes bad = tt;
    bad[(bits - 1) / 8] ^= static_cast<std::uint8_t>(0x80 >> ((bits - 1) % 8));
    EXPECT_FALSE(mac->verify_bits(parts, bad, bits));
    // ... and so must flipping the first bit.
    Bytes bad0 = tt;
    bad0[0] ^= 0x80;
    EXPECT_FALSE(mac->verify_bits(parts, bad0, bits));
    // Bits past the truncation point are not part of the tag.
    if (bits % 8) {
      Bytes pad = tt;
      pad[n - 1] ^= 0x01;
      EXPECT_TRUE(mac->verify_bits(parts, pad, bits));
    }
    // A tag buffer shorter than ceil(bits/8) is rejected.
    EXPECT_FALSE(mac->verify_bits(parts, ByteSpan(tt).first(n - 1), bits));
  }
  // Non-byte lengths used by SecOC profiles, spelled out.
  for (std::size_t bits : {1u, 24u, 28u, 127u}) {
    Bytes t((bits + 7) / 8);
    ASSERT_TRUE(mac->compute_bits(parts, bits, t).ok());
    EXPECT_EQ(t, mask_by_hand(full, bits)) << bits;
  }
}

TEST_P(EveryMac, RejectsBadTagLengths) {
  auto mac = must_make(GetParam(), test_key(GetParam(), 3));
  ASSERT_NE(mac, nullptr);
  const Bytes msg = test_message(5);
  const ByteSpan parts[1] = {msg};
  Bytes t(64);
  auto s0 = mac->compute_bits(parts, 0, t);
  ASSERT_FALSE(s0.ok());
  EXPECT_EQ(s0.error(), CryptoError::kBadTagLength);
  auto s1 = mac->compute_bits(parts, 8 * mac->tag_size() + 1, t);
  ASSERT_FALSE(s1.ok());
  EXPECT_EQ(s1.error(), CryptoError::kBadTagLength);
  Bytes small(2);
  auto s2 = mac->compute_bits(parts, 24, small);
  ASSERT_FALSE(s2.ok());
  EXPECT_EQ(s2.error(), CryptoError::kBufferTooSmall);
  EXPECT_FALSE(mac->verify_bits(parts, t, 0));
  EXPECT_FALSE(mac->verify_bits(parts, t, 8 * mac->tag_size() + 1));
  auto s3 = mac->finish(MutableByteSpan{});
  ASSERT_FALSE(s3.ok());
  EXPECT_EQ(s3.error(), CryptoError::kBufferTooSmall);
}

TEST_P(EveryMac, RejectsFlippedTagBitsWrongKeyAndChangedMessage) {
  const auto alg = GetParam();
  auto mac = must_make(alg, test_key(alg, 4));
  ASSERT_NE(mac, nullptr);
  const Bytes msg = test_message(50);
  const ByteSpan parts[1] = {msg};
  const Bytes full = full_tag(*mac, msg);
  const std::size_t bits = 8 * full.size();
  ASSERT_TRUE(mac->verify_bits(parts, full, bits));
  for (std::size_t i = 0; i < bits; ++i) {
    Bytes bad = full;
    bad[i / 8] ^= static_cast<std::uint8_t>(0x80 >> (i % 8));
    EXPECT_FALSE(mac->verify_bits(parts, bad, bits)) << "bit " << i;
  }
  // Every single-bit change of the key changes the tag.
  const Bytes key = test_key(alg, 4);
  for (std::size_t i = 0; i < 8 * key.size(); i += 13) {
    Bytes k2 = key;
    k2[i / 8] ^= static_cast<std::uint8_t>(1u << (i % 8));
    auto other = must_make(alg, k2);
    ASSERT_NE(other, nullptr);
    EXPECT_FALSE(other->verify_bits(parts, full, bits)) << "key bit " << i;
    EXPECT_FALSE(other->verify_bits(parts, full, 32)) << "key bit " << i;
  }
  // Changed, extended and shortened messages.
  for (std::size_t i = 0; i < msg.size(); ++i) {
    Bytes m2 = msg;
    m2[i] ^= 0x01;
    const ByteSpan p2[1] = {m2};
    EXPECT_FALSE(mac->verify_bits(p2, full, bits)) << "msg byte " << i;
  }
  Bytes longer = msg;
  longer.push_back(0);
  const ByteSpan pl[1] = {longer};
  EXPECT_FALSE(mac->verify_bits(pl, full, bits));
  const ByteSpan ps[1] = {ByteSpan(msg).first(msg.size() - 1)};
  EXPECT_FALSE(mac->verify_bits(ps, full, bits));
  // Truncated tags: a tag shorter than the length to verify is rejected.
  for (std::size_t n = 0; n < full.size(); ++n)
    EXPECT_FALSE(mac->verify_bits(parts, ByteSpan(full).first(n), bits)) << n;
}

TEST_P(EveryMac, ContextIsReusableAndIncrementalMatchesOneShot) {
  auto mac = must_make(GetParam(), test_key(GetParam(), 5));
  ASSERT_NE(mac, nullptr);
  const Bytes msg = test_message(300);
  const Bytes a = full_tag(*mac, msg);
  const Bytes b = full_tag(*mac, msg);
  EXPECT_EQ(a, b);
  EXPECT_NE(full_tag(*mac, ByteSpan(msg).first(299)), a);
  EXPECT_EQ(full_tag(*mac, msg), a);
  // Uneven pieces through begin/update/finish.
  mac->begin();
  std::size_t pos = 0;
  for (std::size_t piece = 1; pos < msg.size(); piece = piece * 2 + 1) {
    const std::size_t n = std::min(piece, msg.size() - pos);
    mac->update(ByteSpan(msg).subspan(pos, n));
    mac->update(ByteSpan{});  // empty updates change nothing
    pos += n;
  }
  Bytes c(mac->tag_size());
  ASSERT_TRUE(mac->finish(c).ok());
  EXPECT_EQ(c, a);
  // finish() into a short buffer writes the leading bytes.
  mac->begin();
  mac->update(msg);
  Bytes four(4);
  ASSERT_TRUE(mac->finish(four).ok());
  EXPECT_EQ(four, Bytes(a.begin(), a.begin() + 4));
  // Many parts.
  std::vector<ByteSpan> parts;
  for (std::size_t i = 0; i < msg.size(); i += 10) parts.push_back(ByteSpan(msg).subspan(i, std::min<std::size_t>(10, msg.size() - i)));
  Bytes d(mac->tag_size());
  ASSERT_TRUE(mac->compute(parts, d).ok());
  EXPECT_EQ(d, a);
}

TEST_P(EveryMac, FreshContextIsReadyWithoutBegin) {
  const Bytes key = test_key(GetParam(), 6);
  const Bytes msg = test_message(45);
  auto ref = must_make(GetParam(), key);
  ASSERT_NE(ref, nullptr);
  const Bytes expect = full_tag(*ref, msg);
  auto mac = must_make(GetParam(), key);
  ASSERT_NE(mac, nullptr);
  mac->update(msg);
  Bytes t(mac->tag_size());
  ASSERT_TRUE(mac->finish(t).ok());
  EXPECT_EQ(t, expect);
}

INSTANTIATE_TEST_SUITE_P(All, EveryMac, ::testing::ValuesIn(kAll),
                         [](const auto& info) {
                           std::string n(to_string(info.param));
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(MakeMac, RejectsBadKeyLengths) {
  struct Case {
    MacAlgorithm alg;
    std::size_t key_len;
  };
  const Case cases[] = {
      {MacAlgorithm::kCmacAes128, 0},  {MacAlgorithm::kCmacAes128, 15}, {MacAlgorithm::kCmacAes128, 17},
      {MacAlgorithm::kCmacAes128, 24}, {MacAlgorithm::kCmacAes128, 32}, {MacAlgorithm::kCmacAes192, 16},
      {MacAlgorithm::kCmacAes192, 32}, {MacAlgorithm::kCmacAes256, 16}, {MacAlgorithm::kCmacAes256, 24},
      {MacAlgorithm::kCmacAes256, 31}, {MacAlgorithm::kHmacSha256, 0},  {MacAlgorithm::kBlake2s256, 0},
      {MacAlgorithm::kBlake2s256, 33}, {MacAlgorithm::kBlake2s256, 64}, {MacAlgorithm::kChaskey8, 0},
      {MacAlgorithm::kChaskey8, 15},   {MacAlgorithm::kChaskey8, 17},   {MacAlgorithm::kChaskey8, 32},
      {MacAlgorithm::kChaskey12, 8},   {MacAlgorithm::kChaskey12, 24},
  };
  for (const auto& c : cases) {
    const Bytes key(c.key_len, 0x11);
    auto m = make_mac(c.alg, key);
    ASSERT_FALSE(m.ok()) << to_string(c.alg) << " " << c.key_len;
    EXPECT_EQ(m.error(), CryptoError::kBadKeyLength) << to_string(c.alg) << " " << c.key_len;
  }
  // HMAC takes any non-empty key (RFC 2104 §3); long keys are hashed.
  for (std::size_t n : {1u, 16u, 64u, 65u, 131u}) {
    auto m = make_mac(MacAlgorithm::kHmacSha256, Bytes(n, 0xAA));
    EXPECT_TRUE(m.ok()) << n;
  }
}

TEST(MacSizes, Table) {
  EXPECT_EQ(mac_key_size(MacAlgorithm::kCmacAes128), 16u);
  EXPECT_EQ(mac_key_size(MacAlgorithm::kCmacAes192), 24u);
  EXPECT_EQ(mac_key_size(MacAlgorithm::kCmacAes256), 32u);
  EXPECT_EQ(mac_key_size(MacAlgorithm::kChaskey8), 16u);
  EXPECT_EQ(mac_tag_size(MacAlgorithm::kCmacAes256), 16u);
  EXPECT_EQ(mac_tag_size(MacAlgorithm::kHmacSha256), 32u);
  EXPECT_EQ(mac_tag_size(MacAlgorithm::kBlake2s256), 32u);
  EXPECT_EQ(mac_tag_size(MacAlgorithm::kChaskey12), 16u);
  EXPECT_EQ(to_string(CryptoError::kAuthFailed), "authentication failed");
  EXPECT_EQ(to_string(MacAlgorithm::kCmacAes128), "cmac-aes128");
}

// ---------------------------------------------------------------------------
// Constant-time comparison helpers.

TEST(CtEqual, Basics) {
  const Bytes a = {1, 2, 3, 4};
  Bytes b = a;
  EXPECT_TRUE(ct_equal(a, b));
  b[3] ^= 0x80;
  EXPECT_FALSE(ct_equal(a, b));
  EXPECT_FALSE(ct_equal(a, ByteSpan(a).first(3)));
  EXPECT_TRUE(ct_equal(ByteSpan{}, ByteSpan{}));
}

TEST(CtEqualBits, ComparesOnlyTheLeadingBits) {
  const Bytes a = {0xAB, 0xCD, 0xEF};
  for (std::size_t bits = 1; bits <= 24; ++bits) {
    EXPECT_TRUE(ct_equal_bits(a, a, bits));
    for (std::size_t flip = 0; flip < 24; ++flip) {
      Bytes b = a;
      b[flip / 8] ^= static_cast<std::uint8_t>(0x80 >> (flip % 8));
      EXPECT_EQ(ct_equal_bits(a, b, bits), flip >= bits) << bits << " " << flip;
    }
  }
  EXPECT_FALSE(ct_equal_bits(a, a, 0));
  EXPECT_FALSE(ct_equal_bits(a, a, 25));  // longer than the buffers
  EXPECT_FALSE(ct_equal_bits(a, ByteSpan(a).first(1), 9));
  EXPECT_TRUE(ct_equal_bits(a, ByteSpan(a).first(1), 8));
}

TEST(TruncateBits, KeepsMsbFirst) {
  const Bytes tag = {0xFF, 0xFF, 0xFF, 0xFF};
  Bytes out(4, 0);
  truncate_bits(tag, 28, out);
  EXPECT_EQ(out, (Bytes{0xFF, 0xFF, 0xFF, 0xF0}));
  Bytes one(1);
  truncate_bits(tag, 1, one);
  EXPECT_EQ(one[0], 0x80);
  Bytes three(3);
  truncate_bits(Bytes{0x12, 0x34, 0x56, 0x78}, 24, three);
  EXPECT_EQ(three, (Bytes{0x12, 0x34, 0x56}));
}

}  // namespace
}  // namespace layersec::crypto
