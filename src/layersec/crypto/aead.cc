#include "layersec/crypto/aead.h"

#include <array>
#include <cstring>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "layersec/base/secret.h"

namespace layersec::crypto {
namespace {

const EVP_CIPHER* gcm_cipher(std::size_t key_size) {
  return key_size == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
}

// Sets the IV on a keyed context, first changing the context's IV length
// when it differs from the previous message's (OpenSSL keeps the length set
// by EVP_CTRL_GCM_SET_IVLEN for every later message).
bool set_iv(EVP_CIPHER_CTX* ctx, std::size_t& current_len, ByteSpan iv, int enc) {
  if (iv.size() != current_len) {
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr) != 1)
      return false;
    current_len = iv.size();
  }
  return EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, iv.data(), enc) == 1;
}

// EVP_CipherUpdate takes an int length: feed longer buffers in pieces so a
// size above INT_MAX is never truncated by the cast. out == nullptr feeds AAD.
bool cipher_update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in, std::size_t n) {
  constexpr std::size_t kMaxPiece = std::size_t{1} << 30;
  while (n > 0) {
    const std::size_t piece = n < kMaxPiece ? n : kMaxPiece;
    int outl = 0;
    if (EVP_CipherUpdate(ctx, out, &outl, in, static_cast<int>(piece)) != 1) return false;
    if (out != nullptr) out += piece;
    in += piece;
    n -= piece;
  }
  return true;
}

bool add_aad(EVP_CIPHER_CTX* ctx, std::span<const ByteSpan> aad) {
  for (const auto& a : aad) {
    if (!cipher_update(ctx, nullptr, a.data(), a.size())) return false;
  }
  return true;
}

// The GCM tag as an OpenSSL 3 parameter. The tag is read and set through
// EVP_CIPHER_CTX_get_params/set_params with this one-element array instead of
// EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_GET_TAG/SET_TAG): the ctrl route builds
// the same parameter but costs more per message in OpenSSL 3.0 (a seal+open
// pair of 64 octets: 594-622 instead of 668-714 ns in a stand-alone loop;
// docs/macsec_link.md, "CPU per frame"). The benchmarks' bare-OpenSSL
// baselines read and set the tag the same way (bench/bare_gcm_tag.h).
struct TagParam {
  OSSL_PARAM params[2];
  TagParam(std::uint8_t* tag, std::size_t size)
      : params{OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, size),
               OSSL_PARAM_construct_end()} {}
};

}  // namespace

Result<AesGcm, CryptoError> AesGcm::create(ByteSpan key) {
  if (key.size() != 16 && key.size() != 32) return Err(CryptoError::kBadKeyLength);
  AesGcm g;
  g.key_size_ = key.size();
  g.enc_ = EVP_CIPHER_CTX_new();
  g.dec_ = EVP_CIPHER_CTX_new();
  if (g.enc_ == nullptr || g.dec_ == nullptr) return Err(CryptoError::kBackend);
  if (EVP_CipherInit_ex(g.enc_, gcm_cipher(key.size()), nullptr, key.data(), nullptr, 1) != 1 ||
      EVP_CipherInit_ex(g.dec_, gcm_cipher(key.size()), nullptr, key.data(), nullptr, 0) != 1) {
    return Err(CryptoError::kBackend);
  }
  return g;
}

AesGcm::~AesGcm() {
  EVP_CIPHER_CTX_free(enc_);  // OpenSSL cleanses the key schedule
  EVP_CIPHER_CTX_free(dec_);
}

AesGcm::AesGcm(AesGcm&& o) noexcept
    : enc_(o.enc_),
      dec_(o.dec_),
      key_size_(o.key_size_),
      enc_iv_len_(o.enc_iv_len_),
      dec_iv_len_(o.dec_iv_len_) {
  o.enc_ = nullptr;
  o.dec_ = nullptr;
}

AesGcm& AesGcm::operator=(AesGcm&& o) noexcept {
  if (this != &o) {
    EVP_CIPHER_CTX_free(enc_);
    EVP_CIPHER_CTX_free(dec_);
    enc_ = o.enc_;
    dec_ = o.dec_;
    key_size_ = o.key_size_;
    enc_iv_len_ = o.enc_iv_len_;
    dec_iv_len_ = o.dec_iv_len_;
    o.enc_ = nullptr;
    o.dec_ = nullptr;
  }
  return *this;
}

Status<CryptoError> AesGcm::seal(ByteSpan iv, ByteSpan aad, MutableByteSpan data,
                                 MutableByteSpan tag) {
  const ByteSpan parts[1] = {aad};
  return seal(iv, parts, data, tag);
}

Status<CryptoError> AesGcm::seal(ByteSpan iv, std::span<const ByteSpan> aad, MutableByteSpan data,
                                 MutableByteSpan tag) {
  if (iv.empty() || iv.size() > 128) return Err(CryptoError::kBadNonceLength);
  if (!gcm_tag_length_allowed(tag.size())) return Err(CryptoError::kBadTagLength);
  if (!set_iv(enc_, enc_iv_len_, iv, 1) || !add_aad(enc_, aad)) return Err(CryptoError::kBackend);
  int outl = 0;
  if (!cipher_update(enc_, data.data(), data.data(), data.size())) return Err(CryptoError::kBackend);
  std::uint8_t full[kGcmTagSize];
  TagParam get(full, kGcmTagSize);
  if (EVP_CipherFinal_ex(enc_, full, &outl) != 1 || EVP_CIPHER_CTX_get_params(enc_, get.params) != 1)
    return Err(CryptoError::kBackend);
  std::memcpy(tag.data(), full, tag.size());
  return {};
}

Status<CryptoError> AesGcm::open(ByteSpan iv, ByteSpan aad, MutableByteSpan data, ByteSpan tag) {
  const ByteSpan parts[1] = {aad};
  return open(iv, parts, data, tag);
}

Status<CryptoError> AesGcm::open(ByteSpan iv, std::span<const ByteSpan> aad, MutableByteSpan data,
                                 ByteSpan tag) {
  if (iv.empty() || iv.size() > 128) return Err(CryptoError::kBadNonceLength);
  if (!gcm_tag_length_allowed(tag.size())) return Err(CryptoError::kBadTagLength);
  if (!set_iv(dec_, dec_iv_len_, iv, 0) || !add_aad(dec_, aad)) return Err(CryptoError::kBackend);
  int outl = 0;
  if (!cipher_update(dec_, data.data(), data.data(), data.size())) return Err(CryptoError::kBackend);
  // OpenSSL compares the tag in constant time inside EVP_CipherFinal_ex.
  std::uint8_t expected[kGcmTagSize];
  std::memcpy(expected, tag.data(), tag.size());
  TagParam set(expected, tag.size());
  if (EVP_CIPHER_CTX_set_params(dec_, set.params) != 1) return Err(CryptoError::kBackend);
  std::uint8_t scratch[16];
  if (EVP_CipherFinal_ex(dec_, scratch, &outl) != 1) {
    if (!data.empty()) secure_zero(data.data(), data.size());
    return Err(CryptoError::kAuthFailed);
  }
  return {};
}

Result<AesGmac, CryptoError> AesGmac::create(ByteSpan key) {
  auto g = AesGcm::create(key);
  if (!g) return Err(g.error());
  return AesGmac(std::move(g).value());
}

Status<CryptoError> AesGmac::compute(ByteSpan iv, std::span<const ByteSpan> parts,
                                     MutableByteSpan tag) {
  return gcm_.seal(iv, parts, MutableByteSpan{}, tag);
}

Status<CryptoError> AesGmac::compute(ByteSpan iv, ByteSpan message, MutableByteSpan tag) {
  const ByteSpan parts[1] = {message};
  return compute(iv, parts, tag);
}

bool AesGmac::verify(ByteSpan iv, std::span<const ByteSpan> parts, ByteSpan tag) {
  if (!gcm_tag_length_allowed(tag.size())) return false;
  std::uint8_t full[kGcmTagSize];
  if (!compute(iv, parts, MutableByteSpan(full, tag.size())).ok()) return false;
  return ct_equal(ByteSpan(full, tag.size()), tag);
}

}  // namespace layersec::crypto
