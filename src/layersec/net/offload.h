// Segmentation and checksum offload for a TAP with IFF_VNET_HDR, done in
// user space by the MACsec link (macsec/link.h TapLink), in both directions.
//
// Transmit (complete_offload): with TUNSETOFFLOAD (TSO4, TSO6, CSUM) the
// kernel hands over TCP segments up to 64 KiB and frames whose checksum is
// left to "the device", one read each; the link splits and finishes them
// into MTU-sized frames before protecting each.
//   flags: NEEDS_CSUM and DATA_VALID only (anything else is refused).
//   gso_type none: with NEEDS_CSUM the checksum over [csum_start, end) is
//     stored at csum_start + csum_offset (the field holds the pseudo-header
//     sum, as for any device; a computed 0 is sent as 0xFFFF); csum_start
//     must lie after the Ethernet header; one frame out.
//   TCPv4 / TCPv6 (no ECN bit): Ethernet II with at most two 802.1Q/802.1ad
//     tags, IPv4 without fragmentation (options allowed) or IPv6 with TCP as
//     the next header, lengths consistent with the frame; split into
//     segments of at most gso_size payload octets: headers copied, IPv4
//     total length, identification (+1 per segment) and header checksum,
//     IPv6 payload length, TCP sequence number (+gso_size per segment), FIN
//     and PSH on the last segment only, CWR on the first only, and the TCP
//     checksum computed over each segment's own pseudo-header. Segments go
//     out in order.
// Anything else (UDP GSO, the ECN bit, IPv6 extension headers, lengths that
// do not add up, a segment longer than max_frame, more than 1024 segments)
// is refused with a typed reason and nothing is emitted. A local program can
// write any frame into the TAP (AF_PACKET), so these headers are input like
// any other: every check runs before the first octet is emitted.
//
// Receive (TcpCoalescer): consecutive in-order TCP segments of one flow
// that the SecY verified are joined into one frame written to the TAP with
// a GSO header (what a NIC's GRO does), so the receiving side too makes one
// write per many segments. Only what Linux's own GRO would join is joined,
// and every segment's IPv4 header and TCP checksums are verified first (the
// kernel trusts a NEEDS_CSUM frame's checksum).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/net/vnet_header.h"

namespace layersec::net {

// Short snake_case name of a reason, for counters ("unknown_flags", ...).
const char* counter_name(OffloadError e);

// Receives the finished frames, in order (a view valid during the call).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void frame(ByteSpan f) = 0;
};

// Finishes `frame` as described in the file comment and hands the result to
// `sink`: `frame` itself (its checksum completed in place) or segments built
// in `scratch` (which must hold max_frame octets). Returns how many frames
// went to the sink; on error none did and `frame` is unchanged.
Result<std::size_t, OffloadError> complete_offload(const VnetHeader& h, MutableByteSpan frame,
                                                   MutableByteSpan scratch, std::size_t max_frame,
                                                   FrameSink& sink);

// Recomputes the IPv4 header checksum and the TCP checksum of an
// Ethernet/IP/TCP frame in place (the layout complete_offload accepts);
// false, and nothing changed, for any other frame. For tests and fuzzers
// that edit segments and want the edit to survive the checksum checks.
bool refresh_tcp_checksums(MutableByteSpan frame);

// Joins verified TCP segments into one GSO frame (receive side, see the file
// comment). Segments join the pending frame when they continue it exactly:
// untagged Ethernet II, the same Ethernet header, IPv4 (no fragment) or IPv6
// (no extension header) header equal but for lengths, identification (+1,
// or equal with DF) and checksum; the same ports, acknowledgement, window,
// urgent pointer and options; sequence number = the pending frame's end;
// flags ACK, or ACK+PSH on the last one; payload at most the first
// segment's (gso_size), a shorter one or one with PSH ending the frame;
// valid IPv4 header and TCP checksums; at most 65535 octets of IP packet.
// Allocates its buffer once.
class TcpCoalescer {
 public:
  enum class Offer : std::uint8_t {
    kHeld,             // the frame was copied into the pending frame (started or appended)
    kFlushFirst,       // a TCP segment that does not continue the pending frame: take() it, then offer again
    kNotCoalescable,   // never joined (not TCP/IP, a control flag, no payload, bad checksum, tagged, ...):
                       // take() the pending frame and deliver this one as it is
  };
  // The pending frame: `frame` as received when it holds one segment (an
  // all-zero header); otherwise the joined frame (IP lengths and IPv4
  // header checksum rewritten, PSH of the last segment, the TCP checksum
  // field holding the pseudo-header sum) with NEEDS_CSUM, TCPV4/TCPV6,
  // hdr_len, gso_size (the first segment's payload), csum_start/offset.
  struct Frame {
    VnetHeader header;
    ByteSpan frame;        // valid until the next offer()
    std::size_t segments;  // 0: nothing was pending
  };

  // `capacity` bounds the joined frame (at least 1514, at most 65535 + 14).
  explicit TcpCoalescer(std::size_t capacity = 65535 + 14);

  [[nodiscard]] Offer offer(ByteSpan frame);
  // Finishes and hands out the pending frame, leaving nothing pending.
  [[nodiscard]] Frame take();
  [[nodiscard]] std::size_t segments() const { return segments_; }

 private:
  std::vector<std::uint8_t> buf_;
  std::size_t len_ = 0;
  std::size_t segments_ = 0;
  std::size_t ip_len_ = 0, tcp_len_ = 0, gso_size_ = 0;
  bool v6_ = false;
  bool closed_ = false;  // a short or PSH segment ended the pending frame
  std::uint32_t next_seq_ = 0;
  std::uint16_t last_id_ = 0;
};

}  // namespace layersec::net
