// AES-GCM and AES-GMAC (aead.h) against the GCM specification test cases
// (testdata/crypto/gcm_vectors.json, McGrew-Viega cases 1-6 and 13-18) and
// the IEEE 802.1AE-2018 Annex C frames in ../shared/vectors/macsec (GMAC for
// integrity-only frames, GCM for confidentiality), plus tamper tests.
#include "layersec/crypto/aead.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/vectors.h"

namespace layersec::crypto {
namespace {

using Bytes = std::vector<std::uint8_t>;
using layersec::testing::hex;

std::string str(const nlohmann::json& j) { return j.get<std::string>(); }

struct GcmVector {
  std::string name;
  Bytes key, iv, aad, plaintext, ciphertext, tag;
};

std::vector<GcmVector> spec_vectors() {
  std::vector<GcmVector> out;
  const auto j = layersec::testing::load_testdata_json("crypto/gcm_vectors.json");
  if (j.is_null()) return out;
  for (const auto& v : j.at("vectors"))
    out.push_back({str(v.at("name")), hex(str(v.at("key"))), hex(str(v.at("iv"))), hex(str(v.at("aad"))),
                   hex(str(v.at("plaintext"))), hex(str(v.at("ciphertext"))), hex(str(v.at("tag")))});
  return out;
}

// 802.1AE-2018 §14.5: IV = SCI || PN for GCM-AES-128/256; for the XPN suites
// IV = (SSCI || PN64) XOR Salt. AAD and plaintext per Annex C: integrity-only
// frames authenticate DA..User Data with an empty plaintext (GMAC);
// confidentiality frames authenticate DA..SecTAG and encrypt the user data.
struct MacsecVector {
  std::string id;
  bool integrity;
  bool positive;
  Bytes key, iv, aad, plaintext, ciphertext, icv;
};

std::vector<MacsecVector> macsec_vectors() {
  std::vector<MacsecVector> out;
  const auto j = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  if (j.is_null()) return out;
  for (const char* list : {"annex_c", "supplementary", "negative"}) {
    for (const auto& v : j.at(list)) {
      // Frames that are not MACsec frames at all (e.g. the untagged negative
      // case) say nothing about the cipher.
      if (!v.contains("protection") || !v.contains("secure_frame_parts")) continue;
      MacsecVector m;
      m.id = str(v.at("id"));
      m.positive = std::string(list) != "negative";
      m.integrity = str(v.at("protection")) == "integrity";
      m.key = hex(str(v.at("sak")));
      const std::string suite = str(v.at("cipher_suite"));
      if (suite.find("XPN") != std::string::npos) {
        Bytes ssci_pn = hex(str(v.at("ssci")));
        const Bytes pn64 = hex(str(v.at("xpn_pn64")));
        ssci_pn.insert(ssci_pn.end(), pn64.begin(), pn64.end());
        const Bytes salt = hex(str(v.at("salt")));
        m.iv.resize(12);
        for (std::size_t i = 0; i < 12; ++i) m.iv[i] = ssci_pn[i] ^ salt[i];
      } else {
        m.iv = hex(str(v.at("sci")));
        const Bytes pn = hex(str(v.at("pn_hex")));
        m.iv.insert(m.iv.end(), pn.begin(), pn.end());
      }
      const Bytes frame = hex(str(v.at("secure_frame")));
      const auto& parts = v.at("secure_frame_parts");
      m.icv = hex(str(parts.at("icv")));
      const Bytes secure_data = hex(str(parts.at("secure_data")));
      if (frame.size() < secure_data.size() + m.icv.size()) {
        ADD_FAILURE() << m.id << ": inconsistent frame";
        continue;
      }
      const std::size_t header = frame.size() - secure_data.size() - m.icv.size();
      if (m.integrity) {
        m.aad.assign(frame.begin(), frame.end() - static_cast<long>(m.icv.size()));
      } else {
        m.aad.assign(frame.begin(), frame.begin() + static_cast<long>(header));
      }
      // Clear tags (e.g. a VLAN tag) between SA and SecTAG are outside the
      // MACsec frame and not covered by the ICV (802.1AE-2018 §8.1).
      Bytes clear_tags;
      if (v.contains("clear_tags_before_sectag") && v.at("clear_tags_before_sectag").is_string())
        clear_tags = hex(str(v.at("clear_tags_before_sectag")));
      m.aad.erase(m.aad.begin() + 12, m.aad.begin() + 12 + static_cast<long>(clear_tags.size()));
      if (!m.integrity) {
        m.ciphertext = secure_data;
        m.plaintext = hex(str(v.at("unprotected_frame").at("msdu")));
        if (!clear_tags.empty() && std::equal(clear_tags.begin(), clear_tags.end(), m.plaintext.begin()))
          m.plaintext.erase(m.plaintext.begin(), m.plaintext.begin() + static_cast<long>(clear_tags.size()));
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

AesGcm must_gcm(const Bytes& key) {
  auto g = AesGcm::create(key);
  if (!g.ok()) {
    ADD_FAILURE() << "AesGcm::create: " << to_string(g.error());
    std::abort();
  }
  return std::move(g).value();
}

TEST(AesGcm, SpecVectorsSealAndOpenInPlace) {
  const auto vs = spec_vectors();
  ASSERT_EQ(vs.size(), 12u);
  for (const auto& v : vs) {
    SCOPED_TRACE(v.name);
    auto g = must_gcm(v.key);
    EXPECT_EQ(g.key_size(), v.key.size());
    Bytes buf = v.plaintext;
    Bytes tag(16);
    ASSERT_TRUE(g.seal(v.iv, v.aad, buf, tag).ok());
    EXPECT_EQ(buf, v.ciphertext);
    EXPECT_EQ(tag, v.tag);
    ASSERT_TRUE(g.open(v.iv, v.aad, buf, tag).ok());
    EXPECT_EQ(buf, v.plaintext);

    // AAD in several parts gives the same result.
    const std::size_t half = v.aad.size() / 2;
    const ByteSpan aad_parts[3] = {ByteSpan(v.aad).first(half), ByteSpan{}, ByteSpan(v.aad).subspan(half)};
    Bytes buf2 = v.plaintext;
    Bytes tag2(16);
    ASSERT_TRUE(g.seal(v.iv, aad_parts, buf2, tag2).ok());
    EXPECT_EQ(buf2, v.ciphertext);
    EXPECT_EQ(tag2, v.tag);
    ASSERT_TRUE(g.open(v.iv, aad_parts, buf2, tag2).ok());
    EXPECT_EQ(buf2, v.plaintext);
  }
}

TEST(AesGcm, SpecVectorsOpenRejectsTampering) {
  for (const auto& v : spec_vectors()) {
    SCOPED_TRACE(v.name);
    auto g = must_gcm(v.key);
    auto expect_reject = [&](const Bytes& iv, const Bytes& aad, const Bytes& ct, const Bytes& tag,
                             const char* what) {
      Bytes buf = ct;
      auto st = g.open(iv, aad, buf, tag);
      ASSERT_FALSE(st.ok()) << what;
      EXPECT_EQ(st.error(), CryptoError::kAuthFailed) << what;
      EXPECT_EQ(buf, Bytes(ct.size(), 0)) << what << ": output must be wiped";
    };
    for (std::size_t bit = 0; bit < 128; bit += 5) {
      Bytes t = v.tag;
      t[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      expect_reject(v.iv, v.aad, v.ciphertext, t, "flipped tag bit");
    }
    for (std::size_t i = 0; i < v.ciphertext.size(); i += 7) {
      Bytes c = v.ciphertext;
      c[i] ^= 0x04;
      expect_reject(v.iv, v.aad, c, v.tag, "flipped ciphertext bit");
    }
    if (!v.ciphertext.empty()) {
      expect_reject(v.iv, v.aad, Bytes(v.ciphertext.begin(), v.ciphertext.end() - 1), v.tag, "short ciphertext");
    }
    for (std::size_t i = 0; i < v.aad.size(); i += 3) {
      Bytes a = v.aad;
      a[i] ^= 0x80;
      expect_reject(v.iv, a, v.ciphertext, v.tag, "flipped AAD bit");
    }
    Bytes extra_aad = v.aad;
    extra_aad.push_back(0);
    expect_reject(v.iv, extra_aad, v.ciphertext, v.tag, "extended AAD");
    Bytes iv = v.iv;
    iv[0] ^= 1;
    expect_reject(iv, v.aad, v.ciphertext, v.tag, "wrong IV");
    // Wrong key.
    Bytes k2 = v.key;
    k2.back() ^= 1;
    auto g2 = must_gcm(k2);
    Bytes buf = v.ciphertext;
    EXPECT_FALSE(g2.open(v.iv, v.aad, buf, v.tag).ok());
    // Truncated tags: lengths outside SP 800-38D §5.2.1.2 are refused; a
    // permitted shorter length authenticates only when its bits are right.
    for (std::size_t n : {0u, 1u, 2u, 3u, 5u, 6u, 7u, 9u, 10u, 11u}) {
      Bytes b = v.ciphertext;
      auto st = g.open(v.iv, v.aad, b, ByteSpan(v.tag).first(n));
      ASSERT_FALSE(st.ok()) << n;
      EXPECT_EQ(st.error(), CryptoError::kBadTagLength) << n;
    }
    for (std::size_t n : {4u, 8u, 12u, 13u, 14u, 15u}) {
      Bytes t(v.tag.begin(), v.tag.begin() + static_cast<long>(n));
      Bytes b = v.ciphertext;
      EXPECT_TRUE(g.open(v.iv, v.aad, b, t).ok()) << n;
      EXPECT_EQ(b, v.plaintext);
      t.back() ^= 0x01;
      expect_reject(v.iv, v.aad, v.ciphertext, t, "truncated tag with a wrong bit");
    }
    // A tag longer than 16 bytes is refused.
    Bytes long_tag = v.tag;
    long_tag.push_back(0);
    Bytes b = v.ciphertext;
    EXPECT_FALSE(g.open(v.iv, v.aad, b, long_tag).ok());
  }
}

TEST(AesGcm, IvLengthChangesBetweenMessagesOnOneContext) {
  // Cases 4, 5 and 6 share key, AAD and plaintext and differ only in the IV
  // (96, 64 and 480 bits). Run them on one context in every order: a context
  // must not keep the IV length of the previous message.
  const auto vs = spec_vectors();
  ASSERT_EQ(vs.size(), 12u);
  for (int base : {3, 9}) {  // cases 4-6 (AES-128) and 16-18 (AES-256)
    auto g = must_gcm(vs[static_cast<std::size_t>(base)].key);
    const int orders[][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}, {0, 2, 1}};
    for (const auto& order : orders) {
      for (int k : order) {
        const auto& v = vs[static_cast<std::size_t>(base + k)];
        SCOPED_TRACE(v.name);
        Bytes buf = v.plaintext;
        Bytes tag(16);
        ASSERT_TRUE(g.seal(v.iv, v.aad, buf, tag).ok());
        EXPECT_EQ(buf, v.ciphertext);
        EXPECT_EQ(tag, v.tag);
        ASSERT_TRUE(g.open(v.iv, v.aad, buf, tag).ok());
        EXPECT_EQ(buf, v.plaintext);
      }
    }
  }
}

TEST(AesGcm, ShortTagsAreLeadingBytesOfTheFullTag) {
  const auto vs = spec_vectors();
  ASSERT_FALSE(vs.empty());
  const auto& v = vs[3];
  auto g = must_gcm(v.key);
  for (std::size_t n : {4u, 8u, 12u, 13u, 14u, 15u, 16u}) {
    Bytes buf = v.plaintext;
    Bytes tag(n);
    ASSERT_TRUE(g.seal(v.iv, v.aad, buf, tag).ok()) << n;
    EXPECT_EQ(tag, Bytes(v.tag.begin(), v.tag.begin() + static_cast<long>(n)));
  }
  for (std::size_t n : {0u, 1u, 3u, 7u, 11u, 17u}) {
    Bytes buf = v.plaintext;
    Bytes tag(n);
    auto st = g.seal(v.iv, v.aad, buf, tag);
    ASSERT_FALSE(st.ok()) << n;
    EXPECT_EQ(st.error(), CryptoError::kBadTagLength);
  }
}

TEST(AesGcm, RejectsBadKeysAndNonces) {
  for (std::size_t n : {0u, 8u, 15u, 17u, 24u, 31u, 33u}) {
    auto g = AesGcm::create(Bytes(n, 1));
    ASSERT_FALSE(g.ok()) << n;
    EXPECT_EQ(g.error(), CryptoError::kBadKeyLength);
  }
  auto g = must_gcm(Bytes(16, 2));
  Bytes data(10), tag(16);
  auto st = g.seal(ByteSpan{}, ByteSpan{}, data, tag);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), CryptoError::kBadNonceLength);
  auto st2 = g.open(Bytes(129, 0), ByteSpan{}, data, tag);
  ASSERT_FALSE(st2.ok());
  EXPECT_EQ(st2.error(), CryptoError::kBadNonceLength);
}

TEST(AesGcm, MoveKeepsTheKey) {
  const auto vs = spec_vectors();
  ASSERT_FALSE(vs.empty());
  const auto& v = vs[2];
  auto a = must_gcm(v.key);
  AesGcm b(std::move(a));
  auto c = must_gcm(Bytes(16, 0));
  c = std::move(b);
  Bytes buf = v.plaintext;
  Bytes tag(16);
  ASSERT_TRUE(c.seal(v.iv, v.aad, buf, tag).ok());
  EXPECT_EQ(tag, v.tag);
}

TEST(AesGmac, SpecVectorsWithEmptyPlaintext) {
  int n = 0;
  for (const auto& v : spec_vectors()) {
    if (!v.plaintext.empty()) continue;
    ++n;
    auto g = AesGmac::create(v.key);
    ASSERT_TRUE(g.ok());
    Bytes tag(16);
    ASSERT_TRUE(g.value().compute(v.iv, v.aad, tag).ok());
    EXPECT_EQ(tag, v.tag) << v.name;
    const ByteSpan parts[1] = {v.aad};
    EXPECT_TRUE(g.value().verify(v.iv, parts, v.tag));
  }
  EXPECT_EQ(n, 2);  // cases 1 and 13
}

TEST(AesGmacAndGcm, Ieee8021aeAnnexCFrames) {
  const auto vs = macsec_vectors();
  ASSERT_GE(vs.size(), 32u + 16u);
  int integrity = 0, confidentiality = 0, negative = 0;
  for (const auto& v : vs) {
    SCOPED_TRACE(v.id);
    if (v.integrity) {
      auto g = AesGmac::create(v.key);
      ASSERT_TRUE(g.ok());
      auto& gmac = g.value();
      const ByteSpan parts[1] = {v.aad};
      Bytes tag(16);
      ASSERT_TRUE(gmac.compute(v.iv, parts, tag).ok());
      if (v.positive) {
        ++integrity;
        EXPECT_EQ(tag, v.icv);
        EXPECT_TRUE(gmac.verify(v.iv, parts, v.icv));
        // Split AAD (header | user data) gives the same ICV.
        const ByteSpan split[2] = {ByteSpan(v.aad).first(20), ByteSpan(v.aad).subspan(20)};
        EXPECT_TRUE(gmac.verify(v.iv, split, v.icv));
        Bytes bad = v.icv;
        bad[15] ^= 1;
        EXPECT_FALSE(gmac.verify(v.iv, parts, bad));
        EXPECT_FALSE(gmac.verify(v.iv, parts, ByteSpan{}));
      } else {
        ++negative;
        EXPECT_FALSE(gmac.verify(v.iv, parts, v.icv));
      }
    } else {
      auto g = must_gcm(v.key);
      Bytes buf = v.ciphertext;
      auto st = g.open(v.iv, v.aad, buf, v.icv);
      if (v.positive) {
        ++confidentiality;
        ASSERT_TRUE(st.ok());
        EXPECT_EQ(buf, v.plaintext);
        Bytes tag(16);
        ASSERT_TRUE(g.seal(v.iv, v.aad, buf, tag).ok());
        EXPECT_EQ(buf, v.ciphertext);
        EXPECT_EQ(tag, v.icv);
      } else {
        ++negative;
        ASSERT_FALSE(st.ok());
        EXPECT_EQ(st.error(), CryptoError::kAuthFailed);
      }
    }
  }
  EXPECT_EQ(integrity, 16 + 3);
  EXPECT_EQ(confidentiality, 16 + 13);
  EXPECT_EQ(negative, 12);  // 13 negative frames, one of them untagged
}

TEST(AesGmac, RejectsBadKeysAndTags) {
  auto g = AesGmac::create(Bytes(20, 0));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error(), CryptoError::kBadKeyLength);
  auto ok = AesGmac::create(Bytes(32, 0));
  ASSERT_TRUE(ok.ok());
  const Bytes iv(12, 0), msg(5, 1);
  const ByteSpan parts[1] = {msg};
  Bytes tag(17);
  EXPECT_FALSE(ok.value().compute(iv, parts, tag).ok());
  EXPECT_FALSE(ok.value().verify(iv, parts, tag));
  EXPECT_FALSE(ok.value().verify(iv, parts, ByteSpan{}));
}

}  // namespace
}  // namespace layersec::crypto
