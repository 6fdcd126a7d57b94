// Frame surgery and log reading for the netns attack runner
// (netns_attacks.h): pure functions over whole Ethernet frames as an
// AF_PACKET socket sees them (no FCS, no VLAN tag) and over the JSON lines
// `layersec node --json` prints. No namespaces, no sockets: unit-tested in
// netns_attacks_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace layersec::attack::netns {

using Frame = std::vector<std::uint8_t>;

// Where the parts of an Ethernet/IPv4/UDP frame are (offsets into the frame).
struct UdpLocation {
  std::size_t ip = 14;
  std::size_t udp = 0;
  std::size_t payload = 0;
  std::size_t payload_length = 0;  // UDP payload bytes (from the UDP length)
  std::uint32_t src_ip = 0;
  std::uint32_t dst_ip = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
};
std::optional<UdpLocation> locate_udp(const Frame& frame);

// A SOME/IP notification (message type 0x02) in a UDP frame.
struct NotificationLocation {
  UdpLocation udp;
  std::size_t header = 0;   // SOME/IP header offset
  std::size_t payload = 0;  // payload offset (SecOC trailer included)
  std::size_t payload_length = 0;
  std::uint16_t service = 0;
  std::uint16_t event = 0;
};
std::optional<NotificationLocation> locate_notification(const Frame& frame);

// The `layersec node` test publisher's payload: big-endian sequence number in
// the first 4 bytes, 0xA5 after (node/test_traffic.cc).
Frame sequenced_payload(std::uint32_t seq, std::size_t size);
// The sequence number of a notification whose payload (before the
// `auth_length`-byte SecOC trailer) is `size` bytes.
std::optional<std::uint32_t> notification_sequence(const Frame& frame);

// Flips one bit (chosen by `rng`) after the Ethernet header (the receiver's
// socket must still take the frame); the frame is longer than 14 bytes.
void flip_bit_after_header(Frame& frame, std::mt19937_64& rng);

// Which part of a notification a bit flip hits.
enum class TamperRegion : std::uint8_t { kHeader, kPayload, kAuth };
const char* to_string(TamperRegion r);
// Flips one bit (chosen by `rng`) of the region; `auth_length` is the SecOC
// trailer size (freshness value + MAC) at the end of the payload. IPv4 and
// UDP checksums are refreshed. False when the frame is not a notification.
bool tamper_notification(Frame& frame, TamperRegion region, std::size_t auth_length, std::mt19937_64& rng);
// Replaces the payload bytes before the trailer with `marker` (repeated) and
// the MAC (the last `mac_length` bytes) with random bytes.
bool forge_notification(Frame& frame, std::uint8_t marker, std::size_t auth_length, std::size_t mac_length,
                        std::mt19937_64& rng);
// Adds `delta` to the freshness value of a SOME/IP message's SecOC trailer
// (the `fv_length` bytes before the last `mac_length` bytes of the message,
// big-endian), so an altered message is judged on its MAC, not refused as a
// replay. Works for notifications and SD messages alike.
bool bump_freshness(Frame& frame, std::size_t fv_length, std::size_t mac_length, std::uint64_t delta);
// Rewrites the event id (cross-binding relabel).
bool relabel_notification(Frame& frame, std::uint16_t event);

// A SOME/IP-SD message (service 0xFFFF, method 0x8100) on UDP.
bool is_sd(const Frame& frame);
// Turns every OfferService entry for `service` into a StopOffer (TTL 0).
// Returns the number of entries rewritten (0: none, frame unchanged).
int sd_stop_offer(Frame& frame, std::uint16_t service);
// Points every IPv4 endpoint option at `address` (an offer hijack). Returns
// the number of options rewritten.
int sd_hijack_endpoint(Frame& frame, std::uint32_t address);

// Recomputes IPv4/UDP checksums (after any change; also for frames a veth
// handed over with checksum offload still pending).
void refresh(Frame& frame);

std::uint32_t ipv4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d);

// What the subscriber's JSON lines (`layersec node --json`) said in one
// phase of a run, judged against what the attacker forwarded untouched.
struct Judged {
  std::uint64_t legit = 0;     // first delivery of an untouched notification
  std::uint64_t accepted = 0;  // every other delivery of the watched service
  std::uint64_t stop_offers = 0;  // "available": false for the watched service
  std::map<std::string, std::uint64_t> rejections;  // "secoc:<reason>" / "sd:<reason>"
  std::set<std::pair<std::size_t, std::uint32_t>> delivered;  // (payload size, seq) of legit deliveries
};

// Judges the lines of `text` (one JSON object per line; other lines are
// skipped). A delivery of `service` is legitimate when its event is `event`,
// its payload is the test publisher's payload for a (size, seq) in
// `untouched`, and that (size, seq) was not delivered before (`seen`, which
// is updated); every other delivery of `service` counts as accepted.
Judged judge_lines(const std::string& text, std::uint16_t service, std::uint16_t event,
                   const std::set<std::pair<std::size_t, std::uint32_t>>& untouched,
                   std::set<std::pair<std::size_t, std::uint32_t>>& seen);

}  // namespace layersec::attack::netns
