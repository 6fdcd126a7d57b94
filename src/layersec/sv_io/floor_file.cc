#include "layersec/sv_io/floor_file.h"

#include <sys/stat.h>

#include <charconv>
#include <set>
#include <utility>

#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/sv/frame.h"

namespace layersec::sv_io {
namespace {

constexpr std::string_view kMagic = "layersec-sv-floor 1";
constexpr std::string_view kStream = "stream ";
constexpr std::string_view kEnd = "end ";

std::string checksum(std::string_view body) {
  std::uint8_t digest[32];
  const ByteSpan parts[1] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(body.data()), body.size())};
  if (!crypto::sha256(parts, MutableByteSpan(digest, sizeof digest)).ok()) return {};
  return to_hex(ByteSpan(digest, sizeof digest));
}

bool lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Splits "a b c" into exactly n fields separated by one space.
bool fields(std::string_view line, std::string_view* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t sp = line.find(' ');
    if (i + 1 < n) {
      if (sp == std::string_view::npos) return false;
      out[i] = line.substr(0, sp);
      line.remove_prefix(sp + 1);
    } else {
      if (sp != std::string_view::npos) return false;
      out[i] = line;
    }
  }
  return true;
}

// "stream APPID SVID RESUME" without its newline; nullopt + why otherwise.
std::optional<FloorRecord> parse_record(std::string_view line, FloorSyntax& why) {
  std::string_view f[3];
  why = FloorSyntax::kBadRecord;
  if (line.substr(0, kStream.size()) != kStream || !fields(line.substr(kStream.size()), f, 3)) return std::nullopt;
  FloorRecord r;
  why = FloorSyntax::kBadAppid;
  if (f[0].size() != 4 || !lower_hex(f[0])) return std::nullopt;
  r.key.appid = static_cast<std::uint16_t>(std::stoul(std::string(f[0]), nullptr, 16));
  why = FloorSyntax::kBadSvId;
  if (f[1] != "-") {
    if (f[1].empty() || f[1].size() % 2 != 0 || f[1].size() > 2 * sv::kMaxIdentifierBytes || !lower_hex(f[1])) {
      return std::nullopt;
    }
    const auto bytes = from_hex(f[1]);
    if (!bytes) return std::nullopt;
    r.key.sv_id.assign(bytes->begin(), bytes->end());
  }
  why = FloorSyntax::kBadResume;
  if (f[2].empty() || (f[2].size() > 1 && f[2][0] == '0')) return std::nullopt;
  const auto [end, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), r.resume);
  if (ec != std::errc() || end != f[2].data() + f[2].size()) return std::nullopt;
  return r;
}

FloorFileError file_error_of(KeyFileError e) {
  switch (e) {
    case KeyFileError::kNotFound: return FloorFileError::kMissing;
    case KeyFileError::kSymlink: return FloorFileError::kSymlink;
    case KeyFileError::kNotRegularFile:
    case KeyFileError::kInsecureMode:
    case KeyFileError::kWrongOwner:
    case KeyFileError::kUnsafeDirectory: return FloorFileError::kInsecure;
    case KeyFileError::kTooLarge:
    case KeyFileError::kEmpty:
    case KeyFileError::kBadFormat:
    case KeyFileError::kWrongSize: return FloorFileError::kCorrupt;
    case KeyFileError::kExists: return FloorFileError::kExists;
    default: return FloorFileError::kIo;
  }
}

// "PATH: <what the floor file's problem is>[: detail]" (base/keyfile's own
// messages say "key file").
std::string file_message(const std::string& path, KeyFileError e, const std::string& why);

std::string_view syntax_text(FloorSyntax s) {
  switch (s) {
    case FloorSyntax::kNoMagic: return "not a layersec SV floor file (expected \"layersec-sv-floor 1\")";
    case FloorSyntax::kNoNewline: return "no final newline (truncated)";
    case FloorSyntax::kBadRecord: return "expected \"stream APPID SVID RESUME\" or \"end CHECKSUM\"";
    case FloorSyntax::kBadAppid: return "APPID is not 4 lower-case hex digits";
    case FloorSyntax::kBadSvId: return "svID is not \"-\" nor lower-case hex of 1..129 bytes";
    case FloorSyntax::kBadResume: return "resume point is not a decimal 0..18446744073709551615 without leading zeros";
    case FloorSyntax::kDuplicate: return "a second record for the same APPID and svID";
    case FloorSyntax::kNoChecksum: return "no \"end\" checksum line (truncated)";
    case FloorSyntax::kBadChecksum: return "checksum malformed or mismatched (edited or damaged)";
    case FloorSyntax::kAfterEnd: return "text after the \"end\" line";
  }
  return "unknown syntax error";
}

std::string file_message(const std::string& path, KeyFileError e, const std::string& why) {
  std::string m = path + ": " + std::string(to_string(file_error_of(e)));
  if (e == KeyFileError::kInsecureMode || e == KeyFileError::kWrongOwner || e == KeyFileError::kUnsafeDirectory ||
      e == KeyFileError::kWriteFailed || e == KeyFileError::kReadFailed) {
    m += " (" + std::string(to_string(e)) + ")";
  }
  if (!why.empty()) m += ": " + why;
  return m;
}

}  // namespace

std::string floor_syntax_message(FloorSyntax what, std::size_t line) {
  return "line " + std::to_string(line) + ": " + std::string(syntax_text(what));
}

std::string serialize_floor_state(const std::vector<FloorRecord>& records) {
  std::string body(kMagic);
  body += "\n";
  for (const auto& r : records) {
    char appid[5];
    static constexpr char kDigits[] = "0123456789abcdef";
    for (int i = 0; i < 4; ++i) appid[i] = kDigits[(r.key.appid >> (12 - 4 * i)) & 0xF];
    appid[4] = '\0';
    const std::string sv_id =
        r.key.sv_id.empty()
            ? std::string("-")
            : to_hex(ByteSpan(reinterpret_cast<const std::uint8_t*>(r.key.sv_id.data()), r.key.sv_id.size()));
    body += std::string(kStream) + appid + " " + sv_id + " " + std::to_string(r.resume) + "\n";
  }
  const std::string sum = checksum(body);
  return body + std::string(kEnd) + sum + "\n";
}

Result<std::vector<FloorRecord>, FloorSyntax> parse_floor_state(std::string_view text, std::size_t* error_line) {
  std::size_t ignored = 0;
  std::size_t& err_line = error_line != nullptr ? *error_line : ignored;
  const auto fail = [&err_line](FloorSyntax what, std::size_t n) {
    err_line = n;
    return Err(what);
  };
  std::vector<FloorRecord> records;
  std::set<sv::FloorKey> seen;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  bool ended = false;
  while (pos < text.size()) {
    ++line_no;
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return fail(FloorSyntax::kNoNewline, line_no);
    const std::string_view line = text.substr(pos, nl - pos);
    if (ended) return fail(FloorSyntax::kAfterEnd, line_no);
    if (line_no == 1) {
      if (line != kMagic) return fail(FloorSyntax::kNoMagic, line_no);
    } else if (line.substr(0, kEnd.size()) == kEnd) {
      const std::string_view sum = line.substr(kEnd.size());
      const std::string expected = checksum(text.substr(0, pos));
      if (sum.size() != 64 || !lower_hex(sum) || expected.empty() || sum != expected) {
        return fail(FloorSyntax::kBadChecksum, line_no);
      }
      ended = true;
    } else {
      FloorSyntax why = FloorSyntax::kBadRecord;
      auto r = parse_record(line, why);
      if (!r) return fail(why, line_no);
      if (!seen.insert(r->key).second) return fail(FloorSyntax::kDuplicate, line_no);
      records.push_back(std::move(*r));
    }
    pos = nl + 1;
  }
  if (line_no == 0) return fail(FloorSyntax::kNoMagic, 1);
  if (!ended) return fail(FloorSyntax::kNoChecksum, line_no + 1);
  return records;
}

std::string_view to_string(FloorFileError e) {
  switch (e) {
    case FloorFileError::kMissing: return "SV floor file is missing";
    case FloorFileError::kSymlink: return "SV floor file is a symbolic link (refused)";
    case FloorFileError::kCorrupt: return "SV floor file is corrupt";
    case FloorFileError::kInsecure: return "SV floor file is not a private regular file";
    case FloorFileError::kExists: return "something already exists at the SV floor file's path";
    case FloorFileError::kIo: return "SV floor file cannot be read or written";
  }
  return "SV floor file error";
}

Result<FileFloorStore, FloorFileError> FileFloorStore::open(const std::string& path, std::string* detail) {
  std::string why;
  auto bytes = read_secret_file(path, &why);
  if (!bytes) {
    if (detail != nullptr) *detail = file_message(path, bytes.error(), why);
    return Err(file_error_of(bytes.error()));
  }
  const auto text = std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  std::size_t line = 0;
  auto records = parse_floor_state(text, &line);
  if (!records) {
    if (detail != nullptr) *detail = path + ": not a valid SV floor file: " + floor_syntax_message(records.error(), line);
    return Err(FloorFileError::kCorrupt);
  }
  FileFloorStore store(path);
  for (const auto& r : *records) store.records_[r.key] = r.resume;
  return store;
}

Result<FileFloorStore, FloorFileError> FileFloorStore::create(const std::string& path, std::string* detail) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (detail != nullptr) *detail = path + ": exists; not overwriting an existing SV floor file";
    return Err(S_ISLNK(st.st_mode) ? FloorFileError::kSymlink : FloorFileError::kExists);
  }
  const std::string text = serialize_floor_state({});
  std::string why;
  auto w = write_key_file(path, ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                          /*overwrite=*/false, &why);
  if (!w) {
    if (detail != nullptr) *detail = file_message(path, w.error(), why);
    return Err(file_error_of(w.error()));
  }
  return FileFloorStore(path);
}

Result<std::optional<std::uint64_t>, sv::FloorStoreError> FileFloorStore::load(const sv::FloorKey& key) {
  auto it = records_.find(key);
  if (it == records_.end()) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{it->second};
}

Status<sv::FloorStoreError> FileFloorStore::save(const sv::FloorKey& key, std::uint64_t resume) {
  auto it = records_.find(key);
  const std::optional<std::uint64_t> before =
      it == records_.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
  records_[key] = resume;
  const std::string text = serialize_floor_state(records());
  std::string why;
  auto w = write_key_file(path_, ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                          /*overwrite=*/true, &why);
  if (!w) {
    // Not durable: the in-memory state goes back to what the file holds.
    if (before) {
      records_[key] = *before;
    } else {
      records_.erase(key);
    }
    last_error_ = file_message(path_, w.error(), why);
    return Err(sv::FloorStoreError::kIo);
  }
  ++saves_;
  return {};
}

std::vector<FloorRecord> FileFloorStore::records() const {
  std::vector<FloorRecord> out;
  out.reserve(records_.size());
  for (const auto& [k, v] : records_) out.push_back(FloorRecord{k, v});
  return out;
}

}  // namespace layersec::sv_io
