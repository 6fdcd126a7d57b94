#include "layersec/base/keyfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace layersec {
namespace {

namespace fs = std::filesystem;

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "layersec_keyfile_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Writes a file with plain stdio (not through the key writer) and chmods it.
  std::string plant(const std::string& name, const std::string& contents, mode_t mode) {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << contents;
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    return p;
  }
  static mode_t mode_of(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  fs::path dir_;
};

std::vector<std::uint8_t> to_vec(const SecretBytes& s) { return {s.span().begin(), s.span().end()}; }

TEST_F(KeyFileTest, Mode0600HexFileLoads) {
  const auto p = plant("k.hex", "00112233445566778899aabbccddeeff\n", 0600);
  auto key = load_key_file(p);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(to_vec(*key), (std::vector<std::uint8_t>{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                                     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}));
}

TEST_F(KeyFileTest, Mode0644IsRefused) {
  const auto p = plant("k.hex", "00112233445566778899aabbccddeeff\n", 0644);
  auto key = load_key_file(p);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error(), KeyFileError::kInsecureMode);
  EXPECT_NE(to_string(key.error()).find("chmod 600"), std::string_view::npos);
  auto raw = read_secret_file(p);
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.error(), KeyFileError::kInsecureMode);
}

TEST_F(KeyFileTest, AnyGroupOrOtherBitIsRefused) {
  for (const mode_t m : {0640, 0604, 0620, 0602, 0610, 0601, 0666, 0700 | 0004}) {
    const auto p = plant("k", "aabb", m);
    auto s = check_key_file(p);
    ASSERT_FALSE(s.ok()) << std::oct << m;
    EXPECT_EQ(s.error(), KeyFileError::kInsecureMode) << std::oct << m;
  }
}

TEST_F(KeyFileTest, Mode0400IsAccepted) {
  const auto p = plant("k", "aabb", 0400);
  auto key = load_key_file(p, {KeyFileFormat::kHex, 2});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(to_vec(*key), (std::vector<std::uint8_t>{0xaa, 0xbb}));
}

TEST_F(KeyFileTest, SymlinkIsRefusedEvenToA0600File) {
  const auto target = plant("real", "aabb", 0600);
  const auto link = path("link");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto key = load_key_file(link);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error(), KeyFileError::kSymlink);
}

TEST_F(KeyFileTest, DirectoryAndFifoAreRefused) {
  const auto d = path("d");
  ASSERT_EQ(::mkdir(d.c_str(), 0700), 0);
  auto a = read_secret_file(d);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error(), KeyFileError::kNotRegularFile);
  const auto f = path("fifo");
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  auto b = read_secret_file(f);  // must not block
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), KeyFileError::kNotRegularFile);
}

TEST_F(KeyFileTest, MissingEmptyAndTooLarge) {
  auto a = read_secret_file(path("nope"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error(), KeyFileError::kNotFound);
  auto b = read_secret_file(plant("empty", "", 0600));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), KeyFileError::kEmpty);
  auto c = read_secret_file(plant("big", std::string(kMaxKeyFileSize + 1, 'a'), 0600));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), KeyFileError::kTooLarge);
}

TEST_F(KeyFileTest, HexFormatWithCommentsAndWhitespace) {
  const auto p = plant("k", "# SecOC key for PDU 0x10\n  0A0b 0c0D\r\n# end\n", 0600);
  auto key = load_key_file(p, {KeyFileFormat::kHex, 0});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(to_vec(*key), (std::vector<std::uint8_t>{0x0a, 0x0b, 0x0c, 0x0d}));
  auto bad = load_key_file(plant("bad", "0a0b0g\n", 0600), {KeyFileFormat::kHex, 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), KeyFileError::kBadFormat);
  auto odd = load_key_file(plant("odd", "0a0b0\n", 0600), {KeyFileFormat::kHex, 0});
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error(), KeyFileError::kBadFormat);
}

TEST_F(KeyFileTest, RawAndAutoFormats) {
  const std::string raw("\x01\x02\xff\x00\x10\x20\x30\x40", 8);
  const auto p = plant("raw", raw, 0600);
  auto a = load_key_file(p);  // not hex text: raw
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->size(), 8u);
  EXPECT_EQ((*a)[2], 0xff);
  // "abcd" is both 4 raw bytes and 2 hex bytes: the expected size decides.
  const auto q = plant("ambiguous", "abcd", 0600);
  auto as_raw = load_key_file(q, {KeyFileFormat::kAuto, 4});
  ASSERT_TRUE(as_raw.ok());
  EXPECT_EQ(to_vec(*as_raw), (std::vector<std::uint8_t>{'a', 'b', 'c', 'd'}));
  auto as_hex = load_key_file(q, {KeyFileFormat::kAuto, 2});
  ASSERT_TRUE(as_hex.ok());
  EXPECT_EQ(to_vec(*as_hex), (std::vector<std::uint8_t>{0xab, 0xcd}));
  auto forced = load_key_file(q, {KeyFileFormat::kRaw, 0});
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->size(), 4u);
  auto wrong = load_key_file(q, {KeyFileFormat::kAuto, 16});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error(), KeyFileError::kWrongSize);
}

TEST_F(KeyFileTest, WriteCreates0600EvenWithPermissiveUmask) {
  const mode_t old = ::umask(0);
  const std::vector<std::uint8_t> key(32, 0x5a);
  const auto p = path("secoc.key");
  auto s = write_key_file_hex(p, key);
  ::umask(old);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(mode_of(p), 0600u);
  auto back = load_key_file(p, {KeyFileFormat::kHex, 32});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(to_vec(*back), key);
  // No temporary files are left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(KeyFileTest, WriteDoesNotClobberUnlessAsked) {
  const auto p = path("k.bin");
  const std::vector<std::uint8_t> k1(16, 1), k2(16, 2);
  ASSERT_TRUE(write_key_file(p, k1).ok());
  auto again = write_key_file(p, k2);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), KeyFileError::kExists);
  auto still = load_key_file(p, {KeyFileFormat::kRaw, 16});
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(to_vec(*still), k1);
  ASSERT_TRUE(write_key_file(p, k2, /*overwrite=*/true).ok());
  auto now = load_key_file(p, {KeyFileFormat::kRaw, 16});
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(to_vec(*now), k2);
  EXPECT_EQ(mode_of(p), 0600u);
}

TEST_F(KeyFileTest, OverwriteReplacesALooseFileWithA0600One) {
  const auto p = plant("k", "00", 0644);
  const std::vector<std::uint8_t> k(16, 7);
  ASSERT_TRUE(write_key_file(p, k, true).ok());
  EXPECT_EQ(mode_of(p), 0600u);
  EXPECT_TRUE(check_key_file(p).ok());
}

TEST_F(KeyFileTest, PublicFilesAre0644) {
  const auto p = path("cert.pem");
  const std::string pem = "-----BEGIN CERTIFICATE-----\n";
  auto s = write_public_file(p, ByteSpan(reinterpret_cast<const std::uint8_t*>(pem.data()), pem.size()));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(mode_of(p), 0644u);
}

TEST_F(KeyFileTest, WriteIntoMissingDirectoryFails) {
  const std::vector<std::uint8_t> k(16, 1);
  auto s = write_key_file(path("no/such/dir/k"), k);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), KeyFileError::kWriteFailed);
}

}  // namespace
}  // namespace layersec
