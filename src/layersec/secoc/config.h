// SecOC engine configuration, with the AUTOSAR parameter names, and its JSON
// form. Loading errors are start-up errors: ConfigError carries the JSON path
// of the offending value ("$.rxPdus[2].authInfoTxLength: ...").
//
// JSON (all lengths in bits unless the name says bytes; see docs/secoc.md):
//   {
//     "senderId": 1, "tripCounterLength": 16, "resetCounterLength": 16,
//     "keyRolloverWindowMs": 60000,
//     "keyGroups": [ {"name": "g", "algorithm": "cmac-aes256"} ],
//     "syncTx": {"dataId": 65000, "keyGroup": "g", "authInfoTxLength": 64, "periodMs": 1000},
//     "syncRx": [ {"id": 0, "dataId": 65000, "keyGroup": "g", "authInfoTxLength": 64} ],
//     "txPdus": [ {"id": 0, "profile": "vendor", "dataId": 256, "keyGroup": "g"} ],
//     "rxPdus": [ {"id": 0, "profile": "vendor", "dataId": 256, "keyGroup": "g",
//                  "syncChannel": 0, "freshnessMode": "strict", "window": 32,
//                  "authenticationVerifyAttempts": 1, "senderId": 1} ]
//   }
// syncRx entries also take "periodMs" (the sender's sync period, default
// 1000) and "maxAgeMs" (the time bound, default 1000; 0 = no time bound,
// which lets a held-back PDU through and is said so by describe()).
// Timestamp freshness: "freshness": "timestamp" on a tx or rx PDU (default
// "counter"); rx PDUs then take "maxAgeMs" (default 1000, >= 1) and
// "maxSources" (distinct authenticated senders tracked, default 1; the
// SOME/IP-SD PDU, shared by every node, needs one per peer) instead of a
// syncChannel. Timestamp PDUs default to a 64-bit FV sent in full.
// Per-PDU overrides: algorithm, authInfoTxLength, freshnessValueLength,
// freshnessValueTxLength, resetFlagLength, authPduHeaderLength,
// securedAreaOffset, securedAreaLength. Profile "aead-gcm" (non-standard)
// must be named explicitly; no default ever selects it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "layersec/base/time.h"
#include "layersec/secoc/counter_reconstruction.h"
#include "layersec/secoc/profile.h"

namespace layersec::secoc {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& path, const std::string& what)
      : std::runtime_error(path + ": " + what), path_(path) {}
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline constexpr std::uint32_t kMaxPduId = 65535;
inline constexpr std::uint32_t kDefaultWindow = 32;

struct KeyGroupConfig {
  std::string name;
  AuthAlgorithm algorithm = AuthAlgorithm::kCmacAes256;
};

struct TxPduConfig {
  std::uint32_t id = 0;
  std::uint16_t data_id = 0;
  PduProfile profile;  // profile.freshness.timestamp: timestamp freshness
  std::uint32_t key_group = 0;
};

// Default time bound: PDUs (timestamp freshness) or reset cycles (counter
// freshness) older than this are stale.
inline constexpr Duration kDefaultMaxAge = Duration::milliseconds(1000);
// Upper bound of RxPduConfig::max_sources.
inline constexpr std::uint32_t kMaxSources = 1024;

// Upper bound of authenticationVerifyAttempts.
inline constexpr std::uint8_t kMaxVerifyAttempts = 8;

struct RxPduConfig {
  std::uint32_t id = 0;
  std::uint16_t data_id = 0;
  PduProfile profile;
  std::uint32_t key_group = 0;
  FreshnessMode mode = FreshnessMode::kStrict;
  std::uint32_t window = kDefaultWindow;  // W
  // authenticationVerifyAttempts: candidate FVs tried, 1..kMaxVerifyAttempts
  // (1 = Algorithm 1 only; N adds the next N-1 reset cycles, for a receiver
  // that lost up to N-1 sync messages). Each extra candidate is one more
  // forgery attempt per received PDU.
  std::uint8_t verify_attempts = 1;
  std::uint32_t sync_channel = 0;
  bool has_sync_channel = false;
  std::uint16_t sender_id = 0;  // AEAD nonce of the sending node
  bool has_sender_id = false;   // "senderId" given (required for aead-gcm)
  // Timestamp freshness only: the maximum age (and clock skew) accepted, and
  // how many authenticated senders get their own replay state.
  Duration max_age = kDefaultMaxAge;
  std::uint32_t max_sources = 1;
};

struct SyncTxConfig {
  bool enabled = false;
  std::uint16_t data_id = 0;
  std::uint32_t key_group = 0;
  std::uint16_t auth_info_tx_length = 64;
  Duration period = Duration::seconds(1);  // reset cycle = sync period
};

struct SyncRxConfig {
  std::uint32_t id = 0;
  std::uint16_t data_id = 0;
  std::uint32_t key_group = 0;
  std::uint16_t auth_info_tx_length = 64;
  // Time bound of counter freshness: a sync message is accepted only if its
  // timestamp is within max_age of the receiver's clock, and a PDU of the
  // reset cycle it starts only until timestamp + period + max_age (plus one
  // period per reset cycle skipped). Duration::zero() = no time bound.
  Duration period = Duration::seconds(1);
  Duration max_age = kDefaultMaxAge;
};

struct EngineConfig {
  std::uint16_t sender_id = 0;
  bool has_sender_id = false;  // "senderId" given (required when a tx PDU is aead-gcm)
  std::uint8_t trip_bits = kDefaultTripBits;
  std::uint8_t reset_bits = kDefaultResetBits;
  Duration rollover_window = Duration::seconds(60);
  std::vector<KeyGroupConfig> key_groups;
  SyncTxConfig sync_tx;
  std::vector<SyncRxConfig> sync_rx;
  std::vector<TxPduConfig> tx_pdus;
  std::vector<RxPduConfig> rx_pdus;

  // Throws ConfigError (path "$...") on the first inconsistency.
  void validate() const;
  // Multi-line summary: every PDU's profile with its forgery probability.
  [[nodiscard]] std::string describe() const;
};

// Builds a profile by name ("profile1", "profile2", "profile3", "vendor",
// "custom", "aead-gcm") with the engine's trip/reset widths. Throws
// ConfigError with `path` on an unknown name.
PduProfile profile_by_name(const std::string& name, std::uint8_t trip_bits,
                           std::uint8_t reset_bits, const std::string& path);
// Rebuilds a layout with the given totals: msg = FVlen - trip - reset - flag.
FreshnessLayout make_layout(unsigned fv_length, unsigned fv_tx_length, unsigned reset_flag,
                            std::uint8_t trip_bits, std::uint8_t reset_bits,
                            const std::string& path);

EngineConfig config_from_json(const nlohmann::json& j);
// Reads and parses a JSON file (base/file.h checks). I/O adapter: defined in
// config_file.cc (library secoc_io).
EngineConfig load_config_file(const std::string& path);

}  // namespace layersec::secoc
