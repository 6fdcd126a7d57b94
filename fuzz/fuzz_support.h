// Helpers shared by the fuzz targets (header only; fuzz/CMakeLists.txt builds
// every *_fuzz.cc on its own).
//  - require(): abort on a violated property (libFuzzer and the standalone
//    runner both report an abort as a crash);
//  - json_of(): the input as JSON, or nothing (no exceptions);
//  - KeyDir: one private temporary directory per process holding key files
//    (hex text, mode 0600, written with base/keyfile), so that configuration
//    parsers that load keys get past the key loading; removed at exit.
//    `base` picks the parent directory (default: the system temp directory;
//    the pcap target uses /dev/shm when it exists, where fsync is free).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdlib.h>  // mkdtemp
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/keyfile.h"

namespace layersec::fuzz {

inline void require(bool c) {
  if (!c) std::abort();
}

inline std::optional<nlohmann::json> json_of(const std::uint8_t* data, std::size_t size) {
  nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(data),
                                           reinterpret_cast<const char*>(data) + size, nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

class KeyDir {
 public:
  // Key files by name and size (bytes); subdirectories are created.
  explicit KeyDir(const std::vector<std::pair<std::string, std::size_t>>& keys,
                  std::filesystem::path base = std::filesystem::temp_directory_path()) {
    std::string tmpl = (base / "layersec-fuzz-XXXXXX").string();
    require(::mkdtemp(tmpl.data()) != nullptr);
    dir_ = tmpl;
    std::uint8_t seed = 1;
    for (const auto& [name, size] : keys) {
      const std::filesystem::path p = dir_ / name;
      std::filesystem::create_directories(p.parent_path());
      std::filesystem::permissions(p.parent_path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::replace);
      std::vector<std::uint8_t> k(size);
      for (std::size_t i = 0; i < size; ++i) k[i] = static_cast<std::uint8_t>(seed + i);
      require(write_key_file_hex(p.string(), k, /*overwrite=*/true).ok());
      ++seed;
    }
  }
  KeyDir(const KeyDir&) = delete;
  KeyDir& operator=(const KeyDir&) = delete;
  ~KeyDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace layersec::fuzz
