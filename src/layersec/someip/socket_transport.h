// SocketTransport: the runtime's Transport on real UDP sockets driven by an
// net::EventLoop (namespaces, hosts). Single-threaded: every callback runs on
// the loop's thread.
//
// Sockets:
//   * one net::UdpSocket per bound port, bound to local_address:port; it
//     also sends (multicast leaves through IP_MULTICAST_IF = local_address,
//     so SD multicast goes out on the node's interface);
//   * one socket per multicast port, bound to any():port (Linux delivers
//     group traffic only to sockets bound to the wildcard or the group) and
//     joined to each group on the interface that has local_address. Only
//     datagrams whose destination (IP_PKTINFO) is a joined group are handed
//     on; unicast datagrams reaching the wildcard socket are ignored.
// `device` (optional) adds SO_BINDTODEVICE to every socket (needs
// CAP_NET_RAW). Multicast loopback is enabled only when local_address is in
// 127/8, so several nodes on one host's loopback can find each other; on
// other addresses a node never hears its own multicast.
// The clock and wake_at are the loop's (LoopAlarm: one loop timer).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layersec/net/event_loop.h"
#include "layersec/net/udp_socket.h"
#include "layersec/someip/loop_alarm.h"
#include "layersec/someip/runtime.h"  // callers construct a Runtime on the adapter
#include "layersec/someip/transport.h"

namespace layersec::someip {

struct SocketTransportStats {
  std::uint64_t rx_datagrams = 0;
  std::uint64_t rx_truncated = 0;     // larger than 64 KiB: dropped
  std::uint64_t rx_not_joined = 0;    // on a multicast socket, not for a joined group
  std::uint64_t rx_errors = 0;
  std::uint64_t tx_errors = 0;        // sendto failed (incl. would-block)
};

class SocketTransport final : public Transport {
 public:
  // `loop` is not owned and must outlive the transport.
  SocketTransport(net::EventLoop& loop, net::Ipv4Address local_address, std::string device = {});
  ~SocketTransport() override;
  SocketTransport(const SocketTransport&) = delete;
  SocketTransport& operator=(const SocketTransport&) = delete;

  [[nodiscard]] IpAddress local_address() const override;
  Status<TransportError> bind(std::uint16_t port, Handler handler) override;
  Status<TransportError> join(const Endpoint& group, Handler handler) override;
  void leave(const Endpoint& group) override;
  void unbind(std::uint16_t port) override;
  Status<TransportError> send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) override;
  [[nodiscard]] TimePoint now() const override { return alarm_.now(); }
  void wake_at(TimePoint at, TimerCallback cb) override { alarm_.wake_at(at, std::move(cb)); }

  // errno of the last failed socket operation (0 if none), for diagnostics.
  [[nodiscard]] int last_errno() const { return last_errno_; }
  [[nodiscard]] const SocketTransportStats& stats() const { return stats_; }

 private:
  struct UnicastPort {
    net::UdpSocket socket;
    std::shared_ptr<Handler> handler;
  };
  struct MulticastPort {
    net::UdpSocket socket;
    std::map<net::Ipv4Address, std::shared_ptr<Handler>> groups;
  };
  [[nodiscard]] net::UdpSocketOptions options() const;
  // One datagram into rx_buffer_: kGot, kSkip (a truncated datagram was
  // dropped and counted; read on) or kStop (nothing waiting, or an error,
  // counted).
  enum class RxStep : std::uint8_t { kGot, kSkip, kStop };
  RxStep receive_one(net::UdpSocket& socket, net::ReceivedDatagram& out);
  void drain_unicast(std::uint16_t port);
  void drain_multicast(std::uint16_t port);

  net::EventLoop& loop_;
  net::Ipv4Address local_;
  std::string device_;
  std::map<std::uint16_t, std::unique_ptr<UnicastPort>> unicast_;
  std::map<std::uint16_t, std::unique_ptr<MulticastPort>> multicast_;
  LoopAlarm alarm_;
  std::vector<std::uint8_t> rx_buffer_ = std::vector<std::uint8_t>(65536);
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  SocketTransportStats stats_;
  int last_errno_ = 0;
};

}  // namespace layersec::someip
