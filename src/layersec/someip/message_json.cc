#include "layersec/someip/message_json.h"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "layersec/base/hex.h"
#include "layersec/someip/address.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_message.h"
#include "layersec/someip/tp.h"

namespace layersec::someip {
namespace {

using nlohmann::json;

json entry_json(const SdEntry& e) {
  json j{{"type", e.type},       {"kind", std::string(to_string(e.kind()))},
         {"index1", e.index1},   {"index2", e.index2},
         {"num1", e.num_options1}, {"num2", e.num_options2},
         {"service", e.service_id}, {"instance", e.instance_id},
         {"major", e.major_version}, {"ttl", e.ttl}};
  if (e.is_eventgroup_entry()) {
    j["eventgroup"] = e.eventgroup_id;
    j["counter"] = e.counter;
    j["initial_data_requested"] = e.initial_data_requested;
  } else {
    j["minor"] = e.minor_version;
  }
  return j;
}

json option_json(const SdOption& o) {
  json j{{"type", o.type}, {"name", std::string(option_type_name(o.type))}};
  if (is_endpoint_option_type(o.type)) {
    j["address"] = o.endpoint.address.to_string();
    j["proto"] = static_cast<int>(o.endpoint.proto);
    j["port"] = o.endpoint.port;
  } else if (o.type == 0x02) {
    j["priority"] = o.priority;
    j["weight"] = o.weight;
  } else if (o.type == 0x01) {
    json items = json::array();
    for_each_config_string(o.data, [&](std::string_view s) { items.push_back(std::string(s)); });
    j["config"] = items;
  } else {
    j["data"] = to_hex(o.data);
  }
  return j;
}

json message_json(const MessageView& m) {
  const Header& h = m.header;
  json j{{"service", h.service_id},
         {"method", h.method_id},
         {"length", h.length},
         {"client", h.client_id},
         {"session", h.session_id},
         {"protocol_version", h.protocol_version},
         {"interface_version", h.interface_version},
         {"message_type", static_cast<int>(h.message_type)},
         {"message_type_name", std::string(to_string(h.message_type))},
         {"return_code", h.return_code}};
  if (is_tp(h.message_type)) {
    auto s = parse_tp_segment(m);
    if (s) {
      j["tp"] = json{{"offset", s->offset}, {"more", s->more_segments}, {"data", to_hex(s->data)}};
    } else {
      j["tp_error"] = std::string(to_string(s.error()));
    }
    return j;
  }
  if (h.is_sd()) {
    auto sd = parse_sd_message(m);
    if (sd) {
      json entries = json::array();
      json options = json::array();
      for (std::size_t i = 0; i < sd->entry_count(); ++i) entries.push_back(entry_json(sd->entry(i)));
      for (std::size_t i = 0; i < sd->option_count(); ++i) options.push_back(option_json(sd->option(i)));
      j["sd"] = json{{"flags", sd->flags()}, {"reboot", sd->reboot()}, {"unicast", sd->unicast()},
                     {"entries", entries}, {"options", options}};
      return j;
    }
    j["sd_error"] = std::string(to_string(sd.error()));
  }
  j["payload"] = to_hex(m.payload);
  return j;
}

// An integer field must be a JSON integer: get<T>() on a number_float
// out of T's range is undefined behaviour (found by fuzz/someip_json_fuzz.cc).
template <class T>
T num(const json& j, const char* key, T def = T{}) {
  if (!j.contains(key)) return def;
  const json& v = j.at(key);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!v.is_number_integer()) throw std::runtime_error(std::string(key) + ": expected an integer");
  }
  return v.get<T>();
}

SdEntry entry_from(const json& j) {
  SdEntry e;
  e.type = num<std::uint8_t>(j, "type");
  e.index1 = num<std::uint8_t>(j, "index1");
  e.index2 = num<std::uint8_t>(j, "index2");
  e.num_options1 = num<std::uint8_t>(j, "num1");
  e.num_options2 = num<std::uint8_t>(j, "num2");
  e.service_id = num<std::uint16_t>(j, "service");
  e.instance_id = num<std::uint16_t>(j, "instance");
  e.major_version = num<std::uint8_t>(j, "major");
  e.ttl = num<std::uint32_t>(j, "ttl");
  e.minor_version = num<std::uint32_t>(j, "minor");
  e.eventgroup_id = num<std::uint16_t>(j, "eventgroup");
  e.counter = num<std::uint8_t>(j, "counter");
  e.initial_data_requested = num<bool>(j, "initial_data_requested");
  return e;
}

// `storage` owns the option data the returned option views.
SdOption option_from(const json& j, std::vector<std::vector<std::uint8_t>>& storage) {
  SdOption o;
  o.type = num<std::uint8_t>(j, "type");
  if (is_endpoint_option_type(o.type)) {
    if (!parse_ip_address(j.at("address").get<std::string>(), o.endpoint.address))
      throw std::runtime_error("bad address in option");
    o.endpoint.proto = static_cast<L4Proto>(num<int>(j, "proto", 0x11));
    o.endpoint.port = num<std::uint16_t>(j, "port");
  } else if (o.type == 0x02) {
    o.priority = num<std::uint16_t>(j, "priority");
    o.weight = num<std::uint16_t>(j, "weight");
  } else if (o.type == 0x01) {
    std::vector<std::string> items = j.at("config").get<std::vector<std::string>>();
    std::vector<std::string_view> views(items.begin(), items.end());
    storage.emplace_back();
    if (!encode_config_strings(views, storage.back())) throw std::runtime_error("bad config strings");
    o.data = storage.back();
  } else {
    storage.push_back(bytes_from_hex(num<std::string>(j, "data")));
    o.data = storage.back();
  }
  return o;
}

std::vector<std::uint8_t> sd_payload_from(const json& s) {
  std::vector<std::vector<std::uint8_t>> storage;
  storage.reserve(64);  // option views point into it: no reallocation
  std::vector<SdEntry> entries;
  std::vector<SdOption> options;
  for (const auto& e : s.value("entries", json::array())) entries.push_back(entry_from(e));
  for (const auto& o : s.value("options", json::array())) options.push_back(option_from(o, storage));
  std::vector<std::uint8_t> payload(65536);
  ByteWriter w(payload);
  if (!write_sd_payload(w, num<std::uint8_t>(s, "flags"), entries, options))
    throw std::runtime_error("cannot encode SD payload");
  payload.resize(w.size());
  return payload;
}

}  // namespace

std::vector<std::uint8_t> bytes_from_hex(std::string_view text) {
  auto v = from_hex(text);
  if (!v) throw std::runtime_error("bad hex: " + std::string(text));
  return *v;
}

json datagram_to_json(ByteSpan datagram) {
  json msgs = json::array();
  json out;
  DatagramIterator it(datagram);
  while (!it.done()) {
    auto m = it.next();
    if (!m) {
      out["error"] = std::string(to_string(m.error()));
      break;
    }
    msgs.push_back(message_json(*m));
  }
  out["messages"] = msgs;
  return out;
}

std::vector<std::uint8_t> message_from_json(const json& j) {
  Header h;
  h.service_id = num<std::uint16_t>(j, "service");
  h.method_id = num<std::uint16_t>(j, "method");
  h.client_id = num<std::uint16_t>(j, "client");
  h.session_id = num<std::uint16_t>(j, "session");
  h.protocol_version = num<std::uint8_t>(j, "protocol_version", kProtocolVersion);
  h.interface_version = num<std::uint8_t>(j, "interface_version");
  h.message_type = static_cast<MessageType>(num<int>(j, "message_type"));
  h.return_code = num<std::uint8_t>(j, "return_code");
  std::vector<std::uint8_t> payload;
  if (j.contains("sd")) {
    payload = sd_payload_from(j.at("sd"));
  } else if (j.contains("tp")) {
    const json& t = j.at("tp");
    const auto data = bytes_from_hex(num<std::string>(t, "data"));
    payload.resize(4 + data.size());
    ByteWriter w(payload);
    if (!write_tp_header(w, num<std::uint32_t>(t, "offset"), num<bool>(t, "more")) || !w.bytes(data))
      throw std::runtime_error("cannot encode TP header");
  } else {
    payload = bytes_from_hex(num<std::string>(j, "payload"));
  }
  std::vector<std::uint8_t> out(kHeaderSize + payload.size());
  ByteWriter w(out);
  if (!write_message(w, h, payload)) throw std::runtime_error("cannot encode message");
  if (j.contains("length_override")) store_be32(out.data() + 4, num<std::uint32_t>(j, "length_override"));
  return out;
}

namespace {
constexpr std::size_t kMaxJsonSegmentSize = (65507 - kHeaderSize - kTpHeaderSize) / 16 * 16;  // 65,472
}  // namespace

std::vector<std::vector<std::uint8_t>> datagrams_from_json(const json& j) {
  std::vector<std::vector<std::uint8_t>> out;
  if (j.contains("segment_size")) {
    const auto whole = message_from_json(j.at("messages").at(0));
    auto parsed = parse_message(whole);
    if (!parsed) throw std::runtime_error("cannot segment");
    // A segment travels in one UDP datagram: at most 65,507 bytes of UDP
    // payload less the SOME/IP and TP headers, rounded down to 16. Anything
    // larger is refused before a buffer of that size is allocated.
    const auto segment_size = num<std::size_t>(j, "segment_size");
    if (segment_size < 16 || segment_size > kMaxJsonSegmentSize)
      throw std::runtime_error("segment_size: must be 16.." + std::to_string(kMaxJsonSegmentSize));
    TpSegmenter seg(parsed->header, parsed->payload, segment_size);
    std::vector<std::uint8_t> buf(seg.max_segment_message_size());
    while (!seg.done()) {
      ByteWriter w(buf);
      if (!seg.write_next(w)) throw std::runtime_error("cannot segment");
      out.emplace_back(w.written().begin(), w.written().end());
    }
    return out;
  }
  std::vector<std::uint8_t> dgram;
  for (const auto& m : j.at("messages")) {
    const auto b = message_from_json(m);
    dgram.insert(dgram.end(), b.begin(), b.end());
  }
  out.push_back(std::move(dgram));
  return out;
}

json reassemble_to_json(std::span<const std::vector<std::uint8_t>> datagrams) {
  TpReassembler r;
  const Endpoint peer{IpAddress::v4(10, 0, 0, 2), 30509, L4Proto::kUdp};
  json statuses = json::array();
  json result;
  for (const auto& bytes : datagrams) {
    DatagramIterator it(bytes);
    while (!it.done()) {
      auto m = it.next();
      if (!m) {
        statuses.push_back(std::string(to_string(m.error())));
        break;
      }
      auto seg = parse_tp_segment(*m);
      if (!seg) {
        statuses.push_back(std::string(to_string(seg.error())));
        continue;
      }
      auto o = r.on_segment(TimePoint::from_ns(0), peer, *seg);
      if (!o) {
        statuses.push_back(std::string(to_string(o.error())));
        continue;
      }
      if (o->status == TpReassembler::Status::kComplete) {
        statuses.push_back("complete");
        result = datagram_to_json(o->message);
      } else {
        statuses.push_back(o->status == TpReassembler::Status::kDuplicate ? "duplicate" : "incomplete");
      }
    }
  }
  return json{{"status", statuses}, {"result", result}};
}

}  // namespace layersec::someip
