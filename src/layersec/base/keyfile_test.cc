#include "layersec/base/keyfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_files.h"

namespace layersec {
namespace {

namespace fs = std::filesystem;

class KeyFileTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_.file(name); }
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
  testing::TempDir tmp_{"layersec_keyfile"};
  const fs::path& dir_ = tmp_.path();
};

std::vector<std::uint8_t> to_vec(const SecretBytes& s) { return {s.span().begin(), s.span().end()}; }

TEST_F(KeyFileTest, Mode0600HexFileLoads) {
  const auto p = plant("k.hex", "00112233445566778899aabbccddeeff\n", 0600);
  auto key = load_key_file(p, {KeyFileFormat::kHex, 16});
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

// Issue 13 item 14: one encoding per key file. A raw binary key is refused
// (it used to be read as raw bytes by "auto"), with a message that says
// where the first non-hex byte is and never what it is.
TEST_F(KeyFileTest, RawBinaryKeyIsRefusedWithThePosition) {
  const std::string raw("\x01\x02\xff\x00\x10\x20\x30\x40", 8);
  const auto p = plant("raw", raw, 0600);
  std::string detail;
  auto a = load_key_file(p, {KeyFileFormat::kHex, 8}, &detail);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error(), KeyFileError::kBadFormat);
  EXPECT_NE(detail.find("line 1, column 1"), std::string::npos) << detail;
  EXPECT_NE(detail.find("raw binary"), std::string::npos) << detail;
  // Binary junk after a hex line is refused too, at its position.
  auto b = load_key_file(plant("mixed", "0a0b\n0c\x01\n", 0600), {}, &detail);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), KeyFileError::kBadFormat);
  EXPECT_NE(detail.find("line 2, column 3"), std::string::npos) << detail;
  const std::string msg = key_file_message(p, a.error(), detail);
  EXPECT_EQ(msg.rfind(p + ": key file is not hex text", 0), 0u) << msg;
}

// Issue 13 item 14: 32 hex digits without a trailing newline used to be taken
// as 32 raw ASCII bytes by a 256-bit suite. It is a 16-byte key, always.
TEST_F(KeyFileTest, ThirtyTwoHexDigitsWithoutNewlineAreSixteenBytes) {
  const auto p = plant("k", "00112233445566778899aabbccddeeff", 0600);
  std::string detail;
  auto as256 = load_key_file(p, {KeyFileFormat::kHex, 32}, &detail);
  ASSERT_FALSE(as256.ok());
  EXPECT_EQ(as256.error(), KeyFileError::kWrongSize);
  EXPECT_NE(detail.find("found 16 bytes (32 hex digits), expected 32 bytes (64 hex digits)"),
            std::string::npos)
      << detail;
  EXPECT_EQ(detail.find("0011"), std::string::npos) << "key digits in the message";
  auto as128 = load_key_file(p, {KeyFileFormat::kHex, 16});
  ASSERT_TRUE(as128.ok());
  EXPECT_EQ((*as128)[15], 0xff);
  // "abcd" is two bytes, never four ASCII bytes.
  auto q = load_key_file(plant("ambiguous", "abcd", 0600), {KeyFileFormat::kHex, 4});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error(), KeyFileError::kWrongSize);
}

TEST_F(KeyFileTest, OnlyCommentsIsEmptyAndOddCountIsNamed) {
  std::string detail;
  auto e = load_key_file(plant("c", "# nothing here\n\n", 0600), {}, &detail);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), KeyFileError::kEmpty);
  auto o = load_key_file(plant("odd", "abc\n", 0600), {}, &detail);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error(), KeyFileError::kBadFormat);
  EXPECT_NE(detail.find("odd number of hex digits (3)"), std::string::npos) << detail;
}

TEST_F(KeyFileTest, DetailNamesModeAndOwner) {
  std::string detail;
  auto m = check_key_file(plant("loose", "aabb", 0644), &detail);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(detail.find("mode 0644"), std::string::npos) << detail;
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  const auto p = plant("theirs", "aabb", 0600);
  ASSERT_EQ(::chown(p.c_str(), 4242, 4242), 0);
  auto o = check_key_file(p, &detail);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error(), KeyFileError::kWrongOwner);
  EXPECT_NE(detail.find("uid 4242"), std::string::npos) << detail;
}

// ---- item 7: the directories of a key's path (OpenSSH safe_path()) ----

// mkdir + chmod (the umask must not narrow the mode under test).
std::string make_dir(const std::string& p, mode_t mode) {
  EXPECT_EQ(::mkdir(p.c_str(), 0700), 0) << p;
  EXPECT_EQ(::chmod(p.c_str(), mode), 0) << p;
  return p;
}

// The attack of issue 13 item 7: a key directory that is a symlink to a
// world-writable directory (where anyone may swap the key) was accepted.
TEST_F(KeyFileTest, SymlinkedDirectoryToWorldWritableDirectoryIsRefused) {
  const auto open = make_dir(path("open"), 0777);
  plant("open/k", "00112233445566778899aabbccddeeff\n", 0600);
  const auto link = path("keys");
  ASSERT_EQ(::symlink(open.c_str(), link.c_str()), 0);
  std::string detail;
  auto via_link = load_key_file(link + "/k", {KeyFileFormat::kHex, 16}, &detail);
  ASSERT_FALSE(via_link.ok());
  EXPECT_EQ(via_link.error(), KeyFileError::kUnsafeDirectory);
  // The message names the real directory and the rule it breaks.
  char real[PATH_MAX];
  ASSERT_NE(::realpath(open.c_str(), real), nullptr);
  EXPECT_NE(detail.find(std::string("directory ") + real + " is writable by others (mode 0777, no sticky bit)"),
            std::string::npos)
      << detail;
  auto direct = read_secret_file(open + "/k");
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error(), KeyFileError::kUnsafeDirectory);
  EXPECT_EQ(check_key_file(link + "/k").error(), KeyFileError::kUnsafeDirectory);
}

TEST_F(KeyFileTest, GroupWritableParentIsRefused) {
  make_dir(path("team"), 0770);
  const auto p = plant("team/k", "aabb", 0600);
  std::string detail;
  auto k = load_key_file(p, {}, &detail);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error(), KeyFileError::kUnsafeDirectory);
  EXPECT_NE(detail.find("writable by its group (mode 0770"), std::string::npos) << detail;
}

TEST_F(KeyFileTest, UnsafeGrandparentIsRefused) {
  // Every directory up to "/" counts, not only the key's own.
  make_dir(path("open"), 0777);
  make_dir(path("open/private"), 0700);
  const auto p = plant("open/private/k", "aabb", 0600);
  auto k = load_key_file(p);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error(), KeyFileError::kUnsafeDirectory);
}

TEST_F(KeyFileTest, Normal0700DirectoryIsAccepted) {
  make_dir(path("keys"), 0700);
  const auto p = plant("keys/k", "aabb\n", 0600);
  auto k = load_key_file(p, {KeyFileFormat::kHex, 2});
  ASSERT_TRUE(k.ok()) << to_string(k.error());
  // A symlinked directory is fine when the directory it resolves to is.
  const auto link = path("alias");
  ASSERT_EQ(::symlink(path("keys").c_str(), link.c_str()), 0);
  EXPECT_TRUE(load_key_file(link + "/k").ok());
  // And a 0755 directory (others may read and enter, not write).
  make_dir(path("shared"), 0755);
  EXPECT_TRUE(check_key_file(plant("shared/k", "aabb", 0600)).ok());
}

// Decision documented in keyfile.h: a sticky group/world-writable directory
// (like /tmp) is accepted, because only an entry's owner (or the directory's
// owner, checked to be root or us) can rename or delete entries in it.
TEST_F(KeyFileTest, StickyWorldWritableDirectoryIsAccepted) {
  make_dir(path("tmp"), 01777);
  const auto p = plant("tmp/k", "aabb", 0600);
  EXPECT_TRUE(load_key_file(p).ok());
  make_dir(path("tmp/mine"), 0700);
  EXPECT_TRUE(load_key_file(plant("tmp/mine/k", "aabb", 0600)).ok());
  // Sticky does not help a directory owned by someone else: its owner may
  // rename anything inside.
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  ASSERT_EQ(::chown(path("tmp").c_str(), 4242, 4242), 0);
  std::string detail;
  auto k = load_key_file(p, {}, &detail);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error(), KeyFileError::kUnsafeDirectory);
  EXPECT_NE(detail.find("owned by uid 4242"), std::string::npos) << detail;
}

TEST_F(KeyFileTest, ADirectoryPartThatIsNotADirectoryIsNamed) {
  const auto f = path("fifo");
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  std::string detail;
  auto k = load_key_file(f + "/k", {}, &detail);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error(), KeyFileError::kNotFound);
  EXPECT_EQ(detail, f + ": not a directory");
  const std::vector<std::uint8_t> key(16, 1);
  auto w = write_key_file_hex(f + "/k", key, false, &detail);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error(), KeyFileError::kWriteFailed);
  EXPECT_EQ(detail, f + ": not a directory");
}

TEST_F(KeyFileTest, WriteIntoUnsafeDirectoryIsRefusedAndLeavesNothing) {
  make_dir(path("open"), 0777);
  const std::vector<std::uint8_t> k(16, 3);
  std::string detail;
  auto s = write_key_file_hex(path("open/k"), k, false, &detail);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), KeyFileError::kUnsafeDirectory);
  EXPECT_NE(detail.find("open"), std::string::npos) << detail;
  EXPECT_TRUE(fs::is_empty(path("open")));
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
  auto still = read_secret_file(p);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(to_vec(*still), k1);
  ASSERT_TRUE(write_key_file(p, k2, /*overwrite=*/true).ok());
  auto now = read_secret_file(p);
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
