// Transport addresses as SOME/IP-SD carries them in endpoint options
// (feat_req_someipsd_129..): an IPv4 or IPv6 address, a layer-4 protocol and a
// port. Plain values; no sockets here.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>

namespace layersec::someip {

enum class IpFamily : std::uint8_t { kV4 = 4, kV6 = 6 };

// Layer-4 protocol numbers as the endpoint options encode them.
enum class L4Proto : std::uint8_t { kTcp = 0x06, kUdp = 0x11 };

struct IpAddress {
  IpFamily family = IpFamily::kV4;
  // IPv4 uses bytes[0..3]; the rest stays zero so comparisons are exact.
  std::array<std::uint8_t, 16> bytes{};

  static IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    IpAddress r;
    r.bytes[0] = a;
    r.bytes[1] = b;
    r.bytes[2] = c;
    r.bytes[3] = d;
    return r;
  }
  static IpAddress v6(const std::array<std::uint8_t, 16>& b) {
    IpAddress r;
    r.family = IpFamily::kV6;
    r.bytes = b;
    return r;
  }
  [[nodiscard]] bool is_multicast() const {
    return family == IpFamily::kV4 ? (bytes[0] & 0xF0) == 0xE0 : bytes[0] == 0xFF;
  }
  [[nodiscard]] std::string to_string() const;
  auto operator<=>(const IpAddress&) const = default;
};

// Parses dotted IPv4 or RFC 4291 text IPv6; false on bad text.
bool parse_ip_address(const std::string& text, IpAddress& out);

struct Endpoint {
  IpAddress address;
  std::uint16_t port = 0;
  L4Proto proto = L4Proto::kUdp;
  [[nodiscard]] std::string to_string() const;  // "1.2.3.4:30490/udp"
  auto operator<=>(const Endpoint&) const = default;
};

}  // namespace layersec::someip
