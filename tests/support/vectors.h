// Test support: locating and loading the published vector files.
// Vectors are read from ../shared/vectors (LAYERSEC_VECTORS_DIR overrides).
#pragma once

#include <filesystem>
#include <string>
#include <vector>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace layersec::testing {

// Directory holding the shared vectors.
std::filesystem::path vectors_dir();
// The repository root (for testdata/ files kept in the repo).
std::filesystem::path source_dir();
// Parses a JSON file under vectors_dir(); fails the current test (and returns
// null) if the file is missing or malformed.
nlohmann::json load_vector_json(const std::string& relative_path);
// Parses a JSON file under <repo>/testdata.
nlohmann::json load_testdata_json(const std::string& relative_path);
// Reads a whole binary file.
std::vector<std::uint8_t> read_file(const std::filesystem::path& p);
// Hex string to bytes (fails the test on bad hex).
std::vector<std::uint8_t> hex(const std::string& s);

}  // namespace layersec::testing
