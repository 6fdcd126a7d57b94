// The vector file runner (vector_file.h): the only place vector files are
// read (through base/file.h) and parsed.
#include "layersec/selftest/vector_file.h"

#include <cstdlib>
#include <memory>

#include "layersec/base/file.h"
#include "layersec/base/hex.h"

namespace layersec::selftest {

namespace {
constexpr std::size_t kMaxVectorFile = 64u << 20;

std::filesystem::path env_or(const char* name, const std::filesystem::path& fallback) {
  const char* e = std::getenv(name);
  return (e != nullptr && *e != '\0') ? std::filesystem::path(e) : fallback;
}
}  // namespace

VectorDirs vector_dirs_from_environment(const std::filesystem::path& default_shared,
                                        const std::filesystem::path& default_source) {
  return {env_or("LAYERSEC_VECTORS_DIR", default_shared), env_or("LAYERSEC_SOURCE_DIR", default_source) / "testdata"};
}

Bytes hex_bytes(std::string_view hex, std::string_view what) {
  auto v = from_hex(hex);
  if (!v) throw VectorFileError(std::string(what) + ": bad hex");
  return std::move(*v);
}

const nlohmann::json& VectorCase::field(std::string_view key) const {
  const auto it = j_->is_object() ? j_->find(key) : j_->end();
  if (it == j_->end()) throw VectorFileError(where_ + ": no field '" + std::string(key) + "'");
  return *it;
}

bool VectorCase::has(std::string_view key) const { return j_->is_object() && j_->contains(key); }

Bytes VectorCase::bytes(std::string_view key) const {
  const auto& f = field(key);
  if (!f.is_string()) throw VectorFileError(where_ + ": '" + std::string(key) + "' is not a hex string");
  return hex_bytes(f.get_ref<const std::string&>(), where_ + ": '" + std::string(key) + "'");
}

std::string VectorCase::text(std::string_view key) const {
  const auto& f = field(key);
  if (!f.is_string()) throw VectorFileError(where_ + ": '" + std::string(key) + "' is not a string");
  return f.get<std::string>();
}

std::uint64_t VectorCase::number(std::string_view key) const {
  const auto& f = field(key);
  if (!f.is_number_unsigned() && !(f.is_number_integer() && f.get<std::int64_t>() >= 0))
    throw VectorFileError(where_ + ": '" + std::string(key) + "' is not a whole number");
  return f.get<std::uint64_t>();
}

bool VectorCase::flag(std::string_view key, bool absent) const {
  if (!has(key)) return absent;
  const auto& f = field(key);
  if (!f.is_boolean()) throw VectorFileError(where_ + ": '" + std::string(key) + "' is not true/false");
  return f.get<bool>();
}

VectorCase VectorCase::child(std::string_view key) const {
  const auto& f = field(key);
  if (!f.is_object()) throw VectorFileError(where_ + ": '" + std::string(key) + "' is not an object");
  return VectorCase(f, where_ + "." + std::string(key));
}

std::vector<VectorCase> VectorCase::list(std::string_view key) const {
  const auto& f = field(key);
  if (!f.is_array()) throw VectorFileError(where_ + ": '" + std::string(key) + "' is not a list");
  std::vector<VectorCase> out;
  out.reserve(f.size());
  for (std::size_t i = 0; i < f.size(); ++i)
    out.emplace_back(f[i], where_ + "." + std::string(key) + "[" + std::to_string(i) + "]");
  return out;
}

VectorFile VectorFile::load(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_regular_file(path.string(), kMaxVectorFile);
  } catch (const FileError& e) {
    throw VectorFileError(std::string("cannot read ") + e.what());
  }
  auto j = std::make_unique<nlohmann::json>();
  try {
    *j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw VectorFileError("malformed JSON in " + path.string() + ": " + e.what());
  }
  return VectorFile(std::move(j), path.filename().string());
}

void Tally::check(bool ok, const std::string& vector_name) {
  ++total_;
  if (ok) {
    ++passed_;
  } else {
    failures_.push_back(vector_name);
  }
}

}  // namespace layersec::selftest
