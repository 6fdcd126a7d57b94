#include "layersec/someip/node_config.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/base/file.h"
#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/secoc/profile.h"

namespace layersec::someip {
namespace {

using nlohmann::json;

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

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw NodeConfigError(path, problem);
}

// Rejects keys outside `allowed`; keys in `ignored` are recorded (vsomeip
// settings that have no meaning here) and skipped.
void check_keys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed,
                std::initializer_list<const char*> ignored = {},
                std::vector<std::string>* ignored_out = nullptr) {
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

// An id in [lo, hi], named by what it is in the message.
std::uint16_t get_id(const json& obj, const char* key, const std::string& path, std::uint32_t lo,
                     std::uint32_t hi, const char* what, std::optional<std::uint16_t> def = {}) {
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
                       const std::string& def, bool required = false) {
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

// An allowlist of host addresses (SD "subscribers" / "servers"): a non-empty
// array of distinct unicast IPv4 addresses. Absent = any host; an empty array
// is refused, since it reads as "nobody" but would mean "anybody".
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

ReturnCode parse_return_code(const json& v, const std::string& path) {
  static const std::pair<const char*, ReturnCode> names[] = {
      {"E_NOT_OK", ReturnCode::kNotOk},
      {"E_UNKNOWN_SERVICE", ReturnCode::kUnknownService},
      {"E_UNKNOWN_METHOD", ReturnCode::kUnknownMethod},
      {"E_NOT_READY", ReturnCode::kNotReady},
      {"E_NOT_REACHABLE", ReturnCode::kNotReachable},
      {"E_TIMEOUT", ReturnCode::kTimeout},
      {"E_WRONG_PROTOCOL_VERSION", ReturnCode::kWrongProtocolVersion},
      {"E_WRONG_INTERFACE_VERSION", ReturnCode::kWrongInterfaceVersion},
      {"E_MALFORMED_MESSAGE", ReturnCode::kMalformedMessage},
      {"E_WRONG_MESSAGE_TYPE", ReturnCode::kWrongMessageType},
  };
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    for (const auto& [n, c] : names)
      if (s == n) return c;
    if (s.empty() || (s[0] < '0' || s[0] > '9'))
      fail(path, "unknown return code '" + s + "' (E_NOT_OK, E_NOT_READY, ... or 0x01..0x3f)");
  }
  const auto c = parse_config_uint(v, path, 0x3F);
  if (c == 0) fail(path, "an error reply needs a return code other than E_OK");
  return static_cast<ReturnCode>(c);
}

// --- sections ------------------------------------------------------------------

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

// Records which methods/events exist per offered service (for later checks).
struct OfferedIndex {
  std::set<std::uint16_t> methods;       // in "methods"
  std::set<std::uint16_t> accessors;     // getters / setters
  std::map<std::uint16_t, bool> events;  // id -> is_field
};

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

// --- secoc ---------------------------------------------------------------------

struct ServiceIndex {
  const RuntimeConfig& rc;
  const std::vector<OfferedIndex>& offered;  // parallel to rc.services

  // Offered services with this id (and instance unless 0xFFFF).
  std::vector<std::size_t> offered_matches(std::uint16_t service, std::uint16_t instance) const {
    std::vector<std::size_t> r;
    for (std::size_t i = 0; i < rc.services.size(); ++i)
      if (rc.services[i].service_id == service &&
          (instance == 0xFFFF || rc.services[i].instance_id == instance))
        r.push_back(i);
    return r;
  }
  const ClientConfig* client(std::uint16_t service) const {
    for (const auto& c : rc.clients)
      if (c.service_id == service) return &c;
    return nullptr;
  }
};

bool has_tx_pdu(const secoc::EngineConfig& e, std::uint32_t id) {
  return std::any_of(e.tx_pdus.begin(), e.tx_pdus.end(),
                     [&](const secoc::TxPduConfig& p) { return p.id == id; });
}
bool has_rx_pdu(const secoc::EngineConfig& e, std::uint32_t id) {
  return std::any_of(e.rx_pdus.begin(), e.rx_pdus.end(),
                     [&](const secoc::RxPduConfig& p) { return p.id == id; });
}

// Tracks which binding already uses a PDU so a PDU serves one message id.
struct PduUse {
  std::map<std::uint32_t, std::string> tx, rx;
};

std::optional<std::uint32_t> get_pdu(const json& obj, const char* key, const std::string& path,
                                     const secoc::EngineConfig& e, bool tx,
                                     std::map<std::uint32_t, std::string>& used) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  const auto id = static_cast<std::uint32_t>(parse_config_uint(*v, at(path, key), secoc::kMaxPduId));
  if (tx ? !has_tx_pdu(e, id) : !has_rx_pdu(e, id))
    fail(at(path, key), std::string("no ") + (tx ? "txPdus" : "rxPdus") + " entry with id " +
                            std::to_string(id) + " in $.secoc.engine");
  const auto [it, fresh] = used.emplace(id, path);
  if (!fresh) fail(at(path, key), "PDU " + std::to_string(id) + " is already bound at " + it->second);
  return id;
}

// "$.secoc.sd": protected SD is the default whenever SecOC is configured.
//   absent / {"keyGroup": NAME, "dataId", "maxAgeMs", "maxSources"}: SD PDUs
//       with timestamp freshness are added to the engine (one MAC key group
//       needed: the only one, or the one named);
//   {"txPdu": N, "rxPdu": M}: the engine's own PDUs (timestamp freshness);
//   {"protect": false}: unprotected SD, explicitly (spoofable discovery).
void parse_secoc_sd(const json& s, const std::string& path, NodeSecoc& ns) {
  secoc::EngineConfig& eng = ns.engine;
  const std::string sp = at(path, "sd");
  static const json kEmpty = json::object();
  const json* sd = find(s, "sd");
  const json& o = sd ? *sd : kEmpty;
  check_keys(o, sp, {"protect", "txPdu", "rxPdu", "keyGroup", "dataId", "maxAgeMs", "maxSources"});
  if (!get_bool(o, "protect", sp, true)) {
    if (o.size() != 1) fail(sp, "\"protect\": false takes no other keys");
    ns.bindings.sd_unprotected = true;
    return;
  }
  const bool explicit_pdus = find(o, "txPdu") || find(o, "rxPdu");
  if (explicit_pdus) {
    for (const char* k : {"keyGroup", "dataId", "maxAgeMs", "maxSources"})
      if (find(o, k)) fail(at(sp, k), "not with \"txPdu\"/\"rxPdu\" (configure those PDUs in $.secoc.engine)");
    std::map<std::uint32_t, std::string> unused_tx, unused_rx;
    ns.bindings.sd_tx_pdu = get_pdu(o, "txPdu", sp, eng, true, unused_tx);
    ns.bindings.sd_rx_pdu = get_pdu(o, "rxPdu", sp, eng, false, unused_rx);
    if (!ns.bindings.sd_tx_pdu || !ns.bindings.sd_rx_pdu)
      fail(sp, "SD protection needs both \"txPdu\" and \"rxPdu\"");
    for (const auto& t : eng.tx_pdus)
      if (t.id == *ns.bindings.sd_tx_pdu && !t.profile.freshness.timestamp)
        fail(at(sp, "txPdu"), "tx PDU " + std::to_string(t.id) +
                                  " must use \"freshness\": \"timestamp\" (SD runs before any sync "
                                  "message can reach a peer)");
    for (const auto& r : eng.rx_pdus)
      if (r.id == *ns.bindings.sd_rx_pdu && !r.profile.freshness.timestamp)
        fail(at(sp, "rxPdu"), "rx PDU " + std::to_string(r.id) +
                                  " must use \"freshness\": \"timestamp\" (it verifies every peer's SD "
                                  "from the first message and refuses an earlier run's)");
    return;
  }
  // Synthesised SD PDUs on a MAC key group.
  std::uint32_t group = 0;
  if (const json* g = find(o, "keyGroup")) {
    if (!g->is_string()) fail(at(sp, "keyGroup"), "must be a string");
    const std::string name = g->get<std::string>();
    bool found = false;
    for (std::size_t i = 0; i < eng.key_groups.size(); ++i)
      if (eng.key_groups[i].name == name) {
        group = static_cast<std::uint32_t>(i);
        found = true;
      }
    if (!found) fail(at(sp, "keyGroup"), "no key group named '" + name + "' in $.secoc.engine.keyGroups");
  } else {
    std::vector<std::uint32_t> macs;
    for (std::size_t i = 0; i < eng.key_groups.size(); ++i)
      if (!secoc::is_aead(eng.key_groups[i].algorithm)) macs.push_back(static_cast<std::uint32_t>(i));
    if (macs.size() != 1)
      fail(sp, std::string("SD is protected by default when SecOC is configured: ") +
                   (macs.empty() ? "add a MAC (CMAC/HMAC) key group for it"
                                 : "name the key group that protects it with \"keyGroup\"") +
                   ", give engine PDUs with \"txPdu\"/\"rxPdu\", or turn it off explicitly with "
                   "{\"protect\": false}");
    group = macs[0];
  }
  const secoc::AuthAlgorithm alg = eng.key_groups[group].algorithm;
  if (secoc::is_aead(alg)) fail(at(sp, "keyGroup"), "SD needs a MAC key group (CMAC or HMAC), not AES-GCM");
  secoc::PduProfile prof = secoc::PduProfile::vendor();
  prof.kind = secoc::ProfileKind::kCustom;
  prof.algorithm = alg;
  prof.auth_info_tx_length = 64;
  prof.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  const auto data_id = static_cast<std::uint16_t>(get_uint(o, "dataId", sp, 0xFFFF, kDefaultSdDataId));
  std::uint32_t tx_id = 0, rx_id = 0;
  for (const auto& t : eng.tx_pdus) tx_id = std::max(tx_id, t.id + 1);
  for (const auto& r : eng.rx_pdus) rx_id = std::max(rx_id, r.id + 1);
  if (tx_id > secoc::kMaxPduId || rx_id > secoc::kMaxPduId) fail(sp, "no free PDU id left for SD");
  eng.tx_pdus.push_back({tx_id, data_id, prof, group});
  secoc::RxPduConfig r;
  r.id = rx_id;
  r.data_id = data_id;
  r.profile = prof;
  r.key_group = group;
  // Reorder-tolerant: a peer's unicast and multicast SD datagrams arrive on
  // different sockets and may swap; each is still accepted once.
  r.mode = secoc::FreshnessMode::kReorderTolerant;
  r.window = secoc::kDefaultWindow;
  r.max_age = get_ms(o, "maxAgeMs", sp, 1, 3600000, secoc::kDefaultMaxAge);
  r.max_sources = static_cast<std::uint32_t>(get_uint(o, "maxSources", sp, secoc::kMaxSources, 64));
  if (r.max_sources == 0) fail(at(sp, "maxSources"), "must be >= 1");
  eng.rx_pdus.push_back(r);
  try {
    eng.validate();
  } catch (const secoc::ConfigError& e) {
    fail(sp, std::string("the SD PDUs do not fit the engine: ") + e.what());
  }
  ns.bindings.sd_tx_pdu = tx_id;
  ns.bindings.sd_rx_pdu = rx_id;
}

NodeSecoc parse_secoc(const json& s, const std::string& path, const std::string& base_dir,
                      const ServiceIndex& services) {
  check_keys(s, path, {"engine", "keys", "stateFile", "bindings", "sd", "sync", "dataToAuthenticator",
                       "unprotected"});
  NodeSecoc ns;
  const json* engine = find(s, "engine");
  if (!engine) fail(at(path, "engine"), "required (the SecOC engine configuration)");
  const std::string ep = at(path, "engine");
  try {
    ns.engine = secoc::config_from_json(*engine);
  } catch (const secoc::ConfigError& e) {
    // The engine loader names paths from its own root "$".
    std::string p = e.path();
    p = p.size() >= 1 && p[0] == '$' ? ep + p.substr(1) : ep + "." + p;
    std::string what = e.what();
    const std::string prefix = e.path() + ": ";
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    fail(p, what);
  }
  secoc::EngineConfig& eng = ns.engine;

  // What every binding authenticates besides the payload.
  auto header_mode = [&](const json& obj, const std::string& p, HeaderAuth def) {
    const std::string v = get_string(obj, "dataToAuthenticator", p, std::string(to_string(def)));
    if (v == "someip-header") return HeaderAuth::kSomeipHeader;
    if (v == "payload-only") return HeaderAuth::kPayloadOnly;
    fail(at(p, "dataToAuthenticator"),
         "must be \"someip-header\" (DataId, SOME/IP header and payload are authenticated; the "
         "default) or \"payload-only\" (the AUTOSAR layout: header unauthenticated, for "
         "interoperability only)");
  };
  ns.bindings.header = header_mode(s, path, HeaderAuth::kSomeipHeader);

  // SD protection, before the key files are read (it may add engine PDUs).
  parse_secoc_sd(s, path, ns);

  ns.state_file = resolve(base_dir, get_string(s, "stateFile", path, "", true));
  if (ns.state_file.empty()) fail(at(path, "stateFile"), "must not be empty");

  // Keys: one file per key group, every group covered.
  const json& keys = get_array(s, "keys", path);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string kp = idx(at(path, "keys"), i);
    check_keys(keys[i], kp, {"keyGroup", "keyId", "file", "format"});
    NodeKey k;
    k.group_name = get_string(keys[i], "keyGroup", kp, "", true);
    bool found = false;
    for (std::size_t g = 0; g < eng.key_groups.size(); ++g)
      if (eng.key_groups[g].name == k.group_name) {
        k.group = static_cast<std::uint32_t>(g);
        found = true;
      }
    if (!found) fail(at(kp, "keyGroup"), "no key group named '" + k.group_name + "' in $.secoc.engine.keyGroups");
    for (const auto& other : ns.keys)
      if (other.group == k.group)
        fail(at(kp, "keyGroup"), "key group '" + k.group_name + "' already has a key file");
    k.key_id = static_cast<std::uint32_t>(get_uint(keys[i], "keyId", kp, 0xFFFFFFFF, 1));
    const std::string fmt = get_string(keys[i], "format", kp, "hex");
    KeyFileOptions opt;
    // base/keyfile.h: hex text is the one encoding of a key file.
    if (fmt == "hex") opt.format = KeyFileFormat::kHex;
    else fail(at(kp, "format"), "must be \"hex\" (the only key file encoding; raw and auto are not read)");
    opt.expected_size = secoc::key_size(eng.key_groups[k.group].algorithm);
    k.path = resolve(base_dir, get_string(keys[i], "file", kp, "", true));
    auto loaded = load_key_file(k.path, opt);
    if (!loaded) {
      std::string why(to_string(loaded.error()));
      if (loaded.error() == KeyFileError::kWrongSize || loaded.error() == KeyFileError::kBadFormat)
        why += " (key group '" + k.group_name + "' needs " + std::to_string(opt.expected_size) +
               " bytes, " + fmt + ")";
      fail(at(kp, "file"), k.path + ": " + why);
    }
    k.key = std::move(loaded.value());
    ns.keys.push_back(std::move(k));
  }
  for (std::size_t g = 0; g < eng.key_groups.size(); ++g)
    if (std::none_of(ns.keys.begin(), ns.keys.end(), [&](const NodeKey& k) { return k.group == g; }))
      fail(at(path, "keys"), "no key file for key group '" + eng.key_groups[g].name + "'");

  PduUse use;
  if (ns.bindings.sd_tx_pdu) {  // SD PDUs serve SD only
    use.tx.emplace(*ns.bindings.sd_tx_pdu, at(path, "sd"));
    use.rx.emplace(*ns.bindings.sd_rx_pdu, at(path, "sd"));
  }
  const json& bindings = get_array(s, "bindings", path);
  std::set<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>> bound;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const std::string bp = idx(at(path, "bindings"), i);
    check_keys(bindings[i], bp, {"service", "instance", "method", "event", "txPdu", "rxPdu",
                                 "dataToAuthenticator"});
    SecocBinding b;
    b.service_id = get_id(bindings[i], "service", bp, 0x0001, 0xFFFE, "service id");
    b.instance_id = get_id(bindings[i], "instance", bp, 0x0001, 0xFFFF, "instance id", 0xFFFF);
    const bool has_m = find(bindings[i], "method") != nullptr;
    const bool has_e = find(bindings[i], "event") != nullptr;
    if (has_m == has_e) fail(bp, "give exactly one of \"method\" and \"event\"");
    b.method_or_event = has_m ? get_id(bindings[i], "method", bp, 0x0000, 0x7FFF, "method id")
                              : get_id(bindings[i], "event", bp, 0x8000, 0xFFFE, "event id");
    const auto offered = services.offered_matches(b.service_id, b.instance_id);
    const ClientConfig* client = services.client(b.service_id);
    if (offered.empty() && !client)
      fail(at(bp, "service"), "service " + hex16(b.service_id) +
                                  (b.instance_id == 0xFFFF ? "" : "." + hex16(b.instance_id)) +
                                  " is neither in $.services nor in $.clients");
    for (const std::size_t o : offered) {
      const OfferedIndex& oi = services.offered[o];
      const bool known = has_m ? (oi.methods.count(b.method_or_event) ||
                                  oi.accessors.count(b.method_or_event))
                               : oi.events.count(b.method_or_event) > 0;
      if (!known && !client)
        fail(at(bp, has_m ? "method" : "event"),
             std::string(has_m ? "method " : "event ") + hex16(b.method_or_event) +
                 " is not configured in service " + hex16(b.service_id));
    }
    if (!bound.insert({b.service_id, b.instance_id, b.method_or_event}).second)
      fail(bp, "this message is already bound");
    b.tx_pdu = get_pdu(bindings[i], "txPdu", bp, eng, true, use.tx);
    b.rx_pdu = get_pdu(bindings[i], "rxPdu", bp, eng, false, use.rx);
    if (!b.tx_pdu && !b.rx_pdu) fail(bp, "give \"txPdu\", \"rxPdu\" or both");
    const HeaderAuth h = header_mode(bindings[i], bp, ns.bindings.header);
    if (h != ns.bindings.header) {
      if (h == HeaderAuth::kSomeipHeader)
        fail(at(bp, "dataToAuthenticator"),
             "\"someip-header\" on one binding while $.secoc.dataToAuthenticator is \"payload-only\": "
             "make someip-header the default and mark the payload-only bindings instead");
      ns.bindings.payload_only.push_back({b.service_id, b.instance_id, b.method_or_event});
    }
    ns.bindings.messages.push_back(b);
  }

  // Message ids of SecOC services deliberately sent and accepted in clear
  // (every other unbound id of such a service is rejected and counted).
  const json& clear = get_array(s, "unprotected", path);
  for (std::size_t i = 0; i < clear.size(); ++i) {
    const std::string up = idx(at(path, "unprotected"), i);
    check_keys(clear[i], up, {"service", "instance", "method", "event"});
    MessageRef r;
    r.service_id = get_id(clear[i], "service", up, 0x0001, 0xFFFE, "service id");
    r.instance_id = get_id(clear[i], "instance", up, 0x0001, 0xFFFF, "instance id", 0xFFFF);
    const bool has_m = find(clear[i], "method") != nullptr;
    if (has_m == (find(clear[i], "event") != nullptr)) fail(up, "give exactly one of \"method\" and \"event\"");
    r.method_or_event = has_m ? get_id(clear[i], "method", up, 0x0000, 0x7FFF, "method id")
                              : get_id(clear[i], "event", up, 0x8000, 0xFFFE, "event id");
    if (bound.count({r.service_id, r.instance_id, r.method_or_event}))
      fail(up, "this message is bound in $.secoc.bindings; it cannot also be unprotected");
    ns.bindings.unprotected.push_back(r);
  }


  const bool sends_sync = eng.sync_tx.enabled;
  const bool receives_sync = !eng.sync_rx.empty();
  if (const json* sy = find(s, "sync")) {
    const std::string sp = at(path, "sync");
    check_keys(*sy, sp, {"service", "instance", "event", "rxChannel"});
    SecocBindings& b = ns.bindings;
    b.sync_service = get_id(*sy, "service", sp, 0x0001, 0xFFFE, "service id");
    b.sync_instance = get_id(*sy, "instance", sp, 0x0001, 0xFFFE, "instance id", 1);
    b.sync_event = get_id(*sy, "event", sp, 0x8000, 0xFFFE, "event id");
    b.sync_rx_channel = static_cast<std::uint32_t>(get_uint(*sy, "rxChannel", sp, secoc::kMaxPduId, 0));
    if (find(*sy, "rxChannel") && !receives_sync)
      fail(at(sp, "rxChannel"), "$.secoc.engine has no syncRx channel");
    if (receives_sync &&
        std::none_of(eng.sync_rx.begin(), eng.sync_rx.end(),
                     [&](const secoc::SyncRxConfig& r) { return r.id == b.sync_rx_channel; }))
      fail(at(sp, "rxChannel"), "no syncRx entry with id " + std::to_string(b.sync_rx_channel) +
                                    " in $.secoc.engine");
    const auto offered = services.offered_matches(*b.sync_service, b.sync_instance);
    if (sends_sync) {
      if (offered.empty())
        fail(at(sp, "service"), "this node sends sync messages (syncTx), so service " +
                                    hex16(*b.sync_service) + "." + hex16(b.sync_instance) +
                                    " must be in $.services");
      if (!services.offered[offered[0]].events.count(b.sync_event))
        fail(at(sp, "event"), "event " + hex16(b.sync_event) + " is not an event of service " +
                                  hex16(*b.sync_service));
    }
    if (receives_sync && offered.empty() && !services.client(*b.sync_service))
      fail(at(sp, "service"), "this node receives sync messages (syncRx), so service " +
                                  hex16(*b.sync_service) + " must be in $.clients or $.services");
  } else if (sends_sync || receives_sync) {
    fail(at(path, "sync"), std::string("required: the engine ") +
                               (sends_sync ? "sends (syncTx)" : "receives (syncRx)") +
                               " sync messages; name the event that carries them");
  }
  return ns;
}

// --- test ----------------------------------------------------------------------

// The instance of an offered service: given, or the only one offered.
std::uint16_t offered_instance(const json& obj, const std::string& path, const RuntimeConfig& rc,
                               std::uint16_t service, std::size_t* service_index) {
  std::vector<std::size_t> matches;
  for (std::size_t i = 0; i < rc.services.size(); ++i)
    if (rc.services[i].service_id == service) matches.push_back(i);
  if (matches.empty()) fail(at(path, "service"), "service " + hex16(service) + " is not in $.services");
  if (!find(obj, "instance")) {
    if (matches.size() > 1)
      fail(at(path, "instance"), "required: service " + hex16(service) + " is offered as several instances");
    *service_index = matches[0];
    return rc.services[matches[0]].instance_id;
  }
  const auto inst = get_id(obj, "instance", path, 0x0001, 0xFFFE, "instance id");
  for (const std::size_t m : matches)
    if (rc.services[m].instance_id == inst) {
      *service_index = m;
      return inst;
    }
  fail(at(path, "instance"), "service " + hex16(service) + " is not offered as instance " + hex16(inst));
}

NodeTest parse_test(const json& t, const std::string& path, const RuntimeConfig& rc,
                    const std::vector<OfferedIndex>& offered) {
  check_keys(t, path, {"serve", "publish", "requests"});
  NodeTest nt;
  const json& serve = get_array(t, "serve", path);
  std::set<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>> seen;
  for (std::size_t i = 0; i < serve.size(); ++i) {
    const std::string sp = idx(at(path, "serve"), i);
    check_keys(serve[i], sp, {"service", "instance", "method", "reply", "payload", "code"});
    TestServe ts;
    ts.service = get_id(serve[i], "service", sp, 0x0001, 0xFFFE, "service id");
    std::size_t si = 0;
    ts.instance = offered_instance(serve[i], sp, rc, ts.service, &si);
    ts.method = get_id(serve[i], "method", sp, 0x0000, 0x7FFF, "method id");
    if (!offered[si].methods.count(ts.method))
      fail(at(sp, "method"), "method " + hex16(ts.method) + " is not in the service's \"methods\"" +
                                 (offered[si].accessors.count(ts.method)
                                      ? " (it is a field getter/setter, served by the runtime)"
                                      : ""));
    if (!seen.insert({ts.service, ts.instance, ts.method}).second)
      fail(sp, "this method is already served");
    const std::string reply = get_string(serve[i], "reply", sp, "echo");
    if (reply == "echo") {
      ts.reply = ReplyKind::kEcho;
    } else if (reply == "fixed") {
      ts.reply = ReplyKind::kFixed;
      const json* p = find(serve[i], "payload");
      if (!p) fail(at(sp, "payload"), "required for reply \"fixed\"");
      ts.payload = parse_hex(*p, at(sp, "payload"));
    } else if (reply == "error") {
      ts.reply = ReplyKind::kError;
      const json* c = find(serve[i], "code");
      if (!c) fail(at(sp, "code"), "required for reply \"error\"");
      ts.code = parse_return_code(*c, at(sp, "code"));
    } else {
      fail(at(sp, "reply"), "must be \"echo\", \"fixed\" or \"error\"");
    }
    if (ts.reply != ReplyKind::kFixed && find(serve[i], "payload"))
      fail(at(sp, "payload"), "only a \"fixed\" reply has a payload");
    if (ts.reply != ReplyKind::kError && find(serve[i], "code"))
      fail(at(sp, "code"), "only an \"error\" reply has a code");
    if (ts.payload.size() > rc.max_message_size)
      fail(at(sp, "payload"), "longer than max_message_size");
    nt.serve.push_back(std::move(ts));
  }

  const json& publish = get_array(t, "publish", path);
  std::set<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>> seen_pub;
  for (std::size_t i = 0; i < publish.size(); ++i) {
    const std::string pp = idx(at(path, "publish"), i);
    check_keys(publish[i], pp, {"service", "instance", "event", "interval_ms", "payload_size", "count"});
    TestPublish tp;
    tp.service = get_id(publish[i], "service", pp, 0x0001, 0xFFFE, "service id");
    std::size_t si = 0;
    tp.instance = offered_instance(publish[i], pp, rc, tp.service, &si);
    tp.event = get_id(publish[i], "event", pp, 0x8000, 0xFFFE, "event id");
    if (!offered[si].events.count(tp.event))
      fail(at(pp, "event"), "event " + hex16(tp.event) + " is not an event of service " + hex16(tp.service));
    if (!seen_pub.insert({tp.service, tp.instance, tp.event}).second)
      fail(pp, "this event is already published");
    tp.interval = get_ms(publish[i], "interval_ms", pp, 1, 3600000, tp.interval);
    tp.payload_size = static_cast<std::size_t>(
        get_uint(publish[i], "payload_size", pp, rc.max_message_size, tp.payload_size));
    tp.count = get_uint(publish[i], "count", pp, UINT64_MAX, 0);
    nt.publish.push_back(tp);
  }

  const json& requests = get_array(t, "requests", path);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string rp = idx(at(path, "requests"), i);
    check_keys(requests[i], rp, {"service", "instance", "method", "interval_ms", "payload",
                                 "payload_size", "count", "timeout_ms", "fire_and_forget"});
    TestRequest tr;
    tr.service = get_id(requests[i], "service", rp, 0x0001, 0xFFFE, "service id");
    const ClientConfig* client = nullptr;
    for (const auto& c : rc.clients)
      if (c.service_id == tr.service) client = &c;
    if (!client) fail(at(rp, "service"), "service " + hex16(tr.service) + " is not in $.clients");
    tr.instance = client->instance_id;
    if (find(requests[i], "instance")) {
      tr.instance = get_id(requests[i], "instance", rp, 0x0001, 0xFFFE, "instance id");
      if (client->instance_id != 0xFFFF && client->instance_id != tr.instance)
        fail(at(rp, "instance"), "the client of service " + hex16(tr.service) + " requires instance " +
                                     hex16(client->instance_id));
    }
    tr.method = get_id(requests[i], "method", rp, 0x0000, 0x7FFF, "method id");
    tr.interval = get_ms(requests[i], "interval_ms", rp, 1, 3600000, tr.interval);
    if (const json* p = find(requests[i], "payload")) {
      if (find(requests[i], "payload_size"))
        fail(at(rp, "payload_size"), "give \"payload\" or \"payload_size\", not both");
      tr.payload = parse_hex(*p, at(rp, "payload"));
      if (tr.payload->size() > rc.max_message_size) fail(at(rp, "payload"), "longer than max_message_size");
    }
    tr.payload_size = static_cast<std::size_t>(
        get_uint(requests[i], "payload_size", rp, rc.max_message_size, tr.payload_size));
    tr.count = get_uint(requests[i], "count", rp, UINT64_MAX, 0);
    tr.fire_and_forget = get_bool(requests[i], "fire_and_forget", rp, false);
    if (find(requests[i], "timeout_ms")) {
      if (tr.fire_and_forget) fail(at(rp, "timeout_ms"), "a fire-and-forget request has no response to wait for");
      tr.timeout = get_ms(requests[i], "timeout_ms", rp, 1, 3600000, Duration::zero());
    }
    nt.requests.push_back(std::move(tr));
  }
  return nt;
}

}  // namespace

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

NodeConfig node_config_from_json(const json& j, const std::string& base_dir) {
  const std::string root = "$";
  NodeConfig nc;
  check_keys(j, root,
             {"unicast", "device", "network", "name", "applications", "client_id", "client_port",
              "request_timeout_ms", "max_message_size", "tp_segment_size",
              "tp_reassembly_timeout_ms", "max_pending_requests", "service-discovery", "services",
              "clients", "secoc", "test"},
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

}  // namespace layersec::someip
