// The PN state file (pn_state_file.h): exact round trips, a corrupt file is
// reported as corrupt, a missing one as missing, a symlink refused, and a
// save never writes through a planted file or link.
#include "layersec/macsec/pn_state_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace layersec::macsec {
namespace {

namespace fs = std::filesystem;

PnRecord record(PnDirection d, std::uint64_t sci, std::uint8_t an, std::uint8_t fp_seed, std::uint64_t highest) {
  PnRecord r;
  r.key.direction = d;
  r.key.sci = Sci{sci};
  for (std::size_t i = 0; i < r.key.fingerprint.size(); ++i) r.key.fingerprint[i] = static_cast<std::uint8_t>(fp_seed + i);
  r.an = an;
  r.highest = highest;
  return r;
}

class PnStateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ls_pnstate_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = (dir_ / "link.pn-state").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
  std::string path_;
};

TEST(PnStateFormat, RoundTripIsExact) {
  const std::vector<PnRecord> records = {record(PnDirection::kTransmit, 0x0200007800010001, 0, 1, 65536),
                                         record(PnDirection::kReceive, 0x0200007800020001, 3, 9, 0),
                                         record(PnDirection::kReceive, 0x0200007800020002, 1, 7, UINT64_MAX)};
  const std::string text = serialize_pn_state(records);
  EXPECT_EQ(text.rfind("layersec-macsec-pn-state 1\ntx 0200007800010001 0 ", 0), 0u) << text;
  auto back = parse_pn_state(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, records);
  EXPECT_EQ(serialize_pn_state(*back), text);
  auto empty = parse_pn_state(serialize_pn_state({}));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(PnStateFormat, EveryDamageIsCorrupt) {
  const std::string good = serialize_pn_state({record(PnDirection::kTransmit, 0x0200007800010001, 0, 1, 65536)});
  std::vector<std::string> bad;
  bad.push_back("");
  bad.push_back(good.substr(0, good.size() - 1));            // no final newline
  bad.push_back(good.substr(0, good.size() / 2));            // truncated
  bad.push_back(good + "x\n");                               // after the checksum
  std::string lowered = good;
  lowered[lowered.find("65536")] = '1';                      // a PN lowered: checksum mismatch
  bad.push_back(lowered);
  for (const auto& b : bad) EXPECT_FALSE(parse_pn_state(b).ok()) << b;
  // Every single-octet flip of a valid file is refused.
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string f = good;
    f[i] = static_cast<char>(f[i] ^ 0x01);
    EXPECT_FALSE(parse_pn_state(f).ok()) << "flip at " << i;
  }
  // A duplicate record (same direction, SCI and fingerprint) is refused even
  // with a valid checksum.
  const PnRecord r = record(PnDirection::kTransmit, 0x0200007800010001, 0, 1, 5);
  const std::string dup = serialize_pn_state({r, r});
  EXPECT_FALSE(parse_pn_state(dup).ok());
}

TEST_F(PnStateFileTest, MissingIsMissingAndCreateStartsEmpty) {
  std::string detail;
  auto s = FilePnStore::open(path_, &detail);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PnFileError::kMissing);
  EXPECT_NE(detail.find(path_), std::string::npos) << detail;
  auto c = FilePnStore::create(path_, &detail);
  ASSERT_TRUE(c.ok()) << detail;
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = FilePnStore::create(path_, &detail);
  EXPECT_FALSE(again.ok()) << "create must not overwrite an existing state file";
  auto o = FilePnStore::open(path_, &detail);
  ASSERT_TRUE(o.ok()) << detail;
  EXPECT_TRUE(o->records().empty());
}

TEST_F(PnStateFileTest, SavesAreDurableAndReadBack) {
  auto s = FilePnStore::create(path_);
  ASSERT_TRUE(s.ok());
  const PnRecord r = record(PnDirection::kReceive, 0x0200007800020001, 2, 3, 131071);
  ASSERT_TRUE(s->save(r.key, r.an, r.highest).ok()) << s->last_error();
  ASSERT_TRUE(s->save(r.key, r.an, r.highest + 10).ok()) << s->last_error();
  auto o = FilePnStore::open(path_);
  ASSERT_TRUE(o.ok());
  auto v = o->load(r.key);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, r.highest + 10);
  EXPECT_EQ(o->records().size(), 1u);
  // No temporary files are left behind.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(PnStateFileTest, CorruptIsReportedAsCorrupt) {
  ASSERT_TRUE(FilePnStore::create(path_).ok());
  {
    std::ofstream out(path_, std::ios::app);
    out << "tx 0200007800010001 0 00112233445566778899aabbccddeeff 1\n";
  }
  std::string detail;
  auto s = FilePnStore::open(path_, &detail);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PnFileError::kCorrupt);
  EXPECT_NE(detail.find("not a valid PN state file"), std::string::npos) << detail;
}

TEST_F(PnStateFileTest, SymlinkIsRefusedAndItsTargetUntouched) {
  const auto target = dir_ / "victim";
  { std::ofstream(target) << "precious\n"; }
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(target.c_str(), path_.c_str()), 0);
  std::string detail;
  auto s = FilePnStore::open(path_, &detail);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PnFileError::kSymlink) << detail;
  auto c = FilePnStore::create(path_, &detail);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(slurp(target), "precious\n");
}

TEST_F(PnStateFileTest, SaveNeverWritesThroughAPlantedLink) {
  auto s = FilePnStore::create(path_);
  ASSERT_TRUE(s.ok());
  const auto target = dir_ / "victim";
  { std::ofstream(target) << "precious\n"; }
  // A link planted at the state path while the store is open, and links at
  // the old fixed temporary name: the save replaces the path's entry with a
  // new regular file and never opens a link.
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), path_.c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), (path_ + ".tmp").c_str()), 0);
  const PnRecord r = record(PnDirection::kTransmit, 0x0200007800010001, 0, 1, 99);
  ASSERT_TRUE(s->save(r.key, r.an, r.highest).ok()) << s->last_error();
  EXPECT_EQ(slurp(target), "precious\n");
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto o = FilePnStore::open(path_);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->records().size(), 1u);
}

TEST_F(PnStateFileTest, GroupReadableFileIsRefused) {
  ASSERT_TRUE(FilePnStore::create(path_).ok());
  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);
  auto s = FilePnStore::open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), PnFileError::kInsecure);
}

TEST_F(PnStateFileTest, AFailedSaveKeepsTheOldState) {
  auto s = FilePnStore::create(path_);
  ASSERT_TRUE(s.ok());
  const PnRecord r = record(PnDirection::kTransmit, 0x0200007800010001, 0, 1, 10);
  ASSERT_TRUE(s->save(r.key, r.an, r.highest).ok());
  // The directory goes away: the save fails, names the path, and the
  // in-memory state keeps the value that is on disk.
  fs::remove_all(dir_);
  auto st = s->save(r.key, r.an, 20);
  fs::create_directories(dir_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(s->last_error().find(path_), std::string::npos) << s->last_error();
  auto v = s->load(r.key);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(**v, 10u);
}

}  // namespace
}  // namespace layersec::macsec
