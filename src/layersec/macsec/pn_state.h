// Packet numbers that must survive a restart (sans-I/O interface).
//
// 802.1AE-2018 10.5.2 forbids a PN to repeat within an SA: under GCM the IV
// is SCI || PN (XPN: (SSCI || PN) XOR salt), so a repeated PN under the same
// SAK repeats the nonce and leaks the XOR of two plaintexts and the GHASH key.
// With MKA every run has fresh SAKs; with static SAKs (`layersec macsec up`
// with key files) the SA outlives the process, so its PN state must too:
//
//   transmit SA: the highest PN that may have been used,
//   receive SA:  the highest PN that may have been accepted,
//
// each persisted before the PN is used or accepted, in blocks (a save every
// `reserve_block` PNs, like the SecOC trip counter's "persist before use").
// Invariant kept by the SecY: every PN used (accepted) under the key is
// <= the persisted value. A restart resumes at persisted + 1 on both sides,
// so a restarted transmitter never reuses a PN and a restarted receiver
// never accepts a frame it could have accepted before (docs/macsec.md,
// "PN state across restarts", has the receive-side reasoning). A clean
// shutdown writes the exact values so that no PN space is lost.
//
// Records are keyed by direction, SCI (ours for transmit, the peer's for
// receive) and a fingerprint of the key material (never the key itself); the
// AN is stored with them for people but is not part of the key: the nonce
// does not contain the AN, so a key moved to another AN keeps its PN state.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "layersec/base/result.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/sectag.h"

namespace layersec::macsec {

enum class PnDirection : std::uint8_t { kTransmit, kReceive };
std::string_view to_string(PnDirection d);  // "tx", "rx"

inline constexpr std::size_t kPnFingerprintSize = 16;
using PnFingerprint = std::array<std::uint8_t, kPnFingerprintSize>;

// First 16 octets of SHA-256("layersec-macsec-pn-state-v1" || suite id ||
// SAK [|| SSCI || salt for XPN]): what the IV space of an SA depends on
// besides the SCI. Domain-separated, so it is not the printed key id.
// Throws std::runtime_error only if SHA-256 itself fails (start-up path).
PnFingerprint pn_fingerprint(CipherSuite suite, const SaKeys& keys);

struct PnKey {
  PnDirection direction = PnDirection::kTransmit;
  Sci sci{};
  PnFingerprint fingerprint{};
  friend auto operator<=>(const PnKey&, const PnKey&) = default;
};

enum class PnStoreError : std::uint8_t {
  kIo,       // the state could not be written durably (or read)
  kCorrupt,  // the stored state does not parse: never guess a PN
};
std::string_view to_string(PnStoreError e);

// Where a SecY keeps its PN state. The SecY calls load() when an SA is
// installed and save() on the frame path once per reserve block (and on a
// clean shutdown); save() must be durable when it returns success. An
// implementation may do I/O; the SecY does none itself.
class PnStore {
 public:
  virtual ~PnStore() = default;
  // The persisted highest PN of `key`; nullopt when there is no record.
  [[nodiscard]] virtual Result<std::optional<std::uint64_t>, PnStoreError> load(const PnKey& key) = 0;
  // Records `highest` (the AN is informational). Durable on success.
  [[nodiscard]] virtual Status<PnStoreError> save(const PnKey& key, std::uint8_t an, std::uint64_t highest) = 0;
};

// In-memory store for tests and simulations: a "crash" is dropping the
// SecY and building a new one on the same store.
class MemoryPnStore final : public PnStore {
 public:
  Result<std::optional<std::uint64_t>, PnStoreError> load(const PnKey& key) override;
  Status<PnStoreError> save(const PnKey& key, std::uint8_t an, std::uint64_t highest) override;

  [[nodiscard]] std::size_t saves() const { return saves_; }
  [[nodiscard]] std::size_t size() const { return records_.size(); }
  void set_fail_saves(bool fail) { fail_saves_ = fail; }
  void clear() { records_.clear(); }

 private:
  std::map<PnKey, std::uint64_t> records_;
  std::size_t saves_ = 0;
  bool fail_saves_ = false;
};

// How install_tx_sa / install_rx_sa treat an SA without a PN record when a
// store is attached.
enum class PnStart : std::uint8_t {
  kResume,  // a record is required (refused with SaError::kPnStateMissing otherwise)
  kNewKey,  // the operator vouches that the key was never used: start at the configured PN
};

}  // namespace layersec::macsec
