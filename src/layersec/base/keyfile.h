// Secret key files: loading with a permission check, and atomic writing.
//
// Loading (load_key_file, read_secret_file) refuses, with a typed reason:
//   - a path that is a symbolic link (checked with lstat and again by opening
//     with O_NOFOLLOW, so a link swapped in between is refused too);
//   - anything that is not a regular file (directory, FIFO, device, socket);
//   - a file with any group or other permission bit set (mode & 0077 != 0):
//     0600 and 0400 are accepted, 0640 / 0644 / 0666 are refused;
//   - a file owned by a user other than the effective user or root;
//   - a file larger than kMaxKeyFileSize.
// The checks run on the opened descriptor (fstat), so the file read is the
// file checked. Contents are read straight into a zeroizing SecretBytes.
//
// Key file formats (load_key_file):
//   raw  - the file's bytes are the key;
//   hex  - ASCII hex digits (upper or lower case); ASCII whitespace anywhere
//          is ignored (so a trailing newline is fine); '#' starts a comment
//          to the end of the line. Example: "00112233...eeff\n".
//   auto - hex if the file consists only of hex digits, whitespace and
//          comments with an even digit count; raw otherwise. When an expected
//          key size is given, a file whose raw size matches is raw unless its
//          hex decoding also matches. Use kRaw/kHex when in doubt.
// PEM private keys are read with read_secret_file (no format handling).
//
// Writing (write_key_file, write_public_file) is atomic: the data goes to a
// temporary file in the same directory created with
// open(O_CREAT|O_EXCL|O_NOFOLLOW, 0600), is written and fsync'ed, and is then
// renamed over the destination (renameat2 RENAME_NOREPLACE unless
// overwrite is requested); the directory is fsync'ed afterwards. A reader
// never sees a partially written key, and a key file is never, even briefly,
// readable by group or others.
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
  kBadFormat,       // hex format requested but the contents are not valid hex
  kWrongSize,       // the decoded key does not have the expected size
  kReadFailed,      // open/read failed for another reason (permission denied, I/O)
  kExists,          // write without overwrite and the destination exists
  kWriteFailed,     // create/write/fsync/rename failed
};
// A clear one-line explanation of the reason (never contains key bytes).
std::string_view to_string(KeyFileError e);

enum class KeyFileFormat : std::uint8_t { kAuto, kRaw, kHex };

// Largest key file accepted (an RSA-15360 PEM key is about 12 KiB).
inline constexpr std::size_t kMaxKeyFileSize = 64 * 1024;

struct KeyFileOptions {
  KeyFileFormat format = KeyFileFormat::kAuto;
  // 0: any size. Otherwise the decoded key must have exactly this size.
  std::size_t expected_size = 0;
};

// Reads a secret file after the checks above and returns its bytes
// unchanged. Used for PEM private keys.
[[nodiscard]] Result<SecretBytes, KeyFileError> read_secret_file(const std::string& path);

// Reads a symmetric key file (raw or hex, see above) after the checks above.
[[nodiscard]] Result<SecretBytes, KeyFileError> load_key_file(const std::string& path,
                                                              KeyFileOptions options = {});

// Checks the permissions of `path` without reading it (same rules as
// read_secret_file). Useful for a clear diagnostic before a long operation.
[[nodiscard]] Status<KeyFileError> check_key_file(const std::string& path);

// Writes `data` to `path` atomically with mode 0600 (see above). With
// overwrite == false an existing destination is kExists and left untouched.
[[nodiscard]] Status<KeyFileError> write_key_file(const std::string& path, ByteSpan data,
                                                  bool overwrite = false);
// Writes a key as lower-case hex followed by a newline (the hex format above).
[[nodiscard]] Status<KeyFileError> write_key_file_hex(const std::string& path, ByteSpan key,
                                                      bool overwrite = false);

// Writes non-secret data (certificates) atomically with mode 0644.
[[nodiscard]] Status<KeyFileError> write_public_file(const std::string& path, ByteSpan data,
                                                     bool overwrite = false);

}  // namespace layersec
