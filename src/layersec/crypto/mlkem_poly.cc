#include "layersec/crypto/mlkem_poly.h"

#include <array>

namespace layersec::crypto::mlkem {
namespace {

constexpr int bitrev7(int i) {
  int r = 0;
  for (int b = 0; b < 7; ++b) r |= ((i >> b) & 1) << (6 - b);
  return r;
}

constexpr std::int64_t pow_mod(std::int64_t base, int e) {
  std::int64_t r = 1;
  for (int i = 0; i < e; ++i) r = (r * base) % kQ;
  return r;
}

// x * 2^16 mod q, centred in (-q/2, q/2].
constexpr std::int16_t to_mont_centred(std::int64_t x) {
  std::int64_t m = (x * 65536) % kQ;
  if (m > kQ / 2) m -= kQ;
  return static_cast<std::int16_t>(m);
}

// zeta^BitRev7(i) (FIPS 203 §4.3, zeta = 17), Montgomery form.
constexpr std::array<std::int16_t, 128> make_zetas() {
  std::array<std::int16_t, 128> z{};
  for (int i = 0; i < 128; ++i) z[i] = to_mont_centred(pow_mod(17, bitrev7(i)));
  return z;
}
// gamma_i = zeta^(2*BitRev7(i)+1) (Algorithm 11), Montgomery form.
constexpr std::array<std::int16_t, 128> make_gammas() {
  std::array<std::int16_t, 128> g{};
  for (int i = 0; i < 128; ++i) g[i] = to_mont_centred(pow_mod(17, 2 * bitrev7(i) + 1));
  return g;
}

constexpr auto kZetas = make_zetas();
constexpr auto kGammas = make_gammas();
static_assert(pow_mod(17, 128) == kQ - 1, "17 is a primitive 256th root of unity mod q");

// 2^32 / 128 mod q (Montgomery form of 2^16/128): the inverse NTT's final
// scaling by 128^-1 together with the 2^16 that cancels basemul's 2^-16.
constexpr std::int16_t kInvNttScale = to_mont_centred((65536LL * pow_mod(128, kQ - 2)) % kQ);

inline std::uint32_t load24_le(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16);
}
inline std::uint32_t load32_le(const std::uint8_t* p) {
  return load24_le(p) | (std::uint32_t{p[3]} << 24);
}

}  // namespace

void ntt(Poly& p) {
  std::int16_t* r = p.c;
  int k = 1;
  for (int len = 128; len >= 2; len >>= 1) {
    for (int start = 0; start < kN; start += 2 * len) {
      const std::int16_t zeta = kZetas[k++];
      for (int j = start; j < start + len; ++j) {
        const std::int16_t t = fqmul(zeta, r[j + len]);
        r[j + len] = static_cast<std::int16_t>(r[j] - t);
        r[j] = static_cast<std::int16_t>(r[j] + t);
      }
    }
  }
  poly_reduce(p);
}

void invntt_tomont(Poly& p) {
  std::int16_t* r = p.c;
  int k = 127;
  for (int len = 2; len <= 128; len <<= 1) {
    for (int start = 0; start < kN; start += 2 * len) {
      const std::int16_t zeta = kZetas[k--];
      for (int j = start; j < start + len; ++j) {
        const std::int16_t t = r[j];
        r[j] = barrett_reduce(static_cast<std::int16_t>(t + r[j + len]));
        r[j + len] = fqmul(zeta, static_cast<std::int16_t>(r[j + len] - t));
      }
    }
  }
  for (auto& x : p.c) x = fqmul(x, kInvNttScale);
}

void mulcache_compute(Poly& cache, const Poly& b) {
  for (int i = 0; i < 128; ++i) {
    cache.c[2 * i] = 0;
    cache.c[2 * i + 1] = fqmul(b.c[2 * i + 1], kGammas[i]);
  }
}

void basemul_acc(Poly& r, const Poly* a, const Poly* b, const Poly* b_cache, int k) {
  // Sums of at most 2*k <= 8 products of magnitude < q^2 stay below q * 2^15,
  // the input bound of montgomery_reduce.
  for (int i = 0; i < 128; ++i) {
    std::int32_t t0 = 0;
    std::int32_t t1 = 0;
    for (int j = 0; j < k; ++j) {
      const std::int32_t a0 = a[j].c[2 * i], a1 = a[j].c[2 * i + 1];
      const std::int32_t b0 = b[j].c[2 * i], b1 = b[j].c[2 * i + 1];
      t0 += a0 * b0 + a1 * b_cache[j].c[2 * i + 1];
      t1 += a0 * b1 + a1 * b0;
    }
    r.c[2 * i] = montgomery_reduce(t0);
    r.c[2 * i + 1] = montgomery_reduce(t1);
  }
}

void poly_add(Poly& r, const Poly& a) {
  for (int i = 0; i < kN; ++i) r.c[i] = static_cast<std::int16_t>(r.c[i] + a.c[i]);
}

void poly_sub(Poly& r, const Poly& a, const Poly& b) {
  for (int i = 0; i < kN; ++i) r.c[i] = static_cast<std::int16_t>(a.c[i] - b.c[i]);
}

void poly_reduce(Poly& r) {
  for (auto& x : r.c) x = barrett_reduce(x);
}

void poly_tomont(Poly& r) {
  constexpr std::int16_t kF = static_cast<std::int16_t>((1LL << 32) % kQ);  // 2^32 mod q
  for (auto& x : r.c) x = montgomery_reduce(static_cast<std::int32_t>(x) * kF);
}

void encode12(const Poly& p, std::uint8_t out[384]) {
  for (int i = 0; i < kN / 2; ++i) {
    const std::uint16_t t0 = to_unsigned(p.c[2 * i]);
    const std::uint16_t t1 = to_unsigned(p.c[2 * i + 1]);
    out[3 * i] = static_cast<std::uint8_t>(t0);
    out[3 * i + 1] = static_cast<std::uint8_t>((t0 >> 8) | (t1 << 4));
    out[3 * i + 2] = static_cast<std::uint8_t>(t1 >> 4);
  }
}

namespace {
// x mod q for x in [0, 4096), without branching.
inline std::int16_t reduce_once(std::uint32_t x) {
  const auto t = static_cast<std::int16_t>(static_cast<std::int32_t>(x) - kQ);
  return static_cast<std::int16_t>(t + ((t >> 15) & kQ));
}
}  // namespace

void decode12(const std::uint8_t in[384], Poly& p) {
  for (int i = 0; i < kN / 2; ++i) {
    const std::uint32_t t = load24_le(in + 3 * i);
    p.c[2 * i] = reduce_once(t & 0xFFF);
    p.c[2 * i + 1] = reduce_once(t >> 12);
  }
}

bool decode12_is_reduced(const std::uint8_t in[384]) {
  std::uint32_t bad = 0;
  for (int i = 0; i < kN / 2; ++i) {
    const std::uint32_t t = load24_le(in + 3 * i);
    bad |= static_cast<std::uint32_t>((t & 0xFFF) >= kQ) | static_cast<std::uint32_t>((t >> 12) >= kQ);
  }
  return bad == 0;
}

void compress_encode(const Poly& p, int d, std::uint8_t* out) {
  switch (d) {
    case 4:
      for (int i = 0; i < kN / 2; ++i) {
        const std::uint32_t t0 = compress(to_unsigned(p.c[2 * i]), 4);
        const std::uint32_t t1 = compress(to_unsigned(p.c[2 * i + 1]), 4);
        out[i] = static_cast<std::uint8_t>(t0 | (t1 << 4));
      }
      return;
    case 10:
      for (int i = 0; i < kN / 4; ++i) {
        std::uint64_t t = 0;
        for (int j = 0; j < 4; ++j) t |= std::uint64_t{compress(to_unsigned(p.c[4 * i + j]), 10)} << (10 * j);
        for (int j = 0; j < 5; ++j) out[5 * i + j] = static_cast<std::uint8_t>(t >> (8 * j));
      }
      return;
    default: {  // 5 and 11: 8 coefficients into d bytes
      for (int i = 0; i < kN / 8; ++i) {
        unsigned __int128 t = 0;
        for (int j = 0; j < 8; ++j)
          t |= static_cast<unsigned __int128>(compress(to_unsigned(p.c[8 * i + j]), d)) << (d * j);
        for (int j = 0; j < d; ++j) out[d * i + j] = static_cast<std::uint8_t>(t >> (8 * j));
      }
      return;
    }
  }
}

void decode_decompress(const std::uint8_t* in, int d, Poly& p) {
  switch (d) {
    case 4:
      for (int i = 0; i < kN / 2; ++i) {
        p.c[2 * i] = decompress(in[i] & 0xFu, 4);
        p.c[2 * i + 1] = decompress(in[i] >> 4, 4);
      }
      return;
    case 10:
      for (int i = 0; i < kN / 4; ++i) {
        std::uint64_t t = 0;
        for (int j = 0; j < 5; ++j) t |= std::uint64_t{in[5 * i + j]} << (8 * j);
        for (int j = 0; j < 4; ++j) p.c[4 * i + j] = decompress(static_cast<std::uint32_t>(t >> (10 * j)) & 0x3FF, 10);
      }
      return;
    default: {
      const std::uint32_t mask = (1u << d) - 1;
      for (int i = 0; i < kN / 8; ++i) {
        unsigned __int128 t = 0;
        for (int j = 0; j < d; ++j) t |= static_cast<unsigned __int128>(in[d * i + j]) << (8 * j);
        for (int j = 0; j < 8; ++j)
          p.c[8 * i + j] = decompress(static_cast<std::uint32_t>(t >> (d * j)) & mask, d);
      }
      return;
    }
  }
}

void from_message(const std::uint8_t msg[32], Poly& p) {
  for (int i = 0; i < 32; ++i) {
    for (int j = 0; j < 8; ++j) {
      // Decompress_1(bit) = bit * round(q/2) = bit * 1665, as a mask.
      const auto bit = static_cast<std::int16_t>((msg[i] >> j) & 1);
      p.c[8 * i + j] = static_cast<std::int16_t>(-bit & ((kQ + 1) / 2));
    }
  }
}

void to_message(const Poly& p, std::uint8_t msg[32]) {
  for (int i = 0; i < 32; ++i) {
    std::uint32_t byte = 0;
    for (int j = 0; j < 8; ++j) byte |= compress(to_unsigned(p.c[8 * i + j]), 1) << j;
    msg[i] = static_cast<std::uint8_t>(byte);
  }
}

void sample_cbd(const std::uint8_t* in, int eta, Poly& p) {
  if (eta == 2) {
    for (int i = 0; i < kN / 8; ++i) {
      const std::uint32_t t = load32_le(in + 4 * i);
      const std::uint32_t d = (t & 0x55555555u) + ((t >> 1) & 0x55555555u);
      for (int j = 0; j < 8; ++j) {
        const auto x = static_cast<std::int16_t>((d >> (4 * j)) & 3);
        const auto y = static_cast<std::int16_t>((d >> (4 * j + 2)) & 3);
        p.c[8 * i + j] = static_cast<std::int16_t>(x - y);
      }
    }
  } else {  // eta == 3
    for (int i = 0; i < kN / 4; ++i) {
      const std::uint32_t t = load24_le(in + 3 * i);
      const std::uint32_t d = (t & 0x249249u) + ((t >> 1) & 0x249249u) + ((t >> 2) & 0x249249u);
      for (int j = 0; j < 4; ++j) {
        const auto x = static_cast<std::int16_t>((d >> (6 * j)) & 7);
        const auto y = static_cast<std::int16_t>((d >> (6 * j + 3)) & 7);
        p.c[4 * i + j] = static_cast<std::int16_t>(x - y);
      }
    }
  }
}

int sample_ntt(const std::uint8_t* stream, std::size_t len, Poly& p, int filled) {
  std::size_t pos = 0;
  // Fast path while two more coefficients always fit: store both candidates
  // and advance by the acceptance bits (no unpredictable branches).
  while (filled <= kN - 2 && pos + 3 <= len) {
    const std::uint16_t d1 = static_cast<std::uint16_t>(stream[pos] | ((stream[pos + 1] & 0xF) << 8));
    const std::uint16_t d2 = static_cast<std::uint16_t>((stream[pos + 1] >> 4) | (stream[pos + 2] << 4));
    pos += 3;
    p.c[filled] = static_cast<std::int16_t>(d1);
    filled += static_cast<int>(d1 < kQ);
    p.c[filled] = static_cast<std::int16_t>(d2);
    filled += static_cast<int>(d2 < kQ);
  }
  while (filled < kN && pos + 3 <= len) {
    const std::uint16_t d1 = static_cast<std::uint16_t>(stream[pos] | ((stream[pos + 1] & 0xF) << 8));
    const std::uint16_t d2 = static_cast<std::uint16_t>((stream[pos + 1] >> 4) | (stream[pos + 2] << 4));
    pos += 3;
    if (d1 < kQ) p.c[filled++] = static_cast<std::int16_t>(d1);
    if (d2 < kQ && filled < kN) p.c[filled++] = static_cast<std::int16_t>(d2);
  }
  return filled;
}

}  // namespace layersec::crypto::mlkem
