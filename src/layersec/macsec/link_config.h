// Configuration of a MACsec link (`layersec macsec up --config FILE`): the
// SecY settings (802.1AE-2018 10.7), the transmit SC with its SAs and the
// receive SCs with theirs, keyed by static SAKs read from key files (like
// `ip macsec add ... key`). Start-up code: errors are exceptions
// (LinkConfigError) whose message begins with the JSON pointer of the
// offending value, e.g. "/tx/sas/0/key_file: group or other permission bits
// set".
//
// File format (JSON; unknown members are errors, so typos do not pass):
//
//   {
//     "cipher_suite": "GCM-AES-128",       // or GCM-AES-256, GCM-AES-XPN-128/256
//     "sci": "020000007700 0001",          // optional, 16 hex digits; default: link MAC || port
//     "port": 1,                           // port of the SCI when "sci" is absent
//     "mac": "02:00:00:77:00:01",          // optional TAP MAC; default: the lower interface's
//     "confidentiality": true,             // false: integrity only (E=C=0)
//     "confidentiality_offset": 0,         // 0, 30 or 50
//     "include_sci": true, "use_es": false,
//     "validate_frames": "strict",         // "disabled" | "check" | "strict"
//     "replay_protect": true, "replay_window": 0,
//     "vlan_mode": "standard",             // or "clear-tag"
//     "clear_tags_in_icv": false,
//     "tx": { "encoding_an": 0,
//             "sas": [ { "an": 0, "pn": 1, "key_file": "tx.key",
//                        "ssci": "00000001", "salt": "<24 hex digits>" } ] },
//     "rx_retire_delay_ms": 1000, "rx_retire_timeout_ms": 60000,   // SA switching
//     "rx": [ { "sci": "<16 hex digits>",
//               "sas": [ { "an": 0, "pn": 1, "key_file": "rx.key", "ssci": ..., "salt": ...,
//                          "new_key": false } ] } ],
//     "pn_state_file": "a.json.pn-state",  // default: "<config file>.pn-state"
//     "pn_reserve_block": 65536,           // PNs reserved per state file write
//     "lower_link": "isolate"              // or "sysctl-only", "unchanged" (lower_guard.h)
//   }
//
// Rules beyond the types: "port" and the port part of every SCI are 1..65535;
// "max_frame_size" is 0 or kMinMaxFrameSize..65535; a receive SC's SCI is not
// our own (check_own_sci, once the SCI is resolved); "pn" is 1..the suite's
// last PN; "pn_reserve_block" 1..2^30; key files have the suite's SAK size.
//
// Key files are read with base/keyfile (mode 0600 or 0400 required, no
// symlinks, owner checked), as hex text (keyfile's one encoding), and must
// have the suite's SAK size.
// Relative key paths are relative to the configuration file's directory.
// "ssci" and "salt" are required for the XPN suites and refused otherwise.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/secret.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/frame.h"

namespace layersec::macsec {

class LinkConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SaConfig {
  std::uint8_t an = 0;
  std::uint64_t pn = 1;  // next PN (transmit) or lowest acceptable PN (receive)
  std::string key_file;  // as written in the file (for messages)
  SecretBytes sak;
  Ssci ssci = 0;
  Salt salt{};
  std::string pointer;   // JSON pointer of this SA, for messages
  // "new_key": the operator vouches that this key was never used, so a
  // missing PN state record is created instead of refused (pn_state.h).
  bool new_key = false;
  [[nodiscard]] SaKeys keys() const { return SaKeys{sak.span(), ssci, salt}; }
};

struct RxScConfig {
  Sci sci;
  std::vector<SaConfig> sas;
  std::string pointer;
};

// "lower_link": what `layersec macsec up` does to the lower interface so
// that it carries nothing but MACsec (lower_guard.h).
enum class LowerLinkPolicy : std::uint8_t {
  kIsolate,     // sysctls + an nftables netdev filter dropping every non-MACsec frame (default)
  kSysctlOnly,  // sysctls only (kernels without nftables netdev hooks)
  kUnchanged,   // nothing: plain traffic on the lower link reaches the host (warned)
};

// Smallest non-zero "max_frame_size": a 68-octet IPv4 packet (the minimum
// MTU) + 14 octets of Ethernet header + 32 of SecTAG with SCI and ICV.
inline constexpr std::size_t kMinMaxFrameSize = 68 + 14 + 32;
// Largest "pn_reserve_block".
inline constexpr std::uint64_t kMaxPnReserveBlock = std::uint64_t{1} << 30;

struct LinkConfig {
  // SecY settings; secy.sci is filled in by resolve_sci() when `sci` is absent.
  SecYConfig secy;
  std::optional<Sci> sci;
  std::uint16_t port = 1;
  std::optional<net::MacAddress> mac;
  std::uint8_t encoding_an = 0;
  std::vector<SaConfig> tx_sas;
  std::vector<RxScConfig> rx_scs;
  // SA switching at run time (sa_rotation.h): a receive SA dropped from the
  // configuration stays valid until a newer SA of its SC has received a
  // verified frame and this much time has passed since ...
  std::uint32_t rx_retire_delay_ms = 1000;
  // ... or, at the latest, this long after it was dropped (0: no deadline,
  // wait for frames on the newer SA).
  std::uint32_t rx_retire_timeout_ms = 60000;
  // PN persistence (pn_state.h, pn_state_file.h): the state file (relative
  // paths against the configuration's directory; load_link_config defaults
  // it to "<config file>.pn-state") and the PNs reserved per save.
  std::string pn_state_file;
  std::uint64_t pn_reserve_block = 65536;
  LowerLinkPolicy lower_link = LowerLinkPolicy::kIsolate;
};

// Parses a configuration; relative key files are resolved against `base_dir`.
LinkConfig parse_link_config(const nlohmann::json& j, const std::filesystem::path& base_dir);
// Reads and parses a configuration file (the file itself needs no special mode).
LinkConfig load_link_config(const std::filesystem::path& path);
// The text of a configuration file (this one, --tsn's, --ptp's): a regular
// file, read without blocking (a FIFO swapped in after the CLI's check cannot
// hang the start) and at most max_bytes; LinkConfigError with the reason.
std::string read_config_text(const std::filesystem::path& path, std::size_t max_bytes);

// The transmit SCI: the configured one, else `link_mac` || port (9.9).
Sci resolve_sci(const LinkConfig& config, const net::MacAddress& link_mac);

// Refuses (LinkConfigError, "/rx/N/sci: ...") a receive SC whose SCI is
// `own`, the SecY's transmit SCI.
void check_own_sci(const LinkConfig& config, Sci own);

// Builds the SecY with every SA installed and the encoding SA selected.
// `link_mac` is the MAC the protected frames carry as source (for the SCI
// when none is configured). With `store` the SAs resume from their PN
// records (SecY::set_pn_store, config.pn_reserve_block); a key without a
// record is refused unless `all_keys_new` or its SA says "new_key". Throws
// LinkConfigError naming the JSON path.
SecY make_secy(const LinkConfig& config, const net::MacAddress& link_mac, PnStore* store = nullptr,
               bool all_keys_new = false);

// The SaError of an SA install as a message (PN state errors name the state
// file and the key id).
std::string sa_error_text(SaError e, const SaConfig& sa, const LinkConfig& config);
// 16 lower-case hex digits.
std::string sci_text(Sci sci);

// "abcd1234": the first 4 octets of SHA-256 of a key, never the key itself.
std::string key_id(const SecretBytes& key);

}  // namespace layersec::macsec
