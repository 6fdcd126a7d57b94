// PtpSocket (IO): an AF_PACKET socket for gPTP on one interface, EtherType
// 0x88F7, member of 01-80-C2-00-00-0E, with SO_TIMESTAMPING software
// timestamps: RX timestamps from each frame's SCM_TIMESTAMPING control
// message, TX timestamps read back from the socket's error queue (the frame
// is looped back with its timestamp; it is matched by message type and
// sequence id, or by the frame's leading octets). Timestamps are returned on
// CLOCK_MONOTONIC_RAW (raw_clock.h).
// Mode::kSendOnly binds no EtherType, so the socket receives nothing: a sender
// for a node whose frames arrive on another socket (`macsec up --ptp`, where
// the link's ETH_P_ALL socket reads the lower interface ahead of its
// nftables guard and gPTP may travel inside MACsec frames). It still joins
// 01-80-C2-00-00-0E, so that the interface accepts gPTP's group address.
// Needs CAP_NET_RAW. Errors carry the failing call and errno text.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "layersec/base/bytes.h"
#include "layersec/ptp/message.h"

namespace layersec::ptp {

struct PtpSocketError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What ETHTOOL_GET_TS_INFO says the interface offers.
struct TimestampingInfo {
  bool queried = false;
  bool software_tx = false, software_rx = false, software = false;
  bool hardware_tx = false, hardware_rx = false;
  int phc_index = -1;
};

class PtpSocket {
 public:
  enum class Mode : std::uint8_t { kSendReceive, kSendOnly };
  // Throws PtpSocketError when the interface is unknown or a socket option fails.
  explicit PtpSocket(const std::string& interface, Mode mode = Mode::kSendReceive);
  ~PtpSocket();
  PtpSocket(const PtpSocket&) = delete;
  PtpSocket& operator=(const PtpSocket&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::array<std::uint8_t, 6>& mac() const { return mac_; }
  [[nodiscard]] const TimestampingInfo& timestamping() const { return info_; }

  struct Received {
    std::size_t size = 0;
    std::int64_t rx_raw_ns = 0;
    bool has_timestamp = false;
  };
  // One waiting frame into buf (nullopt when none; own looped frames skipped).
  std::optional<Received> receive(MutableByteSpan buf);
  // Sends a frame; false (with errno kept) on failure.
  bool send(ByteSpan frame);
  // Waits up to timeout_ms for the TX timestamp of the frame carrying
  // (type, sequence_id); nullopt on timeout.
  std::optional<std::int64_t> tx_timestamp(MessageType type, std::uint16_t sequence_id, int timeout_ms);
  // Waits up to timeout_ms for the TX timestamp of the frame whose first
  // min(64, size) octets are those of `sent` (for a MACsec frame they hold
  // the SecTAG's PN, unique per frame); nullopt on timeout.
  std::optional<std::int64_t> tx_timestamp_of(ByteSpan sent, int timeout_ms);
  [[nodiscard]] int last_errno() const { return errno_; }

 private:
  int fd_ = -1;
  int ifindex_ = 0;
  std::array<std::uint8_t, 6> mac_{};
  TimestampingInfo info_{};
  int errno_ = 0;
  // Reads the error queue until `match` accepts a looped frame (its
  // timestamp is returned) or timeout_ms passes.
  template <typename Match>
  std::optional<std::int64_t> wait_tx_timestamp(const Match& match, int timeout_ms);
};

}  // namespace layersec::ptp
