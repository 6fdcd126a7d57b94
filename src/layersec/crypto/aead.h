// AES-GCM (NIST SP 800-38D) seal/open in place, and AES-GMAC (GCM with an
// empty plaintext). One OpenSSL EVP_CIPHER_CTX per key, built at
// construction; per message only the IV is set. Keys are 16 or 32 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/crypto/mac.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace layersec::crypto {

inline constexpr std::size_t kGcmTagSize = 16;

// True for the tag lengths (bytes) NIST SP 800-38D §5.2.1.2 allows: 16, 15,
// 14, 13, 12 and, for specific applications, 8 and 4.
constexpr bool gcm_tag_length_allowed(std::size_t n) {
  return n == 4 || n == 8 || (n >= 12 && n <= kGcmTagSize);
}

class AesGcm {
 public:
  // key: 16 (GCM-AES-128) or 32 (GCM-AES-256) bytes.
  static Result<AesGcm, CryptoError> create(ByteSpan key);
  ~AesGcm();
  AesGcm(AesGcm&&) noexcept;
  AesGcm& operator=(AesGcm&&) noexcept;
  AesGcm(const AesGcm&) = delete;
  AesGcm& operator=(const AesGcm&) = delete;

  [[nodiscard]] std::size_t key_size() const { return key_size_; }

  // Encrypts `data` in place and writes the tag (tag.size() bytes: 16, or a
  // truncation SP 800-38D §5.2.1.2 permits: 4, 8, 12..15; others fail with
  // kBadTagLength). iv is normally 12 bytes (any length 1..128 accepted; the
  // length may change from one message to the next).
  Status<CryptoError> seal(ByteSpan iv, ByteSpan aad, MutableByteSpan data, MutableByteSpan tag);
  // Same with AAD given in several parts (e.g. header + clear tags).
  Status<CryptoError> seal(ByteSpan iv, std::span<const ByteSpan> aad, MutableByteSpan data,
                           MutableByteSpan tag);
  // Checks the tag (same lengths as seal) and decrypts `data` in place. A
  // shorter tag authenticates with its own, lower strength: callers must
  // take the tag length from their configuration, never from the input.
  // On kAuthFailed the contents
  // of `data` are unspecified (the caller must not deliver them; they are
  // zeroed here as a precaution).
  Status<CryptoError> open(ByteSpan iv, ByteSpan aad, MutableByteSpan data, ByteSpan tag);
  Status<CryptoError> open(ByteSpan iv, std::span<const ByteSpan> aad, MutableByteSpan data,
                           ByteSpan tag);

 private:
  AesGcm() = default;
  EVP_CIPHER_CTX* enc_ = nullptr;
  EVP_CIPHER_CTX* dec_ = nullptr;
  std::size_t key_size_ = 0;
  // IV length each context is currently set to (OpenSSL keeps it across
  // messages, so it is reset whenever it changes).
  std::size_t enc_iv_len_ = 12;
  std::size_t dec_iv_len_ = 12;
};

// AES-GMAC: GCM authentication of `parts` (as AAD) with no plaintext.
class AesGmac {
 public:
  static Result<AesGmac, CryptoError> create(ByteSpan key);
  // Writes tag.size() bytes of the tag (16, or 4, 8, 12..15 as for AesGcm).
  Status<CryptoError> compute(ByteSpan iv, std::span<const ByteSpan> parts, MutableByteSpan tag);
  Status<CryptoError> compute(ByteSpan iv, ByteSpan message, MutableByteSpan tag);
  // Constant-time verification of a tag of tag.size() bytes (false for a
  // length AesGcm would refuse).
  [[nodiscard]] bool verify(ByteSpan iv, std::span<const ByteSpan> parts, ByteSpan tag);

 private:
  explicit AesGmac(AesGcm gcm) : gcm_(std::move(gcm)) {}
  AesGcm gcm_;
};

}  // namespace layersec::crypto
