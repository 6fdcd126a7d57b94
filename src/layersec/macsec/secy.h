// MACsec Security Entity (SecY), IEEE 802.1AE-2018 clause 10, sans-I/O.
//
// A SecY owns one transmit Secure Channel (four transmit SAs, AN 0..3, one of
// which is the encoding SA) and any number of receive SCs keyed by SCI, each
// with up to four receive SAs. It turns frames into frames:
//
//   protect(frame, out)   uncontrolled-port frame  -> secure frame   (10.5)
//   validate(frame)       secure frame (in place)  -> delivered frame (10.6)
//
// Frames are complete Ethernet frames without FCS: DA, SA, then the MSDU
// (EtherType onward), optionally with 802.1Q tags. Nothing on these two
// paths allocates, logs, reads a clock or looks anything up by string; the
// cipher contexts are built when an SA is installed. A link adapter (TAP,
// AF_PACKET, the simulated segment) feeds bytes in and sends the bytes out;
// see docs/macsec.md for the adapter contract.
//
// VLAN handling (docs/macsec.md has the exact byte coverage):
//  - VlanMode::kStandard: 802.1Q tags are part of the MSDU and therefore
//    inside the Secure Data (encrypted with confidentiality).
//  - VlanMode::kClearTag: up to two 0x8100/0x88A8 tags directly after SA stay
//    in clear in front of the SecTAG so a TSN shaper can read the PCP; they
//    are covered by the ICV only if clear_tags_in_icv is set (default not,
//    which is what the DPDK/Marvell clear-tag vectors show).
//
// PN persistence (pn_state.h): with a PnStore attached, every SA resumes
// after its persisted PN and the frame path persists a block of PNs before
// using (transmit) or accepting (receive) a PN beyond it, so static SAKs
// never repeat a nonce or reopen a replay across restarts.
//
// Statistics carry the names of the 802.1AE MIB (10.7.8, 10.7.9, 10.7.11,
// 10.7.14/15, 10.7.18). The object is thread-compatible: one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/pn_state.h"
#include "layersec/macsec/replay_window.h"
#include "layersec/macsec/sectag.h"

namespace layersec::macsec {

// validateFrames (10.7.8).
enum class ValidateFrames : std::uint8_t {
  kDisabled,  // ICVs of integrity-only frames are not checked; encrypted ones are decrypted
  kCheck,     // checked and counted; integrity-only frames that fail are still delivered
  kStrict,    // anything not valid is discarded
};
std::string_view to_string(ValidateFrames v);

enum class VlanMode : std::uint8_t { kStandard, kClearTag };

struct SecYConfig {
  Sci sci;                                   // SCI of the transmit SC
  CipherSuite suite = CipherSuite::kGcmAes128;
  bool protect_frames = true;                // protectFrames (10.7.17): false sends frames untagged
  bool confidentiality = true;               // E=C=1; false: integrity only (E=C=0)
  std::uint8_t confidentiality_offset = 0;   // 0, 30 or 50 octets of User Data left in clear
  bool include_sci = true;                   // alwaysIncludeSCI: SC bit and explicit SCI
  bool use_es = false;                       // useES: ES bit when the SCI is not sent
  ValidateFrames validate_frames = ValidateFrames::kStrict;
  bool replay_protect = true;                // replayProtect (10.7.8)
  std::uint32_t replay_window = 0;           // replayWindow
  VlanMode vlan_mode = VlanMode::kStandard;
  bool clear_tags_in_icv = false;            // clear-tag mode: tags covered by the ICV
  // Largest secure frame (without FCS) the transmit path may emit; longer
  // ones are discarded and counted OutPktsTooLong. 0: no limit.
  std::size_t max_frame_size = 0;
  // When the encoding SA's next PN reaches this value new_sa_needed() turns
  // true so key agreement can install the next SA before exhaustion.
  // 0: three quarters of the PN space.
  std::uint64_t pn_rekey_threshold = 0;
};

// 802.1AE MIB counters (ieee8021SecY*Stats) of the whole SecY: the per-SC
// and per-SA tables below break the receive and transmit ones down; these
// are their sums plus the frames that never reached an SC (NoTag, BadTag,
// NoSCI, UnknownSCI, Untagged) or an SA.
struct SecYStats {
  std::uint64_t InPktsOK = 0;          // valid, PN in window
  std::uint64_t InPktsInvalid = 0;     // not valid, Check mode, C clear: delivered
  std::uint64_t InPktsNotValid = 0;    // not valid, Strict or C set: discarded
  std::uint64_t InPktsLate = 0;        // PN below lowest acceptable PN, replayProtect: discarded
  std::uint64_t InPktsNoSCI = 0;       // unknown SCI, Strict or C set: discarded
  std::uint64_t InPktsUnknownSCI = 0;  // unknown SCI, not Strict and C clear: delivered
  std::uint64_t InPktsNoSA = 0;        // no usable SA (UnknownSCI + UnusedSA), delivered
  std::uint64_t InPktsNotUsingSA = 0;  // SA not in use, Strict or C set: discarded
  std::uint64_t InPktsUnusedSA = 0;    // SA not in use, not Strict and C clear: delivered
  std::uint64_t InPktsUnchecked = 0;   // validateFrames Disabled, C clear: delivered unchecked
  std::uint64_t InPktsDelayed = 0;     // valid, PN late, replayProtect off: delivered
  std::uint64_t InPktsNoTag = 0;       // no SecTAG, Strict: discarded
  std::uint64_t InPktsBadTag = 0;      // invalid SecTAG, PN 0 or bad lengths: discarded
  std::uint64_t InPktsUntagged = 0;    // no SecTAG, not Strict: delivered
  std::uint64_t InOctetsValidated = 0; // User Data octets of valid integrity-only frames
  std::uint64_t InOctetsDecrypted = 0; // User Data octets of valid encrypted frames
  std::uint64_t OutPktsProtected = 0;  // integrity-only frames sent
  std::uint64_t OutPktsEncrypted = 0;  // encrypted frames sent
  std::uint64_t OutPktsUntagged = 0;   // protectFrames false: sent without SecTAG
  std::uint64_t OutPktsTooLong = 0;    // secure frame would exceed max_frame_size: discarded
  std::uint64_t OutOctetsProtected = 0;  // User Data octets sent integrity-protected in clear
  std::uint64_t OutOctetsEncrypted = 0;  // User Data octets sent encrypted
  // layersec extensions (not in the MIB), only with a PnStore attached:
  std::uint64_t InPktsPnNotPersisted = 0;   // valid, but its PN could not be persisted: discarded
  std::uint64_t OutPktsPnNotPersisted = 0;  // the PN reservation could not be persisted: not sent

  // Calls fn(name, value) for every counter in the order above.
  void for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const;
  bool operator==(const SecYStats&) const = default;
};

// Per receive SC counters (IEEE8021-SECY-MIB secyRxSCStatsTable, 802.1AE-2018
// 10.7.9 summed per SC). Every frame that reaches the SC lookup and finds
// this SC increments exactly one of the packet counters below; the SecY-level
// counters (SecYStats) are the sums over all SCs plus what never reached one.
struct RxScStats {
  std::uint64_t InPktsOK = 0;
  std::uint64_t InPktsInvalid = 0;
  std::uint64_t InPktsNotValid = 0;
  std::uint64_t InPktsLate = 0;
  std::uint64_t InPktsUnchecked = 0;
  std::uint64_t InPktsDelayed = 0;
  std::uint64_t InPktsNotUsingSA = 0;
  std::uint64_t InPktsUnusedSA = 0;
  std::uint64_t InOctetsValidated = 0;
  std::uint64_t InOctetsDecrypted = 0;
  void for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const;
  bool operator==(const RxScStats&) const = default;
};

// Per receive SA counters (secyRxSAStatsTable, 802.1AE-2018 10.7.9). NotUsingSA
// and UnusedSA are counted here when the SA is installed but not enabled
// (inUse false); with no SA at that AN only the SC counts them. Late,
// Delayed and Unchecked are per SC only, as in the MIB.
struct RxSaStats {
  std::uint64_t InPktsOK = 0;
  std::uint64_t InPktsInvalid = 0;
  std::uint64_t InPktsNotValid = 0;
  std::uint64_t InPktsNotUsingSA = 0;
  std::uint64_t InPktsUnusedSA = 0;
  void for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const;
  bool operator==(const RxSaStats&) const = default;
};

// Transmit SC counters (secyTxSCStatsTable, 10.7.18).
struct TxScStats {
  std::uint64_t OutPktsProtected = 0;
  std::uint64_t OutPktsEncrypted = 0;
  std::uint64_t OutOctetsProtected = 0;
  std::uint64_t OutOctetsEncrypted = 0;
  void for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const;
  bool operator==(const TxScStats&) const = default;
};

// Transmit SA counters (secyTxSAStatsTable, 10.7.22).
struct TxSaStats {
  std::uint64_t OutPktsProtected = 0;
  std::uint64_t OutPktsEncrypted = 0;
  void for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const;
  bool operator==(const TxSaStats&) const = default;
};

// Why an SA/SC management call failed (configuration time).
enum class SaError : std::uint8_t {
  kBadAn,           // AN > 3
  kBadKey,          // SAK size does not match the suite
  kBackend,         // cipher context could not be built
  kNoSuchSa,        // no SA installed at that AN
  kNoSuchSc,        // no receive SC with that SCI
  kScExists,        // receive SC already present
  kEncodingSaBusy,  // cannot replace the SA that is currently transmitting
  kBadPn,           // next PN 0 or beyond the suite's PN space
  kPnBackwards,     // a lowest acceptable PN may only be raised, never lowered
  kPnStateMissing,  // a PnStore is attached, it has no record of this key, and it is not new
  kPnStateUsedUp,   // the PnStore says every PN of this key was used (or accepted)
  kPnStore,         // the PnStore failed (I/O or corrupt state)
  kKeyShared,       // PnStore: another SA of the SC has the same key (one PN record, one nonce space)
};
std::string_view to_string(SaError e);

// Why protect() produced no frame.
enum class ProtectError : std::uint8_t {
  kFrameTooShort,   // fewer than DA + SA + EtherType
  kBufferTooSmall,  // `out` cannot hold the secure frame
  kTooLong,         // longer than max_frame_size (counted OutPktsTooLong)
  kNoTransmitSa,    // no encoding SA installed or it is not enabled
  kPnExhausted,     // the encoding SA used its last PN: install a new SA (never wraps)
  kSourceNotSci,    // ES without SCI but the frame's SA is not the SCI's address
  kCipher,          // crypto back end failure (the PN is consumed anyway)
  kPnNotPersisted,  // the next PN block could not be reserved in the PnStore (no PN used)
};
std::string_view to_string(ProtectError e);

// Why validate() discarded a frame; each maps to the counter named.
enum class ReceiveDrop : std::uint8_t {
  kNoTag,       // InPktsNoTag
  kBadTag,      // InPktsBadTag (see last_sectag_error())
  kNoSci,       // InPktsNoSCI
  kNotUsingSa,  // InPktsNotUsingSA
  kLate,        // InPktsLate
  kNotValid,    // InPktsNotValid
  kPnNotPersisted,  // InPktsPnNotPersisted: verified, but the PnStore could not record its PN
};
std::string_view to_string(ReceiveDrop d);

// How a delivered frame was classified; each maps to the counter named.
enum class Disposition : std::uint8_t {
  kOk,          // InPktsOK: verified
  kDelayed,     // InPktsDelayed: verified, PN late (replayProtect off)
  kInvalid,     // InPktsInvalid: ICV failed, validateFrames Check, integrity only
  kUnchecked,   // InPktsUnchecked: validateFrames Disabled, integrity only
  kUntagged,    // InPktsUntagged: no SecTAG, not Strict (frame unchanged)
  kUnknownSci,  // InPktsUnknownSCI: not Strict, integrity only, not verified
  kUnusedSa,    // InPktsUnusedSA: not Strict, integrity only, not verified
};
std::string_view to_string(Disposition d);

struct Received {
  // The delivered frame (DA, SA, clear tags if any, MSDU), a view into the
  // buffer passed to validate(); SecTAG and ICV removed.
  ByteSpan frame;
  Disposition disposition = Disposition::kOk;
  Sci sci{};
  std::uint8_t an = 0;
  std::uint64_t pn = 0;  // recovered 64-bit PN for XPN suites
  // True only when the ICV verified (kOk, kDelayed). Everything else was
  // delivered because validateFrames is not Strict.
  [[nodiscard]] bool verified() const {
    return disposition == Disposition::kOk || disposition == Disposition::kDelayed;
  }
};

struct TxSaStatus {
  bool installed = false;
  bool enabled = false;
  bool exhausted = false;
  std::uint64_t next_pn = 0;
  // With a PnStore: the persisted highest PN (every PN used is <= it) and
  // whether a record of this key existed when the SA was installed (the
  // static SAK was used before: a restart).
  std::uint64_t pn_persisted = 0;
  bool pn_resumed = false;
  PnKey pn_key{};  // the record's key (with a PnStore)
  TxSaStats stats{};
};

struct RxSaStatus {
  bool installed = false;
  bool enabled = false;
  std::uint64_t next_pn = 0;
  std::uint64_t lowest_pn = 0;
  // Frames whose ICV verified on this SA (InPktsOK + delayed ones): a peer
  // that has switched to this SA is known to be using it once this is > 0.
  std::uint64_t verified_frames = 0;
  // With a PnStore: the persisted highest PN (every PN accepted is <= it)
  // and whether a record of this key existed at install time.
  std::uint64_t pn_persisted = 0;
  bool pn_resumed = false;
  PnKey pn_key{};  // the record's key (with a PnStore)
  RxSaStats stats{};
};

// PN allocation and receive replay state shared by several SecYs that
// protect and validate the same SAs from several threads (`macsec up
// --workers N`, shared_pn_state.h). With one attached, the SecY takes every
// transmit PN from it and leaves the receive replay check and its update to
// it; its own PN state, PN reservations and PnStore are then not used on the
// frame path (and tick_pn_state/persist_pn_state do nothing: the shared
// state persists). Calls come from any thread.
class SharedPnState {
 public:
  virtual ~SharedPnState() = default;
  // The next PN of transmit SA `an`, persisted before it is returned
  // (kPnExhausted, kNoTransmitSa, kPnNotPersisted: no PN used).
  [[nodiscard]] virtual Result<std::uint64_t, ProtectError> take_tx_pn(std::uint8_t an) = 0;
  // The full PN of a frame on receive SA (sci, an) carrying `pn_field`
  // (ReplayWindow::recover); nullopt beyond the SA's last PN.
  [[nodiscard]] virtual std::optional<std::uint64_t> recover_rx_pn(Sci sci, std::uint8_t an,
                                                                   std::uint32_t pn_field) = 0;
  // The check before the ICV: late or accepted already (a hint only; the
  // decision is accept_rx_pn's).
  [[nodiscard]] virtual bool rx_replayed(Sci sci, std::uint8_t an, std::uint64_t pn) = 0;
  // After the ICV verified, atomically: kLate when replayProtect is on and
  // `pn` is late or was accepted (by any thread) in the meantime,
  // kPnNotPersisted when its PN could not be persisted; else records it and
  // returns whether it was late (delivered as Delayed, replayProtect off).
  [[nodiscard]] virtual Result<bool, ReceiveDrop> accept_rx_pn(Sci sci, std::uint8_t an, std::uint64_t pn) = 0;
};

namespace detail {
// What a persisted SA carries: its record key and the persisted highest PN.
struct PnPersisted {
  PnKey key{};
  std::uint64_t highest = 0;
  bool resumed = false;
  std::uint64_t next_block = 1;  // size of the next reservation (doubles up to the SecY's block)
  std::uint64_t tick_exact = 0;  // exact highest PN at the last tick_pn_state()
};
// One transmit SA: its cipher context and PN state (10.7.22).
struct TxSa {
  SaCipher cipher;
  bool enabled = true;
  bool exhausted = false;
  std::uint64_t next_pn = 1;
  TxSaStats stats{};
  PnPersisted persisted{};
};
// One receive SA: its cipher context and receive PN state (10.7.14).
struct RxSa {
  SaCipher cipher;
  ReplayWindow window;
  bool enabled = true;
  std::uint64_t verified = 0;
  RxSaStats stats{};
  PnPersisted persisted{};
};
struct RxSc {
  Sci sci;
  std::array<std::optional<RxSa>, 4> sas;
  RxScStats stats{};
};
}  // namespace detail

class SecY {
 public:
  // Throws std::invalid_argument for an inconsistent configuration
  // (start-up only): offset not 0/30/50, useES with SCI port != 1.
  explicit SecY(SecYConfig config);
  SecY(SecY&&) noexcept;
  SecY& operator=(SecY&&) noexcept;
  ~SecY();

  [[nodiscard]] const SecYConfig& config() const { return config_; }
  [[nodiscard]] const SecYStats& stats() const { return stats_; }
  // The transmit SC's counters (per-SA ones are in tx_sa_status()).
  [[nodiscard]] const TxScStats& tx_sc_stats() const { return tx_sc_stats_; }
  // A receive SC's counters; nullopt when no such SC. Counters start at zero
  // when the SC (or, for rx_sa_status().stats, the SA) is installed and go
  // with it when it is removed; the SecY-level sums keep counting.
  [[nodiscard]] std::optional<RxScStats> rx_sc_stats(Sci sci) const;
  // The SCIs of the receive SCs, ascending (management path; allocates).
  [[nodiscard]] std::vector<Sci> rx_scis() const;
  // Changing replayProtect/replayWindow/validateFrames at run time is allowed.
  void set_validate_frames(ValidateFrames v) { config_.validate_frames = v; }
  void set_replay_protect(bool on, std::uint32_t window);

  // ---- PN persistence (pn_state.h); configuration time ----
  // Attaches `store` (not owned; must outlive the SecY; nullptr detaches)
  // for the SAs installed from now on; call it before installing any SA.
  // Each SA then resumes from its record (transmit next PN and receive
  // lowest acceptable PN = persisted highest + 1, or the configured PN if
  // higher), and the frame path saves a new highest PN before using or
  // accepting a PN above the persisted one, reserving 1, 2, 4, ... PNs at a
  // time up to `reserve_block` (>= 1; tick_pn_state() resizes it to the
  // traffic). Without a store nothing is persisted (the 802.1AE behaviour:
  // PN state lives as long as the SA).
  void set_pn_store(PnStore* store, std::uint64_t reserve_block);
  [[nodiscard]] bool has_pn_store() const { return pn_store_ != nullptr; }
  // The attached store's record for an SA with these keys (planning, e.g. a
  // reload: nothing changes). nullopt: no record; kPnStore: the store failed;
  // without a store always nullopt.
  [[nodiscard]] Result<std::optional<std::uint64_t>, SaError> pn_record(PnDirection direction, Sci sci,
                                                                        const SaKeys& keys) const;
  // Clean shutdown: saves the exact highest PN of every persisted SA whose
  // record is ahead of it (the last PN used; the highest PN accepted), so a
  // restart loses nothing, and restarts the reservation doubling at 1.
  // Tries every SA; kPnStore if any save failed.
  [[nodiscard]] Status<SaError> persist_pn_state();
  // Periodic upkeep (`layersec macsec up`: every second). Per SA, with U the
  // PNs used or accepted since the previous call: the next reservation is
  // sized U (1..reserve_block), so a steady SA saves about once per period;
  // and when the record is more than U ahead of the exact value (the traffic
  // slowed down or stopped) the exact value is saved. So a crash costs a
  // restarted receiver at most about two periods' worth of the peer's PNs,
  // never more than reserve_block (docs/macsec.md). kPnStore if a save failed.
  [[nodiscard]] Status<SaError> tick_pn_state();
  // Takes transmit PNs and does the receive replay check through `shared`
  // (not owned, must outlive the SecY; nullptr: the SecY's own state).
  void set_shared_pn_state(SharedPnState* shared) { shared_pn_ = shared; }
  [[nodiscard]] bool has_shared_pn_state() const { return shared_pn_ != nullptr; }

  // ---- transmit SC (10.7.21, 10.7.22); configuration time ----
  // Installs (or replaces) transmit SA `an` with its own AES-GCM context.
  // The SA starts enabled with next PN `next_pn` (>= 1). Replacing the
  // encoding SA is refused; switch encoding SA first. With a PnStore the SA
  // resumes after its record; no record is kPnStateMissing unless `start` is
  // kNewKey (then the record is created at next_pn - 1 before returning).
  [[nodiscard]] Status<SaError> install_tx_sa(std::uint8_t an, const SaKeys& keys,
                                              std::uint64_t next_pn = 1, PnStart start = PnStart::kResume);
  // Makes `an` the encoding SA (AN rotation). The SA must be installed.
  [[nodiscard]] Status<SaError> set_encoding_sa(std::uint8_t an);
  [[nodiscard]] Status<SaError> remove_tx_sa(std::uint8_t an);
  // enableTransmit of transmit SA `an` (10.7.22). A disabled SA keeps its
  // key and PN but protects nothing: while it is the encoding SA, protect()
  // fails kNoTransmitSa. Key agreement (MKA) installs the next SA, disables
  // it until every receiver holds the key, then enables it and makes it the
  // encoding SA (make-before-break).
  [[nodiscard]] Status<SaError> enable_tx_sa(std::uint8_t an, bool enabled);
  [[nodiscard]] std::uint8_t encoding_an() const { return encoding_an_; }
  [[nodiscard]] TxSaStatus tx_sa_status(std::uint8_t an) const;
  // True when the encoding SA is exhausted or past pn_rekey_threshold, or no
  // encoding SA is installed: key agreement must install and switch to a new
  // SA. Transmission stops at exhaustion; the PN never wraps.
  [[nodiscard]] bool new_sa_needed() const;

  // ---- receive SCs (10.7.12, 10.7.13); configuration time ----
  [[nodiscard]] Status<SaError> add_rx_sc(Sci sci);
  [[nodiscard]] Status<SaError> remove_rx_sc(Sci sci);
  // Installs (or replaces) receive SA `an` of SC `sci`, enabled, accepting
  // PNs from `lowest_pn` on (PnStore: as install_tx_sa, for the peer's SCI).
  [[nodiscard]] Status<SaError> install_rx_sa(Sci sci, std::uint8_t an, const SaKeys& keys,
                                              std::uint64_t lowest_pn = 1, PnStart start = PnStart::kResume);
  [[nodiscard]] Status<SaError> enable_rx_sa(Sci sci, std::uint8_t an, bool enabled);
  // Raises the lowest acceptable PN of a receive SA (the KaY's
  // nextPN/lowestPN update, 802.1AE-2018 10.7.14; with MKA the value comes
  // from the peer's Lowest Acceptable PN in its MKPDUs, 802.1X-2020 clause
  // 11): frames below it become late. Lowering it is refused
  // (kPnBackwards) so a replay window can never be reopened; equal is a no-op.
  [[nodiscard]] Status<SaError> raise_rx_sa_lowest_pn(Sci sci, std::uint8_t an, std::uint64_t lowest_pn);
  [[nodiscard]] Status<SaError> remove_rx_sa(Sci sci, std::uint8_t an);
  [[nodiscard]] RxSaStatus rx_sa_status(Sci sci, std::uint8_t an) const;
  [[nodiscard]] std::size_t rx_sc_count() const { return rx_scs_.size(); }

  // ---- data path ----
  // 10.5: protects `frame` with the encoding SA into `out`, which must not
  // overlap `frame` and needs frame.size() + 32 octets (24 without SCI).
  // Returns the secure frame's length. The PN is consumed before the cipher
  // runs, so it is never reused even if the back end fails.
  [[nodiscard]] Result<std::size_t, ProtectError> protect(ByteSpan frame, MutableByteSpan out);

  // 10.6: validates the frame in `frame` in place (decrypting it) and returns
  // the frame to deliver to the controlled port as a view into the same
  // buffer, or the reason it was discarded. Every call increments exactly one
  // of the In* packet counters.
  [[nodiscard]] Result<Received, ReceiveDrop> validate(MutableByteSpan frame);

  // The SecTAG error behind the most recent kBadTag drop.
  [[nodiscard]] SecTagError last_sectag_error() const { return last_sectag_error_; }

 private:
  detail::RxSc* find_rx_sc(Sci sci);
  const detail::RxSc* find_rx_sc(Sci sci) const;
  Received deliver_stripped(MutableByteSpan frame, const SecureFrameView& v, Disposition d);
  Disposition count_verified(detail::RxSc& sc, detail::RxSa& sa, bool encrypted, std::size_t octets, bool late);
  // Loads (or, for kNewKey without a record, creates) the record of a new SA
  // and returns its persisted state; `first_pn` is the configured next /
  // lowest PN and is raised past the record.
  Result<detail::PnPersisted, SaError> open_pn_record(PnDirection direction, Sci sci, const SaKeys& keys,
                                                      std::uint8_t an, std::uint64_t& first_pn, PnStart start);
  // Saves a new highest PN covering `pn` (one reserve block); false on failure.
  bool reserve_pn(detail::PnPersisted& p, std::uint8_t an, std::uint64_t pn);
  // Calls fn(persisted, an, exact) for every SA with PN state, where exact is
  // the last PN used (transmit) or the highest accepted (receive).
  template <typename Fn>
  void for_each_persisted(Fn&& fn);

  SecYConfig config_;
  SecYStats stats_;
  TxScStats tx_sc_stats_;
  std::uint64_t rekey_threshold_ = 0;
  std::array<std::optional<detail::TxSa>, 4> tx_sas_;
  std::uint8_t encoding_an_ = 0;
  std::vector<detail::RxSc> rx_scs_;  // sorted by SCI
  SecTagError last_sectag_error_ = SecTagError::kTooShort;
  PnStore* pn_store_ = nullptr;
  std::uint64_t pn_block_ = 1;
  SharedPnState* shared_pn_ = nullptr;
};

}  // namespace layersec::macsec
