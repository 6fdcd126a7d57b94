// Fuzz target for the net frame codecs: Ethernet II with VLAN tags, IPv4,
// UDP and ARP on arbitrary bytes. Properties checked besides "no crash":
//  - a frame that parses as Ethernet/IPv4/UDP rebuilds (build_udp_frame from
//    its views) into a frame that parses to the same fields and payload, and
//    into the very same bytes when the input was canonical (no IPv4 options,
//    no padding after the IPv4 packet);
//  - the Ethernet header writer reproduces the parsed header bytes;
//  - refresh_checksums never breaks a valid frame.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/sim_attack.h"

using namespace layersec;
using namespace layersec::net;

namespace {

void check(bool cond) {
  if (!cond) std::abort();
}

bool same_ipv4_checksum(std::uint16_t a, std::uint16_t b) {
  // 0x0000 and 0xFFFF are both one's-complement zero: a header whose other
  // words sum to 0xFFFF verifies with either.
  return a == b || ((a == 0 || a == 0xFFFF) && (b == 0 || b == 0xFFFF));
}

void check_ethernet(ByteSpan in) {
  auto eth = parse_ethernet(in);
  if (!eth) return;
  std::uint8_t buf[kEthernetHeaderSize + kMaxVlanTags * kVlanTagSize];
  ByteWriter w(buf);
  check(write_ethernet_header(w, eth->header).ok());
  check(w.size() == eth->header.size());
  check(std::memcmp(buf, in.data(), w.size()) == 0);
  if (eth->header.ether_type == kEtherTypeArp) {
    auto arp = parse_arp(eth->payload);
    if (arp) {
      std::uint8_t out[64];
      auto n = build_arp_frame(*arp, out);
      check(n.ok());
      auto e2 = parse_ethernet(ByteSpan(out, *n));
      check(e2.ok());
      auto a2 = parse_arp(e2->payload);
      check(a2.ok());
      check(a2->operation == arp->operation && a2->sender_mac == arp->sender_mac &&
            a2->sender_ip == arp->sender_ip && a2->target_mac == arp->target_mac && a2->target_ip == arp->target_ip);
    }
  }
}

void check_udp(ByteSpan in) {
  auto v = parse_udp_frame(in);
  if (!v) return;
  UdpFrameSpec s;
  s.dst_mac = v->ethernet.dst;
  s.src_mac = v->ethernet.src;
  s.tags = v->ethernet.tags;
  s.tag_count = v->ethernet.tag_count;
  s.src = v->src();
  s.dst = v->dst();
  s.ttl = v->ip.header.ttl;
  s.tos = v->ip.header.tos;
  s.identification = v->ip.header.identification;
  s.dont_fragment = v->ip.header.dont_fragment;
  s.compute_udp_checksum = v->udp.header.checksum != 0;
  s.pad_to_minimum = false;
  std::vector<std::uint8_t> out(kEthernetMaxFrameSize);
  auto n = build_udp_frame(s, v->payload(), out);
  if (!n) {
    // Only a datagram bigger than one MTU (we never build those) may fail.
    check(n.error() == FrameError::kPayloadTooLarge);
    return;
  }
  out.resize(*n);
  auto v2 = parse_udp_frame(out);
  check(v2.ok());
  check(v2->ethernet == v->ethernet);
  check(v2->src() == v->src() && v2->dst() == v->dst());
  check(v2->ip.header.ttl == v->ip.header.ttl && v2->ip.header.tos == v->ip.header.tos &&
        v2->ip.header.identification == v->ip.header.identification &&
        v2->ip.header.dont_fragment == v->ip.header.dont_fragment);
  check(v2->payload().size() == v->payload().size() &&
        std::equal(v2->payload().begin(), v2->payload().end(), v->payload().begin()));
  const bool canonical = v->ip.options.empty() && in.size() == v->ethernet.size() + v->ip.header.total_length;
  if (canonical) {
    check(out.size() == in.size());
    const std::size_t csum = v->ethernet.size() + 10;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i == csum || i == csum + 1) continue;
      check(out[i] == in[i]);
    }
    check(same_ipv4_checksum(load_be16(out.data() + csum), load_be16(in.data() + csum)));
  }
  // Recomputing checksums of a valid frame keeps it valid and unchanged in
  // everything but the one's-complement zero ambiguity.
  std::vector<std::uint8_t> copy(in.begin(), in.end());
  check(refresh_checksums(copy));
  auto v3 = parse_udp_frame(copy);
  check(v3.ok());
  check(v3->payload().size() == v->payload().size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  check_ethernet(in);
  check_udp(in);
  // The layer parsers on their own, at every offset a header could start.
  (void)parse_ipv4(in).ok();
  (void)parse_arp(in).ok();
  if (size >= 8) {
    (void)parse_udp(in, Ipv4Address{load_be32(data)}, Ipv4Address{load_be32(data + 4)}).ok();
  }
  std::vector<std::uint8_t> copy(in.begin(), in.end());
  (void)refresh_checksums(copy);
  return 0;
}
