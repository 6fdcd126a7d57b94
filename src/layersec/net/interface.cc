#include "layersec/net/interface.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace layersec::net {

namespace {

// Prepares an ifreq for `name` and a control socket; false on a bad name.
bool prepare(const std::string& name, ifreq& ifr, UniqueFd& sock) {
  if (name.empty() || name.size() >= IFNAMSIZ) {
    errno = EINVAL;
    return false;
  }
  std::memset(&ifr, 0, sizeof(ifr));
  std::memcpy(ifr.ifr_name, name.c_str(), name.size());
  sock.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  return sock.valid();
}

IoError failure(const std::string& name) {
  return name.empty() || name.size() >= IFNAMSIZ || errno == ENODEV ? IoError::kBadArgument : IoError::kSystem;
}

}  // namespace

Result<int, IoError> interface_index(const std::string& name) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s) || ::ioctl(s.get(), SIOCGIFINDEX, &ifr) != 0) return Err(failure(name));
  return ifr.ifr_ifindex;
}

Result<MacAddress, IoError> interface_mac(const std::string& name) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s) || ::ioctl(s.get(), SIOCGIFHWADDR, &ifr) != 0) return Err(failure(name));
  MacAddress m;
  std::memcpy(m.bytes.data(), ifr.ifr_hwaddr.sa_data, 6);
  return m;
}

Status<IoError> set_interface_mac(const std::string& name, const MacAddress& mac) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s)) return Err(failure(name));
  ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
  std::memcpy(ifr.ifr_hwaddr.sa_data, mac.bytes.data(), 6);
  if (::ioctl(s.get(), SIOCSIFHWADDR, &ifr) != 0) return Err(failure(name));
  return {};
}

Result<int, IoError> interface_mtu(const std::string& name) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s) || ::ioctl(s.get(), SIOCGIFMTU, &ifr) != 0) return Err(failure(name));
  return ifr.ifr_mtu;
}

Status<IoError> set_interface_mtu(const std::string& name, int mtu) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s)) return Err(failure(name));
  ifr.ifr_mtu = mtu;
  if (::ioctl(s.get(), SIOCSIFMTU, &ifr) != 0) return Err(failure(name));
  return {};
}

Result<bool, IoError> interface_is_up(const std::string& name) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s) || ::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return Err(failure(name));
  return (ifr.ifr_flags & IFF_UP) != 0;
}

Status<IoError> set_interface_up(const std::string& name, bool up) {
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s) || ::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return Err(failure(name));
  if (up)
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  else
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags & ~IFF_UP);
  if (::ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) return Err(failure(name));
  return {};
}

Status<IoError> set_interface_ipv4(const std::string& name, Ipv4Address address, int prefix_length) {
  if (prefix_length < 0 || prefix_length > 32) {
    errno = EINVAL;
    return Err(IoError::kBadArgument);
  }
  ifreq ifr;
  UniqueFd s;
  if (!prepare(name, ifr, s)) return Err(failure(name));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(address.value);
  std::memcpy(&ifr.ifr_addr, &sa, sizeof(sa));
  if (::ioctl(s.get(), SIOCSIFADDR, &ifr) != 0) return Err(failure(name));
  const std::uint32_t mask = prefix_length == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix_length);
  sa.sin_addr.s_addr = htonl(mask);
  std::memcpy(&ifr.ifr_netmask, &sa, sizeof(sa));
  if (::ioctl(s.get(), SIOCSIFNETMASK, &ifr) != 0) return Err(failure(name));
  return {};
}

}  // namespace layersec::net
