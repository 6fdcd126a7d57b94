#include "support/vectors.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "layersec/base/hex.h"

namespace layersec::testing {

std::filesystem::path vectors_dir() {
  if (const char* e = std::getenv("LAYERSEC_VECTORS_DIR"); e && *e) return e;
  return LAYERSEC_DEFAULT_VECTORS_DIR;
}

std::filesystem::path source_dir() {
  if (const char* e = std::getenv("LAYERSEC_SOURCE_DIR"); e && *e) return e;
  return LAYERSEC_DEFAULT_SOURCE_DIR;
}

namespace {
nlohmann::json load_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) {
    ADD_FAILURE() << "cannot open vector file " << p;
    return nullptr;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "malformed JSON in " << p << ": " << e.what();
    return nullptr;
  }
}
}  // namespace

nlohmann::json load_vector_json(const std::string& rel) { return load_json(vectors_dir() / rel); }
nlohmann::json load_testdata_json(const std::string& rel) {
  return load_json(source_dir() / "testdata" / rel);
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot open " << p;
    return {};
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> hex(const std::string& s) {
  auto v = from_hex(s);
  if (!v) {
    ADD_FAILURE() << "bad hex: " << s;
    return {};
  }
  return *v;
}

}  // namespace layersec::testing
