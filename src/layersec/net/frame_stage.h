// FrameStage: a stage between a node's own Ethernet framing and its
// LinkFilter (net/link_filter.h) that may hold frames back and decide when
// they leave: the TSN first hop of the raw SOME/IP path (tsn/first_hop_stage.h:
// classify, tag, shape). The transport owns the order
//
//   outbound   node frame -> stage.outbound (may queue) ... later, in the
//              stage's own time, transmit(plain) -> LinkFilter::outbound
//              (MACsec protect: PNs follow the order frames leave the
//              stage, which is the wire order) -> socket
//   inbound    socket -> LinkFilter::inbound -> stage.inbound (in place)
//              -> the transport's parser
//
// connect() gives the stage the transport's transmit function once;
// connect(nullptr) detaches it (the transport is going away; frames still
// queued are then dropped and counted by the stage). overhead() is what
// outbound adds to a frame at most (4 for a VLAN tag), for the transport's
// MTU check.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "layersec/base/bytes.h"

namespace layersec::net {

class FrameStage {
 public:
  // Filter + send of one plain frame; false when it did not go out (counted
  // by the transport).
  using Transmit = std::function<bool(ByteSpan plain)>;

  virtual ~FrameStage() = default;
  virtual void connect(Transmit transmit) = 0;
  // Takes (a copy of) the frame the node built; false when the stage
  // refused it (counted by the stage).
  virtual bool outbound(ByteSpan plain) = 0;
  // A received plain frame, possibly rewritten in place; the frame to hand
  // up (a view into `plain`), or nullopt when it must be dropped (counted by
  // the stage).
  virtual std::optional<MutableByteSpan> inbound(MutableByteSpan plain) = 0;
  [[nodiscard]] virtual std::size_t overhead() const = 0;
};

}  // namespace layersec::net
