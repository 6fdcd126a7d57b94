// SV group-key distribution centre (KDC) with ML-KEM, after the reference
// paper (arXiv 2608.22123, §III.A and its IEC 62351-9 / GDOI background):
//
//   setup         the KDC holds an ML-KEM key pair (ek_K, dk_K) and a master
//                 secret MS; ek_K is published.
//   registration  offline, over a secure channel: for each IED identity ID
//                 the KDC hands out the identity value
//                   A_ID = HMAC-SHA256(MS, "layersec-sv-kdc v1 identity" ‖ len ‖ ID)
//                 (the KDC stores no per-IED secret: it recomputes A_ID).
//   authentication and key establishment (per IED, public channel):
//     IED -> KDC  AuthRequest  ID, T (time), N_I, ek_I, c = Encaps(ek_K) -> ss,
//                              tag = HMAC(K_req, request bytes before tag)
//                              K_req = HKDF(salt N_I, ss ‖ A_ID, "…request" ‖ ID)
//     KDC         decapsulates, checks the tag (implicit rejection: a forged c
//                 gives a random ss and the tag fails), T within the skew and
//                 above the last accepted T of this ID (replay), then
//                   SK = HKDF(salt N_I ‖ N_K, ss ‖ A_ID,
//                             "…session" ‖ ID ‖ SHA-256(request))
//     KDC -> IED  AuthResponse ID, session id, N_I (echo), N_K,
//                              confirm = HMAC(SK, response bytes before tag)
//     IED         checks N_I against its pending request and the nonce-bound
//                 confirmation tag, then holds SK.
//   group-key distribution (KDC -> each publisher and subscriber of a stream):
//     KeyDistribution  recipient, session id, sequence (per recipient,
//                 strictly increasing), role, APPID, svID, key id, scheme, tag
//                 bits, valid-from and next-change times, N_D,
//                 c_D = Encaps(ek_I) -> ss_D, AES-256-GCM(KEK, IV, AAD = all
//                 bytes before the wrapped key, group key)
//                 KEK ‖ IV = HKDF(salt N_D, ss_D ‖ SK, "…wrap" ‖ SHA-256(AAD))
//     Opening needs dk_I (the ML-KEM key the IED registered) and SK (the
//     authenticated session): a message for another IED, from another
//     session, replayed (sequence not above the last), stale (next change
//     already passed), for an older key id, or tampered with is rejected with
//     a typed KdcError and counted.
//   rekey         on schedule (poll(): every key lives `key_lifetime`; its
//                 successor is distributed `key_change_lead` before the
//                 switch), on demand (rekey()) and on membership change
//                 (add_member()/remove_member(): the removed IED never receives
//                 the new key). Receivers install the new key as the announced
//                 next key (Subscriber::set_next_key / Publisher::schedule_rekey
//                 at valid_from), so the switch loses no frames. The key a
//                 removal replaces is revoked: a publisher authenticating
//                 before the switch gets only the new key and uses it at once
//                 (initial_keys), so it never serves the member that left.
//
// Message layouts and the choices we made where the paper gives none are in
// docs/sv.md ("Key distribution centre"). Time: every `now` here is wall-clock
// time (ns since 1970; key times travel between devices), injected by the
// caller. Nothing here does I/O; randomness comes from OpenSSL's DRBG. Secrets
// (MS, A_ID, SK, dk, group keys) live in SecretBytes and are never logged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/kex/kem.h"
#include "layersec/sv/security.h"

namespace layersec::sv::kdc {

inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kTagSize = 32;       // HMAC-SHA256 tags of requests/responses
inline constexpr std::size_t kAeadTagSize = 16;   // AES-256-GCM tag of a distribution
inline constexpr std::size_t kMaxIdSize = 64;     // IED identity, bytes
inline constexpr std::size_t kMaxSvIdSize = 129;  // svID (VisibleString 65..129 in 9-2 Ed.2)
inline constexpr std::size_t kMaxGroupKeySize = 64;
inline constexpr std::uint8_t kVersion = 1;

enum class MessageType : std::uint8_t { kAuthRequest = 1, kAuthResponse = 2, kKeyDistribution = 3 };

enum class Role : std::uint8_t { kPublisher = 1, kSubscriber = 2 };
std::string_view to_string(Role r);

enum class KdcError : std::uint8_t {
  kMalformed,         // does not parse (length, magic, version, trailing bytes, ...)
  kWrongType,         // a well-formed message of another type
  kWrongKem,          // ML-KEM parameter set differs from ours
  kUnknownIed,        // identity not registered (or deregistered)
  kStale,             // timestamp outside the allowed skew / key already past its change time
  kReplay,            // timestamp, sequence or key id not above the last accepted
  kBadTag,            // request/response tag or AEAD tag did not verify
  kWrongRecipient,    // distribution addressed to another IED
  kWrongSession,      // session id differs from the established session
  kNoSession,         // no authenticated session (IED not authenticated yet)
  kNoPendingRequest,  // response without an outstanding request / nonce mismatch
  kUnknownStream,     // stream id not configured
  kNotMember,         // IED not a member of the stream
  kAlreadyMember,
  kBadConfig,         // scheme/key/identity arguments unusable
  kExhausted,         // key id or sequence space used up
  kCrypto,            // the crypto backend failed
};
inline constexpr std::size_t kKdcErrorCount = 17;
std::string_view to_string(KdcError e);

// Parameter set carried in every message (1, 2, 3).
std::optional<kex::KemScheme> kem_of_wire(std::uint8_t v);
std::uint8_t wire_of_kem(kex::KemScheme s);  // 0 for a non-ML-KEM scheme

// ---- message codec (views into the caller's bytes; strict parsing) ----------
//
// Common header: "SVKD" | version u8 (1) | type u8 | ML-KEM set u8 (1/2/3).
// Identities and svIDs are u8-length-prefixed (1..64 / 1..129 bytes), KEM keys
// and ciphertexts u16-length-prefixed and must have the set's exact size.

struct AuthRequest {
  kex::KemScheme kem = kex::KemScheme::kMlKem768;
  ByteSpan id;
  std::uint64_t timestamp_ns = 0;
  ByteSpan nonce;           // N_I, 32
  ByteSpan encaps_key;      // ek_I
  ByteSpan kem_ciphertext;  // c to ek_K
  ByteSpan tag;             // 32
  std::size_t signed_length = 0;  // bytes covered by tag
};
struct AuthResponse {
  kex::KemScheme kem = kex::KemScheme::kMlKem768;
  ByteSpan id;
  std::uint32_t session_id = 0;
  ByteSpan nonce_ied;  // N_I echoed
  ByteSpan nonce_kdc;  // N_K
  ByteSpan tag;        // confirm, 32
  std::size_t signed_length = 0;
};
struct KeyDistribution {
  kex::KemScheme kem = kex::KemScheme::kMlKem768;
  ByteSpan recipient;
  std::uint32_t session_id = 0;
  std::uint64_t sequence = 0;
  Role role = Role::kSubscriber;
  std::uint16_t appid = 0;
  ByteSpan sv_id;
  std::uint32_t key_id = 0;
  Scheme scheme = Scheme::kNone;
  std::uint16_t tag_bits = 0;
  std::uint64_t valid_from_ns = 0;
  std::uint64_t next_change_ns = 0;  // 0: no change planned
  ByteSpan nonce;                    // N_D
  ByteSpan kem_ciphertext;           // c_D to ek_I
  ByteSpan wrapped_key;              // AES-GCM ciphertext of the group key
  ByteSpan aead_tag;                 // 16
  std::size_t aad_length = 0;        // bytes before the wrapped key
};

Result<MessageType, KdcError> peek_type(ByteSpan msg);
Result<AuthRequest, KdcError> parse_auth_request(ByteSpan msg);
Result<AuthResponse, KdcError> parse_auth_response(ByteSpan msg);
Result<KeyDistribution, KdcError> parse_key_distribution(ByteSpan msg);
// Encoders of the parsed forms (parse -> encode gives the input back).
std::vector<std::uint8_t> encode(const AuthRequest& m);
std::vector<std::uint8_t> encode(const AuthResponse& m);
std::vector<std::uint8_t> encode(const KeyDistribution& m);

// A message addressed to one IED.
struct Outgoing {
  std::string recipient;
  std::vector<std::uint8_t> message;
};

// What an IED learns from a distribution: enough to drive sv::Publisher
// (schedule_rekey at valid_from, or the first key) or sv::Subscriber
// (add_stream / set_next_key).
struct GroupKeyUpdate {
  Role role = Role::kSubscriber;
  std::uint16_t appid = 0;
  std::string sv_id;
  SecurityConfig security;
  KeyMaterial key;          // key id, key, timeOfCurrentKey, timeToNextKey
  TimePoint valid_from;     // wall clock
  TimePoint next_change;    // TimePoint::max() when none planned
};

// The keys an IED starts a stream with, from the distributions of one
// authentication (Kdc::on_auth_request): `current` is the highest key id
// already valid at `now`, `next` the highest one still to come. When none is
// valid yet (the KDC handed a publisher only the key that replaces one
// revoked by a removal, or the clocks disagree slightly), the coming key is
// `current`: it is used at once, and every member that stays accepts it as
// its announced next key. Updates of other streams are the caller's to filter.
struct InitialKeys {
  std::optional<GroupKeyUpdate> current;
  std::optional<GroupKeyUpdate> next;
};
InitialKeys initial_keys(std::vector<GroupKeyUpdate> updates, TimePoint now);

// ---- KDC ------------------------------------------------------------------

namespace detail {
struct KeySlot;  // one group key epoch of a stream (kdc.cc)
}

struct KdcConfig {
  kex::KemScheme kem = kex::KemScheme::kMlKem768;  // ml-kem-512/768/1024 only
  Duration max_clock_skew = Duration::seconds(30); // |now - T| of a request
  Duration key_lifetime = Duration::seconds(3600); // scheduled rekey period
  Duration key_change_lead = Duration::seconds(2); // new key distributed this long before use
};

struct StreamGroupConfig {
  std::uint16_t appid = 0x4000;
  std::string sv_id = "LAYERSEC01";
  SecurityConfig security;  // scheme and tag length of the stream (not kNone)
  std::string publisher;
  std::vector<std::string> subscribers;
};

struct KdcCounters {
  std::uint64_t requests = 0;
  std::uint64_t sessions = 0;
  std::uint64_t distributions = 0;
  std::uint64_t rekeys = 0;
  std::array<std::uint64_t, kKdcErrorCount> rejected{};
  [[nodiscard]] std::uint64_t rejected_by(KdcError e) const { return rejected[static_cast<std::size_t>(e)]; }
};

class Kdc {
 public:
  // Fresh KDC key pair and master secret from the DRBG.
  static Result<std::unique_ptr<Kdc>, KdcError> create(const KdcConfig& config);
  // From stored material (dk as kex::Kem private key bytes, MS 32 bytes).
  static Result<std::unique_ptr<Kdc>, KdcError> create(const KdcConfig& config, kex::KemKeyPair keys,
                                                       SecretBytes master_secret);
  ~Kdc();

  [[nodiscard]] const KdcConfig& config() const { return config_; }
  [[nodiscard]] ByteSpan public_key() const { return keys_.public_key; }

  // Registration (offline provisioning): returns A_ID for the IED's
  // provisioning file. Registering twice returns the same value.
  Result<SecretBytes, KdcError> register_ied(std::string_view id);
  // Withdraws an identity: its session ends, later requests are kUnknownIed.
  // Does not rekey by itself (remove it from its streams for that).
  void deregister_ied(std::string_view id);

  // Adds a stream with a first key (key id 1, valid from now).
  Result<std::size_t, KdcError> add_stream(const StreamGroupConfig& config, TimePoint now);

  struct AuthResult {
    std::vector<std::uint8_t> response;
    std::vector<Outgoing> distributions;  // current keys of the IED's streams
  };
  // Verifies an AuthRequest; on success returns the confirmation and the
  // current group keys of every stream the IED belongs to (send after the
  // response). Failures are counted; no state changes on failure.
  Result<AuthResult, KdcError> on_auth_request(ByteSpan msg, TimePoint now);

  // New key for a stream now (valid from now + key_change_lead) and its
  // distributions to every authenticated member.
  Result<std::vector<Outgoing>, KdcError> rekey(std::size_t stream, TimePoint now);
  // Membership changes rekey at once; a removed member gets nothing.
  Result<std::vector<Outgoing>, KdcError> add_member(std::size_t stream, std::string_view id, Role role,
                                                     TimePoint now);
  Result<std::vector<Outgoing>, KdcError> remove_member(std::size_t stream, std::string_view id, TimePoint now);
  // Scheduled rekeys due at `now` (successor distributed key_change_lead
  // before the current key's change time).
  std::vector<Outgoing> poll(TimePoint now);
  [[nodiscard]] TimePoint next_deadline() const;

  [[nodiscard]] std::uint32_t current_key_id(std::size_t stream) const;
  [[nodiscard]] std::size_t stream_count() const { return streams_.size(); }
  [[nodiscard]] bool has_session(std::string_view id) const;
  [[nodiscard]] const KdcCounters& counters() const { return counters_; }

 private:
  struct Session;
  struct Stream;
  Kdc() = default;
  // revokes_current: the rekey removes a member, so the key current until
  // now (the removed member holds it) is revoked: it is never handed to a
  // publisher that authenticates before the switch.
  Result<std::vector<Outgoing>, KdcError> new_key(Stream& st, TimePoint valid_from, bool revokes_current);
  Result<std::vector<Outgoing>, KdcError> distribute_all(Stream& st, const detail::KeySlot& slot);
  Result<SecretBytes, KdcError> identity_value(std::string_view id) const;
  KdcError reject(KdcError e);

  KdcConfig config_;
  std::unique_ptr<kex::Kem> kem_;
  kex::KemKeyPair keys_;
  std::unique_ptr<kex::KemPrivateKey> private_key_;
  SecretBytes master_secret_;
  std::map<std::string, std::uint64_t, std::less<>> registered_;  // id -> last accepted request time
  std::map<std::string, std::unique_ptr<Session>, std::less<>> sessions_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::uint32_t next_session_id_ = 1;
  KdcCounters counters_;
};

// ---- IED side -------------------------------------------------------------

struct IedCounters {
  std::uint64_t sessions = 0;
  std::uint64_t keys_installed = 0;
  std::array<std::uint64_t, kKdcErrorCount> rejected{};
  [[nodiscard]] std::uint64_t rejected_by(KdcError e) const { return rejected[static_cast<std::size_t>(e)]; }
};

class IedClient {
 public:
  // identity_value: A_ID from the provisioning file; kdc_public_key: ek_K.
  // Generates the IED's own ML-KEM key pair (ek_I registered in the request).
  static Result<std::unique_ptr<IedClient>, KdcError> create(std::string id, kex::KemScheme kem,
                                                             SecretBytes identity_value,
                                                             std::vector<std::uint8_t> kdc_public_key);
  ~IedClient();

  [[nodiscard]] const std::string& id() const { return id_; }
  // Builds an AuthRequest (a new one replaces any outstanding request).
  Result<std::vector<std::uint8_t>, KdcError> start(TimePoint now);
  // Checks the KDC's confirmation; on success the session key is installed.
  Status<KdcError> on_auth_response(ByteSpan msg, TimePoint now);
  // Opens a key distribution addressed to this IED.
  Result<GroupKeyUpdate, KdcError> on_key_distribution(ByteSpan msg, TimePoint now);

  [[nodiscard]] bool has_session() const { return session_key_.size() != 0; }
  [[nodiscard]] std::uint32_t session_id() const { return session_id_; }
  [[nodiscard]] const IedCounters& counters() const { return counters_; }

 private:
  IedClient() = default;
  KdcError reject(KdcError e);
  std::string id_;
  std::unique_ptr<kex::Kem> kem_;
  SecretBytes identity_value_;
  std::vector<std::uint8_t> kdc_public_key_;
  kex::KemKeyPair own_keys_;
  std::unique_ptr<kex::KemPrivateKey> own_private_;
  // Outstanding request.
  bool pending_ = false;
  std::array<std::uint8_t, kNonceSize> pending_nonce_{};
  std::array<std::uint8_t, 32> pending_hash_{};
  SecretBytes pending_ss_;
  // Established session.
  SecretBytes session_key_;
  std::uint32_t session_id_ = 0;
  std::uint64_t last_sequence_ = 0;
  // Per stream (APPID, svID): last installed key id and the session it came in.
  std::map<std::pair<std::uint16_t, std::string>, std::pair<std::uint32_t, std::uint32_t>> last_key_id_;
  IedCounters counters_;
};

}  // namespace layersec::sv::kdc
