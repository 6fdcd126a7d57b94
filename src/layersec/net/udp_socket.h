// UdpSocket: a thin non-blocking IPv4 UDP socket adapter (unicast, multicast
// joins on a chosen interface, SO_REUSEADDR, receive with source and
// destination address). Used by nodes running in namespaces or on hosts.
//
// To receive multicast, bind to Ipv4Address::any() (or the group) and the
// port, then join_group(); a socket bound to a unicast address does not see
// group traffic on Linux.
#pragma once

#include <cstdint>
#include <optional>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/net/io.h"

namespace layersec::net {

struct UdpSocketOptions {
  bool reuse_address = true;   // SO_REUSEADDR (several sockets on one multicast port)
  bool reuse_port = false;     // SO_REUSEPORT
  bool nonblocking = true;
  // IP_MULTICAST_IF: the local address multicast is sent from (unset: routing decides).
  std::optional<Ipv4Address> multicast_interface;
  bool multicast_loop = false;  // IP_MULTICAST_LOOP
  std::uint8_t multicast_ttl = 1;
  int receive_buffer = 0;  // SO_RCVBUF bytes, 0 = system default
  int send_buffer = 0;     // SO_SNDBUF bytes, 0 = system default
  // SO_BINDTODEVICE: only this interface (needs CAP_NET_RAW); empty = any.
  std::string bind_device;
};

struct ReceivedDatagram {
  std::size_t size = 0;  // bytes written to the caller's buffer
  Ipv4Endpoint src;
  Ipv4Address dst;       // the packet's destination (a group for multicast), from IP_PKTINFO
  int interface_index = 0;
};

class UdpSocket {
 public:
  // Creates, configures and binds. Port 0 picks an ephemeral port.
  static Result<UdpSocket, IoError> open(Ipv4Endpoint local, const UdpSocketOptions& options = {},
                                         int* error_number = nullptr);
  UdpSocket(UdpSocket&&) noexcept = default;
  UdpSocket& operator=(UdpSocket&&) noexcept = default;

  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] Ipv4Endpoint local_endpoint() const { return local_; }
  [[nodiscard]] int last_errno() const { return errno_; }

  // IP_ADD_MEMBERSHIP on the interface with address `interface` (any() lets
  // the kernel choose) or with index `interface_index`.
  Status<IoError> join_group(Ipv4Address group, Ipv4Address interface = Ipv4Address::any());
  Status<IoError> join_group_on(Ipv4Address group, int interface_index);
  // IP_DROP_MEMBERSHIP, naming the interface the same way as the join did.
  Status<IoError> leave_group(Ipv4Address group, Ipv4Address interface = Ipv4Address::any());
  Status<IoError> leave_group_on(Ipv4Address group, int interface_index);

  // One datagram. kWouldBlock when the send buffer is full.
  Result<std::size_t, IoError> send_to(Ipv4Endpoint dst, ByteSpan payload);
  // One datagram into `buffer`; kWouldBlock when none is waiting, kTruncated
  // when it did not fit (the datagram is consumed).
  Result<ReceivedDatagram, IoError> receive(MutableByteSpan buffer);

 private:
  UdpSocket() = default;
  Status<IoError> membership(int option, Ipv4Address group, Ipv4Address interface, int interface_index);
  UniqueFd fd_;
  Ipv4Endpoint local_;
  int errno_ = 0;
};

}  // namespace layersec::net
