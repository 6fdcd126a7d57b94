// Internal to the MACsec link configuration readers (link_config.cc,
// link_tsn_config.cc, link_ptp_config.cc, link_mka_config.cc): JSON pointer
// paths for messages, member checks, the JSON text parser and the typed
// getters they use, so that every error names the field the same way
// ("/tx/sas/0/an: required") and throws LinkConfigError. Reading files is
// link_config_file.h (I/O).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

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

// JSON text; a syntax error, or a number too large for a double
// (nlohmann's out_of_range 406, not a parse_error), is LinkConfigError
// "<origin>: not valid JSON (...)".
inline nlohmann::json parse_text(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw LinkConfigError(origin + ": not valid JSON (" + e.what() + ")");
  }
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

// An integer member in [lo, hi]; nullopt when absent (refused when `required`).
inline std::optional<std::int64_t> get_int(const nlohmann::json& obj, const std::string& pointer, const char* key,
                                           std::int64_t lo, std::int64_t hi, bool required = false) {
  const nlohmann::json* v = find(obj, key);
  if (v == nullptr) {
    if (required) fail(child(pointer, key), "required");
    return std::nullopt;
  }
  if (!v->is_number_integer()) fail(child(pointer, key), "expected an integer");
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
    fail(child(pointer, key), "must be at most " + std::to_string(hi));
  }
  const auto x = v->get<std::int64_t>();
  if (x < lo || x > hi) fail(child(pointer, key), "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

// A non-negative integer member in [lo, hi] (the whole uint64 range, for
// XPN PNs); nullopt when absent (refused when `required`).
inline std::optional<std::uint64_t> get_uint(const nlohmann::json& obj, const std::string& pointer, const char* key,
                                             std::uint64_t lo, std::uint64_t hi, bool required = false) {
  const nlohmann::json* v = find(obj, key);
  if (v == nullptr) {
    if (required) fail(child(pointer, key), "required");
    return std::nullopt;
  }
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
    fail(child(pointer, key), "expected a non-negative integer");
  }
  const auto x = v->get<std::uint64_t>();
  if (x < lo || x > hi) fail(child(pointer, key), "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

// A string member; nullopt when absent (refused when `required`).
inline std::optional<std::string> get_string(const nlohmann::json& obj, const std::string& pointer, const char* key,
                                             bool required = false) {
  const nlohmann::json* v = find(obj, key);
  if (v == nullptr) {
    if (required) fail(child(pointer, key), "required");
    return std::nullopt;
  }
  if (!v->is_string()) fail(child(pointer, key), "expected a string");
  return v->get<std::string>();
}

}  // namespace layersec::macsec::config_json
