// Classic BPF socket filters for PacketSocket (SO_ATTACH_FILTER): the kernel
// runs the program on every frame before it is queued on the socket and
// keeps only as many octets as it returns, so traffic a socket does not need
// is never copied to user space.
//
// lower_link_filter builds the filter of a MACsec link's lower socket
// (macsec/link.h TapLink):
//   - frames to `unicast` or to a group address, whose EtherType (at octet
//     12, or at 16 behind one 0x8100/0x88A8 tag still in the data: the kernel
//     moves the outer tag to metadata before packet sockets see a frame) is
//     one of `full_types`: delivered whole;
//   - every other frame: its first `header_octets` only (addresses, up to two
//     tags and the EtherType), so the link still counts it where it always
//     did (rx_not_for_us, rx_not_macsec / InPktsNoTag, rx_control) without
//     its payload crossing into user space. header_octets 0 drops them.
// Frames shorter than 14 octets (or a tagged one shorter than 18) are headers
// themselves and get header_octets too: a load beyond the end of a frame
// would make the kernel drop it silently, so the program checks the length
// before every load.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/net/frame.h"

namespace layersec::net {

// One classic BPF instruction (the layout of struct sock_filter).
struct BpfInstruction {
  std::uint16_t code = 0;
  std::uint8_t jt = 0;
  std::uint8_t jf = 0;
  std::uint32_t k = 0;
  bool operator==(const BpfInstruction&) const = default;
};

// Octets a "header only" frame keeps: DA, SA, two tags, EtherType.
inline constexpr std::uint32_t kFilterHeaderOctets = 22;
// What a filter returns for a frame to be delivered whole.
inline constexpr std::uint32_t kFilterWholeFrame = 0x40000;

struct LowerLinkFilterSpec {
  std::optional<MacAddress> unicast;        // unicast frames to other MACs are headers only; nullopt: any
  std::vector<std::uint16_t> full_types;    // at most 16
  std::uint32_t header_octets = kFilterHeaderOctets;
};

// The program (see the file comment). Throws std::invalid_argument for more
// than 16 types.
std::vector<BpfInstruction> lower_link_filter(const LowerLinkFilterSpec& spec);

}  // namespace layersec::net
