// A small file-test style vector runner (after BoringSSL's
// crypto/test/file_test.h): published vectors stay data in JSON files, a
// decoder per family turns a file into plain cases (the *_vectors.h files
// beside this one), and one tally records each check by the vector's name.
// `layersec selftest` and the crypto/kex unit tests read the same files
// through the same decoders, so a vector is interpreted one way only.
//
// Vector files are read from two folders: the shared published vectors
// (../shared/vectors, LAYERSEC_VECTORS_DIR overrides) and the repository's
// testdata/ (each file there names its source). Reading is bounded and
// refuses non-regular files (base/file.h), so a FIFO cannot hang a run.
//
// Errors: a missing, unreadable or malformed file, or a case without a field
// it needs, throws VectorFileError naming the file (and the field). This is a
// test and tool path, never a packet path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::selftest {

using Bytes = std::vector<std::uint8_t>;

// A vector file that is missing, unreadable or malformed, or a case that
// lacks a field; what() names the file and, where known, the field.
struct VectorFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The two vector folders.
struct VectorDirs {
  std::filesystem::path shared;    // ../shared/vectors: published vectors
  std::filesystem::path testdata;  // <repo>/testdata: vectors kept in the repository
};

// The folders from LAYERSEC_VECTORS_DIR and LAYERSEC_SOURCE_DIR (+ /testdata)
// when set and non-empty, else the given compiled-in defaults.
VectorDirs vector_dirs_from_environment(const std::filesystem::path& default_shared,
                                        const std::filesystem::path& default_source);

// One JSON value of a vector file with checked accessors. `where` names the
// file and the path inside it ("hkdf_rfc5869.json: vectors[2]") for errors.
// Holds a reference into its VectorFile, which must outlive it.
class VectorCase {
 public:
  VectorCase(const nlohmann::json& value, std::string where) : j_(&value), where_(std::move(where)) {}

  [[nodiscard]] bool has(std::string_view key) const;
  // A hex string field as bytes (whitespace is not allowed; "" is empty).
  [[nodiscard]] Bytes bytes(std::string_view key) const;
  [[nodiscard]] std::string text(std::string_view key) const;
  [[nodiscard]] std::uint64_t number(std::string_view key) const;
  [[nodiscard]] bool flag(std::string_view key, bool absent) const;
  // A child object, and an array of objects.
  [[nodiscard]] VectorCase child(std::string_view key) const;
  [[nodiscard]] std::vector<VectorCase> list(std::string_view key) const;
  [[nodiscard]] const nlohmann::json& json() const { return *j_; }
  [[nodiscard]] const std::string& where() const { return where_; }

 private:
  [[nodiscard]] const nlohmann::json& field(std::string_view key) const;
  const nlohmann::json* j_;
  std::string where_;
};

// A parsed vector file. Move-only (cases point into it).
class VectorFile {
 public:
  // Reads and parses `path` (a regular file of at most 64 MiB). Throws
  // VectorFileError.
  static VectorFile load(const std::filesystem::path& path);
  VectorFile(VectorFile&&) = default;
  VectorFile& operator=(VectorFile&&) = default;
  VectorFile(const VectorFile&) = delete;
  VectorFile& operator=(const VectorFile&) = delete;

  [[nodiscard]] VectorCase root() const { return VectorCase(*json_, name_); }

 private:
  VectorFile(std::unique_ptr<nlohmann::json> j, std::string name) : json_(std::move(j)), name_(std::move(name)) {}
  std::unique_ptr<nlohmann::json> json_;  // stable address for VectorCase
  std::string name_;
};

// Hex to bytes for values decoded outside a VectorCase; throws
// VectorFileError naming `what` on bad hex.
Bytes hex_bytes(std::string_view hex, std::string_view what);

// The outcome of one primitive's checks: each check counted under the
// vector's name; files that could not be used are errors, not failures.
class Tally {
 public:
  // Counts one check; a false `ok` records `vector_name` as failed.
  void check(bool ok, const std::string& vector_name);
  void error(const std::string& message) { errors_.push_back(message); }
  [[nodiscard]] int passed() const { return passed_; }
  [[nodiscard]] int total() const { return total_; }
  [[nodiscard]] const std::vector<std::string>& failures() const { return failures_; }
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }
  // True if there were checks, all passed and no file error occurred.
  [[nodiscard]] bool ok() const { return errors_.empty() && total_ > 0 && passed_ == total_; }

 private:
  int passed_ = 0;
  int total_ = 0;
  std::vector<std::string> failures_;  // vector names only, never values
  std::vector<std::string> errors_;
};

}  // namespace layersec::selftest
