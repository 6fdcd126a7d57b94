// The TSN first hop of a node that frames its own packets (the raw SOME/IP
// path, someip::RawTransport): classification and tagging on egress, the
// tag check and pop on ingress. No sockets, no clock: frames in, frames and
// verdicts out (tsn/first_hop_stage.h runs it with the shaper on a loop).
//
//   egress   an untagged frame the node built -> 802.1CB stream
//            identification (stream_id.h, first match wins) -> the rule's
//            C-tag (TPID 0x8100, set_pcp, set_vid) inserted after the source
//            address -> the traffic class of its PCP. A frame no rule matches
//            leaves untagged in the class of `default_pcp` (802.1Q §6.9.3,
//            as the MACsec link's first hop does).
//   ingress  a received frame (after the SecY, if any) -> verdict:
//            - one C-tag whose VID some rule sets, on a frame whose first
//              matching rule (identified without the tag, as the sender saw
//              it) sets exactly this (VID, PCP): the tag is popped in place;
//            - a VID no rule sets: dropped (kUnknownVid, fail closed);
//            - a known VID but a (VID, PCP) that is not what the rule for
//              this frame's content sets, or no rule matches the content:
//              dropped (kTagMismatch; a relabelled or injected tag);
//            - an S-tag, a second tag: dropped (kBadTag);
//            - untagged, but a rule matches it (the sender would have tagged
//              it): dropped (kUntaggedStream);
//            - untagged and no rule matches (SD, ARP: the default class):
//              delivered as is.
// Both ends use the same rule list (the streams of the segment): the rules
// are written from the sender's view (destination address and port of the
// receiver), which is what the receiver sees in the frame as well. The DEI
// bit is not checked (a bridge may set it).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/tsn/frame_tagger.h"
#include "layersec/tsn/stream_id.h"
#include "layersec/tsn/traffic_class.h"

namespace layersec::tsn {

enum class IngressDrop : std::uint8_t {
  kMalformed,       // not a parsable Ethernet frame
  kBadTag,          // an S-tag or more than one tag
  kUnknownVid,      // a VID no rule sets
  kTagMismatch,     // a known VID, but not the (VID, PCP) the frame's rule sets
  kUntaggedStream,  // untagged, but a rule says it should have been tagged
};
[[nodiscard]] const char* to_string(IngressDrop d);

struct FirstHopCounters {
  std::uint64_t tx_classified = 0;       // frames given a class
  std::uint64_t tx_tagged = 0;           // ... of which a rule tagged
  std::uint64_t tx_default_class = 0;    // ... of which no rule matched: untagged, default PCP
  std::uint64_t tx_classify_errors = 0;  // not an Ethernet frame the tagger accepts: refused
  std::uint64_t rx_tag_popped = 0;       // tagged frames accepted, tag removed
  std::uint64_t rx_untagged = 0;         // untagged frames of no stream: delivered as is
  std::uint64_t rx_malformed = 0;
  std::uint64_t rx_bad_tag = 0;
  std::uint64_t rx_unknown_vid = 0;
  std::uint64_t rx_tag_mismatch = 0;
  std::uint64_t rx_untagged_stream = 0;
};

class FirstHopPath {
 public:
  FirstHopPath(StreamIdentifier streams, TrafficClassMap classes, std::uint8_t default_pcp);

  // Classifies and tags `frame` in place (it grows by 4 octets when a rule
  // tags it). The classification, or the codec's error (counted).
  [[nodiscard]] Result<Classification, net::FrameError> egress(std::vector<std::uint8_t>& frame);
  // Checks the tag of a received frame and pops it in place (the addresses
  // move up by 4 octets). The frame to deliver (a view into `frame`), or the
  // reason it is dropped (counted). A dropped frame is left unchanged.
  [[nodiscard]] Result<MutableByteSpan, IngressDrop> ingress(MutableByteSpan frame);

  [[nodiscard]] const FirstHopCounters& counters() const { return counters_; }
  [[nodiscard]] const TrafficClassMap& classes() const { return classes_; }
  [[nodiscard]] std::size_t rule_count() const { return streams_.size(); }

 private:
  [[nodiscard]] Result<MutableByteSpan, IngressDrop> drop(IngressDrop why);
  StreamIdentifier streams_;
  TrafficClassMap classes_;
  std::uint8_t default_pcp_;
  std::set<std::uint16_t> vids_;  // every rule's set_vid
  FirstHopCounters counters_;
};

}  // namespace layersec::tsn
