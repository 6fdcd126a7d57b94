#include "layersec/macsec/link_tsn_config.h"

#include <set>
#include <sstream>

#include "layersec/base/file.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_config_file.h"
#include "layersec/macsec/link_config_json.h"
#include "layersec/net/frame.h"

namespace layersec::macsec {
namespace {

using nlohmann::json;

using config_json::check_members;
using config_json::child;
using config_json::fail;
using config_json::find;
using config_json::get_bool;
using config_json::get_int;
using config_json::get_string;

std::uint32_t ipv4_of(const json& obj, const std::string& pointer, const char* key) {
  const auto s = get_string(obj, pointer, key);
  auto ip = net::Ipv4Address::parse(*s);
  if (!ip) fail(child(pointer, key), "'" + *s + "' is not a dotted-quad IPv4 address");
  return ip->value;
}

tsn::StreamRule parse_rule(const json& r, const std::string& p) {
  check_members(r, p,
                {"match", "handle", "dst_mac", "vid", "untagged_only", "src_ip", "dst_ip", "dscp", "protocol",
                 "src_port", "dst_port", "set_vid", "set_pcp"});
  tsn::StreamRule rule;
  const auto kind = get_string(r, p, "match");
  if (!kind) fail(child(p, "match"), "required (\"ip\" or \"null\")");
  if (*kind == "ip") {
    rule.kind = tsn::StreamMatch::kIp;
  } else if (*kind == "null") {
    rule.kind = tsn::StreamMatch::kNull;
  } else {
    fail(child(p, "match"), "'" + *kind + "' is neither \"ip\" nor \"null\"");
  }
  rule.handle = static_cast<std::uint32_t>(get_int(r, p, "handle", 0, 0xFFFFFFFFLL).value_or(0));
  if (auto mac = get_string(r, p, "dst_mac")) {
    auto m = net::MacAddress::parse(*mac);
    if (!m) fail(child(p, "dst_mac"), "'" + *mac + "' is not a MAC address (xx:xx:xx:xx:xx:xx)");
    rule.dst_mac = m->bytes;
  }
  if (auto v = get_int(r, p, "vid", 0, 4094)) rule.vid = static_cast<std::uint16_t>(*v);
  rule.untagged_only = get_bool(r, p, "untagged_only", false);
  if (rule.vid && rule.untagged_only) fail(child(p, "untagged_only"), "contradicts \"vid\"");
  if (rule.kind == tsn::StreamMatch::kNull) {
    if (!rule.dst_mac) fail(child(p, "dst_mac"), "required for null stream identification");
    if (!rule.vid && !rule.untagged_only) fail(child(p, "vid"), "null identification needs \"vid\" or \"untagged_only\"");
    for (const char* k : {"src_ip", "dst_ip", "dscp", "protocol", "src_port", "dst_port"}) {
      if (find(r, k)) fail(child(p, k), "null stream identification matches only dst_mac and the VLAN");
    }
  }
  if (find(r, "src_ip")) rule.src_ip = ipv4_of(r, p, "src_ip");
  if (find(r, "dst_ip")) rule.dst_ip = ipv4_of(r, p, "dst_ip");
  if (auto v = get_int(r, p, "dscp", 0, 63)) rule.dscp = static_cast<std::uint8_t>(*v);
  if (const json* proto = find(r, "protocol")) {
    if (proto->is_string()) {
      const auto s = proto->get<std::string>();
      if (s == "udp") {
        rule.protocol = 17;
      } else if (s == "tcp") {
        rule.protocol = 6;
      } else {
        fail(child(p, "protocol"), "'" + s + "' is not \"udp\", \"tcp\" or a number 0..255");
      }
    } else {
      rule.protocol = static_cast<std::uint8_t>(*get_int(r, p, "protocol", 0, 255));
    }
  }
  if (auto v = get_int(r, p, "src_port", 1, 65535)) rule.src_port = static_cast<std::uint16_t>(*v);
  if (auto v = get_int(r, p, "dst_port", 1, 65535)) rule.dst_port = static_cast<std::uint16_t>(*v);
  if ((rule.src_port || rule.dst_port) && rule.protocol && *rule.protocol != 17 && *rule.protocol != 6) {
    fail(child(p, "protocol"), "ports are matched only for udp (17) and tcp (6)");
  }
  rule.set_vid = static_cast<std::uint16_t>(*get_int(r, p, "set_vid", 0, 4094, true));
  rule.set_pcp = static_cast<std::uint8_t>(*get_int(r, p, "set_pcp", 0, 7, true));
  return rule;
}

}  // namespace

LinkTsnConfig parse_link_tsn_config(const json& j, const std::filesystem::path& base_dir) {
  check_members(j, "",
                {"port_mbit_s", "taprio", "taprio_file", "layout", "clear_tags_in_icv", "default_pcp",
                 "queue_limit_frames", "late_tolerance_us", "streams"});
  LinkTsnConfig c;
  const auto mbit = get_int(j, "", "port_mbit_s", 1, static_cast<std::int64_t>(kMaxTsnPortMbit), true);
  c.port_bps = static_cast<std::uint64_t>(*mbit) * 1'000'000;

  const auto inline_text = get_string(j, "", "taprio");
  const auto file = get_string(j, "", "taprio_file");
  std::string where = "/taprio";
  if (inline_text && file) fail("/taprio_file", "give either \"taprio\" or \"taprio_file\", not both");
  if (inline_text) {
    c.schedule_text = *inline_text;
  } else if (file) {
    where = "/taprio_file";
    if (base_dir.empty()) fail(where, "schedule files are not read here");
    if (file->empty()) fail(where, "empty path");
    std::filesystem::path path(*file);
    if (path.is_relative()) path = base_dir / path;
    try {
      c.schedule_text = read_regular_file(path.string(), 64 * 1024);
    } catch (const FileError& e) {
      fail(where, e.what());
    }
  } else {
    fail("/taprio", "required (or \"taprio_file\")");
  }
  tsn::GclLimits limits;
  limits.link_bps = c.port_bps;
  auto parsed = tsn::parse_taprio(c.schedule_text, limits);
  if (!parsed.ok()) fail(where, parsed.message);
  c.schedule = std::move(*parsed.schedule);

  if (auto layout = get_string(j, "", "layout")) {
    if (*layout == "clear-tag") {
      c.layout = VlanMode::kClearTag;
    } else if (*layout == "standard") {
      c.layout = VlanMode::kStandard;
    } else {
      fail("/layout", "'" + *layout + "' is neither \"clear-tag\" nor \"standard\"");
    }
  }
  c.clear_tags_in_icv = get_bool(j, "", "clear_tags_in_icv", false);
  if (c.clear_tags_in_icv && c.layout != VlanMode::kClearTag) {
    fail("/clear_tags_in_icv", "only meaningful with \"layout\": \"clear-tag\"");
  }
  c.default_pcp = static_cast<std::uint8_t>(get_int(j, "", "default_pcp", 0, 7).value_or(0));
  c.queue_limit_frames = static_cast<std::size_t>(get_int(j, "", "queue_limit_frames", 1, 65536).value_or(256));
  c.late_tolerance_ns = get_int(j, "", "late_tolerance_us", 0, 1'000'000).value_or(50) * 1000;

  if (const json* streams = find(j, "streams")) {
    if (!streams->is_array()) fail("/streams", "expected an array");
    if (streams->size() > 1024) fail("/streams", "at most 1024 rules");
    for (std::size_t i = 0; i < streams->size(); ++i) {
      const std::string p = "/streams/" + std::to_string(i);
      const tsn::StreamRule rule = parse_rule((*streams)[i], p);
      std::string why;
      if (!c.streams.add(rule, &why)) fail(p, why);
      c.tags.insert({rule.set_vid, rule.set_pcp});
    }
  }
  return c;
}

LinkTsnConfig parse_link_tsn_config_text(std::string_view text, const std::filesystem::path& base_dir,
                                         const std::string& origin) {
  return parse_link_tsn_config(config_json::parse_text(text, origin), base_dir);
}

LinkTsnConfig load_link_tsn_config(const std::filesystem::path& path) {
  return config_json::load_file(path, parse_link_tsn_config);
}

std::string describe(const LinkTsnConfig& c) {
  std::ostringstream o;
  o << "port " << c.port_bps / 1'000'000 << " Mbit/s, layout "
    << (c.layout == VlanMode::kClearTag ? (c.clear_tags_in_icv ? "clear-tag (tag in ICV)" : "clear-tag (tag not in ICV)")
                                        : "standard (tag encrypted)")
    << ", " << c.schedule.num_tc << " classes, " << c.schedule.gcl.entries.size() << " gate entries, cycle "
    << tsn::cycle_time_of(c.schedule.gcl) << " ns, " << c.streams.size() << " stream rules";
  return o.str();
}

}  // namespace layersec::macsec
