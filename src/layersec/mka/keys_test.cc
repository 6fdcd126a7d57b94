// The MKA key hierarchy against ../shared/vectors/mka/mka_vectors.json:
// IEEE 802.1X-2020 Annex G (KDF, CAK and CKN from an MSK, KEK, ICK, SAK),
// RFC 4493 (AES-CMAC, the ICV primitive), RFC 3394 (AES key wrap, the SAK
// distribution), and the ICVs and the distributed SAK of eight MKPDUs that a
// real wpa_supplicant 2.10 pair exchanged (an independent implementation).
#include "layersec/mka/keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "layersec/base/hex.h"
#include "support/vectors.h"

namespace layersec::mka {
namespace {

using layersec::testing::hex;
using layersec::testing::load_vector_json;

const nlohmann::json& vectors() {
  static const nlohmann::json j = load_vector_json("mka/mka_vectors.json").at("vectors");
  return j;
}

std::vector<nlohmann::json> of_kind(const std::string& prefix) {
  std::vector<nlohmann::json> out;
  for (const auto& v : vectors()) {
    if (v.at("kind").get<std::string>().rfind(prefix, 0) == 0) out.push_back(v);
  }
  return out;
}

std::string upper_hex(ByteSpan b) {
  std::string s = to_hex(b);
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

MacAddress mac(const nlohmann::json& v) {
  const auto b = hex(v.get<std::string>());
  MacAddress m{};
  std::copy_n(b.begin(), 6, m.begin());
  return m;
}

SecretBytes secret(const nlohmann::json& v) { return SecretBytes(hex(v.get<std::string>())); }

TEST(MkaKeys, AnnexGKdf) {
  const auto vs = of_kind("KDF");
  ASSERT_EQ(vs.size(), 2u);
  for (const auto& v : vs) {
    const auto& in = v.at("inputs");
    std::vector<std::uint8_t> out(in.at("bits").get<std::size_t>() / 8);
    ASSERT_TRUE(kdf(hex(in.at("key")), in.at("label_ascii").get<std::string>(), hex(in.at("context")), out));
    EXPECT_EQ(upper_hex(out), v.at("expected").get<std::string>()) << v.at("id");
  }
}

TEST(MkaKeys, AnnexGCakAndCknFromMsk) {
  const auto cak_v = of_kind("CAK from EAP MSK");
  const auto ckn_v = of_kind("CKN from EAP MSK");
  ASSERT_EQ(cak_v.size(), 1u);
  ASSERT_EQ(ckn_v.size(), 1u);
  const auto& c = cak_v[0].at("inputs");
  auto cak = derive_cak(hex(c.at("msk_first16")), mac(c.at("mac_a")), mac(c.at("mac_b")));
  ASSERT_TRUE(cak);
  EXPECT_EQ(upper_hex(cak->span()), cak_v[0].at("expected").get<std::string>());
  // The lower MAC goes first whichever order the caller passes.
  auto swapped = derive_cak(hex(c.at("msk_first16")), mac(c.at("mac_b")), mac(c.at("mac_a")));
  ASSERT_TRUE(swapped);
  EXPECT_EQ(to_hex(swapped->span()), to_hex(cak->span()));

  const auto& k = ckn_v[0].at("inputs");
  auto ckn = derive_ckn(hex(k.at("msk_first16")), hex(k.at("eap_session_id")), mac(k.at("mac_a")),
                        mac(k.at("mac_b")));
  ASSERT_TRUE(ckn);
  EXPECT_EQ(upper_hex(*ckn), ckn_v[0].at("expected").get<std::string>());
}

TEST(MkaKeys, AnnexGKekIckSak) {
  int checked = 0;
  for (const auto& v : vectors()) {
    const std::string kind = v.at("kind");
    if (kind != "KEK" && kind != "ICK" && kind != "SAK") continue;
    const auto& in = v.at("inputs");
    const SecretBytes cak = secret(in.at("cak"));
    const auto derive = [&]() -> Result<SecretBytes, KeyError> {
      if (kind == "KEK") return derive_kek(cak, hex(in.at("ckn")));
      if (kind == "ICK") return derive_ick(cak, hex(in.at("ckn")));
      const auto kn = hex(in.at("kn"));
      if (kn.size() != 4) return Err(KeyError::kBadOutputLength);
      const std::uint32_t kn_value = (std::uint32_t{kn[0]} << 24) | (std::uint32_t{kn[1]} << 16) |
                                     (std::uint32_t{kn[2]} << 8) | kn[3];
      return derive_sak(cak, hex(in.at("ks_nonce")), hex(in.at("mi_value_list")), kn_value,
                        in.at("bits").get<std::size_t>() / 8);
    };
    auto key = derive();
    ASSERT_TRUE(key) << v.at("id");
    EXPECT_EQ(upper_hex(key->span()), v.at("expected").get<std::string>()) << v.at("id");
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(MkaKeys, Rfc4493CmacIsTheIcv) {
  const auto vs = of_kind("AES-CMAC");
  ASSERT_EQ(vs.size(), 4u);
  for (const auto& v : vs) {
    const auto& in = v.at("inputs");
    const SecretBytes key = secret(in.at("key"));
    const auto msg = hex(in.at("msg"));
    auto icv = compute_icv(key, msg);
    ASSERT_TRUE(icv);
    EXPECT_EQ(upper_hex(*icv), v.at("expected").get<std::string>()) << v.at("id");
    EXPECT_TRUE(verify_icv(key, msg, *icv));
  }
}

TEST(MkaKeys, Rfc3394KeyWrap) {
  int checked = 0;
  for (const auto& v : of_kind("AES Key Wrap")) {
    const auto& in = v.at("inputs");
    const SecretBytes kek = secret(in.at("kek"));
    const SecretBytes plain = secret(in.at("plaintext"));
    auto wrapped = wrap_key(kek, plain);
    if (kek.size() != 16 && kek.size() != 32) {
      // 192-bit KEKs are not used by MKA (CAK and so KEK are 128 or 256 bits).
      EXPECT_FALSE(wrapped);
      continue;
    }
    if (plain.size() != 16 && plain.size() != 32) {
      EXPECT_FALSE(wrapped) << v.at("id");
      continue;
    }
    ASSERT_TRUE(wrapped) << v.at("id");
    EXPECT_EQ(upper_hex(*wrapped), v.at("expected").get<std::string>()) << v.at("id");
    auto back = unwrap_key(kek, *wrapped);
    ASSERT_TRUE(back);
    EXPECT_EQ(to_hex(back->span()), to_hex(plain.span()));
    ++checked;
  }
  EXPECT_EQ(checked, 3);  // RFC 3394 4.1 (128/128), 4.3 (256/128), 4.6 (256/256)
}

TEST(MkaKeys, RealWpaSupplicantMkpdusVerifyAndTheirSakUnwraps) {
  const auto vs = of_kind("captured MKPDUs");
  ASSERT_EQ(vs.size(), 1u);
  const auto& in = vs[0].at("inputs");
  const SecretBytes cak = secret(in.at("cak"));
  const auto ckn = hex(in.at("ckn"));
  auto ick = derive_ick(cak, ckn);
  auto kek = derive_kek(cak, ckn);
  ASSERT_TRUE(ick);
  ASSERT_TRUE(kek);
  EXPECT_EQ(upper_hex(ick->span()), in.at("derived_ick").get<std::string>());
  EXPECT_EQ(upper_hex(kek->span()), in.at("derived_kek").get<std::string>());

  int verified = 0;
  int unwrapped = 0;
  for (const auto& m : vs[0].at("mkpdus")) {
    const auto frame = hex(m.at("mkpdu_hex"));
    ASSERT_GE(frame.size(), 18u + 16u);
    // EAPOL header after the 14-octet Ethernet header: version, type 5, body length.
    ASSERT_EQ(frame[15], 5);
    const std::size_t body = (std::size_t{frame[16]} << 8) | frame[17];
    ASSERT_LE(18 + body, frame.size());
    const ByteSpan all(frame.data(), 18 + body);
    const ByteSpan covered = all.first(all.size() - kIcvSize);
    const ByteSpan icv = all.last(kIcvSize);
    EXPECT_EQ(upper_hex(icv), m.at("icv").get<std::string>());
    EXPECT_TRUE(verify_icv(*ick, covered, icv)) << "frame " << m.at("frame_no");
    ++verified;
    // One flipped bit anywhere in the covered octets or the ICV fails.
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::vector<std::uint8_t> bad(all.begin(), all.end());
      bad[i] ^= static_cast<std::uint8_t>(1u << (i % 8));
      const ByteSpan b(bad);
      EXPECT_FALSE(verify_icv(*ick, b.first(b.size() - kIcvSize), b.last(kIcvSize))) << "octet " << i;
    }
    if (m.contains("distributed_sak")) {
      const auto& d = m.at("distributed_sak");
      auto sak = unwrap_key(*kek, hex(d.at("wrapped_sak")));
      ASSERT_TRUE(sak);
      EXPECT_EQ(upper_hex(sak->span()), d.at("unwrapped_sak").get<std::string>());
      ++unwrapped;
    }
  }
  EXPECT_EQ(verified, 8);
  EXPECT_EQ(unwrapped, 2);
}

TEST(MkaKeys, BadInputIsRefusedByReason) {
  const SecretBytes k16(std::vector<std::uint8_t>(16, 0x11));
  const SecretBytes k24(std::vector<std::uint8_t>(24, 0x11));
  const std::vector<std::uint8_t> ckn(16, 0x22);
  std::vector<std::uint8_t> out(16);
  EXPECT_EQ(kdf(k24.span(), "L", {}, out).error(), KeyError::kBadKeyLength);
  std::vector<std::uint8_t> empty;
  EXPECT_EQ(kdf(k16.span(), "L", {}, empty).error(), KeyError::kBadOutputLength);
  std::vector<std::uint8_t> too_long(1024);
  EXPECT_EQ(kdf(k16.span(), "L", {}, too_long).error(), KeyError::kBadOutputLength);
  EXPECT_EQ(derive_kek(k24, ckn).error(), KeyError::kBadKeyLength);
  EXPECT_EQ(derive_ick(k16, {}).error(), KeyError::kBadCknLength);
  EXPECT_EQ(derive_ick(k16, std::vector<std::uint8_t>(33, 1)).error(), KeyError::kBadCknLength);
  EXPECT_EQ(derive_cak(std::vector<std::uint8_t>(8, 1), {}, {}).error(), KeyError::kBadMskLength);
  EXPECT_EQ(derive_sak(k16, std::vector<std::uint8_t>(15, 1), {}, 1, 16).error(), KeyError::kBadNonceLength);
  EXPECT_EQ(derive_sak(k16, std::vector<std::uint8_t>(24, 1), {}, 1, 24).error(), KeyError::kBadOutputLength);
  EXPECT_EQ(unwrap_key(k16, std::vector<std::uint8_t>(32, 0)).error(), KeyError::kBadWrappedLength);
  EXPECT_EQ(unwrap_key(k16, std::vector<std::uint8_t>(24, 0)).error(), KeyError::kUnwrapFailed);
  EXPECT_FALSE(verify_icv(k16, ckn, std::vector<std::uint8_t>(15, 0)));
  EXPECT_FALSE(verify_icv(k24, ckn, std::vector<std::uint8_t>(16, 0)));
  for (auto e : {KeyError::kBadKeyLength, KeyError::kUnwrapFailed, KeyError::kBackend}) {
    EXPECT_FALSE(to_string(e).empty());
  }
}

TEST(MkaKeys, FingerprintIsSixteenHexDigitsAndNotTheKey) {
  const SecretBytes sak(hex("DA98EC396F36396244DCD839256B71C5"));
  const std::string fp = fingerprint(sak);
  EXPECT_EQ(fp.size(), 16u);
  EXPECT_EQ(fp.find("da98ec39"), std::string::npos);
  EXPECT_EQ(fp, fingerprint(sak.span()));
}

}  // namespace
}  // namespace layersec::mka
