// Tests of the static-SA options of `macsec protect|validate`
// (static_sa_config.h): each refusal names its option, and a complete set
// of options becomes the SecYConfig and SaKeys it says.
#include "layersec/macsec/static_sa_config.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace layersec::macsec {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(StaticSaConfigTest, HexOptionsAreCheckedForDigitsAndSize) {
  EXPECT_EQ(parse_hex_option("--x", "00ff"), (std::vector<std::uint8_t>{0x00, 0xff}));
  EXPECT_EQ(error_of([] { (void)parse_hex_option("--x", "0g"); }), "--x: not valid hex");
  EXPECT_EQ(error_of([] { (void)parse_hex_option("--x", "00", 2); }), "--x: expected 2 octets");
}

TEST(StaticSaConfigTest, SuiteAndPnSpace) {
  StaticSaOptions o;
  o.suite = "GCM-AES-XPN-256";
  EXPECT_EQ(static_sa_suite(o), CipherSuite::kGcmAesXpn256);
  o.suite = "GCM-AES-512";
  EXPECT_EQ(error_of([&] { (void)static_sa_suite(o); }), "unknown cipher suite GCM-AES-512");
  o.pn = 0xffffffffULL;
  EXPECT_EQ(error_of([&] { check_static_sa_pn(o, CipherSuite::kGcmAes128); }), "(no error)");
  o.pn = 0x100000000ULL;
  EXPECT_EQ(error_of([&] { check_static_sa_pn(o, CipherSuite::kGcmAes128); }),
            "--pn: 4294967296 is beyond the last PN of GCM-AES-128 (4294967295)");
  EXPECT_EQ(error_of([&] { check_static_sa_pn(o, CipherSuite::kGcmAesXpn128); }), "(no error)");
}

TEST(StaticSaConfigTest, SciNeedsAPort) {
  EXPECT_EQ(sci_option("--sci", "0211223344550001").value, 0x0211223344550001ULL);
  EXPECT_EQ(error_of([] { (void)sci_option("--sci", "0211223344550000"); }),
            "--sci: port identifier 0 (the last 4 hex digits) names no port");
  EXPECT_EQ(error_of([] { (void)sci_option("--sci", "02112233"); }), "--sci: expected 8 octets");
}

TEST(StaticSaConfigTest, OptionsBecomeTheSecYConfig) {
  StaticSaOptions o;
  o.integrity = true;
  o.offset = 30;
  o.no_sci = true;
  o.es = true;
  o.clear_tags = true;
  o.clear_tags_in_icv = true;
  o.validate_frames = "check";
  o.window = 7;
  o.no_replay = true;
  const SecYConfig c = static_secy_config(o, CipherSuite::kGcmAes256);
  EXPECT_EQ(c.suite, CipherSuite::kGcmAes256);
  EXPECT_EQ(c.sci.value, 0x0211223344550001ULL);
  EXPECT_FALSE(c.confidentiality);
  EXPECT_EQ(c.confidentiality_offset, 30);
  EXPECT_FALSE(c.include_sci);
  EXPECT_TRUE(c.use_es);
  EXPECT_EQ(c.vlan_mode, VlanMode::kClearTag);
  EXPECT_TRUE(c.clear_tags_in_icv);
  EXPECT_EQ(c.validate_frames, ValidateFrames::kCheck);
  EXPECT_FALSE(c.replay_protect);
  EXPECT_EQ(c.replay_window, 7u);

  o.offset = 20;
  EXPECT_EQ(error_of([&] { (void)static_secy_config(o, CipherSuite::kGcmAes128); }),
            "--offset: must be 0, 30 or 50 (802.1AE-2018 10.7.24)");
  o.offset = 0;
  o.validate_frames = "lenient";
  EXPECT_EQ(error_of([&] { (void)static_secy_config(o, CipherSuite::kGcmAes128); }),
            "--validate must be strict, check or disabled");
}

TEST(StaticSaConfigTest, SaKeysViewTheSakAndParseSsciAndSalt) {
  StaticSaOptions o;
  o.ssci = "01020304";
  o.salt = "0a0b0c0d0e0f101112131415";
  const std::vector<std::uint8_t> key(16, 0x5a);
  const SecretBytes sak(key);
  const SaKeys k = static_sa_keys(o, sak);
  EXPECT_EQ(k.sak.data(), sak.span().data());
  EXPECT_EQ(k.ssci, 0x01020304u);
  EXPECT_EQ(k.salt[0], 0x0a);
  EXPECT_EQ(k.salt[11], 0x15);
  o.salt = "00";
  EXPECT_EQ(error_of([&] { (void)static_sa_keys(o, sak); }), "--salt: expected 12 octets");
}

}  // namespace
}  // namespace layersec::macsec
