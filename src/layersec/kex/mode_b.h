// Mode B key establishment (the seed paper §4.1.1, "Mode B: RSA-2048 Key
// Exchange"), sans-I/O: bytes and time in, bytes and keys out.
//
//   subscriber                                              publisher
//   KeyRequest  { cert_S, nonce_S, time_S, [kem_pk, sig_S] }  -->
//                         validate cert_S (chain, validity, purpose, service),
//                         time_S within the window, nonce_S never seen,
//                         [sig_S over the request]; pick/generate the SecOC key K
//                         and key id; (ct, ss) = Encaps(pk_S); KEK = HKDF(ss, TH1);
//   <-- KeyDelivery { cert_P, nonce_S, nonce_P, key_id, time_P, ct,
//                     AES-KW(KEK, K), sig_P over request||delivery }
//   validate cert_P for the service, nonce_S echoed, time_P in window,
//   sig_P; ss = Decaps(ct); K = unwrap; CK = HKDF(K||ss, TH2)
//   KeyConfirm { key_id, nonce_P, MAC(CK, TH2 || confirm) }  -->
//                         nonce_P of a pending delivery, in time, MAC ok
//                         -> only now is K activated for this subscriber.
//
// KEM: RSA-OAEP (rsa-2048 by default, as in the paper). For rsa-* the
// subscriber's certificate key IS the KEM key (keyEncipherment) and the
// request carries no extra key or signature. For every other KEM of kem.h
// (ML-KEM, X25519, ECDH P-256/P-521, NTRU, hybrid) the subscriber generates a
// fresh KEM key pair per handshake and signs the request with its certificate
// key (ECDSA P-256, Ed25519 or RSA-PSS). The publisher always signs the
// delivery, so both sides are authenticated and authorised for the service.
// Byte layouts, labels and derivations: docs/pki.md "Mode B".
//
// Time: `now` is nanoseconds since the Unix epoch on the time base the nodes
// share (gPTP / NTP-disciplined); it is used for the timestamp window, the
// confirmation timeout and certificate validity (now / 1e9). Nothing here
// reads a clock.
//
// Failure: every handler returns a typed ModeBError and leaves the state as it
// was (a forged or replayed message cannot abort a genuine handshake; only a
// handshake whose timeout passed is dropped); no key
// leaves either side before the checks above pass, and the publisher releases
// (activates) a key only after a valid confirmation. Nothing secret is logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/crypto/mac.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/pki.h"

namespace layersec::kex {

enum class ModeBError : std::uint8_t {
  kMalformed,            // does not parse (lengths, trailing bytes, field sizes)
  kUnsupportedVersion,   // protocol version other than 1
  kUnexpectedMessage,    // wrong message type, or not expected in the current state
  kWrongTranscript,      // fields do not match the request (service, group, KEM, MAC, key id)
  kReplay,               // nonce already used / not the nonce of this handshake
  kStale,                // timestamp outside the window, or confirmation too late
  kUnsupportedKem,       // KEM or MAC id not offered / not allowed by policy
  kKemKeyMismatch,       // RSA KEM whose size does not match the certificate key
  kCertMalformed,
  kCertExpired,
  kCertNotYetValid,
  kCertWrongCa,
  kCertInvalid,          // chain, purpose or extension problems
  kUnauthorisedService,  // certificate not authorised for the service
  kBadSignature,         // request or delivery signature wrong
  kKemFailure,           // bad KEM public key, ciphertext of the wrong length, decapsulation failed
  kKeyUnwrapFailed,      // the wrapped key failed its integrity check
  kBadConfirmation,      // the confirmation MAC is wrong
  kUnknownSession,       // no pending handshake for this confirmation / handle
  kTooManyPending,       // pending-handshake or replay-cache limit reached
  kBadArgument,          // caller error (key size, state)
  kBackend,              // crypto library failure
};
std::string_view to_string(ModeBError e);
ModeBError from_pki_error(PkiError e);

// Wire ids (docs/pki.md). Stable: never renumber.
std::uint8_t kem_wire_id(KemScheme s);
std::optional<KemScheme> kem_from_wire_id(std::uint8_t id);
// Confirmation MACs: 1 = HMAC-SHA256 (32-byte tag), 2 = AES-CMAC-256 (16-byte tag).
std::optional<std::uint8_t> confirm_mac_wire_id(crypto::MacAlgorithm a);

enum class ModeBMessageType : std::uint8_t { kKeyRequest = 1, kKeyDelivery = 2, kKeyConfirm = 3 };
inline constexpr std::uint8_t kModeBVersion = 1;
inline constexpr std::size_t kModeBNonceSize = 32;

struct ModeBConfig {
  KemScheme kem = KemScheme::kRsa2048;
  crypto::MacAlgorithm confirm_mac = crypto::MacAlgorithm::kHmacSha256;  // or kCmacAes256
  // Accepted |now - timestamp| for requests and deliveries.
  Duration max_skew = Duration::seconds(2);
  // Time from request (subscriber) / delivery (publisher) to the next message.
  Duration response_timeout = Duration::seconds(5);
  // Length of the distributed SecOC key (16, 24 or 32; CMAC-AES-256: 32).
  std::size_t key_size = 32;
  // Publisher limits.
  std::size_t max_pending = 64;
  std::size_t replay_cache_size = 4096;
};

// Parsed views of the three messages (for tests, fuzzing and logging of
// non-secret fields). Parsers check layout only; semantics are the
// handlers' job. Each rejects trailing bytes.
struct ModeBHeader {
  std::uint8_t version = 0;
  ModeBMessageType type{};
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;
  std::uint8_t kem_id = 0;
  std::uint8_t mac_id = 0;
};
struct KeyRequestView {
  ModeBHeader header;
  std::uint64_t timestamp_ns = 0;
  ByteSpan nonce_s;
  ByteSpan certificate;
  ByteSpan kem_public_key;  // empty for rsa-*
  ByteSpan signature;       // empty for rsa-*
  std::size_t signed_length = 0;  // bytes covered by `signature`
};
struct KeyDeliveryView {
  ModeBHeader header;
  std::uint64_t timestamp_ns = 0;
  ByteSpan nonce_s;
  ByteSpan nonce_p;
  std::uint32_t key_id = 0;
  ByteSpan certificate;
  ByteSpan ciphertext;
  ByteSpan wrapped_key;
  ByteSpan signature;
  std::size_t kek_transcript_length = 0;  // delivery bytes through the ciphertext field
  std::size_t signed_length = 0;          // delivery bytes before the signature field
};
struct KeyConfirmView {
  ModeBHeader header;
  std::uint32_t key_id = 0;
  ByteSpan nonce_p;
  ByteSpan tag;
  std::size_t mac_length = 0;  // bytes covered by the tag
};
[[nodiscard]] Result<ModeBHeader, ModeBError> parse_mode_b_header(ByteSpan msg);
[[nodiscard]] Result<KeyRequestView, ModeBError> parse_key_request(ByteSpan msg);
[[nodiscard]] Result<KeyDeliveryView, ModeBError> parse_key_delivery(ByteSpan msg);
[[nodiscard]] Result<KeyConfirmView, ModeBError> parse_key_confirm(ByteSpan msg);

// The subscriber (initiator) of one handshake at a time.
class ModeBSubscriber {
 public:
  enum class State : std::uint8_t {
    kIdle,              // nothing sent; start() builds a KeyRequest
    kAwaitingDelivery,  // KeyRequest sent; waiting for the publisher's KeyDelivery
    kEstablished,       // KeyConfirm built; key() holds the new SecOC key
  };

  // `identity` and `trust` must outlive the subscriber. Fails with
  // kUnsupportedKem if the KEM cannot be built, kKemKeyMismatch if an rsa-*
  // KEM does not match the certificate key.
  static Result<std::unique_ptr<ModeBSubscriber>, ModeBError> create(const ModeBConfig& config,
                                                                     const Identity& identity,
                                                                     const TrustStore& trust);

  // Builds the KeyRequest for (service, eventgroup). Allowed in any state:
  // a handshake in progress is abandoned and a held key is wiped (take it
  // first with take_key() to keep it).
  [[nodiscard]] Result<std::vector<std::uint8_t>, ModeBError> start(std::uint16_t service_id,
                                                                    std::uint16_t eventgroup_id,
                                                                    TimePoint now);
  // Processes a KeyDelivery; on success returns the KeyConfirm to send and
  // moves to kEstablished.
  [[nodiscard]] Result<std::vector<std::uint8_t>, ModeBError> on_delivery(ByteSpan msg,
                                                                          TimePoint now);

  [[nodiscard]] State state() const { return state_; }
  // When the current wait ends (request time + response_timeout).
  [[nodiscard]] TimePoint deadline() const { return deadline_; }
  // Valid in kEstablished.
  [[nodiscard]] std::uint32_t key_id() const { return key_id_; }
  [[nodiscard]] const SecretBytes& key() const { return key_; }
  // Moves the key out (the subscriber keeps kEstablished but no key).
  [[nodiscard]] SecretBytes take_key() { return std::move(key_); }
  // Drops any handshake in progress and wipes ephemeral keys.
  void reset();

 private:
  ModeBSubscriber() = default;
  ModeBConfig config_;
  const Identity* identity_ = nullptr;
  const TrustStore* trust_ = nullptr;
  std::unique_ptr<Kem> kem_;
  std::unique_ptr<KemPrivateKey> cert_kem_key_;   // rsa-*: the certificate key
  std::unique_ptr<KemPrivateKey> ephemeral_key_;  // other KEMs: per handshake
  std::vector<std::uint8_t> certificate_der_;
  State state_ = State::kIdle;
  std::vector<std::uint8_t> request_;
  std::uint16_t service_id_ = 0;
  std::uint16_t eventgroup_id_ = 0;
  std::uint8_t nonce_s_[kModeBNonceSize] = {};
  TimePoint deadline_;
  std::uint32_t key_id_ = 0;
  SecretBytes key_;
};

// A key the publisher activated after a valid confirmation.
struct ActivatedKey {
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;
  std::uint32_t key_id = 0;
  SecretBytes key;
  std::string subscriber;              // certificate CN
  std::string subscriber_fingerprint;  // SHA-256 of the certificate, hex
};

// What the publisher learned from an accepted KeyRequest.
struct AcceptedRequest {
  std::uint64_t handle = 0;
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;
  std::string subscriber;
  std::string subscriber_fingerprint;
};

// The publisher (responder) serving any number of subscribers.
class ModeBPublisher {
 public:
  // Per pending handshake.
  enum class SessionState : std::uint8_t {
    kRequestAccepted,  // request validated; deliver() will encapsulate a key
    kAwaitingConfirm,  // delivery built; waiting for the subscriber's KeyConfirm
  };

  // `identity` and `trust` must outlive the publisher. `allowed_kems` is the
  // policy (empty: only config.kem).
  static Result<std::unique_ptr<ModeBPublisher>, ModeBError> create(
      const ModeBConfig& config, const Identity& identity, const TrustStore& trust,
      std::vector<KemScheme> allowed_kems = {});

  // Validates a KeyRequest and opens a pending handshake.
  [[nodiscard]] Result<AcceptedRequest, ModeBError> on_request(ByteSpan msg, TimePoint now);
  // Encapsulates `key` (config.key_size bytes) with `key_id` for the pending
  // handshake `handle` and returns the KeyDelivery.
  [[nodiscard]] Result<std::vector<std::uint8_t>, ModeBError> deliver(std::uint64_t handle,
                                                                      const SecretBytes& key,
                                                                      std::uint32_t key_id,
                                                                      TimePoint now);
  // on_request + a fresh random session key with the next key id.
  [[nodiscard]] Result<std::vector<std::uint8_t>, ModeBError> respond(ByteSpan msg, TimePoint now);
  // Checks a KeyConfirm; on success the key is activated and returned.
  [[nodiscard]] Result<ActivatedKey, ModeBError> on_confirm(ByteSpan msg, TimePoint now);

  [[nodiscard]] std::size_t pending() const { return sessions_.size(); }
  [[nodiscard]] std::optional<SessionState> session_state(std::uint64_t handle) const;
  // Drops handshakes whose timeout passed (also done by every handler).
  void expire(TimePoint now);

 private:
  struct Session {
    std::uint64_t handle = 0;
    SessionState state = SessionState::kRequestAccepted;
    TimePoint deadline;
    std::vector<std::uint8_t> request;   // the KeyRequest bytes (transcript)
    std::vector<std::uint8_t> delivery;  // the KeyDelivery bytes (transcript)
    std::vector<std::uint8_t> kem_public_key;
    KemScheme kem{};
    std::uint8_t mac_id = 0;
    std::uint16_t service_id = 0;
    std::uint16_t eventgroup_id = 0;
    std::uint8_t nonce_s[kModeBNonceSize] = {};
    std::uint8_t nonce_p[kModeBNonceSize] = {};
    std::uint32_t key_id = 0;
    SecretBytes key;
    SecretBytes confirm_key;
    std::string subscriber;
    std::string fingerprint;
  };
  struct SeenNonce {
    std::uint8_t nonce[kModeBNonceSize];
    TimePoint expires;
  };
  ModeBPublisher() = default;
  Kem* kem_for(KemScheme s);
  [[nodiscard]] bool nonce_seen(ByteSpan nonce) const;
  Session* find(std::uint64_t handle);

  ModeBConfig config_;
  const Identity* identity_ = nullptr;
  const TrustStore* trust_ = nullptr;
  std::vector<KemScheme> allowed_;
  std::vector<std::pair<KemScheme, std::unique_ptr<Kem>>> kems_;
  std::vector<std::uint8_t> certificate_der_;
  std::vector<Session> sessions_;
  std::vector<SeenNonce> seen_;  // nonce_S of accepted requests and nonce_P of activated ones
  std::uint64_t next_handle_ = 1;
  std::uint32_t next_key_id_ = 1;
};

}  // namespace layersec::kex
