#include "layersec/macsec/lower_guard.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace layersec::macsec {
namespace {

std::string read_sysctl(const std::string& path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v)) return {};
  return v;
}

bool write_sysctl(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value << "\n";
  out.flush();
  return static_cast<bool>(out);
}

std::string sysctl_name(const std::string& path) {
  std::string n = path.substr(std::strlen("/proc/sys/"));
  for (char& c : n) {
    if (c == '/') c = '.';
  }
  return n;
}

int prefix_length(const sockaddr* mask) {
  if (mask == nullptr) return 0;
  const auto* b = mask->sa_family == AF_INET
                      ? reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(mask)->sin_addr)
                      : reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr);
  const int n = mask->sa_family == AF_INET ? 4 : 16;
  int bits = 0;
  for (int i = 0; i < n; ++i) bits += __builtin_popcount(b[i]);
  return bits;
}

// ---- a minimal nfnetlink batch writer (nf_tables uapi, big-endian integers)

class NlBuffer {
 public:
  // Starts a message; returns its offset for end_message().
  std::size_t begin_message(std::uint16_t type, std::uint16_t flags, std::uint32_t seq, std::uint8_t family,
                            std::uint16_t res_id) {
    align();
    const std::size_t at = buf_.size();
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    append(&h, sizeof h);
    nfgenmsg g{};
    g.nfgen_family = family;
    g.version = NFNETLINK_V0;
    g.res_id = htons(res_id);
    append(&g, sizeof g);
    return at;
  }
  void end_message(std::size_t at) {
    align();
    const auto len = static_cast<std::uint32_t>(buf_.size() - at);
    std::memcpy(buf_.data() + at, &len, sizeof len);
  }
  void put(std::uint16_t type, const void* data, std::size_t len) {
    align();
    nlattr a{};
    a.nla_type = type;
    a.nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + len);
    append(&a, sizeof a);
    append(data, len);
  }
  void put_u32(std::uint16_t type, std::uint32_t v) {
    const std::uint32_t be = htonl(v);
    put(type, &be, sizeof be);
  }
  void put_str(std::uint16_t type, const std::string& s) { put(type, s.c_str(), s.size() + 1); }
  std::size_t begin_nest(std::uint16_t type) {
    align();
    const std::size_t at = buf_.size();
    nlattr a{};
    a.nla_type = static_cast<std::uint16_t>(type | NLA_F_NESTED);
    append(&a, sizeof a);
    return at;
  }
  void end_nest(std::size_t at) {
    align();
    const auto len = static_cast<std::uint16_t>(buf_.size() - at);
    std::memcpy(buf_.data() + at, &len, sizeof len);
  }
  [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return buf_; }

 private:
  void append(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  void align() { buf_.resize(NLMSG_ALIGN(buf_.size()), 0); }
  std::vector<std::uint8_t> buf_;
};

constexpr std::uint16_t nft_type(int msg) { return static_cast<std::uint16_t>((NFNL_SUBSYS_NFTABLES << 8) | msg); }

// One expression of a rule: {name, data{...}} inside NFTA_RULE_EXPRESSIONS.
template <typename Fill>
void put_expr(NlBuffer& b, const char* name, Fill fill) {
  const auto elem = b.begin_nest(NFTA_LIST_ELEM);
  b.put_str(NFTA_EXPR_NAME, name);
  const auto data = b.begin_nest(NFTA_EXPR_DATA);
  fill();
  b.end_nest(data);
  b.end_nest(elem);
}

// cmp: register 1 against `value` (big-endian bytes), NFT_CMP_EQ or _NEQ.
void put_cmp(NlBuffer& b, std::uint32_t op, const void* value, std::size_t len) {
  put_expr(b, "cmp", [&] {
    b.put_u32(NFTA_CMP_SREG, NFT_REG_1);
    b.put_u32(NFTA_CMP_OP, op);
    const auto data = b.begin_nest(NFTA_CMP_DATA);
    b.put(NFTA_DATA_VALUE, value, len);
    b.end_nest(data);
  });
}

// The rule's verdict (NF_ACCEPT, NF_DROP).
void put_verdict(NlBuffer& b, std::uint32_t code) {
  put_expr(b, "immediate", [&] {
    b.put_u32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
    const auto data = b.begin_nest(NFTA_IMMEDIATE_DATA);
    const auto verdict = b.begin_nest(NFTA_DATA_VERDICT);
    b.put_u32(NFTA_VERDICT_CODE, code);
    b.end_nest(verdict);
    b.end_nest(data);
  });
}

// meta protocol: the frame's EtherType into register 1.
void put_meta_protocol(NlBuffer& b) {
  put_expr(b, "meta", [&] {
    b.put_u32(NFTA_META_DREG, NFT_REG_1);
    b.put_u32(NFTA_META_KEY, NFT_META_PROTOCOL);
  });
}

// One NEWRULE message appended to `chain` of `table`; `exprs` puts its
// expressions.
template <typename Exprs>
void put_rule(NlBuffer& b, std::uint32_t& seq, const std::string& table, const std::string& chain, Exprs exprs) {
  const auto m = b.begin_message(nft_type(NFT_MSG_NEWRULE), NLM_F_REQUEST | NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK,
                                 seq++, NFPROTO_NETDEV, 0);
  b.put_str(NFTA_RULE_TABLE, table);
  b.put_str(NFTA_RULE_CHAIN, chain);
  const auto nest = b.begin_nest(NFTA_RULE_EXPRESSIONS);
  exprs();
  b.end_nest(nest);
  b.end_message(m);
}

}  // namespace

std::vector<std::string> unsafe_lower_addresses(const std::string& lower) {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || lower != a->ifa_name) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(in6)) continue;  // goes with disable_ipv6
      ::inet_ntop(AF_INET6, in6, text, sizeof text);
    } else {
      continue;
    }
    out.push_back(std::string(text) + "/" + std::to_string(prefix_length(a->ifa_netmask)));
  }
  ::freeifaddrs(list);
  return out;
}

LowerLinkGuard::LowerLinkGuard(LowerLinkGuard&& o) noexcept
    : lower_(std::move(o.lower_)),
      changed_(std::move(o.changed_)),
      noarp_set_(o.noarp_set_),
      nft_(std::move(o.nft_)),
      steps_(std::move(o.steps_)) {
  o.changed_.clear();
  o.noarp_set_ = false;
}

LowerLinkGuard::~LowerLinkGuard() { restore(); }

LowerLinkGuard LowerLinkGuard::apply(const LowerGuardOptions& o) {
  LowerLinkGuard g;
  g.lower_ = o.lower;
  if (o.policy == LowerLinkPolicy::kUnchanged) return g;
  if (::if_nametoindex(o.lower.c_str()) == 0) {
    throw LowerGuardError("lower interface " + o.lower + ": " + net::errno_text(errno));
  }
  if (const auto addrs = unsafe_lower_addresses(o.lower); !addrs.empty()) {
    std::string cmd;
    for (const auto& a : addrs) cmd += (cmd.empty() ? "" : "; ") + std::string("ip addr del ") + a + " dev " + o.lower;
    throw LowerGuardError("lower interface " + o.lower + " has address " + addrs.front() +
                          ": plain IP to it, and to the MACsec interface's addresses, would bypass MACsec "
                          "(the MACsec interface carries the addresses); remove it (" + cmd +
                          ") or set \"lower_link\": \"unchanged\"");
  }
  const std::string v4 = "/proc/sys/net/ipv4/conf/" + o.lower + "/";
  const std::string v6 = "/proc/sys/net/ipv6/conf/" + o.lower + "/";
  if (o.policy == LowerLinkPolicy::kSysctlOnly && read_sysctl("/proc/sys/net/ipv4/conf/all/rp_filter") == "2") {
    throw LowerGuardError(
        "net.ipv4.conf.all.rp_filter is 2 (loose), which overrides strict reverse-path filtering on " + o.lower +
        " (the kernel uses the larger of \"all\" and the interface): plain IPv4 from a routable source would reach "
        "the MACsec interface's addresses; set net.ipv4.conf.all.rp_filter=1 (or 0), or use \"lower_link\": "
        "\"isolate\"");
  }
  // Every step below is undone by the destructor if a later one throws.
  if (::access((v6 + "disable_ipv6").c_str(), F_OK) == 0) g.set_sysctl(v6 + "disable_ipv6", "1");
  g.set_sysctl(v4 + "arp_ignore", "8");
  g.set_sysctl(v4 + "rp_filter", "1");
  g.set_noarp();
  if (o.policy == LowerLinkPolicy::kIsolate) g.install_filter(o.allow_vlan_tags, o.allow_mka);
  return g;
}

void LowerLinkGuard::set_sysctl(const std::string& path, const std::string& value) {
  const std::string before = read_sysctl(path);
  if (before.empty()) {
    throw LowerGuardError(sysctl_name(path) + ": cannot read " + path + " (needed to isolate " + lower_ + ")");
  }
  if (before == value) {
    steps_.push_back(sysctl_name(path) + " " + value + " (already)");
    return;
  }
  if (!write_sysctl(path, value)) {
    throw LowerGuardError("cannot set " + sysctl_name(path) + "=" + value + " (" + net::errno_text(errno) +
                          "); set it yourself or run with CAP_NET_ADMIN in this namespace");
  }
  changed_.push_back({path, before, value});
  steps_.push_back(sysctl_name(path) + " " + before + " -> " + value);
}

void LowerLinkGuard::set_noarp() {
  net::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, lower_.c_str(), IFNAMSIZ - 1);
  if (!fd.valid() || ::ioctl(fd.get(), SIOCGIFFLAGS, &ifr) != 0) {
    throw LowerGuardError("flags of " + lower_ + ": " + net::errno_text(errno));
  }
  if ((ifr.ifr_flags & IFF_NOARP) != 0) {
    steps_.push_back(lower_ + " NOARP (already)");
    return;
  }
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_NOARP);
  if (::ioctl(fd.get(), SIOCSIFFLAGS, &ifr) != 0) {
    throw LowerGuardError("cannot set NOARP on " + lower_ + " (ip link set " + lower_ + " arp off): " +
                          net::errno_text(errno));
  }
  noarp_set_ = true;
  steps_.push_back(lower_ + " NOARP set (ip link set " + lower_ + " arp off)");
}

void LowerLinkGuard::install_filter(bool allow_vlan_tags, bool allow_mka) {
  const std::string what = "nftables netdev ingress filter on " + lower_;
  const auto fail = [&](const std::string& why) -> void {
    throw LowerGuardError(what + ": " + why +
                          "; on a kernel without nftables netdev hooks use \"lower_link\": \"sysctl-only\"");
  };
  net::UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER));
  if (!fd.valid()) fail("netlink socket: " + net::errno_text(errno));
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) fail("bind: " + net::errno_text(errno));

  const std::string table = "layersec_macsec_" + lower_;
  const std::string chain = "ingress";
  NlBuffer b;
  std::uint32_t seq = 1;
  const auto begin = b.begin_message(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, seq++, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  b.end_message(begin);
  const std::uint32_t first = seq;
  // Table owned by this socket: the kernel deletes it when the socket goes.
  auto m = b.begin_message(nft_type(NFT_MSG_NEWTABLE), NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, seq++,
                           NFPROTO_NETDEV, 0);
  b.put_str(NFTA_TABLE_NAME, table);
  b.put_u32(NFTA_TABLE_FLAGS, NFT_TABLE_F_OWNER);
  b.end_message(m);
  m = b.begin_message(nft_type(NFT_MSG_NEWCHAIN), NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, seq++, NFPROTO_NETDEV, 0);
  b.put_str(NFTA_CHAIN_TABLE, table);
  b.put_str(NFTA_CHAIN_NAME, chain);
  const auto hook = b.begin_nest(NFTA_CHAIN_HOOK);
  b.put_u32(NFTA_HOOK_HOOKNUM, NF_NETDEV_INGRESS);
  b.put_u32(NFTA_HOOK_PRIORITY, static_cast<std::uint32_t>(-500));
  b.put_str(NFTA_HOOK_DEV, lower_);
  b.end_nest(hook);
  b.put_u32(NFTA_CHAIN_POLICY, NF_ACCEPT);
  b.put_str(NFTA_CHAIN_TYPE, "filter");
  b.end_message(m);
  if (allow_mka) {
    // meta protocol 0x888e ether daddr 01:80:c2:00:00:03 accept
    put_rule(b, seq, table, chain, [&] {
      put_meta_protocol(b);
      const std::uint16_t eapol = htons(0x888E);
      put_cmp(b, NFT_CMP_EQ, &eapol, sizeof eapol);
      put_expr(b, "payload", [&] {
        b.put_u32(NFTA_PAYLOAD_DREG, NFT_REG_1);
        b.put_u32(NFTA_PAYLOAD_BASE, NFT_PAYLOAD_LL_HEADER);
        b.put_u32(NFTA_PAYLOAD_OFFSET, 0);
        b.put_u32(NFTA_PAYLOAD_LEN, 6);
      });
      const std::uint8_t pae_group[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x03};  // 802.1X-2020 §11.1.1
      put_cmp(b, NFT_CMP_EQ, pae_group, sizeof pae_group);
      put_verdict(b, NF_ACCEPT);
    });
  }
  // meta protocol != 0x88e5 [!= 0x8100 != 0x88a8] drop
  put_rule(b, seq, table, chain, [&] {
    put_meta_protocol(b);
    std::vector<std::uint16_t> allowed = {0x88E5};
    if (allow_vlan_tags) allowed.insert(allowed.end(), {0x8100, 0x88A8});
    for (const std::uint16_t type : allowed) {
      const std::uint16_t be = htons(type);
      put_cmp(b, NFT_CMP_NEQ, &be, sizeof be);
    }
    put_verdict(b, NF_DROP);
  });
  const std::uint32_t last = seq - 1;
  const auto end = b.begin_message(NFNL_MSG_BATCH_END, NLM_F_REQUEST, seq++, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  b.end_message(end);

  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const auto& bytes = b.bytes();
  if (::sendto(fd.get(), bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) !=
      static_cast<ssize_t>(bytes.size())) {
    fail("send: " + net::errno_text(errno));
  }
  // One ack (NLMSG_ERROR with error 0) per message, or the first error.
  std::uint32_t acked = 0;
  std::vector<std::uint8_t> rx(8192);
  while (acked < last - first + 1) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) fail("no answer from the kernel");
    const ssize_t n = ::recv(fd.get(), rx.data(), rx.size(), 0);
    if (n < 0) fail("receive: " + net::errno_text(errno));
    auto len = static_cast<std::size_t>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(rx.data()); NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_type != NLMSG_ERROR) continue;
      const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (e->error != 0) {
        const char* step = h->nlmsg_seq == first ? "table" : h->nlmsg_seq == first + 1 ? "chain" : "rule";
        fail(std::string("creating the ") + step + ": " + net::errno_text(-e->error) +
             // An owned table of another process answers EPERM, not EEXIST.
             (e->error == -EEXIST || (e->error == -EPERM && h->nlmsg_seq == first)
                  ? " (another layersec macsec up on this interface?)"
                  : ""));
      }
      ++acked;
    }
  }
  nft_ = std::move(fd);
  steps_.push_back("nftables table netdev " + table + ": ingress on " + lower_ + ", EtherType != 88e5" +
                   (allow_vlan_tags ? " (and != 8100, 88a8)" : "") + " dropped" +
                   (allow_mka ? " except 888e to 01:80:c2:00:00:03 (MKA)" : "") + " (removed with this process)");
}

std::vector<std::string> LowerLinkGuard::restore() {
  std::vector<std::string> problems;
  nft_.reset();  // closing the owner socket removes the table
  for (auto it = changed_.rbegin(); it != changed_.rend(); ++it) {
    const std::string now = read_sysctl(it->path);
    if (now != it->value) {
      problems.push_back(sysctl_name(it->path) + " is " + now + ", not the " + it->value +
                         " we set: left as it is");
      continue;
    }
    if (!write_sysctl(it->path, it->previous)) {
      problems.push_back("cannot restore " + sysctl_name(it->path) + "=" + it->previous);
    }
  }
  changed_.clear();
  if (noarp_set_) {
    noarp_set_ = false;
    net::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, lower_.c_str(), IFNAMSIZ - 1);
    if (fd.valid() && ::ioctl(fd.get(), SIOCGIFFLAGS, &ifr) == 0) {
      ifr.ifr_flags = static_cast<short>(ifr.ifr_flags & ~IFF_NOARP);
      if (::ioctl(fd.get(), SIOCSIFFLAGS, &ifr) != 0) problems.push_back("cannot clear NOARP on " + lower_);
    } else if (errno != ENODEV) {
      problems.push_back("cannot clear NOARP on " + lower_ + ": " + net::errno_text(errno));
    }
  }
  return problems;
}

}  // namespace layersec::macsec
