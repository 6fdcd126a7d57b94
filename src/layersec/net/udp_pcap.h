// UDP datagrams written into a classic pcap as Ethernet/IPv4/UDP frames with
// correct checksums, for captures another implementation decodes (tshark in
// tests/cli/someip_tshark.sh). Hosts get locally administered MACs
// 02:00:<IPv4 octets>; a multicast destination maps to 01:00:5e + the low
// 23 bits of the group (RFC 1112 §6.4). Frames are not padded to 60 bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/net/frame.h"

namespace layersec::net {

// One datagram and when it was sent.
struct UdpCaptureRecord {
  TimePoint at;
  Ipv4Endpoint src;
  Ipv4Endpoint dst;
  std::vector<std::uint8_t> payload;
};

// The Ethernet/IPv4/UDP frame around `r.payload` (IPv4 identification 1,
// DF set, TTL 64). Throws std::runtime_error if the payload does not fit.
[[nodiscard]] std::vector<std::uint8_t> udp_capture_frame(const UdpCaptureRecord& r);

// Writes `records` to `path` (created or truncated; microsecond pcap, times
// as given). Throws std::runtime_error("cannot write PATH: why") if the file
// cannot be opened, std::runtime_error from udp_capture_frame, and
// layersec::FileError if a write, the flush or the fsync failed.
void write_udp_pcap(const std::string& path, std::span<const UdpCaptureRecord> records);

}  // namespace layersec::net
