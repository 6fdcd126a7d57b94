#include "layersec/macsec/pn_state_file.h"

#include <sys/stat.h>

#include <charconv>
#include <set>

#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"

namespace layersec::macsec {
namespace {

constexpr std::string_view kMagic = "layersec-macsec-pn-state 1\n";
constexpr std::string_view kEnd = "end ";

std::string checksum(std::string_view body) {
  std::uint8_t digest[32];
  const ByteSpan parts[1] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(body.data()), body.size())};
  if (!crypto::sha256(parts, MutableByteSpan(digest, sizeof digest)).ok()) return {};
  return to_hex(ByteSpan(digest, sizeof digest));
}

bool lower_hex(std::string_view s, std::size_t digits) {
  if (s.size() != digits) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// One record line without its newline: "tx <sci> <an> <fp> <highest>".
std::optional<PnRecord> parse_record(std::string_view line) {
  std::string_view f[5];
  for (int i = 0; i < 5; ++i) {
    const std::size_t sp = line.find(' ');
    if (i < 4) {
      if (sp == std::string_view::npos) return std::nullopt;
      f[i] = line.substr(0, sp);
      line.remove_prefix(sp + 1);
    } else {
      if (sp != std::string_view::npos) return std::nullopt;
      f[i] = line;
    }
  }
  PnRecord r;
  if (f[0] == "tx") {
    r.key.direction = PnDirection::kTransmit;
  } else if (f[0] == "rx") {
    r.key.direction = PnDirection::kReceive;
  } else {
    return std::nullopt;
  }
  if (!lower_hex(f[1], 16) || !lower_hex(f[3], 2 * kPnFingerprintSize)) return std::nullopt;
  const auto sci = from_hex(f[1]);
  const auto fp = from_hex(f[3]);
  if (!sci || !fp) return std::nullopt;
  for (auto b : *sci) r.key.sci.value = (r.key.sci.value << 8) | b;
  std::copy(fp->begin(), fp->end(), r.key.fingerprint.begin());
  if (f[2].size() != 1 || f[2][0] < '0' || f[2][0] > '3') return std::nullopt;
  r.an = static_cast<std::uint8_t>(f[2][0] - '0');
  // Decimal, no sign, no leading zeros, no overflow.
  if (f[4].empty() || (f[4].size() > 1 && f[4][0] == '0')) return std::nullopt;
  const auto [end, ec] = std::from_chars(f[4].data(), f[4].data() + f[4].size(), r.highest);
  if (ec != std::errc() || end != f[4].data() + f[4].size()) return std::nullopt;
  return r;
}

PnFileError file_error_of(KeyFileError e) {
  switch (e) {
    case KeyFileError::kNotFound: return PnFileError::kMissing;
    case KeyFileError::kSymlink: return PnFileError::kSymlink;
    case KeyFileError::kNotRegularFile:
    case KeyFileError::kInsecureMode:
    case KeyFileError::kWrongOwner:
    case KeyFileError::kUnsafeDirectory: return PnFileError::kInsecure;
    case KeyFileError::kTooLarge:
    case KeyFileError::kEmpty:
    case KeyFileError::kBadFormat:
    case KeyFileError::kWrongSize: return PnFileError::kCorrupt;
    default: return PnFileError::kIo;
  }
}

}  // namespace

std::string serialize_pn_state(const std::vector<PnRecord>& records) {
  std::string body(kMagic);
  for (const auto& r : records) {
    const auto sci = r.key.sci.bytes();
    body += std::string(to_string(r.key.direction)) + " " + to_hex(ByteSpan(sci.data(), sci.size())) + " " +
            std::to_string(r.an) + " " + to_hex(ByteSpan(r.key.fingerprint.data(), r.key.fingerprint.size())) +
            " " + std::to_string(r.highest) + "\n";
  }
  const std::string sum = checksum(body);
  return body + std::string(kEnd) + sum + "\n";
}

Result<std::vector<PnRecord>, PnStoreError> parse_pn_state(std::string_view text) {
  // The checksum line is the last line; it covers everything before it.
  if (text.size() < kMagic.size() + kEnd.size() + 65 || text.back() != '\n') return Err(PnStoreError::kCorrupt);
  const std::size_t end_line = text.size() - (kEnd.size() + 65);
  if (text.substr(end_line, kEnd.size()) != kEnd || (end_line != 0 && text[end_line - 1] != '\n'))
    return Err(PnStoreError::kCorrupt);
  const std::string_view body = text.substr(0, end_line);
  const std::string_view sum = text.substr(end_line + kEnd.size(), 64);
  const std::string expected = checksum(body);
  if (expected.empty() || sum != expected) return Err(PnStoreError::kCorrupt);
  if (body.substr(0, kMagic.size()) != kMagic) return Err(PnStoreError::kCorrupt);

  std::vector<PnRecord> records;
  std::set<PnKey> seen;
  std::string_view rest = body.substr(kMagic.size());
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return Err(PnStoreError::kCorrupt);
    auto r = parse_record(rest.substr(0, nl));
    if (!r || !seen.insert(r->key).second) return Err(PnStoreError::kCorrupt);
    records.push_back(*r);
    rest.remove_prefix(nl + 1);
  }
  return records;
}

std::string_view to_string(PnFileError e) {
  switch (e) {
    case PnFileError::kMissing: return "PN state file is missing";
    case PnFileError::kSymlink: return "PN state file is a symbolic link (refused)";
    case PnFileError::kCorrupt: return "PN state file is corrupt";
    case PnFileError::kInsecure: return "PN state file is not a private regular file";
    case PnFileError::kIo: return "PN state file cannot be read or written";
  }
  return "PN state file error";
}

Result<FilePnStore, PnFileError> FilePnStore::open(const std::string& path, std::string* detail) {
  std::string why;
  auto bytes = read_secret_file(path, &why);
  if (!bytes) {
    if (detail != nullptr) *detail = key_file_message(path, bytes.error(), why);
    return Err(file_error_of(bytes.error()));
  }
  const auto text = std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  auto records = parse_pn_state(text);
  if (!records) {
    if (detail != nullptr) {
      *detail = path + ": not a valid PN state file (bad syntax, truncated or checksum mismatch); "
                       "refusing to guess PNs";
    }
    return Err(PnFileError::kCorrupt);
  }
  FilePnStore store(path);
  for (const auto& r : *records) store.records_[r.key] = r;
  return store;
}

Result<FilePnStore, PnFileError> FilePnStore::create(const std::string& path, std::string* detail) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (detail != nullptr) *detail = path + ": exists; not overwriting an existing PN state file";
    return Err(S_ISLNK(st.st_mode) ? PnFileError::kSymlink : PnFileError::kIo);
  }
  FilePnStore store(path);
  std::string why;
  const std::string text = serialize_pn_state({});
  auto st2 = write_key_file(path, ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                            /*overwrite=*/false, &why);
  if (!st2) {
    if (detail != nullptr) *detail = key_file_message(path, st2.error(), why);
    return Err(file_error_of(st2.error()));
  }
  return store;
}

Result<std::optional<std::uint64_t>, PnStoreError> FilePnStore::load(const PnKey& key) {
  auto it = records_.find(key);
  if (it == records_.end()) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{it->second.highest};
}

Status<PnStoreError> FilePnStore::save(const PnKey& key, std::uint8_t an, std::uint64_t highest) {
  auto it = records_.find(key);
  const std::optional<PnRecord> before = it == records_.end() ? std::nullopt : std::optional<PnRecord>(it->second);
  records_[key] = PnRecord{key, an, highest};
  if (auto st = write(&last_error_); !st) {
    // Not durable: the in-memory state goes back to what the file holds.
    if (before) {
      records_[key] = *before;
    } else {
      records_.erase(key);
    }
    return st;
  }
  ++saves_;
  return {};
}

Status<PnStoreError> FilePnStore::write(std::string* detail) {
  const std::string text = serialize_pn_state(records());
  std::string why;
  auto st = write_key_file(path_, ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                           /*overwrite=*/true, &why);
  if (!st) {
    if (detail != nullptr) *detail = key_file_message(path_, st.error(), why);
    return Err(PnStoreError::kIo);
  }
  return {};
}

std::vector<PnRecord> FilePnStore::records() const {
  std::vector<PnRecord> out;
  out.reserve(records_.size());
  for (const auto& [k, r] : records_) out.push_back(r);
  return out;
}

}  // namespace layersec::macsec
