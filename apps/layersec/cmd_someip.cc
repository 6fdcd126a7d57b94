// Hidden `layersec someip` helper commands used by the interop tests
// (tests/cli/someip_*.sh): decode a datagram to JSON, encode JSON to a
// datagram, wrap datagrams in a classic pcap (Ethernet/IPv4/UDP with correct
// checksums) for tshark, and run two SD nodes in simulated time writing their
// SD traffic to a pcap.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/net/frame.h"
#include "layersec/net/pcap.h"
#include "layersec/base/hex.h"
#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_message.h"
#include "layersec/someip/service_discovery.h"
#include "layersec/someip/tp.h"

namespace layersec::app {
namespace {

using nlohmann::json;
using namespace layersec::someip;

// ---- JSON <-> messages -------------------------------------------------------

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

json decode_datagram(ByteSpan d) {
  json msgs = json::array();
  json out;
  DatagramIterator it(d);
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

template <class T>
T num(const json& j, const char* key, T def = T{}) {
  return j.contains(key) ? j.at(key).get<T>() : def;
}

std::vector<std::uint8_t> unhex(const std::string& s) {
  auto v = from_hex(s);
  if (!v) throw std::runtime_error("bad hex: " + s);
  return *v;
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
    storage.push_back(unhex(num<std::string>(j, "data")));
    o.data = storage.back();
  }
  return o;
}

std::vector<std::uint8_t> encode_message(const json& j) {
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
    const json& s = j.at("sd");
    std::vector<std::vector<std::uint8_t>> storage;
    storage.reserve(64);
    std::vector<SdEntry> entries;
    std::vector<SdOption> options;
    for (const auto& e : s.value("entries", json::array())) entries.push_back(entry_from(e));
    for (const auto& o : s.value("options", json::array())) options.push_back(option_from(o, storage));
    payload.resize(65536);
    ByteWriter w(payload);
    if (!write_sd_payload(w, num<std::uint8_t>(s, "flags"), entries, options))
      throw std::runtime_error("cannot encode SD payload");
    payload.resize(w.size());
  } else if (j.contains("tp")) {
    const json& t = j.at("tp");
    const auto data = unhex(num<std::string>(t, "data"));
    payload.resize(4 + data.size());
    ByteWriter w(payload);
    if (!write_tp_header(w, num<std::uint32_t>(t, "offset"), num<bool>(t, "more")) || !w.bytes(data))
      throw std::runtime_error("cannot encode TP header");
  } else {
    payload = unhex(num<std::string>(j, "payload"));
  }
  std::vector<std::uint8_t> out(kHeaderSize + payload.size());
  ByteWriter w(out);
  if (!write_message(w, h, payload)) throw std::runtime_error("cannot encode message");
  if (j.contains("length_override")) store_be32(out.data() + 4, j.at("length_override").get<std::uint32_t>());
  return out;
}

// ---- pcap ---------------------------------------------------------------------

struct Frame {
  std::int64_t ts_ns = 0;
  IpAddress src, dst;
  std::uint16_t sport = 0, dport = 0;
  std::vector<std::uint8_t> udp_payload;
};

// Ethernet/IPv4/UDP around the datagram, with correct checksums, built by the
// net module. Hosts get locally administered MACs 02:00:<IPv4>; a multicast
// destination maps to 01:00:5e + the low 23 bits (RFC 1112 §6.4).
std::vector<std::uint8_t> ethernet_frame(const Frame& f) {
  auto v4 = [](const IpAddress& a) {
    return net::Ipv4Address::from_octets(a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]);
  };
  auto host_mac = [](const IpAddress& a) {
    return net::MacAddress{{0x02, 0x00, a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]}};
  };
  net::UdpFrameSpec spec;
  spec.dst_mac = f.dst.is_multicast() ? net::multicast_mac(v4(f.dst)) : host_mac(f.dst);
  spec.src_mac = host_mac(f.src);
  spec.src = {v4(f.src), f.sport};
  spec.dst = {v4(f.dst), f.dport};
  spec.identification = 1;
  spec.pad_to_minimum = false;
  std::vector<std::uint8_t> b(14 + 20 + 8 + f.udp_payload.size());
  auto n = net::build_udp_frame(spec, f.udp_payload, b);
  if (!n) throw std::runtime_error("cannot build an Ethernet/IPv4/UDP frame around the message");
  b.resize(*n);
  return b;
}

void write_pcap(const std::string& path, const std::vector<Frame>& frames) {
  std::string why;
  auto w = net::PcapWriter::open(path, net::PcapPrecision::kMicro, Duration::zero(), &why);
  if (!w) throw std::runtime_error("cannot write " + path + ": " + why);
  for (const auto& f : frames) {
    const auto b = ethernet_frame(f);
    w->record(TimePoint::from_ns(f.ts_ns), b);
  }
  w->close();
}

// Largest "@FILE" or stdin input (a JSON service table or a datagram).
constexpr std::size_t kMaxInput = 16 << 20;

// "-" (stdin, bounded), "@FILE" (base/file.h: regular files only, bounded)
// or the argument itself. `what` names the argument in errors.
std::string read_all(const std::string& what, const std::string& arg) {
  if (arg == "-") {
    std::string text;
    char buf[65536];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(std::cin.gcount()));
      if (text.size() > kMaxInput) throw std::runtime_error(what + ": stdin: larger than " + std::to_string(kMaxInput) + " bytes");
    }
    return text;
  }
  if (!arg.empty() && arg[0] == '@') {
    try {
      return read_regular_file(arg.substr(1), kMaxInput);
    } catch (const FileError& e) {
      throw std::runtime_error(what + ": " + e.what());
    }
  }
  return arg;
}

// ---- simulated SD run ------------------------------------------------------------

void sd_simulation(const std::string& out_path, int duration_ms, std::uint64_t seed) {
  const Endpoint group{IpAddress::v4(224, 224, 224, 245), kSdPort, L4Proto::kUdp};
  const Endpoint a_sd{IpAddress::v4(10, 0, 0, 1), kSdPort, L4Proto::kUdp};
  const Endpoint b_sd{IpAddress::v4(10, 0, 0, 2), kSdPort, L4Proto::kUdp};
  SeededRandom rnd(seed);
  ServiceDiscovery a(SdConfig{a_sd, group}, rnd);
  ServiceDiscovery b(SdConfig{b_sd, group}, rnd);
  SdTiming t;
  t.initial_delay_min = Duration::milliseconds(10);
  t.initial_delay_max = Duration::milliseconds(50);
  t.repetitions_base_delay = Duration::milliseconds(30);
  t.repetitions_max = 3;
  t.cyclic_offer_delay = Duration::milliseconds(1000);
  t.ttl = 3;
  SdServerConfig sc;
  sc.service_id = 0x1234;
  sc.instance_id = 0x0001;
  sc.major_version = 1;
  sc.minor_version = 0;
  sc.timing = t;
  // The server comes up later than the client, so the capture shows finds.
  sc.timing.initial_delay_min = Duration::milliseconds(100);
  sc.timing.initial_delay_max = Duration::milliseconds(200);
  sc.udp_endpoint = Endpoint{a_sd.address, 30509, L4Proto::kUdp};
  sc.eventgroups.push_back({0x0010, Endpoint{IpAddress::v4(239, 1, 1, 1), 30600, L4Proto::kUdp}});
  auto& server = a.add_server(sc);
  SdClientConfig cc;
  cc.service_id = 0x1234;
  cc.timing = t;
  cc.udp_endpoint = Endpoint{b_sd.address, 40001, L4Proto::kUdp};
  cc.eventgroups = {0x0010};
  auto& client = b.add_client(cc);

  std::vector<Frame> frames;
  json events = json::array();
  TimePoint now = TimePoint::from_ns(0);
  struct Pending {
    ServiceDiscovery* from;
    Endpoint local;
    SdActions actions;
  };
  std::vector<Pending> queue;
  auto record = [&](ServiceDiscovery* from, const Endpoint& local, SdActions& acts) {
    for (const auto& e : acts.events)
      events.push_back(json{{"t_ms", now.ns() / 1000000}, {"node", local.address.to_string()},
                            {"event", std::string(to_string(e.kind))}, {"service", e.service_id},
                            {"instance", e.instance_id}, {"eventgroup", e.eventgroup_id}});
    acts.events.clear();
    queue.push_back(Pending{from, local, std::move(acts)});
  };
  auto drain = [&]() {
    while (!queue.empty()) {
      Pending p = std::move(queue.front());
      queue.erase(queue.begin());
      for (auto& d : p.actions.datagrams) {
        Frame f;
        f.ts_ns = now.ns();
        f.src = p.local.address;
        f.dst = d.destination.address;
        f.sport = kSdPort;
        f.dport = d.destination.port;
        f.udp_payload = d.bytes;
        frames.push_back(f);
        ServiceDiscovery* to = p.from == &a ? &b : &a;
        const Endpoint to_local = p.from == &a ? b_sd : a_sd;
        if (d.multicast || d.destination == to_local) {
          SdActions acts;
          to->on_datagram(now, d.bytes, p.local, d.multicast, acts);
          record(to, to_local, acts);
        }
      }
    }
  };
  {
    SdActions acts;
    a.start_offer(now, server);
    b.request(now, client, acts);
    record(&b, b_sd, acts);
    drain();
  }
  const TimePoint end = TimePoint::from_ns(0) + Duration::milliseconds(duration_ms);
  while (true) {
    const TimePoint next = std::min(a.next_deadline(), b.next_deadline());
    if (next > end) break;
    now = next;
    SdActions aa, bb;
    a.on_timer(now, aa);
    record(&a, a_sd, aa);
    b.on_timer(now, bb);
    record(&b, b_sd, bb);
    drain();
  }
  {  // orderly shutdown: StopSubscribe, then StopOffer
    now = end;
    SdActions acts;
    b.release(now, client, acts);
    record(&b, b_sd, acts);
    drain();
    SdActions acts2;
    a.stop_offer(now, server, acts2);
    record(&a, a_sd, acts2);
    drain();
  }
  write_pcap(out_path, frames);
  std::cout << json{{"frames", frames.size()}, {"events", events}}.dump() << "\n";
}

// A ServiceTable from JSON: {"services":[{"id":N,"major":N,"methods":{"1":"rr","2":"ff"}}]}.
class JsonServiceTable final : public ServiceTable {
 public:
  explicit JsonServiceTable(const json& j) : j_(j) {}
  bool has_service(std::uint16_t s) const override { return find(s) != nullptr; }
  std::uint8_t interface_version(std::uint16_t s) const override {
    const json* e = find(s);
    return e ? e->value("major", std::uint8_t{1}) : 0;
  }
  MethodKind method(std::uint16_t s, std::uint16_t m) const override {
    const json* e = find(s);
    if (!e || !e->contains("methods")) return MethodKind::kNone;
    const auto key = std::to_string(m);
    if (!e->at("methods").contains(key)) return MethodKind::kNone;
    return e->at("methods").at(key).get<std::string>() == "ff" ? MethodKind::kFireAndForget
                                                              : MethodKind::kRequestResponse;
  }

 private:
  const json* find(std::uint16_t s) const {
    for (const auto& e : j_.at("services"))
      if (e.at("id").get<int>() == s) return &e;
    return nullptr;
  }
  json j_;
};

std::string_view action_name(RxAction a) {
  switch (a) {
    case RxAction::kDeliver: return "deliver";
    case RxAction::kReplyError: return "reply-error";
    case RxAction::kDrop: return "drop";
  }
  return "?";
}

// Applies the server-side error policy to every message of a datagram.
json respond(const JsonServiceTable& table, ByteSpan d) {
  json verdicts = json::array();
  auto add = [&](const RxVerdict& v, const Header* h) {
    json j{{"action", std::string(action_name(v.action))}, {"reason", std::string(to_string(v.reason))}};
    if (v.action == RxAction::kReplyError && h != nullptr) {
      std::uint8_t buf[kHeaderSize];
      ByteWriter w(buf);
      if (write_error_response(w, *h, v.code)) j["response"] = to_hex(w.written());
      j["return_code"] = static_cast<int>(v.code);
    }
    verdicts.push_back(j);
  };
  DatagramIterator it(d);
  std::size_t consumed = 0;
  while (!it.done()) {
    auto m = it.next();
    if (!m) {
      const ByteSpan rest = d.subspan(consumed);
      const RxVerdict v = check_malformed(rest, m.error());
      auto h = read_raw_header(rest);
      add(v, h ? &*h : nullptr);
      break;
    }
    consumed += m->bytes.size();
    add(check_server_message(m->header, table), &m->header);
  }
  return json{{"verdicts", verdicts}};
}

const CommandRegistration kRegistration(900, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("someip", "SOME/IP codec helpers for interop tests");
  cmd->group("");  // hidden
  cmd->require_subcommand(1);

  auto* dec = cmd->add_subcommand("decode", "Decode a datagram (hex) to JSON");
  static std::string dec_hex;
  dec->add_option("hex", dec_hex, "datagram as hex, '-' for stdin")->required();
  dec->callback([] {
    std::string text = read_all("hex", dec_hex);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    const auto bytes = from_hex(text);
    if (!bytes) throw std::runtime_error("bad hex");
    std::cout << decode_datagram(*bytes).dump() << "\n";
  });

  auto* enc = cmd->add_subcommand("encode", "Encode JSON ({\"messages\":[...]}) to a datagram (hex)");
  static std::string enc_json;
  enc->add_option("json", enc_json, "JSON text, @file or '-' for stdin")->required();
  enc->callback([] {
    const json j = json::parse(read_all("json", enc_json));
    if (j.contains("segment_size")) {
      // One message cut into SOME/IP-TP segments: one datagram (hex) per line.
      const json& m = j.at("messages").at(0);
      const auto whole = encode_message(m);
      auto parsed = parse_message(whole);
      if (!parsed) throw std::runtime_error("cannot segment");
      TpSegmenter seg(parsed->header, parsed->payload, j.at("segment_size").get<std::size_t>());
      std::vector<std::uint8_t> buf(seg.max_segment_message_size());
      while (!seg.done()) {
        ByteWriter w(buf);
        if (!seg.write_next(w)) throw std::runtime_error("cannot segment");
        std::cout << to_hex(w.written()) << "\n";
      }
      return;
    }
    std::vector<std::uint8_t> dgram;
    for (const auto& m : j.at("messages")) {
      const auto b = encode_message(m);
      dgram.insert(dgram.end(), b.begin(), b.end());
    }
    std::cout << to_hex(dgram) << "\n";
  });

  auto* pcap = cmd->add_subcommand("pcap", "Write datagrams into a pcap (Ethernet/IPv4/UDP)");
  static std::string pcap_out;
  static std::vector<std::string> pcap_frames;
  pcap->add_option("--out", pcap_out, "pcap file")->required()->check(kOutputFile);
  pcap->add_option("frames", pcap_frames, "SRC_IP:SPORT>DST_IP:DPORT=HEX per frame")->required();
  pcap->callback([] {
    std::vector<Frame> frames;
    std::int64_t ts = 1'000'000'000;
    for (const auto& spec : pcap_frames) {
      const auto gt = spec.find('>');
      const auto eq = spec.find('=');
      if (gt == std::string::npos || eq == std::string::npos || eq < gt)
        throw std::runtime_error("frame spec must be SRC_IP:SPORT>DST_IP:DPORT=HEX: " + spec);
      auto parse_ep = [](const std::string& s, IpAddress& a, std::uint16_t& port) {
        const auto c = s.rfind(':');
        if (c == std::string::npos || !parse_ip_address(s.substr(0, c), a) || a.family != IpFamily::kV4)
          throw std::runtime_error("bad IPv4 endpoint: " + s);
        if (const std::string why = check_whole_in(s.substr(c + 1), 1, 65535); !why.empty())
          throw std::runtime_error("frame spec port: " + why);
        port = static_cast<std::uint16_t>(std::stoul(s.substr(c + 1)));
      };
      Frame f;
      parse_ep(spec.substr(0, gt), f.src, f.sport);
      parse_ep(spec.substr(gt + 1, eq - gt - 1), f.dst, f.dport);
      f.udp_payload = unhex(spec.substr(eq + 1));
      f.ts_ns = ts;
      ts += 1'000'000;
      frames.push_back(std::move(f));
    }
    write_pcap(pcap_out, frames);
  });

  auto* rsp = cmd->add_subcommand("respond", "Apply the server error policy to a datagram; print verdicts and error responses");
  static std::string rsp_services, rsp_hex;
  rsp->add_option("--services", rsp_services, "JSON service table")->required();
  rsp->add_option("hex", rsp_hex, "datagram as hex")->required();
  rsp->callback([] {
    const JsonServiceTable table(json::parse(read_all("--services", rsp_services)));
    const auto bytes = unhex(rsp_hex);
    std::cout << respond(table, bytes).dump() << "\n";
  });

  auto* re = cmd->add_subcommand("reassemble", "Feed TP segments (hex datagrams) to the reassembler; print the result as JSON");
  static std::vector<std::string> re_segments;
  re->add_option("segments", re_segments, "datagrams as hex")->required();
  re->callback([] {
    TpReassembler r;
    const Endpoint peer{IpAddress::v4(10, 0, 0, 2), 30509, L4Proto::kUdp};
    json statuses = json::array();
    json result;
    for (const auto& h : re_segments) {
      const auto bytes = unhex(h);
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
          result = decode_datagram(o->message);
        } else {
          statuses.push_back(o->status == TpReassembler::Status::kDuplicate ? "duplicate" : "incomplete");
        }
      }
    }
    std::cout << json{{"status", statuses}, {"result", result}}.dump() << "\n";
  });

  auto* sim = cmd->add_subcommand("sd-sim", "Run an SD server and client in simulated time; write their SD traffic to a pcap");
  static std::string sim_out;
  static int sim_ms = 3500;
  static std::uint64_t sim_seed = 1;
  sim->add_option("--out", sim_out, "pcap file")->required()->check(kOutputFile);
  sim->add_option("--duration-ms", sim_ms, "simulated duration")->check(whole_in(1, 3'600'000));
  sim->add_option("--seed", sim_seed, "random seed for the initial delays")->check(whole_in(0, ~std::uint64_t{0}));
  sim->callback([] { sd_simulation(sim_out, sim_ms, sim_seed); });
});

}  // namespace
}  // namespace layersec::app
