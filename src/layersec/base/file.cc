#include "layersec/base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace layersec {

namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "is a directory, not a regular file";
  if (S_ISFIFO(m)) return "not a regular file (FIFO)";
  if (S_ISCHR(m) || S_ISBLK(m)) return "not a regular file (device)";
  if (S_ISSOCK(m)) return "not a regular file (socket)";
  return "not a regular file";
}

}  // namespace

int open_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw FileError(e == ENOENT ? FileErrorKind::kNotFound : FileErrorKind::kRead, path,
                    std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw FileError(FileErrorKind::kRead, path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(FileErrorKind::kNotRegular, path, kind_of(st.st_mode));
  }
  // Regular files never block; clear O_NONBLOCK so callers see plain reads.
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    const int e = errno;
    ::close(fd);
    throw FileError(FileErrorKind::kRead, path, std::strerror(e));
  }
  return fd;
}

std::string read_regular_file(const std::string& path, std::size_t max_bytes) {
  const int fd = open_regular_file(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw FileError(FileErrorKind::kRead, path, std::strerror(e));
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw FileError(FileErrorKind::kTooLarge, path,
                    "larger than " + std::to_string(max_bytes) + " bytes");
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw FileError(FileErrorKind::kRead, path, std::string("read failed: ") + std::strerror(e));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      throw FileError(FileErrorKind::kTooLarge, path,
                      "larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

int open_output_file(const std::string& path, unsigned mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                        static_cast<mode_t>(mode));
  if (fd < 0) {
    const int e = errno;
    if (e == ELOOP) throw FileError(FileErrorKind::kSymlink, path, "is a symbolic link (refused)");
    // A FIFO without a reader fails a non-blocking open with ENXIO; a
    // directory with EISDIR: both are "not a regular file", said as such.
    struct stat lst {};
    if ((e == ENXIO || e == EISDIR) && ::lstat(path.c_str(), &lst) == 0 && !S_ISREG(lst.st_mode))
      throw FileError(FileErrorKind::kNotRegular, path, kind_of(lst.st_mode));
    throw FileError(FileErrorKind::kWrite, path, std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t m = st.st_mode;
    ::close(fd);
    throw FileError(FileErrorKind::kNotRegular, path, kind_of(m));
  }
  // Back to blocking writes; truncate only once we know it is a regular file.
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || ::ftruncate(fd, 0) != 0) {
    const int e = errno;
    ::close(fd);
    throw FileError(FileErrorKind::kWrite, path, std::strerror(e));
  }
  return fd;
}

OutputFile::OutputFile(const std::string& path, unsigned mode)
    : path_(path), fd_(open_output_file(path, mode)) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(ByteSpan data) {
  if (fd_ < 0) throw FileError(FileErrorKind::kWrite, path_, "write after close");
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(FileErrorKind::kWrite, path_, std::string("write failed: ") + std::strerror(errno));
    }
    off += static_cast<std::size_t>(n);
  }
}

void OutputFile::write(const std::string& text) {
  write(ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

void OutputFile::close() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int e = errno;
    ::close(fd);
    throw FileError(FileErrorKind::kWrite, path_, std::string("fsync failed: ") + std::strerror(e));
  }
  if (::close(fd) != 0)
    throw FileError(FileErrorKind::kWrite, path_, std::string("close failed: ") + std::strerror(errno));
}

}  // namespace layersec
