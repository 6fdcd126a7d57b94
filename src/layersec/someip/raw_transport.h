// RawTransport: the runtime's Transport with no kernel IP/UDP stack in the
// path (the "integrated raw path" of `layersec bench scenarios --topology
// netns`). The node frames Ethernet/IPv4/UDP itself (net::build_udp_frame),
// passes each frame through an optional net::LinkFilter (a user-space MACsec
// SecY: macsec::MacsecFilter) and sends it with one AF_PACKET send on its
// interface; received frames take the reverse path (filter inbound, then
// net::parse_udp_frame with both checksums verified) straight into the
// runtime's handler. Single-threaded on a net::EventLoop, like
// SocketTransport; the clock and wake_at are the loop's (LoopAlarm).
//
// Addressing: unicast next hops come from a static neighbour table (an ECU's
// static configuration; no ARP is sent or answered); a destination not in it
// fails with kUnreachable. Multicast groups map to 01:00:5E MACs
// (net::multicast_mac) registered on the packet socket (PACKET_MR_MULTICAST).
// Datagrams whose frame (after the filter's overhead) would exceed the MTU
// fail with kTooLarge: there is no IP fragmentation (SOME/IP-TP keeps
// messages under it). The interface should carry no IP address of the node's
// own, so the kernel does not also answer the same datagrams (ICMP port
// unreachable); the transport does not check that.
//
// TSN first hop (optional net::FrameStage, tsn/first_hop_stage.h): frames
// the node built go to the stage (classify, tag, shape) and leave through the
// filter and the socket when the stage transmits them, so a SecY protects
// them in wire order; received frames pass the filter, then the stage (tag
// checked and popped), then the parser. With a stage the packet socket binds
// every EtherType: on a veth the kernel strips the 802.1Q tag into packet
// metadata and clears it before handing the frame to protocol-bound sockets,
// so only an ETH_P_ALL socket gets it back in PACKET_AUXDATA (PacketSocket
// restores it). Frames of other EtherTypes are then counted rx_not_udp
// before the filter sees them.
//
// Needs CAP_NET_RAW. Nothing on the steady-state frame path allocates.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/frame.h"
#include "layersec/net/frame_stage.h"
#include "layersec/net/link_filter.h"
#include "layersec/net/packet_socket.h"
#include "layersec/someip/loop_alarm.h"
#include "layersec/someip/runtime.h"  // callers construct a Runtime on the adapter
#include "layersec/someip/transport.h"

namespace layersec::someip {

struct RawTransportConfig {
  std::string interface;                                   // e.g. "eth0"
  net::Ipv4Address address;                                // the node's own address
  std::map<net::Ipv4Address, net::MacAddress> neighbours;  // static next hops
  std::size_t mtu = 1500;                                  // of the interface (IP packet bytes)
  std::uint8_t ttl = 64;
  // UDP checksums are always computed on send and verified on receive.
};

struct RawTransportStats {
  std::uint64_t tx_frames = 0;
  std::uint64_t tx_filter_refused = 0;   // LinkFilter::outbound returned nullopt
  std::uint64_t tx_errors = 0;           // the packet socket refused the frame
  std::uint64_t tx_unreachable = 0;      // no neighbour entry
  std::uint64_t tx_too_large = 0;
  std::uint64_t tx_stage_refused = 0;    // FrameStage::outbound refused (counted by the stage by reason)
  std::uint64_t rx_frames = 0;           // frames read from the packet socket
  std::uint64_t rx_filter_dropped = 0;   // LinkFilter::inbound returned nullopt
  std::uint64_t rx_not_udp = 0;          // not IPv4/UDP after the filter (ARP, other protocols)
  std::uint64_t rx_stage_dropped = 0;    // FrameStage::inbound dropped (counted by the stage by reason)
  std::uint64_t rx_malformed = 0;        // parse_udp_frame refused (bad checksum, truncated, ...)
  std::uint64_t rx_not_for_us = 0;       // another unicast IP, a group not joined, or a port not bound
                                         // (also: unicast to another MAC, our own frame reflected back)
  std::uint64_t rx_datagrams = 0;        // handed to a handler
  std::uint64_t rx_errors = 0;           // receive failures other than "nothing waiting"
};

class RawTransport final : public Transport {
 public:
  // Opens the packet socket on config.interface in the calling thread's
  // namespace, bound to filter->wire_ether_type() (or IPv4 without a filter),
  // and watches it on `loop`. `loop` and `filter` (optional) are not owned and
  // must outlive the transport; so must `stage` (optional; with one the
  // socket binds every EtherType, see above). Fails with kSystem (errno in
  // *error_number) when the socket cannot be opened.
  static Result<std::unique_ptr<RawTransport>, TransportError> open(net::EventLoop& loop, RawTransportConfig config,
                                                                    net::LinkFilter* filter = nullptr,
                                                                    int* error_number = nullptr,
                                                                    net::FrameStage* stage = nullptr);
  // A transport with no socket: every frame it would transmit is handed to
  // `sink` instead (tests that join two transports back to back without
  // root, the fuzz target). handle_frame() is its receive path. Its MAC
  // (mac()) is net::MacAddress::local(config.address.value), so a peer's
  // neighbour entry can be derived from the address alone.
  static std::unique_ptr<RawTransport> detached(net::EventLoop& loop, RawTransportConfig config,
                                                net::LinkFilter* filter, std::function<void(ByteSpan)> sink,
                                                net::FrameStage* stage = nullptr);
  ~RawTransport() override;
  RawTransport(const RawTransport&) = delete;
  RawTransport& operator=(const RawTransport&) = delete;

  [[nodiscard]] IpAddress local_address() const override;
  Status<TransportError> bind(std::uint16_t port, Handler handler) override;
  Status<TransportError> join(const Endpoint& group, Handler handler) override;
  void leave(const Endpoint& group) override;
  void unbind(std::uint16_t port) override;
  Status<TransportError> send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) override;
  [[nodiscard]] TimePoint now() const override;
  void wake_at(TimePoint at, TimerCallback cb) override;

  // One received frame through the whole receive path (filter, parse,
  // dispatch), as the socket callback does; exposed for tests and the fuzz
  // target. Never throws; every outcome is counted in stats().
  void handle_frame(MutableByteSpan frame);

  [[nodiscard]] const RawTransportStats& stats() const { return stats_; }
  [[nodiscard]] net::MacAddress mac() const;
  // errno of the last failed socket operation (0 if none), for diagnostics.
  [[nodiscard]] int last_errno() const;

 private:
  struct Impl;
  RawTransport(net::EventLoop& loop, RawTransportConfig config, net::LinkFilter* filter, net::FrameStage* stage);
  // Filter + socket (or sink) of one plain frame; counted.
  Status<TransportError> transmit(ByteSpan plain);
  // Reads up to a budget of frames from the packet socket into handle_frame.
  void drain();
  std::unique_ptr<Impl> impl_;
  RawTransportStats stats_;
};

}  // namespace layersec::someip
