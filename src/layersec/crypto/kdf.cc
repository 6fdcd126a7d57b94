#include "layersec/crypto/kdf.h"

#include <cstring>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

namespace layersec::crypto {

Status<CryptoError> hkdf_sha256(ByteSpan salt, ByteSpan ikm, ByteSpan info, MutableByteSpan out) {
  if (out.empty() || out.size() > 255 * 32) return Err(CryptoError::kBadInput);
  static EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) return Err(CryptoError::kBackend);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  if (ctx == nullptr) return Err(CryptoError::kBackend);
  char digest[] = "SHA256";
  static std::uint8_t empty = 0;
  OSSL_PARAM params[5];
  std::size_t n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = OSSL_PARAM_construct_octet_string(
      OSSL_KDF_PARAM_KEY, const_cast<std::uint8_t*>(ikm.empty() ? &empty : ikm.data()), ikm.size());
  if (!salt.empty())
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
                                                    const_cast<std::uint8_t*>(salt.data()), salt.size());
  if (!info.empty())
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
                                                    const_cast<std::uint8_t*>(info.data()), info.size());
  params[n] = OSSL_PARAM_construct_end();
  const int rc = EVP_KDF_derive(ctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  if (rc != 1) return Err(CryptoError::kBackend);
  return {};
}

namespace {
const EVP_CIPHER* wrap_cipher(std::size_t kek) {
  switch (kek) {
    case 16: return EVP_aes_128_wrap();
    case 24: return EVP_aes_192_wrap();
    case 32: return EVP_aes_256_wrap();
    default: return nullptr;
  }
}

Status<CryptoError> wrap_op(ByteSpan kek, ByteSpan in, MutableByteSpan out, int enc) {
  const EVP_CIPHER* c = wrap_cipher(kek.size());
  if (c == nullptr) return Err(CryptoError::kBadKeyLength);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return Err(CryptoError::kBackend);
  EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
  int outl = 0, finl = 0;
  bool ok = EVP_CipherInit_ex(ctx, c, nullptr, kek.data(), nullptr, enc) == 1 &&
            EVP_CipherUpdate(ctx, out.data(), &outl, in.data(), static_cast<int>(in.size())) == 1 &&
            EVP_CipherFinal_ex(ctx, out.data() + outl, &finl) == 1 &&
            static_cast<std::size_t>(outl + finl) == out.size();
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) {
    std::memset(out.data(), 0, out.size());
    return Err(enc ? CryptoError::kBackend : CryptoError::kAuthFailed);
  }
  return {};
}
}  // namespace

Status<CryptoError> aes_key_wrap(ByteSpan kek, ByteSpan plaintext, MutableByteSpan out) {
  if (plaintext.size() < 16 || plaintext.size() % 8 != 0) return Err(CryptoError::kBadInput);
  if (out.size() != plaintext.size() + 8) return Err(CryptoError::kBufferTooSmall);
  return wrap_op(kek, plaintext, out, 1);
}

Status<CryptoError> aes_key_unwrap(ByteSpan kek, ByteSpan wrapped, MutableByteSpan out) {
  if (wrapped.size() < 24 || wrapped.size() % 8 != 0) return Err(CryptoError::kBadInput);
  if (out.size() != wrapped.size() - 8) return Err(CryptoError::kBufferTooSmall);
  return wrap_op(kek, wrapped, out, 0);
}

Status<CryptoError> sha256(std::span<const ByteSpan> parts, MutableByteSpan out) {
  if (out.size() != 32) return Err(CryptoError::kBufferTooSmall);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx == nullptr) return Err(CryptoError::kBackend);
  bool ok = EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
  for (const auto& p : parts)
    if (ok && !p.empty()) ok = EVP_DigestUpdate(ctx, p.data(), p.size()) == 1;
  unsigned int len = 0;
  ok = ok && EVP_DigestFinal_ex(ctx, out.data(), &len) == 1 && len == 32;
  EVP_MD_CTX_free(ctx);
  if (!ok) return Err(CryptoError::kBackend);
  return {};
}

Status<CryptoError> random_bytes(MutableByteSpan out) {
  if (out.empty()) return {};
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) return Err(CryptoError::kBackend);
  return {};
}

SecretBytes random_key(std::size_t n) {
  SecretBytes k(n);
  if (!random_bytes(k.mutable_span()).ok()) std::abort();  // no entropy: refuse to go on
  return k;
}

}  // namespace layersec::crypto
