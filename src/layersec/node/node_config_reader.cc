// Value readers of the node configuration (node_config_parse.h).
#include "layersec/node/node_config_parse.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/base/hex.h"

namespace layersec::node {
namespace config_parse {

using someip::IpFamily;
using someip::parse_ip_address;

std::string at(const std::string& path, const std::string& key) { return path + "." + key; }
std::string idx(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string hex16(std::uint32_t v) {
  static const char* d = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) s += d[(v >> shift) & 0xF];
  return s;
}

void fail(const std::string& path, const std::string& problem) {
  throw NodeConfigError(path, problem);
}

void check_keys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed,
                std::initializer_list<const char*> ignored, std::vector<std::string>* ignored_out) {
  if (!obj.is_object()) fail(path, "must be an object");
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }))
      continue;
    if (std::any_of(ignored.begin(), ignored.end(), [&](const char* a) { return k == a; })) {
      if (ignored_out) ignored_out->push_back(at(path, k));
      continue;
    }
    fail(at(path, k), "unknown key");
  }
}

const json* find(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::uint64_t get_uint(const json& obj, const char* key, const std::string& path,
                       std::uint64_t max, std::uint64_t def) {
  const json* v = find(obj, key);
  return v ? parse_config_uint(*v, at(path, key), max) : def;
}

std::uint16_t get_id(const json& obj, const char* key, const std::string& path, std::uint32_t lo,
                     std::uint32_t hi, const char* what, std::optional<std::uint16_t> def) {
  const json* v = find(obj, key);
  if (!v) {
    if (def) return *def;
    fail(at(path, key), "required");
  }
  const auto x = parse_config_uint(*v, at(path, key), 0xFFFF);
  if (x < lo || x > hi)
    fail(at(path, key), std::string(what) + " " + hex16(static_cast<std::uint32_t>(x)) +
                            " out of range " + hex16(lo) + ".." + hex16(hi));
  return static_cast<std::uint16_t>(x);
}

std::uint16_t parse_id_value(const json& v, const std::string& path, std::uint32_t lo,
                             std::uint32_t hi, const char* what) {
  const auto x = parse_config_uint(v, path, 0xFFFF);
  if (x < lo || x > hi)
    fail(path, std::string(what) + " " + hex16(static_cast<std::uint32_t>(x)) + " out of range " +
                   hex16(lo) + ".." + hex16(hi));
  return static_cast<std::uint16_t>(x);
}

bool get_bool(const json& obj, const char* key, const std::string& path, bool def) {
  const json* v = find(obj, key);
  return v ? parse_config_bool(*v, at(path, key)) : def;
}

std::string get_string(const json& obj, const char* key, const std::string& path,
                       const std::string& def, bool required) {
  const json* v = find(obj, key);
  if (!v) {
    if (required) fail(at(path, key), "required");
    return def;
  }
  if (!v->is_string()) fail(at(path, key), "must be a string");
  return v->get<std::string>();
}

const json& get_array(const json& obj, const char* key, const std::string& path) {
  static const json empty = json::array();
  const json* v = find(obj, key);
  if (!v) return empty;
  if (!v->is_array()) fail(at(path, key), "must be an array");
  return *v;
}

Duration get_ms(const json& obj, const char* key, const std::string& path, std::uint64_t min_ms,
                std::uint64_t max_ms, Duration def) {
  const json* v = find(obj, key);
  if (!v) return def;
  const auto ms = parse_config_uint(*v, at(path, key), max_ms);
  if (ms < min_ms) fail(at(path, key), "must be >= " + std::to_string(min_ms) + " ms");
  return Duration::milliseconds(static_cast<std::int64_t>(ms));
}

std::uint16_t get_port(const json& obj, const char* key, const std::string& path,
                       std::optional<std::uint16_t> def) {
  const json* v = find(obj, key);
  if (!v) {
    if (def) return *def;
    fail(at(path, key), "required");
  }
  const auto p = parse_config_uint(*v, at(path, key), 65535);
  if (p == 0) fail(at(path, key), "port must be 1..65535");
  return static_cast<std::uint16_t>(p);
}

IpAddress parse_ipv4(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "must be a string (dotted IPv4 address)");
  IpAddress a;
  if (!parse_ip_address(v.get<std::string>(), a) || a.family != IpFamily::kV4)
    fail(path, "not an IPv4 address: '" + v.get<std::string>() + "'");
  return a;
}

IpAddress parse_ipv4_multicast(const json& v, const std::string& path) {
  const IpAddress a = parse_ipv4(v, path);
  if (!a.is_multicast()) fail(path, "not an IPv4 multicast address");
  return a;
}

std::vector<IpAddress> get_host_list(const json& obj, const char* key, const std::string& path) {
  std::vector<IpAddress> out;
  const json* v = find(obj, key);
  if (!v) return out;
  const std::string p = at(path, key);
  if (!v->is_array()) fail(p, "must be an array of IPv4 addresses");
  if (v->empty()) fail(p, "must not be empty (omit the key to allow any host)");
  for (std::size_t i = 0; i < v->size(); ++i) {
    const std::string ip = idx(p, i);
    const IpAddress a = parse_ipv4((*v)[i], ip);
    const bool unspecified = a.bytes[0] == 0 && a.bytes[1] == 0 && a.bytes[2] == 0 && a.bytes[3] == 0;
    const bool broadcast = a.bytes[0] == 255 && a.bytes[1] == 255 && a.bytes[2] == 255 && a.bytes[3] == 255;
    if (a.is_multicast() || unspecified || broadcast)
      fail(ip, "not a host address: '" + a.to_string() + "' (a unicast IPv4 address is needed)");
    if (std::find(out.begin(), out.end(), a) != out.end())
      fail(ip, "address " + a.to_string() + " is listed twice");
    out.push_back(a);
  }
  return out;
}

std::vector<std::uint8_t> parse_hex(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "must be a hex string");
  auto b = from_hex(v.get<std::string>());
  if (!b) fail(path, "not valid hex (an even number of hex digits)");
  return std::move(*b);
}

std::string resolve(const std::string& base_dir, const std::string& p) {
  if (p.empty() || p.front() == '/' || base_dir.empty()) return p;
  return base_dir.back() == '/' ? base_dir + p : base_dir + "/" + p;
}

std::vector<std::size_t> ServiceIndex::offered_matches(std::uint16_t service, std::uint16_t instance) const {
  std::vector<std::size_t> r;
  for (std::size_t i = 0; i < rc.services.size(); ++i)
    if (rc.services[i].service_id == service && (instance == 0xFFFF || rc.services[i].instance_id == instance))
      r.push_back(i);
  return r;
}

const ClientConfig* ServiceIndex::client(std::uint16_t service) const {
  for (const auto& c : rc.clients)
    if (c.service_id == service) return &c;
  return nullptr;
}

}  // namespace config_parse

using config_parse::fail;
using nlohmann::json;

std::uint64_t parse_config_uint(const json& v, const std::string& path, std::uint64_t max) {
  std::uint64_t x = 0;
  if (v.is_number_unsigned()) {
    x = v.get<std::uint64_t>();
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0) fail(path, "must not be negative");
    x = static_cast<std::uint64_t>(i);
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const std::size_t start = hex ? 2 : 0;
    if (s.size() == start)
      fail(path, "not a number: '" + s + "' (decimal digits or 0x and hex digits)");
    for (std::size_t i = start; i < s.size(); ++i) {
      const char c = s[i];
      unsigned d = 0;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (hex && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
      else if (hex && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
      else fail(path, "not a number: '" + s + "' (decimal digits or 0x and hex digits)");
      const unsigned base = hex ? 16 : 10;
      if (x > (UINT64_MAX - d) / base) fail(path, "must be <= " + std::to_string(max));
      x = x * base + d;
    }
  } else {
    fail(path, "must be a number or a numeric string (\"0x1234\" or \"4660\")");
  }
  if (x > max) fail(path, "must be <= " + std::to_string(max));
  return x;
}

bool parse_config_bool(const json& v, const std::string& path) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    if (v.get<std::string>() == "true") return true;
    if (v.get<std::string>() == "false") return false;
  }
  fail(path, "must be true or false");
}

}  // namespace layersec::node
