// SimHost: a minimal UDP/IPv4 host for the simulated segment, so SOME/IP (or
// anything over UDP) runs between simulated nodes with real frames.
//
// What it does: ARP (RFC 826) with a static table plus optional dynamic
// resolution (requests for unknown on-link neighbours, a small pending queue,
// replies to requests for its address); UDP bind/send/receive for unicast,
// limited and subnet broadcast and IPv4 multicast (joining a group accepts
// frames for its RFC 1112 §6.4 MAC). Frames carry correct IPv4 and UDP
// checksums and are parsed with checksum verification on receipt.
// What it does not: routing (no gateway), fragmentation (payloads above
// kMaxUdpPayload are refused), ICMP, IGMP (the simulated switch floods
// multicast, so membership reports are unnecessary), TTL processing.
//
// Everything runs on the simulator's thread and time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/net/sim.h"

namespace layersec::net {

struct SimHostConfig {
  MacAddress mac;
  Ipv4Address ip;
  std::uint8_t prefix_length = 24;  // on-link subnet for ARP and subnet broadcast
  bool dynamic_arp = true;          // resolve unknown on-link neighbours with ARP
  Duration arp_retry = Duration::milliseconds(100);
  unsigned arp_attempts = 3;        // requests before pending datagrams are dropped
  std::size_t arp_pending_limit = 64;  // datagrams waiting for resolution, per host
  bool multicast_loopback = false;  // deliver own multicast sends to own listeners
  std::uint8_t ttl = 64;
  std::uint8_t multicast_ttl = 1;
  std::optional<VlanTag> vlan = std::nullopt;  // tag every transmitted frame
};

struct UdpDatagram {
  Ipv4Endpoint src;
  Ipv4Endpoint dst;  // dst.address tells unicast from broadcast or a group
  ByteSpan payload;  // valid only during the handler call
};
using UdpHandler = std::function<void(const UdpDatagram&)>;

enum class SimHostError : std::uint8_t {
  kPortInUse,        // bind on a bound port
  kNotBound,         // send from an unbound port
  kPayloadTooLarge,  // above kMaxUdpPayload (no fragmentation)
  kUnresolved,       // no ARP entry and dynamic ARP is off or the target is off-link
  kArpQueueFull,     // too many datagrams waiting for ARP
  kLinkRejected,     // the port's transmit queue refused the frame
  kNotConnected,     // no FrameSender attached
};
const char* to_string(SimHostError e);

struct SimHostStats {
  std::uint64_t rx_frames = 0;
  std::uint64_t rx_not_for_us = 0;   // MAC or IP destination not ours
  std::uint64_t rx_malformed = 0;    // failed frame parsing (checksums included)
  std::uint64_t rx_other_type = 0;   // not IPv4/UDP, not ARP, no EtherType handler
  std::uint64_t rx_raw = 0;          // frames handed to an EtherType handler
  std::uint64_t rx_no_listener = 0;  // UDP port not bound
  std::uint64_t rx_udp = 0;          // datagrams handed to a handler
  std::uint64_t tx_udp = 0;
  std::uint64_t arp_requests_sent = 0;
  std::uint64_t arp_replies_sent = 0;
  std::uint64_t arp_unresolved_drops = 0;  // pending datagrams dropped after the last attempt
};

class SimHost final : public FrameReceiver {
 public:
  // `sim` must outlive the host (the destructor cancels the host's timers).
  SimHost(Simulator& sim, SimHostConfig config);
  ~SimHost() override;
  SimHost(const SimHost&) = delete;
  SimHost& operator=(const SimHost&) = delete;

  // Adds a port for this host on `segment`, registers it as the receiver and
  // uses the port's sender. Returns the port.
  PortId attach(Segment& segment, LinkConfig link = {});
  // Uses `sender` for transmission (e.g. a MACsec shim in front of a port).
  void connect(FrameSender* sender) { sender_ = sender; }

  [[nodiscard]] const SimHostConfig& config() const { return config_; }
  [[nodiscard]] const SimHostStats& stats() const { return stats_; }

  void add_static_arp(Ipv4Address ip, MacAddress mac);
  [[nodiscard]] std::optional<MacAddress> arp_lookup(Ipv4Address ip) const;

  // Binds a UDP port; every datagram to it (unicast, broadcast or a joined
  // group) goes to `handler`.
  Status<SimHostError> bind(std::uint16_t port, UdpHandler handler);
  void unbind(std::uint16_t port);
  void join_group(Ipv4Address group) { groups_.insert(group); }
  void leave_group(Ipv4Address group) { groups_.erase(group); }

  // Sends one datagram from a bound port. A datagram to an unresolved on-link
  // neighbour waits for ARP (success is returned; it is dropped and counted if
  // resolution fails). A datagram to the host's own address is looped back
  // (delivered at the current time, never put on the link).
  Status<SimHostError> send_to(std::uint16_t src_port, Ipv4Endpoint dst, ByteSpan payload);

  // Frames of another EtherType (after any VLAN tags), e.g. Sampled Values
  // (0x88BA), go to `handler` with the whole frame. IPv4 and ARP stay here.
  using FrameHandler = std::function<void(ByteSpan frame)>;
  Status<SimHostError> bind_ether_type(std::uint16_t ether_type, FrameHandler handler);
  // Sends a whole frame the caller built (raw Ethernet on the same port).
  Status<SimHostError> send_frame(ByteSpan frame) { return transmit(frame); }

  // FrameReceiver.
  void on_frame(ByteSpan frame) override;

 private:
  struct Pending {
    Ipv4Address next_hop;
    std::vector<std::uint8_t> frame;  // destination MAC patched on resolution
  };
  struct Resolution {
    unsigned attempts = 0;
    std::optional<EventId> retry;  // pending retry timer, cancelled on resolution
  };

  [[nodiscard]] bool on_link(Ipv4Address a) const;
  [[nodiscard]] Ipv4Address subnet_broadcast() const;
  Status<SimHostError> transmit(ByteSpan frame);
  void send_arp(ArpOperation op, MacAddress target_mac, Ipv4Address target_ip);
  void start_resolution(Ipv4Address ip);
  void resolution_timer(Ipv4Address ip);
  void handle_arp(ByteSpan body);
  void handle_ipv4(ByteSpan frame);
  void flush_pending(Ipv4Address ip, MacAddress mac);
  void deliver_local(const UdpDatagram& d);

  Simulator& sim_;
  SimHostConfig config_;
  FrameSender* sender_ = nullptr;
  Segment* segment_ = nullptr;  // set by attach(); must outlive this host
  PortId port_ = 0;
  std::map<Ipv4Address, MacAddress> arp_;
  std::map<std::uint16_t, std::shared_ptr<UdpHandler>> bound_;
  std::map<std::uint16_t, std::shared_ptr<FrameHandler>> ether_types_;
  std::set<Ipv4Address> groups_;
  std::vector<Pending> pending_;
  std::map<Ipv4Address, Resolution> resolving_;
  std::uint16_t next_ip_id_ = 1;
  SimHostStats stats_;
  std::vector<std::uint8_t> tx_buffer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace layersec::net
