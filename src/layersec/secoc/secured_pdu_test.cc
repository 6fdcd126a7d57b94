// Secured I-PDU codec and MAC input against the shared SecOC vectors
// (../shared/vectors/secoc/cmac_secoc_vectors.json): the external carloscn
// vector, the derived Profile 1/2/3/header/SOME-IP vectors and the negative
// case; plus exhaustive bit-packing round trips.
#include "layersec/secoc/secured_pdu.h"

#include <random>

#include <gtest/gtest.h>

#include "layersec/secoc/engine.h"
#include "support/vectors.h"

namespace layersec::secoc {
namespace {

using layersec::testing::hex;

std::uint64_t be_number(const std::vector<std::uint8_t>& b) {
  std::uint64_t v = 0;
  for (auto x : b) v = (v << 8) | x;
  return v;
}

// Profile from a derived vector's lengths (FV layouts as our presets).
PduProfile profile_for(const nlohmann::json& v) {
  const unsigned fv_len = v["freshness_value_length_bits"].get<unsigned>();
  const unsigned fv_tx = v["freshness_trunc_bits"].get<unsigned>();
  PduProfile p = PduProfile::profile1();
  p.kind = ProfileKind::kCustom;
  p.auth_info_tx_length = static_cast<std::uint16_t>(v["mac_trunc_bits"].get<unsigned>());
  if (fv_len == 0) p.freshness = FreshnessLayout{};
  else if (fv_tx == 4) p.freshness = PduProfile::profile3().freshness;
  else p.freshness = FreshnessLayout::fv64(static_cast<std::uint8_t>(fv_tx));
  EXPECT_EQ(p.freshness.total(), fv_len);
  p.auth_pdu_header_length = static_cast<std::uint8_t>(v["secured_pdu_header_bytes"].get<unsigned>());
  EXPECT_EQ(p.validate(), "");
  return p;
}

std::unique_ptr<crypto::Mac> cmac128(const std::vector<std::uint8_t>& key) {
  auto m = crypto::make_mac(crypto::MacAlgorithm::kCmacAes128, key);
  EXPECT_TRUE(m.ok());
  return std::move(m).value();
}

TEST(SecuredPdu, DerivedProfileVectors) {
  const auto j = layersec::testing::load_vector_json("secoc/cmac_secoc_vectors.json");
  ASSERT_TRUE(j.contains("secoc_derived"));
  int n = 0;
  for (const auto& v : j["secoc_derived"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const PduProfile p = profile_for(v);
    const auto key = hex(v["key"]);
    const auto authentic = hex(v["authentic_pdu"]);
    const std::uint16_t data_id = static_cast<std::uint16_t>(be_number(hex(v["data_id"])));
    const std::uint64_t fv = be_number(hex(v["freshness_value_full"]));
    auto mac = cmac128(key);
    std::array<std::uint8_t, kMaxTagBytes> tag{};
    ASSERT_TRUE(compute_authenticator(*mac, p, data_id, {}, authentic, fv, tag).ok());
    const auto want_mac = hex(v["truncated_mac"].get<std::string>().size() % 2
                                  ? v["truncated_mac"].get<std::string>() + "0"
                                  : v["truncated_mac"].get<std::string>());
    EXPECT_EQ(std::vector<std::uint8_t>(tag.begin(), tag.begin() + want_mac.size()), want_mac);
    const std::string tfv = v["truncated_fv"];
    const std::uint64_t want_tfv = tfv.empty() ? 0 : std::stoull(tfv, nullptr, 16);
    EXPECT_EQ(fv & FreshnessLayout::mask(p.freshness.tx_bits), want_tfv);
    std::vector<std::uint8_t> out(p.secured_size(authentic.size()));
    auto w = write_secured_pdu(p, authentic, want_tfv, ByteSpan(tag.data(), want_mac.size()), out);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(out, hex(v["secured_pdu"]));
    auto parsed = parse_secured_pdu(p, out);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(std::vector<std::uint8_t>(parsed->authentic.begin(), parsed->authentic.end()), authentic);
    EXPECT_EQ(parsed->truncated_fv, want_tfv);
    EXPECT_EQ(std::vector<std::uint8_t>(parsed->tag.begin(), parsed->tag.begin() + want_mac.size()),
              want_mac);
    ++n;
  }
  EXPECT_EQ(n, 5);
}

TEST(SecuredPdu, ExternalCarloscnVectorAndEndianNegative) {
  const auto j = layersec::testing::load_vector_json("secoc/cmac_secoc_vectors.json");
  const auto& v = j["secoc_external"][0];
  PduProfile p = PduProfile::profile1();  // 24-bit MAC, 64-bit FV
  const auto key = hex(v["key"]);
  const auto authentic = hex(v["authentic_pdu"]);
  const std::uint64_t fv = be_number(hex(v["freshness_value_full"]));
  auto mac = cmac128(key);
  std::array<std::uint8_t, kMaxTagBytes> tag{};
  ASSERT_TRUE(compute_authenticator(*mac, p, 0x0309, {}, authentic, fv, tag).ok());
  EXPECT_EQ(std::vector<std::uint8_t>(tag.begin(), tag.begin() + 3), hex(v["expected_truncated_mac_24bit"]));
  // Little-endian DataId (09 03) gives the published negative value instead.
  ASSERT_TRUE(compute_authenticator(*mac, p, 0x0903, {}, authentic, fv, tag).ok());
  EXPECT_EQ(std::vector<std::uint8_t>(tag.begin(), tag.begin() + 3),
            hex(v["negative_check_little_endian_data_id"]));
}

TEST(SecuredPdu, NegativeVectorFlippedBitDoesNotVerify) {
  const auto j = layersec::testing::load_vector_json("secoc/cmac_secoc_vectors.json");
  const auto& neg = j["secoc_negative"][0];
  const auto& orig = j["secoc_derived"][0];
  const PduProfile p = profile_for(orig);
  auto authentic = hex(orig["authentic_pdu"]);
  authentic[0] ^= 0x01;  // as in the negative case's DataToAuthenticator
  auto mac = cmac128(hex(orig["key"]));
  std::array<std::uint8_t, kMaxTagBytes> tag{};
  ASSERT_TRUE(compute_authenticator(*mac, p, 0x0100, {}, authentic, 0x102, tag).ok());
  const auto full = hex(neg["full_cmac"]);
  EXPECT_EQ(std::vector<std::uint8_t>(tag.begin(), tag.begin() + 3),
            std::vector<std::uint8_t>(full.begin(), full.begin() + 3));
  EXPECT_NE(std::vector<std::uint8_t>(tag.begin(), tag.begin() + 3),
            hex(neg["expected_truncated_mac_of_original"]));
}

TEST(SecuredPdu, BitPackingRoundTripsForAllLengths) {
  std::mt19937_64 rng(7);
  for (unsigned fv_tx = 0; fv_tx <= 24; ++fv_tx) {
    for (unsigned mac_bits = 1; mac_bits <= 130; ++mac_bits) {
      PduProfile p = PduProfile::vendor();
      p.algorithm = AuthAlgorithm::kHmacSha256;
      p.auth_info_tx_length = static_cast<std::uint16_t>(mac_bits);
      p.freshness = fv_tx == 0 ? FreshnessLayout{} : FreshnessLayout{8, 8, 40, 0, static_cast<std::uint8_t>(fv_tx)};
      ASSERT_EQ(p.validate(), "") << fv_tx << " " << mac_bits;
      std::vector<std::uint8_t> authentic(rng() % 5);
      for (auto& b : authentic) b = static_cast<std::uint8_t>(rng());
      std::array<std::uint8_t, kMaxTagBytes> tag{};
      for (auto& b : tag) b = static_cast<std::uint8_t>(rng());
      const std::uint64_t tfv = rng() & FreshnessLayout::mask(fv_tx);
      std::vector<std::uint8_t> out(p.secured_size(authentic.size()));
      ASSERT_EQ(out.size(), authentic.size() + (fv_tx + mac_bits + 7) / 8);
      ASSERT_TRUE(write_secured_pdu(p, authentic, tfv, tag, out).ok());
      auto parsed = parse_secured_pdu(p, out);
      ASSERT_TRUE(parsed.ok());
      EXPECT_EQ(parsed->truncated_fv, tfv);
      std::array<std::uint8_t, kMaxTagBytes> want{};
      crypto::truncate_bits(tag, mac_bits, want);
      EXPECT_EQ(std::vector<std::uint8_t>(parsed->tag.begin(), parsed->tag.begin() + (mac_bits + 7) / 8),
                std::vector<std::uint8_t>(want.begin(), want.begin() + (mac_bits + 7) / 8));
      // Any nonzero pad bit is rejected.
      const unsigned pad = static_cast<unsigned>(8 * p.auth_info_bytes() - fv_tx - mac_bits);
      if (pad) {
        out.back() ^= 1;
        auto bad = parse_secured_pdu(p, out);
        ASSERT_FALSE(bad.ok());
        EXPECT_EQ(bad.error(), CodecError::kNonZeroPadding);
      }
    }
  }
}

TEST(SecuredPdu, HeaderAndLengthErrors) {
  PduProfile p = PduProfile::profile1();
  p.auth_pdu_header_length = 2;
  std::vector<std::uint8_t> authentic = {1, 2, 3};
  std::array<std::uint8_t, kMaxTagBytes> tag{};
  std::vector<std::uint8_t> out(p.secured_size(3));
  ASSERT_TRUE(write_secured_pdu(p, authentic, 5, tag, out).ok());
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 3);
  ASSERT_TRUE(parse_secured_pdu(p, out).ok());
  out[1] = 4;
  auto r = parse_secured_pdu(p, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), CodecError::kBadHeaderLength);
  auto s = parse_secured_pdu(p, ByteSpan(out.data(), 5));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), CodecError::kTooShort);
  // A 1-byte header cannot carry 256.
  p.auth_pdu_header_length = 1;
  std::vector<std::uint8_t> big(256), o2(p.secured_size(256));
  auto w = write_secured_pdu(p, big, 0, tag, o2);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error(), CodecError::kPayloadTooLong);
}

TEST(SecuredPdu, SecuredArea) {
  PduProfile p = PduProfile::profile1();
  p.secured_area_offset = 2;
  p.secured_area_length = 3;
  std::vector<std::uint8_t> a = {0, 1, 2, 3, 4, 5};
  auto area = secured_area(p, a);
  ASSERT_TRUE(area.ok());
  EXPECT_EQ(area->size(), 3u);
  EXPECT_EQ((*area)[0], 2);
  auto short_area = secured_area(p, ByteSpan(a.data(), 4));
  ASSERT_FALSE(short_area.ok());
  EXPECT_EQ(short_area.error(), CodecError::kSecuredAreaOutside);
  p.secured_area_length = 0;  // to the end
  auto rest = secured_area(p, a);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), 4u);
}

}  // namespace
}  // namespace layersec::secoc
