// Hidden `layersec someip` helper commands used by the interop tests
// (tests/cli/someip_*.sh): decode a datagram to JSON, encode JSON to a
// datagram, wrap datagrams in a classic pcap (Ethernet/IPv4/UDP with correct
// checksums) for tshark, and run two SD nodes in simulated time writing their
// SD traffic to a pcap. The work is done by someip/message_json.h,
// someip/json_service_table.h, someip/sd_pair_sim.h and net/udp_pcap.h.
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/hex.h"
#include "layersec/net/udp_pcap.h"
#include "layersec/someip/address.h"
#include "layersec/someip/json_service_table.h"
#include "layersec/someip/message_json.h"
#include "layersec/someip/sd_pair_sim.h"

namespace layersec::app {
namespace {

using nlohmann::json;
using namespace layersec::someip;

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

net::Ipv4Endpoint v4_endpoint(const IpAddress& a, std::uint16_t port) {
  return {net::Ipv4Address::from_octets(a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]), port};
}

// "IP:PORT" of a frame spec, IPv4 only.
net::Ipv4Endpoint parse_frame_endpoint(const std::string& s) {
  IpAddress a;
  const auto c = s.rfind(':');
  if (c == std::string::npos || !parse_ip_address(s.substr(0, c), a) || a.family != IpFamily::kV4)
    throw std::runtime_error("bad IPv4 endpoint: " + s);
  if (const std::string why = check_whole_in(s.substr(c + 1), 1, 65535); !why.empty())
    throw std::runtime_error("frame spec port: " + why);
  return v4_endpoint(a, static_cast<std::uint16_t>(std::stoul(s.substr(c + 1))));
}

// SRC_IP:SPORT>DST_IP:DPORT=HEX frames, 1 ms apart from t = 1 s.
std::vector<net::UdpCaptureRecord> parse_frame_specs(const std::vector<std::string>& specs) {
  std::vector<net::UdpCaptureRecord> frames;
  TimePoint at = TimePoint::from_ns(1'000'000'000);
  for (const auto& spec : specs) {
    const auto gt = spec.find('>');
    const auto eq = spec.find('=');
    if (gt == std::string::npos || eq == std::string::npos || eq < gt)
      throw std::runtime_error("frame spec must be SRC_IP:SPORT>DST_IP:DPORT=HEX: " + spec);
    net::UdpCaptureRecord f;
    f.src = parse_frame_endpoint(spec.substr(0, gt));
    f.dst = parse_frame_endpoint(spec.substr(gt + 1, eq - gt - 1));
    f.payload = bytes_from_hex(spec.substr(eq + 1));
    f.at = at;
    at += Duration::milliseconds(1);
    frames.push_back(std::move(f));
  }
  return frames;
}

void sd_simulation(const std::string& out_path, int duration_ms, std::uint64_t seed) {
  const SdPairRun run = simulate_sd_pair(Duration::milliseconds(duration_ms), seed);
  std::vector<net::UdpCaptureRecord> frames;
  frames.reserve(run.datagrams.size());
  for (const auto& d : run.datagrams)
    frames.push_back({d.at, v4_endpoint(d.src, d.src_port), v4_endpoint(d.dst, d.dst_port), d.payload});
  net::write_udp_pcap(out_path, frames);
  std::cout << json{{"frames", frames.size()}, {"events", run.events}}.dump() << "\n";
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
    std::cout << datagram_to_json(*bytes).dump() << "\n";
  });

  auto* enc = cmd->add_subcommand("encode", "Encode JSON ({\"messages\":[...]}) to a datagram (hex)");
  static std::string enc_json;
  enc->add_option("json", enc_json, "JSON text, @file or '-' for stdin")->required();
  enc->callback([] {
    // One datagram, or with "segment_size" one SOME/IP-TP segment, per line.
    for (const auto& d : datagrams_from_json(json::parse(read_all("json", enc_json)))) std::cout << to_hex(d) << "\n";
  });

  auto* pcap = cmd->add_subcommand("pcap", "Write datagrams into a pcap (Ethernet/IPv4/UDP)");
  static std::string pcap_out;
  static std::vector<std::string> pcap_frames;
  pcap->add_option("--out", pcap_out, "pcap file")->required()->check(kOutputFile);
  pcap->add_option("frames", pcap_frames, "SRC_IP:SPORT>DST_IP:DPORT=HEX per frame")->required();
  pcap->callback([] { net::write_udp_pcap(pcap_out, parse_frame_specs(pcap_frames)); });

  auto* rsp = cmd->add_subcommand("respond", "Apply the server error policy to a datagram; print verdicts and error responses");
  static std::string rsp_services, rsp_hex;
  rsp->add_option("--services", rsp_services, "JSON service table")->required();
  rsp->add_option("hex", rsp_hex, "datagram as hex")->required();
  rsp->callback([] {
    const JsonServiceTable table(json::parse(read_all("--services", rsp_services)));
    const auto bytes = bytes_from_hex(rsp_hex);
    std::cout << server_verdicts_json(table, bytes).dump() << "\n";
  });

  auto* re = cmd->add_subcommand("reassemble", "Feed TP segments (hex datagrams) to the reassembler; print the result as JSON");
  static std::vector<std::string> re_segments;
  re->add_option("segments", re_segments, "datagrams as hex")->required();
  re->callback([] {
    std::vector<std::vector<std::uint8_t>> datagrams;
    for (const auto& h : re_segments) datagrams.push_back(bytes_from_hex(h));
    std::cout << reassemble_to_json(datagrams).dump() << "\n";
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
