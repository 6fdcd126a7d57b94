// Classification and tagging of Ethernet frames at an egress port (the I/O
// side of the tsn module: it reads frames with the net codecs).
//
// A frame that already carries an 802.1Q/802.1ad tag keeps it: its outer
// tag's PCP picks the traffic class. An untagged frame is matched against the
// stream identification rules (stream_id.h); a match gets the rule's C-tag
// (TPID 0x8100, the rule's PCP and VID) inserted after the source address,
// so traffic from unmodified applications is classified at the first hop. An
// untagged frame no rule matches goes out untagged in the class of
// `default_pcp` (802.1Q §6.9.3: the port's default priority).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/tsn/stream_id.h"
#include "layersec/tsn/traffic_class.h"

namespace layersec::tsn {

// The fields stream identification looks at; kTruncated/kLengthFrame/... for
// a frame that is not Ethernet II. IPv4 fields are filled only for a valid
// IPv4 header (checksum verified) that is not a fragment; ports for UDP/TCP.
[[nodiscard]] Result<StreamKey, net::FrameError> stream_key(ByteSpan frame);

// Inserts `tag` after the source address (the new outer tag). kBadVlanTag for
// PCP > 7, VID > 4095 or a TPID other than 0x8100/0x88A8; kTooManyVlanTags
// when the frame already has two tags; kTruncated for fewer than 14 bytes.
[[nodiscard]] Status<net::FrameError> insert_vlan_tag(std::vector<std::uint8_t>& frame, const net::VlanTag& tag);

struct Classification {
  int traffic_class = 0;
  std::uint8_t pcp = 0;
  std::optional<std::uint16_t> vid;  // the outer tag's VID after classification
  bool tagged_here = false;          // a rule's tag was inserted
  std::uint32_t stream_handle = 0;   // the matching rule's handle (tagged_here)
};

[[nodiscard]] Result<Classification, net::FrameError> classify_egress(std::vector<std::uint8_t>& frame,
                                                                     const TrafficClassMap& classes,
                                                                     const StreamIdentifier* streams,
                                                                     std::uint8_t default_pcp = 0);

}  // namespace layersec::tsn
