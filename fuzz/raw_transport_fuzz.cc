// Fuzz target: someip::RawTransport's receive path (handle_frame) on
// arbitrary frames, on a detached transport with one bound port and one
// joined group, plain and behind a macsec::MacsecFilter.
//
// Input: byte 0 selects the mode, the rest is the material.
//   bit 1 clear (raw):    the material is a whole frame. bit 0 puts the
//                         node's own MAC in front (so it passes the address
//                         filter); bit 2 also protects it as a plain frame
//                         with a genuine peer SecY before the MACsec node
//                         sees it (arbitrary bytes behind a valid ICV).
//   bit 1 set (framed):   the material is a UDP payload, framed with valid
//                         checksums to a destination picked by bits 2..3
//                         (the bound port, the joined group, an unbound
//                         port, a group not joined); bit 4 then flips one
//                         byte (position and mask from the first payload
//                         byte) of the plain frame and of the secure one.
// Properties: no crash or sanitizer report; every frame moves rx_frames by
// one and exactly one outcome counter by one; a handler runs exactly when
// rx_datagrams moves; an intact framed datagram to the bound port or the
// joined group is delivered with its payload (plain and through MACsec),
// one to an unbound port or another group is not.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "layersec/macsec/link.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/frame.h"
#include "layersec/someip/raw_transport.h"

namespace {

using namespace layersec;
using namespace layersec::someip;

void check(bool c) {
  if (!c) std::abort();
}

const net::Ipv4Address kSelf = net::Ipv4Address::from_octets(10, 0, 0, 1);
const net::Ipv4Address kPeer = net::Ipv4Address::from_octets(10, 0, 0, 2);
const net::Ipv4Address kGroup = net::Ipv4Address::from_octets(239, 1, 2, 3);
const net::Ipv4Address kOtherGroup = net::Ipv4Address::from_octets(239, 1, 2, 4);
constexpr std::uint16_t kPort = 30509, kGroupPort = 30600;
const net::MacAddress kSelfMac = net::MacAddress::local(kSelf.value);  // a detached transport's MAC
const net::MacAddress kPeerMac = net::MacAddress::local(kPeer.value);

Endpoint endpoint(net::Ipv4Address a, std::uint16_t port) {
  return Endpoint{IpAddress::v4(static_cast<std::uint8_t>(a.value >> 24), static_cast<std::uint8_t>(a.value >> 16),
                                static_cast<std::uint8_t>(a.value >> 8), static_cast<std::uint8_t>(a.value)),
                  port, L4Proto::kUdp};
}

std::vector<std::uint8_t> sak() {
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(0x30 + i);
  return k;
}

macsec::SecY make_secy(const net::MacAddress& self, const net::MacAddress& peer) {
  const auto k = sak();
  const macsec::Sci self_sci = macsec::Sci::from_parts(self.bytes.data(), 1);
  const macsec::Sci peer_sci = macsec::Sci::from_parts(peer.bytes.data(), 1);
  macsec::SecYConfig c;
  c.sci = self_sci;
  c.suite = macsec::CipherSuite::kGcmAes128;
  c.validate_frames = macsec::ValidateFrames::kStrict;
  macsec::SecY s(c);
  check(s.install_tx_sa(0, macsec::SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  check(s.set_encoding_sa(0).ok());
  check(s.add_rx_sc(peer_sci).ok());
  check(s.install_rx_sa(peer_sci, 0, macsec::SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  return s;
}

std::uint64_t outcomes(const RawTransportStats& s) {
  return s.rx_filter_dropped + s.rx_not_udp + s.rx_malformed + s.rx_not_for_us + s.rx_datagrams;
}

// One detached node: port kPort bound, kGroup:kGroupPort joined; every
// datagram it receives is echoed back to its source (exercising the send
// path from inside a handler).
struct Node {
  explicit Node(bool with_macsec) {
    if (with_macsec) {
      link = std::make_unique<macsec::MacsecLink>(make_secy(kSelfMac, kPeerMac));
      filter = std::make_unique<macsec::MacsecFilter>(*link);
    }
    RawTransportConfig c;
    c.interface = "fuzz";
    c.address = kSelf;
    c.neighbours[kPeer] = kPeerMac;
    tr = RawTransport::detached(loop, c, filter.get(), [this](ByteSpan f) { sent += f.size() > 0 ? 1 : 0; });
    check(tr->mac() == kSelfMac);
    auto on = [this](const Transport::Datagram& d) {
      ++delivered;
      last.assign(d.payload.begin(), d.payload.end());
      last_multicast = d.multicast;
      tr->send(kPort, d.source, d.payload).ignore();
    };
    check(tr->bind(kPort, on).ok());
    check(tr->join(endpoint(kGroup, kGroupPort), on).ok());
  }

  void feed(std::vector<std::uint8_t> frame) {
    const RawTransportStats before = tr->stats();
    const int delivered_before = delivered;
    tr->handle_frame(frame);
    const RawTransportStats& after = tr->stats();
    check(after.rx_frames == before.rx_frames + 1);
    check(outcomes(after) == outcomes(before) + 1);
    check(static_cast<std::uint64_t>(delivered - delivered_before) == after.rx_datagrams - before.rx_datagrams);
    check(last.size() <= frame.size());
  }

  ManualClock clock;
  net::EventLoop loop{clock};
  std::unique_ptr<macsec::MacsecLink> link;
  std::unique_ptr<macsec::MacsecFilter> filter;
  std::unique_ptr<RawTransport> tr;
  int delivered = 0;
  int sent = 0;
  bool last_multicast = false;
  std::vector<std::uint8_t> last;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const ByteSpan material(data + 1, size - 1);
  Node plain(false);
  Node secured(true);
  macsec::MacsecLink peer_link(make_secy(kPeerMac, kSelfMac));  // a genuine sender

  if ((mode & 0x02) == 0) {
    std::vector<std::uint8_t> frame(material.begin(), material.end());
    if ((mode & 0x01) != 0 && frame.size() >= 6) std::copy(kSelfMac.bytes.begin(), kSelfMac.bytes.end(), frame.begin());
    plain.feed(frame);
    secured.feed(frame);
    if ((mode & 0x04) != 0 && frame.size() >= 14) {
      auto secure = peer_link.protect(frame);
      if (secure) secured.feed(std::vector<std::uint8_t>(secure->begin(), secure->end()));
    }
    return 0;
  }

  // Framed: a valid datagram to one of four destinations.
  net::Ipv4Endpoint dst;
  bool ours = true;
  switch ((mode >> 2) & 3) {
    case 0: dst = {kSelf, kPort}; break;
    case 1: dst = {kGroup, kGroupPort}; break;
    case 2: dst = {kSelf, static_cast<std::uint16_t>(kPort + 1)}; ours = false; break;
    default: dst = {kOtherGroup, kGroupPort}; ours = false; break;
  }
  net::UdpFrameSpec spec;
  spec.src_mac = kPeerMac;
  spec.dst_mac = dst.address.is_multicast() ? net::multicast_mac(dst.address) : kSelfMac;
  spec.src = {kPeer, 5555};
  spec.dst = dst;
  std::vector<std::uint8_t> frame(net::kEthernetMaxFrameSize);
  auto n = net::build_udp_frame(spec, material, frame);
  if (!n.ok()) {
    check(material.size() > net::kMaxUdpPayload);
    return 0;
  }
  frame.resize(*n);
  const bool corrupt = (mode & 0x10) != 0 && !material.empty();
  auto secure = peer_link.protect(frame);
  check(secure.has_value());
  std::vector<std::uint8_t> wire(secure->begin(), secure->end());
  if (corrupt) {
    const std::uint8_t m = material[0];
    frame[m % frame.size()] ^= static_cast<std::uint8_t>(m | 1);
    wire[m % wire.size()] ^= static_cast<std::uint8_t>(m | 1);
  }
  plain.feed(frame);
  secured.feed(wire);
  if (!corrupt) {
    for (Node* node : {&plain, &secured}) {
      check(node->delivered == (ours ? 1 : 0));
      if (ours) {
        check(std::equal(node->last.begin(), node->last.end(), material.begin(), material.end()));
        check(node->last_multicast == dst.address.is_multicast());
        // The echo went out unless it no longer fits the MTU with the SecTAG and ICV.
        const std::size_t overhead = node->filter ? node->filter->overhead() : 0;
        const bool fits = net::kIpv4MinHeaderSize + net::kUdpHeaderSize + material.size() + overhead <= 1500;
        check(node->tr->stats().tx_frames == (fits ? 1u : 0u));
        check(node->tr->stats().tx_too_large == (fits ? 0u : 1u));
      } else {
        check(node->tr->stats().rx_not_for_us == 1);
      }
    }
    check(secured.link->stats().rx_delivered == 1);
  } else {
    // A flipped bit behind a MACsec ICV is never delivered.
    check(secured.delivered == 0);
  }
  return 0;
}
