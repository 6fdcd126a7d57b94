// "$.raw" (the AF_PACKET transport) and "$.tsn" (its TSN first hop) of the
// node configuration (node_config.h, node_config_parse.h).
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link_config.h"
#include "layersec/node/node_config_parse.h"

namespace layersec::node::config_parse {
namespace {

// Linux interface names: at most IFNAMSIZ - 1 characters.
constexpr std::size_t kMaxInterfaceName = 15;

// "/streams/0/set_pcp" -> "$.tsn.streams[0].set_pcp" ("/" -> "$.tsn").
std::string node_path(const std::string& base, const std::string& pointer) {
  std::string out = base;
  std::size_t pos = 1;
  while (pos <= pointer.size() && pointer.size() > 1) {
    const std::size_t next = pointer.find('/', pos);
    const std::string part = pointer.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + part + "]" : "." + part;
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

net::Ipv4Address to_net(const IpAddress& a) {
  return net::Ipv4Address::from_octets(a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]);
}

}  // namespace

std::optional<NodeRaw> parse_raw(const json* raw, const std::string& path, const IpAddress& unicast) {
  if (raw == nullptr) return std::nullopt;
  check_keys(*raw, path, {"interface", "mtu", "neighbours"});
  NodeRaw r;
  r.interface = get_string(*raw, "interface", path, "", true);
  if (r.interface.empty() || r.interface.size() > kMaxInterfaceName || r.interface.find('/') != std::string::npos)
    fail(at(path, "interface"), "not an interface name (1.." + std::to_string(kMaxInterfaceName) + " characters, no '/')");
  const auto mtu = get_uint(*raw, "mtu", path, 9000, 1500);
  if (mtu < 576) fail(at(path, "mtu"), "must be >= 576 (IPv4 minimum reassembly size)");
  r.mtu = static_cast<std::size_t>(mtu);
  const json& neighbours = get_array(*raw, "neighbours", path);
  for (std::size_t i = 0; i < neighbours.size(); ++i) {
    const std::string np = idx(at(path, "neighbours"), i);
    check_keys(neighbours[i], np, {"address", "mac"});
    const json* a = find(neighbours[i], "address");
    if (!a) fail(at(np, "address"), "required");
    const IpAddress ip = parse_ipv4(*a, at(np, "address"));
    const net::Ipv4Address addr = to_net(ip);
    if (ip.is_multicast() || addr.is_broadcast() || addr.value == 0)
      fail(at(np, "address"), "not a host address: '" + ip.to_string() + "'");
    if (ip == unicast) fail(at(np, "address"), "is this node's own address");
    const std::string mac_text = get_string(neighbours[i], "mac", np, "", true);
    const auto mac = net::MacAddress::parse(mac_text);
    if (!mac) fail(at(np, "mac"), "'" + mac_text + "' is not a MAC address (xx:xx:xx:xx:xx:xx)");
    if ((mac->bytes[0] & 0x01) != 0) fail(at(np, "mac"), "is a group (multicast) MAC, not a station");
    if (!r.neighbours.emplace(addr, *mac).second)
      fail(at(np, "address"), "address " + ip.to_string() + " is listed twice");
  }
  return r;
}

std::optional<NodeMacsec> parse_macsec(const json* m, const std::string& path, bool raw_transport,
                                       const std::string& base_dir) {
  if (m == nullptr) return std::nullopt;
  if (!raw_transport)
    fail(path, "needs the raw transport (a \"raw\" section): for kernel UDP sockets run `layersec macsec up`");
  check_keys(*m, path, {"config"});
  NodeMacsec out;
  const std::string file = get_string(*m, "config", path, "", true);
  if (file.empty()) fail(at(path, "config"), "empty path");
  out.path = resolve(base_dir, file);
  try {
    out.link = macsec::load_link_config(out.path);
  } catch (const macsec::LinkConfigError& e) {
    fail(at(path, "config"), file + ": " + e.what());
  }
  // The raw transport sends with the interface's own MAC (the SCI's default).
  if (out.link.mac) fail(at(path, "config"), file + ": /mac: not used by layersec node (frames carry the interface's MAC)");
  return out;
}

std::optional<macsec::LinkTsnConfig> parse_tsn(const json* tsn, const std::string& path, bool raw_transport,
                                               bool macsec, const std::string& base_dir) {
  if (tsn == nullptr) return std::nullopt;
  if (!raw_transport)
    fail(path, "needs the raw transport (a \"raw\" section): on kernel UDP sockets the node cannot tag or shape "
               "its frames");
  if (!tsn->is_object()) fail(path, "must be an object");
  // The layouts place the tag relative to a SecTAG: without a "macsec"
  // section the tag always goes in clear and these would mean nothing.
  if (!macsec)
    for (const char* k : {"layout", "clear_tags_in_icv"})
      if (find(*tsn, k)) fail(at(path, k), "only meaningful with a \"macsec\" section (a SecY)");
  macsec::LinkTsnConfig c;
  try {
    c = macsec::parse_link_tsn_config(*tsn, std::filesystem::path(base_dir.empty() ? std::string(".") : base_dir));
  } catch (const macsec::LinkConfigError& e) {
    const std::string m = e.what();
    const std::size_t colon = m.find(": ");
    if (colon == std::string::npos || m.empty() || m[0] != '/') fail(path, m);
    fail(node_path(path, m.substr(0, colon)), m.substr(colon + 2));
  }
  const std::string where = find(*tsn, "taprio_file") ? at(path, "taprio_file") : at(path, "taprio");
  if (c.schedule.clockid != "CLOCK_TAI")
    fail(where, "clockid " + c.schedule.clockid + ": the node's shaper runs on CLOCK_TAI");
  return c;
}

}  // namespace layersec::node::config_parse
