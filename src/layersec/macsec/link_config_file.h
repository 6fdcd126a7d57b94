// Internal to the MACsec link configuration readers (link_tsn_config.cc,
// link_ptp_config.cc, link_mka_config.cc; I/O: reads files): configuration files into their
// parsers, every error a LinkConfigError naming its origin.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_config_json.h"

namespace layersec::macsec::config_json {

// Reads `path` (a regular file, without blocking, at most `max_bytes`) and
// returns parse(json, directory of the file); every error is a
// LinkConfigError beginning with the path.
template <typename Parse>
auto load_file(const std::filesystem::path& path, Parse parse, std::size_t max_bytes = 1 << 20) {
  const std::string text = read_config_text(path, max_bytes);
  auto dir = path.parent_path();
  if (dir.empty()) dir = ".";
  try {
    return parse(parse_text(text, path.string()), dir);
  } catch (const LinkConfigError& e) {
    throw LinkConfigError(path.string() + ": " + e.what());
  }
}

}  // namespace layersec::macsec::config_json
