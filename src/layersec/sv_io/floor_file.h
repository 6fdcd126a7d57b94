// The counter floor file of `sv subscribe --state FILE` (an sv::FloorStore on
// disk; sv/floor_store.h says what is persisted and why). I/O side: the
// subscriber sees only the FloorStore interface.
//
// Format (text, one record per subscribed stream, written whole on every save):
//
//   layersec-sv-floor 1
//   stream 4000 4c415945525345433031 1780000000000012345
//   end <64 hex: SHA-256 of every octet before "end">
//
// record fields: APPID (4 lower-case hex digits), svID (lower-case hex of its
// bytes, 1..129 of them, or "-" for an empty svID), the resume point (decimal,
// no sign, no leading zero): the lowest frameCounter a restarted subscriber
// may accept. Anything else is a typed FloorSyntax error naming the line: an
// unknown word, a bad field, a duplicate stream, a missing or wrong checksum,
// text after the checksum line, a truncated file. A floor is never guessed.
//
// Files: read with base/keyfile's read_secret_file (opened O_NOFOLLOW, a
// regular file, mode 0600/0400, owned by us or root, safe directories: the
// floor is what stands between a recording and the subscriber); written with
// write_key_file (a temporary file with an unpredictable name created
// O_EXCL|O_NOFOLLOW with mode 0600, written, fsync'ed, renamed over the path,
// the directory fsync'ed), so a planted file or symlink is never written
// through and a crash leaves the old or the new state. One process per file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/sv/floor_store.h"

namespace layersec::sv_io {

struct FloorRecord {
  sv::FloorKey key;
  std::uint64_t resume = 0;
  friend bool operator==(const FloorRecord&, const FloorRecord&) = default;
};

enum class FloorSyntax : std::uint8_t {
  kNoMagic,      // the first line is not "layersec-sv-floor 1"
  kNoNewline,    // the file does not end with a newline (truncated)
  kBadRecord,    // not "stream APPID SVID RESUME" nor "end CHECKSUM"
  kBadAppid,     // APPID is not 4 lower-case hex digits
  kBadSvId,      // svID is not "-" nor lower-case hex of 1..129 bytes
  kBadResume,    // the resume point is not a decimal 0..2^64-1 without leading zeros
  kDuplicate,    // a second record for the same (APPID, svID)
  kNoChecksum,   // no "end" line (truncated)
  kBadChecksum,  // the checksum is malformed or does not match
  kAfterEnd,     // text after the "end" line
};

// "line N: <reason>".
std::string floor_syntax_message(FloorSyntax what, std::size_t line);

// Serialisation (exposed for tests and the fuzzer). parse_floor_state accepts
// exactly what serialize_floor_state writes (records in any order); on an
// error `line` (if given) receives the 1-based line it names.
std::string serialize_floor_state(const std::vector<FloorRecord>& records);
[[nodiscard]] Result<std::vector<FloorRecord>, FloorSyntax> parse_floor_state(std::string_view text,
                                                                           std::size_t* line = nullptr);

// Why a floor file could not be opened or created.
enum class FloorFileError : std::uint8_t {
  kMissing,   // no such file
  kSymlink,   // the path is a symbolic link (refused, never followed)
  kCorrupt,   // it exists but is not a valid floor file
  kInsecure,  // not a regular file, group/other permission bits, another owner, unsafe directory
  kExists,    // create(): something is already at the path
  kIo,        // read or write failed
};
std::string_view to_string(FloorFileError e);

class FileFloorStore final : public sv::FloorStore {
 public:
  // Reads an existing floor file. On failure `detail` (if given) names the
  // path and the reason (for kCorrupt, the line).
  static Result<FileFloorStore, FloorFileError> open(const std::string& path, std::string* detail = nullptr);
  // The first start: writes an empty floor file (kExists if anything is at
  // the path, a symlink included) and returns its store.
  static Result<FileFloorStore, FloorFileError> create(const std::string& path, std::string* detail = nullptr);

  Result<std::optional<std::uint64_t>, sv::FloorStoreError> load(const sv::FloorKey& key) override;
  // Rewrites the whole file atomically (see above); kIo on failure, with
  // last_error() naming the path and the reason; the in-memory state then
  // stays what the file holds.
  Status<sv::FloorStoreError> save(const sv::FloorKey& key, std::uint64_t resume) override;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& last_error() const { return last_error_; }
  [[nodiscard]] std::vector<FloorRecord> records() const;
  [[nodiscard]] std::size_t saves() const { return saves_; }

 private:
  explicit FileFloorStore(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::map<sv::FloorKey, std::uint64_t> records_;
  std::string last_error_;
  std::size_t saves_ = 0;
};

}  // namespace layersec::sv_io
