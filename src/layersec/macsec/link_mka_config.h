// The MKA settings of a MACsec link (`layersec macsec up --mka FILE`): the
// pre-shared CAK and its name, our key server priority, the cipher suite
// the key server distributes SAKs for, the SecY settings MKA cannot change,
// and the MKA timers. Start-up code: errors are LinkConfigError whose
// message begins with the JSON pointer of the offending value
// ("/timers/hello_ms: must be in 100..60000").
//
//   {
//     "cak_file": "cak.key",          // 0600 hex key file, 16 or 32 octets (base/keyfile),
//                                     // relative to this file's directory
//     "ckn": "6162...3435",           // CAK Name, 1..32 octets of hex
//     "priority": 16,                 // key server priority 0..255, lower wins, 255 never
//     "cipher_suite": "gcm-aes-128",  // gcm-aes-256, gcm-aes-xpn-128, gcm-aes-xpn-256
//     "confidentiality_offset": 0,    // 0, 30 or 50 (what the SecY does and a key server distributes)
//     "port": 1,                      // SCI port (the SCI is the link MAC || port)
//     "mac": "02:00:00:00:00:01",     // optional MACsec interface MAC; default the lower's
//     "replay_window": 0,             // receive SAs' replay window
//     "lower_link": "isolate",        // or "sysctl-only", "unchanged" (lower_guard.h)
//     "mka_version": 3,               // 1..3 in our MKPDUs
//     "max_peers": 64,                // live + potential peers, 1..1024
//     "pn_rekey_threshold": 0,        // key server: rekey at this transmit PN (0: 3/4 of the PN space)
//     "timers": {                     // every one optional (802.1X-2020 defaults)
//       "hello_ms": 2000, "bounded_hello_ms": 500, "bounded_hellos": 3, "life_ms": 6000,
//       "transmit_delay_ms": 6000, "retire_ms": 3000, "retire_grace_ms": 250,
//       "rekey_interval_ms": 0        // key server: SAK lifetime (0: no timer rekey)
//     }
//   }
//
// Rules beyond the types: life_ms > hello_ms; rekey_interval_ms 0 or at least
// 1000; pn_rekey_threshold 0 or kMinPnRekeyThreshold..the suite's last PN; the CAK file is read through base/keyfile (0600/0400, no symlink,
// owner and directories checked) and must hold 16 or 32 octets; nothing of
// the CAK appears in any message (its fingerprint does, for comparison).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/secret.h"
#include "layersec/macsec/link_config.h"
#include "layersec/mka/participant.h"
#include "layersec/net/frame.h"

namespace layersec::macsec {

// Smallest non-zero "pn_rekey_threshold".
inline constexpr std::uint64_t kMinPnRekeyThreshold = 1000;

struct LinkMkaConfig {
  std::string cak_file;  // as resolved (for messages)
  SecretBytes cak;
  // Participant settings (sci is filled in once the link MAC is known).
  mka::ParticipantConfig participant;
  std::uint16_t port = 1;
  std::optional<net::MacAddress> mac;
  std::uint8_t confidentiality_offset = 0;
  std::uint32_t replay_window = 0;
  LowerLinkPolicy lower_link = LowerLinkPolicy::kIsolate;
};

// Parses a configuration. `base_dir` resolves a relative cak_file; an empty
// `base_dir` refuses to read any file (the fuzz target: "/cak_file: key
// files are not read here").
LinkMkaConfig parse_link_mka_config(const nlohmann::json& j, const std::filesystem::path& base_dir);
// JSON text (a parse error is a LinkConfigError naming `origin`).
LinkMkaConfig parse_link_mka_config_text(std::string_view text, const std::filesystem::path& base_dir,
                                         const std::string& origin = "mka configuration");
// Reads a regular file (bounded) and parses it; messages begin with the path.
LinkMkaConfig load_link_mka_config(const std::filesystem::path& path);

// The link configuration MKA runs on: the SecY settings (suite, offset,
// replay window, SCI port, MAC), no static SA, no PN state file (every SAK
// is fresh), the lower-link policy.
LinkConfig link_config_for_mka(const LinkMkaConfig& c);

// One line for start-up output: suite, CKN, priority, timers, the CAK's
// fingerprint (never the CAK).
std::string describe(const LinkMkaConfig& c);

}  // namespace layersec::macsec
