#include "layersec/tsn/frame_tagger.h"

#include "layersec/base/bytes.h"

namespace layersec::tsn {

namespace {
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kUdp = 17;
}  // namespace

Result<StreamKey, net::FrameError> stream_key(ByteSpan frame) {
  auto eth = net::parse_ethernet(frame);
  if (!eth) return Err(eth.error());
  StreamKey k;
  k.dst_mac = eth->header.dst.bytes;
  if (eth->header.tag_count > 0) k.vid = eth->header.tags[0].vid;
  if (eth->header.ether_type != net::kEtherTypeIpv4) return k;
  auto ip = net::parse_ipv4(eth->payload);
  if (!ip) return k;  // not a usable IPv4 header: only the layer-2 fields
  const auto& h = ip->header;
  k.ipv4 = true;
  k.src_ip = h.src.value;
  k.dst_ip = h.dst.value;
  k.dscp = static_cast<std::uint8_t>(h.tos >> 2);
  k.protocol = h.protocol;
  if ((h.protocol == kUdp || h.protocol == kTcp) && ip->payload.size() >= 4) {
    k.has_ports = true;
    k.src_port = load_be16(ip->payload.data());
    k.dst_port = load_be16(ip->payload.data() + 2);
  }
  return k;
}

Status<net::FrameError> insert_vlan_tag(std::vector<std::uint8_t>& frame, const net::VlanTag& tag) {
  if (tag.pcp > 7 || tag.vid > 4095 || (tag.tpid != net::kEtherTypeCTag && tag.tpid != net::kEtherTypeSTag)) {
    return Err(net::FrameError::kBadVlanTag);
  }
  auto eth = net::parse_ethernet(frame);
  if (!eth) return Err(eth.error());
  if (eth->header.tag_count >= net::kMaxVlanTags) return Err(net::FrameError::kTooManyVlanTags);
  const std::uint16_t tci = static_cast<std::uint16_t>((tag.pcp << 13) | (tag.dei ? 0x1000 : 0) | tag.vid);
  const std::uint8_t bytes[4] = {static_cast<std::uint8_t>(tag.tpid >> 8), static_cast<std::uint8_t>(tag.tpid),
                                 static_cast<std::uint8_t>(tci >> 8), static_cast<std::uint8_t>(tci)};
  frame.insert(frame.begin() + 12, bytes, bytes + 4);
  return {};
}

Result<Classification, net::FrameError> classify_egress(std::vector<std::uint8_t>& frame,
                                                       const TrafficClassMap& classes, const StreamIdentifier* streams,
                                                       std::uint8_t default_pcp) {
  auto eth = net::parse_ethernet(frame);
  if (!eth) return Err(eth.error());
  Classification c;
  if (eth->header.tag_count > 0) {
    c.pcp = eth->header.tags[0].pcp;
    c.vid = eth->header.tags[0].vid;
  } else {
    c.pcp = static_cast<std::uint8_t>(default_pcp & 7u);
    if (streams) {
      auto key = stream_key(frame);
      if (!key) return Err(key.error());
      if (const StreamRule* r = streams->match(*key)) {
        net::VlanTag tag;
        tag.pcp = r->set_pcp;
        tag.vid = r->set_vid;
        auto ok = insert_vlan_tag(frame, tag);
        if (!ok) return Err(ok.error());
        c.pcp = r->set_pcp;
        c.vid = r->set_vid;
        c.tagged_here = true;
        c.stream_handle = r->handle;
      }
    }
  }
  c.traffic_class = classes.traffic_class(c.pcp);
  return c;
}

}  // namespace layersec::tsn
