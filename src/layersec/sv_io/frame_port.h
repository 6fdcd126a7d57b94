// Where SV frames come from and go to on a real host: the two small
// interfaces the paced publisher and the subscriber loop use, and their
// AF_PACKET implementation (net::PacketSocket). Tests implement them over a
// socketpair.
#pragma once

#include <cstdint>
#include <string>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/io.h"
#include "layersec/net/packet_socket.h"

namespace layersec::sv_io {

// Receives whole Ethernet frames from a non-blocking descriptor.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // The descriptor to poll for POLLIN.
  [[nodiscard]] virtual int fd() const = 0;
  // One frame into `buffer`: its size, kWouldBlock when none is waiting,
  // kTruncated when it did not fit (the frame is consumed).
  virtual Result<std::size_t, net::IoError> receive(MutableByteSpan buffer) = 0;
  // Frames the kernel dropped for this source since the last call (0 when
  // it cannot tell).
  virtual std::uint64_t take_kernel_drops() { return 0; }
};

// Sends whole Ethernet frames.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual Result<std::size_t, net::IoError> send(ByteSpan frame) = 0;
  // errno of the last failed send.
  [[nodiscard]] virtual int last_errno() const = 0;
};

// Opens an AF_PACKET socket on `iface` for `ether_type`. Throws
// std::runtime_error naming the interface and the errno text ("--iface is
// required" when `iface` is empty; a hint about CAP_NET_RAW on EPERM).
net::PacketSocket open_packet_socket(const std::string& iface, std::uint16_t ether_type, bool nonblocking);

// A PacketSocket as source and sink; kernel drops read from
// PACKET_STATISTICS (which the kernel resets on every read).
class PacketPort final : public FrameSource, public FrameSink {
 public:
  explicit PacketPort(net::PacketSocket& socket) : socket_(&socket) {}
  [[nodiscard]] int fd() const override { return socket_->fd(); }
  Result<std::size_t, net::IoError> receive(MutableByteSpan buffer) override { return socket_->receive(buffer); }
  std::uint64_t take_kernel_drops() override;
  Result<std::size_t, net::IoError> send(ByteSpan frame) override { return socket_->send(frame); }
  [[nodiscard]] int last_errno() const override { return socket_->last_errno(); }

 private:
  net::PacketSocket* socket_;
};

}  // namespace layersec::sv_io
