// Internal to the node configuration loader (node_config.h): the value
// readers every section parser uses and the section parsers that live in
// their own files ("secoc" in node_config_secoc.cc, "test" in
// node_config_test_section.cc). Every reader throws NodeConfigError naming
// the JSON path of the offending value; none reads anything but its
// arguments (key files are read by the "secoc" parser, through base/keyfile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "layersec/base/time.h"
#include "layersec/node/node_config.h"
#include "layersec/someip/address.h"
#include "layersec/someip/runtime.h"

namespace layersec::node::config_parse {

using nlohmann::json;
using someip::ClientConfig;
using someip::IpAddress;
using someip::RuntimeConfig;

// "path.key" and "path[i]".
[[nodiscard]] std::string at(const std::string& path, const std::string& key);
[[nodiscard]] std::string idx(const std::string& path, std::size_t i);
// "0x1234" (four hex digits of the low 16 bits).
[[nodiscard]] std::string hex16(std::uint32_t v);
[[noreturn]] void fail(const std::string& path, const std::string& problem);

// Rejects keys outside `allowed`; keys in `ignored` are recorded (vsomeip
// settings that have no meaning here) and skipped.
void check_keys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed,
                std::initializer_list<const char*> ignored = {},
                std::vector<std::string>* ignored_out = nullptr);
// The member `key` of `obj`, or nullptr.
[[nodiscard]] const json* find(const json& obj, const char* key);
// obj[key] as an unsigned number <= max (vsomeip forms), `def` when absent.
[[nodiscard]] std::uint64_t get_uint(const json& obj, const char* key, const std::string& path, std::uint64_t max,
                                     std::uint64_t def);
// An id in [lo, hi], named by what it is in the message; required unless
// `def` is given.
[[nodiscard]] std::uint16_t get_id(const json& obj, const char* key, const std::string& path, std::uint32_t lo,
                                   std::uint32_t hi, const char* what, std::optional<std::uint16_t> def = {});
[[nodiscard]] std::uint16_t parse_id_value(const json& v, const std::string& path, std::uint32_t lo,
                                           std::uint32_t hi, const char* what);
[[nodiscard]] bool get_bool(const json& obj, const char* key, const std::string& path, bool def);
[[nodiscard]] std::string get_string(const json& obj, const char* key, const std::string& path,
                                     const std::string& def, bool required = false);
// The array obj[key] (an empty one when absent).
[[nodiscard]] const json& get_array(const json& obj, const char* key, const std::string& path);
// Milliseconds in [min_ms, max_ms], `def` when absent.
[[nodiscard]] Duration get_ms(const json& obj, const char* key, const std::string& path, std::uint64_t min_ms,
                              std::uint64_t max_ms, Duration def);
// A UDP port 1..65535; required unless `def` is given.
[[nodiscard]] std::uint16_t get_port(const json& obj, const char* key, const std::string& path,
                                     std::optional<std::uint16_t> def);
[[nodiscard]] IpAddress parse_ipv4(const json& v, const std::string& path);
[[nodiscard]] IpAddress parse_ipv4_multicast(const json& v, const std::string& path);
// An allowlist of host addresses (SD "subscribers" / "servers"): a non-empty
// array of distinct unicast IPv4 addresses. Absent = any host; an empty array
// is refused, since it reads as "nobody" but would mean "anybody".
[[nodiscard]] std::vector<IpAddress> get_host_list(const json& obj, const char* key, const std::string& path);
[[nodiscard]] std::vector<std::uint8_t> parse_hex(const json& v, const std::string& path);
// `p` relative to `base_dir` (absolute paths and an empty base stay as they are).
[[nodiscard]] std::string resolve(const std::string& base_dir, const std::string& p);

// Records which methods/events exist per offered service (for later checks).
struct OfferedIndex {
  std::set<std::uint16_t> methods;       // in "methods"
  std::set<std::uint16_t> accessors;     // getters / setters
  std::map<std::uint16_t, bool> events;  // id -> is_field
};

// The services a section may refer to.
struct ServiceIndex {
  const RuntimeConfig& rc;
  const std::vector<OfferedIndex>& offered;  // parallel to rc.services

  // Offered services with this id (and instance unless 0xFFFF).
  [[nodiscard]] std::vector<std::size_t> offered_matches(std::uint16_t service, std::uint16_t instance) const;
  [[nodiscard]] const ClientConfig* client(std::uint16_t service) const;
};

// "$.secoc" (node_config_secoc.cc): engine, SD protection, key files (read
// here), state file, bindings, unprotected ids, sync binding.
[[nodiscard]] NodeSecoc parse_secoc(const json& s, const std::string& path, const std::string& base_dir,
                                    const ServiceIndex& services);
// "$.raw" and "$.tsn" (node_config_raw.cc). `tsn` may be null; a "tsn"
// section without "raw" is refused there.
[[nodiscard]] std::optional<NodeRaw> parse_raw(const json* raw, const std::string& path, const IpAddress& unicast);
[[nodiscard]] std::optional<macsec::LinkTsnConfig> parse_tsn(const json* tsn, const std::string& path,
                                                             bool raw_transport, bool macsec, const std::string& base_dir);
// "$.macsec" (node_config_raw.cc): refused without "raw".
[[nodiscard]] std::optional<NodeMacsec> parse_macsec(const json* m, const std::string& path, bool raw_transport,
                                                     const std::string& base_dir);
// "$.test" (node_config_test_section.cc).
[[nodiscard]] NodeTest parse_test(const json& t, const std::string& path, const RuntimeConfig& rc,
                                  const std::vector<OfferedIndex>& offered);

}  // namespace layersec::node::config_parse
