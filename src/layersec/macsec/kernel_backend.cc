#include "layersec/macsec/kernel_backend.h"

#include <linux/if_link.h>
#include <linux/if_macsec.h>
#include <linux/rtnetlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <openssl/crypto.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace layersec::macsec::kernel {
namespace {

using Msg = Result<NlMessage, KernelError>;

std::uint64_t kernel_cipher_id(CipherSuite s) {
  switch (s) {
    case CipherSuite::kGcmAes128: return MACSEC_CIPHER_ID_GCM_AES_128;
    case CipherSuite::kGcmAes256: return MACSEC_CIPHER_ID_GCM_AES_256;
    case CipherSuite::kGcmAesXpn128: return MACSEC_CIPHER_ID_GCM_AES_XPN_128;
    case CipherSuite::kGcmAesXpn256: return MACSEC_CIPHER_ID_GCM_AES_XPN_256;
  }
  return MACSEC_CIPHER_ID_GCM_AES_128;
}

std::uint8_t kernel_validation(ValidateFrames v) {
  switch (v) {
    case ValidateFrames::kDisabled: return MACSEC_VALIDATE_DISABLED;
    case ValidateFrames::kCheck: return MACSEC_VALIDATE_CHECK;
    case ValidateFrames::kStrict: return MACSEC_VALIDATE_STRICT;
  }
  return MACSEC_VALIDATE_STRICT;
}

// libnl's nla_put_* return 0 or a negative NLE code; any failure here means
// the message ran out of room or memory.
struct Builder {
  nl_msg* msg;
  bool ok = true;
  void u8(int type, std::uint8_t v) { ok = ok && nla_put_u8(msg, type, v) == 0; }
  void u32(int type, std::uint32_t v) { ok = ok && nla_put_u32(msg, type, v) == 0; }
  void u64(int type, std::uint64_t v) { ok = ok && nla_put_u64(msg, type, v) == 0; }
  void data(int type, const void* p, std::size_t n) {
    ok = ok && nla_put(msg, type, static_cast<int>(n), p) == 0;
  }
  void str(int type, const std::string& s) { ok = ok && nla_put_string(msg, type, s.c_str()) == 0; }
  void sci(int type, Sci s) {
    const auto b = s.bytes();  // network byte order, as sci_t
    data(type, b.data(), b.size());
  }
  nlattr* nest(int type) {
    nlattr* a = ok ? nla_nest_start(msg, type) : nullptr;
    ok = ok && a != nullptr;
    return a;
  }
  void end(nlattr* a) {
    if (ok) ok = nla_nest_end(msg, a) == 0;
  }
};

Msg finish(nl_msg* msg, bool ok) {
  NlMessage m(msg);
  if (msg == nullptr || !ok) return Err(KernelError::kNetlink);
  return m;
}

Msg genl_message(int family, std::uint8_t cmd, int ifindex, const std::function<void(Builder&)>& body) {
  nl_msg* msg = nlmsg_alloc();
  if (msg == nullptr) return Err(KernelError::kNetlink);
  Builder b{msg};
  b.ok = genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST, cmd, MACSEC_GENL_VERSION) != nullptr;
  b.u32(MACSEC_ATTR_IFINDEX, static_cast<std::uint32_t>(ifindex));
  body(b);
  return finish(msg, b.ok);
}

void put_rxsc(Builder& b, Sci sci, bool with_active) {
  nlattr* rx = b.nest(MACSEC_ATTR_RXSC_CONFIG);
  b.sci(MACSEC_RXSC_ATTR_SCI, sci);
  if (with_active) b.u8(MACSEC_RXSC_ATTR_ACTIVE, 1);
  b.end(rx);
}

void put_sa(Builder& b, const SaParams& sa, bool transmit) {
  nlattr* n = b.nest(MACSEC_ATTR_SA_CONFIG);
  b.u8(MACSEC_SA_ATTR_AN, sa.an);
  // drivers/net/macsec.c: the PN attribute must be exactly 4 octets for the
  // 32-bit PN suites and 8 for XPN; it is required for a transmit SA.
  if (sa.xpn) {
    b.u64(MACSEC_SA_ATTR_PN, sa.pn);
  } else {
    b.u32(MACSEC_SA_ATTR_PN, static_cast<std::uint32_t>(sa.pn));
  }
  b.data(MACSEC_SA_ATTR_KEY, sa.key.data(), sa.key.size());
  b.data(MACSEC_SA_ATTR_KEYID, sa.key_id.data(), MACSEC_KEYID_LEN);
  b.u8(MACSEC_SA_ATTR_ACTIVE, sa.active ? 1 : 0);
  if (sa.xpn) {
    const std::uint8_t ssci[4] = {static_cast<std::uint8_t>(sa.ssci >> 24), static_cast<std::uint8_t>(sa.ssci >> 16),
                                  static_cast<std::uint8_t>(sa.ssci >> 8), static_cast<std::uint8_t>(sa.ssci)};
    b.data(MACSEC_SA_ATTR_SSCI, ssci, sizeof ssci);  // ssci_t: network byte order
    b.data(MACSEC_SA_ATTR_SALT, sa.salt.data(), MACSEC_SALT_LEN);
  }
  (void)transmit;
  b.end(n);
}

Msg link_message(int type, int flags, int ifindex, const std::function<void(Builder&)>& body) {
  nl_msg* msg = nlmsg_alloc_simple(type, flags);
  if (msg == nullptr) return Err(KernelError::kNetlink);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  Builder b{msg};
  b.ok = nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO) == 0;
  body(b);
  return finish(msg, b.ok);
}

}  // namespace

std::string_view to_string(KernelError e) {
  switch (e) {
    case KernelError::kUnsupported: return "not supported by this kernel";
    case KernelError::kPermission: return "permission denied (needs CAP_NET_ADMIN)";
    case KernelError::kNoDevice: return "no such device";
    case KernelError::kExists: return "already exists";
    case KernelError::kInvalid: return "invalid argument";
    case KernelError::kBusy: return "busy";
    case KernelError::kNetlink: return "netlink failure";
  }
  return "unknown kernel error";
}

KernelError map_nl_error(int nl_error) {
  switch (nl_error < 0 ? -nl_error : nl_error) {
    case NLE_OPNOTSUPP:
    case NLE_OBJ_NOTFOUND:  // genl_ctrl_resolve: family "macsec" not registered
    case NLE_AF_NOSUPPORT:
    case NLE_PROTO_MISMATCH:
      return KernelError::kUnsupported;
    case NLE_PERM:
    case NLE_NOACCESS:
      return KernelError::kPermission;
    case NLE_NODEV:
      return KernelError::kNoDevice;
    case NLE_EXIST:
      return KernelError::kExists;
    case NLE_INVAL:
    case NLE_RANGE:
    case NLE_MSGSIZE:
    case NLE_ATTRSIZE:
    case NLE_MSG_TOOSHORT:
      return KernelError::kInvalid;
    case NLE_BUSY:
      return KernelError::kBusy;
    default:
      return KernelError::kNetlink;
  }
}

KernelError map_errno(int err) { return map_nl_error(nl_syserr2nlerr(err)); }

Result<LinkParams, KernelError> link_params(const SecYConfig& c, std::uint8_t encoding_an, const std::string& name,
                                            int parent_ifindex, std::string* why) {
  auto unsupported = [&](const char* what) -> Result<LinkParams, KernelError> {
    if (why != nullptr) *why = std::string(what) + " has no equivalent in the Linux macsec driver";
    return Err(KernelError::kUnsupported);
  };
  if (c.confidentiality_offset != 0) return unsupported("confidentiality_offset 30/50");
  if (c.vlan_mode != VlanMode::kStandard) return unsupported("vlan_mode clear-tag");
  if (c.max_frame_size != 0) return unsupported("max_frame_size (the device MTU limits frames)");
  if (name.empty() || name.size() >= 16) {
    if (why != nullptr) *why = "interface name must have 1..15 characters";
    return Err(KernelError::kInvalid);
  }
  LinkParams p;
  p.name = name;
  p.parent_ifindex = parent_ifindex;
  p.sci = c.sci;
  p.suite = c.suite;
  p.encrypt = c.confidentiality;
  p.protect = c.protect_frames;
  p.include_sci = c.include_sci;
  p.end_station = !c.include_sci && c.use_es;  // the kernel refuses ES together with SC
  p.replay_protect = c.replay_protect;
  p.window = c.replay_window;
  p.validate = c.validate_frames;
  p.encoding_sa = encoding_an;
  return p;
}

SaParams sa_params(const SaConfig& sa, CipherSuite suite) {
  SaParams p;
  p.an = sa.an;
  p.pn = sa.pn;
  p.key = sa.sak.span();
  const std::string id = key_id(sa.sak);  // 8 hex digits
  for (std::size_t i = 0; i + 1 < id.size() && i / 2 < p.key_id.size(); i += 2) {
    p.key_id[i / 2] = static_cast<std::uint8_t>(std::stoi(id.substr(i, 2), nullptr, 16));
  }
  p.xpn = is_xpn(suite);
  p.ssci = sa.ssci;
  p.salt = sa.salt;
  return p;
}

// ---------------------------------------------------------------- NlMessage

NlMessage& NlMessage::operator=(NlMessage&& o) noexcept {
  if (this != &o) {
    this->~NlMessage();
    msg_ = o.msg_;
    o.msg_ = nullptr;
  }
  return *this;
}

NlMessage::~NlMessage() {
  if (msg_ == nullptr) return;
  // The buffer may hold a SAK: wipe all of it, not just the used part.
  OPENSSL_cleanse(nlmsg_hdr(msg_), nlmsg_get_max_size(msg_));
  nlmsg_free(msg_);
  msg_ = nullptr;
}

ByteSpan NlMessage::bytes() const {
  if (msg_ == nullptr) return {};
  const nlmsghdr* h = nlmsg_hdr(msg_);
  return ByteSpan(reinterpret_cast<const std::uint8_t*>(h), h->nlmsg_len);
}

// ----------------------------------------------------------------- builders

Msg build_new_link(const LinkParams& p) {
  return link_message(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL, 0, [&](Builder& b) {
    b.u32(IFLA_LINK, static_cast<std::uint32_t>(p.parent_ifindex));
    b.str(IFLA_IFNAME, p.name);
    nlattr* info = b.nest(IFLA_LINKINFO);
    b.str(IFLA_INFO_KIND, "macsec");
    nlattr* data = b.nest(IFLA_INFO_DATA);
    b.sci(IFLA_MACSEC_SCI, p.sci);
    b.u64(IFLA_MACSEC_CIPHER_SUITE, kernel_cipher_id(p.suite));
    b.u8(IFLA_MACSEC_ICV_LEN, p.icv_len);
    b.u8(IFLA_MACSEC_ENCRYPT, p.encrypt ? 1 : 0);
    b.u8(IFLA_MACSEC_PROTECT, p.protect ? 1 : 0);
    b.u8(IFLA_MACSEC_INC_SCI, p.include_sci ? 1 : 0);
    b.u8(IFLA_MACSEC_ES, p.end_station ? 1 : 0);
    b.u8(IFLA_MACSEC_SCB, p.scb ? 1 : 0);
    b.u8(IFLA_MACSEC_REPLAY_PROTECT, p.replay_protect ? 1 : 0);
    // The kernel requires a window whenever replay protection is on.
    if (p.replay_protect) b.u32(IFLA_MACSEC_WINDOW, p.window);
    b.u8(IFLA_MACSEC_VALIDATION, kernel_validation(p.validate));
    b.u8(IFLA_MACSEC_ENCODING_SA, p.encoding_sa);
    b.end(data);
    b.end(info);
  });
}

Msg build_set_encoding_sa(int ifindex, std::uint8_t an) {
  return link_message(RTM_NEWLINK, NLM_F_REQUEST, ifindex, [&](Builder& b) {
    nlattr* info = b.nest(IFLA_LINKINFO);
    b.str(IFLA_INFO_KIND, "macsec");
    nlattr* data = b.nest(IFLA_INFO_DATA);
    b.u8(IFLA_MACSEC_ENCODING_SA, an);
    b.end(data);
    b.end(info);
  });
}

Msg build_del_link(int ifindex) {
  return link_message(RTM_DELLINK, NLM_F_REQUEST, ifindex, [](Builder&) {});
}

Msg build_add_txsa(int family, int ifindex, const SaParams& sa) {
  return genl_message(family, MACSEC_CMD_ADD_TXSA, ifindex, [&](Builder& b) { put_sa(b, sa, true); });
}

Msg build_del_txsa(int family, int ifindex, std::uint8_t an) {
  return genl_message(family, MACSEC_CMD_DEL_TXSA, ifindex, [&](Builder& b) {
    nlattr* n = b.nest(MACSEC_ATTR_SA_CONFIG);
    b.u8(MACSEC_SA_ATTR_AN, an);
    b.end(n);
  });
}

Msg build_add_rxsc(int family, int ifindex, Sci sci) {
  return genl_message(family, MACSEC_CMD_ADD_RXSC, ifindex, [&](Builder& b) { put_rxsc(b, sci, true); });
}

Msg build_del_rxsc(int family, int ifindex, Sci sci) {
  return genl_message(family, MACSEC_CMD_DEL_RXSC, ifindex, [&](Builder& b) { put_rxsc(b, sci, false); });
}

Msg build_add_rxsa(int family, int ifindex, Sci sci, const SaParams& sa) {
  return genl_message(family, MACSEC_CMD_ADD_RXSA, ifindex, [&](Builder& b) {
    put_rxsc(b, sci, false);
    put_sa(b, sa, false);
  });
}

Msg build_del_rxsa(int family, int ifindex, Sci sci, std::uint8_t an) {
  return genl_message(family, MACSEC_CMD_DEL_RXSA, ifindex, [&](Builder& b) {
    put_rxsc(b, sci, false);
    nlattr* n = b.nest(MACSEC_ATTR_SA_CONFIG);
    b.u8(MACSEC_SA_ATTR_AN, an);
    b.end(n);
  });
}

Msg build_get_txsc_dump(int family) {
  nl_msg* msg = nlmsg_alloc();
  if (msg == nullptr) return Err(KernelError::kNetlink);
  const bool ok = genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST | NLM_F_DUMP,
                              MACSEC_CMD_GET_TXSC, MACSEC_GENL_VERSION) != nullptr;
  return finish(msg, ok);
}

// ------------------------------------------------------------ stats parsing

namespace {

// A counter attribute: u64 (SC and SecY counters) or u32 (SA counters).
bool counter(const nlattr* a, std::uint64_t& out) {
  if (a == nullptr) return true;  // absent: stays 0
  if (nla_len(a) == 8) {
    out = nla_get_u64(const_cast<nlattr*>(a));
  } else if (nla_len(a) == 4) {
    out = nla_get_u32(const_cast<nlattr*>(a));
  } else {
    return false;
  }
  return true;
}

bool flag(const nlattr* a, bool& out) {
  if (a == nullptr) return true;
  if (nla_len(a) != 1) return false;
  out = nla_get_u8(const_cast<nlattr*>(a)) != 0;
  return true;
}

bool an_of(const nlattr* a, std::uint8_t& out) {
  if (a == nullptr || nla_len(a) != 1) return false;
  out = nla_get_u8(const_cast<nlattr*>(a));
  return out <= 3;
}

bool sci_of(const nlattr* a, Sci& out) {
  if (a == nullptr || nla_len(a) != 8) return false;
  const auto* p = static_cast<const std::uint8_t*>(nla_data(a));
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];  // sci_t: network byte order
  out = Sci{v};
  return true;
}

template <int Max>
bool nested(nlattr* (&tb)[Max + 1], nlattr* a) {
  if (a == nullptr) return true;  // absent nest: all attributes stay null
  return nla_parse_nested(tb, Max, a, nullptr) == 0;
}

bool parse_sa(nlattr* a, std::uint8_t& an, bool& active, nlattr* (&stats)[MACSEC_SA_STATS_ATTR_MAX + 1]) {
  nlattr* tb[MACSEC_SA_ATTR_MAX + 1] = {};
  if (!nested<MACSEC_SA_ATTR_MAX>(tb, a)) return false;
  return an_of(tb[MACSEC_SA_ATTR_AN], an) && flag(tb[MACSEC_SA_ATTR_ACTIVE], active) &&
         nested<MACSEC_SA_STATS_ATTR_MAX>(stats, tb[MACSEC_SA_ATTR_STATS]);
}

}  // namespace

Result<KernelStats, KernelError> parse_txsc_dump(ByteSpan message) {
  // Copy into an aligned buffer: libnl's parsers read the headers in place.
  if (message.size() < NLMSG_HDRLEN + GENL_HDRLEN || message.size() > (1u << 20)) return Err(KernelError::kInvalid);
  std::vector<std::uint32_t> buf((message.size() + 3) / 4);
  std::memcpy(buf.data(), message.data(), message.size());
  auto* nlh = reinterpret_cast<nlmsghdr*>(buf.data());
  if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len > message.size()) {
    return Err(KernelError::kInvalid);
  }
  const auto* gh = static_cast<const genlmsghdr*>(nlmsg_data(nlh));
  if (gh->cmd != MACSEC_CMD_GET_TXSC) return Err(KernelError::kInvalid);
  nlattr* tb[MACSEC_ATTR_MAX + 1] = {};
  if (genlmsg_parse(nlh, 0, tb, MACSEC_ATTR_MAX, nullptr) != 0) return Err(KernelError::kInvalid);
  if (tb[MACSEC_ATTR_IFINDEX] == nullptr || nla_len(tb[MACSEC_ATTR_IFINDEX]) != 4) return Err(KernelError::kInvalid);

  KernelStats k;
  k.ifindex = static_cast<int>(nla_get_u32(tb[MACSEC_ATTR_IFINDEX]));
  bool ok = true;
  nlattr* secy[MACSEC_SECY_STATS_ATTR_MAX + 1] = {};
  ok = ok && nested<MACSEC_SECY_STATS_ATTR_MAX>(secy, tb[MACSEC_ATTR_SECY_STATS]);
  ok = ok && counter(secy[MACSEC_SECY_STATS_ATTR_OUT_PKTS_UNTAGGED], k.secy.OutPktsUntagged) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_IN_PKTS_UNTAGGED], k.secy.InPktsUntagged) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_OUT_PKTS_TOO_LONG], k.secy.OutPktsTooLong) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_IN_PKTS_NO_TAG], k.secy.InPktsNoTag) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_IN_PKTS_BAD_TAG], k.secy.InPktsBadTag) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_IN_PKTS_UNKNOWN_SCI], k.secy.InPktsUnknownSCI) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_IN_PKTS_NO_SCI], k.secy.InPktsNoSCI) &&
       counter(secy[MACSEC_SECY_STATS_ATTR_IN_PKTS_OVERRUN], k.in_pkts_overrun);
  nlattr* tx[MACSEC_TXSC_STATS_ATTR_MAX + 1] = {};
  ok = ok && nested<MACSEC_TXSC_STATS_ATTR_MAX>(tx, tb[MACSEC_ATTR_TXSC_STATS]);
  ok = ok && counter(tx[MACSEC_TXSC_STATS_ATTR_OUT_PKTS_PROTECTED], k.tx_sc.OutPktsProtected) &&
       counter(tx[MACSEC_TXSC_STATS_ATTR_OUT_PKTS_ENCRYPTED], k.tx_sc.OutPktsEncrypted) &&
       counter(tx[MACSEC_TXSC_STATS_ATTR_OUT_OCTETS_PROTECTED], k.tx_sc.OutOctetsProtected) &&
       counter(tx[MACSEC_TXSC_STATS_ATTR_OUT_OCTETS_ENCRYPTED], k.tx_sc.OutOctetsEncrypted);
  if (!ok) return Err(KernelError::kInvalid);

  if (nlattr* list = tb[MACSEC_ATTR_TXSA_LIST]; list != nullptr) {
    nlattr* a = nullptr;
    int rem = 0;
    nla_for_each_nested(a, list, rem) {
      KernelStats::TxSa sa;
      nlattr* st[MACSEC_SA_STATS_ATTR_MAX + 1] = {};
      if (!parse_sa(a, sa.an, sa.active, st)) return Err(KernelError::kInvalid);
      if (!counter(st[MACSEC_SA_STATS_ATTR_OUT_PKTS_PROTECTED], sa.stats.OutPktsProtected) ||
          !counter(st[MACSEC_SA_STATS_ATTR_OUT_PKTS_ENCRYPTED], sa.stats.OutPktsEncrypted))
        return Err(KernelError::kInvalid);
      k.tx_sas.push_back(sa);
    }
  }
  if (nlattr* list = tb[MACSEC_ATTR_RXSC_LIST]; list != nullptr) {
    nlattr* a = nullptr;
    int rem = 0;
    nla_for_each_nested(a, list, rem) {
      nlattr* sc[MACSEC_RXSC_ATTR_MAX + 1] = {};
      KernelStats::RxSc r;
      if (!nested<MACSEC_RXSC_ATTR_MAX>(sc, a) || !sci_of(sc[MACSEC_RXSC_ATTR_SCI], r.sci) ||
          !flag(sc[MACSEC_RXSC_ATTR_ACTIVE], r.active))
        return Err(KernelError::kInvalid);
      nlattr* st[MACSEC_RXSC_STATS_ATTR_MAX + 1] = {};
      if (!nested<MACSEC_RXSC_STATS_ATTR_MAX>(st, sc[MACSEC_RXSC_ATTR_STATS]) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_OCTETS_VALIDATED], r.stats.InOctetsValidated) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_OCTETS_DECRYPTED], r.stats.InOctetsDecrypted) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_UNCHECKED], r.stats.InPktsUnchecked) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_DELAYED], r.stats.InPktsDelayed) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_OK], r.stats.InPktsOK) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_INVALID], r.stats.InPktsInvalid) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_LATE], r.stats.InPktsLate) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_NOT_VALID], r.stats.InPktsNotValid) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_NOT_USING_SA], r.stats.InPktsNotUsingSA) ||
          !counter(st[MACSEC_RXSC_STATS_ATTR_IN_PKTS_UNUSED_SA], r.stats.InPktsUnusedSA))
        return Err(KernelError::kInvalid);
      if (nlattr* sas = sc[MACSEC_RXSC_ATTR_SA_LIST]; sas != nullptr) {
        nlattr* b = nullptr;
        int rem2 = 0;
        nla_for_each_nested(b, sas, rem2) {
          KernelStats::RxSa sa;
          nlattr* ss[MACSEC_SA_STATS_ATTR_MAX + 1] = {};
          if (!parse_sa(b, sa.an, sa.active, ss) ||
              !counter(ss[MACSEC_SA_STATS_ATTR_IN_PKTS_OK], sa.stats.InPktsOK) ||
              !counter(ss[MACSEC_SA_STATS_ATTR_IN_PKTS_INVALID], sa.stats.InPktsInvalid) ||
              !counter(ss[MACSEC_SA_STATS_ATTR_IN_PKTS_NOT_VALID], sa.stats.InPktsNotValid) ||
              !counter(ss[MACSEC_SA_STATS_ATTR_IN_PKTS_NOT_USING_SA], sa.stats.InPktsNotUsingSA) ||
              !counter(ss[MACSEC_SA_STATS_ATTR_IN_PKTS_UNUSED_SA], sa.stats.InPktsUnusedSA))
            return Err(KernelError::kInvalid);
          r.sas.push_back(sa);
        }
      }
      k.rx_scs.push_back(std::move(r));
    }
  }
  // The SecY-level sums the driver does not keep itself.
  k.secy.OutPktsProtected = k.tx_sc.OutPktsProtected;
  k.secy.OutPktsEncrypted = k.tx_sc.OutPktsEncrypted;
  k.secy.OutOctetsProtected = k.tx_sc.OutOctetsProtected;
  k.secy.OutOctetsEncrypted = k.tx_sc.OutOctetsEncrypted;
  for (const auto& r : k.rx_scs) {
    k.secy.InPktsOK += r.stats.InPktsOK;
    k.secy.InPktsInvalid += r.stats.InPktsInvalid;
    k.secy.InPktsNotValid += r.stats.InPktsNotValid;
    k.secy.InPktsLate += r.stats.InPktsLate;
    k.secy.InPktsUnchecked += r.stats.InPktsUnchecked;
    k.secy.InPktsDelayed += r.stats.InPktsDelayed;
    k.secy.InPktsNotUsingSA += r.stats.InPktsNotUsingSA;
    k.secy.InPktsUnusedSA += r.stats.InPktsUnusedSA;
    k.secy.InOctetsValidated += r.stats.InOctetsValidated;
    k.secy.InOctetsDecrypted += r.stats.InOctetsDecrypted;
  }
  k.secy.InPktsNoSA = k.secy.InPktsUnknownSCI + k.secy.InPktsUnusedSA;
  return k;
}

nlohmann::json to_json(const KernelStats& s) {
  auto counters = [](const auto& st) {
    nlohmann::json j = nlohmann::json::object();
    st.for_each([&](std::string_view name, std::uint64_t v) { j[std::string(name)] = v; });
    return j;
  };
  auto hex = [](Sci sci) {
    static const char* d = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i) out[15 - i] = d[(sci.value >> (4 * i)) & 0xF];
    return out;
  };
  nlohmann::json tx = counters(s.tx_sc);
  tx["sas"] = nlohmann::json::array();
  for (const auto& sa : s.tx_sas) {
    nlohmann::json j = counters(sa.stats);
    j["an"] = sa.an;
    j["active"] = sa.active;
    tx["sas"].push_back(std::move(j));
  }
  nlohmann::json rx = nlohmann::json::array();
  for (const auto& sc : s.rx_scs) {
    nlohmann::json j = counters(sc.stats);
    j["sci"] = hex(sc.sci);
    j["active"] = sc.active;
    j["sas"] = nlohmann::json::array();
    for (const auto& sa : sc.sas) {
      nlohmann::json a = counters(sa.stats);
      a["an"] = sa.an;
      a["active"] = sa.active;
      j["sas"].push_back(std::move(a));
    }
    rx.push_back(std::move(j));
  }
  nlohmann::json secy = counters(s.secy);
  return nlohmann::json{{"ifindex", s.ifindex},
                        {"secy", std::move(secy)},
                        {"InPktsOverrun", s.in_pkts_overrun},
                        {"tx_sc", std::move(tx)},
                        {"rx_scs", std::move(rx)}};
}

// ------------------------------------------------------------ KernelBackend

Result<std::unique_ptr<KernelBackend>, KernelError> KernelBackend::open(std::string* why) {
  std::unique_ptr<KernelBackend> k(new KernelBackend());
  k->route_ = nl_socket_alloc();
  k->genl_ = nl_socket_alloc();
  if (k->route_ == nullptr || k->genl_ == nullptr) {
    if (why != nullptr) *why = "cannot allocate netlink sockets";
    return Err(KernelError::kNetlink);
  }
  if (int e = nl_connect(k->route_, NETLINK_ROUTE); e < 0) {
    if (why != nullptr) *why = std::string("rtnetlink socket: ") + nl_geterror(e);
    return Err(map_nl_error(e));
  }
  if (int e = genl_connect(k->genl_); e < 0) {
    if (why != nullptr) *why = std::string("generic netlink socket: ") + nl_geterror(e);
    return Err(map_nl_error(e));
  }
  return k;
}

KernelBackend::~KernelBackend() {
  if (route_ != nullptr) nl_socket_free(route_);
  if (genl_ != nullptr) nl_socket_free(genl_);
}

Status<KernelError> KernelBackend::fail(KernelError e, std::string message) {
  last_error_ = std::move(message);
  return Err(e);
}

Status<KernelError> KernelBackend::send_route(const NlMessage& msg, const std::string& step) {
  int e = nl_send_auto(route_, msg.get());
  if (e >= 0) e = nl_wait_for_ack(route_);
  if (e < 0) return fail(map_nl_error(e), step + ": " + nl_geterror(e));
  return {};
}

Status<KernelError> KernelBackend::send_genl(const NlMessage& msg, const std::string& step) {
  int e = nl_send_auto(genl_, msg.get());
  if (e >= 0) e = nl_wait_for_ack(genl_);
  if (e < 0) return fail(map_nl_error(e), step + ": " + nl_geterror(e));
  return {};
}

Status<KernelError> KernelBackend::resolve_family() {
  if (family_ >= 0) return {};
  const int id = genl_ctrl_resolve(genl_, MACSEC_GENL_NAME);
  if (id < 0) {
    return fail(map_nl_error(id), std::string("generic netlink family \"") + MACSEC_GENL_NAME +
                                      "\" is not registered (" + nl_geterror(id) +
                                      "): the kernel has no macsec driver loaded");
  }
  family_ = id;
  return {};
}

Result<int, KernelError> KernelBackend::ifindex_of(const std::string& name) {
  rtnl_link* link = nullptr;
  const int e = rtnl_link_get_kernel(route_, 0, name.c_str(), &link);
  if (e < 0 || link == nullptr) {
    fail(map_nl_error(e), "interface " + name + ": " + nl_geterror(e)).ignore();
    return Err(map_nl_error(e));
  }
  const int index = rtnl_link_get_ifindex(link);
  rtnl_link_put(link);
  return index;
}

namespace {
std::string unsupported_link_message(const std::string& step, int nl_error) {
  return step + ": " + nl_geterror(nl_error) +
         " - the kernel has no macsec driver (ip link add ... type macsec: \"Unknown device type\"); "
         "use the user-space back end (--backend user)";
}
}  // namespace

Status<KernelError> KernelBackend::probe(const std::string& parent) {
  if (resolve_family().ok()) return {};
  auto parent_index = ifindex_of(parent);
  if (!parent_index) return Err(parent_index.error());
  SecYConfig c;
  c.sci = Sci{0x0200000000000001ULL};
  const std::string name = "lsprobe" + std::to_string(::getpid() % 100000);
  std::string why;
  auto params = link_params(c, 0, name, *parent_index, &why);
  if (!params) return fail(params.error(), why);
  auto msg = build_new_link(*params);
  if (!msg) return fail(msg.error(), "RTM_NEWLINK: cannot build the message");
  int e = nl_send_auto(route_, msg->get());
  if (e >= 0) e = nl_wait_for_ack(route_);
  if (e < 0) {
    const KernelError k = map_nl_error(e);
    return fail(k, k == KernelError::kUnsupported
                       ? unsupported_link_message("RTM_NEWLINK type macsec on " + parent, e)
                       : "RTM_NEWLINK type macsec on " + parent + ": " + nl_geterror(e));
  }
  // The device exists, so the driver is there; delete the probe device again.
  auto index = ifindex_of(name);
  if (index) {
    auto del = build_del_link(*index);
    if (del) send_route(*del, "RTM_DELLINK " + name).ignore();
  }
  return resolve_family();
}

Result<int, KernelError> KernelBackend::configure(const LinkConfig& config, Sci sci, const std::string& parent,
                                                  const std::string& name) {
  auto parent_index = ifindex_of(parent);
  if (!parent_index) return Err(parent_index.error());
  SecYConfig c = config.secy;
  c.sci = sci;
  std::string why;
  auto params = link_params(c, config.encoding_an, name, *parent_index, &why);
  if (!params) {
    fail(params.error(), why).ignore();
    return Err(params.error());
  }
  {
    auto msg = build_new_link(*params);
    if (!msg) return Err(msg.error());
    int e = nl_send_auto(route_, msg->get());
    if (e >= 0) e = nl_wait_for_ack(route_);
    if (e < 0) {
      const KernelError k = map_nl_error(e);
      fail(k, k == KernelError::kUnsupported ? unsupported_link_message("RTM_NEWLINK type macsec " + name, e)
                                             : "RTM_NEWLINK type macsec " + name + ": " + nl_geterror(e))
          .ignore();
      return Err(k);
    }
  }
  auto index = ifindex_of(name);
  if (!index) return Err(index.error());
  // From here on a failure deletes the device again: all or nothing.
  auto undo = [&](KernelError e) -> Result<int, KernelError> {
    const std::string saved = last_error_;
    auto del = build_del_link(*index);
    if (del) send_route(*del, "RTM_DELLINK " + name).ignore();
    last_error_ = saved;
    return Err(e);
  };
  if (auto st = resolve_family(); !st) return undo(st.error());
  for (const auto& sa : config.tx_sas) {
    auto msg = build_add_txsa(family_, *index, sa_params(sa, c.suite));
    if (!msg) return undo(msg.error());
    if (auto st = send_genl(*msg, "MACSEC_CMD_ADD_TXSA AN " + std::to_string(sa.an)); !st) return undo(st.error());
  }
  for (const auto& rx : config.rx_scs) {
    auto msg = build_add_rxsc(family_, *index, rx.sci);
    if (!msg) return undo(msg.error());
    if (auto st = send_genl(*msg, "MACSEC_CMD_ADD_RXSC"); !st) return undo(st.error());
    for (const auto& sa : rx.sas) {
      auto m = build_add_rxsa(family_, *index, rx.sci, sa_params(sa, c.suite));
      if (!m) return undo(m.error());
      if (auto st = send_genl(*m, "MACSEC_CMD_ADD_RXSA AN " + std::to_string(sa.an)); !st) return undo(st.error());
    }
  }
  return *index;
}

Status<KernelError> KernelBackend::set_encoding_sa(int ifindex, std::uint8_t an) {
  auto msg = build_set_encoding_sa(ifindex, an);
  if (!msg) return Err(msg.error());
  return send_route(*msg, "RTM_NEWLINK encoding SA " + std::to_string(an));
}

namespace {
struct DumpContext {
  int ifindex;
  std::optional<Result<KernelStats, KernelError>> found;
};

int on_dump_message(nl_msg* msg, void* arg) {
  auto* ctx = static_cast<DumpContext*>(arg);
  const nlmsghdr* h = nlmsg_hdr(msg);
  auto parsed = parse_txsc_dump(ByteSpan(reinterpret_cast<const std::uint8_t*>(h), h->nlmsg_len));
  if (!parsed) {
    if (!ctx->found) ctx->found.emplace(Err(parsed.error()));
  } else if (parsed->ifindex == ctx->ifindex) {
    ctx->found.emplace(std::move(parsed));
  }
  return NL_OK;
}
}  // namespace

Result<KernelStats, KernelError> KernelBackend::read_stats(int ifindex) {
  if (auto st = resolve_family(); !st) return Err(st.error());
  auto msg = build_get_txsc_dump(family_);
  if (!msg) return Err(msg.error());
  int e = nl_send_auto(genl_, msg->get());
  if (e < 0) {
    fail(map_nl_error(e), std::string("MACSEC_CMD_GET_TXSC: ") + nl_geterror(e)).ignore();
    return Err(map_nl_error(e));
  }
  DumpContext ctx{ifindex, std::nullopt};
  nl_cb* cb = nl_cb_clone(nl_socket_get_cb(genl_));
  if (cb == nullptr) return Err(KernelError::kNetlink);
  nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_dump_message, &ctx);
  e = nl_recvmsgs(genl_, cb);
  nl_cb_put(cb);
  if (e < 0) {
    fail(map_nl_error(e), std::string("MACSEC_CMD_GET_TXSC: ") + nl_geterror(e)).ignore();
    return Err(map_nl_error(e));
  }
  if (!ctx.found) {
    fail(KernelError::kNoDevice, "MACSEC_CMD_GET_TXSC: no macsec device with ifindex " + std::to_string(ifindex))
        .ignore();
    return Err(KernelError::kNoDevice);
  }
  if (!*ctx.found) {
    const KernelError err = ctx.found->error();
    fail(err, "MACSEC_CMD_GET_TXSC: malformed reply").ignore();
    return Err(err);
  }
  return std::move(*ctx.found).value();
}

Status<KernelError> KernelBackend::delete_link(int ifindex) {
  auto msg = build_del_link(ifindex);
  if (!msg) return Err(msg.error());
  return send_route(*msg, "RTM_DELLINK");
}

}  // namespace layersec::macsec::kernel
