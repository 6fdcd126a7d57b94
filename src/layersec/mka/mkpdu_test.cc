// The MKPDU codec against the eight MKPDUs a real wpa_supplicant 2.10 pair
// exchanged (../shared/vectors/mka/mka_vectors.json: decode, field values,
// ICV, SAK unwrap and byte-exact re-encoding), hand-made frames for every
// parameter set type and every rejection, and truncation / bit flips of the
// real frames (a typed error or a frame that re-encodes, never a crash).
#include "layersec/mka/mkpdu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "layersec/base/hex.h"
#include "support/vectors.h"

namespace layersec::mka {
namespace {

using layersec::testing::hex;
using Bytes = std::vector<std::uint8_t>;

const std::uint64_t kIdGcmAes128 = macsec::cipher_suite_id(macsec::CipherSuite::kGcmAes128);
const std::uint64_t kIdGcmAes256 = macsec::cipher_suite_id(macsec::CipherSuite::kGcmAes256);
const std::uint64_t kIdGcmAesXpn128 = macsec::cipher_suite_id(macsec::CipherSuite::kGcmAesXpn128);
const std::uint64_t kIdGcmAesXpn256 = macsec::cipher_suite_id(macsec::CipherSuite::kGcmAesXpn256);

const nlohmann::json& capture() {
  static const nlohmann::json c = [] {
    const nlohmann::json all = layersec::testing::load_vector_json("mka/mka_vectors.json");
    for (const auto& v : all.at("vectors")) {
      if (v.contains("mkpdus")) return v;
    }
    return nlohmann::json();
  }();
  return c;
}

std::vector<Bytes> real_frames() {
  std::vector<Bytes> out;
  for (const auto& f : capture().at("mkpdus")) out.push_back(hex(f.at("mkpdu_hex").get<std::string>()));
  return out;
}

SecretBytes capture_key(const char* name) { return SecretBytes(hex(capture().at("inputs").at(name).get<std::string>())); }

MemberId mi(const std::string& h) {
  MemberId m{};
  const Bytes b = hex(h);
  std::copy_n(b.begin(), m.size(), m.begin());
  return m;
}

const MemberId kMiA = mi("E40FF668CF8F26E6B1BFF19B");  // priority 10, the key server
const MemberId kMiB = mi("5C3DC1187A027DC8E30D3962");  // priority 20

Result<DecodedMkpdu, MkpduError> decode(const Bytes& f, const DecodeOptions& o = {}) { return decode_mkpdu(f, o); }

// ---------------------------------------------------------------- real frames

TEST(Mkpdu, RealFramesDecodeWithTheRecordedFields) {
  const auto frames = real_frames();
  ASSERT_EQ(frames.size(), 8u);
  const SecretBytes ick = capture_key("derived_ick");
  const SecretBytes kek = capture_key("derived_kek");
  const Bytes ckn = hex(capture().at("inputs").at("ckn").get<std::string>());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i + 1));
    const auto& j = capture().at("mkpdus")[i];
    auto d = decode(frames[i]);
    ASSERT_TRUE(d) << to_string(d.error());
    const Mkpdu& m = d->mkpdu;
    const auto& jb = j.at("basic");
    EXPECT_EQ(m.destination, kPaeGroupAddress);
    EXPECT_EQ(m.eapol_version, 3);
    EXPECT_EQ(m.basic.mka_version, jb.at("version").get<int>());
    EXPECT_EQ(m.basic.key_server_priority, jb.at("ks_priority").get<int>());
    EXPECT_EQ(m.basic.key_server, jb.at("key_server").get<bool>());
    EXPECT_EQ(m.basic.macsec_desired, jb.at("macsec_desired").get<bool>());
    EXPECT_EQ(m.basic.macsec_capability, MacsecCapability::kConfidentiality);
    EXPECT_EQ(m.basic.sci, load_be64(hex(jb.at("sci").get<std::string>()).data()));
    EXPECT_EQ(m.basic.actor_mi, mi(jb.at("actor_mi").get<std::string>()));
    EXPECT_EQ(m.basic.actor_mn, load_be32(hex(jb.at("actor_mn").get<std::string>()).data()));
    EXPECT_EQ(m.basic.ckn, ckn);
    // The SA of the frame is the MAC part of the SCI (both wpa_supplicants use port 1).
    EXPECT_EQ(load_be64(frames[i].data() + 6) >> 16, m.basic.sci >> 16);
    // The ICV: the last 16 octets, over everything before them, verified with the derived ICK.
    EXPECT_EQ(to_hex(d->icv), to_hex(hex(j.at("icv").get<std::string>())));
    EXPECT_EQ(d->icv_covered.data(), frames[i].data());
    EXPECT_EQ(d->icv_covered.size(), frames[i].size() - kIcvSize);
    EXPECT_TRUE(verify_mkpdu_icv(*d, ick));
    EXPECT_FALSE(m.icv_indicator);
    EXPECT_TRUE(m.unknown_sets.empty());
    if (j.contains("distributed_sak")) {
      const auto& js = j.at("distributed_sak");
      ASSERT_TRUE(m.distributed_sak);
      EXPECT_EQ(m.distributed_sak->distributed_an, js.at("dan").get<int>());
      EXPECT_EQ(m.distributed_sak->confidentiality_offset, js.at("conf_offset").get<int>());
      EXPECT_EQ(m.distributed_sak->kn, load_be32(hex(js.at("kn").get<std::string>()).data()));
      EXPECT_FALSE(m.distributed_sak->cipher_suite);  // the default suite, GCM-AES-128
      EXPECT_EQ(m.distributed_sak->wrapped_sak, hex(js.at("wrapped_sak").get<std::string>()));
      auto sak = unwrap_key(kek, m.distributed_sak->wrapped_sak);
      ASSERT_TRUE(sak);
      EXPECT_EQ(fingerprint(*sak), fingerprint(hex(js.at("unwrapped_sak").get<std::string>())));
    } else {
      EXPECT_FALSE(m.distributed_sak);
    }
  }
}

// The parameter sets of each frame, read by hand from the hex in the vectors file.
TEST(Mkpdu, RealFramesCarryTheExpectedSets) {
  const auto frames = real_frames();
  std::vector<Mkpdu> m;
  for (const auto& f : frames) {
    auto d = decode(f);
    ASSERT_TRUE(d);
    m.push_back(d->mkpdu);
  }
  // 1: A alone (basic set only). 2: B lists A as potential peer.
  EXPECT_FALSE(m[0].live_peers || m[0].potential_peers || m[0].sak_use);
  ASSERT_TRUE(m[1].potential_peers);
  EXPECT_FALSE(m[1].live_peers);
  EXPECT_EQ(m[1].potential_peers->peers, (std::vector<PeerEntry>{{kMiA, 1}}));
  EXPECT_EQ(m[1].potential_peers->key_server_ssci, 0);
  // 3: A lists B live and distributes SAK KN 1 in AN 0.
  ASSERT_TRUE(m[2].live_peers);
  EXPECT_EQ(m[2].live_peers->peers, (std::vector<PeerEntry>{{kMiB, 1}}));
  EXPECT_FALSE(m[2].sak_use);
  // 4, 5: B installs it to receive (LRX), then to transmit too (LTX).
  for (int i : {3, 4}) {
    SCOPED_TRACE(i + 1);
    ASSERT_TRUE(m[i].live_peers && m[i].sak_use);
    EXPECT_EQ(m[i].live_peers->peers, (std::vector<PeerEntry>{{kMiA, 2}}));
    const SakUse& u = *m[i].sak_use;
    EXPECT_TRUE(u.has_keys);
    EXPECT_EQ(u.latest, (SakUseKey{kMiA, 1, 1}));
    EXPECT_EQ(u.old, (SakUseKey{MemberId{}, 0, 1}));
    EXPECT_EQ(u.latest_an, 0);
    EXPECT_TRUE(u.latest_rx);
    EXPECT_EQ(u.latest_tx, i == 4);
    EXPECT_FALSE(u.old_tx || u.old_rx || u.plain_tx || u.plain_rx || u.delay_protect);
  }
  // 6: A repeats the SAK with its own SAK use (LTX, LRX).
  ASSERT_TRUE(m[5].sak_use && m[5].distributed_sak && m[5].live_peers);
  EXPECT_TRUE(m[5].sak_use->latest_tx && m[5].sak_use->latest_rx);
  EXPECT_EQ(m[5].sak_use->latest, (SakUseKey{kMiA, 1, 1}));
  // 7, 8: both report KN 1 as the old key in use (OTX, ORX) and no latest key.
  for (int i : {6, 7}) {
    SCOPED_TRACE(i + 1);
    ASSERT_TRUE(m[i].sak_use && m[i].live_peers);
    const SakUse& u = *m[i].sak_use;
    EXPECT_EQ(u.latest, (SakUseKey{MemberId{}, 0, 1}));
    EXPECT_EQ(u.old, (SakUseKey{kMiA, 1, 1}));
    EXPECT_TRUE(u.old_tx && u.old_rx);
    EXPECT_FALSE(u.latest_tx || u.latest_rx);
  }
  EXPECT_EQ(m[6].live_peers->peers, (std::vector<PeerEntry>{{kMiA, 3}}));
  EXPECT_EQ(m[7].live_peers->peers, (std::vector<PeerEntry>{{kMiB, 4}}));
}

TEST(Mkpdu, RealFramesReencodeByteExact) {
  const SecretBytes ick = capture_key("derived_ick");
  for (const auto& f : real_frames()) {
    auto d = decode(f);
    ASSERT_TRUE(d);
    EXPECT_EQ(encoded_size(d->mkpdu), f.size());
    // With the ICK: the ICV we compute is the one wpa_supplicant sent.
    auto with_key = encode_mkpdu(d->mkpdu, ick);
    ASSERT_TRUE(with_key) << to_string(with_key.error());
    EXPECT_EQ(to_hex(*with_key), to_hex(f));
    // With the received ICV, into a buffer of exactly the frame's size.
    Bytes out(f.size());
    auto n = encode_mkpdu_with_icv(d->mkpdu, d->icv, out);
    ASSERT_TRUE(n);
    EXPECT_EQ(*n, f.size());
    EXPECT_EQ(out, f);
    // One octet short: refused, not truncated.
    Bytes small(f.size() - 1);
    auto s = encode_mkpdu_with_icv(d->mkpdu, d->icv, small);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), MkpduError::kBufferTooSmall);
  }
}

TEST(Mkpdu, IcvFailsWithAnotherKeyOrAChangedField) {
  const SecretBytes ick = capture_key("derived_ick");
  const SecretBytes wrong = capture_key("derived_kek");
  auto f = real_frames()[5];
  auto d = decode(f);
  ASSERT_TRUE(d);
  EXPECT_FALSE(verify_mkpdu_icv(*d, wrong));
  EXPECT_FALSE(verify_mkpdu_icv(*d, SecretBytes(Bytes(5, 1))));  // bad ICK length
  // A relabelled key server priority decodes but no longer verifies.
  f[kEthernetHeaderSize + kEapolHeaderSize + 1] = 0;
  auto e = decode(f);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->mkpdu.basic.key_server_priority, 0);
  EXPECT_FALSE(verify_mkpdu_icv(*e, ick));
}

// Every prefix of every real frame is refused with a typed reason; with the
// EAPOL body length patched to match, the walk over the sets is exercised:
// still never a crash, and whatever decodes re-encodes to the same octets.
TEST(Mkpdu, TruncationAtEveryLength) {
  std::size_t refused = 0;
  std::size_t walked = 0;
  for (const auto& f : real_frames()) {
    for (std::size_t len = 0; len < f.size(); ++len) {
      Bytes t(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(len));
      auto d = decode(t);
      ASSERT_FALSE(d) << len;
      const MkpduError e = d.error();
      EXPECT_TRUE(e == MkpduError::kShortFrame || e == MkpduError::kBodyLengthMismatch) << to_string(e);
      ++refused;
      if (len < kEthernetHeaderSize + kEapolHeaderSize) continue;
      store_be16(t.data() + 16, static_cast<std::uint16_t>(len - 18));
      auto p = decode(t);
      ++walked;
      if (p) {
        Bytes out(t.size());
        auto n = encode_mkpdu_with_icv(p->mkpdu, p->icv, out);
        ASSERT_TRUE(n);
        EXPECT_EQ(out, t);
      } else {
        EXPECT_LT(static_cast<std::size_t>(p.error()), kMkpduErrorCount);
      }
    }
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(walked, 900u);
}

// Every single-bit flip of every real frame: a typed error, or a frame that
// decodes and re-encodes to an equal Mkpdu (byte-exact unless the flip hit a
// reserved bit, which is re-encoded as zero).
TEST(Mkpdu, EveryBitFlipOfTheRealFrames) {
  std::size_t decoded = 0;
  std::size_t exact = 0;
  for (const auto& f : real_frames()) {
    for (std::size_t i = 0; i < f.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        Bytes t = f;
        t[i] ^= static_cast<std::uint8_t>(1u << bit);
        auto d = decode(t);
        if (!d) continue;
        ++decoded;
        Bytes out(encoded_size(d->mkpdu));
        auto n = encode_mkpdu_with_icv(d->mkpdu, d->icv, out);
        ASSERT_TRUE(n) << to_string(n.error());
        auto again = decode(out);
        ASSERT_TRUE(again);
        EXPECT_EQ(again->mkpdu, d->mkpdu);
        if (out == t) ++exact;
      }
    }
  }
  EXPECT_GT(decoded, 0u);
  EXPECT_GT(exact, decoded / 2);
}

// ---------------------------------------------------------- hand-made frames

// A frame around the given parameter sets (hex, after the basic set): CKN of
// `ckn_len` octets, ICV of zeros, body length computed.
Bytes frame_with(const std::string& sets_hex, std::size_t ckn_len = 16) {
  Bytes f = hex("0180C2000003" "020000000001" "888E" "0305" "0000");
  const Bytes basic_fixed = hex("01" "0A" "60" "00" "0200000000010001" "000102030405060708090A0B" "00000007" "0080C201");
  Bytes body = basic_fixed;
  const std::size_t basic_len = kBasicFixedBodySize + ckn_len;
  body[2] = static_cast<std::uint8_t>(0x60 | (basic_len >> 8));
  body[3] = static_cast<std::uint8_t>(basic_len);
  for (std::size_t i = 0; i < ckn_len; ++i) body.push_back(static_cast<std::uint8_t>(0xC0 + i));
  while (body.size() % 4 != 0) body.push_back(0);
  const Bytes sets = hex(sets_hex);
  body.insert(body.end(), sets.begin(), sets.end());
  body.insert(body.end(), kIcvSize, 0xAA);
  store_be16(f.data() + 16, static_cast<std::uint16_t>(body.size()));
  f.insert(f.end(), body.begin(), body.end());
  return f;
}

std::string wrap24() { return std::string(48, 'B'); }
std::string wrap40() { return std::string(80, 'C'); }

TEST(Mkpdu, HandMadeFramesForEverySetType) {
  // Live list (SSCI 7) + potential list, SAK use with every flag, distributed
  // SAK with GCM-AES-XPN-256, distributed CAK (17-octet CKN, padded), KMD,
  // announcement with a cipher suite TLV and an opaque TLV, XPN, an unknown
  // set (type 0x42, 3 octets, padded), ICV indicator.
  const std::string sets =
      "01070010" "111111111111111111111111" "00000009"
      "02000020" "222222222222222222222222" "00000001" "333333333333333333333333" "FFFFFFFF"
      "03F7D028" "444444444444444444444444" "00000005" "00000010" "555555555555555555555555" "00000004" "00000020"
      "04E00034" "0000000A" "0080C20001000004" + wrap40() +
      "05000029" + wrap24() + "0102030405060708090A0B0C0D0E0F1011" "000000"
      "06000005" "6B6D642E31" "000000"
      "07000010" "E00A" "0003" "0080C20001000002" "0202" "ABCD"
      "08050008" "00000001" "00000002"
      "42000003" "ABCDEF" "00"
      "FF000010";
  const Bytes f = frame_with(sets, 17);
  auto d = decode(f);
  ASSERT_TRUE(d) << to_string(d.error());
  const Mkpdu& m = d->mkpdu;
  EXPECT_EQ(m.basic.ckn.size(), 17u);
  EXPECT_EQ(m.basic.macsec_capability, MacsecCapability::kConfidentiality);
  EXPECT_FALSE(m.basic.key_server);
  EXPECT_TRUE(m.basic.macsec_desired);
  EXPECT_EQ(m.basic.sci, 0x0200000000010001ULL);
  EXPECT_EQ(m.basic.actor_mn, 7u);
  ASSERT_TRUE(m.live_peers && m.potential_peers);
  EXPECT_EQ(m.live_peers->key_server_ssci, 7);
  EXPECT_EQ(m.live_peers->peers.size(), 1u);
  EXPECT_EQ(m.live_peers->peers[0].mn, 9u);
  ASSERT_EQ(m.potential_peers->peers.size(), 2u);
  EXPECT_EQ(m.potential_peers->peers[1].mn, 0xFFFFFFFFu);
  ASSERT_TRUE(m.sak_use);
  const SakUse& u = *m.sak_use;
  EXPECT_EQ(u.latest_an, 3);
  EXPECT_TRUE(u.latest_tx && u.latest_rx);
  EXPECT_EQ(u.old_an, 1);
  EXPECT_TRUE(u.old_tx && u.old_rx);
  EXPECT_TRUE(u.plain_tx && u.plain_rx && u.delay_protect);
  EXPECT_EQ(u.latest.kn, 5u);
  EXPECT_EQ(u.latest.lowest_acceptable_pn, 0x10u);
  EXPECT_EQ(u.old.kn, 4u);
  ASSERT_TRUE(m.distributed_sak);
  EXPECT_EQ(m.distributed_sak->distributed_an, 3);
  EXPECT_EQ(m.distributed_sak->confidentiality_offset, 2);
  EXPECT_EQ(m.distributed_sak->kn, 10u);
  EXPECT_EQ(m.distributed_sak->cipher_suite, kIdGcmAesXpn256);
  EXPECT_EQ(m.distributed_sak->wrapped_sak.size(), 40u);
  ASSERT_TRUE(m.distributed_cak);
  EXPECT_EQ(m.distributed_cak->wrapped_cak.size(), 24u);
  EXPECT_EQ(m.distributed_cak->ckn.size(), 17u);
  ASSERT_TRUE(m.kmd);
  EXPECT_EQ(std::string(m.kmd->begin(), m.kmd->end()), "kmd.1");
  ASSERT_TRUE(m.announcement);
  ASSERT_EQ(m.announcement->tlvs.size(), 2u);
  EXPECT_EQ(m.announcement->tlvs[1].type, 1);
  EXPECT_EQ(announced_cipher_suites(*m.announcement),
            (std::vector<CipherSuiteEntry>{{MacsecCapability::kConfidentialityWithOffset, kIdGcmAes256}}));
  ASSERT_TRUE(m.xpn);
  EXPECT_EQ(m.xpn->suspension_time, 5);
  EXPECT_EQ(m.xpn->latest_lowest_acceptable_pn_high, 1u);
  EXPECT_EQ(m.xpn->old_lowest_acceptable_pn_high, 2u);
  ASSERT_EQ(m.unknown_sets.size(), 1u);
  EXPECT_EQ(m.unknown_sets[0], (UnknownParameterSet{0x42, hex("ABCDEF")}));
  EXPECT_TRUE(m.icv_indicator);
  EXPECT_EQ(d->icv_covered.size(), f.size() - kIcvSize);
  EXPECT_TRUE(std::all_of(d->icv.begin(), d->icv.end(), [](std::uint8_t b) { return b == 0xAA; }));
  // Canonical (ascending types, unknown after the known ones): byte-exact.
  Bytes out(f.size());
  auto n = encode_mkpdu_with_icv(m, d->icv, out);
  ASSERT_TRUE(n) << to_string(n.error());
  EXPECT_EQ(to_hex(out), to_hex(f));
}

TEST(Mkpdu, EmptyBodyForms) {
  // SAK use with no keys (plain tx/rx), distributed SAK "plain text" (AN 2,
  // offset 0), empty peer list, empty KMD, empty announcement.
  const Bytes f = frame_with("0100 0000" "03 00 C0 00" "04 80 00 00" "06000000" "07000000");
  auto d = decode(f);
  ASSERT_TRUE(d) << to_string(d.error());
  const Mkpdu& m = d->mkpdu;
  ASSERT_TRUE(m.live_peers && m.sak_use && m.distributed_sak && m.kmd && m.announcement);
  EXPECT_TRUE(m.live_peers->peers.empty());
  EXPECT_FALSE(m.sak_use->has_keys);
  EXPECT_TRUE(m.sak_use->plain_tx && m.sak_use->plain_rx);
  EXPECT_FALSE(m.distributed_sak->has_key);
  EXPECT_EQ(m.distributed_sak->distributed_an, 2);
  EXPECT_TRUE(m.kmd->empty());
  EXPECT_TRUE(m.announcement->tlvs.empty());
  Bytes out(f.size());
  ASSERT_TRUE(encode_mkpdu_with_icv(m, d->icv, out));
  EXPECT_EQ(out, f);
}

TEST(Mkpdu, DistributedSakForms) {
  struct Case {
    std::string set;
    std::optional<std::uint64_t> suite;
    std::size_t wrap;
  };
  const std::vector<Case> ok = {
      {"0410001C" "00000002" + wrap24(), std::nullopt, 24},
      {"04100024" "00000002" "0080C20001000001" + wrap24(), kIdGcmAes128, 24},
      {"04100024" "00000002" "0080020001000001" + wrap24(), kCipherSuiteGcmAes128Legacy, 24},
      {"04100024" "00000002" "0080C20001000003" + wrap24(), kIdGcmAesXpn128, 24},
      {"04100034" "00000002" "0080C20001000002" + wrap40(), kIdGcmAes256, 40},
      {"04100024" "00000002" "1122334455667788" + wrap24(), 0x1122334455667788ULL, 24},  // unknown suite: kept
      {"04100034" "00000002" "1122334455667788" + wrap40(), 0x1122334455667788ULL, 40},
  };
  for (const auto& c : ok) {
    const Bytes f = frame_with(c.set);
    auto d = decode(f);
    ASSERT_TRUE(d) << c.set << ": " << to_string(d.error());
    EXPECT_EQ(d->mkpdu.distributed_sak->cipher_suite, c.suite);
    EXPECT_EQ(d->mkpdu.distributed_sak->wrapped_sak.size(), c.wrap);
    EXPECT_EQ(d->mkpdu.distributed_sak->kn, 2u);
    Bytes out(f.size());
    ASSERT_TRUE(encode_mkpdu_with_icv(d->mkpdu, d->icv, out));
    EXPECT_EQ(out, f);
  }
}

TEST(Mkpdu, UnknownSetsAreKeptAndSkipped) {
  // Types 0, 9 and 254 with bodies of 0, 1 and 5 octets; the known sets
  // around them still decode.
  const Bytes f = frame_with("00000000" "09000001" "EE000000" "0100 0010" "111111111111111111111111" "00000001"
                             "FE000005" "0102030405000000");
  auto d = decode(f);
  ASSERT_TRUE(d) << to_string(d.error());
  const auto& u = d->mkpdu.unknown_sets;
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0], (UnknownParameterSet{0, {}}));
  EXPECT_EQ(u[1], (UnknownParameterSet{9, {0xEE}}));
  EXPECT_EQ(u[2], (UnknownParameterSet{254, hex("0102030405")}));
  ASSERT_TRUE(d->mkpdu.live_peers);
  // Re-encoded canonically: the live list first, the unknown sets after it in order.
  Bytes out(f.size());
  ASSERT_TRUE(encode_mkpdu_with_icv(d->mkpdu, d->icv, out));
  EXPECT_NE(out, f);
  auto again = decode(out);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->mkpdu, d->mkpdu);
  EXPECT_EQ(out, frame_with("0100 0010" "111111111111111111111111" "00000001" "00000000" "09000001" "EE000000"
                            "FE000005" "0102030405000000"));
}

TEST(Mkpdu, ReservedBitsAreIgnoredAndSentAsZero) {
  // Potential peer list octets 2 and 3 (high nibble), the SAK use X bit.
  const Bytes f = frame_with("02 55 F0 10" "111111111111111111111111" "00000001" "03 00 20 00");
  auto d = decode(f);
  ASSERT_TRUE(d) << to_string(d.error());
  EXPECT_EQ(d->mkpdu.potential_peers->key_server_ssci, 0);  // reserved in a potential list
  EXPECT_FALSE(d->mkpdu.sak_use->plain_tx || d->mkpdu.sak_use->plain_rx || d->mkpdu.sak_use->delay_protect);
  Bytes out(f.size());
  ASSERT_TRUE(encode_mkpdu_with_icv(d->mkpdu, d->icv, out));
  EXPECT_EQ(out, frame_with("02000010" "111111111111111111111111" "00000001" "03000000"));
}

TEST(Mkpdu, DestinationRules) {
  Bytes f = frame_with("");
  ASSERT_TRUE(decode(f));
  f[0] = 0x01;
  f[5] = 0x00;  // 01-80-C2-00-00-00, the bridge group address
  auto d = decode(f);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error(), MkpduError::kDestinationNotAllowed);
  const std::array<MacAddress, 2> allowed = {kPaeGroupAddress, MacAddress{0x01, 0x80, 0xC2, 0, 0, 0}};
  EXPECT_TRUE(decode(f, DecodeOptions{allowed}));
  f[0] = 0x00;  // individual, even if listed
  const std::array<MacAddress, 1> individual = {MacAddress{0x00, 0x80, 0xC2, 0, 0, 0}};
  auto e = decode(f, DecodeOptions{individual});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), MkpduError::kIndividualDestination);
}

// ------------------------------------------------------------------ rejections

struct Bad {
  const char* what;
  Bytes frame;
  MkpduError expected;
};

Bytes patched(Bytes f, std::size_t at, std::initializer_list<std::uint8_t> b) {
  std::copy(b.begin(), b.end(), f.begin() + static_cast<std::ptrdiff_t>(at));
  return f;
}

std::vector<Bad> bad_frames() {
  const Bytes base = frame_with("");
  const std::size_t b = 18;  // first octet of the basic set
  Bytes trailing = base;
  trailing.push_back(0);
  Bytes body_short = base;
  body_short.pop_back();
  Bytes not4 = frame_with("");
  not4.insert(not4.end(), {0, 0});
  store_be16(not4.data() + 16, static_cast<std::uint16_t>(not4.size() - 18));
  Bytes tiny = hex("0180C2000003" "020000000001" "888E" "0305" "001C");
  tiny.resize(18 + 28, 0);
  return {
      {"empty", {}, MkpduError::kShortFrame},
      {"17 octets", Bytes(base.begin(), base.begin() + 17), MkpduError::kShortFrame},
      {"unicast DA", patched(base, 0, {0x00}), MkpduError::kIndividualDestination},
      {"other group DA", patched(base, 5, {0x0E}), MkpduError::kDestinationNotAllowed},
      {"EtherType", patched(base, 12, {0x81, 0x00}), MkpduError::kWrongEtherType},
      {"EAPOL version 0", patched(base, 14, {0}), MkpduError::kBadEapolVersion},
      {"EAPOL version 4", patched(base, 14, {4}), MkpduError::kBadEapolVersion},
      {"EAPOL-Start", patched(base, 15, {1}), MkpduError::kNotMka},
      {"EAP packet", patched(base, 15, {0}), MkpduError::kNotMka},
      {"body past the frame", body_short, MkpduError::kBodyLengthMismatch},
      {"trailing octet", trailing, MkpduError::kTrailingBytes},
      {"body < 32", tiny, MkpduError::kBadMkpduLength},
      {"body not a multiple of 4", not4, MkpduError::kBadMkpduLength},
      {"MKA version 0", patched(base, b, {0}), MkpduError::kBadMkaVersion},
      {"basic body 27", patched(base, b + 2, {0x60, 27}), MkpduError::kBadBasicSetLength},
      {"basic body past the MKPDU", patched(base, b + 2, {0x61, 0x00}), MkpduError::kBadBasicSetLength},
      {"basic set eats the ICV", patched(frame_with("", 32), b + 2, {0x60, 28 + 32 + 4}), MkpduError::kMissingIcv},
      {"CKN 0", patched(base, b + 2, {0x60, 28}), MkpduError::kBadCknLength},
      {"CKN 33", patched(frame_with("00000000", 32), b + 2, {0x60, 28 + 33}), MkpduError::kBadCknLength},
      {"algorithm agility", patched(base, b + 4 + 24, {0x00, 0x80, 0xC2, 0x02}), MkpduError::kWrongAlgorithmAgility},
      {"basic padding", patched(frame_with("", 15), b + 4 + 28 + 15, {1}), MkpduError::kBadPadding},
      {"set past the MKPDU", frame_with("01000100"), MkpduError::kBadSetLength},
      {"set eats the ICV", frame_with("01000010"), MkpduError::kMissingIcv},
      {"set padding", frame_with("42000001" "AA000100"), MkpduError::kBadPadding},
      {"duplicate live list", frame_with("01000000" "01000000"), MkpduError::kDuplicateSet},
      {"duplicate XPN", frame_with("08000008" "0000000000000000" "08000008" "0000000000000000"), MkpduError::kDuplicateSet},
      {"peer list of 12", frame_with("0100000C" "111111111111111111111111"), MkpduError::kBadPeerListLength},
      {"SAK use of 36", frame_with("03000024" + std::string(72, '0')), MkpduError::kBadSakUseLength},
      {"SAK use of 4", frame_with("03000004" "00000000"), MkpduError::kBadSakUseLength},
      {"distributed SAK of 24", frame_with("04000018" + wrap24()), MkpduError::kBadDistributedSakLength},
      {"distributed SAK of 44", frame_with("0400002C" "00000001" + wrap40()), MkpduError::kBadDistributedSakLength},
      {"GCM-AES-256 with a 24-octet wrap", frame_with("04000024" "00000001" "0080C20001000002" + wrap24()),
       MkpduError::kCipherSuiteKeyMismatch},
      {"GCM-AES-128 with a 40-octet wrap", frame_with("04000034" "00000001" "0080C20001000001" + wrap40()),
       MkpduError::kCipherSuiteKeyMismatch},
      {"distributed CAK without CKN", frame_with("05000018" + wrap24()), MkpduError::kBadDistributedCakLength},
      {"distributed CAK with 33-octet CKN",
       frame_with("05000039" + wrap24() + std::string(66, 'D') + "000000"), MkpduError::kBadDistributedCakLength},
      {"announcement TLV past the set", frame_with("07000004" "E00A0000"), MkpduError::kBadAnnouncementTlv},
      {"announcement half a TLV header", frame_with("07000001" "E0000000"), MkpduError::kBadAnnouncementTlv},
      {"cipher suite TLV of 9", frame_with("0700000B" "E009" "000000000000000000" "00"), MkpduError::kBadAnnouncementTlv},
      {"XPN of 4", frame_with("08000004" "00000000"), MkpduError::kBadXpnLength},
      {"ICV indicator of 12", frame_with("FF00000C"), MkpduError::kBadIcvIndicator},
      {"ICV indicator not last", frame_with("FF000010" "01000000"), MkpduError::kBadIcvIndicator},
  };
}

TEST(Mkpdu, EveryRejectionReason) {
  std::set<MkpduError> seen;
  for (const auto& c : bad_frames()) {
    auto d = decode(c.frame);
    ASSERT_FALSE(d) << c.what;
    EXPECT_EQ(d.error(), c.expected) << c.what << ": got " << to_string(d.error());
    seen.insert(d.error());
    EXPECT_FALSE(to_string(d.error()).empty());
  }
  // Every decode reason (all but the encode-only ones) is produced above.
  for (std::size_t i = 0; i < kMkpduErrorCount; ++i) {
    const auto e = static_cast<MkpduError>(i);
    if (e == MkpduError::kBadField || e == MkpduError::kSetTooLong || e == MkpduError::kBufferTooSmall ||
        e == MkpduError::kIcvComputation) {
      continue;
    }
    EXPECT_TRUE(seen.count(e)) << "no frame produces " << to_string(e);
  }
}

// ------------------------------------------------------------------- encoding

Mkpdu sample() {
  Mkpdu m;
  m.source = {0x02, 0, 0, 0, 0, 1};
  m.basic.key_server_priority = 16;
  m.basic.key_server = true;
  m.basic.macsec_desired = true;
  m.basic.macsec_capability = MacsecCapability::kConfidentialityWithOffset;
  m.basic.sci = 0x0200000000010001ULL;
  m.basic.actor_mi = kMiA;
  m.basic.actor_mn = 42;
  m.basic.ckn = hex("96437A93CCF10D9DFE347846CCE52C7D01");
  m.live_peers = PeerList{3, {{kMiB, 7}}};
  m.potential_peers = PeerList{0, {{kMiA, 1}, {kMiB, 2}}};
  m.sak_use = SakUse{1, true, true, 2, false, true, false, false, true, true, {kMiA, 2, 100}, {kMiA, 1, 5000}};
  m.distributed_sak = DistributedSak{1, 1, true, 2, kIdGcmAes256, Bytes(40, 0x5A)};
  m.distributed_cak = DistributedCak{Bytes(24, 0x11), hex("0102")};
  m.kmd = Bytes{'z', 'o', 'n', 'e'};
  const std::array<CipherSuiteEntry, 2> cs = {{{MacsecCapability::kConfidentiality, kIdGcmAes128},
                                                {MacsecCapability::kConfidentiality, kIdGcmAesXpn256}}};
  m.announcement = Announcement{{cipher_suites_tlv(cs), AnnouncementTlv{111, {1, 2, 3}}}};
  m.xpn = XpnParameterSet{3, 1, 0};
  m.unknown_sets = {{200, {9, 9}}, {9, {}}};
  m.icv_indicator = true;
  return m;
}

TEST(Mkpdu, EncodeDecodeRoundTripWithIck) {
  const SecretBytes ick = capture_key("derived_ick");
  const Mkpdu m = sample();
  auto f = encode_mkpdu(m, ick);
  ASSERT_TRUE(f) << to_string(f.error());
  EXPECT_EQ(f->size(), encoded_size(m));
  auto d = decode(*f);
  ASSERT_TRUE(d) << to_string(d.error());
  EXPECT_EQ(d->mkpdu, m);
  EXPECT_TRUE(verify_mkpdu_icv(*d, ick));
  EXPECT_EQ(announced_cipher_suites(*d->mkpdu.announcement).size(), 2u);
  // Deterministic: the same input gives the same octets.
  auto f2 = encode_mkpdu(m, ick);
  ASSERT_TRUE(f2);
  EXPECT_EQ(*f, *f2);
  // A bad ICK is refused by reason.
  auto bad = encode_mkpdu(m, SecretBytes(Bytes(7, 1)));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), MkpduError::kIcvComputation);
}

TEST(Mkpdu, EncoderRefusesWhatTheDecoderWould) {
  const Icv icv{};
  Bytes out(4096);
  auto refuses = [&](const char* what, const Mkpdu& m, MkpduError e) {
    auto n = encode_mkpdu_with_icv(m, icv, out);
    ASSERT_FALSE(n) << what;
    EXPECT_EQ(n.error(), e) << what << ": got " << to_string(n.error());
  };
  auto with = [](auto edit) {
    Mkpdu m = sample();
    edit(m);
    return m;
  };
  refuses("unicast DA", with([](Mkpdu& m) { m.destination[0] = 0; }), MkpduError::kIndividualDestination);
  refuses("EAPOL version 4", with([](Mkpdu& m) { m.eapol_version = 4; }), MkpduError::kBadEapolVersion);
  refuses("MKA version 0", with([](Mkpdu& m) { m.basic.mka_version = 0; }), MkpduError::kBadMkaVersion);
  refuses("CKN empty", with([](Mkpdu& m) { m.basic.ckn.clear(); }), MkpduError::kBadCknLength);
  refuses("CKN 33", with([](Mkpdu& m) { m.basic.ckn.assign(33, 1); }), MkpduError::kBadCknLength);
  refuses("capability 4", with([](Mkpdu& m) { m.basic.macsec_capability = static_cast<MacsecCapability>(4); }),
          MkpduError::kBadField);
  refuses("256 live peers", with([](Mkpdu& m) { m.live_peers->peers.resize(256); }), MkpduError::kSetTooLong);
  refuses("potential SSCI", with([](Mkpdu& m) { m.potential_peers->key_server_ssci = 1; }), MkpduError::kBadField);
  refuses("latest AN 4", with([](Mkpdu& m) { m.sak_use->latest_an = 4; }), MkpduError::kBadField);
  refuses("empty SAK use with a key", with([](Mkpdu& m) { m.sak_use->has_keys = false; }), MkpduError::kBadField);
  refuses("DAN 4", with([](Mkpdu& m) { m.distributed_sak->distributed_an = 4; }), MkpduError::kBadField);
  refuses("offset 4", with([](Mkpdu& m) { m.distributed_sak->confidentiality_offset = 4; }), MkpduError::kBadField);
  refuses("plain SAK with a KN", with([](Mkpdu& m) { m.distributed_sak->has_key = false; }), MkpduError::kBadField);
  refuses("wrap 32", with([](Mkpdu& m) { m.distributed_sak->wrapped_sak.resize(32); }),
          MkpduError::kBadDistributedSakLength);
  refuses("default suite, wrap 40", with([](Mkpdu& m) { m.distributed_sak->cipher_suite.reset(); }),
          MkpduError::kBadDistributedSakLength);
  refuses("GCM-AES-128, wrap 40",
          with([](Mkpdu& m) { m.distributed_sak->cipher_suite = kIdGcmAes128; }),
          MkpduError::kCipherSuiteKeyMismatch);
  refuses("CAK wrap 40", with([](Mkpdu& m) { m.distributed_cak->wrapped_cak.resize(40); }),
          MkpduError::kBadDistributedCakLength);
  refuses("CAK CKN empty", with([](Mkpdu& m) { m.distributed_cak->ckn.clear(); }), MkpduError::kBadDistributedCakLength);
  refuses("KMD 4096", with([](Mkpdu& m) { m.kmd->resize(4096); }), MkpduError::kSetTooLong);
  refuses("TLV type 128", with([](Mkpdu& m) { m.announcement->tlvs[1].type = 128; }), MkpduError::kBadField);
  refuses("TLV of 512", with([](Mkpdu& m) { m.announcement->tlvs[1].value.resize(512); }), MkpduError::kBadField);
  refuses("cipher suite TLV of 11", with([](Mkpdu& m) { m.announcement->tlvs[0].value.push_back(0); }),
          MkpduError::kBadAnnouncementTlv);
  refuses("announcement 4096", with([](Mkpdu& m) { m.announcement->tlvs.assign(9, AnnouncementTlv{1, Bytes(500)}); }),
          MkpduError::kSetTooLong);
  refuses("unknown set of a known type", with([](Mkpdu& m) { m.unknown_sets[0].type = 4; }), MkpduError::kBadField);
  refuses("unknown set of type 255", with([](Mkpdu& m) { m.unknown_sets[0].type = 255; }), MkpduError::kBadField);
  refuses("unknown set of 4096", with([](Mkpdu& m) { m.unknown_sets[0].body.resize(4096); }), MkpduError::kSetTooLong);
  refuses("EAPOL body past 65535", with([](Mkpdu& m) { m.unknown_sets.assign(17, UnknownParameterSet{9, Bytes(4000)}); }),
          MkpduError::kSetTooLong);
  Bytes tiny(10);
  auto n = encode_mkpdu_with_icv(sample(), icv, tiny);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(), MkpduError::kBufferTooSmall);
}

TEST(Mkpdu, CipherSuiteHelpers) {
  EXPECT_EQ(cipher_suite_from_id(0x0080C20001000002ULL), macsec::CipherSuite::kGcmAes256);
  EXPECT_EQ(cipher_suite_from_id(kCipherSuiteGcmAes128Legacy), macsec::CipherSuite::kGcmAes128);
  EXPECT_EQ(cipher_suite_from_id(0x0080C20001000005ULL), std::nullopt);
  EXPECT_EQ(sak_length_of(kIdGcmAes128), 16u);
  EXPECT_EQ(sak_length_of(kCipherSuiteGcmAes128Legacy), 16u);
  EXPECT_EQ(sak_length_of(kIdGcmAesXpn128), 16u);
  EXPECT_EQ(sak_length_of(kIdGcmAes256), 32u);
  EXPECT_EQ(sak_length_of(kIdGcmAesXpn256), 32u);
  EXPECT_EQ(sak_length_of(0), 0u);
  const std::array<CipherSuiteEntry, 1> e = {{{MacsecCapability::kIntegrity, kIdGcmAes256}}};
  const AnnouncementTlv tlv = cipher_suites_tlv(e);
  EXPECT_EQ(tlv.type, kTlvMacsecCipherSuites);
  EXPECT_EQ(to_hex(tlv.value), "00010080c20001000002");
  // A malformed cipher suite TLV (only reachable by building one) is skipped.
  Announcement a{{AnnouncementTlv{kTlvMacsecCipherSuites, Bytes(11)}, tlv}};
  EXPECT_EQ(announced_cipher_suites(a), (std::vector<CipherSuiteEntry>{e[0]}));
}

}  // namespace
}  // namespace layersec::mka
