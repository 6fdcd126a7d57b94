// The virtio-net header (struct virtio_net_hdr, linux/virtio_net.h) that a
// TAP opened with IFF_VNET_HDR (net/tap.h) puts in front of every frame, in
// both directions, and the typed reasons a header or its frame is refused
// (net/offload.h completes and builds them).
//
// Byte order: the tun driver uses the "legacy virtio" order, the host's own,
// unless TUNSETVNETLE/TUNSETVNETBE says otherwise; layersec sets neither, so
// the fields are in native order on every host (little-endian on x86).
#pragma once

#include <cstddef>
#include <cstdint>

namespace layersec::net {

// struct virtio_net_hdr, 10 octets (TUNSETVNETHDRSZ is set to this size).
struct VnetHeader {
  std::uint8_t flags = 0;
  std::uint8_t gso_type = 0;
  std::uint16_t hdr_len = 0;
  std::uint16_t gso_size = 0;
  std::uint16_t csum_start = 0;
  std::uint16_t csum_offset = 0;
};
static_assert(sizeof(VnetHeader) == 10);

// flags
inline constexpr std::uint8_t kVnetNeedsCsum = 1;  // checksum over [csum_start, end) at csum_start + csum_offset
inline constexpr std::uint8_t kVnetDataValid = 2;  // the kernel already trusts the checksum (nothing to do)
// gso_type
inline constexpr std::uint8_t kVnetGsoNone = 0;
inline constexpr std::uint8_t kVnetGsoTcpV4 = 1;
inline constexpr std::uint8_t kVnetGsoUdp = 3;
inline constexpr std::uint8_t kVnetGsoTcpV6 = 4;
inline constexpr std::uint8_t kVnetGsoEcn = 0x80;

// Why a frame from the TAP was refused (dropped and counted per reason).
enum class OffloadError : std::uint8_t {
  kUnknownFlags,        // a flag bit other than NEEDS_CSUM / DATA_VALID
  kBadChecksumOffsets,  // csum_start/csum_offset outside the frame or inside the Ethernet header
  kUnsupportedGso,      // UDP GSO, the ECN bit, an unknown type, gso_size 0
  kNotTcpIp,            // a TCP GSO frame that is not Ethernet (+ at most two tags) + IPv4/IPv6 + TCP
  kMalformed,           // header lengths that do not add up to the frame, a fragment, too many segments
  kSegmentTooLong,      // a segment (or the frame) longer than the link carries
};
inline constexpr std::size_t kOffloadErrorCount = 6;
const char* to_string(OffloadError e);

}  // namespace layersec::net
