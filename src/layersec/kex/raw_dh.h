// The Diffie-Hellman functions under the DH-KEMs (kem.h), without their KDF:
// RFC 7748 §5 X25519(k, u), and on P-256 / P-521 the x-coordinate of d·Q
// (SEC 1 §3.3.1, the NIST SP 800-56A ECC CDH primitive). For known-answer
// tests of the curves (`layersec selftest`) and for composition; protocols
// establish keys through kem.h, never through raw DH.
//
// Keys are the DH-KEMs' formats: X25519 a 32-byte scalar (clamped by the
// function) and a 32-byte u-coordinate; EC a big-endian scalar of 32 / 66
// bytes and an uncompressed point (0x04 || x || y), checked to be on the
// curve. Nothing secret is logged.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/kex/kem.h"

namespace layersec::kex {

class RawDh {
 public:
  // kX25519, kEcdhP256 or kEcdhP521; throws std::invalid_argument for
  // another scheme (a programming error).
  explicit RawDh(KemScheme scheme);
  ~RawDh();
  RawDh(RawDh&&) noexcept;
  RawDh& operator=(RawDh&&) noexcept;

  [[nodiscard]] KemScheme scheme() const { return scheme_; }
  // The public key of `private_key`; kBadPrivateKey for a malformed or
  // out-of-range scalar.
  Result<std::vector<std::uint8_t>, KemError> public_key(ByteSpan private_key);
  // DH(private_key, peer_public): kBadPrivateKey as above, kBadCiphertext for
  // a peer that is not a valid public key or an all-zero X25519 result (a
  // low-order point).
  Result<SecretBytes, KemError> shared_secret(ByteSpan private_key, ByteSpan peer_public);

 private:
  KemScheme scheme_;
  std::unique_ptr<Kem> kem_;  // the DH-KEM whose key import and DH step are used
};

}  // namespace layersec::kex
