// SOME/IP-TP: segmentation of large messages over UDP and their reassembly
// (Open SOME/IP Specification feat_req_someiptp_760..801; AUTOSAR
// PRS_SOMEIPProtocol §5.2.2).
//
// A segment is a SOME/IP message whose Message Type has the TP flag (0x20)
// set, followed by a 4-byte TP header (feat_req_someiptp_766):
//
//   | Offset [28 bits] | Reserved [3 bits] | More Segments [1 bit] |
//
// Offset counts 16-byte units (feat_req_someiptp_767/768); every segment but
// the last is a multiple of 16 bytes long; the largest aligned segment is
// 87 * 16 = 1392 bytes (feat_req_someiptp_772/773). All segments carry the
// original Message ID, Request ID, versions and Return Code (_774).
//
// TpReassembler is sans-I/O and bounded: at most `max_concurrent` messages in
// flight, each at most `max_message_size` bytes, each dropped `timeout` after
// its first segment (time passed in). Overlapping or inconsistent segments
// abort the message they belong to; an exact duplicate is ignored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/someip/address.h"
#include "layersec/someip/message.h"

namespace layersec::someip {

inline constexpr std::size_t kTpHeaderSize = 4;
inline constexpr std::size_t kTpMaxSegment = 1392;  // feat_req_someiptp_773
inline constexpr std::size_t kTpAlignment = 16;

// A parsed TP segment: the SOME/IP header (TP flag still set), the byte
// offset, the more-segments flag and a view of the segment's data.
struct TpSegment {
  Header header;
  std::uint32_t offset = 0;  // bytes (field value * 16)
  bool more_segments = false;
  ByteSpan data;
};

enum class TpError : std::uint8_t {
  kNotTp,                // the message type has no TP flag
  kTruncatedTpHeader,    // fewer than 4 payload bytes
  kEmptySegment,         // a segment with no data
  kMisaligned,           // a non-last segment whose length is not a multiple of 16
  kTooLarge,             // offset + length beyond max_message_size
  kTooManyReassemblies,  // max_concurrent messages already in flight
  kInconsistentHeader,   // versions or return code differ from the first segment
  kOverlap,              // overlaps received data with other bytes or boundaries
  kInconsistentLength,   // data past the end set by the last segment, or two ends
};
[[nodiscard]] std::string_view to_string(TpError e);
inline constexpr std::size_t kTpErrorCount = static_cast<std::size_t>(TpError::kInconsistentLength) + 1;

// Parses the TP header of a message whose type has the TP flag.
[[nodiscard]] Result<TpSegment, TpError> parse_tp_segment(const MessageView& m);
[[nodiscard]] bool write_tp_header(ByteWriter& w, std::uint32_t offset_bytes, bool more_segments);

// Cuts one message into segments (feat_req_someiptp_772/777: ascending order,
// all but the last `max_segment` bytes). The TP flag is added to the header's
// message type. `payload` must outlive the segmenter.
class TpSegmenter {
 public:
  // max_segment is rounded down to a multiple of 16 (at least 16).
  TpSegmenter(const Header& original, ByteSpan payload, std::size_t max_segment = kTpMaxSegment);
  [[nodiscard]] bool done() const { return pos_ >= payload_.size() && emitted_; }
  [[nodiscard]] std::size_t segment_count() const;
  // Largest segment message this segmenter writes (header + TP header + data).
  [[nodiscard]] std::size_t max_segment_message_size() const {
    return kHeaderSize + kTpHeaderSize + max_segment_;
  }
  // Writes the next segment message into w; false if done or out of room.
  [[nodiscard]] bool write_next(ByteWriter& w);

 private:
  Header header_;
  ByteSpan payload_;
  std::size_t max_segment_;
  std::size_t pos_ = 0;
  bool emitted_ = false;
};

struct TpLimits {
  std::size_t max_message_size = 64 * 1024;  // reassembled payload bytes
  Duration timeout = Duration::milliseconds(1000);
  std::size_t max_concurrent = 8;
};

struct TpCounters {
  std::uint64_t segments = 0;
  std::uint64_t completed = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t rejected = 0;     // segments refused (any TpError): the sum of rejected_by
  std::array<std::uint64_t, kTpErrorCount> rejected_by{};  // segments refused, by TpError
  std::uint64_t aborted = 0;      // messages dropped because of a bad segment
  std::uint64_t superseded = 0;   // dropped because a newer session started
  std::uint64_t timed_out = 0;
};

class TpReassembler {
 public:
  enum class Status : std::uint8_t { kIncomplete, kComplete, kDuplicate };
  struct Outcome {
    Status status = Status::kIncomplete;
    // kComplete: the reassembled message (16-byte header with the TP flag
    // cleared and Length = 8 + payload, then the payload). Valid until the
    // next call on this reassembler.
    ByteSpan message;
  };

  explicit TpReassembler(TpLimits limits = {});

  // Feeds one TP segment from `source`. Messages are keyed by source, Message
  // ID, Client ID and message type; a segment with a new Session ID for the
  // same key replaces the message in progress (feat_req_someiptp_762).
  [[nodiscard]] Result<Outcome, TpError> on_segment(TimePoint now, const Endpoint& source,
                                                    const TpSegment& segment);
  // Drops messages whose timeout passed.
  void on_timer(TimePoint now);
  // Earliest timeout, or TimePoint::max() when idle.
  [[nodiscard]] TimePoint next_deadline() const;
  [[nodiscard]] std::size_t in_progress() const;
  // Bytes currently held in reassembly buffers (bounded by
  // max_concurrent * (16 + max_message_size)).
  [[nodiscard]] std::size_t buffered_bytes() const;
  [[nodiscard]] const TpCounters& counters() const { return counters_; }

 private:
  struct Slot {
    bool in_use = false;
    Endpoint source;
    Header header;  // from the first segment, TP flag cleared
    TimePoint deadline;
    std::vector<std::uint8_t> buf;      // 16-byte header room + payload
    std::vector<std::uint64_t> blocks;  // one bit per received 16-byte block
    std::size_t blocks_set = 0;
    std::uint32_t total = 0;  // payload size, once the last segment arrived
    bool total_known = false;
  };
  void release(Slot& s);
  Result<Outcome, TpError> abort(Slot& s, TpError e);
  bool test_block(const Slot& s, std::size_t b) const {
    return b / 64 < s.blocks.size() && ((s.blocks[b / 64] >> (b % 64)) & 1U) != 0;
  }

  TpLimits limits_;
  std::vector<Slot> slots_;
  TpCounters counters_;
};

}  // namespace layersec::someip
