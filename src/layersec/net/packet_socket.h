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
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/net/io.h"
#include "layersec/net/socket_filter.h"

namespace layersec::net {

// Binding to this EtherType receives every frame (ETH_P_ALL).
inline constexpr std::uint16_t kEtherTypeAll = 0x0003;

struct PacketBatchStorage;  // the mmsghdr/iovec/control arrays (packet_socket.cc)
struct PacketRxRing;        // the mapped TPACKET_V2 receive ring (packet_socket.cc)

// Frames received by one PacketSocket::receive(PacketRxBatch&): `capacity`
// slots of `frame_capacity` octets each, allocated once (recvmmsg copies
// into them). With a receive ring (PacketSocket::enable_rx_ring) frame(i)
// is instead a view into the ring slot, which the socket gives back to the
// kernel at the next receive() or release(): in both cases a frame is valid
// (and may be changed in place) until then.
class PacketRxBatch {
 public:
  enum class Status : std::uint8_t {
    kOk,         // frame(i) holds the frame (offloaded VLAN tag restored)
    kSkipped,    // another local socket's outgoing frame (PACKET_OUTGOING)
    kTruncated,  // longer than frame_capacity - 4 (or its ring slot): not delivered
  };
  PacketRxBatch(std::size_t capacity, std::size_t frame_capacity);
  ~PacketRxBatch();
  PacketRxBatch(PacketRxBatch&&) noexcept;
  PacketRxBatch& operator=(PacketRxBatch&&) noexcept;

  [[nodiscard]] std::size_t capacity() const { return sizes_.size(); }
  // Messages the last receive returned.
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] Status status(std::size_t i) const { return status_[i]; }
  [[nodiscard]] MutableByteSpan frame(std::size_t i) { return {data_[i], sizes_[i]}; }
  // Software RX timestamp (CLOCK_REALTIME ns), 0 without one.
  [[nodiscard]] std::int64_t rx_realtime_ns(std::size_t i) const { return rx_ns_[i]; }

 private:
  friend class PacketSocket;
  std::size_t frame_capacity_;
  std::size_t count_ = 0;
  std::vector<std::uint8_t> buffers_;
  std::vector<std::uint8_t*> data_;  // where frame(i) starts: a buffer slot or a ring slot
  std::vector<std::size_t> sizes_;
  std::vector<std::int64_t> rx_ns_;
  std::vector<Status> status_;
  std::unique_ptr<PacketBatchStorage> storage_;
};

// Frames for one PacketSocket::send(PacketTxBatch&) (sendmmsg), sent in the
// order they were added: `capacity` slots of `frame_capacity` octets.
class PacketTxBatch {
 public:
  PacketTxBatch(std::size_t capacity, std::size_t frame_capacity);
  ~PacketTxBatch();
  PacketTxBatch(PacketTxBatch&&) noexcept;
  PacketTxBatch& operator=(PacketTxBatch&&) noexcept;

  [[nodiscard]] std::size_t capacity() const { return sizes_.size(); }
  [[nodiscard]] std::size_t pending() const { return count_; }
  [[nodiscard]] bool full() const { return count_ == sizes_.size(); }
  // Room for the next frame (frame_capacity octets); empty when full.
  [[nodiscard]] MutableByteSpan next_slot();
  // The next slot now holds a frame of `size` octets (<= frame_capacity).
  void commit(std::size_t size);

 private:
  friend class PacketSocket;
  std::size_t frame_capacity_;
  std::size_t count_ = 0;
  std::vector<std::uint8_t> buffers_;
  std::vector<std::size_t> sizes_;
  std::unique_ptr<PacketBatchStorage> storage_;
};

// What PacketSocket::send(PacketTxBatch&) did with the pending frames.
struct BatchSendResult {
  std::size_t sent = 0;
  std::size_t failed = 0;  // refused by the kernel (last_errno() has the last reason): not sent
};

class PacketSocket {
 public:
  // Opens a socket on `interface` for `ether_type` in the calling thread's
  // network namespace.
  static Result<PacketSocket, IoError> open(const std::string& interface, std::uint16_t ether_type,
                                            bool nonblocking = true, int* error_number = nullptr);
  PacketSocket(PacketSocket&&) noexcept;
  PacketSocket& operator=(PacketSocket&&) noexcept;
  ~PacketSocket();

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

  // How PACKET_FANOUT spreads a group's frames over its sockets.
  enum class Fanout : std::uint8_t {
    kHash,  // PACKET_FANOUT_HASH: by the kernel's flow hash (what it can dissect)
    kLb,    // PACKET_FANOUT_LB: round robin, frame by frame
    kCpu,   // PACKET_FANOUT_CPU: by the CPU that received the frame
  };
  // Joins (or creates) fanout group `group_id` of this process's sockets on
  // the same interface and protocol: from now on each frame goes to one
  // socket of the group (`mode`). Call after the filter is attached.
  Status<IoError> join_fanout(std::uint16_t group_id, Fanout mode);

  // Sends one whole frame (destination MAC first).
  Result<std::size_t, IoError> send(ByteSpan frame);
  // Sends the batch's pending frames in order (sendmmsg) and empties it. A
  // frame the kernel refuses is counted failed and skipped; the ones after
  // it are still sent, in order.
  BatchSendResult send(PacketTxBatch& batch);
  // Receives up to batch.capacity() waiting frames at once (recvmmsg, or
  // from the receive ring without a system call); kWouldBlock when none is
  // waiting. Each slot says what it holds.
  Result<std::size_t, IoError> receive(PacketRxBatch& batch);
  // PACKET_MMAP receive ring (TPACKET_V2, PACKET_RX_RING) of at least
  // `frames` slots, each holding a frame of up to `frame_capacity` - 4
  // octets (4 more are kept for a VLAN tag put back from the slot header):
  // the kernel copies each frame the socket filter accepts into the next
  // free slot as it arrives, and receive(PacketRxBatch&) hands the ready
  // slots over without a system call (poll() still signals them). Frames
  // keep their order, the filter, the PACKET_OUTGOING skip and the VLAN tag
  // restore of the recvmmsg path; a frame longer than its slot is reported
  // kTruncated, never read beyond the slot. A frame arriving while every
  // slot is in use is dropped by the kernel and counted (rx_ring_drops()).
  // Call before traffic arrives (frames queued before are not read). Only
  // receive(PacketRxBatch&) reads the ring: the single-frame receive()
  // must not be used afterwards. Fails (the socket stays as it was) when the
  // kernel refuses (e.g. no PACKET_MMAP): the recvmmsg path is the fallback.
  Status<IoError> enable_rx_ring(std::size_t frames, std::size_t frame_capacity);
  [[nodiscard]] bool rx_ring() const { return rx_ring_ != nullptr; }
  // Slots of the receive ring (0 without one).
  [[nodiscard]] std::size_t rx_ring_slots() const;
  // Gives the ring slots of the last receive(batch) back to the kernel
  // (frame(i) is invalid afterwards). Without a ring it does nothing.
  void release(PacketRxBatch& batch);
  // Frames the kernel dropped because the receive ring was full, as read
  // (PACKET_STATISTICS) whenever a slot header flagged TP_STATUS_LOSING;
  // returns the count since the last call.
  [[nodiscard]] std::uint64_t take_rx_ring_drops();
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
  Result<std::size_t, IoError> receive_ring(PacketRxBatch& batch);
  UniqueFd fd_;
  int ifindex_ = 0;
  MacAddress mac_;
  int errno_ = 0;
  std::unique_ptr<PacketRxRing> rx_ring_;
};

}  // namespace layersec::net
