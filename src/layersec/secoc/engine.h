// The SecOC engine: protect and verify Secured I-PDUs for a configured set of
// PDUs, manage per-PDU freshness, sync messages, restarts and keys.
//
// Sans-I/O: no sockets, threads or clocks. Time enters through poll(now) and
// install_key(..., now); persistence through the StateStore interface.
//
// Hot path (protect / verify): a dense table indexed by PDU id, contexts
// built at key installation, caller-owned buffers; no allocation, string
// lookup, logging or context creation per message.
//
// Freshness (per PDU, FV = TripCnt | ResetCnt | MsgCnt [| ResetFlag]):
//   * Sender: TripCnt is read from the store, incremented and persisted by
//     start() before any PDU is protected (so a crash never causes FV reuse);
//     ResetCnt starts at 1 and each periodic sync message starts a new reset
//     cycle (ResetCnt+1, every MsgCnt back to 0); MsgCnt is incremented
//     before use (the first PDU of a cycle carries MsgCnt 1). A MsgCnt at its
//     maximum makes protect() fail with kFreshnessExhausted until the next
//     reset cycle; an exhausted ResetCnt moves to TripCnt+1 (persisted); an
//     exhausted TripCnt fails every protect(): the key must be replaced.
//   * Receiver: per PDU the accepted (trip, reset) epoch and the message
//     counter state (Algorithm 1 local counter, or a ReplayWindow). A valid
//     sync message with a newer (trip, reset) rebases every PDU of its
//     channel to MsgCnt 0: this is how a receiver that fell more than W
//     behind recovers. State changes only after the MAC has verified.
//
// Verification tries candidate FVs in order, up to authenticationVerifyAttempts:
//   1. the Algorithm-1 / bitmap candidate in the current reset cycle;
//   2..N. (attempts >= 2) the first W counters of each of the next N-1
//      reset cycles, for a receiver whose sync messages were lost;
//   last: a late PDU of the previous reset cycle (reordered behind the first
//      PDU or the sync of the next one), while the current cycle has accepted
//      fewer than W PDUs and the previous cycle is within its time bound.
// Each candidate is tried with the current key, then with the previous key
// while a rollover window keeps it live.
//
// Time bound (counter freshness): every sync message carries the sender's
// synchronised-clock timestamp inside its MAC. A receiver accepts a sync only
// within maxAge of its own clock, and a PDU of a reset cycle only until
// cycle start + period + maxAge (one more period per reset cycle skipped), so
// traffic held back and released later is stale (Rejection::kStale).
//
// Timestamp freshness (FreshnessLayout::timestamp): the FV is the sender's
// clock in microseconds; the receiver reconstructs it nearest its own clock,
// accepts it within maxAge (either side, so maxAge also bounds clock skew),
// never at or below the highest accepted one of the same authenticated
// source (strict) or twice (reorder-tolerant: the last W values are kept),
// and never below the time the receiver started (so traffic recorded before a
// receiver restart is refused without any persisted receiver state). Needs no
// sync message, so it is what protects SOME/IP-SD from the first message on.
//
// Extra authenticated data (TxInput/RxInput::header): bytes the MAC covers
// between DataId and the secured area (AEAD: in the AAD) without carrying
// them in the PDU. The SOME/IP binding puts the message header there
// (someip/runtime.h), so a relabelled header fails verification.
//
// All TimePoints given to the engine (start, install_key, poll, protect,
// verify, handle_sync) are one clock: the synchronised freshness clock.
//
// Non-standard AEAD profile (aead-gcm): AES-GCM seals the Authentic I-PDU
// in place; nonce = DataId(16) || senderId(16) || complete FV(64), AAD =
// DataId || complete FV. The same Secured I-PDU framing carries the
// truncated FV and the (truncated to authInfoTxLength) GCM tag. Nonces never
// repeat under a key because (DataId, senderId) identify the sending PDU and
// its FV never repeats (persisted trip counter).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/secoc/config.h"
#include "layersec/secoc/key_ring.h"
#include "layersec/secoc/replay_window.h"
#include "layersec/secoc/secured_pdu.h"
#include "layersec/secoc/state_store.h"

namespace layersec::secoc {

// Typed reasons a received Secured I-PDU (or sync message) was dropped.
enum class Rejection : std::uint8_t {
  kMalformed,       // too short, bad header length, nonzero padding, secured area outside
  kUnknownPdu,      // PDU id (or sync channel) not configured for reception
  kMacMismatch,     // no candidate FV / key produced the received authenticator
  kReplay,          // FV at or behind the accepted one (or a duplicate in the bitmap)
  kOutOfWindow,     // FV stale beyond W, ahead by >= W, or receiver not synchronised
  kKeyUnknown,      // no key installed for the PDU's key group
  kBufferTooSmall,  // caller's output buffer too small (caller error)
  kStateStore,      // sync accepted cryptographically but could not be persisted
  kStale,           // outside the time bound: too old, from the future, before our start
};
inline constexpr std::size_t kRejectionCount = 9;
std::string_view to_string(Rejection r);

enum class ProtectError : std::uint8_t {
  kUnknownPdu,
  kKeyUnknown,
  kBufferTooSmall,
  kPayloadTooLong,       // length does not fit authPduHeaderLength
  kSecuredAreaOutside,   // payload shorter than the configured secured area
  kFreshnessExhausted,   // MsgCnt at maximum (wait for the next reset cycle) or TripCnt exhausted
  kCrypto,
  kStateStore,           // a trip counter bump could not be persisted
  kNoTime,               // a timestamp-freshness PDU was protected without the time
};
std::string_view to_string(ProtectError e);

enum class StartError : std::uint8_t {
  kStateStore,     // the store could not be read or written
  kTripExhausted,  // the persisted trip counter is at its maximum: new key required
  kStateMissing,   // no state file and StartOptions::first_start not set
  kStateCorrupt,   // the state exists but does not parse: refuse to guess a trip counter
};
std::string_view to_string(StartError e);

struct StartOptions {
  // First provisioning: a missing state starts the trip counter from 0.
  // Without it a missing state is kStateMissing (a deleted state file would
  // otherwise restart the trip counter and reuse the freshness space).
  bool first_start = false;
  // The freshness clock at start: timestamp-freshness PDUs sent before it
  // are refused. Unset: the first poll() sets it.
  std::optional<TimePoint> now;
};

// Per-message input of protect(): extra authenticated data and the time.
struct TxInput {
  ByteSpan header;               // authenticated, not transmitted (SOME/IP header)
  std::optional<TimePoint> now;  // required by timestamp freshness
};

// Per-message input of verify().
struct RxInput {
  ByteSpan header;               // must equal what the sender authenticated
  std::optional<TimePoint> now;  // required by every time-bound PDU (else kStale)
  std::uint64_t source = 0;      // authenticated sender (timestamp PDUs with maxSources > 1)
};

enum class SyncOutcome : std::uint8_t {
  kAccepted,   // a newer reset cycle: receivers moved to it
  kDuplicate,  // the cycle already accepted, or the one just before it (a
               // resend, or a unicast copy overtaken by the next cycle's
               // multicast): authentic, no state change. Anything older is kReplay.
};

// Count of verify() outcomes for one PDU or the whole engine.
struct VerifyCounters {
  std::uint64_t accepted = 0;
  std::uint64_t accepted_previous_key = 0;  // during a key rollover
  std::uint64_t accepted_next_cycle = 0;    // via candidate 2 (lost sync)
  std::uint64_t accepted_previous_cycle = 0;  // late PDU of the previous reset cycle
  std::array<std::uint64_t, kRejectionCount> rejected{};
  [[nodiscard]] std::uint64_t rejected_for(Rejection r) const {
    return rejected[static_cast<std::size_t>(r)];
  }
};

// Receiver freshness state of one PDU (exposed for tests and diagnostics).
struct RxFreshnessState {
  bool synchronised = false;
  FreshnessCounters last;  // trip, reset of the epoch; msg = last/highest accepted
};

class Engine {
 public:
  // Loads the persisted state, bumps and persists the trip counter, and
  // builds the PDU tables. `store` must outlive the engine. The config is
  // validated (ConfigError is thrown for an invalid one).
  [[nodiscard]] static Result<std::unique_ptr<Engine>, StartError> start(EngineConfig config,
                                                                         StateStore& store,
                                                                         StartOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- keys -------------------------------------------------------------
  // Installs `key` as the current key of key group `group` (index in the
  // config); the former current key stays accepted on receive for the
  // rollover window. The key is copied into the contexts; the caller keeps
  // and wipes its SecretBytes.
  [[nodiscard]] Status<KeyError> install_key(std::uint32_t group, std::uint32_t key_id,
                                             const SecretBytes& key, TimePoint now);
  // Removes a key early (end of rollover). Returns false if not live.
  bool retire_key(std::uint32_t group, std::uint32_t key_id);
  [[nodiscard]] std::uint32_t group_index(const std::string& name) const;  // throws if absent

  // --- hot path ---------------------------------------------------------
  // Builds the Secured I-PDU for `payload` into `out` (payload may alias the
  // Authentic I-PDU position of out). Returns the number of bytes written.
  // On error nothing is consumed (the FV is not advanced).
  [[nodiscard]] Result<std::size_t, ProtectError> protect(std::uint32_t pdu_id, ByteSpan payload,
                                                          MutableByteSpan out,
                                                          const TxInput& in = {});
  // Verifies `secured` and writes the Authentic I-PDU (decrypted for the
  // AEAD profile) into `out`. Returns its length. A rejection is counted and
  // leaves the freshness state unchanged (out contents are then unspecified).
  // A time-bound PDU verified without in.now is kStale (fail closed).
  [[nodiscard]] Result<std::size_t, Rejection> verify(std::uint32_t pdu_id, ByteSpan secured,
                                                      MutableByteSpan out, const RxInput& in = {});

  // --- time and sync ----------------------------------------------------
  struct PollResult {
    std::size_t sync_bytes = 0;      // > 0: a sync message was written to sync_out
    TimePoint next_deadline = TimePoint::max();  // call poll() again no later than this
  };
  // Drives time: emits the start-up sync message at the first call and a
  // periodic one (new reset cycle) whenever the sync deadline has passed or
  // request_sync() asked for one, and expires old keys. sync_out needs
  // sync_message_size() bytes.
  [[nodiscard]] Result<PollResult, ProtectError> poll(TimePoint now, MutableByteSpan sync_out);
  // The next poll() starts a new reset cycle and emits its sync message (a
  // restarted receiver then resumes at once instead of at the next period).
  void request_sync() { sync_requested_ = true; }
  [[nodiscard]] std::size_t sync_message_size() const;
  // Receives a sync message on channel `channel` (syncRx id) at `now` (the
  // receiver's freshness clock; required when the channel is time-bound).
  [[nodiscard]] Result<SyncOutcome, Rejection> handle_sync(std::uint32_t channel, ByteSpan message,
                                                           std::optional<TimePoint> now = std::nullopt);

  // --- provisioning and introspection -----------------------------------
  // Sets a receiver's freshness state directly (provisioning, e.g. from a
  // diagnostic tool or for known-answer tests). Marks the PDU synchronised;
  // `cycle_start` is when that reset cycle began (for the time bound; unset:
  // the PDU is stale on a time-bound channel until the next sync message).
  [[nodiscard]] bool set_rx_freshness(std::uint32_t pdu_id, const FreshnessCounters& c,
                                      std::optional<TimePoint> cycle_start = std::nullopt);
  [[nodiscard]] RxFreshnessState rx_freshness(std::uint32_t pdu_id) const;
  // The counters the next protect() of this PDU will use (msg already +1).
  [[nodiscard]] FreshnessCounters next_tx_freshness(std::uint32_t pdu_id) const;
  [[nodiscard]] std::uint64_t trip() const { return trip_; }
  [[nodiscard]] std::uint64_t reset() const { return reset_; }
  [[nodiscard]] bool needs_rekey() const { return trip_exhausted_; }
  [[nodiscard]] const VerifyCounters& counters() const { return totals_; }
  [[nodiscard]] const VerifyCounters& pdu_counters(std::uint32_t pdu_id) const;
  [[nodiscard]] const EngineConfig& config() const { return config_; }
  // Configuration summary (profiles, forgery probabilities) plus the live key
  // ids per key group and the freshness counters. Never prints key material.
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] const PduProfile* tx_profile(std::uint32_t pdu_id) const;
  [[nodiscard]] const PduProfile* rx_profile(std::uint32_t pdu_id) const;

 private:
  struct TxPdu;
  struct RxPdu;
  struct SyncChannel;
  struct SourceState;
  Engine(EngineConfig config, StateStore& store);
  Result<std::size_t, Rejection> verify_timestamp(RxPdu& p, const SecuredPduView& parsed,
                                                  ByteSpan area, MutableByteSpan out,
                                                  const RxInput& in);
  bool try_mac(RxPdu& p, const SecuredPduView& parsed, ByteSpan area, ByteSpan header,
               std::uint64_t fv, MutableByteSpan out, bool& previous_key);
  Status<ProtectError> start_reset_cycle();
  Status<StoreError> persist();
  Result<std::size_t, ProtectError> build_sync(MutableByteSpan out, TimePoint now);
  Result<std::size_t, Rejection> reject(RxPdu* pdu, Rejection r);

  EngineConfig config_;
  StateStore& store_;
  PersistedState persisted_;
  std::vector<KeyGroup> groups_;
  std::vector<TxPdu> tx_;  // dense, indexed by PDU id
  std::vector<RxPdu> rx_;  // dense, indexed by PDU id
  std::vector<SyncChannel> sync_rx_;
  std::uint64_t trip_ = 0;
  std::uint64_t reset_ = 1;
  bool trip_exhausted_ = false;
  bool sync_started_ = false;
  bool sync_requested_ = false;
  TimePoint next_sync_ = TimePoint::max();
  std::optional<TimePoint> start_time_;  // timestamp PDUs sent before it are refused
  VerifyCounters totals_;
  PduProfile sync_tx_profile_;
};

// DataToAuthenticators up to this size are assembled in a stack buffer and
// fed to the MAC in one call; longer ones are fed part by part.
inline constexpr std::size_t kInlineDtaBytes = 512;

// MAC over DataToAuthenticator = DataId(16, BE) || header || secured area ||
// complete FV (SWS_SecOC_00031/00034; `header` is our extension, empty for
// the AUTOSAR layout). Writes the MAC's full tag into tag_out (16 bytes for
// CMAC, 32 for HMAC-SHA256) and clears the unused low bits of byte
// ceil(bits/8)-1, so its first ceil(bits/8) bytes are the truncated
// authenticator (MSBs). Fails only if the MAC back end does.
[[nodiscard]] Status<crypto::CryptoError> compute_authenticator(
    crypto::Mac& mac, const PduProfile& profile, std::uint16_t data_id, ByteSpan header,
    ByteSpan secured_area, std::uint64_t fv, std::span<std::uint8_t, kMaxTagBytes> tag_out);

}  // namespace layersec::secoc
