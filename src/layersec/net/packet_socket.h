// PacketSocket: an AF_PACKET/SOCK_RAW socket bound to one interface and one
// EtherType (or every type), sending and receiving whole Ethernet frames
// (no FCS). This is how a user-space SecY or an SV publisher reaches a real
// link. Needs CAP_NET_RAW.
//
// The kernel may strip an 802.1Q tag into packet metadata (VLAN offload);
// receive() puts it back in front of the EtherType so callers always see the
// frame as it was on the wire. Frames this socket sent itself are never
// returned; frames other local sockets sent (PACKET_OUTGOING) are skipped too.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/net/io.h"
#include "layersec/net/socket_filter.h"

namespace layersec::net {

// Binding to this EtherType receives every frame (ETH_P_ALL).
inline constexpr std::uint16_t kEtherTypeAll = 0x0003;

class PacketSocket {
 public:
  // Opens a socket on `interface` for `ether_type` in the calling thread's
  // network namespace.
  static Result<PacketSocket, IoError> open(const std::string& interface, std::uint16_t ether_type,
                                            bool nonblocking = true, int* error_number = nullptr);
  PacketSocket(PacketSocket&&) noexcept = default;
  PacketSocket& operator=(PacketSocket&&) noexcept = default;

  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] int interface_index() const { return ifindex_; }
  [[nodiscard]] MacAddress interface_mac() const { return mac_; }
  [[nodiscard]] int last_errno() const { return errno_; }

  // PACKET_MR_PROMISC: receive frames for any destination MAC.
  Status<IoError> set_promiscuous(bool on);
  // PACKET_MR_MULTICAST: receive frames for one group MAC / stop doing so.
  Status<IoError> add_multicast(const MacAddress& mac);
  Status<IoError> drop_multicast(const MacAddress& mac);
  // A deeper receive queue (SO_RCVBUFFORCE, which needs CAP_NET_ADMIN, else
  // SO_RCVBUF within the system limit): bursts that arrive faster than one
  // thread drains them wait instead of being dropped. Best effort.
  void set_receive_buffer(int bytes);

  // Sends one whole frame (destination MAC first).
  Result<std::size_t, IoError> send(ByteSpan frame);
  // Receives one frame into `buffer` (with any offloaded VLAN tag restored);
  // kWouldBlock when none is waiting, kTruncated when it did not fit.
  Result<std::size_t, IoError> receive(MutableByteSpan buffer);
  // The same, and *rx_realtime_ns = the kernel's software RX timestamp of
  // the frame (CLOCK_REALTIME ns; 0 when the frame carried none, e.g.
  // before enable_rx_timestamps()).
  Result<std::size_t, IoError> receive(MutableByteSpan buffer, std::int64_t* rx_realtime_ns);
  // Replaces the socket's classic BPF filter (SO_ATTACH_FILTER,
  // socket_filter.h): from now on the kernel queues only what `program`
  // accepts, truncated to what it returns.
  Status<IoError> attach_filter(std::span<const BpfInstruction> program);
  // SO_TIMESTAMPING software RX timestamps (taken where the kernel receives
  // the frame, before any ingress hook) on every frame from now on.
  Status<IoError> enable_rx_timestamps();

 private:
  PacketSocket() = default;
  Status<IoError> membership(int type, const MacAddress* mac, bool add);
  UniqueFd fd_;
  int ifindex_ = 0;
  MacAddress mac_;
  int errno_ = 0;
};

}  // namespace layersec::net
