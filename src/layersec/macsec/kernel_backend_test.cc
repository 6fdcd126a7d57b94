// Kernel back end: the netlink messages are parsed back with libnl and each
// attribute checked against the uapi constants and the encodings the kernel
// expects (drivers/net/macsec.c: SCI and SSCI in network byte order, PN u32
// or u64 by suite, 16-octet key id, 12-octet salt); errors map to typed
// reasons; and the support probe runs in a network namespace created for the
// test. Where the kernel has no macsec driver (as on the build machine) the
// live tests skip with the probe's message.
#include "layersec/macsec/kernel_backend.h"

#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/if_macsec.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "layersec/net/netns.h"

namespace layersec::macsec::kernel {
namespace {

constexpr int kFamily = 0x1d;  // any generic netlink id; the kernel's is resolved at run time
constexpr int kIfindex = 42;
const Sci kSci{0x0211223344550001ULL};
const Sci kPeer{0x02aabbccddee0002ULL};

const nlmsghdr* header(const NlMessage& m) { return reinterpret_cast<const nlmsghdr*>(m.bytes().data()); }

std::vector<std::uint8_t> payload(const nlattr* a) {
  const auto* p = static_cast<const std::uint8_t*>(nla_data(a));
  return std::vector<std::uint8_t>(p, p + nla_len(a));
}

// Parses a generic netlink message of the macsec family into top-level attributes.
struct GenlParsed {
  nlattr* tb[MACSEC_ATTR_MAX + 1] = {};
  nlattr* sa[MACSEC_SA_ATTR_MAX + 1] = {};
  nlattr* rxsc[MACSEC_RXSC_ATTR_MAX + 1] = {};
  std::uint8_t cmd = 0xFF;
  std::uint8_t version = 0;
};

GenlParsed parse_genl(const NlMessage& m) {
  GenlParsed g;
  auto* nlh = const_cast<nlmsghdr*>(header(m));
  EXPECT_EQ(nlh->nlmsg_type, kFamily);
  EXPECT_EQ(nlh->nlmsg_len, m.bytes().size());
  EXPECT_NE(nlh->nlmsg_flags & NLM_F_REQUEST, 0);
  const auto* gh = static_cast<const genlmsghdr*>(nlmsg_data(nlh));
  g.cmd = gh->cmd;
  g.version = gh->version;
  EXPECT_EQ(genlmsg_parse(nlh, 0, g.tb, MACSEC_ATTR_MAX, nullptr), 0);
  if (g.tb[MACSEC_ATTR_SA_CONFIG] != nullptr) {
    EXPECT_EQ(nla_parse_nested(g.sa, MACSEC_SA_ATTR_MAX, g.tb[MACSEC_ATTR_SA_CONFIG], nullptr), 0);
  }
  if (g.tb[MACSEC_ATTR_RXSC_CONFIG] != nullptr) {
    EXPECT_EQ(nla_parse_nested(g.rxsc, MACSEC_RXSC_ATTR_MAX, g.tb[MACSEC_ATTR_RXSC_CONFIG], nullptr), 0);
  }
  return g;
}

SaParams sa128() {
  static const std::vector<std::uint8_t> key(16, 0x5c);
  SaParams p;
  p.an = 2;
  p.pn = 0x01020304;
  p.key = ByteSpan(key.data(), key.size());
  p.key_id = {0xde, 0xad, 0xbe, 0xef};
  return p;
}

TEST(KernelBackendMessages, AddTxSaFor32BitPnSuite) {
  auto m = build_add_txsa(kFamily, kIfindex, sa128());
  ASSERT_TRUE(m.ok());
  const GenlParsed g = parse_genl(*m);
  EXPECT_EQ(g.cmd, MACSEC_CMD_ADD_TXSA);
  EXPECT_EQ(g.version, MACSEC_GENL_VERSION);
  ASSERT_NE(g.tb[MACSEC_ATTR_IFINDEX], nullptr);
  EXPECT_EQ(nla_get_u32(g.tb[MACSEC_ATTR_IFINDEX]), static_cast<std::uint32_t>(kIfindex));
  EXPECT_EQ(g.tb[MACSEC_ATTR_RXSC_CONFIG], nullptr);
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_AN], nullptr);
  EXPECT_EQ(nla_len(g.sa[MACSEC_SA_ATTR_AN]), 1);
  EXPECT_EQ(nla_get_u8(g.sa[MACSEC_SA_ATTR_AN]), 2);
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_PN], nullptr);
  EXPECT_EQ(nla_len(g.sa[MACSEC_SA_ATTR_PN]), 4);  // MACSEC_DEFAULT_PN_LEN
  EXPECT_EQ(nla_get_u32(g.sa[MACSEC_SA_ATTR_PN]), 0x01020304u);
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_KEY], nullptr);
  EXPECT_EQ(payload(g.sa[MACSEC_SA_ATTR_KEY]), std::vector<std::uint8_t>(16, 0x5c));
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_KEYID], nullptr);
  auto kid = payload(g.sa[MACSEC_SA_ATTR_KEYID]);
  ASSERT_EQ(kid.size(), static_cast<std::size_t>(MACSEC_KEYID_LEN));
  EXPECT_EQ(kid[0], 0xde);
  EXPECT_EQ(kid[3], 0xef);
  EXPECT_EQ(kid[4], 0x00);
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_ACTIVE], nullptr);
  EXPECT_EQ(nla_get_u8(g.sa[MACSEC_SA_ATTR_ACTIVE]), 1);
  EXPECT_EQ(g.sa[MACSEC_SA_ATTR_SSCI], nullptr);
  EXPECT_EQ(g.sa[MACSEC_SA_ATTR_SALT], nullptr);
}

TEST(KernelBackendMessages, AddRxSaForXpnCarriesU64PnSsciAndSalt) {
  static const std::vector<std::uint8_t> key(32, 0xa7);
  SaParams p;
  p.an = 3;
  p.pn = 0x1122334455667788ULL;
  p.key = ByteSpan(key.data(), key.size());
  p.xpn = true;
  p.ssci = 0x7a30c118;
  for (std::size_t i = 0; i < p.salt.size(); ++i) p.salt[i] = static_cast<std::uint8_t>(0xe0 + i);
  p.active = false;
  auto m = build_add_rxsa(kFamily, kIfindex, kPeer, p);
  ASSERT_TRUE(m.ok());
  const GenlParsed g = parse_genl(*m);
  EXPECT_EQ(g.cmd, MACSEC_CMD_ADD_RXSA);
  ASSERT_NE(g.rxsc[MACSEC_RXSC_ATTR_SCI], nullptr);
  // sci_t: the SCI's octets in network order (MAC address, then port).
  EXPECT_EQ(payload(g.rxsc[MACSEC_RXSC_ATTR_SCI]),
            (std::vector<std::uint8_t>{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x00, 0x02}));
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_PN], nullptr);
  EXPECT_EQ(nla_len(g.sa[MACSEC_SA_ATTR_PN]), 8);  // MACSEC_XPN_PN_LEN
  EXPECT_EQ(nla_get_u64(g.sa[MACSEC_SA_ATTR_PN]), 0x1122334455667788ULL);
  EXPECT_EQ(payload(g.sa[MACSEC_SA_ATTR_KEY]).size(), 32u);
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_SSCI], nullptr);
  EXPECT_EQ(payload(g.sa[MACSEC_SA_ATTR_SSCI]), (std::vector<std::uint8_t>{0x7a, 0x30, 0xc1, 0x18}));
  ASSERT_NE(g.sa[MACSEC_SA_ATTR_SALT], nullptr);
  auto salt = payload(g.sa[MACSEC_SA_ATTR_SALT]);
  ASSERT_EQ(salt.size(), static_cast<std::size_t>(MACSEC_SALT_LEN));
  EXPECT_EQ(salt[0], 0xe0);
  EXPECT_EQ(salt[11], 0xeb);
  EXPECT_EQ(nla_get_u8(g.sa[MACSEC_SA_ATTR_ACTIVE]), 0);
}

TEST(KernelBackendMessages, RxScAndDeleteCommands) {
  auto add = build_add_rxsc(kFamily, kIfindex, kPeer);
  ASSERT_TRUE(add.ok());
  GenlParsed g = parse_genl(*add);
  EXPECT_EQ(g.cmd, MACSEC_CMD_ADD_RXSC);
  ASSERT_NE(g.rxsc[MACSEC_RXSC_ATTR_ACTIVE], nullptr);
  EXPECT_EQ(nla_get_u8(g.rxsc[MACSEC_RXSC_ATTR_ACTIVE]), 1);
  EXPECT_EQ(payload(g.rxsc[MACSEC_RXSC_ATTR_SCI]).size(), 8u);
  EXPECT_EQ(g.tb[MACSEC_ATTR_SA_CONFIG], nullptr);

  auto del_sc = build_del_rxsc(kFamily, kIfindex, kPeer);
  ASSERT_TRUE(del_sc.ok());
  g = parse_genl(*del_sc);
  EXPECT_EQ(g.cmd, MACSEC_CMD_DEL_RXSC);
  EXPECT_EQ(g.rxsc[MACSEC_RXSC_ATTR_ACTIVE], nullptr);

  auto del_rxsa = build_del_rxsa(kFamily, kIfindex, kPeer, 1);
  ASSERT_TRUE(del_rxsa.ok());
  g = parse_genl(*del_rxsa);
  EXPECT_EQ(g.cmd, MACSEC_CMD_DEL_RXSA);
  EXPECT_EQ(nla_get_u8(g.sa[MACSEC_SA_ATTR_AN]), 1);
  EXPECT_EQ(g.sa[MACSEC_SA_ATTR_KEY], nullptr);  // a delete carries no key

  auto del_txsa = build_del_txsa(kFamily, kIfindex, 3);
  ASSERT_TRUE(del_txsa.ok());
  g = parse_genl(*del_txsa);
  EXPECT_EQ(g.cmd, MACSEC_CMD_DEL_TXSA);
  EXPECT_EQ(nla_get_u8(g.sa[MACSEC_SA_ATTR_AN]), 3);
  EXPECT_EQ(g.tb[MACSEC_ATTR_RXSC_CONFIG], nullptr);
}

struct LinkParsed {
  nlattr* tb[IFLA_MAX + 1] = {};
  nlattr* info[IFLA_INFO_MAX + 1] = {};
  nlattr* data[IFLA_MACSEC_MAX + 1] = {};
  ifinfomsg ifi{};
  std::uint16_t type = 0;
  std::uint16_t flags = 0;
};

LinkParsed parse_link(const NlMessage& m) {
  LinkParsed l;
  auto* nlh = const_cast<nlmsghdr*>(header(m));
  l.type = nlh->nlmsg_type;
  l.flags = nlh->nlmsg_flags;
  l.ifi = *static_cast<const ifinfomsg*>(nlmsg_data(nlh));
  EXPECT_EQ(nlmsg_parse(nlh, sizeof(ifinfomsg), l.tb, IFLA_MAX, nullptr), 0);
  if (l.tb[IFLA_LINKINFO] != nullptr) {
    EXPECT_EQ(nla_parse_nested(l.info, IFLA_INFO_MAX, l.tb[IFLA_LINKINFO], nullptr), 0);
    if (l.info[IFLA_INFO_DATA] != nullptr) {
      EXPECT_EQ(nla_parse_nested(l.data, IFLA_MACSEC_MAX, l.info[IFLA_INFO_DATA], nullptr), 0);
    }
  }
  return l;
}

TEST(KernelBackendMessages, NewLinkCarriesEveryMacsecAttribute) {
  SecYConfig c;
  c.sci = kSci;
  c.suite = CipherSuite::kGcmAesXpn256;
  c.confidentiality = false;
  c.validate_frames = ValidateFrames::kCheck;
  c.replay_window = 32;
  std::string why;
  auto p = link_params(c, 1, "macsec7", 9, &why);
  ASSERT_TRUE(p.ok()) << why;
  auto m = build_new_link(*p);
  ASSERT_TRUE(m.ok());
  const LinkParsed l = parse_link(*m);
  EXPECT_EQ(l.type, RTM_NEWLINK);
  EXPECT_EQ(l.flags & (NLM_F_CREATE | NLM_F_EXCL | NLM_F_REQUEST), NLM_F_CREATE | NLM_F_EXCL | NLM_F_REQUEST);
  EXPECT_EQ(l.ifi.ifi_index, 0);
  ASSERT_NE(l.tb[IFLA_LINK], nullptr);
  EXPECT_EQ(nla_get_u32(l.tb[IFLA_LINK]), 9u);
  ASSERT_NE(l.tb[IFLA_IFNAME], nullptr);
  EXPECT_STREQ(nla_get_string(l.tb[IFLA_IFNAME]), "macsec7");
  ASSERT_NE(l.info[IFLA_INFO_KIND], nullptr);
  EXPECT_STREQ(nla_get_string(l.info[IFLA_INFO_KIND]), "macsec");
  ASSERT_NE(l.data[IFLA_MACSEC_SCI], nullptr);
  EXPECT_EQ(payload(l.data[IFLA_MACSEC_SCI]),
            (std::vector<std::uint8_t>{0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x00, 0x01}));
  EXPECT_EQ(nla_get_u64(l.data[IFLA_MACSEC_CIPHER_SUITE]), MACSEC_CIPHER_ID_GCM_AES_XPN_256);
  EXPECT_EQ(nla_len(l.data[IFLA_MACSEC_ICV_LEN]), 1);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_ICV_LEN]), MACSEC_STD_ICV_LEN);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_ENCRYPT]), 0);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_PROTECT]), 1);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_INC_SCI]), 1);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_ES]), 0);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_SCB]), 0);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_REPLAY_PROTECT]), 1);
  ASSERT_NE(l.data[IFLA_MACSEC_WINDOW], nullptr);
  EXPECT_EQ(nla_get_u32(l.data[IFLA_MACSEC_WINDOW]), 32u);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_VALIDATION]), MACSEC_VALIDATE_CHECK);
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_ENCODING_SA]), 1);
  EXPECT_EQ(l.data[IFLA_MACSEC_OFFLOAD], nullptr);

  // Replay protection off: no window (the kernel wants one only with it on);
  // ES without SCI maps to ES=1, INC_SCI=0.
  c.replay_protect = false;
  c.include_sci = false;
  c.use_es = true;
  c.validate_frames = ValidateFrames::kDisabled;
  auto p2 = link_params(c, 0, "ms0", 9, &why);
  ASSERT_TRUE(p2.ok()) << why;
  auto m2 = build_new_link(*p2);
  ASSERT_TRUE(m2.ok());
  const LinkParsed l2 = parse_link(*m2);
  EXPECT_EQ(l2.data[IFLA_MACSEC_WINDOW], nullptr);
  EXPECT_EQ(nla_get_u8(l2.data[IFLA_MACSEC_INC_SCI]), 0);
  EXPECT_EQ(nla_get_u8(l2.data[IFLA_MACSEC_ES]), 1);
  EXPECT_EQ(nla_get_u8(l2.data[IFLA_MACSEC_VALIDATION]), MACSEC_VALIDATE_DISABLED);
}

TEST(KernelBackendMessages, EncodingSaChangeAndDelete) {
  auto m = build_set_encoding_sa(kIfindex, 3);
  ASSERT_TRUE(m.ok());
  const LinkParsed l = parse_link(*m);
  EXPECT_EQ(l.type, RTM_NEWLINK);
  EXPECT_EQ(l.flags & (NLM_F_CREATE | NLM_F_EXCL), 0);
  EXPECT_EQ(l.ifi.ifi_index, kIfindex);
  EXPECT_STREQ(nla_get_string(l.info[IFLA_INFO_KIND]), "macsec");
  EXPECT_EQ(nla_get_u8(l.data[IFLA_MACSEC_ENCODING_SA]), 3);
  EXPECT_EQ(l.data[IFLA_MACSEC_SCI], nullptr);

  auto d = build_del_link(kIfindex);
  ASSERT_TRUE(d.ok());
  const LinkParsed ld = parse_link(*d);
  EXPECT_EQ(ld.type, RTM_DELLINK);
  EXPECT_EQ(ld.ifi.ifi_index, kIfindex);
  EXPECT_EQ(ld.tb[IFLA_LINKINFO], nullptr);
}

TEST(KernelBackendMessages, SettingsWithoutKernelEquivalentAreRefused) {
  std::string why;
  SecYConfig c;
  c.confidentiality_offset = 30;
  auto r = link_params(c, 0, "ms0", 1, &why);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KernelError::kUnsupported);
  EXPECT_NE(why.find("confidentiality_offset"), std::string::npos);
  c.confidentiality_offset = 0;
  c.vlan_mode = VlanMode::kClearTag;
  r = link_params(c, 0, "ms0", 1, &why);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(why.find("clear-tag"), std::string::npos);
  c.vlan_mode = VlanMode::kStandard;
  r = link_params(c, 0, "a-name-far-too-long", 1, &why);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KernelError::kInvalid);
}

TEST(KernelBackendMessages, SaParamsFromConfigUseThePrintedKeyId) {
  SaConfig sa;
  sa.an = 1;
  sa.pn = 77;
  const std::vector<std::uint8_t> k(16, 0x11);
  sa.sak = SecretBytes(ByteSpan(k.data(), k.size()));
  sa.ssci = 5;
  const SaParams p = sa_params(sa, CipherSuite::kGcmAesXpn128);
  EXPECT_TRUE(p.xpn);
  EXPECT_EQ(p.pn, 77u);
  EXPECT_EQ(p.ssci, 5u);
  const std::string id = key_id(sa.sak);
  char hex[9];
  std::snprintf(hex, sizeof hex, "%02x%02x%02x%02x", p.key_id[0], p.key_id[1], p.key_id[2], p.key_id[3]);
  EXPECT_EQ(std::string(hex), id);
  for (std::size_t i = 4; i < p.key_id.size(); ++i) EXPECT_EQ(p.key_id[i], 0);
}

TEST(KernelBackendErrors, LibnlAndErrnoCodesMapToTypedReasons) {
  EXPECT_EQ(map_nl_error(-NLE_OPNOTSUPP), KernelError::kUnsupported);
  EXPECT_EQ(map_nl_error(NLE_OPNOTSUPP), KernelError::kUnsupported);
  EXPECT_EQ(map_nl_error(-NLE_OBJ_NOTFOUND), KernelError::kUnsupported);
  EXPECT_EQ(map_nl_error(-NLE_PERM), KernelError::kPermission);
  EXPECT_EQ(map_nl_error(-NLE_NOACCESS), KernelError::kPermission);
  EXPECT_EQ(map_nl_error(-NLE_NODEV), KernelError::kNoDevice);
  EXPECT_EQ(map_nl_error(-NLE_EXIST), KernelError::kExists);
  EXPECT_EQ(map_nl_error(-NLE_INVAL), KernelError::kInvalid);
  EXPECT_EQ(map_nl_error(-NLE_RANGE), KernelError::kInvalid);
  EXPECT_EQ(map_nl_error(-NLE_BUSY), KernelError::kBusy);
  EXPECT_EQ(map_nl_error(-NLE_NOMEM), KernelError::kNetlink);
  // Kernel errnos as the macsec driver returns them.
  EXPECT_EQ(map_errno(EOPNOTSUPP), KernelError::kUnsupported);  // "Unknown device type"
  EXPECT_EQ(map_errno(EPERM), KernelError::kPermission);
  EXPECT_EQ(map_errno(ENODEV), KernelError::kNoDevice);
  EXPECT_EQ(map_errno(EEXIST), KernelError::kExists);
  EXPECT_EQ(map_errno(EINVAL), KernelError::kInvalid);
  EXPECT_EQ(map_errno(EBUSY), KernelError::kBusy);
  EXPECT_EQ(map_errno(ERANGE), KernelError::kInvalid);
}

// A GET_TXSC reply built the way drivers/net/macsec.c dump_secy() builds it:
// SecY and TX SC counters as u64, one nest per TX SA and RX SC (numbered
// from 1), SA counters as u32.
std::vector<std::uint8_t> kernel_style_dump(int ifindex) {
  nl_msg* msg = nlmsg_alloc();
  genlmsg_put(msg, 0, 1, kFamily, 0, NLM_F_MULTI, MACSEC_CMD_GET_TXSC, MACSEC_GENL_VERSION);
  nla_put_u32(msg, MACSEC_ATTR_IFINDEX, static_cast<std::uint32_t>(ifindex));
  nlattr* secy = nla_nest_start(msg, MACSEC_ATTR_SECY);
  nla_put_u8(msg, MACSEC_SECY_ATTR_ENCODING_SA, 1);
  nla_nest_end(msg, secy);
  nlattr* txs = nla_nest_start(msg, MACSEC_ATTR_TXSC_STATS);
  nla_put_u64(msg, MACSEC_TXSC_STATS_ATTR_OUT_PKTS_PROTECTED, 0);
  nla_put_u64(msg, MACSEC_TXSC_STATS_ATTR_OUT_PKTS_ENCRYPTED, 900);
  nla_put_u64(msg, MACSEC_TXSC_STATS_ATTR_OUT_OCTETS_PROTECTED, 0);
  nla_put_u64(msg, MACSEC_TXSC_STATS_ATTR_OUT_OCTETS_ENCRYPTED, 90000);
  nla_nest_end(msg, txs);
  nlattr* ss = nla_nest_start(msg, MACSEC_ATTR_SECY_STATS);
  nla_put_u64(msg, MACSEC_SECY_STATS_ATTR_IN_PKTS_NO_TAG, 3);
  nla_put_u64(msg, MACSEC_SECY_STATS_ATTR_IN_PKTS_BAD_TAG, 2);
  nla_put_u64(msg, MACSEC_SECY_STATS_ATTR_IN_PKTS_NO_SCI, 1);
  nla_put_u64(msg, MACSEC_SECY_STATS_ATTR_IN_PKTS_OVERRUN, 7);
  nla_nest_end(msg, ss);
  nlattr* txl = nla_nest_start(msg, MACSEC_ATTR_TXSA_LIST);
  for (std::uint8_t an = 0; an < 2; ++an) {
    nlattr* one = nla_nest_start(msg, an + 1);
    nla_put_u8(msg, MACSEC_SA_ATTR_AN, an);
    nla_put_u32(msg, MACSEC_SA_ATTR_PN, 100);
    nlattr* st = nla_nest_start(msg, MACSEC_SA_ATTR_STATS);
    nla_put_u32(msg, MACSEC_SA_STATS_ATTR_OUT_PKTS_PROTECTED, 0);
    nla_put_u32(msg, MACSEC_SA_STATS_ATTR_OUT_PKTS_ENCRYPTED, an == 0 ? 600 : 300);
    nla_nest_end(msg, st);
    nla_put_u8(msg, MACSEC_SA_ATTR_ACTIVE, an == 1);
    nla_nest_end(msg, one);
  }
  nla_nest_end(msg, txl);
  nlattr* rxl = nla_nest_start(msg, MACSEC_ATTR_RXSC_LIST);
  nlattr* sc = nla_nest_start(msg, 1);
  nla_put_u8(msg, MACSEC_RXSC_ATTR_ACTIVE, 1);
  const auto sci = kPeer.bytes();
  nla_put(msg, MACSEC_RXSC_ATTR_SCI, 8, sci.data());
  nlattr* scs = nla_nest_start(msg, MACSEC_RXSC_ATTR_STATS);
  nla_put_u64(msg, MACSEC_RXSC_STATS_ATTR_IN_OCTETS_DECRYPTED, 50000);
  nla_put_u64(msg, MACSEC_RXSC_STATS_ATTR_IN_PKTS_OK, 500);
  nla_put_u64(msg, MACSEC_RXSC_STATS_ATTR_IN_PKTS_LATE, 4);
  nla_put_u64(msg, MACSEC_RXSC_STATS_ATTR_IN_PKTS_NOT_VALID, 5);
  nla_put_u64(msg, MACSEC_RXSC_STATS_ATTR_IN_PKTS_NOT_USING_SA, 6);
  nla_nest_end(msg, scs);
  nlattr* sal = nla_nest_start(msg, MACSEC_RXSC_ATTR_SA_LIST);
  nlattr* rsa = nla_nest_start(msg, 1);
  nla_put_u8(msg, MACSEC_SA_ATTR_AN, 1);
  nlattr* rst = nla_nest_start(msg, MACSEC_SA_ATTR_STATS);
  nla_put_u32(msg, MACSEC_SA_STATS_ATTR_IN_PKTS_OK, 500);
  nla_put_u32(msg, MACSEC_SA_STATS_ATTR_IN_PKTS_NOT_VALID, 5);
  nla_nest_end(msg, rst);
  nla_put_u8(msg, MACSEC_SA_ATTR_ACTIVE, 1);
  nla_nest_end(msg, rsa);
  nla_nest_end(msg, sal);
  nla_nest_end(msg, sc);
  nla_nest_end(msg, rxl);
  const nlmsghdr* h = nlmsg_hdr(msg);
  std::vector<std::uint8_t> out(reinterpret_cast<const std::uint8_t*>(h),
                                reinterpret_cast<const std::uint8_t*>(h) + h->nlmsg_len);
  nlmsg_free(msg);
  return out;
}

TEST(KernelBackendStats, DumpReplyMapsToMibNamesPerScAndSa) {
  const auto dump = kernel_style_dump(kIfindex);
  auto k = parse_txsc_dump(ByteSpan(dump.data(), dump.size()));
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->ifindex, kIfindex);
  EXPECT_EQ(k->secy.InPktsNoTag, 3u);
  EXPECT_EQ(k->secy.InPktsBadTag, 2u);
  EXPECT_EQ(k->secy.InPktsNoSCI, 1u);
  EXPECT_EQ(k->in_pkts_overrun, 7u);
  EXPECT_EQ(k->tx_sc.OutPktsEncrypted, 900u);
  EXPECT_EQ(k->tx_sc.OutOctetsEncrypted, 90000u);
  ASSERT_EQ(k->tx_sas.size(), 2u);
  EXPECT_EQ(k->tx_sas[0].an, 0);
  EXPECT_FALSE(k->tx_sas[0].active);
  EXPECT_EQ(k->tx_sas[0].stats.OutPktsEncrypted, 600u);
  EXPECT_TRUE(k->tx_sas[1].active);
  EXPECT_EQ(k->tx_sas[1].stats.OutPktsEncrypted, 300u);
  ASSERT_EQ(k->rx_scs.size(), 1u);
  EXPECT_EQ(k->rx_scs[0].sci, kPeer);
  EXPECT_TRUE(k->rx_scs[0].active);
  RxScStats want;
  want.InOctetsDecrypted = 50000;
  want.InPktsOK = 500;
  want.InPktsLate = 4;
  want.InPktsNotValid = 5;
  want.InPktsNotUsingSA = 6;
  EXPECT_EQ(k->rx_scs[0].stats, want);
  ASSERT_EQ(k->rx_scs[0].sas.size(), 1u);
  EXPECT_EQ(k->rx_scs[0].sas[0].an, 1);
  EXPECT_EQ(k->rx_scs[0].sas[0].stats.InPktsOK, 500u);
  EXPECT_EQ(k->rx_scs[0].sas[0].stats.InPktsNotValid, 5u);
  // SecY-level sums filled in from the SC tables.
  EXPECT_EQ(k->secy.InPktsOK, 500u);
  EXPECT_EQ(k->secy.InPktsLate, 4u);
  EXPECT_EQ(k->secy.OutPktsEncrypted, 900u);
  const auto j = to_json(*k);
  EXPECT_EQ(j["rx_scs"][0]["sci"], "02aabbccddee0002");
  EXPECT_EQ(j["rx_scs"][0]["InPktsOK"], 500);
  EXPECT_EQ(j["tx_sc"]["sas"][1]["OutPktsEncrypted"], 300);
  EXPECT_EQ(j["secy"]["InPktsNoTag"], 3);
}

TEST(KernelBackendStats, MalformedRepliesAreRejectedWhole) {
  const auto dump = kernel_style_dump(kIfindex);
  // Every truncation: rejected (the header length no longer matches), never a crash.
  for (std::size_t n = 0; n < dump.size(); ++n) {
    auto k = parse_txsc_dump(ByteSpan(dump.data(), n));
    ASSERT_FALSE(k.ok()) << n;
    EXPECT_EQ(k.error(), KernelError::kInvalid);
  }
  // Not a GET_TXSC reply.
  auto other = dump;
  other[NLMSG_HDRLEN] = MACSEC_CMD_ADD_RXSC;
  EXPECT_EQ(parse_txsc_dump(ByteSpan(other.data(), other.size())).error(), KernelError::kInvalid);
  // Bit flips anywhere: either a consistent parse or kInvalid, never a crash.
  std::size_t rejected = 0;
  for (std::size_t i = 0; i < dump.size(); ++i) {
    for (std::uint8_t bit : {0x01, 0x10, 0x80}) {
      auto flipped = dump;
      flipped[i] ^= bit;
      auto k = parse_txsc_dump(ByteSpan(flipped.data(), flipped.size()));
      if (!k) {
        ++rejected;
        EXPECT_EQ(k.error(), KernelError::kInvalid);
      } else {
        EXPECT_LE(k->tx_sas.size(), 4u + 64u);
      }
    }
  }
  EXPECT_GT(rejected, 0u);
  // A counter of the wrong width.
  nl_msg* msg = nlmsg_alloc();
  genlmsg_put(msg, 0, 1, kFamily, 0, 0, MACSEC_CMD_GET_TXSC, MACSEC_GENL_VERSION);
  nla_put_u32(msg, MACSEC_ATTR_IFINDEX, 3);
  nlattr* txs = nla_nest_start(msg, MACSEC_ATTR_TXSC_STATS);
  nla_put_u16(msg, MACSEC_TXSC_STATS_ATTR_OUT_PKTS_ENCRYPTED, 9);
  nla_nest_end(msg, txs);
  const nlmsghdr* h = nlmsg_hdr(msg);
  std::vector<std::uint8_t> bad(reinterpret_cast<const std::uint8_t*>(h),
                                reinterpret_cast<const std::uint8_t*>(h) + h->nlmsg_len);
  nlmsg_free(msg);
  EXPECT_EQ(parse_txsc_dump(ByteSpan(bad.data(), bad.size())).error(), KernelError::kInvalid);
}

TEST(KernelBackendMessages, GetTxScIsADumpRequest) {
  auto m = build_get_txsc_dump(kFamily);
  ASSERT_TRUE(m.ok());
  const nlmsghdr* h = header(*m);
  EXPECT_EQ(h->nlmsg_type, kFamily);
  EXPECT_EQ(h->nlmsg_flags & NLM_F_DUMP, NLM_F_DUMP);
  EXPECT_EQ(static_cast<const genlmsghdr*>(nlmsg_data(const_cast<nlmsghdr*>(h)))->cmd, MACSEC_CMD_GET_TXSC);
}

// A network namespace of our own for the live tests, deleted afterwards.
class ScratchNetns {
 public:
  ScratchNetns() : name_("lsmsk" + std::to_string(::getpid())) {
    ok_ = net::run_command({"ip", "netns", "add", name_}) == 0;
  }
  ~ScratchNetns() {
    if (ok_) net::run_command({"ip", "netns", "del", name_});
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool ok_ = false;
};

TEST(KernelBackendLive, ProbeInANamespaceReportsSupportOrAClearReason) {
  std::string reason;
  if (!net::netns_available(&reason)) GTEST_SKIP() << "network namespaces unavailable: " << reason;
  ScratchNetns ns;
  ASSERT_TRUE(ns.ok());
  net::NetnsScope in(ns.name());
  ASSERT_EQ(net::run_command({"ip", "link", "set", "lo", "up"}), 0);
  std::string why;
  auto k = KernelBackend::open(&why);
  ASSERT_TRUE(k.ok()) << why;
  auto st = (*k)->probe("lo");
  if (!st) {
    // Must be the "no driver" case, explained, and nothing left behind.
    EXPECT_EQ(st.error(), KernelError::kUnsupported) << (*k)->last_error();
    EXPECT_NE((*k)->last_error().find("macsec"), std::string::npos);
    EXPECT_NE((*k)->last_error().find("Unknown device type"), std::string::npos);
    std::string links;
    net::run_command({"ip", "-o", "link", "show"}, &links);
    EXPECT_EQ(links.find("lsprobe"), std::string::npos) << links;
    GTEST_SKIP() << "kernel has no macsec driver: " << (*k)->last_error();
  }
  std::string links;
  net::run_command({"ip", "-o", "link", "show"}, &links);
  EXPECT_EQ(links.find("lsprobe"), std::string::npos) << "probe device left behind: " << links;
}

TEST(KernelBackendLive, ConfigureIsAllOrNothing) {
  std::string reason;
  if (!net::netns_available(&reason)) GTEST_SKIP() << "network namespaces unavailable: " << reason;
  ScratchNetns ns;
  ASSERT_TRUE(ns.ok());
  net::NetnsScope in(ns.name());
  ASSERT_EQ(net::run_command({"ip", "link", "add", "lsdummy0", "type", "dummy"}) == 0 ||
                net::run_command({"ip", "link", "add", "lsveth0", "type", "veth", "peer", "name", "lsveth1"}) == 0,
            true);
  const std::string parent = ::if_nametoindex("lsdummy0") != 0 ? "lsdummy0" : "lsveth0";
  std::string why;
  auto k = KernelBackend::open(&why);
  ASSERT_TRUE(k.ok()) << why;
  LinkConfig cfg;
  cfg.secy.suite = CipherSuite::kGcmAes128;
  SaConfig tx;
  tx.an = 0;
  const std::vector<std::uint8_t> key(16, 0x42);
  tx.sak = SecretBytes(ByteSpan(key.data(), key.size()));
  cfg.tx_sas.push_back(std::move(tx));
  RxScConfig rx;
  rx.sci = kPeer;
  SaConfig rsa;
  rsa.an = 0;
  rsa.sak = SecretBytes(ByteSpan(key.data(), key.size()));
  rx.sas.push_back(std::move(rsa));
  cfg.rx_scs.push_back(std::move(rx));
  auto idx = (*k)->configure(cfg, kSci, parent, "lsmacsec0");
  if (!idx) {
    EXPECT_EQ(::if_nametoindex("lsmacsec0"), 0u) << "a failed configure left the device behind";
    if (idx.error() == KernelError::kUnsupported) {
      EXPECT_NE((*k)->last_error().find("--backend user"), std::string::npos);
      GTEST_SKIP() << "kernel has no macsec driver: " << (*k)->last_error();
    }
    FAIL() << to_string(idx.error()) << ": " << (*k)->last_error();
  }
  EXPECT_EQ(static_cast<int>(::if_nametoindex("lsmacsec0")), *idx);
  std::string out;
  net::run_command({"ip", "macsec", "show", "lsmacsec0"}, &out);
  EXPECT_NE(out.find("GCM-AES-128"), std::string::npos) << out;
  EXPECT_TRUE((*k)->set_encoding_sa(*idx, 0).ok()) << (*k)->last_error();
  auto stats = (*k)->read_stats(*idx);
  ASSERT_TRUE(stats.ok()) << (*k)->last_error();
  ASSERT_EQ(stats->rx_scs.size(), 1u);
  EXPECT_EQ(stats->rx_scs[0].sci, kPeer);
  EXPECT_EQ(stats->tx_sas.size(), 1u);
  EXPECT_TRUE((*k)->delete_link(*idx).ok()) << (*k)->last_error();
  EXPECT_EQ(::if_nametoindex("lsmacsec0"), 0u);
}

}  // namespace
}  // namespace layersec::macsec::kernel
