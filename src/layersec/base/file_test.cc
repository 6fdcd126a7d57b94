#include "layersec/base/file.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_files.h"

namespace layersec {
namespace {

namespace fs = std::filesystem;

class FileTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_.file(name); }
  std::string plant(const std::string& name, const std::string& contents) {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  testing::TempDir tmp_{"layersec_file"};
  const fs::path& dir_ = tmp_.path();
};

// Runs `f` and returns the FileError it throws (fails the test if none).
template <class F>
FileError thrown(F&& f) {
  try {
    f();
  } catch (const FileError& e) {
    return e;
  }
  ADD_FAILURE() << "no FileError thrown";
  return FileError(FileErrorKind::kRead, "", "");
}

TEST_F(FileTest, ReadsARegularFile) {
  const auto p = plant("cfg.json", "{\"a\": 1}\n");
  EXPECT_EQ(read_regular_file(p, 1024), "{\"a\": 1}\n");
  EXPECT_EQ(read_regular_file(plant("empty", ""), 16), "");
}

// Issue 13 item 12: a FIFO given as a config or @FILE blocked the command in
// open(2). read_regular_file opens with O_NONBLOCK and refuses it; if it
// blocked, this test would hang rather than fail (ctest's timeout).
TEST_F(FileTest, FifoIsRefusedWithoutBlocking) {
  const auto f = path("fifo");
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  const FileError e = thrown([&] { (void)read_regular_file(f, 1024); });
  EXPECT_EQ(e.kind(), FileErrorKind::kNotRegular);
  EXPECT_EQ(e.path(), f);
  EXPECT_EQ(std::string(e.what()), f + ": not a regular file (FIFO)");
  EXPECT_EQ(thrown([&] { (void)open_regular_file(f); }).kind(), FileErrorKind::kNotRegular);
}

// Issue 13 item 15: a directory as config gave "basic_filebuf::underflow ...
// Is a directory" with no path.
TEST_F(FileTest, DirectoryIsRefusedNamingThePath) {
  const auto d = path("conf.d");
  ASSERT_EQ(::mkdir(d.c_str(), 0700), 0);
  const FileError e = thrown([&] { (void)read_regular_file(d, 1024); });
  EXPECT_EQ(e.kind(), FileErrorKind::kNotRegular);
  EXPECT_EQ(std::string(e.what()), d + ": is a directory, not a regular file");
}

// Issue 13 item 14: `kem @/dev/zero` read until out of memory.
TEST_F(FileTest, DevZeroIsRefusedAsADevice) {
  const FileError e = thrown([] { (void)read_regular_file("/dev/zero", 1 << 20); });
  EXPECT_EQ(e.kind(), FileErrorKind::kNotRegular);
  EXPECT_NE(std::string(e.what()).find("(device)"), std::string::npos) << e.what();
}

TEST_F(FileTest, SizeLimitIsEnforced) {
  const auto p = plant("big", std::string(4097, 'x'));
  const FileError e = thrown([&] { (void)read_regular_file(p, 4096); });
  EXPECT_EQ(e.kind(), FileErrorKind::kTooLarge);
  EXPECT_NE(std::string(e.what()).find("larger than 4096 bytes"), std::string::npos) << e.what();
  EXPECT_EQ(read_regular_file(p, 4097).size(), 4097u);
}

TEST_F(FileTest, MissingFileIsNotFound) {
  const auto p = path("nope.json");
  const FileError e = thrown([&] { (void)read_regular_file(p, 16); });
  EXPECT_EQ(e.kind(), FileErrorKind::kNotFound);
  EXPECT_EQ(std::string(e.what()), p + ": No such file or directory");
}

TEST_F(FileTest, OutputFileWritesTruncatesAndAppliesMode) {
  const auto p = plant("out.txt", "old contents that are longer");
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  {
    OutputFile f(p);
    f.write("new\n");
    f.close();
    f.close();  // idempotent
    EXPECT_THROW(f.write("late"), FileError);
  }
  EXPECT_EQ(slurp(p), "new\n");
  const mode_t old = ::umask(0);
  {
    OutputFile f(path("fresh"), 0640);
    f.close();
  }
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(path("fresh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// Issue 13 item 13: `--pcap` followed a symlink on output and overwrote a key
// file. The link is refused and its target left as it was.
TEST_F(FileTest, OutputRefusesASymlinkAndKeepsItsTarget) {
  const auto key = plant("ca.key", "secret key material");
  const auto link = path("capture.pcap");
  ASSERT_EQ(::symlink(key.c_str(), link.c_str()), 0);
  const FileError e = thrown([&] { OutputFile f(link); });
  EXPECT_EQ(e.kind(), FileErrorKind::kSymlink);
  EXPECT_EQ(std::string(e.what()), link + ": is a symbolic link (refused)");
  EXPECT_EQ(slurp(key), "secret key material");
  // A dangling link is refused too (it would otherwise create its target).
  const auto dangling = path("dangling");
  ASSERT_EQ(::symlink(path("not-there").c_str(), dangling.c_str()), 0);
  EXPECT_EQ(thrown([&] { OutputFile f(dangling); }).kind(), FileErrorKind::kSymlink);
  EXPECT_FALSE(fs::exists(path("not-there")));
}

TEST_F(FileTest, OutputRefusesFifoDirectoryAndDevices) {
  const auto f = path("fifo");
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  const FileError fifo = thrown([&] { OutputFile o(f); });  // no reader: must not block
  EXPECT_EQ(fifo.kind(), FileErrorKind::kNotRegular);
  EXPECT_EQ(std::string(fifo.what()), f + ": not a regular file (FIFO)");
  const FileError dir = thrown([&] { OutputFile o(dir_.string()); });
  EXPECT_EQ(dir.kind(), FileErrorKind::kNotRegular);
  // /dev/full accepts the open and fails every write: it is not a regular
  // file, so it is refused before anything is written ("wrote 5 frames").
  const FileError full = thrown([] { OutputFile o("/dev/full"); });
  EXPECT_EQ(full.kind(), FileErrorKind::kNotRegular);
  EXPECT_EQ(std::string(full.what()), "/dev/full: not a regular file (device)");
}

TEST_F(FileTest, WriteErrorIsThrownWithThePath) {
  // A write error on a regular file without needing a full disk (EFBIG).
  const auto p = path("big.out");
  std::string what;
  FileErrorKind kind = FileErrorKind::kRead;
  try {
    testing::FileSizeLimit limit(4096);
    OutputFile f(p);
    f.write(std::string(8192, 'x'));
    f.close();
  } catch (const FileError& e) {
    what = e.what();
    kind = e.kind();
  }
  EXPECT_EQ(kind, FileErrorKind::kWrite);
  EXPECT_EQ(what.rfind(p + ": write failed: ", 0), 0u) << what;
}

// A real full file system: a 16 KiB tmpfs in a private mount namespace of a
// child process (needs root; nothing is mounted in the test's namespace).
TEST_F(FileTest, FullFileSystemIsAnErrorNotASuccess) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string mnt = path("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0700), 0);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    auto report = [&](const std::string& s, int code) {
      (void)!::write(pipefd[1], s.data(), s.size());
      ::_exit(code);
    };
    if (::unshare(CLONE_NEWNS) != 0) report("unshare failed", 3);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) report("make-private failed", 3);
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=16k") != 0) report("mount failed", 3);
    try {
      OutputFile f(mnt + "/capture.pcap");
      for (int i = 0; i < 64; ++i) f.write(std::string(1024, 'x'));
      f.close();
    } catch (const FileError& e) {
      report(e.what(), e.kind() == FileErrorKind::kWrite ? 0 : 1);
    }
    report("no error", 2);
  }
  ::close(pipefd[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "no private tmpfs here: " << msg;
  EXPECT_EQ(WEXITSTATUS(status), 0) << msg;
  EXPECT_EQ(msg, mnt + "/capture.pcap: write failed: No space left on device");
}

}  // namespace
}  // namespace layersec
