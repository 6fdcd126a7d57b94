// SecTAG codec (802.1AE-2018 clause 9): encode/parse round trips, every
// rejection of 9.12, and the secure-frame length rules.
#include "layersec/macsec/sectag.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/base/hex.h"

namespace layersec::macsec {
namespace {

std::vector<std::uint8_t> encode(const SecTag& t) {
  std::vector<std::uint8_t> b(t.size());
  ByteWriter w(b);
  EXPECT_TRUE(encode_sectag(w, t));
  EXPECT_EQ(w.size(), b.size());
  return b;
}

TEST(SecTag, EncodesAnnexCExample) {
  SecTag t;
  t.sc = true;
  t.an = 2;
  t.sl = 42;
  t.pn = 0xB2C28465;
  t.sci = Sci{0x12153524C0895E81ULL};
  EXPECT_EQ(to_hex(encode(t)), "88e5222ab2c2846512153524c0895e81");
  SecTag u;
  u.es = true;
  u.e = u.c = true;
  u.an = 1;
  u.pn = 0x2E58495C;
  EXPECT_EQ(to_hex(encode(u)), "88e54d002e58495c");
}

// Every TCI/AN octet: valid ones round-trip, invalid ones give the reason
// of 9.12 in the order the clause lists them.
TEST(SecTag, AllTciValuesExhaustively) {
  int valid = 0;
  for (int tci = 0; tci < 256; ++tci) {
    for (bool with_sci : {false, true}) {
      std::vector<std::uint8_t> b = {0x88, 0xE5, static_cast<std::uint8_t>(tci), 0x00,
                                     0x00, 0x00, 0x00, 0x07};
      if (with_sci) {
        for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(0x10 + i));
      }
      const bool sc = (tci & kTciSc) != 0;
      ByteReader r(b);
      auto t = parse_sectag(r);
      const bool v = (tci & kTciV) != 0;
      const bool es = (tci & kTciEs) != 0;
      const bool scb = (tci & kTciScb) != 0;
      const bool e = (tci & kTciE) != 0;
      const bool c = (tci & kTciC) != 0;
      if (v) {
        ASSERT_FALSE(t.ok());
        EXPECT_EQ(t.error(), SecTagError::kVersion);
      } else if (es && sc) {
        ASSERT_FALSE(t.ok());
        EXPECT_EQ(t.error(), SecTagError::kEsWithSc);
      } else if (scb && sc) {
        ASSERT_FALSE(t.ok());
        EXPECT_EQ(t.error(), SecTagError::kScbWithSc);
      } else if (e && !c) {
        ASSERT_FALSE(t.ok());
        EXPECT_EQ(t.error(), SecTagError::kEncryptedNotChanged);
      } else if (c && !e) {
        ASSERT_FALSE(t.ok());
        EXPECT_EQ(t.error(), SecTagError::kChangedNotEncrypted);
      } else if (sc && !with_sci) {
        ASSERT_FALSE(t.ok());
        EXPECT_EQ(t.error(), SecTagError::kTooShort);
      } else {
        ASSERT_TRUE(t.ok()) << tci;
        EXPECT_EQ(t->tci_an(), tci);
        EXPECT_EQ(t->pn, 7u);
        EXPECT_EQ(r.position(), sc ? 16u : 8u);
        if (sc) {
          EXPECT_EQ(t->sci.value, 0x1011121314151617ULL);
        }
        // round trip
        EXPECT_EQ(to_hex(encode(*t)), to_hex(ByteSpan(b).first(t->size())));
        ++valid;
      }
    }
  }
  // V=0; (E,C) in {00,11}; not (SC and (ES or SCB)); AN any:
  // SC=1: ES=SCB=0 -> 2*4 = 8 TCI values; SC=0: 4 (ES,SCB) * 2 * 4 = 32.
  // SC=0 values parse with and without trailing bytes (40 * 2 = 80 minus
  // the SC=1 ones without SCI): 32*2 + 8 = 72.
  EXPECT_EQ(valid, 72);
}

TEST(SecTag, ShortLengthOctetRules) {
  for (int sl = 0; sl < 256; ++sl) {
    std::vector<std::uint8_t> b = {0x88, 0xE5, 0x0C, static_cast<std::uint8_t>(sl), 0, 0, 0, 1};
    ByteReader r(b);
    auto t = parse_sectag(r);
    if (sl & 0xC0) {
      ASSERT_FALSE(t.ok());
      EXPECT_EQ(t.error(), SecTagError::kReservedBits);
    } else if (sl >= 48) {
      ASSERT_FALSE(t.ok());
      EXPECT_EQ(t.error(), SecTagError::kShortLengthTooLarge);
    } else {
      ASSERT_TRUE(t.ok());
      EXPECT_EQ(t->sl, sl);
    }
  }
}

TEST(SecTag, PnZeroOnlyWithXpn) {
  const std::vector<std::uint8_t> b = {0x88, 0xE5, 0x0C, 0, 0, 0, 0, 0};
  ByteReader r1(b);
  auto t1 = parse_sectag(r1);
  ASSERT_FALSE(t1.ok());
  EXPECT_EQ(t1.error(), SecTagError::kPnZero);
  ByteReader r2(b);
  auto t2 = parse_sectag(r2, SecTagParseOptions{true});
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->pn, 0u);
}

TEST(SecTag, WrongEtherTypeAndTruncation) {
  const std::vector<std::uint8_t> b = {0x88, 0xE6, 0x0C, 0, 0, 0, 0, 1};
  ByteReader r(b);
  auto t = parse_sectag(r);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), SecTagError::kNotMacsec);
  const std::vector<std::uint8_t> full = {0x88, 0xE5, 0x2C, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8};
  for (std::size_t n = 0; n < full.size(); ++n) {
    ByteReader rr(ByteSpan(full).first(n));
    auto tt = parse_sectag(rr);
    ASSERT_FALSE(tt.ok()) << n;
    EXPECT_EQ(tt.error(), SecTagError::kTooShort) << n;
  }
}

// Builds DA SA [tags] SecTAG data ICV.
std::vector<std::uint8_t> frame_with(std::size_t data_size, std::uint8_t sl,
                                     const std::vector<std::uint8_t>& tags = {}) {
  std::vector<std::uint8_t> f(12, 0xAA);
  f.insert(f.end(), tags.begin(), tags.end());
  const std::vector<std::uint8_t> tag = {0x88, 0xE5, 0x0C, sl, 0, 0, 0, 9};
  f.insert(f.end(), tag.begin(), tag.end());
  f.insert(f.end(), data_size, 0x55);
  f.insert(f.end(), kIcvSize, 0x66);
  return f;
}

TEST(SecTag, SecureDataLengthAgainstShortLength) {
  for (std::size_t n = 1; n < 60; ++n) {
    for (std::uint8_t sl : {std::uint8_t{0}, std::uint8_t{1}, std::uint8_t{20}, std::uint8_t{47}}) {
      const auto f = frame_with(n, sl);
      auto v = locate_secure_frame(f, 0);
      // In a frame of at most 60 octets, octets beyond SL + ICV are padding.
      const bool padded = sl != 0 && n > sl && f.size() <= kMinFrameSize;
      const bool ok = sl != 0 ? (n == sl || padded) : n >= 48;
      ASSERT_EQ(v.ok(), ok) << n << " " << int(sl);
      if (ok) {
        EXPECT_EQ(v->secure_data.size(), padded ? sl : n);
        EXPECT_EQ(v->padding.size(), padded ? n - sl : 0u);
        EXPECT_EQ(v->icv.size(), kIcvSize);
        EXPECT_EQ(v->sectag.size(), 8u);
        EXPECT_EQ(v->addresses.size(), 12u);
      } else {
        EXPECT_EQ(v.error(), SecTagError::kShortLengthMismatch);
      }
    }
  }
  EXPECT_EQ(short_length_for(0), 0);
  EXPECT_EQ(short_length_for(47), 47);
  EXPECT_EQ(short_length_for(48), 0);
  EXPECT_EQ(short_length_for(1500), 0);
}

TEST(SecTag, TooShortFramesAreTyped) {
  const auto f = frame_with(20, 20);
  for (std::size_t n = 0; n < f.size(); ++n) {
    auto v = locate_secure_frame(ByteSpan(f).first(n), 0);
    ASSERT_FALSE(v.ok()) << n;
    if (n >= 14 && n < 20) {
      EXPECT_EQ(v.error(), SecTagError::kTooShort);
    }
  }
}

TEST(SecTag, ClearTagsAreSkippedOnlyInClearTagMode) {
  const std::vector<std::uint8_t> one = {0x81, 0x00, 0xA0, 0x02};
  const std::vector<std::uint8_t> two = {0x88, 0xA8, 0x00, 0x04, 0x81, 0x00, 0x00, 0x02};
  const std::vector<std::uint8_t> three = {0x88, 0xA8, 0x00, 0x04, 0x81, 0x00,
                                           0x00, 0x02, 0x81, 0x00, 0x00, 0x03};
  auto f1 = frame_with(20, 20, one);
  auto f2 = frame_with(20, 20, two);
  auto f3 = frame_with(20, 20, three);
  auto v1 = locate_secure_frame(f1, 2);
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(to_hex(v1->clear_tags), "8100a002");
  auto v2 = locate_secure_frame(f2, 2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(to_hex(v2->clear_tags), "88a8000481000002");
  auto v3 = locate_secure_frame(f3, 2);  // a third tag: EtherType found is 0x8100
  ASSERT_FALSE(v3.ok());
  EXPECT_EQ(v3.error(), SecTagError::kNotMacsec);
  auto s1 = locate_secure_frame(f1, 0);  // standard mode: not a MACsec frame
  ASSERT_FALSE(s1.ok());
  EXPECT_EQ(s1.error(), SecTagError::kNotMacsec);
  EXPECT_EQ(leading_vlan_tags_size(f2, 1), 4u);
  EXPECT_EQ(leading_vlan_tags_size(f2, 2), 8u);
  EXPECT_EQ(leading_vlan_tags_size(ByteSpan(f2).first(14), 2), 0u);
}

TEST(SecTag, SciParts) {
  const std::uint8_t mac[6] = {0x7A, 0xE8, 0xE2, 0xCA, 0x4E, 0xC5};
  const Sci s = Sci::from_parts(mac, 1);
  EXPECT_EQ(s.value, 0x7AE8E2CA4EC50001ULL);
  EXPECT_EQ(s.port(), 1);
  EXPECT_EQ(to_hex(s.mac()), "7ae8e2ca4ec5");
  EXPECT_EQ(to_hex(s.bytes()), "7ae8e2ca4ec50001");
}

}  // namespace
}  // namespace layersec::macsec
