// Runs every vector of ../shared/vectors/macsec/macsec_vectors.json through
// the SecY: the 32 IEEE 802.1AE-2018 Annex C vectors and the 16
// supplementary ones must produce the exact secure frame and validate back
// to the exact unprotected frame; the 13 negative ones must be discarded (or
// delivered untagged) under the exact MIB counter. Every frame of
// macsec_vectors.pcap (parsed here by hand, classic pcap format) validates
// and decrypts.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "layersec/base/hex.h"
#include "layersec/macsec/secy.h"
#include "support/vectors.h"

namespace layersec::macsec {
namespace {

using layersec::testing::hex;
using nlohmann::json;

CipherSuite suite_of(const json& v) {
  auto s = cipher_suite_from_string(v.at("cipher_suite").get<std::string>());
  EXPECT_TRUE(s.has_value());
  return s.value_or(CipherSuite::kGcmAes128);
}

std::uint64_t pn64_of(const json& v) {
  if (v.contains("xpn_pn64")) {
    const auto b = hex(v.at("xpn_pn64").get<std::string>());
    return load_be64(b.data());
  }
  return v.at("pn").get<std::uint64_t>();
}

Sci sci_of(const json& v) {
  const auto b = hex(v.at("sci").get<std::string>());
  return Sci{load_be64(b.data())};
}

// Key material of a vector; the returned vectors own the bytes.
struct VectorKeys {
  std::vector<std::uint8_t> sak;
  SaKeys keys;
};

VectorKeys keys_of(const json& v) {
  VectorKeys k;
  k.sak = hex(v.at("sak").get<std::string>());
  k.keys.sak = k.sak;
  if (v.contains("ssci")) {
    const auto ssci = hex(v.at("ssci").get<std::string>());
    k.keys.ssci = load_be32(ssci.data());
    const auto salt = hex(v.at("salt").get<std::string>());
    std::memcpy(k.keys.salt.data(), salt.data(), kSaltSize);
  }
  return k;
}

SecYConfig config_of(const json& v) {
  SecYConfig c;
  c.suite = suite_of(v);
  c.sci = sci_of(v);
  c.include_sci = v.at("sci_in_sectag").get<bool>();
  c.use_es = v.at("tci").at("ES").get<int>() == 1;
  c.confidentiality = v.at("protection").get<std::string>() == "confidentiality";
  if (!v.at("clear_tags_before_sectag").is_null()) c.vlan_mode = VlanMode::kClearTag;
  return c;
}

// A receiving SecY for the vector's SC with its SA installed so that the
// vector's PN is the lowest acceptable one.
SecY receiver_for(const json& v, std::uint32_t window = 0, bool replay_protect = true) {
  SecYConfig c = config_of(v);
  c.sci = Sci{0x0200000000000001ULL};  // the receiver's own SCI is irrelevant here
  c.replay_window = window;
  c.replay_protect = replay_protect;
  SecY y(c);
  EXPECT_TRUE(y.add_rx_sc(sci_of(v)).ok());
  const auto k = keys_of(v);
  EXPECT_TRUE(y.install_rx_sa(sci_of(v), v.at("an").get<std::uint8_t>(), k.keys, 1).ok());
  return y;
}

std::vector<json> positive_vectors() {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  std::vector<json> out;
  for (const auto& v : doc.at("annex_c")) out.push_back(v);
  for (const auto& v : doc.at("supplementary")) out.push_back(v);
  return out;
}

TEST(MacsecVectors, CountsMatchTheFile) {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  EXPECT_EQ(doc.at("annex_c").size(), 32u);
  EXPECT_EQ(doc.at("supplementary").size(), 16u);
  EXPECT_EQ(doc.at("negative").size(), 13u);
}

// Every positive vector: protect gives the exact secure frame.
TEST(MacsecVectors, ProtectProducesExactSecureFrame) {
  int checked = 0;
  for (const auto& v : positive_vectors()) {
    SCOPED_TRACE(v.at("id").get<std::string>());
    SecY tx(config_of(v));
    const auto k = keys_of(v);
    const auto an = v.at("an").get<std::uint8_t>();
    ASSERT_TRUE(tx.install_tx_sa(an, k.keys, pn64_of(v)).ok());
    ASSERT_TRUE(tx.set_encoding_sa(an).ok());
    const auto plain = hex(v.at("unprotected_frame").at("full").get<std::string>());
    const auto expected = hex(v.at("secure_frame").get<std::string>());
    std::vector<std::uint8_t> out(plain.size() + 64);
    auto n = tx.protect(plain, out);
    ASSERT_TRUE(n.ok()) << to_string(n.error());
    out.resize(*n);
    EXPECT_EQ(to_hex(out), to_hex(expected));
    EXPECT_EQ(tx.tx_sa_status(an).next_pn, pn64_of(v) + 1);
    const auto& st = tx.stats();
    if (v.at("protection") == "confidentiality") {
      EXPECT_EQ(st.OutPktsEncrypted, 1u);
    } else {
      EXPECT_EQ(st.OutPktsProtected, 1u);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 48);
}

// Every positive vector: validate gives back the exact unprotected frame and
// counts InPktsOK; the SA's PN state moves past the frame.
TEST(MacsecVectors, ValidateRecoversExactFrame) {
  int checked = 0;
  for (const auto& v : positive_vectors()) {
    SCOPED_TRACE(v.at("id").get<std::string>());
    SecY rx = receiver_for(v);
    // For XPN the SA is installed with the vector's 64-bit PN as lowest
    // acceptable PN, so the receiver must recover its upper 32 bits.
    const auto k = keys_of(v);
    ASSERT_TRUE(rx.install_rx_sa(sci_of(v), v.at("an").get<std::uint8_t>(), k.keys, pn64_of(v))
                    .ok());
    auto frame = hex(v.at("secure_frame").get<std::string>());
    const auto plain = hex(v.at("unprotected_frame").at("full").get<std::string>());
    auto r = rx.validate(frame);
    ASSERT_TRUE(r.ok()) << to_string(r.error());
    EXPECT_EQ(r->disposition, Disposition::kOk);
    EXPECT_TRUE(r->verified());
    EXPECT_EQ(r->pn, pn64_of(v));
    EXPECT_EQ(r->sci, sci_of(v));
    EXPECT_EQ(to_hex(r->frame), to_hex(plain));
    EXPECT_EQ(rx.stats().InPktsOK, 1u);
    const auto data_len = hex(v.at("secure_frame_parts").at("secure_data").get<std::string>()).size();
    if (v.at("protection") == "confidentiality") {
      EXPECT_EQ(rx.stats().InOctetsDecrypted, data_len);
    } else {
      EXPECT_EQ(rx.stats().InOctetsValidated, data_len);
    }
    EXPECT_EQ(rx.rx_sa_status(sci_of(v), v.at("an").get<std::uint8_t>()).next_pn,
              pn64_of(v) + 1);
    ++checked;
  }
  EXPECT_EQ(checked, 48);
}

// The clear-tag vectors show the tags are not covered by the ICV; covering
// them must make protection differ and validation fail.
TEST(MacsecVectors, ClearTagsCoveredByIcvDoNotMatchVectors) {
  int checked = 0;
  for (const auto& v : positive_vectors()) {
    if (v.at("clear_tags_before_sectag").is_null()) continue;
    SCOPED_TRACE(v.at("id").get<std::string>());
    SecYConfig c = config_of(v);
    c.clear_tags_in_icv = true;
    SecY y(c);
    const auto k = keys_of(v);
    const auto an = v.at("an").get<std::uint8_t>();
    ASSERT_TRUE(y.install_tx_sa(an, k.keys, pn64_of(v)).ok());
    ASSERT_TRUE(y.set_encoding_sa(an).ok());
    const auto plain = hex(v.at("unprotected_frame").at("full").get<std::string>());
    std::vector<std::uint8_t> out(plain.size() + 64);
    auto n = y.protect(plain, out);
    ASSERT_TRUE(n.ok());
    out.resize(*n);
    const auto expected = hex(v.at("secure_frame").get<std::string>());
    ASSERT_EQ(out.size(), expected.size());
    // Same bytes up to the ICV, different ICV.
    EXPECT_EQ(to_hex(ByteSpan(out).first(out.size() - kIcvSize)),
              to_hex(ByteSpan(expected).first(expected.size() - kIcvSize)));
    EXPECT_NE(to_hex(ByteSpan(out).last(kIcvSize)), to_hex(ByteSpan(expected).last(kIcvSize)));

    ASSERT_TRUE(y.add_rx_sc(sci_of(v)).ok());
    ASSERT_TRUE(y.install_rx_sa(sci_of(v), an, k.keys, 1).ok());
    auto frame = expected;
    auto r = y.validate(frame);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), ReceiveDrop::kNotValid);
    EXPECT_EQ(y.stats().InPktsNotValid, 1u);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

json find_vector(const json& list, const std::string& id) {
  for (const auto& v : list)
    if (v.at("id") == id) return v;
  ADD_FAILURE() << "no vector " << id;
  return json::object();
}

// DPDK anti-replay group A (GCM-AES-128): PNs 2, 0x4B, 0x32, 3 in order.
// replayWindow 32: only PN 3 is late. replayWindow 0: 0x32 and 3 are late.
TEST(MacsecVectors, AntiReplayGroupA) {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  const auto& sup = doc.at("supplementary");
  std::vector<json> frames;
  for (int i = 0; i < 4; ++i)
    frames.push_back(find_vector(sup, "list_mcs_anti_replay_vectors[" + std::to_string(i) + "]"));
  for (std::uint32_t window : {32u, 0u}) {
    SCOPED_TRACE(window);
    SecY rx = receiver_for(frames[0], window);
    std::vector<bool> accepted;
    for (const auto& f : frames) {
      auto bytes = hex(f.at("secure_frame").get<std::string>());
      auto r = rx.validate(bytes);
      accepted.push_back(r.ok());
      if (r.ok()) {
        EXPECT_EQ(to_hex(r->frame),
                  to_hex(hex(f.at("unprotected_frame").at("full").get<std::string>())));
      } else {
        EXPECT_EQ(r.error(), ReceiveDrop::kLate);
      }
    }
    if (window == 32) {
      EXPECT_EQ(accepted, (std::vector<bool>{true, true, true, false}));
      EXPECT_EQ(rx.stats().InPktsLate, 1u);
      EXPECT_EQ(rx.stats().InPktsOK, 3u);
    } else {
      EXPECT_EQ(accepted, (std::vector<bool>{true, true, false, false}));
      EXPECT_EQ(rx.stats().InPktsLate, 2u);
      EXPECT_EQ(rx.stats().InPktsOK, 2u);
    }
  }
}

// DPDK anti-replay group B (GCM-AES-XPN-128): PN64 0xFFFFFFFE, 0x1_00000062,
// 0x1_00000058, 0x1_00000002. The receiver recovers the upper 32 bits across
// the boundary (802.1AE-2018 10.6.2); with window 32 only the last is late.
TEST(MacsecVectors, AntiReplayGroupBXpnRecovery) {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  const auto& sup = doc.at("supplementary");
  std::vector<json> frames;
  for (int i = 4; i < 8; ++i)
    frames.push_back(find_vector(sup, "list_mcs_anti_replay_vectors[" + std::to_string(i) + "]"));
  for (std::uint32_t window : {32u, 0u}) {
    SCOPED_TRACE(window);
    SecY rx = receiver_for(frames[0], window);
    std::vector<bool> accepted;
    for (const auto& f : frames) {
      auto bytes = hex(f.at("secure_frame").get<std::string>());
      auto r = rx.validate(bytes);
      accepted.push_back(r.ok());
      if (r.ok()) {
        EXPECT_EQ(r->pn, pn64_of(f));
        EXPECT_EQ(to_hex(r->frame),
                  to_hex(hex(f.at("unprotected_frame").at("full").get<std::string>())));
      } else {
        EXPECT_EQ(r.error(), ReceiveDrop::kLate);
      }
    }
    if (window == 32) {
      EXPECT_EQ(accepted, (std::vector<bool>{true, true, true, false}));
      EXPECT_EQ(rx.stats().InPktsLate, 1u);
    } else {
      EXPECT_EQ(accepted, (std::vector<bool>{true, true, false, false}));
      EXPECT_EQ(rx.stats().InPktsLate, 2u);
    }
    EXPECT_EQ(rx.stats().InPktsNotValid, 0u);
  }
}

// DPDK rekey vectors: transmit on AN 0, install a new SAK at AN 1, switch the
// encoding SA and continue; the receiver holds both SAs.
TEST(MacsecVectors, RekeyWithAnRotation) {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  const auto& sup = doc.at("supplementary");
  for (int base : {0, 2}) {
    const json first = find_vector(sup, "list_mcs_rekey_vectors[" + std::to_string(base) + "]");
    const json second =
        find_vector(sup, "list_mcs_rekey_vectors[" + std::to_string(base + 1) + "]");
    SCOPED_TRACE(first.at("id").get<std::string>());
    SecY tx(config_of(first));
    const auto k0 = keys_of(first);
    const auto k1 = keys_of(second);
    ASSERT_TRUE(tx.install_tx_sa(0, k0.keys, pn64_of(first)).ok());
    ASSERT_TRUE(tx.set_encoding_sa(0).ok());
    const auto p0 = hex(first.at("unprotected_frame").at("full").get<std::string>());
    std::vector<std::uint8_t> out(p0.size() + 64);
    auto n = tx.protect(p0, out);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(to_hex(ByteSpan(out).first(*n)), to_hex(hex(first.at("secure_frame").get<std::string>())));
    // Rotate: install AN 1 while AN 0 transmits, then switch.
    ASSERT_TRUE(tx.install_tx_sa(1, k1.keys, pn64_of(second)).ok());
    ASSERT_TRUE(tx.set_encoding_sa(1).ok());
    const auto p1 = hex(second.at("unprotected_frame").at("full").get<std::string>());
    out.assign(p1.size() + 64, 0);
    n = tx.protect(p1, out);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(to_hex(ByteSpan(out).first(*n)), to_hex(hex(second.at("secure_frame").get<std::string>())));

    SecY rx = receiver_for(first);
    ASSERT_TRUE(rx.install_rx_sa(sci_of(first), 0, k0.keys, pn64_of(first)).ok());
    ASSERT_TRUE(rx.install_rx_sa(sci_of(second), 1, k1.keys, 1).ok());
    auto f0 = hex(first.at("secure_frame").get<std::string>());
    auto f1 = hex(second.at("secure_frame").get<std::string>());
    auto r1 = rx.validate(f1);
    ASSERT_TRUE(r1.ok());
    EXPECT_EQ(r1->an, 1);
    EXPECT_EQ(to_hex(r1->frame), to_hex(p1));
    auto r0 = rx.validate(f0);  // old SA still installed: a late frame of AN 0 is fine
    ASSERT_TRUE(r0.ok());
    EXPECT_EQ(r0->an, 0);
    EXPECT_EQ(rx.stats().InPktsOK, 2u);
  }
}

// The 13 negative vectors: each is discarded under its exact counter and no
// other counter moves.
TEST(MacsecVectors, NegativeVectorsHitExactCounter) {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  struct Expect {
    ReceiveDrop drop;
    std::optional<SecTagError> tag_error;
  };
  // From each vector's "expected_receive_result" and "defect".
  const std::map<std::string, Expect> expected = {
      {"list_mcs_err_cipher_vectors[0]", {ReceiveDrop::kNotValid, std::nullopt}},
      {"list_mcs_untagged_cipher_vectors[0]", {ReceiveDrop::kNoTag, std::nullopt}},
      {"list_mcs_bad_tag_vectors[0]", {ReceiveDrop::kBadTag, SecTagError::kVersion}},
      {"list_mcs_bad_tag_vectors[1]", {ReceiveDrop::kBadTag, SecTagError::kChangedNotEncrypted}},
      {"list_mcs_bad_tag_vectors[2]", {ReceiveDrop::kBadTag, SecTagError::kEsWithSc}},
      {"list_mcs_bad_tag_vectors[3]", {ReceiveDrop::kBadTag, SecTagError::kScbWithSc}},
      {"list_mcs_bad_tag_vectors[4]", {ReceiveDrop::kBadTag, SecTagError::kPnZero}},
      {"list_mcs_bad_tag_vectors[5]", {ReceiveDrop::kBadTag, SecTagError::kReservedBits}},
      {"list_mcs_intr_test_vectors[0]", {ReceiveDrop::kBadTag, SecTagError::kVersion}},
      {"list_mcs_intr_test_vectors[1]", {ReceiveDrop::kBadTag, SecTagError::kChangedNotEncrypted}},
      {"list_mcs_intr_test_vectors[2]", {ReceiveDrop::kBadTag, SecTagError::kShortLengthTooLarge}},
      {"list_mcs_intr_test_vectors[3]", {ReceiveDrop::kBadTag, SecTagError::kEsWithSc}},
      {"list_mcs_intr_test_vectors[4]", {ReceiveDrop::kBadTag, SecTagError::kScbWithSc}},
  };
  int checked = 0;
  for (const auto& v : doc.at("negative")) {
    const std::string id = v.at("id");
    SCOPED_TRACE(id);
    auto it = expected.find(id);
    ASSERT_NE(it, expected.end());
    // Receiver configured for the SC the frame claims (the untagged vector
    // carries no SecTAG fields; it uses the 64-octet vector's SC).
    SecYConfig c;
    c.suite = suite_of(v);
    c.sci = Sci{0x0200000000000001ULL};
    SecY rx(c);
    const Sci sci{0xFE2FCD14241B882CULL};
    ASSERT_TRUE(rx.add_rx_sc(sci).ok());
    const auto k = keys_of(v);
    ASSERT_TRUE(rx.install_rx_sa(sci, 0, k.keys, 1).ok());
    auto frame = hex(v.at("secure_frame").get<std::string>());
    auto r = rx.validate(frame);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), it->second.drop) << to_string(r.error());
    if (it->second.tag_error) {
      EXPECT_EQ(rx.last_sectag_error(), *it->second.tag_error);
    }
    // Exactly one In* packet counter moved, the one named by the drop.
    std::uint64_t total = 0;
    rx.stats().for_each([&](std::string_view name, std::uint64_t value) {
      if (name.substr(0, 6) == "InPkts") total += value;
      if (name == to_string(it->second.drop)) {
        EXPECT_EQ(value, 1u);
      }
    });
    EXPECT_EQ(total, 1u);
    EXPECT_EQ(rx.rx_sa_status(sci, 0).next_pn, 1u);  // no state change
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

// The untagged negative vector is delivered unchanged (InPktsUntagged) when
// validateFrames is not Strict.
TEST(MacsecVectors, UntaggedDeliveredWhenNotStrict) {
  const json doc = layersec::testing::load_vector_json("macsec/macsec_vectors.json");
  const json v = find_vector(doc.at("negative"), "list_mcs_untagged_cipher_vectors[0]");
  for (auto mode : {ValidateFrames::kCheck, ValidateFrames::kDisabled}) {
    SecYConfig c;
    c.validate_frames = mode;
    SecY rx(c);
    auto frame = hex(v.at("secure_frame").get<std::string>());
    const auto copy = frame;
    auto r = rx.validate(frame);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->disposition, Disposition::kUntagged);
    EXPECT_FALSE(r->verified());
    EXPECT_EQ(to_hex(r->frame), to_hex(copy));
    EXPECT_EQ(rx.stats().InPktsUntagged, 1u);
  }
}

// ---- pcap ------------------------------------------------------------------

// Classic libpcap file (not pcapng): 24-octet global header, then per record
// a 16-octet header (ts_sec, ts_usec, incl_len, orig_len) and the bytes.
std::vector<std::vector<std::uint8_t>> read_pcap(const std::vector<std::uint8_t>& file) {
  std::vector<std::vector<std::uint8_t>> out;
  if (file.size() < 24) {
    ADD_FAILURE() << "pcap too short";
    return out;
  }
  const std::uint32_t magic_le = std::uint32_t{file[0]} | (std::uint32_t{file[1]} << 8) |
                                 (std::uint32_t{file[2]} << 16) | (std::uint32_t{file[3]} << 24);
  bool le;
  if (magic_le == 0xA1B2C3D4U || magic_le == 0xA1B23C4DU) {
    le = true;
  } else if (load_be32(file.data()) == 0xA1B2C3D4U || load_be32(file.data()) == 0xA1B23C4DU) {
    le = false;
  } else {
    ADD_FAILURE() << "not a classic pcap file";
    return out;
  }
  auto u32 = [&](std::size_t off) {
    const std::uint8_t* p = file.data() + off;
    return le ? (std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
                 (std::uint32_t{p[3]} << 24))
              : load_be32(p);
  };
  EXPECT_EQ(u32(20), 1u) << "link type must be Ethernet";
  std::size_t off = 24;
  while (off + 16 <= file.size()) {
    const std::uint32_t incl = u32(off + 8);
    const std::uint32_t orig = u32(off + 12);
    EXPECT_EQ(incl, orig) << "truncated capture";
    off += 16;
    if (off + incl > file.size()) {
      ADD_FAILURE() << "record runs past the end of the file";
      break;
    }
    out.emplace_back(file.begin() + static_cast<std::ptrdiff_t>(off),
                     file.begin() + static_cast<std::ptrdiff_t>(off + incl));
    off += incl;
  }
  EXPECT_EQ(off, file.size());
  return out;
}

TEST(MacsecVectors, EveryPcapFrameValidatesAndDecrypts) {
  const auto dir = layersec::testing::vectors_dir() / "macsec";
  const auto frames = read_pcap(layersec::testing::read_file(dir / "macsec_vectors.pcap"));
  const json index = layersec::testing::load_vector_json("macsec/macsec_vectors.pcap.index.json");
  ASSERT_EQ(frames.size(), 48u);
  ASSERT_EQ(index.size(), frames.size());
  std::map<std::string, json> by_id;
  for (const auto& v : positive_vectors()) by_id[v.at("id")] = v;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const std::string id = index[i];
    SCOPED_TRACE(id);
    ASSERT_TRUE(by_id.count(id));
    const json& v = by_id[id];
    SecY rx = receiver_for(v);
    const auto k = keys_of(v);
    ASSERT_TRUE(rx.install_rx_sa(sci_of(v), v.at("an").get<std::uint8_t>(), k.keys, pn64_of(v))
                    .ok());
    auto frame = frames[i];
    auto r = rx.validate(frame);
    ASSERT_TRUE(r.ok()) << to_string(r.error());
    EXPECT_EQ(r->disposition, Disposition::kOk);
    EXPECT_EQ(to_hex(r->frame), to_hex(hex(v.at("unprotected_frame").at("full").get<std::string>())));
  }
}

}  // namespace
}  // namespace layersec::macsec
