// SecY behaviour beyond the published vectors: round trips over every suite
// and option, AN rotation, PN exhaustion, validateFrames modes, every MIB
// counter, clear-tag VLAN coverage, and bad input of every kind.
#include "layersec/macsec/secy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "layersec/base/hex.h"

namespace layersec::macsec {
namespace {

const std::uint8_t kDa[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x10};
const std::uint8_t kSa[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
const Sci kTxSci = Sci::from_parts(kSa, 1);

std::vector<std::uint8_t> key_for(CipherSuite s, std::uint8_t seed) {
  std::vector<std::uint8_t> k(sak_size(s));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return k;
}

SaKeys keys_of(const std::vector<std::uint8_t>& k, Ssci ssci = 0x01020304) {
  SaKeys keys;
  keys.sak = k;
  keys.ssci = ssci;
  for (std::size_t i = 0; i < kSaltSize; ++i) keys.salt[i] = static_cast<std::uint8_t>(0xA0 + i);
  return keys;
}

// DA SA [tags] EtherType 0x0800 payload(n)
std::vector<std::uint8_t> plain_frame(std::size_t payload, const std::vector<std::uint8_t>& tags = {}) {
  std::vector<std::uint8_t> f(kDa, kDa + 6);
  f.insert(f.end(), kSa, kSa + 6);
  f.insert(f.end(), tags.begin(), tags.end());
  f.push_back(0x08);
  f.push_back(0x00);
  for (std::size_t i = 0; i < payload; ++i) f.push_back(static_cast<std::uint8_t>(i * 7 + 1));
  return f;
}

struct Pair {
  SecY tx;
  SecY rx;
};

// A transmitting and a receiving SecY with the same config and one SA (AN 0).
Pair make_pair(SecYConfig c, std::uint64_t next_pn = 1) {
  c.sci = kTxSci;
  Pair p{SecY(c), SecY([&] {
           SecYConfig r = c;
           r.sci = Sci{0x0A00000000000001ULL};
           return r;
         }())};
  const auto k = key_for(c.suite, 1);
  EXPECT_TRUE(p.tx.install_tx_sa(0, keys_of(k), next_pn).ok());
  EXPECT_TRUE(p.tx.set_encoding_sa(0).ok());
  EXPECT_TRUE(p.rx.add_rx_sc(kTxSci).ok());
  EXPECT_TRUE(p.rx.install_rx_sa(kTxSci, 0, keys_of(k), next_pn).ok());
  return p;
}

std::vector<std::uint8_t> protect(SecY& y, ByteSpan frame) {
  std::vector<std::uint8_t> out(frame.size() + 40);
  auto n = y.protect(frame, out);
  EXPECT_TRUE(n.ok()) << (n.ok() ? "" : to_string(n.error()));
  out.resize(n.ok() ? *n : 0);
  return out;
}

std::uint64_t in_pkts_total(const SecYStats& s) {
  std::uint64_t t = 0;
  s.for_each([&](std::string_view name, std::uint64_t v) {
    if (name.substr(0, 6) == "InPkts" && name != "InPktsNoSA") t += v;  // NoSA is an aggregate
  });
  return t;
}

TEST(SecY, StatisticsCarryMibNames) {
  SecYStats s;
  std::vector<std::string> names;
  s.for_each([&](std::string_view n, std::uint64_t) { names.emplace_back(n); });
  const std::vector<std::string> expected = {
      "InPktsOK",         "InPktsInvalid",     "InPktsNotValid",    "InPktsLate",
      "InPktsNoSCI",      "InPktsUnknownSCI",  "InPktsNoSA",        "InPktsNotUsingSA",
      "InPktsUnusedSA",   "InPktsUnchecked",   "InPktsDelayed",     "InPktsNoTag",
      "InPktsBadTag",     "InPktsUntagged",    "InOctetsValidated", "InOctetsDecrypted",
      "OutPktsProtected", "OutPktsEncrypted",  "OutPktsUntagged",   "OutPktsTooLong",
      "OutOctetsProtected", "OutOctetsEncrypted",
      // layersec extensions (PN persistence), after the MIB names
      "InPktsPnNotPersisted", "OutPktsPnNotPersisted"};
  EXPECT_EQ(names, expected);
}

// Every suite x protection x offset x SCI encoding x VLAN mode round-trips.
TEST(SecY, RoundTripEverySuiteAndOption) {
  const std::vector<std::uint8_t> one_tag = {0x81, 0x00, 0xA0, 0x05};
  const std::vector<std::uint8_t> two_tags = {0x88, 0xA8, 0x00, 0x64, 0x81, 0x00, 0xE0, 0x07};
  int cases = 0;
  for (auto suite : {CipherSuite::kGcmAes128, CipherSuite::kGcmAes256, CipherSuite::kGcmAesXpn128,
                     CipherSuite::kGcmAesXpn256}) {
    for (bool conf : {false, true}) {
      for (std::uint8_t offset : {0, 30, 50}) {
        if (!conf && offset != 0) continue;
        for (int sci_mode = 0; sci_mode < 3; ++sci_mode) {  // explicit, ES, point-to-point
          for (int vlan = 0; vlan < 4; ++vlan) {  // standard, 1 clear tag, 2 clear tags, covered
            for (std::size_t payload : {0u, 20u, 46u, 100u, 1500u}) {
              SecYConfig c;
              c.suite = suite;
              c.confidentiality = conf;
              c.confidentiality_offset = offset;
              c.include_sci = sci_mode == 0;
              c.use_es = sci_mode == 1;
              c.vlan_mode = vlan == 0 ? VlanMode::kStandard : VlanMode::kClearTag;
              c.clear_tags_in_icv = vlan == 3;
              Pair p = make_pair(c, 0xFFFFFF00ULL);
              const auto& tags = vlan == 1 ? one_tag : two_tags;
              const auto plain = plain_frame(payload, tags);
              auto secure = protect(p.tx, plain);
              ASSERT_FALSE(secure.empty());
              // Clear-tag mode: the tags sit in clear right after SA.
              const std::size_t tag_bytes = vlan == 0 ? 0 : tags.size();
              if (vlan != 0) {
                EXPECT_EQ(0, std::memcmp(secure.data() + 12, tags.data(), tags.size()));
              }
              EXPECT_EQ(load_be16(secure.data() + 12 + tag_bytes), kMacsecEtherType);
              // Confidentiality offset: that many octets of User Data in clear.
              const std::size_t sectag = c.include_sci ? 16 : 8;
              const std::size_t data_start = 12 + tag_bytes + sectag;
              const std::size_t msdu_start = 12 + tag_bytes;
              const std::size_t msdu_size = plain.size() - msdu_start;
              const std::size_t clear = conf ? std::min<std::size_t>(offset, msdu_size) : msdu_size;
              EXPECT_EQ(0, std::memcmp(secure.data() + data_start, plain.data() + msdu_start, clear));
              if (conf && msdu_size > std::size_t{offset} + 16) {
                EXPECT_NE(0, std::memcmp(secure.data() + data_start + offset,
                                         plain.data() + msdu_start + offset, 16));
              }
              auto r = p.rx.validate(secure);
              ASSERT_TRUE(r.ok()) << to_string(r.error()) << " suite " << to_string(suite);
              EXPECT_EQ(r->disposition, Disposition::kOk);
              EXPECT_EQ(r->pn, 0xFFFFFF00ULL);
              EXPECT_EQ(r->sci, kTxSci);
              ASSERT_EQ(to_hex(r->frame), to_hex(plain));
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 4 * 4 * 3 * 4 * 5);
}

TEST(SecY, StandardModeEncryptsTheVlanTag) {
  SecYConfig c;
  Pair p = make_pair(c);
  const std::vector<std::uint8_t> tag = {0x81, 0x00, 0xA0, 0x05};
  const auto plain = plain_frame(60, tag);
  auto secure = protect(p.tx, plain);
  // The tag is not in clear anywhere after the SecTAG.
  EXPECT_EQ(load_be16(secure.data() + 12), kMacsecEtherType);
  EXPECT_NE(0, std::memcmp(secure.data() + 28, tag.data(), tag.size()));
  auto r = p.rx.validate(secure);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_hex(r->frame), to_hex(plain));
}

// Default clear-tag mode: the PCP can be rewritten by a bridge without
// breaking the ICV. With clear_tags_in_icv the same rewrite is NotValid.
TEST(SecY, ClearTagIcvCoverageSetting) {
  for (bool covered : {false, true}) {
    SecYConfig c;
    c.vlan_mode = VlanMode::kClearTag;
    c.clear_tags_in_icv = covered;
    Pair p = make_pair(c);
    const auto plain = plain_frame(80, {0x81, 0x00, 0x20, 0x05});
    auto secure = protect(p.tx, plain);
    secure[14] = 0xE0;  // PCP 1 -> 7
    auto r = p.rx.validate(secure);
    if (covered) {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error(), ReceiveDrop::kNotValid);
    } else {
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->frame[14], 0xE0);  // delivered with the rewritten (unprotected) tag
    }
  }
}

TEST(SecY, AnRotationOverFourSas) {
  SecYConfig c;
  c.suite = CipherSuite::kGcmAes256;
  c.sci = kTxSci;
  SecY tx(c);
  SecYConfig rc = c;
  rc.sci = Sci{0x0A00000000000001ULL};
  SecY rx(rc);
  ASSERT_TRUE(rx.add_rx_sc(kTxSci).ok());
  std::vector<std::vector<std::uint8_t>> keys;
  for (std::uint8_t an = 0; an < 4; ++an) {
    keys.push_back(key_for(c.suite, static_cast<std::uint8_t>(10 + an)));
    ASSERT_TRUE(rx.install_rx_sa(kTxSci, an, keys_of(keys.back())).ok());
  }
  // Rotate 0 -> 1 -> 2 -> 3 -> 0 (new key at AN 0 on the second lap).
  for (int step = 0; step < 6; ++step) {
    const std::uint8_t an = static_cast<std::uint8_t>(step % 4);
    if (step >= 4) {
      keys[an] = key_for(c.suite, static_cast<std::uint8_t>(50 + step));
      ASSERT_TRUE(rx.install_rx_sa(kTxSci, an, keys_of(keys[an])).ok());
    }
    ASSERT_TRUE(tx.install_tx_sa(an, keys_of(keys[an])).ok());
    ASSERT_TRUE(tx.set_encoding_sa(an).ok());
    EXPECT_EQ(tx.encoding_an(), an);
    for (int i = 0; i < 3; ++i) {
      const auto plain = plain_frame(40 + static_cast<std::size_t>(i));
      auto secure = protect(tx, plain);
      EXPECT_EQ(secure[14] & kAnMask, an);
      auto r = rx.validate(secure);
      ASSERT_TRUE(r.ok()) << step;
      EXPECT_EQ(r->an, an);
      EXPECT_EQ(r->pn, static_cast<std::uint64_t>(i + 1));
      EXPECT_EQ(to_hex(r->frame), to_hex(plain));
    }
  }
  EXPECT_EQ(rx.stats().InPktsOK, 18u);
  EXPECT_EQ(tx.stats().OutPktsEncrypted, 18u);
}

TEST(SecY, EncodingSaCannotBeReplacedWhileInUse) {
  SecYConfig c;
  Pair p = make_pair(c);
  const auto k = key_for(c.suite, 9);
  auto st = p.tx.install_tx_sa(0, keys_of(k));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SaError::kEncodingSaBusy);
  EXPECT_TRUE(p.tx.install_tx_sa(1, keys_of(k)).ok());
  auto bad = p.tx.install_tx_sa(4, keys_of(k));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), SaError::kBadAn);
  auto badkey = p.tx.install_tx_sa(2, keys_of(key_for(CipherSuite::kGcmAes256, 1)));
  ASSERT_FALSE(badkey.ok());
  EXPECT_EQ(badkey.error(), SaError::kBadKey);
  auto nosa = p.tx.set_encoding_sa(3);
  ASSERT_FALSE(nosa.ok());
  EXPECT_EQ(nosa.error(), SaError::kNoSuchSa);
  auto pn0 = p.tx.install_tx_sa(2, keys_of(k), 0);
  ASSERT_FALSE(pn0.ok());
  EXPECT_EQ(pn0.error(), SaError::kBadPn);
  auto pnbig = p.tx.install_tx_sa(2, keys_of(k), 0x100000000ULL);
  ASSERT_FALSE(pnbig.ok());
  EXPECT_EQ(pnbig.error(), SaError::kBadPn);
}

// enableTransmit (10.7.22): a disabled encoding SA protects nothing and uses
// no PN; enabled again it continues at the PN it had; a disabled SA may be
// replaced (MKA installs its next SA disabled, then enables it).
TEST(SecY, DisabledTransmitSaProtectsNothing) {
  SecYConfig c;
  Pair p = make_pair(c);
  const auto frame = plain_frame(40);
  (void)protect(p.tx, frame);
  ASSERT_TRUE(p.tx.enable_tx_sa(0, false).ok());
  EXPECT_FALSE(p.tx.tx_sa_status(0).enabled);
  EXPECT_TRUE(p.tx.new_sa_needed());
  std::vector<std::uint8_t> out(frame.size() + 40);
  auto n = p.tx.protect(frame, out);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error(), ProtectError::kNoTransmitSa);
  EXPECT_EQ(p.tx.tx_sa_status(0).next_pn, 2U);
  ASSERT_TRUE(p.tx.enable_tx_sa(0, true).ok());
  auto secure = protect(p.tx, frame);
  auto r = p.rx.validate(secure);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pn, 2U);
  // Disabled, the encoding SA may be replaced by a new key.
  ASSERT_TRUE(p.tx.enable_tx_sa(0, false).ok());
  EXPECT_TRUE(p.tx.install_tx_sa(0, keys_of(key_for(c.suite, 5))).ok());
  EXPECT_EQ(p.tx.enable_tx_sa(2, true).error(), SaError::kNoSuchSa);
  EXPECT_EQ(p.tx.enable_tx_sa(4, true).error(), SaError::kBadAn);
}

// 10.5.2: the last PN is used once; then the SA stops and asks for a new SA.
TEST(SecY, PnExhaustionStopsTheSaAndNeverWraps) {
  for (auto suite : {CipherSuite::kGcmAes128, CipherSuite::kGcmAesXpn256}) {
    SCOPED_TRACE(to_string(suite));
    SecYConfig c;
    c.suite = suite;
    const std::uint64_t last = max_pn(suite);
    Pair p = make_pair(c, last - 1);
    EXPECT_TRUE(p.tx.new_sa_needed());  // beyond the rekey threshold already
    const auto plain = plain_frame(64);
    auto f1 = protect(p.tx, plain);
    auto f2 = protect(p.tx, plain);
    EXPECT_TRUE(p.tx.tx_sa_status(0).exhausted);
    std::vector<std::uint8_t> out(200);
    auto f3 = p.tx.protect(plain, out);
    ASSERT_FALSE(f3.ok());
    EXPECT_EQ(f3.error(), ProtectError::kPnExhausted);
    auto again = p.tx.protect(plain, out);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error(), ProtectError::kPnExhausted);
    EXPECT_TRUE(p.tx.new_sa_needed());
    EXPECT_EQ(p.tx.stats().OutPktsEncrypted, 2u);
    // The receiver takes both, then nothing more from this SA.
    auto r1 = p.rx.validate(f1);
    ASSERT_TRUE(r1.ok());
    EXPECT_EQ(r1->pn, last - 1);
    auto copy = f2;
    auto r2 = p.rx.validate(f2);
    ASSERT_TRUE(r2.ok());
    EXPECT_EQ(r2->pn, last);
    auto r3 = p.rx.validate(copy);
    ASSERT_FALSE(r3.ok());
    EXPECT_EQ(r3.error(), ReceiveDrop::kLate);
    // A new SA (AN 1) resumes transmission at PN 1.
    const auto k = key_for(suite, 2);
    ASSERT_TRUE(p.tx.install_tx_sa(1, keys_of(k)).ok());
    ASSERT_TRUE(p.tx.set_encoding_sa(1).ok());
    EXPECT_FALSE(p.tx.new_sa_needed());
    ASSERT_TRUE(p.rx.install_rx_sa(kTxSci, 1, keys_of(k)).ok());
    auto f4 = protect(p.tx, plain);
    auto r4 = p.rx.validate(f4);
    ASSERT_TRUE(r4.ok());
    EXPECT_EQ(r4->pn, 1u);
    EXPECT_EQ(r4->an, 1);
  }
}

TEST(SecY, RekeyThresholdSignalsEarly) {
  SecYConfig c;
  c.pn_rekey_threshold = 5;
  Pair p = make_pair(c);
  const auto plain = plain_frame(10);
  for (int i = 1; i < 5; ++i) {
    EXPECT_FALSE(p.tx.new_sa_needed()) << i;
    protect(p.tx, plain);
  }
  EXPECT_TRUE(p.tx.new_sa_needed());
  EXPECT_FALSE(p.tx.tx_sa_status(0).exhausted);
}

TEST(SecY, NoTransmitSaAndUntaggedAndTooLong) {
  SecYConfig c;
  c.sci = kTxSci;
  SecY y(c);
  const auto plain = plain_frame(100);
  std::vector<std::uint8_t> out(300);
  auto r = y.protect(plain, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), ProtectError::kNoTransmitSa);
  EXPECT_TRUE(y.new_sa_needed());

  SecYConfig u = c;
  u.protect_frames = false;
  SecY plainy(u);
  auto n = plainy.protect(plain, out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, plain.size());
  EXPECT_EQ(plainy.stats().OutPktsUntagged, 1u);

  SecYConfig l = c;
  l.max_frame_size = plain.size() + 31;  // one octet short of SecTAG(16) + ICV(16)
  Pair p = make_pair(l);
  auto t = p.tx.protect(plain, out);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), ProtectError::kTooLong);
  EXPECT_EQ(p.tx.stats().OutPktsTooLong, 1u);
  EXPECT_EQ(p.tx.tx_sa_status(0).next_pn, 1u);  // no PN consumed

  std::vector<std::uint8_t> small(plain.size() + 31);
  SecYConfig d = c;
  Pair q = make_pair(d);
  auto s = q.tx.protect(plain, small);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), ProtectError::kBufferTooSmall);
  auto tiny = q.tx.protect(ByteSpan(plain).first(13), out);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error(), ProtectError::kFrameTooShort);
}

TEST(SecY, EsWithoutSciRequiresMatchingSource) {
  SecYConfig c;
  c.include_sci = false;
  c.use_es = true;
  Pair p = make_pair(c);
  auto plain = plain_frame(50);
  plain[11] ^= 1;  // a different source address than the SCI's
  std::vector<std::uint8_t> out(200);
  auto r = p.tx.protect(plain, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), ProtectError::kSourceNotSci);
  SecYConfig bad = c;
  bad.sci = Sci{0x0211223344550002ULL};
  EXPECT_THROW(SecY{bad}, std::invalid_argument);
  SecYConfig off = SecYConfig{};
  off.confidentiality_offset = 10;
  EXPECT_THROW(SecY{off}, std::invalid_argument);
}

// Integrity-only frame with a broken ICV under each validateFrames mode.
TEST(SecY, ValidateFramesModesOnIcvFailure) {
  for (auto mode : {ValidateFrames::kStrict, ValidateFrames::kCheck, ValidateFrames::kDisabled}) {
    SCOPED_TRACE(to_string(mode));
    SecYConfig c;
    c.confidentiality = false;
    c.validate_frames = mode;
    Pair p = make_pair(c);
    const auto plain = plain_frame(70);
    auto secure = protect(p.tx, plain);
    secure[40] ^= 0x01;  // user data octet
    auto r = p.rx.validate(secure);
    const auto& s = p.rx.stats();
    EXPECT_EQ(in_pkts_total(s), 1u);
    if (mode == ValidateFrames::kStrict) {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error(), ReceiveDrop::kNotValid);
      EXPECT_EQ(s.InPktsNotValid, 1u);
    } else if (mode == ValidateFrames::kCheck) {
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->disposition, Disposition::kInvalid);
      EXPECT_FALSE(r->verified());
      EXPECT_EQ(s.InPktsInvalid, 1u);
    } else {
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->disposition, Disposition::kUnchecked);
      EXPECT_FALSE(r->verified());
      EXPECT_EQ(s.InPktsUnchecked, 1u);
    }
    EXPECT_EQ(s.InOctetsValidated, 0u);
    EXPECT_EQ(p.rx.rx_sa_status(kTxSci, 0).next_pn, 1u);  // no state change
  }
}

// Encrypted frames are always checked; a bad ICV is NotValid in every mode.
TEST(SecY, EncryptedFramesAreCheckedInEveryMode) {
  for (auto mode : {ValidateFrames::kStrict, ValidateFrames::kCheck, ValidateFrames::kDisabled}) {
    SecYConfig c;
    c.validate_frames = mode;
    Pair p = make_pair(c);
    auto good = protect(p.tx, plain_frame(70));
    auto bad = protect(p.tx, plain_frame(70));
    bad[bad.size() - 1] ^= 0x80;  // ICV
    auto rb = p.rx.validate(bad);
    ASSERT_FALSE(rb.ok());
    EXPECT_EQ(rb.error(), ReceiveDrop::kNotValid);
    auto rg = p.rx.validate(good);
    ASSERT_TRUE(rg.ok());
    EXPECT_EQ(rg->disposition, Disposition::kOk);
    EXPECT_EQ(p.rx.stats().InOctetsDecrypted, 72u);
  }
}

TEST(SecY, UnknownSciCounters) {
  for (auto mode : {ValidateFrames::kStrict, ValidateFrames::kCheck}) {
    for (bool conf : {false, true}) {
      SecYConfig c;
      c.validate_frames = mode;
      c.confidentiality = conf;
      Pair p = make_pair(c);
      ASSERT_TRUE(p.rx.remove_rx_sc(kTxSci).ok());
      ASSERT_TRUE(p.rx.add_rx_sc(Sci{0x0A0B0C0D0E0F0001ULL}).ok());
      const auto plain = plain_frame(60);
      auto secure = protect(p.tx, plain);
      auto r = p.rx.validate(secure);
      const auto& s = p.rx.stats();
      EXPECT_EQ(in_pkts_total(s), 1u);
      if (mode == ValidateFrames::kStrict || conf) {
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error(), ReceiveDrop::kNoSci);
        EXPECT_EQ(s.InPktsNoSCI, 1u);
      } else {
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r->disposition, Disposition::kUnknownSci);
        EXPECT_EQ(to_hex(r->frame), to_hex(plain));  // integrity-only: data is plain
        EXPECT_EQ(s.InPktsUnknownSCI, 1u);
        EXPECT_EQ(s.InPktsNoSA, 1u);
      }
    }
  }
}

TEST(SecY, SaNotInUseCounters) {
  for (auto mode : {ValidateFrames::kStrict, ValidateFrames::kCheck}) {
    for (bool conf : {false, true}) {
      for (bool remove : {false, true}) {
        SecYConfig c;
        c.validate_frames = mode;
        c.confidentiality = conf;
        Pair p = make_pair(c);
        if (remove) {
          ASSERT_TRUE(p.rx.remove_rx_sa(kTxSci, 0).ok());
        } else {
          ASSERT_TRUE(p.rx.enable_rx_sa(kTxSci, 0, false).ok());
        }
        auto secure = protect(p.tx, plain_frame(60));
        auto r = p.rx.validate(secure);
        const auto& s = p.rx.stats();
        EXPECT_EQ(in_pkts_total(s), 1u);
        if (mode == ValidateFrames::kStrict || conf) {
          ASSERT_FALSE(r.ok());
          EXPECT_EQ(r.error(), ReceiveDrop::kNotUsingSa);
          EXPECT_EQ(s.InPktsNotUsingSA, 1u);
        } else {
          ASSERT_TRUE(r.ok());
          EXPECT_EQ(r->disposition, Disposition::kUnusedSa);
          EXPECT_EQ(s.InPktsUnusedSA, 1u);
          EXPECT_EQ(s.InPktsNoSA, 1u);
        }
      }
    }
  }
}

TEST(SecY, ReplayProtectOffCountsDelayed) {
  SecYConfig c;
  c.replay_protect = false;
  Pair p = make_pair(c);
  auto f1 = protect(p.tx, plain_frame(50));
  auto f2 = protect(p.tx, plain_frame(50));
  ASSERT_TRUE(p.rx.validate(f2).ok());
  auto r = p.rx.validate(f1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->disposition, Disposition::kDelayed);
  EXPECT_TRUE(r->verified());
  EXPECT_EQ(p.rx.stats().InPktsDelayed, 1u);
  EXPECT_EQ(p.rx.stats().InPktsOK, 1u);
  // Turning replay protection on at run time makes the same order late.
  p.rx.set_replay_protect(true, 0);
  auto f3 = protect(p.tx, plain_frame(50));
  auto f4 = protect(p.tx, plain_frame(50));
  ASSERT_TRUE(p.rx.validate(f4).ok());
  auto late = p.rx.validate(f3);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error(), ReceiveDrop::kLate);
}

TEST(SecY, PointToPointWithoutSciOrEs) {
  SecYConfig c;
  c.include_sci = false;
  c.use_es = false;
  Pair p = make_pair(c);
  const auto plain = plain_frame(30);
  auto secure = protect(p.tx, plain);
  EXPECT_EQ(secure[14] & (kTciEs | kTciSc), 0);
  auto copy = secure;
  auto r = p.rx.validate(secure);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_hex(r->frame), to_hex(plain));
  // With two receive SCs the implicit SCI is ambiguous: NoSCI.
  ASSERT_TRUE(p.rx.add_rx_sc(Sci{0x0A0B0C0D0E0F0001ULL}).ok());
  auto r2 = p.rx.validate(copy);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error(), ReceiveDrop::kNoSci);
}

TEST(SecY, ShortLengthDisagreeingWithFrameIsBadTag) {
  SecYConfig c;
  Pair p = make_pair(c);
  auto secure = protect(p.tx, plain_frame(20));  // 22 octets of Secure Data: SL = 22
  ASSERT_EQ(secure[15], 22);
  for (int sl : {0, 1, 21, 23, 47}) {
    auto f = secure;
    f[15] = static_cast<std::uint8_t>(sl);
    auto r = p.rx.validate(f);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), ReceiveDrop::kBadTag);
    EXPECT_EQ(p.rx.last_sectag_error(), SecTagError::kShortLengthMismatch);
  }
  EXPECT_EQ(p.rx.stats().InPktsBadTag, 5u);
}

// A MAC pads a short secure frame to 60 octets; SL locates the ICV (9.7).
TEST(SecY, MinimumSizePaddingIsRemovedBySl) {
  SecYConfig c;
  c.include_sci = false;
  c.use_es = true;
  Pair p = make_pair(c);
  const auto plain = plain_frame(4);  // MSDU 6 octets: secure frame 42 octets
  auto secure = protect(p.tx, plain);
  ASSERT_EQ(secure.size(), 42u);
  EXPECT_EQ(secure[15], 6);  // SL
  auto padded = secure;
  padded.resize(kMinFrameSize, 0x00);
  auto r = p.rx.validate(padded);
  ASSERT_TRUE(r.ok()) << to_string(r.error());
  EXPECT_EQ(to_hex(r->frame), to_hex(plain));
  // Octets beyond SL + ICV in a frame longer than the minimum: BadTag.
  auto longer = protect(p.tx, plain);
  longer.resize(kMinFrameSize + 1, 0x00);
  auto r2 = p.rx.validate(longer);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error(), ReceiveDrop::kBadTag);
  EXPECT_EQ(p.rx.last_sectag_error(), SecTagError::kShortLengthMismatch);
}

// Every truncation and every single-bit flip of a valid secure frame is
// dropped (or, for bit flips that turn the EtherType into something else,
// delivered untagged in non-Strict modes), counted exactly once, never
// accepted as valid, and leaves the SA state untouched.
TEST(SecY, TruncationsAndBitFlipsNeverValidate) {
  for (auto mode : {ValidateFrames::kStrict, ValidateFrames::kCheck}) {
    SecYConfig c;
    c.validate_frames = mode;
    Pair p = make_pair(c);
    const auto secure = protect(p.tx, plain_frame(64));
    std::uint64_t frames = 0;
    for (std::size_t n = 0; n < secure.size(); ++n) {
      auto f = std::vector<std::uint8_t>(secure.begin(), secure.begin() + static_cast<std::ptrdiff_t>(n));
      auto r = p.rx.validate(f);
      ++frames;
      EXPECT_TRUE(!r.ok() || !r->verified()) << n;
    }
    for (std::size_t bit = 0; bit < secure.size() * 8; ++bit) {
      auto f = secure;
      f[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      auto r = p.rx.validate(f);
      ++frames;
      // Flips inside DA/SA hit the AAD: NotValid. None may verify.
      EXPECT_TRUE(!r.ok() || !r->verified()) << bit;
    }
    EXPECT_EQ(in_pkts_total(p.rx.stats()), frames);
    EXPECT_EQ(p.rx.stats().InPktsOK, 0u);
    EXPECT_EQ(p.rx.rx_sa_status(kTxSci, 0).next_pn, 1u);
    auto ok = secure;
    auto r = p.rx.validate(ok);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->disposition, Disposition::kOk);
  }
}

TEST(SecY, RandomFramesAreCountedOnceAndNeverCrash) {
  SecYConfig c;
  c.vlan_mode = VlanMode::kClearTag;
  c.validate_frames = ValidateFrames::kCheck;
  Pair p = make_pair(c);
  std::mt19937 rng(5);
  std::uint64_t frames = 0;
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::uint8_t> f(rng() % 120);
    for (auto& b : f) b = static_cast<std::uint8_t>(rng());
    if (f.size() > 20 && (i % 2) == 0) {  // make most of them look like MACsec
      f[12] = 0x88;
      f[13] = 0xE5;
      f[14] = static_cast<std::uint8_t>(f[14] & 0x7F);
    }
    auto r = p.rx.validate(f);
    ++frames;
    if (r.ok()) {
      EXPECT_FALSE(r->verified());
    }
  }
  EXPECT_EQ(in_pkts_total(p.rx.stats()), frames);
}

TEST(SecY, XpnFramesWithZeroPnFieldAreValid) {
  SecYConfig c;
  c.suite = CipherSuite::kGcmAesXpn128;
  Pair p = make_pair(c, 0x100000000ULL);  // low 32 bits zero
  const auto plain = plain_frame(40);
  auto secure = protect(p.tx, plain);
  EXPECT_EQ(load_be32(secure.data() + 16), 0u);
  auto r = p.rx.validate(secure);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->pn, 0x100000000ULL);
}

TEST(SecY, XpnUsesSsciAndSaltNotSci) {
  // Two transmitters sharing a SAK are separated by their SSCI.
  SecYConfig c;
  c.suite = CipherSuite::kGcmAesXpn128;
  const auto k = key_for(c.suite, 3);
  auto a = SaCipher::create(c.suite, keys_of(k, 1), Sci{1});
  auto b = SaCipher::create(c.suite, keys_of(k, 2), Sci{1});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_NE(to_hex(a->iv(5)), to_hex(b->iv(5)));
  auto a2 = SaCipher::create(c.suite, keys_of(k, 1), Sci{99});
  ASSERT_TRUE(a2.ok());
  EXPECT_EQ(to_hex(a->iv(5)), to_hex(a2->iv(5)));
  // (SSCI || PN) XOR salt
  EXPECT_EQ(to_hex(a->iv(0x0102030405060708ULL)), "a0a1a2a2a5a7a5a3adafada3");
  auto g = SaCipher::create(CipherSuite::kGcmAes128, keys_of(k), Sci{0x1122334455660001ULL});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(to_hex(g->iv(0xDEADBEEF)), "112233445566000" "1deadbeef");
}

}  // namespace
}  // namespace layersec::macsec
