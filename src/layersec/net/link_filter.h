// LinkFilter: a layer that sits between a node's own Ethernet framing and the
// wire (a user-space MACsec SecY, for example), so a transport that frames
// its own packets (someip::RawTransport) can secure them without knowing how.
//
//   outbound(plain)  the frame the node built -> the frame to transmit, or
//                    nullopt when the filter refuses it (the filter counts
//                    why). The returned view stays valid until the next
//                    outbound() call.
//   inbound(wire)    a frame received from the wire -> the plain frame to
//                    hand up (a view into `wire` or into the filter), or
//                    nullopt when it must not be delivered (counted by the
//                    filter). There is no fallback to clear delivery.
//
// overhead() is how many bytes outbound() adds at most, so the transport can
// keep plain frames within the link MTU. wire_ether_type() is the EtherType
// frames carry on the wire (0x88E5 for MACsec), which a packet socket binds to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "layersec/base/bytes.h"

namespace layersec::net {

class LinkFilter {
 public:
  virtual ~LinkFilter() = default;
  virtual std::optional<ByteSpan> outbound(ByteSpan plain) = 0;
  virtual std::optional<ByteSpan> inbound(MutableByteSpan wire) = 0;
  [[nodiscard]] virtual std::size_t overhead() const = 0;
  [[nodiscard]] virtual std::uint16_t wire_ether_type() const = 0;
};

}  // namespace layersec::net
