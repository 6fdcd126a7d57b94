// Chaskey / Chaskey-12, written from the published algorithm (Mouha et al.,
// "Chaskey: An Efficient MAC Algorithm for 32-bit Microcontrollers", SAC 2014;
// Mouha, "Chaskey: a MAC Algorithm for Microcontrollers -- Status Update and
// Proposal of Chaskey-12", ePrint 2015/1182).
//
// State: four 32-bit words; message and key read as little-endian words.
// Subkeys K1 = 2K, K2 = 4K in GF(2^128) with the reduction constant 0x87.
// Every block but the last: v ^= m; v = pi(v). Last block: a full one is
// xored with K1; a partial one is padded with 0x01 then zeros and uses K2.
// tag = pi(v ^ m_last ^ K_i) ^ K_i, truncated to its leading bytes.
#include "layersec/crypto/chaskey.h"

#include <cstring>

#include "layersec/base/secret.h"

namespace layersec::crypto {
namespace {

using State = std::array<std::uint32_t, 4>;

inline std::uint32_t rotl(std::uint32_t x, int b) { return (x << b) | (x >> (32 - b)); }

inline std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

inline void store_le32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

// The Chaskey permutation pi: `rounds` applications of the ARX round.
inline void permute(State& v, int rounds) {
  std::uint32_t v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
  for (int r = 0; r < rounds; ++r) {
    v0 += v1; v1 = rotl(v1, 5);  v1 ^= v0; v0 = rotl(v0, 16);
    v2 += v3; v3 = rotl(v3, 8);  v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 13); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 7);  v1 ^= v2; v2 = rotl(v2, 16);
  }
  v = {v0, v1, v2, v3};
}

// Multiplication by x in GF(2^128) (little-endian word order).
State times_two(const State& in) {
  const std::uint32_t c = (in[3] >> 31) ? 0x87u : 0u;
  return {(in[0] << 1) ^ c, (in[1] << 1) | (in[0] >> 31), (in[2] << 1) | (in[1] >> 31),
          (in[3] << 1) | (in[2] >> 31)};
}

inline void xor_block(State& v, const std::uint8_t* m) {
  v[0] ^= load_le32(m);
  v[1] ^= load_le32(m + 4);
  v[2] ^= load_le32(m + 8);
  v[3] ^= load_le32(m + 12);
}

inline void xor_key(State& v, const State& k) {
  v[0] ^= k[0]; v[1] ^= k[1]; v[2] ^= k[2]; v[3] ^= k[3];
}

inline void write_tag(const State& v, MutableByteSpan out) {
  std::uint8_t full[16];
  for (int i = 0; i < 4; ++i) store_le32(full + 4 * i, v[static_cast<std::size_t>(i)]);
  std::memcpy(out.data(), full, out.size() < 16 ? out.size() : 16);
  secure_zero(full, sizeof full);
}

}  // namespace

Result<std::unique_ptr<Chaskey>, CryptoError> Chaskey::create(ByteSpan key, int rounds) {
  if (key.size() != 16) return Err(CryptoError::kBadKeyLength);
  if (rounds != 8 && rounds != 12) return Err(CryptoError::kBadInput);
  std::array<std::uint32_t, 4> k{load_le32(key.data()), load_le32(key.data() + 4),
                                 load_le32(key.data() + 8), load_le32(key.data() + 12)};
  auto c = std::make_unique<Chaskey>(k, rounds);
  secure_zero(k.data(), sizeof k);
  return c;
}

Chaskey::Chaskey(const std::array<std::uint32_t, 4>& key, int rounds)
    : k_(key), k1_(times_two(key)), k2_(times_two(k1_)), rounds_(rounds) {
  begin();
}

Chaskey::~Chaskey() {
  secure_zero(k_.data(), sizeof k_);
  secure_zero(k1_.data(), sizeof k1_);
  secure_zero(k2_.data(), sizeof k2_);
  secure_zero(v_.data(), sizeof v_);
  secure_zero(buf_.data(), sizeof buf_);
}

void Chaskey::begin() {
  v_ = k_;
  buf_len_ = 0;
  have_block_ = false;
}

void Chaskey::update(ByteSpan data) {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  while (n > 0) {
    if (have_block_) {  // more data follows, so the held block is not last
      xor_block(v_, buf_.data());
      permute(v_, rounds_);
      have_block_ = false;
      buf_len_ = 0;
    }
    const std::size_t take = std::min<std::size_t>(16 - buf_len_, n);
    std::memcpy(buf_.data() + buf_len_, p, take);
    buf_len_ += take;
    p += take;
    n -= take;
    if (buf_len_ == 16) have_block_ = true;
  }
}

Status<CryptoError> Chaskey::finish(MutableByteSpan out) {
  if (out.empty()) return Err(CryptoError::kBufferTooSmall);
  const State* last_key = &k2_;
  if (have_block_) {
    last_key = &k1_;
  } else {
    std::memset(buf_.data() + buf_len_, 0, 16 - buf_len_);
    buf_[buf_len_] = 0x01;
  }
  xor_block(v_, buf_.data());
  xor_key(v_, *last_key);
  permute(v_, rounds_);
  xor_key(v_, *last_key);
  write_tag(v_, out);
  begin();
  return {};
}

void Chaskey::mac(ByteSpan message, MutableByteSpan out) const {
  State v = k_;
  const std::uint8_t* p = message.data();
  std::size_t n = message.size();
  while (n > 16) {
    xor_block(v, p);
    permute(v, rounds_);
    p += 16;
    n -= 16;
  }
  const State* last_key;
  if (n == 16) {
    xor_block(v, p);
    last_key = &k1_;
  } else {
    std::uint8_t last[16] = {};
    if (n) std::memcpy(last, p, n);
    last[n] = 0x01;
    xor_block(v, last);
    last_key = &k2_;
  }
  xor_key(v, *last_key);
  permute(v, rounds_);
  xor_key(v, *last_key);
  write_tag(v, out);
  secure_zero(v.data(), sizeof v);
}

}  // namespace layersec::crypto
