#include "layersec/net/udp_pcap.h"

#include <stdexcept>

#include "layersec/net/pcap.h"

namespace layersec::net {
namespace {

MacAddress host_mac(Ipv4Address a) {
  const auto octet = [&](int shift) { return static_cast<std::uint8_t>(a.value >> shift); };
  return MacAddress{{0x02, 0x00, octet(24), octet(16), octet(8), octet(0)}};
}

}  // namespace

std::vector<std::uint8_t> udp_capture_frame(const UdpCaptureRecord& r) {
  UdpFrameSpec spec;
  spec.dst_mac = r.dst.address.is_multicast() ? multicast_mac(r.dst.address) : host_mac(r.dst.address);
  spec.src_mac = host_mac(r.src.address);
  spec.src = r.src;
  spec.dst = r.dst;
  spec.identification = 1;
  spec.pad_to_minimum = false;
  std::vector<std::uint8_t> b(14 + 20 + 8 + r.payload.size());
  auto n = build_udp_frame(spec, r.payload, b);
  if (!n) throw std::runtime_error("cannot build an Ethernet/IPv4/UDP frame around the message");
  b.resize(*n);
  return b;
}

void write_udp_pcap(const std::string& path, std::span<const UdpCaptureRecord> records) {
  std::string why;
  auto w = PcapWriter::open(path, PcapPrecision::kMicro, Duration::zero(), &why);
  if (!w) throw std::runtime_error("cannot write " + path + ": " + why);
  for (const auto& r : records) {
    const auto b = udp_capture_frame(r);
    w->record(r.at, b);
  }
  w->close();
}

}  // namespace layersec::net
