// The "test" section of the node configuration (node_config.h): the methods
// the node serves, the events it publishes and the requests it sends.
#include <cstdint>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/node/node_config_parse.h"

namespace layersec::node::config_parse {
namespace {

using someip::ReturnCode;

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

}  // namespace

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

}  // namespace layersec::node::config_parse
