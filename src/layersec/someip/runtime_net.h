// Internal helpers shared by the Transport adapters: conversions between the
// SOME/IP address types (address.h) and the net module's IPv4 types.
#pragma once

#include <optional>

#include "layersec/net/frame.h"
#include "layersec/someip/address.h"

namespace layersec::someip::detail {

// nullopt for an IPv6 address (the adapters carry IPv4 only).
inline std::optional<net::Ipv4Address> to_ipv4(const IpAddress& a) {
  if (a.family != IpFamily::kV4) return std::nullopt;
  return net::Ipv4Address::from_octets(a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]);
}

inline IpAddress from_ipv4(net::Ipv4Address a) {
  return IpAddress::v4(static_cast<std::uint8_t>(a.value >> 24), static_cast<std::uint8_t>(a.value >> 16),
                       static_cast<std::uint8_t>(a.value >> 8), static_cast<std::uint8_t>(a.value));
}

inline Endpoint from_ipv4(net::Ipv4Endpoint e) { return Endpoint{from_ipv4(e.address), e.port, L4Proto::kUdp}; }

}  // namespace layersec::someip::detail
