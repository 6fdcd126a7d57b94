// SV frame authentication: IEC 62351-6 style (HMAC-SHA256, AES-GMAC) and the
// reference paper's schemes (BLAKE2s, Chaskey-12 over the whole frame, and
// field-selective Chaskey-12 over smpCnt ‖ seqData).
//
// Every scheme carries its tag in one security extension placed after the
// savPdu and counted in Length (layout below; docs/sv.md says where each part
// comes from and where public material disagrees):
//
//   Reserved1 bits 7..0  = extension length in octets (bit 15 stays Simulate)
//   Reserved2            = CRC-16/MODBUS over EtherType..Reserved1 (frame.h)
//   extension  0xAD L {
//     keyId              0x80 04  uint32, the group key's id
//     timeOfCurrentKey   0x81 04  uint32, seconds since 1970 when the key took effect
//     timeToNextKey      0x82 02  uint16, minutes until the next key (0xFFFF = none planned)
//     algorithm          0x83 01  see MacAlgorithmId
//     freshness          0x84 0C  senderId(4) ‖ frameCounter(8), every scheme;
//                                 AES-GMAC uses these 12 bytes as its IV
//     authenticationValue 0x85 LL the tag (10/16/32 bytes HMAC, 8/16 GMAC, ...)
//   }
//
// Freshness (the replay defence; smpCnt is not one, it wraps every second):
// frameCounter is a 64-bit counter that increases by one with every frame a
// publisher signs, across key changes, and never wraps (kCounterExhausted).
// The subscriber accepts a frame only if its counter is above the highest it
// has accepted on the stream (kReplayedCounter otherwise), whatever its smpCnt.
// The adapter chooses the first value (KeyMaterial::initial_counter) so that
// a restarted publisher never repeats one (docs/sv.md: the wall-clock base).
//
// What the tag covers:
//   full-frame schemes (HMAC, GMAC, BLAKE2s, Chaskey-12 full): every byte from
//     the EtherType up to and including the 0x85 LL header of the tag, i.e. the
//     SV header, the whole savPdu and the extension fields (freshness included).
//     The Ethernet addresses and the 802.1Q tag are not covered (bridges may
//     rewrite the priority tag), as in EVerest's 62351-6 GOOSE code.
//   field-selective Chaskey-12 (the paper, §III.B, plus the freshness field):
//     senderId ‖ frameCounter ‖ (smpCnt ‖ seqData of every ASDU, in order).
//     APPID, svID, noASDU, confRev and smpSynch are compared with a cached copy
//     after the tag verifies (Subscriber). Nothing else is authenticated:
//     datSet, refrTm, smpRate, smpMod, gmIdentity, the Simulate bit and the
//     key-change fields can be altered undetected, and the tag does not bind
//     the key id or the stream. The paper's input is smpCnt ‖ seqData alone;
//     the 12 freshness bytes are our addition (without them a frame recorded
//     a whole number of seconds earlier verifies again). docs/sv.md lists the
//     consequences.
//
// Contexts are built once per key (Principle 2); signing and verifying do not
// allocate. Tags are compared in constant time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/crypto/aead.h"
#include "layersec/crypto/chaskey.h"
#include "layersec/crypto/mac.h"
#include "layersec/sv/frame.h"

namespace layersec::sv {

enum class Scheme : std::uint8_t {
  kNone,
  kHmacSha256,          // IEC 62351-6:2020, tags of 80, 128 or 256 bits
  kAesGmac,             // IEC 62351-6:2020, tags of 64 or 128 bits; 128- or 256-bit key
  kBlake2s,             // keyed BLAKE2s-256 (RFC 7693), truncated (paper's comparison)
  kChaskey12Full,       // Chaskey-12 over the same bytes as HMAC (paper's comparison)
  kChaskey12Selective,  // Chaskey-12 over smpCnt ‖ seqData (the paper's scheme)
};
std::string_view to_string(Scheme s);

// Algorithm ids carried in the extension. 1..5 are the IEC 61850-90-5 /
// IEC 62351-9 values (as listed by RFC 8052 implementations: HMAC-SHA256-80,
// -128, -256, AES-GMAC-64, -128); 0xF0.. are private to layersec.
enum class MacAlgorithmId : std::uint8_t {
  kHmacSha256_80 = 1,
  kHmacSha256_128 = 2,
  kHmacSha256_256 = 3,
  kAesGmac64 = 4,
  kAesGmac128 = 5,
  kBlake2s = 0xF0,
  kChaskey12Full = 0xF1,
  kChaskey12Selective = 0xF2,
};

enum class SecurityError : std::uint8_t {
  kBadConfig,          // scheme/tag length/key size combination not allowed
  kNoExtension,        // a secured stream received a frame without an extension
  kBadExtension,       // the extension does not follow the layout above
  kWrongAlgorithm,     // the extension names another algorithm or tag length
  kUnknownKey,         // key id is neither the current nor the announced next key
  kBadTag,             // authentication failed
  kReplayedCounter,    // frameCounter not above the highest accepted on the stream
  kCounterExhausted,   // the publisher's frameCounter would wrap (a new stream is needed)
  kCrypto,             // the crypto backend failed
};
std::string_view to_string(SecurityError e);

// Per-stream security configuration (scheme, tag length, key handling).
struct SecurityConfig {
  Scheme scheme = Scheme::kNone;
  // Tag length in bits; 0 selects the default (HMAC 256, GMAC 128, others 128).
  std::size_t tag_bits = 0;
  // senderId of the freshness field: unique per publisher sharing a group
  // key (AES-GMAC: the IV's fixed field, SP 800-38D §8.2.1 deterministic
  // construction).
  std::uint32_t sender_id = 0;
};

// Parses "none", "hmac-sha256[-80|-128|-256]", "aes-gmac[-64|-128]",
// "blake2s", "chaskey12-full", "chaskey12-selective".
std::optional<SecurityConfig> parse_scheme(std::string_view name);
// The benchmark/CLI name of a configuration ("aes-gmac-128", ...).
std::string scheme_name(const SecurityConfig& c);

// One group key epoch. The key itself never leaves SecretBytes.
struct KeyMaterial {
  std::uint32_t key_id = 0;
  SecretBytes key;
  std::uint32_t time_of_current_key = 0;    // seconds since 1970 (carried, informational)
  std::uint16_t time_to_next_key_min = 0xFFFF;
  // First frameCounter a publisher may use under this key (the signer never
  // goes below the last value it used, so a later key continues the run's
  // sequence). Subscribers ignore it.
  std::uint64_t initial_counter = 0;
};

// senderId(4) ‖ frameCounter(8) in the extension's freshness field.
inline constexpr std::size_t kFreshnessBytes = 12;
// Announced next keys a subscriber keeps per stream (oldest dropped first).
inline constexpr std::size_t kMaxAnnouncedKeys = 4;

// Normalised tag length in bytes for a config, or 0 if not allowed.
std::size_t tag_bytes_for(const SecurityConfig& c);
// Key length the scheme needs (GMAC: 16; 32 is accepted too).
std::size_t key_bytes_for(Scheme s);
// Size of the security extension for a config (0 for kNone).
std::size_t extension_size(const SecurityConfig& c);

// Offsets of the extension's fields relative to the extension's first byte.
struct ExtensionLayout {
  std::size_t key_id = 0;
  std::size_t time_of_current_key = 0;
  std::size_t time_to_next_key = 0;
  std::size_t algorithm = 0;
  std::size_t freshness = 0;     // senderId ‖ frameCounter (GMAC: the IV)
  std::size_t tag = 0;           // first byte of the authentication value
  std::size_t tag_len = 0;
  std::size_t size = 0;
};
ExtensionLayout extension_layout(const SecurityConfig& c);

// A parsed extension (views of the frame).
struct Extension {
  std::uint32_t key_id = 0;
  std::uint32_t time_of_current_key = 0;
  std::uint16_t time_to_next_key_min = 0;
  std::uint8_t algorithm = 0;
  ByteSpan freshness;          // the 12 bytes (GMAC: the IV)
  std::uint32_t sender_id = 0;
  std::uint64_t counter = 0;   // frameCounter
  ByteSpan tag;
  std::size_t tag_offset = 0;  // relative to the extension start
};
// Strict parse (every field, in order, fixed sizes, nothing after the tag).
Result<Extension, SecurityError> parse_extension(ByteSpan ext);
// Writes the extension for `e` (sender_id and counter, not the freshness
// view, are written; the tag bytes are e.tag) into out, which must be
// exactly the encoded size (6 + 6 + 4 + 3 + 14 + 2 + tag + 2 bytes).
// parse_extension(x) -> encode_extension gives x back. Returns false when the
// sizes do not fit.
[[nodiscard]] bool encode_extension(const Extension& e, MutableByteSpan out);

// Where the authenticated parts of a frame are (absolute frame offsets).
struct AuthRegions {
  std::size_t ethertype_offset = 0;  // full-frame MAC starts here
  std::size_t extension_offset = 0;  // first byte of the extension
  std::size_t asdu_count = 0;
  std::array<std::size_t, kMaxAsdus> smp_cnt_offset{};
  std::array<std::size_t, kMaxAsdus> seq_data_offset{};
  std::size_t seq_data_len = 0;      // per ASDU (all ASDUs of a stream have one dataset)
};

// A keyed MAC for one scheme, built once per key.
class MacEngine {
 public:
  static Result<std::unique_ptr<MacEngine>, SecurityError> create(const SecurityConfig& c, ByteSpan key);
  ~MacEngine();
  MacEngine(const MacEngine&) = delete;
  MacEngine& operator=(const MacEngine&) = delete;

  [[nodiscard]] Scheme scheme() const { return scheme_; }
  [[nodiscard]] std::size_t tag_len() const { return tag_len_; }
  // Tag over one contiguous message. iv: 12 bytes for GMAC, ignored otherwise.
  Status<SecurityError> compute(ByteSpan message, ByteSpan iv, MutableByteSpan tag);
  // Tag of the frame according to the scheme: full-frame schemes MAC
  // [ethertype_offset, extension_offset + layout.tag); the selective scheme
  // gathers freshness ‖ smpCnt ‖ seqData into a scratch buffer first.
  Status<SecurityError> compute_frame(ByteSpan frame, const AuthRegions& r, const ExtensionLayout& l,
                                      MutableByteSpan tag);
  // Bytes the tag covers for this frame (for reporting MAC input sizes).
  [[nodiscard]] std::size_t mac_input_size(const AuthRegions& r, const ExtensionLayout& l) const;

 private:
  MacEngine() = default;
  Scheme scheme_ = Scheme::kNone;
  std::size_t tag_len_ = 0;
  std::unique_ptr<crypto::Mac> mac_;          // HMAC, BLAKE2s
  std::unique_ptr<crypto::Chaskey> chaskey_;  // Chaskey-12
  std::optional<crypto::AesGmac> gmac_;
  std::array<std::uint8_t, kFreshnessBytes + kMaxAsdus * (2 + kMaxAsduBytes)> scratch_{};
};

// Publisher side: writes the extension and signs frames, one key epoch at a time.
class FrameSigner {
 public:
  static Result<FrameSigner, SecurityError> create(const SecurityConfig& c, KeyMaterial key);
  [[nodiscard]] const SecurityConfig& config() const { return config_; }
  [[nodiscard]] const ExtensionLayout& layout() const { return layout_; }
  [[nodiscard]] std::uint32_t key_id() const { return key_id_; }
  [[nodiscard]] std::uint64_t next_counter() const { return counter_; }

  // Writes the extension (with a zero tag) for the current key into out
  // (layout().size bytes).
  [[nodiscard]] bool write_extension(MutableByteSpan out) const;
  // Installs a new key epoch; the next sign() rewrites the extension fields.
  Status<SecurityError> rekey(KeyMaterial key);
  // Signs a frame whose extension sits at r.extension_offset: refreshes the
  // key fields if the key changed, writes senderId ‖ frameCounter, computes
  // the tag and advances the counter (kCounterExhausted at 2^64-1).
  Status<SecurityError> sign(MutableByteSpan frame, const AuthRegions& r);

 private:
  FrameSigner() = default;
  SecurityConfig config_;
  ExtensionLayout layout_;
  std::unique_ptr<MacEngine> engine_;
  std::uint32_t key_id_ = 0;
  std::uint32_t time_of_current_key_ = 0;
  std::uint16_t time_to_next_key_ = 0xFFFF;
  std::uint64_t counter_ = 0;
  bool fields_dirty_ = true;
};

// What a successful verification found; commit() applies it.
struct VerifiedFrame {
  bool next_key = false;          // verified under an announced next key
  std::size_t announced = 0;      // which one (index into the announcements)
  std::uint64_t counter = 0;      // frameCounter
  std::uint32_t key_id = 0;
};

// Subscriber side: verifies tags under the current key or one of the
// announced next keys (IEC 62351-9 style rollover; several can be pending
// when rekeys follow each other faster than the publisher switches, e.g. a
// scheduled rekey and a membership change in the same lead window), then
// the frame counter. verify() changes no state; commit() (called once the
// rest of the frame has been accepted) raises the counter floor and, for a
// frame under an announced key, makes that key current and forgets the
// current key and every key announced before it.
class FrameVerifier {
 public:
  static Result<FrameVerifier, SecurityError> create(const SecurityConfig& c, KeyMaterial current);
  [[nodiscard]] const SecurityConfig& config() const { return config_; }
  [[nodiscard]] std::uint32_t current_key_id() const { return current_.key_id; }
  [[nodiscard]] std::size_t announced_keys() const { return announced_.size(); }
  // Highest frameCounter accepted so far (none before the first frame).
  [[nodiscard]] std::optional<std::uint64_t> counter_floor() const {
    return have_counter_ ? std::optional<std::uint64_t>(last_counter_) : std::nullopt;
  }
  // Restores a persisted floor (floor_store.h): from now on only counters
  // >= resume are accepted. Only ever raises the floor (a resume point at or
  // below the current floor changes nothing); 0 changes nothing.
  void raise_counter_floor(std::uint64_t resume);
  // Announces a next key. A key id already announced is replaced; beyond
  // kMaxAnnouncedKeys the oldest announcement is dropped. The current key's
  // id is kBadConfig.
  Status<SecurityError> set_next_key(KeyMaterial key);

  Result<VerifiedFrame, SecurityError> verify(ByteSpan frame, const Frame& decoded);
  void commit(const VerifiedFrame& v);

 private:
  struct Epoch {
    std::uint32_t key_id = 0;
    std::unique_ptr<MacEngine> engine;
  };
  FrameVerifier() = default;
  SecurityConfig config_;
  ExtensionLayout layout_;
  Epoch current_;
  std::vector<Epoch> announced_;  // oldest first; allocated only by set_next_key
  // The stream's counter floor, across key epochs (the publisher's counter
  // continues across keys).
  bool have_counter_ = false;
  std::uint64_t last_counter_ = 0;
};

// Regions of a decoded frame.
AuthRegions regions_of(const Frame& f);

}  // namespace layersec::sv
