// The node configuration loader (node_config.h): the top level,
// "service-discovery", "services" and "clients"; the "secoc" and "test"
// sections have files of their own (node_config_parse.h).
#include "layersec/node/node_config.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/base/file.h"
#include "layersec/node/node_config_parse.h"

namespace layersec::node {
namespace {

using namespace config_parse;  // the readers (node_config_parse.h)
using someip::ClientConfig;
using someip::kSdPort;
using someip::kTtlInfinite;
using someip::Endpoint;
using someip::EventConfig;
using someip::EventgroupConfig;
using someip::L4Proto;
using someip::MethodConfig;
using someip::RuntimeConfig;
using someip::SdTiming;
using someip::ServiceConfig;

void parse_sd(const json& sd, const std::string& path, RuntimeConfig& rc,
              std::vector<std::string>& ignored) {
  check_keys(sd, path,
             {"enable", "multicast", "port", "protocol", "initial_delay_min", "initial_delay_max",
              "repetitions_base_delay", "repetitions_max", "cyclic_offer_delay", "ttl",
              "request_response_delay"},
             {"ttl_factor_offers", "ttl_factor_subscriptions", "offer_debounce_time",
              "find_debounce_time", "max_remote_subscribers", "wait_route_netlink_notification",
              "find_initial_debounce_reps", "find_initial_debounce_time"},
             &ignored);
  rc.sd_enabled = get_bool(sd, "enable", path, true);
  if (const json* m = find(sd, "multicast"))
    rc.sd_multicast.address = parse_ipv4_multicast(*m, at(path, "multicast"));
  rc.sd_port = get_port(sd, "port", path, kSdPort);
  rc.sd_multicast.port = rc.sd_port;
  const std::string proto = get_string(sd, "protocol", path, "udp");
  if (proto != "udp")
    fail(at(path, "protocol"), "'" + proto + "' is not supported: SOME/IP-SD runs over udp only");
  SdTiming& t = rc.sd_timing;
  constexpr std::uint64_t kMaxMs = 3600000;  // one hour
  t.initial_delay_min = get_ms(sd, "initial_delay_min", path, 0, kMaxMs, t.initial_delay_min);
  t.initial_delay_max = get_ms(sd, "initial_delay_max", path, 0, kMaxMs, t.initial_delay_max);
  if (t.initial_delay_min > t.initial_delay_max)
    fail(at(path, "initial_delay_max"), "must be >= initial_delay_min");
  t.repetitions_base_delay =
      get_ms(sd, "repetitions_base_delay", path, 0, kMaxMs, t.repetitions_base_delay);
  t.repetitions_max = static_cast<std::uint32_t>(get_uint(sd, "repetitions_max", path, 16,
                                                          t.repetitions_max));
  if (t.repetitions_max > 0 && t.repetitions_base_delay == Duration::zero())
    fail(at(path, "repetitions_base_delay"), "must be >= 1 ms when repetitions_max > 0");
  t.cyclic_offer_delay = get_ms(sd, "cyclic_offer_delay", path, 1, kMaxMs, t.cyclic_offer_delay);
  if (const json* v = find(sd, "ttl")) {
    const auto ttl = parse_config_uint(*v, at(path, "ttl"), kTtlInfinite);
    if (ttl == 0) fail(at(path, "ttl"), "TTL 0 means stop; use 1..16777215 s (0xFFFFFF = forever)");
    t.ttl = static_cast<std::uint32_t>(ttl);
  }
  const Duration rrd = get_ms(sd, "request_response_delay", path, 0, kMaxMs, Duration::zero());
  // vsomeip's single value is the upper bound; feat_req_someipsd_83 draws
  // uniformly from [MIN, MAX]: we use [MAX/2, MAX] as vsomeip's docs suggest.
  t.request_response_delay_min = Duration::nanoseconds(rrd.ns() / 2);
  t.request_response_delay_max = rrd;
}

ServiceConfig parse_service(const json& s, const std::string& path, std::uint16_t sd_port,
                            OfferedIndex& index, std::vector<std::string>& ignored) {
  check_keys(s, path,
             {"service", "instance", "unreliable", "reliable", "major", "minor", "methods", "events",
              "eventgroups", "multicast"},
             {"protocol", "debounce-times", "someip-tp"}, &ignored);
  ServiceConfig sc;
  sc.service_id = get_id(s, "service", path, 0x0001, 0xFFFE, "service id");
  sc.instance_id = get_id(s, "instance", path, 0x0001, 0xFFFE, "instance id");
  if (find(s, "reliable"))
    fail(at(path, "reliable"), "TCP (reliable) endpoints are not supported; use unreliable (UDP)");
  if (find(s, "multicast"))
    fail(at(path, "multicast"),
         "service-level multicast is not supported; give each eventgroup its own \"multicast\"");
  sc.udp_port = get_port(s, "unreliable", path, std::nullopt);
  if (sc.udp_port == sd_port)
    fail(at(path, "unreliable"), "port " + std::to_string(sd_port) + " is the SD port");
  sc.major_version = static_cast<std::uint8_t>(get_uint(s, "major", path, 0xFE, 1));
  sc.minor_version = static_cast<std::uint32_t>(get_uint(s, "minor", path, 0xFFFFFFFE, 0));

  const json& methods = get_array(s, "methods", path);
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const std::string mp = idx(at(path, "methods"), i);
    MethodConfig mc;
    if (methods[i].is_object()) {
      check_keys(methods[i], mp, {"method", "fire_and_forget"});
      mc.method_id = get_id(methods[i], "method", mp, 0x0000, 0x7FFF, "method id");
      mc.fire_and_forget = get_bool(methods[i], "fire_and_forget", mp, false);
    } else {
      mc.method_id = parse_id_value(methods[i], mp, 0x0000, 0x7FFF, "method id");
    }
    if (!index.methods.insert(mc.method_id).second)
      fail(mp, "method " + hex16(mc.method_id) + " is listed twice");
    sc.methods.push_back(mc);
  }

  const json& events = get_array(s, "events", path);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::string ep = idx(at(path, "events"), i);
    check_keys(events[i], ep, {"event", "is_field", "is_reliable", "getter", "setter"},
               {"update-cycle", "change_resets_cycle", "update-on-change", "cycle"}, &ignored);
    EventConfig ec;
    ec.event_id = get_id(events[i], "event", ep, 0x8000, 0xFFFE, "event id");
    ec.is_field = get_bool(events[i], "is_field", ep, false);
    if (get_bool(events[i], "is_reliable", ep, false))
      fail(at(ep, "is_reliable"), "TCP (reliable) events are not supported");
    for (const char* acc : {"getter", "setter"}) {
      const json* v = find(events[i], acc);
      if (!v) continue;
      if (!ec.is_field) fail(at(ep, acc), std::string("only fields (is_field) have a ") + acc);
      const auto m = parse_id_value(*v, at(ep, acc), 0x0000, 0x7FFF, "method id");
      if (index.methods.count(m) || !index.accessors.insert(m).second)
        fail(at(ep, acc), "method " + hex16(m) + " is already used by this service");
      (std::string(acc) == "getter" ? ec.getter_method : ec.setter_method) = m;
    }
    if (index.events.count(ec.event_id))
      fail(at(ep, "event"), "event " + hex16(ec.event_id) + " is listed twice");
    index.events[ec.event_id] = ec.is_field;
    sc.events.push_back(ec);
  }

  const json& groups = get_array(s, "eventgroups", path);
  std::set<std::uint16_t> seen_groups;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string gp = idx(at(path, "eventgroups"), i);
    check_keys(groups[i], gp, {"eventgroup", "events", "multicast", "threshold", "subscribers"});
    EventgroupConfig gc;
    gc.eventgroup_id = get_id(groups[i], "eventgroup", gp, 0x0000, 0xFFFE, "eventgroup id");
    if (!seen_groups.insert(gc.eventgroup_id).second)
      fail(at(gp, "eventgroup"), "eventgroup " + hex16(gc.eventgroup_id) + " is listed twice");
    if (const json* m = find(groups[i], "multicast")) {
      const std::string mp = at(gp, "multicast");
      check_keys(*m, mp, {"address", "port"});
      const json* a = find(*m, "address");
      if (!a) fail(at(mp, "address"), "required");
      Endpoint e;
      e.address = parse_ipv4_multicast(*a, at(mp, "address"));
      e.port = get_port(*m, "port", mp, std::nullopt);
      e.proto = L4Proto::kUdp;
      gc.multicast = e;
    }
    gc.multicast_threshold = static_cast<std::size_t>(get_uint(groups[i], "threshold", gp, 65535, 1));
    if (find(groups[i], "threshold") && !gc.multicast)
      fail(at(gp, "threshold"), "a threshold needs a \"multicast\" address");
    gc.allowed_subscribers = get_host_list(groups[i], "subscribers", gp);
    const json& evs = get_array(groups[i], "events", gp);
    std::set<std::uint16_t> in_group;
    for (std::size_t k = 0; k < evs.size(); ++k) {
      const std::string ep = idx(at(gp, "events"), k);
      const auto ev = parse_id_value(evs[k], ep, 0x8000, 0xFFFE, "event id");
      if (!in_group.insert(ev).second)
        fail(ep, "event " + hex16(ev) + " is listed twice in this eventgroup");
      auto it = std::find_if(sc.events.begin(), sc.events.end(),
                             [&](const EventConfig& e) { return e.event_id == ev; });
      if (it == sc.events.end()) {
        // As in vsomeip, an event named only in an eventgroup is a plain event.
        EventConfig ec;
        ec.event_id = ev;
        index.events[ev] = false;
        sc.events.push_back(ec);
        it = sc.events.end() - 1;
      }
      it->eventgroups.push_back(gc.eventgroup_id);
    }
    sc.eventgroups.push_back(gc);
  }
  for (std::size_t i = 0; i < sc.events.size(); ++i)
    if (sc.events[i].eventgroups.empty())
      fail(idx(at(path, "events"), i),
           "event " + hex16(sc.events[i].event_id) + " is in no eventgroup (nobody could subscribe)");
  return sc;
}

ClientConfig parse_client(const json& c, const std::string& path, std::uint16_t sd_port) {
  check_keys(c, path, {"service", "instance", "major", "unreliable", "eventgroups", "servers"});
  ClientConfig cc;
  cc.service_id = get_id(c, "service", path, 0x0001, 0xFFFE, "service id");
  cc.instance_id = get_id(c, "instance", path, 0x0001, 0xFFFF, "instance id", 0xFFFF);
  cc.major_version = static_cast<std::uint8_t>(get_uint(c, "major", path, 0xFF, 0xFF));
  if (const json* u = find(c, "unreliable")) {
    // vsomeip lists a client port range; one port is what we use.
    const json* v = u;
    if (u->is_array()) {
      if (u->size() != 1)
        fail(at(path, "unreliable"), "give one port (port ranges are not supported)");
      v = &(*u)[0];
    }
    const auto p = parse_config_uint(*v, at(path, "unreliable"), 65535);
    if (p == 0) fail(at(path, "unreliable"), "port must be 1..65535");
    if (p == sd_port) fail(at(path, "unreliable"), "port " + std::to_string(p) + " is the SD port");
    cc.udp_port = static_cast<std::uint16_t>(p);
  }
  const json& groups = get_array(c, "eventgroups", path);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string gp = idx(at(path, "eventgroups"), i);
    const auto g = parse_id_value(groups[i], gp, 0x0000, 0xFFFE, "eventgroup id");
    if (std::find(cc.eventgroups.begin(), cc.eventgroups.end(), g) != cc.eventgroups.end())
      fail(gp, "eventgroup " + hex16(g) + " is listed twice");
    cc.eventgroups.push_back(g);
  }
  cc.allowed_servers = get_host_list(c, "servers", path);
  return cc;
}

}  // namespace

NodeConfig node_config_from_json(const json& j, const std::string& base_dir) {
  const std::string root = "$";
  NodeConfig nc;
  check_keys(j, root,
             {"unicast", "device", "network", "name", "applications", "client_id", "client_port",
              "request_timeout_ms", "max_message_size", "tp_segment_size",
              "tp_reassembly_timeout_ms", "max_pending_requests", "service-discovery", "services",
              "clients", "secoc", "test", "raw", "tsn", "macsec"},
             {"netmask", "prefix", "logging", "routing", "tracing", "diagnosis", "diagnosis_mask",
              "watchdog", "shutdown_timeout", "npdu-default-timings", "payload-sizes",
              "max-payload-size-local", "max-payload-size-reliable", "max-payload-size-unreliable",
              "buffer-shrink-threshold", "supports_selective_broadcasts", "local-clients-keepalive"},
             &nc.ignored);

  const json* u = find(j, "unicast");
  if (!u) fail(at(root, "unicast"), "required (the node's IPv4 address)");
  nc.unicast = parse_ipv4(*u, at(root, "unicast"));
  if (nc.unicast.is_multicast()) fail(at(root, "unicast"), "is a multicast address");
  nc.device = get_string(j, "device", root, "");

  RuntimeConfig& rc = nc.runtime;
  rc.name = "layersec-node";
  if (const json* apps = find(j, "applications")) {
    const std::string ap = at(root, "applications");
    if (!apps->is_array()) fail(ap, "must be an array");
    if (apps->size() > 1) fail(ap, "one application per node (this file lists " +
                                       std::to_string(apps->size()) + ")");
    if (apps->size() == 1) {
      const std::string a0 = idx(ap, 0);
      check_keys((*apps)[0], a0, {"name", "id"},
                 {"max_dispatchers", "max_dispatch_time", "threads", "io_thread_nice", "debounce",
                  "plugins", "request_debounce_time"},
                 &nc.ignored);
      rc.name = get_string((*apps)[0], "name", a0, rc.name);
      if (find((*apps)[0], "id"))
        rc.client_id = get_id((*apps)[0], "id", a0, 0x0001, 0xFFFE, "client id");
    }
  }
  rc.name = get_string(j, "network", root, rc.name);
  rc.name = get_string(j, "name", root, rc.name);
  if (find(j, "client_id")) {
    if (find(j, "applications")) fail(at(root, "client_id"), "give \"client_id\" or \"applications\", not both");
    rc.client_id = get_id(j, "client_id", root, 0x0001, 0xFFFE, "client id");
  }
  rc.client_port = get_port(j, "client_port", root, rc.client_port);
  rc.request_timeout = get_ms(j, "request_timeout_ms", root, 1, 3600000, rc.request_timeout);
  rc.max_message_size =
      static_cast<std::size_t>(get_uint(j, "max_message_size", root, 16u << 20, rc.max_message_size));
  if (rc.max_message_size < 16) fail(at(root, "max_message_size"), "must be >= 16 bytes");
  rc.tp_segment_size =
      static_cast<std::size_t>(get_uint(j, "tp_segment_size", root, 1392, rc.tp_segment_size));
  if (rc.tp_segment_size < 16 || rc.tp_segment_size % 16 != 0)
    fail(at(root, "tp_segment_size"), "must be a multiple of 16 in 16..1392");
  rc.tp_reassembly_timeout =
      get_ms(j, "tp_reassembly_timeout_ms", root, 1, 3600000, rc.tp_reassembly_timeout);
  rc.max_pending_requests = static_cast<std::size_t>(
      get_uint(j, "max_pending_requests", root, 1u << 20, rc.max_pending_requests));
  if (rc.max_pending_requests == 0) fail(at(root, "max_pending_requests"), "must be >= 1");

  if (const json* sd = find(j, "service-discovery"))
    parse_sd(*sd, at(root, "service-discovery"), rc, nc.ignored);
  if (rc.client_port == rc.sd_port)
    fail(at(root, "client_port"), "port " + std::to_string(rc.sd_port) + " is the SD port");

  std::vector<OfferedIndex> offered;
  const json& services = get_array(j, "services", root);
  for (std::size_t i = 0; i < services.size(); ++i) {
    const std::string sp = idx(at(root, "services"), i);
    OfferedIndex oi;
    ServiceConfig sc = parse_service(services[i], sp, rc.sd_port, oi, nc.ignored);
    for (const auto& other : rc.services)
      if (other.service_id == sc.service_id && other.instance_id == sc.instance_id)
        fail(sp, "service " + hex16(sc.service_id) + " instance " + hex16(sc.instance_id) +
                     " is offered twice");
    rc.services.push_back(std::move(sc));
    offered.push_back(std::move(oi));
  }
  const json& clients = get_array(j, "clients", root);
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const std::string cp = idx(at(root, "clients"), i);
    ClientConfig cc = parse_client(clients[i], cp, rc.sd_port);
    for (const auto& other : rc.clients)
      if (other.service_id == cc.service_id)
        fail(at(cp, "service"), "service " + hex16(cc.service_id) + " is required twice");
    rc.clients.push_back(std::move(cc));
  }
  if (rc.services.empty() && rc.clients.empty())
    fail(root, "neither \"services\" nor \"clients\": the node would do nothing");

  if (const json* s = find(j, "secoc"))
    nc.secoc = parse_secoc(*s, at(root, "secoc"), base_dir, ServiceIndex{rc, offered});
  if (const json* t = find(j, "test")) nc.test = parse_test(*t, at(root, "test"), rc, offered);
  nc.raw = parse_raw(find(j, "raw"), at(root, "raw"), nc.unicast);
  if (nc.raw && !nc.device.empty())
    fail(at(root, "device"), "not used with \"raw\" (the interface is $.raw.interface)");
  nc.macsec = parse_macsec(find(j, "macsec"), at(root, "macsec"), nc.raw.has_value(), base_dir);
  nc.tsn = parse_tsn(find(j, "tsn"), at(root, "tsn"), nc.raw.has_value(), nc.macsec.has_value(), base_dir);
  return nc;
}

NodeConfig load_node_config(const std::string& path) {
  // base/file.h: regular files only (a FIFO cannot block, a directory is
  // named as one), bounded, read errors are errors.
  const std::string text = read_config_file<NodeConfigError>(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw NodeConfigError(path, std::string("JSON syntax: ") + e.what());
  }
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
  return node_config_from_json(j, dir);
}

}  // namespace layersec::node