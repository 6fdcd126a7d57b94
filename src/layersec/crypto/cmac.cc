#include "layersec/crypto/cmac.h"

#include <algorithm>
#include <cstring>

#include <openssl/evp.h>

#include "layersec/base/secret.h"

namespace layersec::crypto {

namespace {

constexpr std::size_t kBlock = 16;
// Messages up to this size are padded in one stack buffer and run through
// the CBC context in a single call; longer ones go through update().
constexpr std::size_t kOneShotMax = 256;

void xor_block(std::uint8_t* dst, const std::uint8_t* src) {
  for (std::size_t i = 0; i < kBlock; ++i) dst[i] ^= src[i];
}

// SP 800-38B §6.1: out = in << 1, XOR 0x87 into the last byte when the
// shifted-out bit was 1 (without a branch on it).
void double_block(const std::uint8_t* in, std::uint8_t* out) {
  const auto carry = static_cast<std::uint8_t>(-(in[0] >> 7));
  for (std::size_t i = 0; i + 1 < kBlock; ++i)
    out[i] = static_cast<std::uint8_t>((in[i] << 1) | (in[i + 1] >> 7));
  out[kBlock - 1] = static_cast<std::uint8_t>((in[kBlock - 1] << 1) ^ (0x87 & carry));
}

// SP 800-38B §6.2 on the last block, `used` (0..16) of whose octets are
// message: a complete block is XORed with K1, a partial one padded with
// 10* and XORed with K2.
void finish_last_block(std::uint8_t* block, std::size_t used, const std::uint8_t* k1, const std::uint8_t* k2) {
  if (used == kBlock) {
    xor_block(block, k1);
    return;
  }
  block[used] = 0x80;
  std::memset(block + used + 1, 0, kBlock - used - 1);
  xor_block(block, k2);
}

const EVP_CIPHER* cbc_cipher(MacAlgorithm alg) {
  switch (alg) {
    case MacAlgorithm::kCmacAes128: return EVP_aes_128_cbc();
    case MacAlgorithm::kCmacAes192: return EVP_aes_192_cbc();
    case MacAlgorithm::kCmacAes256: return EVP_aes_256_cbc();
    default: return nullptr;
  }
}

}  // namespace

Result<std::unique_ptr<CbcCmac>, CryptoError> CbcCmac::create(MacAlgorithm alg, ByteSpan key) {
  const EVP_CIPHER* cipher = cbc_cipher(alg);
  if (cipher == nullptr) return Err(CryptoError::kBackend);
  if (key.size() != mac_key_size(alg)) return Err(CryptoError::kBadKeyLength);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return Err(CryptoError::kBackend);
  const std::array<std::uint8_t, kBlock> zero{};
  if (EVP_EncryptInit_ex(ctx, cipher, nullptr, key.data(), zero.data()) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
    EVP_CIPHER_CTX_free(ctx);
    return Err(CryptoError::kBackend);
  }
  std::unique_ptr<CbcCmac> m(new CbcCmac(alg, ctx));
  // L = E_K(0^128): the CBC encryption of one zero block from the zero IV.
  if (!m->cbc(zero.data(), kBlock)) return Err(CryptoError::kBackend);
  double_block(m->chain_.data(), m->k1_.data());
  double_block(m->k1_.data(), m->k2_.data());
  return m;
}

CbcCmac::~CbcCmac() {
  EVP_CIPHER_CTX_free(ctx_);  // cleanses the key schedule
  secure_zero(k1_.data(), k1_.size());
  secure_zero(k2_.data(), k2_.size());
  secure_zero(chain_.data(), chain_.size());
  secure_zero(pending_.data(), pending_.size());
}

bool CbcCmac::cbc(const std::uint8_t* in, std::size_t n) {
  std::array<std::uint8_t, kOneShotMax> scratch;
  while (n > 0) {
    const std::size_t chunk = std::min(n, scratch.size());
    if (EVP_Cipher(ctx_, scratch.data(), in, static_cast<unsigned>(chunk)) <= 0) {
      recover();
      return false;
    }
    in += chunk;
    n -= chunk;
    if (n == 0) std::memcpy(chain_.data(), scratch.data() + chunk - kBlock, kBlock);
  }
  return true;
}

void CbcCmac::recover() {
  ok_ = false;
  chain_.fill(0);
  // Back to the zero IV with the same key schedule; if even that fails,
  // every later call fails too (EVP_Cipher on a broken context).
  (void)EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, chain_.data());
}

bool CbcCmac::absorb_pending() {
  std::array<std::uint8_t, kBlock> block = pending_;
  if (first_) xor_block(block.data(), chain_.data());
  first_ = false;
  pending_len_ = 0;
  return cbc(block.data(), kBlock);
}

void CbcCmac::begin() {
  first_ = true;
  pending_len_ = 0;
  ok_ = true;
}

void CbcCmac::update(ByteSpan data) {
  if (!ok_ || data.empty()) return;
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  const std::size_t take = std::min(kBlock - pending_len_, n);
  std::memcpy(pending_.data() + pending_len_, p, take);
  pending_len_ += take;
  p += take;
  n -= take;
  if (n == 0) return;  // a full pending block may still be the last one
  if (!absorb_pending()) return;
  // Every whole block of the rest except the last block, which may be final.
  const std::size_t bulk = (n - 1) / kBlock * kBlock;
  if (bulk > 0 && !cbc(p, bulk)) return;
  std::memcpy(pending_.data(), p + bulk, n - bulk);
  pending_len_ = n - bulk;
}

Status<CryptoError> CbcCmac::finish(MutableByteSpan out) {
  if (out.empty()) return Err(CryptoError::kBufferTooSmall);
  if (!ok_) {
    begin();
    return Err(CryptoError::kBackend);
  }
  std::array<std::uint8_t, kBlock> block{};
  std::memcpy(block.data(), pending_.data(), pending_len_);
  finish_last_block(block.data(), pending_len_, k1_.data(), k2_.data());
  if (first_) xor_block(block.data(), chain_.data());
  const bool done = cbc(block.data(), kBlock);
  secure_zero(block.data(), block.size());
  secure_zero(pending_.data(), pending_.size());
  begin();
  if (!done) return Err(CryptoError::kBackend);
  std::memcpy(out.data(), chain_.data(), std::min(out.size(), kBlock));
  return {};
}

Status<CryptoError> CbcCmac::compute(ByteSpan message, MutableByteSpan out) {
  if (out.empty()) return Err(CryptoError::kBufferTooSmall);
  if (message.size() > kOneShotMax) {
    begin();
    update(message);
    return finish(out);
  }
  // The whole padded message in one buffer: first block ^= chaining value,
  // last block ^= K1 (complete) or K2 (padded), then one CBC call in place.
  begin();
  std::array<std::uint8_t, kOneShotMax> buf;
  const std::size_t len = message.size();
  const std::size_t blocks = len == 0 ? 1 : (len + kBlock - 1) / kBlock;
  const std::size_t total = blocks * kBlock;
  if (len > 0) std::memcpy(buf.data(), message.data(), len);
  finish_last_block(buf.data() + total - kBlock, len - (total - kBlock), k1_.data(), k2_.data());
  xor_block(buf.data(), chain_.data());
  if (EVP_Cipher(ctx_, buf.data(), buf.data(), static_cast<unsigned>(total)) <= 0) {
    recover();
    begin();
    return Err(CryptoError::kBackend);
  }
  std::memcpy(chain_.data(), buf.data() + total - kBlock, kBlock);
  std::memcpy(out.data(), chain_.data(), std::min(out.size(), kBlock));
  return {};
}

}  // namespace layersec::crypto
