// Internal to the MACsec link configuration readers (link_config.cc,
// link_tsn_config.cc, link_mka_config.cc): JSON pointer paths for messages,
// member checks, the typed getters they share and the text/file loading, so
// that every error names the field the same way ("/tx/sas/0/an: required")
// and throws LinkConfigError.
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "layersec/base/file.h"
#include "layersec/macsec/link_config.h"

namespace layersec::macsec::config_json {

[[noreturn]] inline void fail(const std::string& pointer, const std::string& what) {
  throw LinkConfigError((pointer.empty() ? std::string("/") : pointer) + ": " + what);
}

inline std::string child(const std::string& pointer, const std::string& key) { return pointer + "/" + key; }
inline std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

// Refuses a non-object and any member not in `allowed`.
inline void check_members(const nlohmann::json& obj, const std::string& pointer, const std::set<std::string>& allowed) {
  if (!obj.is_object()) fail(pointer, "expected an object");
  for (const auto& [key, value] : obj.items()) {
    if (allowed.count(key) == 0) fail(child(pointer, key), "unknown member");
  }
}

inline const nlohmann::json* find(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A boolean member; `def` when absent.
inline bool get_bool(const nlohmann::json& obj, const std::string& pointer, const char* key, bool def) {
  const nlohmann::json* v = find(obj, key);
  if (v == nullptr) return def;
  if (!v->is_boolean()) fail(child(pointer, key), "expected true or false");
  return v->get<bool>();
}

// `text` as JSON; a parse error is LinkConfigError "ORIGIN: not valid JSON (...)".
inline nlohmann::json parse_text(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw LinkConfigError(origin + ": not valid JSON (" + e.what() + ")");
  }
}

// Reads `path` (a regular file, without blocking, at most 1 MiB) and returns
// parse(json, directory of the file); every error is a LinkConfigError
// beginning with the path.
template <typename Parse>
auto load_file(const std::filesystem::path& path, Parse parse) {
  std::string text;
  try {
    text = read_regular_file(path.string(), 1 << 20);
  } catch (const FileError& e) {
    throw LinkConfigError(std::string(e.what()));
  }
  auto dir = path.parent_path();
  if (dir.empty()) dir = ".";
  try {
    return parse(parse_text(text, path.string()), dir);
  } catch (const LinkConfigError& e) {
    throw LinkConfigError(path.string() + ": " + e.what());
  }
}

}  // namespace layersec::macsec::config_json
