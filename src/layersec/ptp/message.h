// IEEE 802.1AS-2020 (gPTP) message codec over base's ByteReader/ByteWriter.
//
// Covers what a time-aware system on a full-duplex Ethernet link exchanges
// (802.1AS-2020 §10.6, §11.4): the common header (§10.6.2), Sync and
// Follow_Up with the Follow_Up information TLV (§11.4.4.3), Pdelay_Req,
// Pdelay_Resp and Pdelay_Resp_Follow_Up (§11.4.5-7), Announce with the path
// trace TLV (§10.6.3, §10.6.3.3) and Signaling with the message interval
// request TLV (§10.6.4.3). Frames go to 01-80-C2-00-00-0E with EtherType
// 0x88F7; the header's majorSdoId (transportSpecific) must be 1 and
// versionPTP 2, minorVersionPTP 0 (linuxptp 3.x) or 1 (802.1AS-2020,
// linuxptp 4.x) is accepted and kept, so a parsed message re-encodes byte
// for byte.
//
// parse_message() validates the whole message (length field, timestamps with
// nanoseconds < 10^9, TLV types and lengths, no trailing bytes) before it
// returns anything; encode_message() writes into a caller-owned buffer and
// fills in messageLength. Times are carried as they are on the wire; the
// helpers below convert to nanoseconds (int64, so seconds < 2^33).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::ptp {

inline constexpr std::uint16_t kEtherType = 0x88F7;
inline constexpr std::array<std::uint8_t, 6> kPdelayMulticast = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};
inline constexpr std::uint8_t kMajorSdoIdGptp = 1;  // transportSpecific
inline constexpr std::uint8_t kVersionPtp = 2;
inline constexpr std::size_t kHeaderSize = 34;
inline constexpr std::size_t kMaxPathTrace = 16;  // clock identities kept in a path trace TLV
inline constexpr std::size_t kMaxMessageSize = kHeaderSize + 30 + 4 + 8 * kMaxPathTrace;
inline constexpr std::size_t kMaxFrameSize = 14 + kMaxMessageSize;

// messageType (802.1AS-2020 Table 10-5 / 11-4).
enum class MessageType : std::uint8_t {
  kSync = 0x0,
  kPdelayReq = 0x2,
  kPdelayResp = 0x3,
  kFollowUp = 0x8,
  kPdelayRespFollowUp = 0xA,
  kAnnounce = 0xB,
  kSignaling = 0xC,
};

const char* to_string(MessageType t);

// Header flags (802.1AS-2020 Table 10-9), octet 0 in the high byte.
inline constexpr std::uint16_t kFlagTwoStep = 0x0200;
inline constexpr std::uint16_t kFlagLeap61 = 0x0001;
inline constexpr std::uint16_t kFlagLeap59 = 0x0002;
inline constexpr std::uint16_t kFlagUtcOffsetValid = 0x0004;
inline constexpr std::uint16_t kFlagPtpTimescale = 0x0008;
inline constexpr std::uint16_t kFlagTimeTraceable = 0x0010;
inline constexpr std::uint16_t kFlagFrequencyTraceable = 0x0020;

// ClockIdentity (EUI-64) as a big-endian integer, and a port of it.
struct PortIdentity {
  std::uint64_t clock_identity = 0;
  std::uint16_t port_number = 0;
  constexpr bool operator==(const PortIdentity&) const = default;
};

// The EUI-64 clock identity linuxptp derives from a MAC (mac[0..2] FF FE mac[3..5]).
std::uint64_t clock_identity_from_mac(const std::array<std::uint8_t, 6>& mac);

// A PTP Timestamp: 48-bit seconds and nanoseconds (< 10^9 once parsed).
struct Timestamp {
  std::uint64_t seconds = 0;
  std::uint32_t nanoseconds = 0;
  constexpr bool operator==(const Timestamp&) const = default;
};
inline constexpr std::uint64_t kMaxTimestampSeconds = std::uint64_t{1} << 33;  // fits int64 ns
// Nanoseconds since the epoch of the timescale (precondition: seconds < kMaxTimestampSeconds).
std::int64_t to_ns(const Timestamp& t);
// Precondition: ns >= 0.
Timestamp from_ns(std::int64_t ns);

// correctionField: nanoseconds scaled by 2^16.
inline constexpr double kCorrectionScale = 65536.0;

struct Header {
  std::uint8_t major_sdo_id = kMajorSdoIdGptp;
  MessageType type = MessageType::kSync;
  std::uint8_t minor_version = 1;
  std::uint8_t version = kVersionPtp;
  std::uint16_t message_length = 0;  // set by encode_message
  std::uint8_t domain = 0;
  std::uint8_t minor_sdo_id = 0;
  std::uint16_t flags = 0;
  std::int64_t correction = 0;  // scaled ns
  std::uint32_t type_specific = 0;
  PortIdentity source{};
  std::uint16_t sequence_id = 0;
  std::uint8_t control = 0;
  std::int8_t log_interval = 0;
};

// Follow_Up information TLV (802.1AS-2020 §11.4.4.3).
struct FollowUpInfo {
  std::int32_t cumulative_scaled_rate_offset = 0;  // (rateRatio - 1) * 2^41
  std::uint16_t gm_time_base_indicator = 0;
  std::array<std::uint8_t, 12> last_gm_phase_change{};  // ScaledNs, kept as bytes
  std::int32_t scaled_last_gm_freq_change = 0;
  constexpr bool operator==(const FollowUpInfo&) const = default;
};
inline constexpr double kRateOffsetScale = 2199023255552.0;  // 2^41

// Message interval request TLV (802.1AS-2020 §10.6.4.3). Log intervals:
// 127 = stop sending, 126 = set to the initial value, -128 = no change.
struct IntervalRequest {
  std::int8_t link_delay_interval = -128;
  std::int8_t time_sync_interval = -128;
  std::int8_t announce_interval = -128;
  std::uint8_t flags = 0x03;  // computeNeighborRateRatio | computeMeanLinkDelay
  constexpr bool operator==(const IntervalRequest&) const = default;
};
inline constexpr std::int8_t kIntervalNoChange = -128;
inline constexpr std::int8_t kIntervalInitial = 126;
inline constexpr std::int8_t kIntervalStop = 127;

struct ClockQuality {
  std::uint8_t clock_class = 248;
  std::uint8_t clock_accuracy = 0xFE;
  std::uint16_t offset_scaled_log_variance = 0x4E5D;
  constexpr bool operator==(const ClockQuality&) const = default;
};

struct AnnounceBody {
  std::int16_t current_utc_offset = 0;
  std::uint8_t priority1 = 248;
  ClockQuality quality{};
  std::uint8_t priority2 = 248;
  std::uint64_t grandmaster_identity = 0;
  std::uint16_t steps_removed = 0;
  std::uint8_t time_source = 0xA0;  // internal oscillator
  bool has_path_trace = false;
  std::uint8_t path_trace_count = 0;
  std::array<std::uint64_t, kMaxPathTrace> path_trace{};
};

// One decoded message. Which body fields are meaningful depends on
// header.type:
//   Sync                  (none; two-step)
//   Follow_Up             timestamp = preciseOriginTimestamp, follow_up
//   Pdelay_Req            (none)
//   Pdelay_Resp           timestamp = requestReceiptTimestamp, port = requestingPortIdentity
//   Pdelay_Resp_Follow_Up timestamp = responseOriginTimestamp, port = requestingPortIdentity
//   Announce              announce
//   Signaling             port = targetPortIdentity, interval (has_interval_request)
struct Message {
  Header header{};
  Timestamp timestamp{};
  PortIdentity port{};
  FollowUpInfo follow_up{};
  AnnounceBody announce{};
  bool has_interval_request = false;
  IntervalRequest interval{};
  // Octets the standard reserves (Sync and Announce originTimestamp,
  // Pdelay_Req's 20 octets, Announce's octet after currentUtcOffset, the
  // interval request TLV's last two): ignored
  // on receipt, kept so a message re-encodes byte for byte (zero when built).
  std::array<std::uint8_t, 20> reserved{};
};

// Why a message was refused by the codec.
enum class ParseError : std::uint8_t {
  kTruncated,          // shorter than the header or than its messageLength
  kTransportSpecific,  // majorSdoId is not 1 (not gPTP)
  kVersion,            // versionPTP is not 2 or minorVersionPTP not 0/1
  kLength,             // messageLength disagrees with the type's layout
  kUnknownType,        // a messageType gPTP does not use on this link
  kTimestamp,          // nanoseconds >= 10^9 or seconds >= 2^33
  kTlv,                // missing, unknown or malformed TLV
  kTrailingBytes,      // bytes after the last field the type defines
  kEtherType,          // the frame is not 0x88F7 (parse_frame only)
};
inline constexpr std::size_t kParseErrorCount = 9;
const char* to_string(ParseError e);

// Parses one PTP message (no Ethernet header). Bytes after messageLength are
// refused (kTrailingBytes); parse_frame allows the Ethernet minimum-size pad.
Result<Message, ParseError> parse_message(ByteSpan data);
// Encodes `m` (messageLength computed) into `out`; returns the size, 0 when
// the buffer is too small or a field cannot be encoded (path trace count >
// kMaxPathTrace, timestamp seconds >= 2^48).
std::size_t encode_message(const Message& m, MutableByteSpan out);

// Ethernet framing: destination 01-80-C2-00-00-0E, `src` MAC, EtherType
// 0x88F7, the message (the link pads short frames, as for ptp4l's).
std::size_t encode_frame(const Message& m, const std::array<std::uint8_t, 6>& src, MutableByteSpan out);
struct ParsedFrame {
  std::array<std::uint8_t, 6> dst{};
  std::array<std::uint8_t, 6> src{};
  Message message{};
};
// Parses an untagged Ethernet frame carrying one PTP message; after
// messageLength only zero padding up to the 60-octet minimum frame is allowed.
Result<ParsedFrame, ParseError> parse_frame(ByteSpan frame);

}  // namespace layersec::ptp
