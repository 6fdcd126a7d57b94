// Secret key files: loading with a permission check, and atomic writing.
//
// Loading (load_key_file, read_secret_file, check_key_file) refuses, with a
// typed reason:
//   - a path whose last component is a symbolic link (lstat, and the file is
//     opened with O_NOFOLLOW, so a link swapped in between is refused too);
//   - anything that is not a regular file (directory, FIFO, device, socket;
//     opened with O_NONBLOCK, so a FIFO cannot block the open);
//   - a file with any group or other permission bit set (mode & 0077 != 0):
//     0600 and 0400 are accepted, 0640 / 0644 / 0666 are refused;
//   - a file owned by a user other than the effective user or root;
//   - a file larger than kMaxKeyFileSize;
//   - an unsafe directory (kUnsafeDirectory), checked as OpenSSH checks the
//     directories of its key files (safe_path()): the directory part is
//     resolved with realpath(3) and every directory of the resolved path,
//     from the key's own directory up to "/", must be owned by root or the
//     effective user and not writable by group or others. The file is then
//     opened through the resolved path, so a symlinked directory is judged by
//     the directory it points to (a link to a 0777 directory is refused).
//     One exception, which OpenSSH does not make: a group- or world-writable
//     directory with the sticky bit (S_ISVTX, e.g. /tmp, mode 1777) is
//     accepted, because in a sticky directory nobody but the entry's owner,
//     the directory's owner (root or us, checked) and root can rename or
//     delete an entry (unlink(2), rename(2): EPERM), and the entry below it
//     on the path is itself checked (owned by root or us, not writable by
//     others). So a mkdtemp(3) directory under /tmp is safe; a key planted
//     directly in a shared non-sticky 0777 directory is not.
// The checks run on the opened descriptor (fstat), so the file read is the
// file checked. Contents are read straight into a zeroizing SecretBytes.
//
// Symmetric key file format (load_key_file): exactly one encoding, hex text.
//   - ASCII hex digits, upper or lower case, two per key byte;
//   - ASCII whitespace anywhere is ignored (a trailing newline is fine, and
//     so is none: "00112233...eeff" and "0011 2233\n...\n" are the same key);
//   - '#' starts a comment that runs to the end of the line.
// Anything else is kBadFormat (raw binary keys included: there is no raw or
// "auto" reading, so a 32-hex-digit file is always a 16-byte key, never 32
// ASCII bytes); an odd number of digits is kBadFormat; the decoded size must
// equal KeyFileOptions::expected_size when that is set (kWrongSize). The
// detail string says what was found (a position or a count, never a key
// byte). write_key_file_hex writes this format.
// PEM private keys are read with read_secret_file (no format handling).
//
// Writing (write_key_file, write_key_file_hex, write_public_file) checks the
// destination directory with the same directory rule, then is atomic: the
// data goes to a temporary file in the same directory created with
// open(O_CREAT|O_EXCL|O_NOFOLLOW, 0600), is written and fsync'ed, and is then
// renamed over the destination (renameat2 RENAME_NOREPLACE unless
// overwrite is requested); the directory is fsync'ed afterwards. A reader
// never sees a partially written key, and a key file is never, even briefly,
// readable by group or others.
//
// Every function that can fail takes an optional `detail`: on failure it
// receives a one-line explanation beyond to_string(error) (which directory is
// unsafe and why, the mode found, what the bad format was); it never contains
// key bytes. key_file_message() joins path, reason and detail for a CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"

namespace layersec {

enum class KeyFileError : std::uint8_t {
  kNotFound,        // no such file
  kSymlink,         // the path is a symbolic link
  kNotRegularFile,  // directory, FIFO, device or socket
  kInsecureMode,    // group or other permission bits set (must be 0600 or stricter)
  kWrongOwner,      // owned by neither the effective user nor root
  kTooLarge,        // larger than kMaxKeyFileSize
  kEmpty,           // no key bytes
  kBadFormat,       // not hex text (see the format above), or an odd number of hex digits
  kWrongSize,       // the decoded key does not have the expected size
  kReadFailed,      // open/read failed for another reason (permission denied, I/O)
  kExists,          // write without overwrite and the destination exists
  kWriteFailed,     // create/write/fsync/rename failed
  kUnsafeDirectory, // a directory on the resolved path is writable by others or owned by another user
};
// A clear one-line explanation of the reason (never contains key bytes).
std::string_view to_string(KeyFileError e);

// The encoding of a symmetric key file. Hex text is the only one (see above);
// the field stays so that every call site states the format it expects.
enum class KeyFileFormat : std::uint8_t { kHex };

// Largest key file accepted (an RSA-15360 PEM key is about 12 KiB).
inline constexpr std::size_t kMaxKeyFileSize = 64 * 1024;

struct KeyFileOptions {
  KeyFileFormat format = KeyFileFormat::kHex;
  // 0: any size. Otherwise the decoded key must have exactly this size.
  std::size_t expected_size = 0;
};

// Reads a secret file after the checks above and returns its bytes
// unchanged. Used for PEM private keys.
[[nodiscard]] Result<SecretBytes, KeyFileError> read_secret_file(const std::string& path,
                                                                 std::string* detail = nullptr);

// Reads a symmetric key file (hex text, see above) after the checks above.
[[nodiscard]] Result<SecretBytes, KeyFileError> load_key_file(const std::string& path,
                                                              KeyFileOptions options = {},
                                                              std::string* detail = nullptr);

// Checks the permissions of `path` without reading it (same rules as
// read_secret_file). Useful for a clear diagnostic before a long operation.
[[nodiscard]] Status<KeyFileError> check_key_file(const std::string& path,
                                                  std::string* detail = nullptr);

// Writes `data` unchanged (a PEM private key) to `path` atomically with mode
// 0600 (see above). Symmetric keys are written with write_key_file_hex. With
// overwrite == false an existing destination is kExists and left untouched.
[[nodiscard]] Status<KeyFileError> write_key_file(const std::string& path, ByteSpan data,
                                                  bool overwrite = false,
                                                  std::string* detail = nullptr);
// Writes a key as lower-case hex followed by a newline (the format above).
[[nodiscard]] Status<KeyFileError> write_key_file_hex(const std::string& path, ByteSpan key,
                                                      bool overwrite = false,
                                                      std::string* detail = nullptr);

// Writes non-secret data (certificates) atomically with mode 0644.
[[nodiscard]] Status<KeyFileError> write_public_file(const std::string& path, ByteSpan data,
                                                     bool overwrite = false,
                                                     std::string* detail = nullptr);

// "PATH: <to_string(e)>" and, if detail is not empty, ": <detail>".
std::string key_file_message(const std::string& path, KeyFileError e, const std::string& detail = {});

}  // namespace layersec
