// The PN state file of `layersec macsec up` (a PnStore on disk; pn_state.h
// says what is persisted and why). Link code: this file does I/O, the SecY
// sees only the PnStore interface.
//
// Format (text, one record per SA key, written whole on every save):
//
//   layersec-macsec-pn-state 1
//   tx 0200007800010001 0 <32 hex: key fingerprint> 65536
//   rx 0200007800020001 0 <32 hex: key fingerprint> 131071
//   end <64 hex: SHA-256 of every octet before "end">
//
// fields: direction, SCI (16 hex), AN (0..3, informational), the key
// fingerprint of pn_fingerprint() (never the key), the highest PN that may
// have been used / accepted (decimal). Anything else — an unknown word, a
// missing or wrong checksum, a duplicate record, text after the checksum, a
// truncated file — is kCorrupt: a PN is never guessed.
//
// Files: read with base/keyfile's read_secret_file (regular file, not a
// symlink, mode 0600/0400, owned by us or root, safe directories); written
// with write_key_file (a temporary file with an unpredictable name created
// O_EXCL|O_NOFOLLOW with mode 0600, fsync, rename over the path, fsync of
// the directory), so a planted file or symlink is never written through and
// a crash leaves either the old or the new state. One process per file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/macsec/pn_state.h"

namespace layersec::macsec {

struct PnRecord {
  PnKey key;
  std::uint8_t an = 0;
  std::uint64_t highest = 0;
  friend bool operator==(const PnRecord&, const PnRecord&) = default;
};

// Serialisation (exposed for tests and the fuzzer). parse_pn_state accepts
// exactly what serialize_pn_state writes (records in any order).
std::string serialize_pn_state(const std::vector<PnRecord>& records);
[[nodiscard]] Result<std::vector<PnRecord>, PnStoreError> parse_pn_state(std::string_view text);

// Why a state file could not be opened.
enum class PnFileError : std::uint8_t {
  kMissing,   // no such file
  kSymlink,   // the path is a symbolic link (refused, never followed)
  kCorrupt,   // it exists but is not a valid state file
  kInsecure,  // not a regular file, group/other permission bits, another owner, unsafe directory
  kIo,        // read or write failed
};
std::string_view to_string(PnFileError e);

class FilePnStore final : public PnStore {
 public:
  // Reads an existing state file. On failure `detail` (if given) names the
  // path and the reason.
  static Result<FilePnStore, PnFileError> open(const std::string& path, std::string* detail = nullptr);
  // The first provisioning: writes an empty state file (refused with kIo if
  // anything exists at the path) and returns its store.
  static Result<FilePnStore, PnFileError> create(const std::string& path, std::string* detail = nullptr);

  Result<std::optional<std::uint64_t>, PnStoreError> load(const PnKey& key) override;
  // Rewrites the whole file atomically (see above); kIo on failure, with
  // last_error() naming the path and the reason.
  Status<PnStoreError> save(const PnKey& key, std::uint8_t an, std::uint64_t highest) override;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& last_error() const { return last_error_; }
  [[nodiscard]] std::vector<PnRecord> records() const;
  [[nodiscard]] std::size_t saves() const { return saves_; }

 private:
  explicit FilePnStore(std::string path) : path_(std::move(path)) {}
  Status<PnStoreError> write(std::string* detail);
  std::string path_;
  std::map<PnKey, PnRecord> records_;
  std::string last_error_;
  std::size_t saves_ = 0;
};

}  // namespace layersec::macsec
