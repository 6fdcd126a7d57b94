#include "layersec/tsn/first_hop.h"

#include <cstring>
#include <utility>

namespace layersec::tsn {

const char* to_string(IngressDrop d) {
  switch (d) {
    case IngressDrop::kMalformed:
      return "malformed";
    case IngressDrop::kBadTag:
      return "bad-tag";
    case IngressDrop::kUnknownVid:
      return "unknown-vid";
    case IngressDrop::kTagMismatch:
      return "tag-mismatch";
    case IngressDrop::kUntaggedStream:
      return "untagged-stream";
  }
  return "?";
}

FirstHopPath::FirstHopPath(StreamIdentifier streams, TrafficClassMap classes, std::uint8_t default_pcp)
    : streams_(std::move(streams)), classes_(classes), default_pcp_(static_cast<std::uint8_t>(default_pcp & 7u)) {
  for (const StreamRule& r : streams_.rules()) vids_.insert(r.set_vid);
}

Result<Classification, net::FrameError> FirstHopPath::egress(std::vector<std::uint8_t>& frame) {
  auto c = classify_egress(frame, classes_, &streams_, default_pcp_);
  if (!c) {
    ++counters_.tx_classify_errors;
    return c;
  }
  ++counters_.tx_classified;
  if (c->tagged_here) {
    ++counters_.tx_tagged;
  } else if (!c->vid) {
    ++counters_.tx_default_class;
  }
  return c;
}

Result<MutableByteSpan, IngressDrop> FirstHopPath::drop(IngressDrop why) {
  switch (why) {
    case IngressDrop::kMalformed:
      ++counters_.rx_malformed;
      break;
    case IngressDrop::kBadTag:
      ++counters_.rx_bad_tag;
      break;
    case IngressDrop::kUnknownVid:
      ++counters_.rx_unknown_vid;
      break;
    case IngressDrop::kTagMismatch:
      ++counters_.rx_tag_mismatch;
      break;
    case IngressDrop::kUntaggedStream:
      ++counters_.rx_untagged_stream;
      break;
  }
  return Err(why);
}

Result<MutableByteSpan, IngressDrop> FirstHopPath::ingress(MutableByteSpan frame) {
  const ByteSpan view(frame.data(), frame.size());
  auto eth = net::parse_ethernet(view);
  if (!eth) return drop(IngressDrop::kMalformed);
  auto key = stream_key(view);
  if (!key) return drop(IngressDrop::kMalformed);
  if (eth->header.tag_count == 0) {
    if (streams_.match(*key) != nullptr) return drop(IngressDrop::kUntaggedStream);
    ++counters_.rx_untagged;
    return frame;
  }
  const net::VlanTag& tag = eth->header.tags[0];
  if (eth->header.tag_count != 1 || tag.tpid != net::kEtherTypeCTag) return drop(IngressDrop::kBadTag);
  if (vids_.count(tag.vid) == 0) return drop(IngressDrop::kUnknownVid);
  // The sender identified the frame before it had a tag: so do we.
  key->vid.reset();
  const StreamRule* rule = streams_.match(*key);
  if (rule == nullptr || rule->set_vid != tag.vid || rule->set_pcp != tag.pcp) {
    return drop(IngressDrop::kTagMismatch);
  }
  std::memmove(frame.data() + net::kVlanTagSize, frame.data(), 12);
  ++counters_.rx_tag_popped;
  return MutableByteSpan(frame.data() + net::kVlanTagSize, frame.size() - net::kVlanTagSize);
}

}  // namespace layersec::tsn
