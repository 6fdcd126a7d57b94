// Internal to the MACsec link configuration readers (link_config.cc,
// link_tsn_config.cc, link_mka_config.cc): JSON pointer paths for messages,
// member checks and the typed getters they use, so that every error names
// the field the same way ("/tx/sas/0/an: required") and throws
// LinkConfigError. The text and file loading is link_config_file.h (I/O).
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

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

}  // namespace layersec::macsec::config_json
