// Files a user names on a command line or in a configuration: reading
// without blocking on a FIFO, and writing with every error reported.
//
// These are start-up and tool paths, not packet paths: failures throw
// FileError, whose what() names the path and the reason
// ("/tmp/x.json: not a regular file (FIFO)").
//
// read_regular_file opens O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC (a FIFO or
// device therefore never blocks the open), checks with fstat on the opened
// descriptor that it is a regular file (the file read is the file checked),
// and reads at most max_bytes (more is kTooLarge, so /dev/zero-like inputs
// cannot exhaust memory). A read error is an error, never a short file.
//
// OutputFile creates or truncates a regular file with O_NOFOLLOW (a symlink
// planted at the path is refused, never followed), refuses an existing
// non-regular file, checks every write, and reports fsync/close failures
// from close() (a full device is an error, not "wrote 5 frames").
// Secret outputs (keys, state) use base/keyfile.h instead (atomic, 0600).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "layersec/base/bytes.h"

namespace layersec {

enum class FileErrorKind : std::uint8_t {
  kNotFound,
  kNotRegular,  // directory, FIFO, device or socket
  kSymlink,     // output path is a symbolic link
  kTooLarge,    // input above the caller's limit
  kRead,        // open/read failed (permission, I/O)
  kWrite,       // create/write/fsync/close failed (e.g. ENOSPC)
};

class FileError : public std::runtime_error {
 public:
  FileError(FileErrorKind kind, const std::string& path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), kind_(kind), path_(path), reason_(reason) {}
  [[nodiscard]] FileErrorKind kind() const { return kind_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  // what() without the path ("not a regular file (FIFO)").
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  FileErrorKind kind_;
  std::string path_;
  std::string reason_;
};

// Reads all of a regular file of at most max_bytes. Throws FileError.
std::string read_regular_file(const std::string& path, std::size_t max_bytes);

// The opens behind read_regular_file and OutputFile, for readers and writers
// that need a descriptor (libpcap's pcap_fopen_offline / pcap_dump_fopen).
// The caller owns the returned descriptor. Both throw FileError.
//   open_regular_file: read-only; opened non-blocking, checked S_ISREG with
//     fstat, then switched back to blocking reads.
//   open_output_file: write-only, created with `mode` or truncated, with
//     O_NOFOLLOW and the regular-file check of OutputFile.
int open_regular_file(const std::string& path);
int open_output_file(const std::string& path, unsigned mode = 0644);

// Largest configuration file the loaders read (JSON configs, node specs).
inline constexpr std::size_t kMaxConfigFileSize = 16 << 20;

// read_regular_file for configuration loaders that report with their own
// exception type: throws Error(path, problem), the problem being "cannot
// open: <reason>" for a missing or unreadable file and the reason alone
// otherwise ("is a directory, not a regular file").
template <class Error>
std::string read_config_file(const std::string& path, std::size_t max_bytes = kMaxConfigFileSize) {
  try {
    return read_regular_file(path, max_bytes);
  } catch (const FileError& e) {
    const bool open = e.kind() == FileErrorKind::kNotFound || e.kind() == FileErrorKind::kRead;
    throw Error(path, (open ? "cannot open: " : "") + e.reason());
  }
}

// A file being written. Not copyable; closes (ignoring errors) if destroyed
// without close(). Call close() to learn whether the data reached the disk.
class OutputFile {
 public:
  // Throws FileError. mode applies when the file is created.
  explicit OutputFile(const std::string& path, unsigned mode = 0644);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writes all bytes or throws FileError (kWrite, with strerror).
  void write(ByteSpan data);
  void write(const std::string& text);
  // fsync + close; throws FileError on failure. Idempotent.
  void close();
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace layersec
