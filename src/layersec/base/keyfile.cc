#include "layersec/base/keyfile.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE (glibc >= 2.28)
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

namespace layersec {

std::string_view to_string(KeyFileError e) {
  switch (e) {
    case KeyFileError::kNotFound:
      return "key file not found";
    case KeyFileError::kSymlink:
      return "key file is a symbolic link (refused; point at the real file)";
    case KeyFileError::kNotRegularFile:
      return "key file is not a regular file";
    case KeyFileError::kInsecureMode:
      return "key file is accessible by group or others (chmod 600 it)";
    case KeyFileError::kWrongOwner:
      return "key file is owned by another user";
    case KeyFileError::kTooLarge:
      return "key file is too large";
    case KeyFileError::kEmpty:
      return "key file is empty";
    case KeyFileError::kBadFormat:
      return "key file is not valid hex";
    case KeyFileError::kWrongSize:
      return "key in key file has the wrong size";
    case KeyFileError::kReadFailed:
      return "key file could not be read";
    case KeyFileError::kExists:
      return "destination file already exists";
    case KeyFileError::kWriteFailed:
      return "key file could not be written";
  }
  return "unknown key file error";
}

namespace {

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  // Closes now and reports whether close succeeded.
  bool close_checked() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

// Checks the stat of an opened key file.
Status<KeyFileError> check_stat(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return Err(KeyFileError::kNotRegularFile);
  if ((st.st_mode & 0077) != 0) return Err(KeyFileError::kInsecureMode);
  if (st.st_uid != ::geteuid() && st.st_uid != 0) return Err(KeyFileError::kWrongOwner);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxKeyFileSize) return Err(KeyFileError::kTooLarge);
  return Status<KeyFileError>::success();
}

// lstat-level checks that give the precise reason for links and missing files.
Status<KeyFileError> check_path(const std::string& path) {
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Err(KeyFileError::kNotFound);
    return Err(KeyFileError::kReadFailed);
  }
  if (S_ISLNK(lst.st_mode)) return Err(KeyFileError::kSymlink);
  if (!S_ISREG(lst.st_mode)) return Err(KeyFileError::kNotRegularFile);
  return Status<KeyFileError>::success();
}

// Opens without following links and without blocking on FIFOs, then checks
// the descriptor itself.
Result<int, KeyFileError> open_checked(const std::string& path) {
  if (auto s = check_path(path); !s.ok()) return Err(s.error());
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ELOOP) return Err(KeyFileError::kSymlink);
    if (errno == ENOENT) return Err(KeyFileError::kNotFound);
    return Err(KeyFileError::kReadFailed);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Err(KeyFileError::kReadFailed);
  }
  if (auto s = check_stat(st); !s.ok()) {
    ::close(fd);
    return Err(s.error());
  }
  return fd;
}

bool is_hex_digit(std::uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
std::uint8_t hex_value(std::uint8_t c) {
  if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
  return static_cast<std::uint8_t>(c - 'A' + 10);
}
bool is_space(std::uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Counts hex digits of a hex-format key file; -1 if it is not hex format.
long hex_digit_count(ByteSpan text) {
  long digits = 0;
  bool comment = false;
  for (const std::uint8_t c : text) {
    if (comment) {
      if (c == '\n') comment = false;
      continue;
    }
    if (c == '#') {
      comment = true;
    } else if (is_hex_digit(c)) {
      ++digits;
    } else if (!is_space(c)) {
      return -1;
    }
  }
  return (digits % 2 == 0) ? digits : -1;
}

// Decodes a hex-format file straight into a SecretBytes (no copies left behind).
SecretBytes decode_hex(ByteSpan text, std::size_t digits) {
  SecretBytes out(digits / 2);
  std::size_t n = 0;
  bool comment = false;
  bool high = true;
  std::uint8_t acc = 0;
  for (const std::uint8_t c : text) {
    if (comment) {
      if (c == '\n') comment = false;
      continue;
    }
    if (c == '#') {
      comment = true;
      continue;
    }
    if (!is_hex_digit(c)) continue;
    if (high) {
      acc = static_cast<std::uint8_t>(hex_value(c) << 4);
    } else {
      out[n++] = static_cast<std::uint8_t>(acc | hex_value(c));
    }
    high = !high;
  }
  acc = 0;
  return out;
}

bool write_all(int fd, ByteSpan data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t w = ::write(fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(w);
  }
  return true;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status<KeyFileError> write_atomic(const std::string& path, ByteSpan data, bool overwrite,
                                  mode_t mode) {
  if (!overwrite) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) return Err(KeyFileError::kExists);
  }
  // Temporary name in the same directory, unpredictable and created
  // exclusively (a pre-planted file or link makes open fail instead of being
  // followed).
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    std::uint64_t nonce = 0;
    if (::getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) {
      return Err(KeyFileError::kWriteFailed);
    }
    char suffix[40];
    std::snprintf(suffix, sizeof suffix, ".tmp.%016llx", static_cast<unsigned long long>(nonce));
    tmp = path + suffix;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return Err(KeyFileError::kWriteFailed);
  }
  if (fd < 0) return Err(KeyFileError::kWriteFailed);
  Fd guard(fd);
  bool ok = ::fchmod(fd, mode) == 0;  // umask may have narrowed 0600/0644
  ok = ok && write_all(fd, data);
  ok = ok && ::fsync(fd) == 0;
  ok = guard.close_checked() && ok;
  if (ok) {
    const int rc = overwrite ? ::rename(tmp.c_str(), path.c_str())
                             : ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(),
                                           RENAME_NOREPLACE);
    if (rc != 0) {
      const bool exists = errno == EEXIST;
      ::unlink(tmp.c_str());
      return Err(exists ? KeyFileError::kExists : KeyFileError::kWriteFailed);
    }
  } else {
    ::unlink(tmp.c_str());
    return Err(KeyFileError::kWriteFailed);
  }
  // Make the rename durable.
  const int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    const bool synced = ::fsync(dfd) == 0;
    ::close(dfd);
    if (!synced) return Err(KeyFileError::kWriteFailed);
  }
  return Status<KeyFileError>::success();
}

}  // namespace

Status<KeyFileError> check_key_file(const std::string& path) {
  auto fd = open_checked(path);
  if (!fd.ok()) return Err(fd.error());
  ::close(fd.value());
  return Status<KeyFileError>::success();
}

Result<SecretBytes, KeyFileError> read_secret_file(const std::string& path) {
  auto opened = open_checked(path);
  if (!opened.ok()) return Err(opened.error());
  Fd fd(opened.value());
  // Read up to one byte past the limit so a file that grew after fstat is
  // still refused rather than silently truncated.
  SecretBytes buf(kMaxKeyFileSize + 1);
  std::size_t n = 0;
  while (n < buf.size()) {
    const ssize_t r = ::read(fd.get(), buf.data() + n, buf.size() - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Err(KeyFileError::kReadFailed);
    }
    if (r == 0) break;
    n += static_cast<std::size_t>(r);
  }
  if (n > kMaxKeyFileSize) return Err(KeyFileError::kTooLarge);
  if (n == 0) return Err(KeyFileError::kEmpty);
  return SecretBytes(buf.span().first(n));
}

Result<SecretBytes, KeyFileError> load_key_file(const std::string& path, KeyFileOptions options) {
  auto contents = read_secret_file(path);
  if (!contents.ok()) return Err(contents.error());
  const ByteSpan text = contents->span();
  const long digits = hex_digit_count(text);

  bool as_hex = false;
  switch (options.format) {
    case KeyFileFormat::kRaw:
      as_hex = false;
      break;
    case KeyFileFormat::kHex:
      if (digits < 0) return Err(KeyFileError::kBadFormat);
      as_hex = true;
      break;
    case KeyFileFormat::kAuto:
      if (digits < 0) {
        as_hex = false;
      } else if (options.expected_size != 0) {
        // Prefer the reading that yields the expected size.
        as_hex = static_cast<std::size_t>(digits) / 2 == options.expected_size ||
                 text.size() != options.expected_size;
      } else {
        as_hex = true;
      }
      break;
  }
  SecretBytes key = as_hex ? decode_hex(text, static_cast<std::size_t>(digits))
                           : std::move(contents).value();
  if (key.empty()) return Err(KeyFileError::kEmpty);
  if (options.expected_size != 0 && key.size() != options.expected_size) {
    return Err(KeyFileError::kWrongSize);
  }
  return key;
}

Status<KeyFileError> write_key_file(const std::string& path, ByteSpan data, bool overwrite) {
  if (data.empty()) return Err(KeyFileError::kEmpty);
  return write_atomic(path, data, overwrite, 0600);
}

Status<KeyFileError> write_key_file_hex(const std::string& path, ByteSpan key, bool overwrite) {
  if (key.empty()) return Err(KeyFileError::kEmpty);
  static constexpr char kDigits[] = "0123456789abcdef";
  SecretBytes text(key.size() * 2 + 1);
  for (std::size_t i = 0; i < key.size(); ++i) {
    text[2 * i] = static_cast<std::uint8_t>(kDigits[key[i] >> 4]);
    text[2 * i + 1] = static_cast<std::uint8_t>(kDigits[key[i] & 0xF]);
  }
  text[key.size() * 2] = '\n';
  return write_atomic(path, text.span(), overwrite, 0600);
}

Status<KeyFileError> write_public_file(const std::string& path, ByteSpan data, bool overwrite) {
  return write_atomic(path, data, overwrite, 0644);
}

}  // namespace layersec
