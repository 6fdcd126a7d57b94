#include "layersec/crypto/mac.h"

#include <array>
#include <cstring>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "layersec/base/secret.h"
#include "layersec/crypto/chaskey.h"
#include "layersec/crypto/cmac.h"

namespace layersec::crypto {

std::string_view to_string(CryptoError e) {
  switch (e) {
    case CryptoError::kBadKeyLength: return "bad key length";
    case CryptoError::kBadTagLength: return "bad tag length";
    case CryptoError::kBadNonceLength: return "bad nonce length";
    case CryptoError::kBufferTooSmall: return "buffer too small";
    case CryptoError::kAuthFailed: return "authentication failed";
    case CryptoError::kBadInput: return "bad input";
    case CryptoError::kBackend: return "crypto backend failure";
  }
  return "unknown";
}

std::string_view to_string(MacAlgorithm a) {
  switch (a) {
    case MacAlgorithm::kCmacAes128: return "cmac-aes128";
    case MacAlgorithm::kCmacAes192: return "cmac-aes192";
    case MacAlgorithm::kCmacAes256: return "cmac-aes256";
    case MacAlgorithm::kHmacSha256: return "hmac-sha256";
    case MacAlgorithm::kBlake2s256: return "blake2s-256";
    case MacAlgorithm::kChaskey8: return "chaskey";
    case MacAlgorithm::kChaskey12: return "chaskey12";
  }
  return "unknown";
}

std::size_t mac_key_size(MacAlgorithm a) {
  switch (a) {
    case MacAlgorithm::kCmacAes128: return 16;
    case MacAlgorithm::kCmacAes192: return 24;
    case MacAlgorithm::kCmacAes256: return 32;
    case MacAlgorithm::kHmacSha256: return 32;
    case MacAlgorithm::kBlake2s256: return 32;
    case MacAlgorithm::kChaskey8:
    case MacAlgorithm::kChaskey12: return 16;
  }
  return 0;
}

std::size_t mac_tag_size(MacAlgorithm a) {
  switch (a) {
    case MacAlgorithm::kCmacAes128:
    case MacAlgorithm::kCmacAes192:
    case MacAlgorithm::kCmacAes256:
    case MacAlgorithm::kChaskey8:
    case MacAlgorithm::kChaskey12: return 16;
    case MacAlgorithm::kHmacSha256:
    case MacAlgorithm::kBlake2s256: return 32;
  }
  return 0;
}

bool ct_equal(ByteSpan a, ByteSpan b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool ct_equal_bits(ByteSpan a, ByteSpan b, std::size_t bits) {
  const std::size_t full = bits / 8;
  const std::size_t rem = bits % 8;
  const std::size_t need = full + (rem ? 1 : 0);
  if (bits == 0 || a.size() < need || b.size() < need) return false;
  unsigned diff = 0;
  if (full) diff |= static_cast<unsigned>(CRYPTO_memcmp(a.data(), b.data(), full) != 0);
  if (rem) {
    const auto mask = static_cast<std::uint8_t>(0xFF << (8 - rem));
    diff |= static_cast<unsigned>((a[full] ^ b[full]) & mask);
  }
  return diff == 0;
}

void truncate_bits(ByteSpan tag, std::size_t bits, MutableByteSpan out) {
  const std::size_t n = (bits + 7) / 8;
  std::memcpy(out.data(), tag.data(), n);
  if (bits % 8) out[n - 1] &= static_cast<std::uint8_t>(0xFF << (8 - bits % 8));
}

Status<CryptoError> Mac::compute(ByteSpan message, MutableByteSpan out) {
  begin();
  update(message);
  return finish(out);
}

Status<CryptoError> Mac::compute(std::span<const ByteSpan> parts, MutableByteSpan out) {
  begin();
  for (const auto& p : parts) update(p);
  return finish(out);
}

Status<CryptoError> Mac::compute_bits(std::span<const ByteSpan> parts, std::size_t bits,
                                      MutableByteSpan out) {
  if (bits == 0 || bits > 8 * tag_size()) return Err(CryptoError::kBadTagLength);
  if (out.size() < (bits + 7) / 8) return Err(CryptoError::kBufferTooSmall);
  std::array<std::uint8_t, 64> full{};
  auto st = compute(parts, MutableByteSpan(full.data(), tag_size()));
  if (!st) return st;
  truncate_bits(ByteSpan(full.data(), tag_size()), bits, out);
  secure_zero(full.data(), full.size());
  return {};
}

bool Mac::verify_bits(std::span<const ByteSpan> parts, ByteSpan tag, std::size_t bits) {
  if (bits == 0 || bits > 8 * tag_size() || tag.size() < (bits + 7) / 8) return false;
  std::array<std::uint8_t, 64> full{};
  auto st = compute(parts, MutableByteSpan(full.data(), tag_size()));
  if (!st) return false;
  const bool same = ct_equal_bits(ByteSpan(full.data(), tag_size()), tag, bits);
  secure_zero(full.data(), full.size());
  return same;
}

namespace {

// An OpenSSL EVP_MAC context keyed once; begin() re-initialises it with the
// stored key (EVP_MAC_init with a NULL key), so nothing is allocated per
// message.
class EvpMac final : public Mac {
 public:
  EvpMac(MacAlgorithm alg, EVP_MAC_CTX* ctx, std::size_t tag) : alg_(alg), ctx_(ctx), tag_(tag) {}
  ~EvpMac() override { EVP_MAC_CTX_free(ctx_); }
  EvpMac(const EvpMac&) = delete;
  EvpMac& operator=(const EvpMac&) = delete;

  [[nodiscard]] MacAlgorithm algorithm() const override { return alg_; }
  [[nodiscard]] std::size_t tag_size() const override { return tag_; }
  using Mac::compute;
  // begin + update + finish in one call, with the tag written straight into
  // `out` when it has room for the whole tag (the hot path of SecOC).
  Status<CryptoError> compute(ByteSpan message, MutableByteSpan out) override {
    if (out.size() < tag_) {
      begin();
      update(message);
      return finish(out);
    }
    std::size_t len = 0;
    if (EVP_MAC_init(ctx_, nullptr, 0, nullptr) != 1 ||
        (!message.empty() && EVP_MAC_update(ctx_, message.data(), message.size()) != 1) ||
        EVP_MAC_final(ctx_, out.data(), &len, out.size()) != 1 || len != tag_) {
      ok_ = false;
      return Err(CryptoError::kBackend);
    }
    return {};
  }
  void begin() override { ok_ = EVP_MAC_init(ctx_, nullptr, 0, nullptr) == 1; }
  void update(ByteSpan data) override {
    if (ok_ && !data.empty()) ok_ = EVP_MAC_update(ctx_, data.data(), data.size()) == 1;
  }
  Status<CryptoError> finish(MutableByteSpan out) override {
    if (out.empty()) return Err(CryptoError::kBufferTooSmall);
    std::size_t len = 0;
    if (out.size() >= tag_) {  // common case: no intermediate copy
      if (!ok_ || EVP_MAC_final(ctx_, out.data(), &len, out.size()) != 1 || len != tag_) {
        ok_ = false;
        return Err(CryptoError::kBackend);
      }
      return {};
    }
    std::array<std::uint8_t, EVP_MAX_MD_SIZE> full;
    if (!ok_ || EVP_MAC_final(ctx_, full.data(), &len, full.size()) != 1 || len != tag_) {
      ok_ = false;
      return Err(CryptoError::kBackend);
    }
    std::memcpy(out.data(), full.data(), std::min(out.size(), tag_));
    secure_zero(full.data(), full.size());
    return {};
  }

 private:
  MacAlgorithm alg_;
  EVP_MAC_CTX* ctx_;
  std::size_t tag_;
  // make_evp_mac() hands the context over freshly keyed by EVP_MAC_init, so
  // it is ready for update() without a begin(), like Chaskey.
  bool ok_ = true;
};

EVP_MAC* fetch_mac(const char* name) {
  // Fetched once per process and kept (OpenSSL owns it until exit).
  return EVP_MAC_fetch(nullptr, name, nullptr);
}

Result<std::unique_ptr<Mac>, CryptoError> make_evp_mac(MacAlgorithm alg, ByteSpan key) {
  static EVP_MAC* cmac = fetch_mac("CMAC");
  static EVP_MAC* hmac = fetch_mac("HMAC");
  static EVP_MAC* blake = fetch_mac("BLAKE2SMAC");
  EVP_MAC* mac = nullptr;
  OSSL_PARAM params[2] = {OSSL_PARAM_END, OSSL_PARAM_END};
  char cipher_128[] = "AES-128-CBC";
  char cipher_192[] = "AES-192-CBC";
  char cipher_256[] = "AES-256-CBC";
  char digest[] = "SHA256";
  switch (alg) {
    case MacAlgorithm::kCmacAes128:
    case MacAlgorithm::kCmacAes192:
    case MacAlgorithm::kCmacAes256:
      if (key.size() != mac_key_size(alg)) return Err(CryptoError::kBadKeyLength);
      mac = cmac;
      params[0] = OSSL_PARAM_construct_utf8_string(
          "cipher",
          alg == MacAlgorithm::kCmacAes128   ? cipher_128
          : alg == MacAlgorithm::kCmacAes192 ? cipher_192
                                             : cipher_256,
          0);
      break;
    case MacAlgorithm::kHmacSha256:
      if (key.empty()) return Err(CryptoError::kBadKeyLength);
      mac = hmac;
      params[0] = OSSL_PARAM_construct_utf8_string("digest", digest, 0);
      break;
    case MacAlgorithm::kBlake2s256:
      if (key.empty() || key.size() > 32) return Err(CryptoError::kBadKeyLength);
      mac = blake;
      break;
    default:
      return Err(CryptoError::kBackend);
  }
  if (mac == nullptr) return Err(CryptoError::kBackend);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  if (ctx == nullptr) return Err(CryptoError::kBackend);
  if (EVP_MAC_init(ctx, key.data(), key.size(), params) != 1) {
    EVP_MAC_CTX_free(ctx);
    return Err(CryptoError::kBackend);
  }
  return std::unique_ptr<Mac>(new EvpMac(alg, ctx, mac_tag_size(alg)));
}

}  // namespace

Result<std::unique_ptr<Mac>, CryptoError> make_mac(MacAlgorithm algorithm, ByteSpan key) {
  switch (algorithm) {
    case MacAlgorithm::kChaskey8:
    case MacAlgorithm::kChaskey12: {
      auto c = Chaskey::create(key, algorithm == MacAlgorithm::kChaskey12 ? 12 : 8);
      if (!c) return Err(c.error());
      return std::unique_ptr<Mac>(std::move(c).value());
    }
    case MacAlgorithm::kCmacAes128:
    case MacAlgorithm::kCmacAes192:
    case MacAlgorithm::kCmacAes256: {
      auto c = CbcCmac::create(algorithm, key);
      if (!c) return Err(c.error());
      return std::unique_ptr<Mac>(std::move(c).value());
    }
    default:
      return make_evp_mac(algorithm, key);
  }
}

Result<std::unique_ptr<Mac>, CryptoError> make_openssl_cmac(MacAlgorithm alg, ByteSpan key) {
  switch (alg) {
    case MacAlgorithm::kCmacAes128:
    case MacAlgorithm::kCmacAes192:
    case MacAlgorithm::kCmacAes256: return make_evp_mac(alg, key);
    default: return Err(CryptoError::kBackend);
  }
}

}  // namespace layersec::crypto
