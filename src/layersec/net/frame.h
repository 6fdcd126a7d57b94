// Frame codecs: Ethernet II with up to two 802.1Q/802.1ad tags, ARP for
// IPv4 over Ethernet, IPv4 and UDP.
//
// Parsers read untrusted bytes through ByteReader and hand back views into
// the caller's buffer (nothing is copied); a malformed frame is a typed
// FrameError, never a crash. Builders write into a caller-owned buffer and
// fail with kBufferTooSmall rather than write past it.
//
// Standards: Ethernet II framing and 802.1Q tags per IEEE 802.1Q-2018 §9.6
// (TPID 0x8100 C-tag, 0x88A8 S-tag, TCI = PCP(3) DEI(1) VID(12)); IPv4 per
// RFC 791 §3.1; the Internet checksum per RFC 1071; UDP and its pseudo-header
// checksum per RFC 768; ARP per RFC 826; IPv4 multicast to MAC mapping per
// RFC 1112 §6.4.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::net {

inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeArp = 0x0806;
inline constexpr std::uint16_t kEtherTypeCTag = 0x8100;   // 802.1Q customer VLAN tag
inline constexpr std::uint16_t kEtherTypeSTag = 0x88A8;   // 802.1ad service VLAN tag
inline constexpr std::uint16_t kEtherTypeMacsec = 0x88E5;  // 802.1AE SecTAG
inline constexpr std::uint16_t kEtherTypeSv = 0x88BA;      // IEC 61850-9-2 Sampled Values
inline constexpr std::uint16_t kEtherTypeLocalExperimental1 = 0x88B5;  // IEEE 802 local experimental
inline constexpr std::uint8_t kIpProtocolUdp = 17;

inline constexpr std::size_t kEthernetHeaderSize = 14;
inline constexpr std::size_t kVlanTagSize = 4;
inline constexpr std::size_t kMaxVlanTags = 2;
// Smallest Ethernet frame without the FCS (64 with it); shorter frames are padded.
inline constexpr std::size_t kEthernetMinFrameSize = 60;
inline constexpr std::size_t kEthernetMtu = 1500;
// Largest frame we build or accept: header, two tags, MTU-sized payload (no FCS).
inline constexpr std::size_t kEthernetMaxFrameSize = kEthernetHeaderSize + kMaxVlanTags * kVlanTagSize + kEthernetMtu;
inline constexpr std::size_t kIpv4MinHeaderSize = 20;
inline constexpr std::size_t kUdpHeaderSize = 8;
inline constexpr std::size_t kArpSize = 28;
// Largest UDP payload that fits one unfragmented IPv4 packet in the MTU.
inline constexpr std::size_t kMaxUdpPayload = kEthernetMtu - kIpv4MinHeaderSize - kUdpHeaderSize;

// A 48-bit IEEE MAC address, transmission order.
struct MacAddress {
  std::array<std::uint8_t, 6> bytes{};

  static constexpr MacAddress broadcast() { return MacAddress{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}; }
  // Locally administered unicast address 02:00:00:xx:xx:xx for simulated nodes.
  static constexpr MacAddress local(std::uint32_t id) {
    return MacAddress{{0x02, 0x00, static_cast<std::uint8_t>(id >> 24), static_cast<std::uint8_t>(id >> 16),
                       static_cast<std::uint8_t>(id >> 8), static_cast<std::uint8_t>(id)}};
  }
  // Group bit (I/G) set: multicast or broadcast.
  [[nodiscard]] constexpr bool is_multicast() const { return (bytes[0] & 0x01) != 0; }
  [[nodiscard]] constexpr bool is_broadcast() const { return *this == broadcast(); }
  [[nodiscard]] std::string to_string() const;  // "aa:bb:cc:dd:ee:ff"
  // Parses "aa:bb:cc:dd:ee:ff" (':' or '-' separators); nullopt when malformed.
  static std::optional<MacAddress> parse(std::string_view text);
  constexpr auto operator<=>(const MacAddress&) const = default;
};

// An IPv4 address held in host byte order (value 0x0A000001 is 10.0.0.1).
struct Ipv4Address {
  std::uint32_t value = 0;

  static constexpr Ipv4Address from_octets(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    return Ipv4Address{(std::uint32_t{a} << 24) | (std::uint32_t{b} << 16) | (std::uint32_t{c} << 8) | d};
  }
  static constexpr Ipv4Address any() { return Ipv4Address{0}; }
  static constexpr Ipv4Address broadcast() { return Ipv4Address{0xFFFFFFFFu}; }
  // 224.0.0.0/4 (RFC 5771).
  [[nodiscard]] constexpr bool is_multicast() const { return (value >> 28) == 0xE; }
  [[nodiscard]] constexpr bool is_broadcast() const { return value == 0xFFFFFFFFu; }
  [[nodiscard]] std::string to_string() const;  // dotted quad
  // Parses a dotted quad; nullopt when malformed.
  static std::optional<Ipv4Address> parse(std::string_view text);
  constexpr auto operator<=>(const Ipv4Address&) const = default;
};

// RFC 1112 §6.4: 01:00:5e followed by the low 23 bits of the group address.
MacAddress multicast_mac(Ipv4Address group);

struct Ipv4Endpoint {
  Ipv4Address address;
  std::uint16_t port = 0;
  [[nodiscard]] std::string to_string() const;  // "10.0.0.1:30490"
  constexpr auto operator<=>(const Ipv4Endpoint&) const = default;
};

enum class FrameError : std::uint8_t {
  kTruncated,          // fewer bytes than the header or a length field claims
  kLengthFrame,        // EtherType < 0x0600: an IEEE 802.3 length, not Ethernet II
  kTooManyVlanTags,    // a third 0x8100/0x88A8 tag
  kBadVlanTag,         // (build) PCP > 7, VID > 4095 or a TPID other than 0x8100/0x88A8
  kNotIpv4,            // EtherType is not 0x0800
  kBadIpVersion,       // version field != 4
  kBadIpHeaderLength,  // IHL < 5 or beyond the total length
  kBadIpTotalLength,   // total length < header or beyond the bytes present
  kBadIpChecksum,      // RFC 791 header checksum does not verify
  kIpFragment,         // MF set or non-zero fragment offset (we never reassemble)
  kIpReservedFlag,     // the reserved flag bit is set
  kNotUdp,             // IPv4 protocol is not 17
  kBadUdpLength,       // UDP length < 8 or != the IPv4 payload length
  kBadUdpChecksum,     // non-zero checksum that does not verify over the pseudo-header
  kNotArp,             // EtherType not 0x0806, or not Ethernet/IPv4 ARP
  kBadArp,             // unknown operation
  kBufferTooSmall,     // (build) the caller's buffer cannot hold the frame
  kPayloadTooLarge,    // (build) the datagram would exceed the MTU
};
const char* to_string(FrameError e);

// IEEE 802.1Q-2018 §9.6 tag: TPID then TCI.
struct VlanTag {
  std::uint16_t tpid = kEtherTypeCTag;
  std::uint8_t pcp = 0;  // priority code point, 0..7
  bool dei = false;      // drop eligible indicator
  std::uint16_t vid = 0;  // VLAN identifier, 0..4095
  constexpr bool operator==(const VlanTag&) const = default;
};

struct EthernetHeader {
  MacAddress dst;
  MacAddress src;
  // tags[0] is the outer tag (next to the source address).
  std::array<VlanTag, kMaxVlanTags> tags{};
  std::uint8_t tag_count = 0;
  std::uint16_t ether_type = 0;  // after the tags

  [[nodiscard]] std::size_t size() const { return kEthernetHeaderSize + kVlanTagSize * tag_count; }
  bool operator==(const EthernetHeader& o) const;
};

struct EthernetView {
  EthernetHeader header;
  ByteSpan payload;  // everything after the header, padding included
};

// Parses an Ethernet II header with zero, one or two tags, each 0x88A8 or
// 0x8100 (usually S-tag then C-tag; the order is not enforced). No FCS is
// expected. kTooManyVlanTags for a third tag, kLengthFrame for EtherType <
// 0x0600, kTruncated when short.
Result<EthernetView, FrameError> parse_ethernet(ByteSpan frame);
// Writes dst, src, the tags and the EtherType.
Status<FrameError> write_ethernet_header(ByteWriter& w, const EthernetHeader& h);

// RFC 1071 one's-complement sum folded to 16 bits and complemented, over
// `data` plus a 32-bit partial sum. A buffer that contains a correct checksum
// sums to 0.
std::uint16_t internet_checksum(ByteSpan data, std::uint32_t partial = 0);
// RFC 768 UDP checksum over the IPv4 pseudo-header and `udp` (header with its
// checksum field as stored, and payload). Returns 0xFFFF for a computed zero.
std::uint16_t udp_checksum(Ipv4Address src, Ipv4Address dst, ByteSpan udp);

struct Ipv4Header {
  std::uint8_t tos = 0;  // DSCP and ECN
  std::uint16_t total_length = 0;
  std::uint16_t identification = 0;
  bool dont_fragment = true;
  std::uint8_t ttl = 64;
  std::uint8_t protocol = kIpProtocolUdp;
  std::uint16_t header_checksum = 0;  // as received (parse) or computed (build)
  Ipv4Address src;
  Ipv4Address dst;
  std::uint8_t header_length = kIpv4MinHeaderSize;  // IHL * 4
};

struct Ipv4View {
  Ipv4Header header;
  ByteSpan options;  // tolerated on parse, never emitted
  ByteSpan payload;  // exactly total_length - header_length bytes
};

// RFC 791 §3.1. Bytes after total_length are treated as link-layer padding
// (Ethernet pads short frames) and are not part of the view.
Result<Ipv4View, FrameError> parse_ipv4(ByteSpan packet);
// Writes a 20-byte header (no options) for `payload_length` bytes of payload,
// computing the header checksum. h.total_length/header_checksum are ignored.
Status<FrameError> write_ipv4_header(ByteWriter& w, const Ipv4Header& h, std::size_t payload_length);

struct UdpHeader {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint16_t length = 0;
  std::uint16_t checksum = 0;
};

struct UdpView {
  UdpHeader header;
  ByteSpan payload;
};

// RFC 768. `segment` is the whole IPv4 payload; the UDP length must equal its
// size. A non-zero checksum must verify over the pseudo-header.
Result<UdpView, FrameError> parse_udp(ByteSpan segment, Ipv4Address src, Ipv4Address dst);

// What build_udp_frame puts around a payload.
struct UdpFrameSpec {
  MacAddress dst_mac;
  MacAddress src_mac;
  std::array<VlanTag, kMaxVlanTags> tags{};
  std::uint8_t tag_count = 0;
  Ipv4Endpoint src;
  Ipv4Endpoint dst;
  std::uint8_t ttl = 64;
  std::uint8_t tos = 0;
  std::uint16_t identification = 0;
  bool dont_fragment = true;
  bool compute_udp_checksum = true;  // false sends checksum 0 (allowed over IPv4)
  bool pad_to_minimum = true;        // pad to 60 bytes like a NIC would
};

struct UdpFrameView {
  EthernetHeader ethernet;
  Ipv4View ip;
  UdpView udp;
  [[nodiscard]] ByteSpan payload() const { return udp.payload; }
  [[nodiscard]] Ipv4Endpoint src() const { return {ip.header.src, udp.header.src_port}; }
  [[nodiscard]] Ipv4Endpoint dst() const { return {ip.header.dst, udp.header.dst_port}; }
};

// Size of the frame build_udp_frame writes for `payload_size` bytes.
std::size_t udp_frame_size(const UdpFrameSpec& spec, std::size_t payload_size);
// Builds Ethernet(+tags)/IPv4/UDP around `payload` into `out` with correct IPv4
// and UDP checksums; returns the frame length. Fails with kPayloadTooLarge
// above kMaxUdpPayload, kBufferTooSmall when `out` is short, kBadVlanTag.
Result<std::size_t, FrameError> build_udp_frame(const UdpFrameSpec& spec, ByteSpan payload, MutableByteSpan out);
// Parses Ethernet(+tags)/IPv4/UDP, verifying both checksums.
Result<UdpFrameView, FrameError> parse_udp_frame(ByteSpan frame);

// RFC 826 ARP for IPv4 over Ethernet.
enum class ArpOperation : std::uint16_t { kRequest = 1, kReply = 2 };
struct ArpPacket {
  ArpOperation operation = ArpOperation::kRequest;
  MacAddress sender_mac;
  Ipv4Address sender_ip;
  MacAddress target_mac;
  Ipv4Address target_ip;
};
// Parses the 28-byte ARP body (after the Ethernet header); bytes after it are
// link padding. Only htype 1 / ptype 0x0800 / hlen 6 / plen 4 is accepted.
Result<ArpPacket, FrameError> parse_arp(ByteSpan body);
// Builds an ARP frame (padded to 60 bytes, tagged when `tag` is given) into
// `out`. Requests go to broadcast, replies to target_mac.
Result<std::size_t, FrameError> build_arp_frame(const ArpPacket& arp, MutableByteSpan out,
                                                const VlanTag* tag = nullptr);

}  // namespace layersec::net
