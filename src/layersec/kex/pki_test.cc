#include "layersec/kex/pki.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layersec/base/hex.h"

namespace layersec::kex {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kNow = 1'780'000'000;  // 2026-05-28, fixed: no clock in tests
constexpr std::int64_t kDay = 86400;

// Generating keys is slow in Debug+ASan, so one vehicle PKI is shared.
struct Pki {
  Identity ca;
  Identity ecu_rsa;    // services 0x1234, 0x5678
  Identity ecu_p256;   // service 0x1234
  Identity ecu_ed;     // service 0x4000
  Identity other_ca;   // a different vehicle
  Identity foreign;    // issued by other_ca for 0x1234
};

const Pki& pki() {
  static const Pki* p = [] {
    auto* out = new Pki;
    auto ca = create_ca({"vehicle-ca", CaKind::kVehicle, KeyAlgorithm::kEcdsaP256,
                         Validity::days_from(kNow, 3650)});
    EXPECT_TRUE(ca.ok());
    out->ca = std::move(ca).value();
    auto issue = [&](const Identity& ca_id, const std::string& name,
                     std::vector<std::uint16_t> services, KeyAlgorithm alg) {
      auto r = issue_certificate(ca_id, {name, std::move(services), alg, Validity::days_from(kNow, 365)});
      EXPECT_TRUE(r.ok());
      return std::move(r).value();
    };
    out->ecu_rsa = issue(out->ca, "ecu-brake", {0x5678, 0x1234}, KeyAlgorithm::kRsa2048);
    out->ecu_p256 = issue(out->ca, "ecu-body", {0x1234}, KeyAlgorithm::kEcdsaP256);
    out->ecu_ed = issue(out->ca, "ecu-adas", {0x4000}, KeyAlgorithm::kEd25519);
    auto other = create_ca({"other-ca", CaKind::kVehicle, KeyAlgorithm::kEd25519,
                            Validity::days_from(kNow, 3650)});
    EXPECT_TRUE(other.ok());
    out->other_ca = std::move(other).value();
    out->foreign = issue(out->other_ca, "intruder", {0x1234}, KeyAlgorithm::kEcdsaP256);
    return out;
  }();
  return *p;
}

TrustStore store_of(const Identity& ca) {
  auto t = TrustStore::create(std::span<const Certificate>(&ca.certificate, 1));
  EXPECT_TRUE(t.ok());
  return std::move(t).value();
}

TEST(PkiTest, IssuedCertificatesVerifyAndListServices) {
  const auto store = store_of(pki().ca);
  for (const Identity* id : {&pki().ecu_rsa, &pki().ecu_p256, &pki().ecu_ed}) {
    std::string detail;
    auto s = store.verify(id->certificate, kNow, &detail);
    EXPECT_TRUE(s.ok()) << detail;
  }
  auto services = pki().ecu_rsa.certificate.services();
  ASSERT_TRUE(services.ok());
  EXPECT_EQ(*services, (std::vector<std::uint16_t>{0x1234, 0x5678}));  // sorted
  const auto info = pki().ecu_rsa.certificate.info();
  EXPECT_EQ(info.common_name, "ecu-brake");
  EXPECT_NE(info.subject.find("OU=ECU"), std::string::npos);
  EXPECT_NE(info.issuer.find("CN=vehicle-ca"), std::string::npos);
  EXPECT_EQ(info.key_algorithm, "RSA-2048");
  EXPECT_FALSE(info.is_ca);
  EXPECT_EQ(info.not_after - info.not_before, 365 * kDay + 60);
  EXPECT_EQ(info.key_usage, (std::vector<std::string>{"digitalSignature", "keyEncipherment"}));
  EXPECT_EQ(pki().ecu_p256.certificate.info().key_usage, (std::vector<std::string>{"digitalSignature"}));
  EXPECT_TRUE(pki().ca.certificate.info().is_ca);
}

TEST(PkiTest, ServiceAuthorisation) {
  const auto store = store_of(pki().ca);
  EXPECT_TRUE(store.verify_for_service(pki().ecu_rsa.certificate, kNow, 0x5678).ok());
  auto s = store.verify_for_service(pki().ecu_rsa.certificate, kNow, 0x9999);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PkiError::kUnauthorisedService);
  auto e = check_service_authorised(pki().ecu_ed.certificate, 0x1234);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), PkiError::kUnauthorisedService);
  // A CA certificate has no service list at all.
  auto c = check_service_authorised(pki().ca.certificate, 0x1234);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), PkiError::kNoServiceExtension);
}

TEST(PkiTest, ExpiredAndNotYetValid) {
  const auto store = store_of(pki().ca);
  auto expired = issue_certificate(pki().ca, {"old-ecu", {0x1234}, KeyAlgorithm::kEcdsaP256,
                                              {kNow - 30 * kDay, kNow - kDay}});
  ASSERT_TRUE(expired.ok());
  auto s = store.verify(expired->certificate, kNow);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PkiError::kExpired);
  auto future = issue_certificate(pki().ca, {"new-ecu", {0x1234}, KeyAlgorithm::kEcdsaP256,
                                             {kNow + kDay, kNow + 30 * kDay}});
  ASSERT_TRUE(future.ok());
  auto f = store.verify(future->certificate, kNow);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error(), PkiError::kNotYetValid);
  // The same certificate is fine once time has moved on: time is injected.
  EXPECT_TRUE(store.verify(future->certificate, kNow + 2 * kDay).ok());
  // And the valid ECU expires after a year.
  auto late = store.verify(pki().ecu_p256.certificate, kNow + 400 * kDay);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error(), PkiError::kExpired);
}

TEST(PkiTest, ExpiredCaRejectsItsNodes) {
  auto ca = create_ca({"short-ca", CaKind::kSubstation, KeyAlgorithm::kEd25519,
                       {kNow - 10 * kDay, kNow - kDay}});
  ASSERT_TRUE(ca.ok());
  auto ied = issue_certificate(*ca, {"ied-1", {0x4000}, KeyAlgorithm::kEd25519,
                                     Validity::days_from(kNow, 30)});
  ASSERT_TRUE(ied.ok());
  EXPECT_NE(ied->certificate.info().subject.find("OU=IED"), std::string::npos);
  const auto store = store_of(*ca);
  auto s = store.verify(ied->certificate, kNow);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PkiError::kExpired);
}

TEST(PkiTest, WrongCa) {
  const auto store = store_of(pki().ca);
  std::string detail;
  auto s = store.verify(pki().foreign.certificate, kNow, &detail);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PkiError::kWrongCa) << detail;
  // The other CA's own certificate is not trusted either.
  auto t = store.verify(pki().other_ca.certificate, kNow);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), PkiError::kWrongCa);
}

TEST(PkiTest, CaCertificateCannotActAsNode) {
  const auto store = store_of(pki().ca);
  auto s = store.verify(pki().ca.certificate, kNow);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PkiError::kWrongPurpose);
}

TEST(PkiTest, TamperedCertificateSignatureIsRejected) {
  auto der = pki().ecu_p256.certificate.der();
  // Flip a byte inside the subject CN (the signed part), keep the DER valid.
  const std::string cn = "ecu-body";
  auto it = std::search(der.begin(), der.end(), cn.begin(), cn.end());
  ASSERT_NE(it, der.end());
  *it = 'E';
  auto cert = Certificate::from_der(der);
  ASSERT_TRUE(cert.ok());
  const auto store = store_of(pki().ca);
  auto s = store.verify(*cert, kNow);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PkiError::kWrongCa);
}

TEST(PkiTest, MalformedCertificates) {
  const auto der = pki().ecu_p256.certificate.der();
  auto expect_malformed = [](ByteSpan bytes) {
    auto c = Certificate::from_der(bytes);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(), PkiError::kMalformedCertificate);
  };
  expect_malformed({});
  expect_malformed(ByteSpan(der).first(der.size() - 1));  // truncated
  auto trailing = der;
  trailing.push_back(0);
  expect_malformed(trailing);
  std::vector<std::uint8_t> garbage(300, 0x30);
  expect_malformed(garbage);
  const std::string not_pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  auto p = Certificate::from_pem(
      ByteSpan(reinterpret_cast<const std::uint8_t*>(not_pem.data()), not_pem.size()));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), PkiError::kMalformedCertificate);
  // PEM round trip.
  const auto pem = pki().ecu_p256.certificate.pem();
  auto q = Certificate::from_pem(ByteSpan(reinterpret_cast<const std::uint8_t*>(pem.data()), pem.size()));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->der(), der);
}

TEST(PkiTest, ServicesExtensionEncoding) {
  const std::vector<std::uint16_t> s = {0x0000, 0x007F, 0x0080, 0x00FF, 0x1234, 0x7FFF, 0x8000, 0xFFFF};
  auto der = encode_services(s);
  ASSERT_TRUE(der.ok());
  EXPECT_EQ(to_hex(*der),
            "3020020100"
            "02017f"
            "02020080"
            "020200ff"
            "02021234"
            "02027fff"
            "0203008000"
            "020300ffff");
  auto back = parse_services(*der);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  auto bad = [](const std::string& h) {
    auto r = parse_services(hex_bytes(h));
    ASSERT_FALSE(r.ok()) << h;
    EXPECT_EQ(r.error(), PkiError::kMalformedCertificate) << h;
  };
  bad("3000");                  // empty list
  bad("3004020112020101");      // not ascending
  bad("30040201120201");        // truncated
  bad("3003020200");            // inner length past the end
  bad("300402020012");          // non-minimal INTEGER
  bad("30030201ff");            // negative
}

TEST(PkiTest, ServicesExtensionRejectsMore) {
  auto bad = [](const std::string& h) {
    auto r = parse_services(hex_bytes(h));
    ASSERT_FALSE(r.ok()) << h;
  };
  bad("300502030100 00");       // 0x10000 out of range
  bad("3003020112 00");         // trailing byte
  bad("31030201 12");           // SET instead of SEQUENCE
  bad("308103020112");          // non-minimal length
  EXPECT_FALSE(encode_services(std::vector<std::uint16_t>{}).ok());
  EXPECT_FALSE(encode_services(std::vector<std::uint16_t>{2, 1}).ok());
}

TEST(PkiTest, SignaturesForEveryKeyType) {
  const std::string a = "layersec mode-b", b = " transcript";
  const ByteSpan parts[] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(a.data()), a.size()),
                            ByteSpan(reinterpret_cast<const std::uint8_t*>(b.data()), b.size())};
  for (const Identity* id : {&pki().ecu_rsa, &pki().ecu_p256, &pki().ecu_ed}) {
    auto sig = sign(id->key, parts);
    ASSERT_TRUE(sig.ok());
    const PublicKey pub = id->certificate.public_key();
    EXPECT_TRUE(verify_signature(pub, parts, *sig).ok());
    auto tampered = *sig;
    tampered[tampered.size() / 2] ^= 0x01;
    auto s = verify_signature(pub, parts, tampered);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error(), PkiError::kBadSignature);
    // Another message.
    const ByteSpan one[] = {parts[0]};
    auto m = verify_signature(pub, one, *sig);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error(), PkiError::kBadSignature);
    // Another key.
    auto k = verify_signature(pki().foreign.certificate.public_key(), parts, *sig);
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(k.error(), PkiError::kBadSignature);
    auto e = verify_signature(pub, parts, {});
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), PkiError::kBadSignature);
  }
  auto ed = sign(pki().ecu_ed.key, parts);
  ASSERT_TRUE(ed.ok());
  EXPECT_EQ(ed->size(), 64u);
}

TEST(PkiTest, KeysAreSavedWith0600AndLoosePermissionsAreRefused) {
  std::string tmpl = (fs::temp_directory_path() / "layersec_pki_XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string dir = tmpl;
  ::layersec::KeyFileError detail{};
  ASSERT_TRUE(save_ca(dir, pki().ca, &detail).ok());
  ASSERT_TRUE(save_identity(dir, "ecu-body", pki().ecu_p256, &detail).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir + "/ca.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  auto ca = load_ca(dir, &detail);
  ASSERT_TRUE(ca.ok());
  EXPECT_EQ(ca->certificate.der(), pki().ca.certificate.der());
  auto id = load_identity(dir, "ecu-body", &detail);
  ASSERT_TRUE(id.ok());
  // The reloaded key signs something the certificate verifies.
  const std::uint8_t msg[] = {1, 2, 3};
  const ByteSpan parts[] = {ByteSpan(msg)};
  auto sig = sign(id->key, parts);
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(verify_signature(id->certificate.public_key(), parts, *sig).ok());

  ASSERT_EQ(::chmod((dir + "/ecu-body.key").c_str(), 0644), 0);
  auto refused = load_identity(dir, "ecu-body", &detail);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), PkiError::kKeyFile);
  EXPECT_EQ(detail, ::layersec::KeyFileError::kInsecureMode);
  // No overwrite of an existing key.
  auto again = save_ca(dir, pki().ca, &detail);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(detail, ::layersec::KeyFileError::kExists);
  // A certificate that does not match the key is refused.
  ASSERT_TRUE(pki().ecu_ed.certificate.save(dir + "/mixed.pem").ok());
  ASSERT_TRUE(pki().ecu_p256.key.save(dir + "/mixed.key").ok());
  auto mixed = load_identity(dir, "mixed", &detail);
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error(), PkiError::kMalformedKey);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Issue 13 item 14: `keys issue --days 99999999` wrote a certificate that
// OpenSSL then called malformed. Validity is capped at 9999-12-31T23:59:59Z.
TEST(PkiTest, ValidityAfterYear9999IsRefused) {
  auto far = issue_certificate(pki().ca, {"far", {0x1234}, KeyAlgorithm::kEd25519,
                                          Validity::days_from(kNow, 99'999'999)});
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error(), PkiError::kValidityOutOfRange);
  auto one_past = issue_certificate(pki().ca, {"far", {0x1234}, KeyAlgorithm::kEd25519,
                                               {kNow, kMaxCertificateTime + 1}});
  ASSERT_FALSE(one_past.ok());
  EXPECT_EQ(one_past.error(), PkiError::kValidityOutOfRange);
  auto negative = issue_certificate(pki().ca, {"far", {0x1234}, KeyAlgorithm::kEd25519, {-1, kNow}});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error(), PkiError::kValidityOutOfRange);
  // The last encodable second works, and survives a DER round trip.
  auto last = issue_certificate(pki().ca, {"last", {0x1234}, KeyAlgorithm::kEd25519, {kNow, kMaxCertificateTime}});
  ASSERT_TRUE(last.ok()) << to_string(last.error());
  auto again = Certificate::from_der(last->certificate.der());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->info().not_after, kMaxCertificateTime);
  EXPECT_TRUE(store_of(pki().ca).verify(*again, kNow + kDay).ok());
}

// Issue 13 item 15: a 300-character CN gave "OpenSSL internal failure".
TEST(PkiTest, CommonNameLongerThan64CharactersIsRefusedByName) {
  const std::string long_name(300, 'a');
  auto ca = create_ca({long_name, CaKind::kVehicle, KeyAlgorithm::kEd25519, Validity::days_from(kNow, 1)});
  ASSERT_FALSE(ca.ok());
  EXPECT_EQ(ca.error(), PkiError::kBadName);
  EXPECT_NE(std::string(to_string(ca.error())).find("64"), std::string::npos);
  auto node = issue_certificate(pki().ca, {long_name, {0x1234}, KeyAlgorithm::kEd25519, Validity::days_from(kNow, 1)});
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.error(), PkiError::kBadName);
  EXPECT_EQ(check_common_name(long_name), "has 300 characters; X.509 allows at most 64 (RFC 5280 ub-common-name)");
  EXPECT_EQ(check_common_name(std::string(64, 'a')), "");
  EXPECT_NE(check_common_name(std::string(65, 'a')), "");
  // The bound is in characters: 64 two-byte characters pass.
  std::string wide;
  for (int i = 0; i < 64; ++i) wide += "\xc3\xa9";  // U+00E9
  EXPECT_EQ(check_common_name(wide), "");
  auto ok = issue_certificate(pki().ca, {wide, {0x1234}, KeyAlgorithm::kEd25519, Validity::days_from(kNow, 1)});
  ASSERT_TRUE(ok.ok()) << to_string(ok.error());
  EXPECT_EQ(ok->certificate.info().common_name, wide);
  EXPECT_NE(check_common_name("bad\xff"), "");
  EXPECT_NE(check_common_name("tab\there"), "");
}

// Issue 13 item 12: a FIFO given as a certificate blocked BIO_new_file.
TEST(PkiTest, CertificateFromFifoOrDirectoryIsRefusedWithoutBlocking) {
  char tmpl[] = "/tmp/layersec_pki_fifo_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string fifo = dir + "/ca.pem";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string detail;
  auto c = Certificate::load(fifo, &detail);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), PkiError::kIo);
  EXPECT_EQ(detail, fifo + ": not a regular file (FIFO)");
  auto d = Certificate::load(dir, &detail);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), PkiError::kIo);
  EXPECT_EQ(detail, dir + ": is a directory, not a regular file");
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(PkiTest, BadArguments) {
  auto noname = create_ca({"", CaKind::kVehicle, KeyAlgorithm::kEcdsaP256, Validity::days_from(kNow, 1)});
  ASSERT_FALSE(noname.ok());
  EXPECT_EQ(noname.error(), PkiError::kBadName);
  auto rsa_ca = create_ca({"x", CaKind::kVehicle, KeyAlgorithm::kRsa2048, Validity::days_from(kNow, 1)});
  ASSERT_FALSE(rsa_ca.ok());
  EXPECT_EQ(rsa_ca.error(), PkiError::kUnsupportedAlgorithm);
  auto no_services = issue_certificate(pki().ca, {"x", {}, KeyAlgorithm::kEd25519, Validity::days_from(kNow, 1)});
  ASSERT_FALSE(no_services.ok());
  EXPECT_EQ(no_services.error(), PkiError::kBadArgument);
  auto backwards = issue_certificate(pki().ca, {"x", {1}, KeyAlgorithm::kEd25519, {kNow, kNow - 1}});
  ASSERT_FALSE(backwards.ok());
  EXPECT_EQ(backwards.error(), PkiError::kBadArgument);
  auto bad_key = PrivateKey::from_pem(hex_bytes("2d2d2d2d"));
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.error(), PkiError::kMalformedKey);
  auto bad_pub = PublicKey::from_der(hex_bytes("3000"));
  ASSERT_FALSE(bad_pub.ok());
  EXPECT_EQ(bad_pub.error(), PkiError::kMalformedKey);
  auto spki = pki().ecu_ed.certificate.public_key().der();
  auto pub = PublicKey::from_der(spki);
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(pub->algorithm(), KeyAlgorithm::kEd25519);
}

}  // namespace
}  // namespace layersec::kex
