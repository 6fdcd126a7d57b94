// ML-KEM (FIPS 203) polynomial arithmetic over R_q = Z_q[X]/(X^256 + 1),
// q = 3329: number-theoretic transform (§4.3, Algorithms 9-12), sampling
// (§4.2.2, Algorithms 7-8), compression and byte encoding (§4.2.1,
// Algorithms 5-6).
//
// Representation: coefficients are int16_t. Multiplication uses Montgomery
// reduction (R = 2^16) and additions are brought back into range with Barrett
// reduction, so no operation divides or branches on a coefficient. Functions
// that take secret inputs (everything except sample_ntt(), which reads the
// public matrix seed) are constant time: no secret-dependent branch, memory
// index or division. tests/cli/kem_ct_valgrind.sh checks this under valgrind.
//
// Internal to the ML-KEM implementation (mlkem.cc); exposed for unit tests.
#pragma once

#include <cstddef>
#include <cstdint>

namespace layersec::crypto::mlkem {

inline constexpr int kN = 256;
inline constexpr int kQ = 3329;

struct Poly {
  alignas(32) std::int16_t c[kN];
};

// a * 2^-16 mod q, for |a| < q * 2^15; result in (-q, q).
inline std::int16_t montgomery_reduce(std::int32_t a) {
  constexpr std::int32_t kQinv = -3327;  // q^-1 mod 2^16, signed
  // Only a mod 2^16 matters: multiply the low 16 bits (no signed overflow).
  const auto t = static_cast<std::int16_t>(static_cast<std::int16_t>(a) * kQinv);
  return static_cast<std::int16_t>((a - static_cast<std::int32_t>(t) * kQ) >> 16);
}

// a mod q, centred: result in [-(q-1)/2, (q-1)/2].
inline std::int16_t barrett_reduce(std::int16_t a) {
  constexpr std::int32_t kV = ((1 << 26) + kQ / 2) / kQ;
  const std::int32_t t = (kV * a + (1 << 25)) >> 26;
  return static_cast<std::int16_t>(a - t * kQ);
}

// a * b * 2^-16 mod q.
inline std::int16_t fqmul(std::int16_t a, std::int16_t b) {
  return montgomery_reduce(static_cast<std::int32_t>(a) * b);
}

// Maps x in (-q, q) to its representative in [0, q), without branching.
inline std::uint16_t to_unsigned(std::int16_t x) {
  x = static_cast<std::int16_t>(x + ((x >> 15) & kQ));
  return static_cast<std::uint16_t>(x);
}

// Compress_d (§4.2.1, eq. 4.7) for x in [0, q): round(2^d * x / q) mod 2^d,
// computed with a multiplication instead of a division (exhaustively tested
// against the division in mlkem_poly_test.cc).
inline std::uint32_t compress(std::uint16_t x, int d) {
  constexpr int kShift = 36;
  constexpr std::uint64_t kMul = ((std::uint64_t{1} << kShift) + kQ - 1) / kQ;
  const std::uint64_t t = (static_cast<std::uint64_t>(x) << d) + (kQ - 1) / 2;
  return static_cast<std::uint32_t>((t * kMul) >> kShift) & ((1u << d) - 1);
}

// Decompress_d (eq. 4.8): round(q * y / 2^d).
inline std::int16_t decompress(std::uint32_t y, int d) {
  return static_cast<std::int16_t>((y * kQ + (1u << (d - 1))) >> d);
}

// Forward NTT (Algorithm 9). Input coefficients |a| < q; output in bit-reversed
// order, Barrett-reduced (|a| <= (q-1)/2).
void ntt(Poly& p);
// Inverse NTT (Algorithm 10) followed by multiplication by 2^16 / 128, so that
// invntt(basemul_acc(...)) undoes the Montgomery factor of the products.
// Output |a| < q.
void invntt_tomont(Poly& p);

// Precomputes b[2i+1] * gamma_i for the base-case multiplications with b
// (Algorithm 12), so a row of products reuses it.
void mulcache_compute(Poly& cache, const Poly& b);
// r = sum_{i<k} a[i] o b[i] * 2^-16 (MultiplyNTTs, Algorithm 11, accumulated
// in 32 bits and reduced once). Inputs |a|, |b| < q; output |r| < q.
void basemul_acc(Poly& r, const Poly* a, const Poly* b, const Poly* b_cache, int k);

void poly_add(Poly& r, const Poly& a);      // r += a
void poly_sub(Poly& r, const Poly& a, const Poly& b);  // r = a - b
void poly_reduce(Poly& r);                  // Barrett-reduce every coefficient
void poly_tomont(Poly& r);                  // r *= 2^16 mod q

// ByteEncode_12 of a polynomial with |coefficients| < q (mapped to [0, q)):
// 384 bytes.
void encode12(const Poly& p, std::uint8_t out[384]);
// ByteDecode_12 (Algorithm 6, m = q): every 12-bit value is reduced mod q.
void decode12(const std::uint8_t in[384], Poly& p);
// True if every 12-bit value of the 384 bytes is < q (the modulus check of
// FIPS 203 §7.2 on one polynomial). Public input only.
bool decode12_is_reduced(const std::uint8_t in[384]);

// ByteEncode_d(Compress_d(p)) for d in {4, 5, 10, 11}: 32*d bytes.
void compress_encode(const Poly& p, int d, std::uint8_t* out);
// Decompress_d(ByteDecode_d(in)) for d in {4, 5, 10, 11}.
void decode_decompress(const std::uint8_t* in, int d, Poly& p);
// Decompress_1(ByteDecode_1(m)) for a 32-byte message.
void from_message(const std::uint8_t msg[32], Poly& p);
// ByteEncode_1(Compress_1(p)) into 32 bytes.
void to_message(const Poly& p, std::uint8_t msg[32]);

// SamplePolyCBD_eta (Algorithm 8) for eta in {2, 3}: reads 64*eta bytes.
void sample_cbd(const std::uint8_t* in, int eta, Poly& p);

// SampleNTT (Algorithm 7) rejection sampling from an XOF stream: appends
// coefficients to p starting at `filled`, returns the new count (<= 256).
// Branches on the (public) stream.
int sample_ntt(const std::uint8_t* stream, std::size_t len, Poly& p, int filled);

}  // namespace layersec::crypto::mlkem
