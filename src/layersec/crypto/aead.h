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

  // Encrypts `data` in place and writes the tag (1..16 bytes, tag.size()).
  // iv is normally 12 bytes (any length 1..128 accepted).
  Status<CryptoError> seal(ByteSpan iv, ByteSpan aad, MutableByteSpan data, MutableByteSpan tag);
  // Same with AAD given in several parts (e.g. header + clear tags).
  Status<CryptoError> seal(ByteSpan iv, std::span<const ByteSpan> aad, MutableByteSpan data,
                           MutableByteSpan tag);
  // Checks the tag and decrypts `data` in place. On kAuthFailed the contents
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
};

// AES-GMAC: GCM authentication of `parts` (as AAD) with no plaintext.
class AesGmac {
 public:
  static Result<AesGmac, CryptoError> create(ByteSpan key);
  // Writes tag.size() (1..16) bytes of the tag.
  Status<CryptoError> compute(ByteSpan iv, std::span<const ByteSpan> parts, MutableByteSpan tag);
  Status<CryptoError> compute(ByteSpan iv, ByteSpan message, MutableByteSpan tag);
  // Constant-time verification of a tag of tag.size() bytes.
  [[nodiscard]] bool verify(ByteSpan iv, std::span<const ByteSpan> parts, ByteSpan tag);

 private:
  explicit AesGmac(AesGcm gcm) : gcm_(std::move(gcm)) {}
  AesGcm gcm_;
};

}  // namespace layersec::crypto
