// Kernel MACsec back end: hands the SecY of a link configuration to the
// Linux macsec driver instead of running it in user space, through netlink
// with libnl (the calls `ip link add ... type macsec` and `ip macsec add`
// make):
//
//   RTM_NEWLINK  (rtnetlink, NLM_F_CREATE|NLM_F_EXCL)  the macsec device on a
//                parent: IFLA_LINKINFO { IFLA_INFO_KIND "macsec",
//                IFLA_INFO_DATA { IFLA_MACSEC_SCI, CIPHER_SUITE, ICV_LEN,
//                ENCRYPT, PROTECT, INC_SCI, ES, SCB, REPLAY_PROTECT, WINDOW,
//                VALIDATION, ENCODING_SA } }
//   MACSEC_CMD_ADD_TXSA / ADD_RXSC / ADD_RXSA / DEL_* (generic netlink family
//                "macsec", version MACSEC_GENL_VERSION): MACSEC_ATTR_IFINDEX,
//                MACSEC_ATTR_RXSC_CONFIG { SCI, ACTIVE },
//                MACSEC_ATTR_SA_CONFIG { AN, PN, KEY, KEYID, ACTIVE, SSCI, SALT }
//   RTM_NEWLINK  (no CREATE) with IFLA_MACSEC_ENCODING_SA: switch the encoding SA
//   RTM_DELLINK  remove the device (its SAs go with it)
//
// Encodings follow the kernel's uapi (<linux/if_macsec.h>, <linux/if_link.h>)
// and drivers/net/macsec.c: SCIs are 64-bit in network byte order (sci_t),
// the SSCI 32-bit in network byte order (ssci_t), the PN a u32 (32-bit PN
// suites) or u64 (XPN; the kernel refuses any other length), the key id
// exactly MACSEC_KEYID_LEN (16) octets, the salt MACSEC_SALT_LEN (12).
//
// Support: a kernel without the driver refuses the link type ("Error:
// Unknown device type." from ip; EOPNOTSUPP, NLE_OPNOTSUPP in libnl), and the
// "macsec" generic netlink family is not registered. Both are reported as
// KernelError::kUnsupported with a message that says so; nothing is left
// behind. Everything here runs in the calling thread's network namespace and
// needs CAP_NET_ADMIN. Configuration-time code: it allocates and may block
// on the netlink socket; it is never on a frame path.
//
// Keys: the SAK is copied into the netlink message (a libnl buffer that is
// wiped before it is freed) and into the kernel; nothing here logs or keeps
// it. The key id sent is the 4-octet id layersec prints (key_id()), padded
// with zeros to 16 octets.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/secy.h"

struct nl_msg;
struct nl_sock;

namespace layersec::macsec::kernel {

enum class KernelError : std::uint8_t {
  kUnsupported,  // no macsec driver / generic netlink family (or the operation is not supported)
  kPermission,   // needs CAP_NET_ADMIN
  kNoDevice,     // parent or macsec interface does not exist
  kExists,       // interface name, SC or SA already exists
  kInvalid,      // the kernel refused an attribute (length, range, combination)
  kBusy,         // e.g. removing an SA in use
  kNetlink,      // socket / message failure (connect, send, no memory)
};
std::string_view to_string(KernelError e);

// Maps a libnl error code (NLE_*, as returned negated by libnl calls; either
// sign accepted) to a KernelError.
KernelError map_nl_error(int nl_error);
// Maps a kernel errno (EOPNOTSUPP, EPERM, ...) to a KernelError.
KernelError map_errno(int err);

// The attributes of the macsec device (IFLA_MACSEC_*), from a SecYConfig.
struct LinkParams {
  std::string name;            // new interface, e.g. "macsec0"
  int parent_ifindex = 0;      // lower interface
  Sci sci{};
  CipherSuite suite = CipherSuite::kGcmAes128;
  std::uint8_t icv_len = kIcvSize;
  bool encrypt = true;
  bool protect = true;
  bool include_sci = true;
  bool end_station = false;
  bool scb = false;
  bool replay_protect = true;
  std::uint32_t window = 0;
  ValidateFrames validate = ValidateFrames::kStrict;
  std::uint8_t encoding_sa = 0;
};
// The device parameters for `config` (offset 30/50 and clear-tag mode have
// no kernel equivalent: kUnsupported with the reason in `why`).
Result<LinkParams, KernelError> link_params(const SecYConfig& config, std::uint8_t encoding_an,
                                            const std::string& name, int parent_ifindex, std::string* why);

// One SA as the kernel takes it.
struct SaParams {
  std::uint8_t an = 0;
  std::uint64_t pn = 1;   // next PN (transmit) / lowest PN (receive)
  ByteSpan key;           // SAK (not copied by this struct)
  std::array<std::uint8_t, 16> key_id{};
  bool active = true;
  bool xpn = false;
  Ssci ssci = 0;          // XPN only
  Salt salt{};            // XPN only
};
// SaParams for an SA of the configuration (key id = the printed key id).
SaParams sa_params(const SaConfig& sa, CipherSuite suite);

// An owned libnl message; the buffer is zeroed before it is freed (it may
// hold a SAK).
class NlMessage {
 public:
  explicit NlMessage(nl_msg* msg) : msg_(msg) {}
  NlMessage(NlMessage&& o) noexcept : msg_(o.msg_) { o.msg_ = nullptr; }
  NlMessage& operator=(NlMessage&& o) noexcept;
  NlMessage(const NlMessage&) = delete;
  NlMessage& operator=(const NlMessage&) = delete;
  ~NlMessage();
  [[nodiscard]] nl_msg* get() const { return msg_; }
  // The whole netlink message (header, family header, attributes).
  [[nodiscard]] ByteSpan bytes() const;

 private:
  nl_msg* msg_;
};

// Message builders (no I/O; `family` is the resolved generic netlink id).
// kNetlink when libnl runs out of message space or memory.
Result<NlMessage, KernelError> build_new_link(const LinkParams& p);
Result<NlMessage, KernelError> build_set_encoding_sa(int ifindex, std::uint8_t an);
Result<NlMessage, KernelError> build_del_link(int ifindex);
Result<NlMessage, KernelError> build_add_txsa(int family, int ifindex, const SaParams& sa);
Result<NlMessage, KernelError> build_del_txsa(int family, int ifindex, std::uint8_t an);
Result<NlMessage, KernelError> build_add_rxsc(int family, int ifindex, Sci sci);
Result<NlMessage, KernelError> build_del_rxsc(int family, int ifindex, Sci sci);
Result<NlMessage, KernelError> build_add_rxsa(int family, int ifindex, Sci sci, const SaParams& sa);
Result<NlMessage, KernelError> build_del_rxsa(int family, int ifindex, Sci sci, std::uint8_t an);
// MACSEC_CMD_GET_TXSC with NLM_F_DUMP: the driver answers with one message
// per macsec device of the namespace (configuration and counters).
Result<NlMessage, KernelError> build_get_txsc_dump(int family);

// The driver's counters of one device, under the 802.1AE MIB names. The
// driver keeps, per SecY: OutPktsUntagged, InPktsUntagged, OutPktsTooLong,
// InPktsNoTag, InPktsBadTag, InPktsUnknownSCI, InPktsNoSCI (and InPktsOverrun,
// which has no MIB name); per transmit SC/SA and receive SC/SA the same
// tables as the user-space SecY. The SecY-level In*/Out* sums that the
// driver does not keep are filled in from the per-SC tables.
struct KernelStats {
  int ifindex = 0;
  SecYStats secy;
  std::uint64_t in_pkts_overrun = 0;
  TxScStats tx_sc;
  struct TxSa {
    std::uint8_t an = 0;
    bool active = false;
    TxSaStats stats;
  };
  std::vector<TxSa> tx_sas;
  struct RxSa {
    std::uint8_t an = 0;
    bool active = false;
    RxSaStats stats;
  };
  struct RxSc {
    Sci sci{};
    bool active = false;
    RxScStats stats;
    std::vector<RxSa> sas;
  };
  std::vector<RxSc> rx_scs;
};
// Parses one MACSEC_CMD_GET_TXSC reply (a whole netlink message, as the
// kernel's dump_secy() builds it). Counters may be 4 or 8 octets (the
// driver sends SA counters as u32, the others as u64). kInvalid for a
// message that is truncated, not a GET_TXSC reply, or has malformed nests;
// nothing is returned half-parsed.
Result<KernelStats, KernelError> parse_txsc_dump(ByteSpan message);
// {"ifindex", "secy": {...}, "InPktsOverrun", "tx_sc": {..., "sas": [...]},
//  "rx_scs": [...]} in the shape of per_sc_json() (link.h).
nlohmann::json to_json(const KernelStats& s);

// A connection to the kernel (rtnetlink + generic netlink sockets).
class KernelBackend {
 public:
  // Opens both sockets in the calling thread's network namespace.
  static Result<std::unique_ptr<KernelBackend>, KernelError> open(std::string* why);
  ~KernelBackend();
  KernelBackend(const KernelBackend&) = delete;
  KernelBackend& operator=(const KernelBackend&) = delete;

  // Whether this kernel can create macsec devices: the generic netlink family
  // is registered, or (the module may load on first use) a throw-away macsec
  // device on `parent` can be created and is deleted again. Leaves nothing
  // behind. kUnsupported + message when the driver is missing.
  Status<KernelError> probe(const std::string& parent);

  // Creates the device `name` on `parent` for `config` (SCI `sci`), installs
  // every transmit SA, receive SC and receive SA, and selects the encoding
  // SA. All or nothing: on any failure the device is deleted again. Returns
  // the new interface index.
  Result<int, KernelError> configure(const LinkConfig& config, Sci sci, const std::string& parent,
                                     const std::string& name);
  // Switches the encoding SA of device `ifindex`.
  Status<KernelError> set_encoding_sa(int ifindex, std::uint8_t an);
  // Deletes device `ifindex` (with its SCs and SAs).
  Status<KernelError> delete_link(int ifindex);
  // Reads the driver's counters of device `ifindex` (GET_TXSC dump).
  Result<KernelStats, KernelError> read_stats(int ifindex);

  // What the last failing call did and why ("ADD_TXSA AN 1: Invalid input data or parameter").
  [[nodiscard]] const std::string& last_error() const { return last_error_; }

 private:
  KernelBackend() = default;
  Status<KernelError> send_route(const NlMessage& msg, const std::string& step);
  Status<KernelError> send_genl(const NlMessage& msg, const std::string& step);
  Status<KernelError> resolve_family();
  Status<KernelError> fail(KernelError e, std::string message);
  Result<int, KernelError> ifindex_of(const std::string& name);

  nl_sock* route_ = nullptr;
  nl_sock* genl_ = nullptr;
  int family_ = -1;
  std::string last_error_;
};

}  // namespace layersec::macsec::kernel
