// Stream identification (IEEE 802.1CB-2017 §6) at the first hop, so that
// traffic from unmodified applications gets a VID and PCP: a frame's fields
// are matched against an ordered list of rules, the first match gives the
// stream handle and the tag to put on the frame.
//  - null stream identification (§6.4): destination MAC and VLAN (a VID, or
//    untagged);
//  - IP stream identification (§6.7): destination MAC and VLAN (either may
//    be a wildcard), IPv4 source and destination, DSCP, IP protocol, source
//    and destination port (each a wildcard when not given).
// Sans-I/O: the caller parses the frame into a StreamKey (tsn/frame_tagger.h
// does it for Ethernet/IPv4/UDP/TCP frames).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace layersec::tsn {

struct StreamKey {
  std::array<std::uint8_t, 6> dst_mac{};
  std::optional<std::uint16_t> vid;  // nullopt: untagged
  bool ipv4 = false;
  std::uint32_t src_ip = 0;  // host order
  std::uint32_t dst_ip = 0;
  std::uint8_t dscp = 0;
  std::uint8_t protocol = 0;
  bool has_ports = false;  // UDP or TCP
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
};

enum class StreamMatch { kNull, kIp };

struct StreamRule {
  StreamMatch kind = StreamMatch::kNull;
  std::uint32_t handle = 0;
  // Match fields (nullopt: any). For kNull, dst_mac is required and `vid`
  // says which VLAN (untagged_only matches untagged frames).
  std::optional<std::array<std::uint8_t, 6>> dst_mac;
  std::optional<std::uint16_t> vid;
  bool untagged_only = false;
  std::optional<std::uint32_t> src_ip, dst_ip;
  std::optional<std::uint8_t> dscp, protocol;
  std::optional<std::uint16_t> src_port, dst_port;
  // Action: the tag the frame leaves the first hop with.
  std::uint16_t set_vid = 0;
  std::uint8_t set_pcp = 0;
};

class StreamIdentifier {
 public:
  // Adds a rule; false with `why` naming the field when it is inconsistent
  // (VID > 4094, PCP > 7, DSCP > 63, kNull without dst_mac, port match on a
  // protocol other than UDP/TCP).
  bool add(const StreamRule& rule, std::string* why = nullptr);
  // The first rule matching the key, or nullptr.
  [[nodiscard]] const StreamRule* match(const StreamKey& key) const;
  [[nodiscard]] std::size_t size() const { return rules_.size(); }
  [[nodiscard]] const std::vector<StreamRule>& rules() const { return rules_; }

 private:
  std::vector<StreamRule> rules_;
};

}  // namespace layersec::tsn
