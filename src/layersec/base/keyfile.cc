#include "layersec/base/keyfile.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE (glibc >= 2.28)
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
      return "key file is not hex text (one encoding: hex digits, whitespace and # comments)";
    case KeyFileError::kWrongSize:
      return "key in key file has the wrong size";
    case KeyFileError::kReadFailed:
      return "key file could not be read";
    case KeyFileError::kExists:
      return "destination file already exists";
    case KeyFileError::kWriteFailed:
      return "key file could not be written";
    case KeyFileError::kUnsafeDirectory:
      return "a directory on the key file's path is writable by group or others, or owned by another user";
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

void set(std::string* out, std::string text) {
  if (out != nullptr) *out = std::move(text);
}

std::string octal_mode(mode_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Checks the stat of an opened key file.
Status<KeyFileError> check_stat(const struct stat& st, std::string* detail) {
  if (!S_ISREG(st.st_mode)) return Err(KeyFileError::kNotRegularFile);
  if ((st.st_mode & 0077) != 0) {
    set(detail, "mode " + octal_mode(st.st_mode) + "; 0600 or 0400 needed");
    return Err(KeyFileError::kInsecureMode);
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    set(detail, "owned by uid " + std::to_string(st.st_uid) + ", not root or uid " +
                    std::to_string(::geteuid()));
    return Err(KeyFileError::kWrongOwner);
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxKeyFileSize) {
    set(detail, std::to_string(st.st_size) + " bytes; at most " + std::to_string(kMaxKeyFileSize));
    return Err(KeyFileError::kTooLarge);
  }
  return Status<KeyFileError>::success();
}

// The directory rule of keyfile.h (OpenSSH safe_path(), plus sticky
// directories): every directory of the resolved path `real_dir`, from itself
// up to "/", owned by root or us and not writable by group or others unless
// sticky. real_dir comes from realpath(3), so it contains no symlink; lstat
// still refuses one in case a component was swapped after the resolution.
Status<KeyFileError> check_directories(const std::string& real_dir, std::string* detail) {
  std::string d = real_dir;
  for (;;) {
    struct stat st {};
    if (::lstat(d.c_str(), &st) != 0) {
      set(detail, "directory " + d + ": " + std::strerror(errno));
      return Err(KeyFileError::kReadFailed);
    }
    if (!S_ISDIR(st.st_mode)) {
      set(detail, d + " is no longer a directory (changed while being checked)");
      return Err(KeyFileError::kUnsafeDirectory);
    }
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
      set(detail, "directory " + d + " is owned by uid " + std::to_string(st.st_uid) +
                      ", not root or uid " + std::to_string(::geteuid()));
      return Err(KeyFileError::kUnsafeDirectory);
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
      set(detail, "directory " + d + " is writable by " +
                      ((st.st_mode & S_IWOTH) != 0 ? "others" : "its group") + " (mode " +
                      octal_mode(st.st_mode) + ", no sticky bit)");
      return Err(KeyFileError::kUnsafeDirectory);
    }
    if (d == "/") break;
    d = dir_of(d);
  }
  return Status<KeyFileError>::success();
}

// The key's directory resolved and checked; returns "<resolved dir>/<name>".
Result<std::string, KeyFileError> safe_real_path(const std::string& path, bool for_write,
                                                 std::string* detail) {
  const std::string dir = dir_of(path);
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf) == nullptr) {
    const int e = errno;
    set(detail, "directory " + dir + ": " + std::strerror(e));
    if (for_write) return Err(KeyFileError::kWriteFailed);
    return Err(e == ENOENT || e == ENOTDIR ? KeyFileError::kNotFound : KeyFileError::kReadFailed);
  }
  const std::string real_dir(buf);
  struct stat st {};
  if (::stat(real_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {  // e.g. "FIFO/k"
    set(detail, dir + ": not a directory");
    return Err(for_write ? KeyFileError::kWriteFailed : KeyFileError::kNotFound);
  }
  if (auto s = check_directories(real_dir, detail); !s.ok()) return Err(s.error());
  return real_dir == "/" ? "/" + base_of(path) : real_dir + "/" + base_of(path);
}

// lstat-level checks that give the precise reason for links and missing files.
Status<KeyFileError> check_path(const std::string& path, std::string* detail) {
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) {
    const int e = errno;
    set(detail, e == ENOTDIR ? dir_of(path) + ": not a directory" : std::strerror(e));
    if (e == ENOENT || e == ENOTDIR) return Err(KeyFileError::kNotFound);
    return Err(KeyFileError::kReadFailed);
  }
  if (S_ISLNK(lst.st_mode)) return Err(KeyFileError::kSymlink);
  if (!S_ISREG(lst.st_mode)) {
    set(detail, S_ISDIR(lst.st_mode) ? "a directory" : S_ISFIFO(lst.st_mode) ? "a FIFO"
                : (S_ISCHR(lst.st_mode) || S_ISBLK(lst.st_mode)) ? "a device" : "a socket");
    return Err(KeyFileError::kNotRegularFile);
  }
  return Status<KeyFileError>::success();
}

// Checks the path and its directories, opens the resolved path without
// following links and without blocking on FIFOs, then checks the descriptor.
Result<int, KeyFileError> open_checked(const std::string& path, std::string* detail) {
  if (auto s = check_path(path, detail); !s.ok()) return Err(s.error());
  auto real = safe_real_path(path, /*for_write=*/false, detail);
  if (!real.ok()) return Err(real.error());
  const int fd = ::open(real->c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    set(detail, std::strerror(e));
    if (e == ELOOP) return Err(KeyFileError::kSymlink);
    if (e == ENOENT) return Err(KeyFileError::kNotFound);
    return Err(KeyFileError::kReadFailed);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    set(detail, std::strerror(errno));
    ::close(fd);
    return Err(KeyFileError::kReadFailed);
  }
  if (auto s = check_stat(st, detail); !s.ok()) {
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

// Counts the hex digits of a key file in the hex format; -1 (and a detail
// naming the position or the count, never a byte value) if it is not one.
long hex_digit_count(ByteSpan text, std::string* detail) {
  long digits = 0;
  bool comment = false;
  std::size_t line = 1, column = 0;
  for (const std::uint8_t c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (comment) {
      if (c == '\n') comment = false;
      continue;
    }
    if (c == '#') {
      comment = true;
    } else if (is_hex_digit(c)) {
      ++digits;
    } else if (!is_space(c)) {
      set(detail, "found a byte that is not a hex digit, whitespace or a # comment at line " +
                      std::to_string(line) + ", column " + std::to_string(column) +
                      " (raw binary keys are not read: store the key as hex, e.g. xxd -p)");
      return -1;
    }
  }
  if (digits % 2 != 0) {
    set(detail, "found an odd number of hex digits (" + std::to_string(digits) + ")");
    return -1;
  }
  return digits;
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

Status<KeyFileError> write_atomic(const std::string& requested, ByteSpan data, bool overwrite,
                                  mode_t mode, std::string* detail) {
  // The destination directory must be safe to keep a key in (keyfile.h);
  // the resolved path is used from here on.
  auto real = safe_real_path(requested, /*for_write=*/true, detail);
  if (!real.ok()) return Err(real.error() == KeyFileError::kReadFailed ? KeyFileError::kWriteFailed : real.error());
  const std::string& path = *real;
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
    if (fd < 0 && errno != EEXIST) {
      set(detail, tmp + ": " + std::strerror(errno));
      return Err(KeyFileError::kWriteFailed);
    }
  }
  if (fd < 0) return Err(KeyFileError::kWriteFailed);
  Fd guard(fd);
  bool ok = ::fchmod(fd, mode) == 0;  // umask may have narrowed 0600/0644
  ok = ok && write_all(fd, data);
  ok = ok && ::fsync(fd) == 0;
  const int write_errno = errno;
  ok = guard.close_checked() && ok;
  if (ok) {
    const int rc = overwrite ? ::rename(tmp.c_str(), path.c_str())
                             : ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(),
                                           RENAME_NOREPLACE);
    if (rc != 0) {
      const int e = errno;
      ::unlink(tmp.c_str());
      set(detail, std::strerror(e));
      return Err(e == EEXIST ? KeyFileError::kExists : KeyFileError::kWriteFailed);
    }
  } else {
    ::unlink(tmp.c_str());
    set(detail, std::strerror(write_errno));
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

std::string key_file_message(const std::string& path, KeyFileError e, const std::string& detail) {
  std::string m = path + ": " + std::string(to_string(e));
  if (!detail.empty()) m += ": " + detail;
  return m;
}

Status<KeyFileError> check_key_file(const std::string& path, std::string* detail) {
  auto fd = open_checked(path, detail);
  if (!fd.ok()) return Err(fd.error());
  ::close(fd.value());
  return Status<KeyFileError>::success();
}

Result<SecretBytes, KeyFileError> read_secret_file(const std::string& path, std::string* detail) {
  auto opened = open_checked(path, detail);
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
      set(detail, std::string("read failed: ") + std::strerror(errno));
      return Err(KeyFileError::kReadFailed);
    }
    if (r == 0) break;
    n += static_cast<std::size_t>(r);
  }
  if (n > kMaxKeyFileSize) return Err(KeyFileError::kTooLarge);
  if (n == 0) return Err(KeyFileError::kEmpty);
  return SecretBytes(buf.span().first(n));
}

Result<SecretBytes, KeyFileError> load_key_file(const std::string& path, KeyFileOptions options,
                                                std::string* detail) {
  auto contents = read_secret_file(path, detail);
  if (!contents.ok()) return Err(contents.error());
  const ByteSpan text = contents->span();
  // KeyFileFormat::kHex is the only encoding (keyfile.h).
  const long digits = hex_digit_count(text, detail);
  if (digits < 0) return Err(KeyFileError::kBadFormat);
  if (digits == 0) {
    set(detail, "found no hex digits (only whitespace or comments)");
    return Err(KeyFileError::kEmpty);
  }
  SecretBytes key = decode_hex(text, static_cast<std::size_t>(digits));
  if (options.expected_size != 0 && key.size() != options.expected_size) {
    set(detail, "found " + std::to_string(key.size()) + " bytes (" + std::to_string(digits) +
                    " hex digits), expected " + std::to_string(options.expected_size) + " bytes (" +
                    std::to_string(2 * options.expected_size) + " hex digits)");
    return Err(KeyFileError::kWrongSize);
  }
  return key;
}

Status<KeyFileError> write_key_file(const std::string& path, ByteSpan data, bool overwrite,
                                    std::string* detail) {
  if (data.empty()) return Err(KeyFileError::kEmpty);
  return write_atomic(path, data, overwrite, 0600, detail);
}

Status<KeyFileError> write_key_file_hex(const std::string& path, ByteSpan key, bool overwrite,
                                        std::string* detail) {
  if (key.empty()) return Err(KeyFileError::kEmpty);
  static constexpr char kDigits[] = "0123456789abcdef";
  SecretBytes text(key.size() * 2 + 1);
  for (std::size_t i = 0; i < key.size(); ++i) {
    text[2 * i] = static_cast<std::uint8_t>(kDigits[key[i] >> 4]);
    text[2 * i + 1] = static_cast<std::uint8_t>(kDigits[key[i] & 0xF]);
  }
  text[key.size() * 2] = '\n';
  return write_atomic(path, text.span(), overwrite, 0600, detail);
}

Status<KeyFileError> write_public_file(const std::string& path, ByteSpan data, bool overwrite,
                                       std::string* detail) {
  return write_atomic(path, data, overwrite, 0644, detail);
}

}  // namespace layersec
