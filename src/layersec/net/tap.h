// TapDevice: a Linux TAP interface (/dev/net/tun with IFF_TAP | IFF_NO_PI)
// whose descriptor reads and writes whole Ethernet frames (no FCS). Frames the
// kernel sends out of the interface are read here; frames written here appear
// to the kernel as received on it. A user-space MACsec interface sits on one.
// The interface is not persistent: it disappears when the descriptor closes.
// Needs CAP_NET_ADMIN. The interface is created down and without addresses.
#pragma once

#include <string>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/io.h"
#include "layersec/net/vnet_header.h"

namespace layersec::net {

class TapDevice {
 public:
  // Creates a TAP interface in the calling thread's network namespace.
  // `name` may be empty (the kernel picks tapN) or a pattern such as "lsec%d".
  // With `vnet_header` (IFF_VNET_HDR, header size set to the 10 octets of
  // VnetHeader) every frame crosses with a virtio-net header (vnet_header.h):
  // read() returns it beside the frame, write() sends an all-zero one or the
  // one given; enable_tcp_offload() then lets the kernel hand over large TCP
  // segments and partial checksums (net/offload.h completes them).
  // With `multi_queue` (IFF_MULTI_QUEUE) the interface has one queue per
  // descriptor: opening the same name again (with the same flags) adds a
  // queue, and the kernel spreads the frames it sends over the queues by
  // flow (tun's automatic selection: the queue that last wrote the flow's
  // received frames). The interface goes when its last queue's descriptor
  // closes.
  static Result<TapDevice, IoError> open(const std::string& name = "", bool nonblocking = true,
                                         int* error_number = nullptr, bool vnet_header = false,
                                         bool multi_queue = false);
  TapDevice(TapDevice&&) noexcept = default;
  TapDevice& operator=(TapDevice&&) noexcept = default;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] int last_errno() const { return errno_; }

  // One frame the kernel transmitted on the interface; kWouldBlock when none.
  // `buffer` must hold the interface MTU plus the Ethernet header and tags
  // (kEthernetMaxFrameSize at the default MTU); the tun driver does not
  // report a frame that did not fit, so kBadArgument is returned for a
  // smaller buffer.
  Result<std::size_t, IoError> read(MutableByteSpan buffer);
  // The same, and the frame's virtio-net header (all zero without
  // IFF_VNET_HDR). With IFF_VNET_HDR, `buffer` must hold 64 KiB + 14.
  Result<std::size_t, IoError> read(MutableByteSpan buffer, VnetHeader* vnet);
  // TUNSETOFFLOAD with TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 (needs
  // IFF_VNET_HDR): the kernel may now hand over TCP segments up to 64 KiB
  // and frames whose checksum is left to the reader.
  Status<IoError> enable_tcp_offload();
  [[nodiscard]] bool vnet_header() const { return vnet_; }
  // Hands one frame to the kernel as received on the interface (with
  // IFF_VNET_HDR behind an all-zero header: a complete frame). Returns the
  // frame octets written.
  Result<std::size_t, IoError> write(ByteSpan frame);
  // The same behind `vnet` (e.g. a coalesced TCP frame with NEEDS_CSUM and a
  // GSO type: offload.h TcpCoalescer); kBadArgument without IFF_VNET_HDR.
  Result<std::size_t, IoError> write(ByteSpan frame, const VnetHeader& vnet);

 private:
  TapDevice() = default;
  UniqueFd fd_;
  std::string name_;
  int errno_ = 0;
  bool vnet_ = false;
};

}  // namespace layersec::net
