// The NTRU paper's 4-step session-key negotiation (Figure 3 of "Research on
// Secure Communication on In-Vehicle Ethernet Based on Post-Quantum Algorithm
// NTRUEncrypt"; steps 1-2 follow TLS 1.2's RSA key exchange, steps 3-4 close
// the exchange), generalised to any KEM of kem.h. Sans-I/O: the objects take
// and return frames; the loopback TCP driver lives in bench/kex_bench.cc.
//
//   1. initiator -> responder  Hello       scheme id (1) || nonce_I (32)
//   2. responder -> initiator  PublicKey   nonce_R (32) || u32 len || public key
//   3. initiator -> responder  KeyExchange u32 len || KEM ciphertext
//   4. responder -> initiator  Finished    HMAC-SHA256(session_key, "finished" || H(transcript 1-3))
//
// Frames: type (1) || u32 body length || body (big-endian, ByteReader parsed,
// no trailing bytes). Session key (both sides, after step 3):
//   HKDF-SHA256(salt = nonce_I || nonce_R, IKM = KEM shared secret,
//               info = "layersec negotiation v1" || H(transcript 1-3), 32)
// where H = SHA-256 over the three frames as sent. The initiator accepts the
// key only after Finished verifies (constant-time compare). The responder's
// key pair is long-term (as the server certificate key in TLS-RSA); nonces
// are injected so the objects stay deterministic and clock-free.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/kex/kem.h"

namespace layersec::kex {

enum class NegotiationMessage : std::uint8_t { kHello = 1, kPublicKey = 2, kKeyExchange = 3, kFinished = 4 };

enum class NegotiationError : std::uint8_t {
  kMalformed,          // frame or body does not parse, or trailing bytes
  kUnexpectedMessage,  // a message type not allowed in the current state
  kSchemeMismatch,     // Hello names another scheme than the responder runs
  kKemFailure,         // bad public key, ciphertext of the wrong length, decapsulation failed
  kBadFinished,        // the Finished MAC does not verify: no key released
  kBadNonce,           // nonce not 32 bytes
  kBackend,            // hashing / HKDF failure
};
std::string_view to_string(NegotiationError e);

inline constexpr std::size_t kNegotiationFrameHeader = 5;  // type + u32 length
inline constexpr std::size_t kNegotiationNonceSize = 32;

// Total frame size announced by a header (for stream reassembly); 0 if the
// header is incomplete.
std::size_t negotiation_frame_size(ByteSpan header);

// Wire id of a scheme (1-based index into kAllKemSchemes).
std::uint8_t negotiation_scheme_id(KemScheme s);

class NegotiationInitiator {
 public:
  enum class State : std::uint8_t {
    kIdle,            // start() not yet called
    kAwaitPublicKey,  // Hello sent
    kAwaitFinished,   // KeyExchange sent, session key derived but not yet confirmed
    kDone,            // Finished verified: session_key() is valid
    kFailed,          // any error: nothing released
  };
  // `kem` must outlive the object.
  NegotiationInitiator(Kem& kem, ByteSpan nonce);
  [[nodiscard]] State state() const { return state_; }
  // Step 1: the Hello frame.
  Result<std::vector<std::uint8_t>, NegotiationError> start();
  // Step 2 in, step 3 out.
  Result<std::vector<std::uint8_t>, NegotiationError> on_public_key(ByteSpan frame);
  // Step 4 in.
  Status<NegotiationError> on_finished(ByteSpan frame);
  // Valid in kDone only (empty otherwise).
  [[nodiscard]] const SecretBytes& session_key() const { return state_ == State::kDone ? key_ : empty_; }

 private:
  Kem& kem_;
  std::array<std::uint8_t, kNegotiationNonceSize> nonce_{};
  bool nonce_ok_ = false;
  State state_ = State::kIdle;
  std::vector<std::uint8_t> transcript_;
  std::array<std::uint8_t, kNegotiationNonceSize> peer_nonce_{};
  SecretBytes key_;
  SecretBytes empty_;
};

class NegotiationResponder {
 public:
  enum class State : std::uint8_t {
    kAwaitHello,        // waiting for step 1
    kAwaitKeyExchange,  // PublicKey sent
    kDone,              // Finished sent: session_key() is valid
    kFailed,
  };
  // `kem`, `public_key` and `private_key` must outlive the object.
  NegotiationResponder(Kem& kem, ByteSpan public_key, const KemPrivateKey& private_key, ByteSpan nonce);
  [[nodiscard]] State state() const { return state_; }
  // Step 1 in, step 2 out.
  Result<std::vector<std::uint8_t>, NegotiationError> on_hello(ByteSpan frame);
  // Step 3 in, step 4 out.
  Result<std::vector<std::uint8_t>, NegotiationError> on_key_exchange(ByteSpan frame);
  [[nodiscard]] const SecretBytes& session_key() const { return state_ == State::kDone ? key_ : empty_; }

 private:
  Kem& kem_;
  ByteSpan public_key_;
  const KemPrivateKey& private_key_;
  std::array<std::uint8_t, kNegotiationNonceSize> nonce_{};
  bool nonce_ok_ = false;
  State state_ = State::kAwaitHello;
  std::vector<std::uint8_t> transcript_;
  std::array<std::uint8_t, kNegotiationNonceSize> peer_nonce_{};
  SecretBytes key_;
  SecretBytes empty_;
};

}  // namespace layersec::kex
