// Interface settings through ioctl(2) in the calling thread's network
// namespace (run inside a NetnsScope for a namespace): index, MAC, MTU,
// up/down, IPv4 address. A user-space MACsec interface uses these to give its
// TAP the MAC of the underlying link and an MTU 32 bytes smaller (SecTAG with
// SCI + 16-byte ICV). Setting anything needs CAP_NET_ADMIN. On failure errno
// is left as the failing call set it.
#pragma once

#include <string>

#include "layersec/base/result.h"
#include "layersec/net/frame.h"
#include "layersec/net/io.h"

namespace layersec::net {

Result<int, IoError> interface_index(const std::string& name);
Result<MacAddress, IoError> interface_mac(const std::string& name);
Status<IoError> set_interface_mac(const std::string& name, const MacAddress& mac);
Result<int, IoError> interface_mtu(const std::string& name);
Status<IoError> set_interface_mtu(const std::string& name, int mtu);
Result<bool, IoError> interface_is_up(const std::string& name);
Status<IoError> set_interface_up(const std::string& name, bool up);
// Assigns `address`/`prefix_length` (SIOCSIFADDR + SIOCSIFNETMASK; replaces
// the interface's primary IPv4 address).
Status<IoError> set_interface_ipv4(const std::string& name, Ipv4Address address, int prefix_length);

}  // namespace layersec::net
