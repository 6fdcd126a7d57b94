// Completing what a TAP with IFF_VNET_HDR and TUNSETOFFLOAD (TSO4, TSO6,
// CSUM) leaves to "the device", in user space: the MACsec link (macsec/link.h
// TapLink) reads up to 64 KiB TCP segments with one read and splits them into
// MTU-sized frames here before protecting each, instead of one read per frame.
//
// Input: the virtio-net header the tun driver puts in front of each frame
// (VnetHeader, native byte order: little-endian hosts) and the frame.
//   gso_type none: with NEEDS_CSUM the checksum over [csum_start, end) is
//     stored at csum_start + csum_offset (the field holds the pseudo-header
//     sum, as for any device; a computed 0 is sent as 0xFFFF); one frame out.
//   TCPv4 / TCPv6 (no ECN bit): Ethernet II without tags, IPv4 without
//     fragmentation (options allowed) or IPv6 with TCP as the next header,
//     lengths consistent with the frame; split into segments of at most
//     gso_size payload octets: headers copied, IPv4 total length,
//     identification (+1 per segment) and header checksum, IPv6 payload
//     length, TCP sequence number (+gso_size per segment), FIN and PSH on the
//     last segment only, CWR on the first only, and the TCP checksum computed
//     over each segment's own pseudo-header. Segments go out in order.
// Anything else (UDP GSO, the ECN bit, tags, IP options on IPv6, lengths that
// do not add up, a segment longer than max_frame) is refused with a typed
// reason and nothing is emitted. The kernel is the only writer of these
// headers; the checks keep a bug there from becoming a bad frame here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::net {

// struct virtio_net_hdr (linux/virtio_net.h), 10 octets.
struct VnetHeader {
  std::uint8_t flags = 0;
  std::uint8_t gso_type = 0;
  std::uint16_t hdr_len = 0;
  std::uint16_t gso_size = 0;
  std::uint16_t csum_start = 0;
  std::uint16_t csum_offset = 0;
};
static_assert(sizeof(VnetHeader) == 10);

inline constexpr std::uint8_t kVnetNeedsCsum = 1;
inline constexpr std::uint8_t kVnetGsoNone = 0;
inline constexpr std::uint8_t kVnetGsoTcpV4 = 1;
inline constexpr std::uint8_t kVnetGsoUdp = 3;
inline constexpr std::uint8_t kVnetGsoTcpV6 = 4;
inline constexpr std::uint8_t kVnetGsoEcn = 0x80;

enum class OffloadError : std::uint8_t {
  kBadChecksumOffsets,  // csum_start/csum_offset outside the frame
  kUnsupportedGso,      // UDP GSO, the ECN bit, an unknown type, gso_size 0
  kNotTcpIp,            // a TCP GSO frame that is not Ethernet II + IPv4/IPv6 + TCP
  kMalformed,           // header lengths that do not add up to the frame
  kSegmentTooLong,      // a segment (or the frame) longer than max_frame
};
const char* to_string(OffloadError e);

// Receives the finished frames, in order (a view valid during the call).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void frame(ByteSpan f) = 0;
};

// Finishes `frame` as described in the file comment and hands the result to
// `sink`: `frame` itself (its checksum completed in place) or segments built
// in `scratch` (which must hold max_frame octets). Returns how many frames
// went to the sink; on error none did.
Result<std::size_t, OffloadError> complete_offload(const VnetHeader& h, MutableByteSpan frame,
                                                   MutableByteSpan scratch, std::size_t max_frame,
                                                   FrameSink& sink);

}  // namespace layersec::net
