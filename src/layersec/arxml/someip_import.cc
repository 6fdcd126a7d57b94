#include "layersec/arxml/someip_import.h"

#include <string_view>

namespace layersec::arxml {
namespace {

using nlohmann::json;

std::string hex16(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x0000";
  for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(5 - i)] = digits[(v >> (4 * i)) & 0xF];
  return s;
}

void refuse_tcp(const Document& d, pugi::xml_node n) {
  const auto tp = only_child(d, n, "TRANSPORT-PROTOCOL");
  if (!tp) return;
  const std::string t = text_of(tp);
  if (t == "UDP" || t == "udp") return;
  throw ArxmlError(d.path_of(tp), "transport " + t + " is not supported (layersec carries SOME/IP over UDP only)");
}

// Wire event id: AUTOSAR deployments give the id without the 0x8000 flag
// (EVENT-ID 1 is 0x8001 on the wire); an id that has it is taken as is.
std::uint16_t event_id(const Document& d, pugi::xml_node n) {
  const auto v = child_uint(d, n, "EVENT-ID", 0, 0xFFFE);
  if (v == 0x7FFF) throw ArxmlError(d.path_of(n) + "/EVENT-ID", "0x7fff would be event 0xffff, which is reserved");
  return static_cast<std::uint16_t>(v | 0x8000);
}

struct Interface {
  std::uint16_t service = 0;
  std::uint64_t major = 1;
  std::uint64_t minor = 0;
  json methods = json::array();
  json events = json::array();  // fields only (plain events appear in eventgroups)
  std::map<const void*, std::uint16_t> event_ids;     // event/notifier deployment -> wire id
  std::map<const void*, std::uint16_t> group_ids;     // SOMEIP-EVENT-GROUP -> id
  std::map<std::uint16_t, json> groups;               // id -> {eventgroup, events}
  std::size_t entries = 0;  // methods, events, eventgroups and their event lists: a provided instance's copy
};

Interface read_interface(const Document& d, pugi::xml_node dep, std::vector<ImportNote>& notes) {
  Interface i;
  const std::string path = d.path_of(dep);
  i.service = static_cast<std::uint16_t>(child_uint(d, dep, "SERVICE-INTERFACE-ID", 1, 0xFFFE));
  if (const auto ver = only_child(d, dep, "SERVICE-INTERFACE-VERSION")) {
    i.major = child_uint_opt(d, ver, "MAJOR-VERSION", 0, 0xFE).value_or(1);
    i.minor = child_uint_opt(d, ver, "MINOR-VERSION", 0, 0xFFFFFFFE).value_or(0);
  }
  std::set<std::uint16_t> method_ids;
  const auto add_method = [&](pugi::xml_node m, bool plain) -> std::uint16_t {
    refuse_tcp(d, m);
    const auto id = static_cast<std::uint16_t>(child_uint(d, m, "METHOD-ID", 0, 0x7FFF));
    if (!method_ids.insert(id).second) throw ArxmlError(d.path_of(m) + "/METHOD-ID", "method id " + hex16(id) + " used twice");
    if (!plain) return id;
    bool ff = false;
    if (const auto ref = only_child(d, m, "METHOD-REF")) {
      if (const auto op = d.find(text_of(ref))) {
        if (const auto f = only_child(d, op, "FIRE-AND-FORGET")) ff = parse_bool(text_of(f), d.path_of(f));
      } else {
        notes.push_back({d.path_of(ref), "operation not in this file: taken as request/response"});
      }
    }
    if (ff) i.methods.push_back({{"method", hex16(id)}, {"fire_and_forget", true}});
    else i.methods.push_back(hex16(id));
    return id;
  };
  for (const auto& m : only_child(d, dep, "METHOD-DEPLOYMENTS").children("SOMEIP-METHOD-DEPLOYMENT"))
    add_method(m, true);
  std::set<std::uint16_t> events;
  const auto add_event = [&](pugi::xml_node e) {
    refuse_tcp(d, e);
    const auto id = event_id(d, e);
    if (!events.insert(id).second) throw ArxmlError(d.path_of(e) + "/EVENT-ID", "event id " + hex16(id) + " used twice");
    i.event_ids[e.internal_object()] = id;
    return id;
  };
  for (const auto& e : only_child(d, dep, "EVENT-DEPLOYMENTS").children("SOMEIP-EVENT-DEPLOYMENT")) add_event(e);
  for (const auto& f : only_child(d, dep, "FIELD-DEPLOYMENTS").children("SOMEIP-FIELD-DEPLOYMENT")) {
    const auto notifier = only_child(d, f, "NOTIFIER");
    if (!notifier)
      throw ArxmlError(d.path_of(f), "a field without a NOTIFIER is not supported (layersec fields are events "
                                     "with a stored value)");
    json ev = {{"event", hex16(add_event(notifier))}, {"is_field", true}};
    if (const auto g = only_child(d, f, "GET")) ev["getter"] = hex16(add_method(g, false));
    if (const auto s = only_child(d, f, "SET")) ev["setter"] = hex16(add_method(s, false));
    i.events.push_back(ev);
  }
  std::set<std::uint16_t> grouped;
  for (const auto& g : only_child(d, dep, "EVENT-GROUPS").children("SOMEIP-EVENT-GROUP")) {
    const auto id = static_cast<std::uint16_t>(child_uint(d, g, "EVENT-GROUP-ID", 0, 0xFFFE));
    if (i.groups.count(id)) throw ArxmlError(d.path_of(g) + "/EVENT-GROUP-ID", "eventgroup " + hex16(id) + " defined twice");
    json evs = json::array();
    for (const auto& r : only_child(d, g, "EVENT-REFS").children("EVENT-REF")) {
      const auto target = d.deref(r);
      const auto it = i.event_ids.find(target.internal_object());
      if (it == i.event_ids.end())
        throw ArxmlError(d.path_of(r), "does not name an event or field notifier of " + path);
      evs.push_back(hex16(it->second));
      grouped.insert(it->second);
    }
    i.group_ids[g.internal_object()] = id;
    i.entries += 1 + evs.size();
    i.groups[id] = {{"eventgroup", hex16(id)}, {"events", evs}};
  }
  for (const auto& [node, id] : i.event_ids)
    if (!grouped.count(id))
      throw ArxmlError(path, "event " + hex16(id) + " is in no SOMEIP-EVENT-GROUP (every event needs one)");
  i.entries += i.methods.size() + i.events.size();
  return i;
}

std::uint16_t group_of(const Document& d, const Interface& i, pugi::xml_node holder) {
  const auto ref = only_child(d, holder, "EVENT-GROUP-REF");
  if (!ref) throw ArxmlError(d.path_of(holder) + "/EVENT-GROUP-REF", "required");
  const auto it = i.group_ids.find(d.deref(ref).internal_object());
  if (it == i.group_ids.end()) throw ArxmlError(d.path_of(ref), "not an eventgroup of the instance's deployment");
  return it->second;
}

// UDP port and machine address of each mapped service instance.
struct Mapping {
  std::optional<std::uint16_t> udp_port;
};

std::string endpoint_address(const Document& d, pugi::xml_node connector) {
  // The connector names its endpoint with NETWORK-ENDPOINT-REF(S) or
  // UNICAST-NETWORK-ENDPOINT-REF depending on the release.
  std::vector<pugi::xml_node> todo{connector};
  while (!todo.empty()) {
    const auto n = todo.back();
    todo.pop_back();
    const std::string_view tag = n.name();
    if (tag.size() >= 20 && tag.substr(tag.size() - 20) == "NETWORK-ENDPOINT-REF") {
      const auto ep = d.deref(n);
      // The first IPV-4-ADDRESS inside the endpoint (its subtree only).
      std::vector<pugi::xml_node> sub{ep};
      while (!sub.empty()) {
        const auto e = sub.back();
        sub.pop_back();
        if (std::string_view(e.name()) == "IPV-4-ADDRESS") return parse_ipv4(text_of(e), d.path_of(e));
        std::vector<pugi::xml_node> kids;
        for (const auto& c : e.children())
          if (c.type() == pugi::node_element) kids.push_back(c);
        sub.insert(sub.end(), kids.rbegin(), kids.rend());
      }
      throw ArxmlError(d.path_of(ep), "network endpoint without an IPV-4-ADDRESS");
    }
    for (const auto& c : n.children())
      if (c.type() == pugi::node_element) todo.push_back(c);
  }
  throw ArxmlError(d.path_of(connector), "no NETWORK-ENDPOINT-REF: the node's unicast address is unknown");
}

}  // namespace

SomeipImport import_someip(const Document& d) {
  SomeipImport out;
  std::map<const void*, Mapping> mappings;
  std::map<const void*, std::string> connector_address;
  for (const auto& m : d.all("SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING")) {
    if (const auto tcp = only_child(d, m, "TCP-PORT"))
      throw ArxmlError(d.path_of(tcp), "TCP is not supported (layersec carries SOME/IP over UDP only)");
    Mapping mp;
    if (const auto p = child_uint_opt(d, m, "UDP-PORT", 1, 65535)) mp.udp_port = static_cast<std::uint16_t>(*p);
    if (const auto cref = only_child(d, m, "COMMUNICATION-CONNECTOR-REF")) {
      const auto connector = d.deref(cref);
      auto known = connector_address.find(connector.internal_object());
      if (known == connector_address.end())
        known = connector_address.emplace(connector.internal_object(), endpoint_address(d, connector)).first;
      const std::string& addr = known->second;
      if (out.unicast && *out.unicast != addr)
        throw ArxmlError(d.path_of(cref), "maps to " + addr + " while another mapping uses " + *out.unicast +
                                              ": one file describes one node");
      out.unicast = addr;
      for (auto p = connector.parent(); p; p = p.parent()) {
        const std::string_view tag = p.name();
        if (tag == "MACHINE" || tag == "MACHINE-DESIGN") {
          out.machine = Document::short_name(p);
          break;
        }
      }
    }
    for (const auto& r : only_child(d, m, "SERVICE-INSTANCE-REFS").children("SERVICE-INSTANCE-REF"))
      mappings[d.deref(r).internal_object()] = mp;
  }
  std::map<const void*, Interface> interfaces;
  const auto interface_of = [&](pugi::xml_node inst) -> Interface& {
    const auto ref = only_child(d, inst, "SERVICE-INTERFACE-DEPLOYMENT-REF");
    if (!ref) throw ArxmlError(d.path_of(inst) + "/SERVICE-INTERFACE-DEPLOYMENT-REF", "required");
    const auto dep = d.deref(ref);
    if (std::string_view(dep.name()) != "SOMEIP-SERVICE-INTERFACE-DEPLOYMENT")
      throw ArxmlError(d.path_of(ref), "names a <" + std::string(dep.name()) +
                                           ">, not a SOMEIP-SERVICE-INTERFACE-DEPLOYMENT");
    auto it = interfaces.find(dep.internal_object());
    if (it == interfaces.end()) it = interfaces.emplace(dep.internal_object(), read_interface(d, dep, out.notes)).first;
    return it->second;
  };
  // One node's deployment: refuse output that only a hostile file would ask
  // for (every provided instance copies its deployment's methods, events and
  // eventgroups, so a few instances of one big deployment would multiply it).
  std::size_t emitted = 0;
  for (const auto& inst : d.all("PROVIDED-SOMEIP-SERVICE-INSTANCE")) {
    emitted += interface_of(inst).entries + 1;
    if (emitted > kMaxEntries)
      throw ArxmlError(d.path_of(inst), "more than " + std::to_string(kMaxEntries) +
                                            " methods, events and eventgroups in the node: not one node's deployment");
  }
  for (const auto& inst : d.all("PROVIDED-SOMEIP-SERVICE-INSTANCE")) {
    const Interface& i = interface_of(inst);
    const auto instance = child_uint(d, inst, "SERVICE-INSTANCE-ID", 1, 0xFFFE);
    const auto mit = mappings.find(inst.internal_object());
    if (mit == mappings.end() || !mit->second.udp_port)
      throw ArxmlError(d.path_of(inst), "no UDP port: map the instance with a SOMEIP-SERVICE-INSTANCE-TO-MACHINE-"
                                        "MAPPING that has a UDP-PORT");
    std::map<std::uint16_t, json> groups = i.groups;
    for (const auto& pg : only_child(d, inst, "PROVIDED-EVENT-GROUPS").children("SOMEIP-PROVIDED-EVENT-GROUP")) {
      json& g = groups[group_of(d, i, pg)];
      const auto threshold = child_uint_opt(d, pg, "MULTICAST-THRESHOLD", 0, 0xFFFF);
      const auto addr = only_child(d, pg, "IPV-4-MULTICAST-IP-ADDRESS");
      const auto port = child_uint_opt(d, pg, "EVENT-MULTICAST-UDP-PORT", 1, 65535);
      if (only_child(d, pg, "IPV-6-MULTICAST-IP-ADDRESS"))
        throw ArxmlError(d.path_of(pg) + "/IPV-6-MULTICAST-IP-ADDRESS", "IPv6 is not supported");
      if (addr || port) {
        if (!addr || !port)
          throw ArxmlError(d.path_of(pg), "multicast needs both IPV-4-MULTICAST-IP-ADDRESS and EVENT-MULTICAST-UDP-PORT");
        g["multicast"] = {{"address", parse_ipv4(text_of(addr), d.path_of(addr))}, {"port", *port}};
        if (threshold) g["threshold"] = *threshold;
      } else if (threshold) {
        out.notes.push_back({d.path_of(pg) + "/MULTICAST-THRESHOLD", "ignored: the eventgroup has no multicast address"});
      }
    }
    if (only_child(d, inst, "SD-SERVER-CONFIG-REF"))
      out.notes.push_back({d.path_of(inst) + "/SD-SERVER-CONFIG-REF", "ignored: SD timing is node-wide (defaults)"});
    json svc = {{"service", hex16(i.service)}, {"instance", hex16(instance)}, {"unreliable", *mit->second.udp_port},
                {"major", i.major}, {"minor", i.minor}, {"methods", i.methods}, {"events", i.events}};
    json eg = json::array();
    for (auto& [id, g] : groups) eg.push_back(g);
    svc["eventgroups"] = eg;
    out.services.push_back(svc);
    out.offered[i.service].push_back(static_cast<std::uint16_t>(instance));
  }
  for (const auto& inst : d.all("REQUIRED-SOMEIP-SERVICE-INSTANCE")) {
    const Interface& i = interface_of(inst);
    const auto instance = child_uint_opt(d, inst, "REQUIRED-SERVICE-INSTANCE-ID", 1, 0xFFFF).value_or(0xFFFF);
    if (out.required.count(i.service))
      throw ArxmlError(d.path_of(inst), "service " + hex16(i.service) + " is required twice (one client per service)");
    json eg = json::array();
    for (const auto& rg : only_child(d, inst, "REQUIRED-EVENT-GROUPS").children("SOMEIP-REQUIRED-EVENT-GROUP"))
      eg.push_back(hex16(group_of(d, i, rg)));
    json cl = {{"service", hex16(i.service)}, {"instance", hex16(instance)}, {"major", i.major}, {"eventgroups", eg}};
    const auto mit = mappings.find(inst.internal_object());
    if (mit != mappings.end() && mit->second.udp_port) cl["unreliable"] = *mit->second.udp_port;
    if (only_child(d, inst, "SD-CLIENT-CONFIG-REF"))
      out.notes.push_back({d.path_of(inst) + "/SD-CLIENT-CONFIG-REF", "ignored: SD timing is node-wide (defaults)"});
    out.clients.push_back(cl);
    out.required[i.service] = static_cast<std::uint16_t>(instance);
  }
  return out;
}

}  // namespace layersec::arxml
