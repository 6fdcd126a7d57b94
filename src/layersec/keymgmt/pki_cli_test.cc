#include "layersec/keymgmt/pki_cli.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace layersec::keymgmt {
namespace {

TEST(PkiCli, ServiceIdsAreHexOrDecimalWithinSixteenBits) {
  EXPECT_EQ(parse_service_id("0x1234"), 0x1234);
  EXPECT_EQ(parse_service_id("4660"), 0x1234);
  EXPECT_EQ(parse_service_id("0xffff"), 0xffff);
  EXPECT_THROW((void)parse_service_id("0x10000"), PkiUsageError);
  EXPECT_THROW((void)parse_service_id("12x"), PkiUsageError);
  EXPECT_THROW((void)parse_service_id("svc"), PkiUsageError);
  EXPECT_EQ(parse_service_ids("0x1234,,5"), (std::vector<std::uint16_t>{0x1234, 5}));
  try {
    (void)parse_service_ids(",");
    FAIL();
  } catch (const PkiUsageError& e) {
    EXPECT_STREQ(e.what(), "--services needs at least one service id");
  }
  EXPECT_EQ(service_list({0x1234, 5}), "0x1234,0x0005");
}

TEST(PkiCli, NamesMustBeFileStems) {
  EXPECT_NO_THROW(check_name("ecu-1"));
  EXPECT_THROW(check_name("a/b"), PkiUsageError);
  EXPECT_THROW(check_name(".."), PkiUsageError);
  EXPECT_THROW(check_name(std::string(65, 'x')), PkiUsageError);
}

TEST(PkiCli, ValidityEndsByTheLastX509Time) {
  const std::int64_t now = 1'700'000'000;
  EXPECT_EQ(days_validity(now, 1).not_after, kex::Validity::days_from(now, 1).not_after);
  try {
    (void)days_validity(now, 2'950'000);
    FAIL();
  } catch (const PkiUsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--days 2950000 ends after 9999-12-31T23:59:59Z", 0), 0u) << e.what();
  }
  EXPECT_EQ(issue_validity(10, 20, 365, now).not_after, 20);
  EXPECT_THROW((void)issue_validity(10, 0, 365, now), PkiUsageError);
  EXPECT_THROW((void)issue_validity(20, 10, 365, now), PkiUsageError);
  EXPECT_EQ(issue_validity(0, 0, 1, now).not_after, days_validity(now, 1).not_after);
}

TEST(PkiCli, CaKindAndAlgorithm) {
  EXPECT_EQ(parse_ca_kind("substation"), kex::CaKind::kSubstation);
  EXPECT_THROW((void)parse_ca_kind("plant"), PkiUsageError);
  EXPECT_EQ(parse_ca_algorithm("ed25519"), kex::KeyAlgorithm::kEd25519);
  EXPECT_THROW((void)parse_ca_algorithm("rsa2048"), PkiUsageError);
}

TEST(PkiCli, TimesAndStems) {
  EXPECT_EQ(iso_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso_time(kex::kMaxCertificateTime), "9999-12-31T23:59:59Z");
  EXPECT_EQ(split_stem("dir/sub/n"), (std::pair<std::string, std::string>{"dir/sub", "n"}));
  EXPECT_EQ(split_stem("n"), (std::pair<std::string, std::string>{".", "n"}));
}

TEST(PkiCli, EnsureDirCreatesPrivateDirectories) {
  char tmpl[] = "/tmp/pki_cli_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string base(tmpl);
  ensure_dir(base + "/a/b");
  EXPECT_TRUE(is_dir(base + "/a/b"));
  EXPECT_NO_THROW(ensure_dir(base + "/a/b"));
  EXPECT_THROW(ensure_dir("/proc/self/status/x"), PkiUsageError);
  EXPECT_EQ(std::system(("rm -rf '" + base + "'").c_str()), 0);
}

TEST(PkiCli, CertificateSummaryAndVerification) {
  const std::int64_t now = 1'700'000'000;
  auto ca = kex::create_ca({"test-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256, kex::Validity::days_from(now, 2)});
  ASSERT_TRUE(ca.ok());
  auto id = kex::issue_certificate(*ca, {"ecu", {0x1234}, kex::KeyAlgorithm::kEcdsaP256, kex::Validity::days_from(now, 1)});
  ASSERT_TRUE(id.ok());
  const std::string text = format_certificate_info(id->certificate.info());
  EXPECT_NE(text.find("services:     0x1234\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ca:           no\n"), std::string::npos);
  EXPECT_NE(text.find("not before:   " + iso_time(kex::Validity::days_from(now, 1).not_before)), std::string::npos);
  EXPECT_EQ(text.find("PRIVATE"), std::string::npos);

  char tmpl[] = "/tmp/pki_cli_verify.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir(tmpl);
  KeyFileError detail{};
  ensure_dir(dir + "/ca");
  ASSERT_TRUE(kex::save_ca(dir + "/ca", *ca, &detail).ok());
  ASSERT_TRUE(kex::save_identity(dir, "ecu", *id, &detail).ok());
  std::string m;
  ASSERT_TRUE(verify_node({dir + "/ca", dir + "/ecu.pem", "0x1234", dir + "/ecu.key"}, now + 60, &m)) << m;
  EXPECT_EQ(m, "OK ecu authorised for 0x1234");
  ASSERT_FALSE(verify_node({dir + "/ca", dir + "/ecu.pem", "0x5678", ""}, now + 60, &m));
  EXPECT_NE(m.find("0x5678"), std::string::npos) << m;
  EXPECT_FALSE(verify_node({dir + "/ca", dir + "/ecu.pem", "", ""}, now + 3 * 86400, &m));  // expired
  EXPECT_FALSE(verify_node({dir + "/ca", dir + "/ecu.pem", "", dir + "/ca/ca.key"}, now + 60, &m));  // not its key
  EXPECT_THROW((void)verify_node({dir + "/ca", dir + "/ecu.pem", "bad", ""}, now + 60, &m), PkiUsageError);
  EXPECT_TRUE(load_trust(dir + "/ca", &m).has_value());
  EXPECT_FALSE(load_trust(dir + "/none", &m).has_value());
  EXPECT_EQ(m.rfind("--ca: ", 0), 0u) << m;
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

}  // namespace
}  // namespace layersec::keymgmt
