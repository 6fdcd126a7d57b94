#include "layersec/someip/raw_transport.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <set>
#include <utility>

#include "layersec/someip/runtime_net.h"

namespace layersec::someip {

namespace {

// Frames read per wake-up, so one busy link cannot starve the loop.
constexpr int kRxBudget = 64;
// Any frame a packet socket can hand up (larger ones arrive truncated and
// are counted as receive errors).
constexpr std::size_t kRxBufferSize = 65536;

}  // namespace

struct RawTransport::Impl {
  Impl(net::EventLoop& l, RawTransportConfig c, net::LinkFilter* f, net::FrameStage* st)
      : loop(l),
        config(std::move(c)),
        filter(f),
        stage(st),
        // build_udp_frame never writes more than an MTU-sized IPv4 packet.
        tx(std::max(net::kEthernetMaxFrameSize, net::kEthernetHeaderSize + config.mtu)),
        alarm(l) {}

  net::EventLoop& loop;
  RawTransportConfig config;
  net::LinkFilter* filter;                    // not owned; may be null
  net::FrameStage* stage;                     // not owned; may be null
  std::vector<std::uint8_t> stage_rx;         // a filter's plain frame outside the rx buffer, for the stage
  std::optional<net::PacketSocket> socket;    // empty when detached
  std::function<void(ByteSpan)> sink;         // detached transmit path
  net::MacAddress mac;
  std::map<std::uint16_t, std::shared_ptr<Handler>> ports;
  std::map<net::Ipv4Endpoint, std::shared_ptr<Handler>> groups;
  std::set<net::MacAddress> registered_macs;  // PACKET_MR_MULTICAST added
  std::vector<std::uint8_t> tx;
  std::vector<std::uint8_t> rx;  // socket reads; sized by open() (a detached transport reads none)
  LoopAlarm alarm;
  std::uint16_t next_identification = 0;
  int last_errno = 0;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
};

RawTransport::RawTransport(net::EventLoop& loop, RawTransportConfig config, net::LinkFilter* filter,
                           net::FrameStage* stage)
    : impl_(std::make_unique<Impl>(loop, std::move(config), filter, stage)) {
  if (stage != nullptr) {
    impl_->stage_rx.reserve(kRxBufferSize);
    stage->connect([this](ByteSpan plain) { return transmit(plain).ok(); });
  }
}

RawTransport::~RawTransport() {
  *impl_->alive = false;
  if (impl_->stage) impl_->stage->connect(nullptr);
  if (impl_->socket) impl_->loop.unwatch(impl_->socket->fd());
}

Result<std::unique_ptr<RawTransport>, TransportError> RawTransport::open(net::EventLoop& loop,
                                                                         RawTransportConfig config,
                                                                         net::LinkFilter* filter, int* error_number,
                                                                         net::FrameStage* stage) {
  // With a stage, tagged frames must come back with their tag (see the header).
  const std::uint16_t ether_type = stage != nullptr    ? net::kEtherTypeAll
                                   : filter != nullptr ? filter->wire_ether_type()
                                                       : net::kEtherTypeIpv4;
  int err = 0;
  auto s = net::PacketSocket::open(config.interface, ether_type, /*nonblocking=*/true, &err);
  if (!s.ok()) {
    if (error_number != nullptr) *error_number = err;
    return Err(TransportError::kSystem);
  }
  // Bursts (a rate sweep, a TP message) can arrive faster than the loop
  // drains them: a deeper queue trades latency for fewer drops.
  s->set_receive_buffer(4 * 1024 * 1024);
  std::unique_ptr<RawTransport> t(new RawTransport(loop, std::move(config), filter, stage));
  Impl& m = *t->impl_;
  m.mac = s->interface_mac();
  m.rx.resize(kRxBufferSize);
  m.socket.emplace(std::move(s).value());
  RawTransport* self = t.get();
  std::weak_ptr<bool> alive = m.alive;
  loop.watch(m.socket->fd(), POLLIN, [self, alive](short) {
    if (auto a = alive.lock(); a && *a) self->drain();
  });
  return t;
}

std::unique_ptr<RawTransport> RawTransport::detached(net::EventLoop& loop, RawTransportConfig config,
                                                     net::LinkFilter* filter, std::function<void(ByteSpan)> sink,
                                                     net::FrameStage* stage) {
  std::unique_ptr<RawTransport> t(new RawTransport(loop, std::move(config), filter, stage));
  t->impl_->mac = net::MacAddress::local(t->impl_->config.address.value);
  t->impl_->sink = std::move(sink);
  return t;
}

IpAddress RawTransport::local_address() const { return detail::from_ipv4(impl_->config.address); }

net::MacAddress RawTransport::mac() const { return impl_->mac; }

int RawTransport::last_errno() const { return impl_->last_errno; }

Status<TransportError> RawTransport::bind(std::uint16_t port, Handler handler) {
  if (impl_->ports.count(port) != 0) return Err(TransportError::kPortInUse);
  impl_->ports.emplace(port, std::make_shared<Handler>(std::move(handler)));
  return {};
}

void RawTransport::unbind(std::uint16_t port) { impl_->ports.erase(port); }

Status<TransportError> RawTransport::join(const Endpoint& group, Handler handler) {
  Impl& m = *impl_;
  const auto g = detail::to_ipv4(group.address);
  if (!g || !g->is_multicast()) return Err(TransportError::kUnreachable);
  if (m.socket) {
    // RFC 1112 §6.4 group MAC on the packet socket, once per MAC; leave()
    // drops it when no joined group maps to it any more.
    const net::MacAddress mac = net::multicast_mac(*g);
    if (m.registered_macs.count(mac) == 0) {
      if (auto st = m.socket->add_multicast(mac); !st.ok()) {
        m.last_errno = m.socket->last_errno();
        return Err(TransportError::kSystem);
      }
      m.registered_macs.insert(mac);
    }
  }
  m.groups[net::Ipv4Endpoint{*g, group.port}] = std::make_shared<Handler>(std::move(handler));
  return {};
}

void RawTransport::leave(const Endpoint& group) {
  Impl& m = *impl_;
  const auto g = detail::to_ipv4(group.address);
  if (!g) return;
  if (m.groups.erase(net::Ipv4Endpoint{*g, group.port}) == 0) return;
  // Several groups (and ports) can share one MAC (32 groups per MAC): keep it
  // while any joined group still maps to it.
  const net::MacAddress mac = net::multicast_mac(*g);
  for (const auto& [ep, handler] : m.groups)
    if (net::multicast_mac(ep.address) == mac) return;
  if (m.registered_macs.erase(mac) != 0 && m.socket) m.socket->drop_multicast(mac).ignore();
}

Status<TransportError> RawTransport::send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) {
  Impl& m = *impl_;
  const auto dst = detail::to_ipv4(to.address);
  if (!dst) {
    ++stats_.tx_unreachable;
    return Err(TransportError::kUnreachable);
  }
  if (m.ports.count(from_port) == 0) return Err(TransportError::kNotBound);
  // No fragmentation: the IPv4 packet plus what the filter adds must fit the
  // link MTU (the SecTAG and ICV ride inside the Ethernet payload; a
  // first-hop tag is counted too, since in standard layout it is inside).
  const std::size_t overhead =
      (m.filter != nullptr ? m.filter->overhead() : 0) + (m.stage != nullptr ? m.stage->overhead() : 0);
  const std::size_t ip_packet = net::kIpv4MinHeaderSize + net::kUdpHeaderSize + payload.size();
  if (payload.size() > net::kMaxUdpPayload || ip_packet + overhead > m.config.mtu) {
    ++stats_.tx_too_large;
    return Err(TransportError::kTooLarge);
  }
  net::MacAddress dst_mac;
  if (dst->is_multicast()) {
    dst_mac = net::multicast_mac(*dst);
  } else if (dst->is_broadcast()) {
    dst_mac = net::MacAddress::broadcast();
  } else {
    // Static neighbour table; no ARP.
    auto n = m.config.neighbours.find(*dst);
    if (n == m.config.neighbours.end()) {
      ++stats_.tx_unreachable;
      return Err(TransportError::kUnreachable);
    }
    dst_mac = n->second;
  }
  net::UdpFrameSpec spec;
  spec.dst_mac = dst_mac;
  spec.src_mac = m.mac;
  spec.src = net::Ipv4Endpoint{m.config.address, from_port};
  spec.dst = net::Ipv4Endpoint{*dst, to.port};
  spec.ttl = m.config.ttl;
  spec.identification = m.next_identification++;
  spec.dont_fragment = true;
  spec.compute_udp_checksum = true;
  // A secure frame is never below the Ethernet minimum (SecTAG + ICV alone
  // are 32 bytes), so padding the plain frame would only cost crypto.
  spec.pad_to_minimum = m.filter == nullptr;
  auto built = net::build_udp_frame(spec, payload, MutableByteSpan(m.tx.data(), m.tx.size()));
  if (!built.ok()) {
    const net::FrameError e = built.error();
    if (e == net::FrameError::kPayloadTooLarge || e == net::FrameError::kBufferTooSmall) {
      ++stats_.tx_too_large;
      return Err(TransportError::kTooLarge);
    }
    ++stats_.tx_errors;
    return Err(TransportError::kSystem);
  }
  const ByteSpan frame(m.tx.data(), *built);
  if (m.stage != nullptr) {
    // Queued (or refused): the stage transmits it when the shaper lets it go.
    if (!m.stage->outbound(frame)) {
      ++stats_.tx_stage_refused;
      return Err(TransportError::kSystem);
    }
    return {};
  }
  return transmit(frame);
}

Status<TransportError> RawTransport::transmit(ByteSpan plain) {
  Impl& m = *impl_;
  ByteSpan frame = plain;
  if (m.filter != nullptr) {
    auto wire = m.filter->outbound(frame);
    if (!wire) {
      ++stats_.tx_filter_refused;
      return Err(TransportError::kSystem);
    }
    frame = *wire;
  }
  if (m.socket) {
    auto sent = m.socket->send(frame);
    if (!sent.ok()) {
      ++stats_.tx_errors;
      m.last_errno = m.socket->last_errno();
      if (m.last_errno == EMSGSIZE) return Err(TransportError::kTooLarge);
      if (m.last_errno == ENETDOWN || m.last_errno == ENXIO) return Err(TransportError::kUnreachable);
      return Err(TransportError::kSystem);
    }
  } else if (m.sink) {
    m.sink(frame);
  }
  ++stats_.tx_frames;
  return {};
}

void RawTransport::handle_frame(MutableByteSpan frame) {
  Impl& m = *impl_;
  ++stats_.rx_frames;
  // What a NIC's address filter does: a unicast frame for another station
  // (flooded by a bridge, or seen in promiscuous mode) is not ours, and is
  // not worth the filter's crypto.
  if (frame.size() >= 6 && (frame[0] & 0x01) == 0 &&
      !std::equal(m.mac.bytes.begin(), m.mac.bytes.end(), frame.begin())) {
    ++stats_.rx_not_for_us;
    return;
  }
  // Our own frame reflected back (a hub, a looped link): a node never hears
  // its own multicast, as SocketTransport off the loopback interface.
  if (frame.size() >= 12 && std::equal(m.mac.bytes.begin(), m.mac.bytes.end(), frame.begin() + 6)) {
    ++stats_.rx_not_for_us;
    return;
  }
  if (m.stage != nullptr) {
    // The socket takes every EtherType: only ours go on.
    auto eth = net::parse_ethernet(ByteSpan(frame.data(), frame.size()));
    const std::uint16_t want = m.filter != nullptr ? m.filter->wire_ether_type() : net::kEtherTypeIpv4;
    if (!eth || eth->header.ether_type != want) {
      ++stats_.rx_not_udp;
      return;
    }
  }
  ByteSpan plain(frame.data(), frame.size());
  if (m.filter != nullptr) {
    auto p = m.filter->inbound(frame);
    if (!p) {  // no fallback to clear delivery
      ++stats_.rx_filter_dropped;
      return;
    }
    plain = *p;
  }
  if (m.stage != nullptr) {
    // The stage pops the tag in place: the filter's plain frame is a view
    // into `frame` (MACsec validates in place) or else copied.
    MutableByteSpan mut;
    const std::less_equal<const std::uint8_t*> le;
    if (le(frame.data(), plain.data()) && le(plain.data() + plain.size(), frame.data() + frame.size())) {
      mut = MutableByteSpan(frame.data() + (plain.data() - frame.data()), plain.size());
    } else {
      m.stage_rx.assign(plain.begin(), plain.end());
      mut = MutableByteSpan(m.stage_rx.data(), m.stage_rx.size());
    }
    auto p = m.stage->inbound(mut);
    if (!p) {
      ++stats_.rx_stage_dropped;
      return;
    }
    plain = ByteSpan(p->data(), p->size());
  }
  auto v = net::parse_udp_frame(plain);  // verifies the IPv4 and UDP checksums
  if (!v.ok()) {
    switch (v.error()) {
      case net::FrameError::kNotIpv4:
      case net::FrameError::kNotUdp:
      case net::FrameError::kLengthFrame:
        ++stats_.rx_not_udp;
        break;
      default:
        ++stats_.rx_malformed;
        break;
    }
    return;
  }
  const net::Ipv4Endpoint dst = v->dst();
  std::shared_ptr<Handler> handler;  // a copy: the handler may unbind or leave
  bool multicast = false;
  if (dst.address.is_multicast()) {
    auto g = m.groups.find(dst);
    if (g != m.groups.end()) {
      handler = g->second;
      multicast = true;
    }
  } else if (dst.address == m.config.address) {
    auto p = m.ports.find(dst.port);
    if (p != m.ports.end()) handler = p->second;
  }
  if (!handler) {
    ++stats_.rx_not_for_us;
    return;
  }
  ++stats_.rx_datagrams;
  Datagram d;
  d.payload = v->payload();
  d.source = detail::from_ipv4(v->src());
  d.destination = detail::from_ipv4(dst);
  d.multicast = multicast;
  if (*handler) (*handler)(d);
}

void RawTransport::drain() {
  // The alive flag outlives `this`: a handler may destroy the transport.
  const std::shared_ptr<bool> alive = impl_->alive;
  for (int i = 0; i < kRxBudget && *alive; ++i) {
    Impl& m = *impl_;
    auto r = m.socket->receive(MutableByteSpan(m.rx.data(), m.rx.size()));
    if (!r.ok()) {
      const net::IoError e = r.error();
      if (e == net::IoError::kWouldBlock) return;
      ++stats_.rx_errors;
      m.last_errno = m.socket->last_errno();
      if (e == net::IoError::kTruncated) continue;  // consumed and dropped; read on
      return;
    }
    handle_frame(MutableByteSpan(m.rx.data(), *r));
  }
}

TimePoint RawTransport::now() const { return impl_->alarm.now(); }

void RawTransport::wake_at(TimePoint at, TimerCallback cb) { impl_->alarm.wake_at(at, std::move(cb)); }

}  // namespace layersec::someip
