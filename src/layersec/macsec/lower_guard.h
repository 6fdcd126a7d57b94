// Makes the lower interface of `layersec macsec up` carry nothing but MACsec
// (link code: sysctls, an ioctl and nftables over netlink; the SecY does no
// I/O).
//
// Why: Linux is a weak-host stack. A TAP "macsec0" on top of "eth0" gets the
// protected addresses, but IPv4 to those addresses arriving in clear on eth0
// is still delivered (the address is local, whatever the interface), ARP for
// them is answered on eth0, and IPv6 runs on eth0's link-local address. The
// AF_PACKET socket only copies frames; it cannot stop the kernel's own stack.
// So, on the lower interface only, `apply()`:
//
//   refuses to start while it has an IPv4 address or a non-link-local IPv6
//     address (removing someone's address is not ours to do; the message
//     says which address and the `ip addr del` to run);
//   sets net.ipv6.conf.<lower>.disable_ipv6 = 1  (IPv6 input on the lower is
//     dropped, its link-local address goes, no ND/MLD in clear),
//        net.ipv4.conf.<lower>.arp_ignore = 8    (no ARP reply for any local
//     address), net.ipv4.conf.<lower>.rp_filter = 1 (strict reverse path:
//     with no address or route on the lower, every IPv4 packet arriving on it
//     fails the check and is dropped), and the IFF_NOARP flag (ARP input on
//     the lower is discarded, none is sent);
//   and, with LowerLinkPolicy::kIsolate (the default), installs an nftables
//     table of family netdev with an ingress chain on the lower that drops
//     every frame whose EtherType is not 88-E5 (802.1Q/802.1ad tags are let
//     through in clear-tag mode, where they sit in front of the SecTAG).
//     AF_PACKET taps see frames before the ingress hook, so the link still
//     counts them (rx_not_macsec). With allow_mka (`--mka`), EAPOL frames
//     (88-8E) to the PAE group address 01-80-C2-00-00-03 are accepted
//     first: the MKA socket is bound to 88-8E and, unlike the ETH_P_ALL tap,
//     only sees what passes the hook; EAPOL to any other address is dropped. The table is created with
//     NFT_TABLE_F_OWNER: it belongs to this process's netlink socket and the
//     kernel removes it when the process ends, even after kill -9.
//
// With kSysctlOnly the nftables step is skipped, and the start is refused if
// net.ipv4.conf.all.rp_filter is 2 (loose), which would override the strict
// setting of the lower (the kernel uses the maximum of "all" and the
// interface). kUnchanged changes nothing (the caller warns).
//
// restore() (and the destructor) puts back every sysctl and flag this object
// changed, unless someone changed it again meanwhile, and removes the table.
// After a kill -9 the sysctls and the flag stay hardened (fail closed).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/macsec/link_config.h"
#include "layersec/net/io.h"

namespace layersec::macsec {

class LowerGuardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LowerGuardOptions {
  std::string lower;
  LowerLinkPolicy policy = LowerLinkPolicy::kIsolate;
  bool allow_vlan_tags = false;  // clear-tag VLAN mode
  bool allow_mka = false;        // EAPOL-MKA (88-8E to 01-80-C2-00-00-03) passes (`--mka`)
};

class LowerLinkGuard {
 public:
  // Checks and hardens the lower interface as described above. Throws
  // LowerGuardError naming the interface, the setting and what to do; on a
  // throw everything already changed is restored.
  static LowerLinkGuard apply(const LowerGuardOptions& options);
  LowerLinkGuard(LowerLinkGuard&& other) noexcept;
  LowerLinkGuard& operator=(LowerLinkGuard&&) = delete;
  LowerLinkGuard(const LowerLinkGuard&) = delete;
  ~LowerLinkGuard();

  // Undoes what apply() did (idempotent). Returns one message per setting
  // that could not be restored (empty: all restored).
  std::vector<std::string> restore();

  // What apply() did, one line per step ("net.ipv4.conf.veth0.arp_ignore 0 -> 8", ...).
  [[nodiscard]] const std::vector<std::string>& steps() const { return steps_; }
  [[nodiscard]] bool filter_installed() const { return nft_.valid(); }

 private:
  LowerLinkGuard() = default;
  struct Changed {
    std::string path;      // /proc/sys/... file
    std::string previous;  // value before
    std::string value;     // value written
  };
  void set_sysctl(const std::string& path, const std::string& value);
  void set_noarp();
  void install_filter(bool allow_vlan_tags, bool allow_mka);

  std::string lower_;
  std::vector<Changed> changed_;
  bool noarp_set_ = false;
  net::UniqueFd nft_;  // netlink socket owning the nftables table
  std::vector<std::string> steps_;
};

// The addresses that make a lower interface unsafe (IPv4, IPv6 other than
// fe80::/10), as "10.0.0.1/24"; empty when there are none.
std::vector<std::string> unsafe_lower_addresses(const std::string& lower);

}  // namespace layersec::macsec
