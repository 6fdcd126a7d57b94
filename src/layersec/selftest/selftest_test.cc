// The vector runner (vector_file.h) and the self test (selftest.h): every
// primitive passes on the published vectors and names its source; a missing
// folder, a malformed file or one corrupted vector fails the right row; the
// accessors name the file and field of a bad case; the Chaskey cross-check
// counts malformed lines.
#include "layersec/selftest/selftest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "layersec/base/hex.h"
#include "layersec/selftest/chaskey_xcheck.h"
#include "layersec/selftest/mac_vectors.h"
#include "support/temp_files.h"
#include "support/vectors.h"

namespace layersec::selftest {
namespace {

// A clock that moves 1 ms per reading, so each timed run ends after a few
// batches.
class SteppingClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const override {
    t_ += Duration::milliseconds(1);
    return t_;
  }

 private:
  mutable TimePoint t_;
};

VectorDirs test_dirs() { return {layersec::testing::vectors_dir(), layersec::testing::source_dir() / "testdata"}; }

std::map<std::string, Report> by_name(const std::vector<Report>& reports) {
  std::map<std::string, Report> m;
  for (const auto& r : reports) m.emplace(r.name, r);
  return m;
}

TEST(Selftest, EveryPrimitivePassesAndNamesItsSource) {
  const SteppingClock clock;
  const auto reports = run_selftest(test_dirs(), clock, Duration::milliseconds(3));
  // What the vector files hold today: a shrinking file must fail here.
  const std::map<std::string, int> min = {
      {"AES-CMAC-128", 29}, {"AES-CMAC-192", 4},     {"AES-CMAC-256", 4},    {"Chaskey-8", 64},
      {"Chaskey-12", 192},  {"HMAC-SHA256", 7},      {"BLAKE2s-256", 256},   {"AES-GCM-128", 37},
      {"AES-GCM-256", 14},  {"AES-GMAC", 23},        {"HKDF-SHA256", 3},     {"AES key wrap", 14},
      {"ML-KEM-512", 15},   {"ML-KEM-768", 15},      {"ML-KEM-1024", 15},    {"X25519", 8},
      {"ECDH-P256", 4},     {"ECDH-P521", 4},        {"RSA-OAEP-2048", 10},  {"NTRU-EES613EP1", 5},
      {"NTRU-EES1171EP1", 5}, {"X25519+ML-KEM-768", 3}, {"Ed25519", 6},     {"ECDSA-P256", 5}};
  ASSERT_EQ(reports.size(), min.size());
  const auto m = by_name(reports);
  for (const auto& [name, n] : min) {
    SCOPED_TRACE(name);
    ASSERT_EQ(m.count(name), 1u);
    const Report& r = m.at(name);
    EXPECT_TRUE(r.ok()) << (r.failures.empty() ? "" : r.failures.front())
                        << (r.errors.empty() ? "" : r.errors.front());
    EXPECT_GE(r.total, n);
    EXPECT_FALSE(r.source.empty());
    EXPECT_GT(r.ns_per_op, 0);
  }
  EXPECT_EQ(reports.front().name, "AES-CMAC-128");  // the table keeps its order
  EXPECT_EQ(reports[11].name, "AES key wrap");
}

TEST(Selftest, MissingFoldersAreErrorsNotPasses) {
  const SteppingClock clock;
  const auto reports = run_selftest({"/nonexistent/vectors", "/nonexistent/testdata"}, clock, Duration::milliseconds(1));
  for (const auto& r : reports) {
    SCOPED_TRACE(r.name);
    EXPECT_FALSE(r.ok());
    ASSERT_FALSE(r.errors.empty());
    EXPECT_NE(r.errors.front().find("cannot read"), std::string::npos) << r.errors.front();
  }
}

TEST(Selftest, ACorruptedVectorFailsItsRowByName) {
  layersec::testing::TempDir tmp("selftest");
  const VectorDirs real = test_dirs();
  std::filesystem::copy(real.testdata, tmp.path() / "testdata", std::filesystem::copy_options::recursive);
  const auto path = tmp.path() / "testdata/crypto/hmac_sha256_rfc4231.json";
  auto doc = nlohmann::json::parse(std::ifstream(path));
  std::string& tag = doc["vectors"][1]["tag"].get_ref<std::string&>();
  tag[0] = tag[0] == '0' ? '1' : '0';
  std::ofstream(path) << doc.dump();

  const SteppingClock clock;
  for (const auto& p : all_primitives()) {
    if (p.name != "HMAC-SHA256") continue;
    const Report r = run_primitive(p, {real.shared, tmp.path() / "testdata"}, clock, Duration::milliseconds(1));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.passed, 6);
    EXPECT_EQ(r.total, 7);
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0], "RFC 4231 test case 2");
  }
}

TEST(VectorFile, MalformedFilesAndCasesNameTheProblem) {
  layersec::testing::TempDir tmp("vectorfile");
  std::ofstream(tmp.file("bad.json")) << "{ not json";
  try {
    (void)VectorFile::load(tmp.file("bad.json"));
    FAIL() << "malformed JSON accepted";
  } catch (const VectorFileError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos);
  }
  std::ofstream(tmp.file("case.json")) << R"({"vectors": [{"key": "0g", "n": -1, "t": 5}]})";
  const VectorFile f = VectorFile::load(tmp.file("case.json"));
  const auto cases = f.root().list("vectors");
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].where(), "case.json.vectors[0]");
  EXPECT_THROW((void)cases[0].bytes("key"), VectorFileError);
  EXPECT_THROW((void)cases[0].number("n"), VectorFileError);
  EXPECT_THROW((void)cases[0].text("t"), VectorFileError);
  try {
    (void)cases[0].bytes("tag");
    FAIL() << "missing field accepted";
  } catch (const VectorFileError& e) {
    EXPECT_EQ(std::string(e.what()), "case.json.vectors[0]: no field 'tag'");
  }
  EXPECT_FALSE(cases[0].flag("absent", false));
}

TEST(Tally, CountsAndNamesFailures) {
  Tally t;
  EXPECT_FALSE(t.ok());  // no checks is not a pass
  t.check(true, "a");
  t.check(false, "b");
  EXPECT_EQ(t.passed(), 1);
  EXPECT_EQ(t.total(), 2);
  EXPECT_EQ(t.failures(), std::vector<std::string>{"b"});
  EXPECT_FALSE(t.ok());
}

TEST(ChaskeyXcheck, PublishedCasesPassAndMalformedLinesCount) {
  std::ostringstream text;
  int n = 0;
  for (const auto& c : chaskey_cases(test_dirs())) {
    if (n++ % 16) continue;
    text << c.rounds << " " << to_hex(c.key) << " " << (c.msg.empty() ? "-" : to_hex(c.msg)) << " " << to_hex(c.tag)
         << "\n";
  }
  std::ostringstream diag;
  const auto good = chaskey_xcheck("# comment\n\n" + text.str(), diag);
  EXPECT_TRUE(good.ok()) << diag.str();
  EXPECT_EQ(good.checked, 16);
  const auto bad = chaskey_xcheck(text.str() + "12 00 zz 00\n", diag);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.mismatches, 1);
  EXPECT_NE(diag.str().find("malformed"), std::string::npos);
}

}  // namespace
}  // namespace layersec::selftest
