#include "layersec/someip/runtime_config.h"

#include <stdexcept>

#include "layersec/someip/tp.h"

namespace layersec::someip {

namespace {
using detail::hex16;

[[noreturn]] void config_error(const std::string& what) {
  throw std::invalid_argument("someip runtime configuration: " + what);
}
}  // namespace

std::string_view to_string(HeaderAuth h) {
  switch (h) {
    case HeaderAuth::kSomeipHeader:
      return "someip-header";
    case HeaderAuth::kPayloadOnly:
      return "payload-only";
  }
  return "?";
}

std::string detail::hex16(std::uint16_t v) {
  static const char* d = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 12; i >= 0; i -= 4) s += d[(v >> i) & 0xF];
  return s;
}

std::uint16_t client_port(const RuntimeConfig& config, const ClientConfig& client) {
  return client.udp_port != 0 ? client.udp_port : config.client_port;
}

MethodKind method_kind(const ServiceConfig& s, std::uint16_t method) {
  for (const auto& m : s.methods)
    if (m.method_id == method) return m.fire_and_forget ? MethodKind::kFireAndForget : MethodKind::kRequestResponse;
  for (const auto& e : s.events)
    if (e.getter_method == method || e.setter_method == method) return MethodKind::kRequestResponse;
  return MethodKind::kNone;
}

const EventgroupConfig* find_eventgroup(const ServiceConfig& s, std::uint16_t id) {
  for (const auto& g : s.eventgroups)
    if (g.eventgroup_id == id) return &g;
  return nullptr;
}

void validate_config(const RuntimeConfig& cfg) {
  if (cfg.tp_segment_size < kTpAlignment || cfg.tp_segment_size > kTpMaxSegment)
    config_error("tp_segment_size must be in [16, 1392]");
  if (cfg.max_pending_requests == 0 || cfg.max_pending_requests > 0x8000)
    config_error("max_pending_requests must be in [1, 32768]");
  if (cfg.max_message_size == 0 || cfg.max_message_size > (std::size_t{1} << 24))
    config_error("max_message_size must be in [1, 16 MiB]");
  for (std::size_t i = 0; i < cfg.services.size(); ++i) {
    const auto& s = cfg.services[i];
    const std::string name = "service " + hex16(s.service_id) + "/" + hex16(s.instance_id);
    if (s.service_id == 0xFFFF || s.instance_id == 0xFFFF || s.instance_id == 0)
      config_error(name + ": reserved service or instance id");
    if (s.udp_port == 0) config_error(name + ": udp_port missing");
    if (cfg.sd_enabled && s.udp_port == cfg.sd_port) config_error(name + ": udp_port is the SD port");
    for (std::size_t j = 0; j < i; ++j)
      if (cfg.services[j].service_id == s.service_id && cfg.services[j].instance_id == s.instance_id)
        config_error(name + ": offered twice");
    for (std::size_t j = 0; j < s.methods.size(); ++j) {
      if (s.methods[j].method_id >= 0x8000) config_error(name + ": method " + hex16(s.methods[j].method_id) + " is not a method id");
      for (std::size_t k = 0; k < j; ++k)
        if (s.methods[k].method_id == s.methods[j].method_id)
          config_error(name + ": method " + hex16(s.methods[j].method_id) + " twice");
    }
    for (std::size_t j = 0; j < s.eventgroups.size(); ++j) {
      const auto& g = s.eventgroups[j];
      for (std::size_t k = 0; k < j; ++k)
        if (s.eventgroups[k].eventgroup_id == g.eventgroup_id)
          config_error(name + ": eventgroup " + hex16(g.eventgroup_id) + " twice");
      if (g.multicast && !g.multicast->address.is_multicast())
        config_error(name + ": eventgroup " + hex16(g.eventgroup_id) + " multicast address is not a group");
    }
    for (std::size_t j = 0; j < s.events.size(); ++j) {
      const auto& e = s.events[j];
      const std::string ev = name + ": event " + hex16(e.event_id);
      if (e.event_id < 0x8000 || e.event_id == 0xFFFF) config_error(ev + " is not an event id");
      for (std::size_t k = 0; k < j; ++k)
        if (s.events[k].event_id == e.event_id) config_error(ev + " twice");
      if (e.eventgroups.empty()) config_error(ev + " belongs to no eventgroup");
      for (auto g : e.eventgroups) {
        bool found = false;
        for (const auto& eg : s.eventgroups) found = found || eg.eventgroup_id == g;
        if (!found) config_error(ev + " in unknown eventgroup " + hex16(g));
      }
      if ((e.getter_method || e.setter_method) && !e.is_field) config_error(ev + ": getter/setter on a non-field");
      for (auto m : {e.getter_method, e.setter_method}) {
        if (!m) continue;
        if (*m >= 0x8000) config_error(ev + ": getter/setter " + hex16(*m) + " is not a method id");
        for (const auto& mc : s.methods)
          if (mc.method_id == *m && mc.fire_and_forget)
            config_error(ev + ": getter/setter " + hex16(*m) + " is fire-and-forget");
      }
    }
  }
  for (std::size_t i = 0; i < cfg.clients.size(); ++i) {
    const auto& c = cfg.clients[i];
    const std::string name = "client " + hex16(c.service_id) + "/" + hex16(c.instance_id);
    if (c.service_id == 0xFFFF) config_error(name + ": reserved service id");
    const std::uint16_t port = client_port(cfg, c);
    if (cfg.sd_enabled && port == cfg.sd_port) config_error(name + ": port is the SD port");
    for (std::size_t j = 0; j < i; ++j)
      if (cfg.clients[j].service_id == c.service_id && cfg.clients[j].instance_id == c.instance_id)
        config_error(name + ": required twice");
  }
}

}  // namespace layersec::someip
