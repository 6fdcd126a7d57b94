#include "layersec/crypto/mlkem.h"

#include <array>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <openssl/evp.h>

#include "layersec/base/secret.h"
#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mlkem_ct.h"
#include "layersec/crypto/mlkem_poly.h"

namespace layersec::crypto {

using mlkem::Poly;

std::string_view to_string(MlKemParameterSet set) {
  switch (set) {
    case MlKemParameterSet::kMlKem512: return "ML-KEM-512";
    case MlKemParameterSet::kMlKem768: return "ML-KEM-768";
    case MlKemParameterSet::kMlKem1024: return "ML-KEM-1024";
  }
  return "ML-KEM-?";
}

std::string_view to_string(MlKemError e) {
  switch (e) {
    case MlKemError::kBadSeedLength: return "seed (d, z or m) is not 32 bytes";
    case MlKemError::kBadEncapsKeyLength: return "encapsulation key has the wrong length";
    case MlKemError::kEncapsKeyNotReduced: return "encapsulation key fails the modulus check";
    case MlKemError::kBadDecapsKeyLength: return "decapsulation key has the wrong length";
    case MlKemError::kDecapsKeyHashMismatch: return "decapsulation key fails the hash check";
    case MlKemError::kBadCiphertextLength: return "ciphertext has the wrong length";
    case MlKemError::kBadOutputLength: return "output buffer has the wrong length";
    case MlKemError::kBackend: return "SHA-3 backend failure";
  }
  return "unknown ML-KEM error";
}

namespace {

constexpr MlKemParams make_params(MlKemParameterSet set, int k, int eta1, int du, int dv) {
  return MlKemParams{set,
                     k,
                     eta1,
                     2,
                     du,
                     dv,
                     static_cast<std::size_t>(384 * k + 32),
                     static_cast<std::size_t>(768 * k + 96),
                     static_cast<std::size_t>(32 * (du * k + dv))};
}

// FIPS 203 Table 2.
constexpr MlKemParams kParams[3] = {
    make_params(MlKemParameterSet::kMlKem512, 2, 3, 10, 4),
    make_params(MlKemParameterSet::kMlKem768, 3, 2, 10, 4),
    make_params(MlKemParameterSet::kMlKem1024, 4, 2, 11, 5),
};

constexpr int kMaxK = 4;
constexpr std::size_t kXofBlock = 168;  // SHAKE128 rate
constexpr std::size_t kXofFirst = 3 * kXofBlock;

struct Mds {
  EVP_MD* sha3_256 = nullptr;
  EVP_MD* sha3_512 = nullptr;
  EVP_MD* shake128 = nullptr;
  EVP_MD* shake256 = nullptr;
  [[nodiscard]] bool ok() const { return sha3_256 && sha3_512 && shake128 && shake256; }
};

// Fetched once per process (thread-safe static initialisation).
const Mds& mds() {
  static const Mds m{EVP_MD_fetch(nullptr, "SHA3-256", nullptr), EVP_MD_fetch(nullptr, "SHA3-512", nullptr),
                     EVP_MD_fetch(nullptr, "SHAKE128", nullptr), EVP_MD_fetch(nullptr, "SHAKE256", nullptr)};
  return m;
}

// Branch-free: 0xFF if the buffers are equal, 0x00 otherwise.
std::uint8_t ct_equal_mask(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  std::uint8_t diff = 0;
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<std::uint8_t>(a[i] ^ b[i]);
  std::uint32_t d = diff;
#if defined(__GNUC__)
  __asm__("" : "+r"(d));  // keep the compiler from turning the select into a branch
#endif
  return static_cast<std::uint8_t>(((d - 1) >> 8) & 0xFF);
}

// Secret stack data wiped on scope exit.
template <class T>
struct Wiped {
  T v{};
  ~Wiped() { secure_zero(&v, sizeof(v)); }
};

}  // namespace

const MlKemParams& mlkem_params(MlKemParameterSet set) {
  return kParams[static_cast<int>(set)];
}

struct MlKem::Hashes {
  EVP_MD_CTX* ctx = nullptr;
  ~Hashes() { EVP_MD_CTX_free(ctx); }

  // One digest of the concatenation of up to three parts.
  bool run(const EVP_MD* md, ByteSpan a, ByteSpan b, ByteSpan c, std::uint8_t* out, std::size_t out_len,
           bool xof) {
    if (EVP_DigestInit_ex2(ctx, md, nullptr) != 1) return false;
    if (!a.empty() && EVP_DigestUpdate(ctx, a.data(), a.size()) != 1) return false;
    if (!b.empty() && EVP_DigestUpdate(ctx, b.data(), b.size()) != 1) return false;
    if (!c.empty() && EVP_DigestUpdate(ctx, c.data(), c.size()) != 1) return false;
    if (xof) return EVP_DigestFinalXOF(ctx, out, out_len) == 1;
    return EVP_DigestFinal_ex(ctx, out, nullptr) == 1;
  }
  // H = SHA3-256 (§4.1, eq. 4.4).
  bool h(ByteSpan in, std::uint8_t out[32]) { return run(mds().sha3_256, in, {}, {}, out, 32, false); }
  // G = SHA3-512 (eq. 4.5).
  bool g(ByteSpan a, ByteSpan b, std::uint8_t out[64]) { return run(mds().sha3_512, a, b, {}, out, 64, false); }
  // J(s) = SHAKE256(s, 8*32) (eq. 4.4).
  bool j(ByteSpan a, ByteSpan b, std::uint8_t out[32]) { return run(mds().shake256, a, b, {}, out, 32, true); }
  // PRF_eta(s, b) = SHAKE256(s || b, 8*64*eta) (eq. 4.3).
  bool prf(const std::uint8_t s[32], std::uint8_t n, std::uint8_t* out, std::size_t len) {
    return run(mds().shake256, ByteSpan(s, 32), ByteSpan(&n, 1), {}, out, len, true);
  }

  // SampleNTT(rho || x || y) (Algorithm 7) on SHAKE128; see the header for
  // the squeeze strategy on OpenSSL 3.0.
  bool sample_ntt(const std::uint8_t rho[32], std::uint8_t x, std::uint8_t y, Poly& p) {
    const std::uint8_t xy[2] = {x, y};
    std::uint8_t buf[kXofFirst];
    if (!run(mds().shake128, ByteSpan(rho, 32), ByteSpan(xy, 2), {}, buf, sizeof(buf), true)) return false;
    int filled = mlkem::sample_ntt(buf, sizeof(buf), p, 0);
    std::size_t have = kXofFirst;
    while (filled < mlkem::kN) {
      std::vector<std::uint8_t> more(have + 2 * kXofBlock);
      if (!run(mds().shake128, ByteSpan(rho, 32), ByteSpan(xy, 2), {}, more.data(), more.size(), true))
        return false;
      filled = mlkem::sample_ntt(more.data() + have, more.size() - have, p, filled);
      have = more.size();
    }
    return true;
  }

  // Â (transposed = false: Â[i][j] = SampleNTT(rho || j || i), Algorithm 13
  // line 6) or Â^T (Algorithm 14 line 6), row-major k x k.
  bool gen_matrix(Poly* a, const std::uint8_t rho[32], int k, bool transposed) {
    for (int i = 0; i < k; ++i) {
      for (int jj = 0; jj < k; ++jj) {
        const auto bi = static_cast<std::uint8_t>(i), bj = static_cast<std::uint8_t>(jj);
        if (!(transposed ? sample_ntt(rho, bi, bj, a[i * k + jj]) : sample_ntt(rho, bj, bi, a[i * k + jj])))
          return false;
      }
    }
    return true;
  }

  // SamplePolyCBD_eta(PRF_eta(s, n)).
  bool cbd(const std::uint8_t s[32], std::uint8_t n, int eta, Poly& p) {
    Wiped<std::array<std::uint8_t, 64 * 3>> buf;
    if (!prf(s, n, buf.v.data(), 64 * static_cast<std::size_t>(eta))) return false;
    mlkem::sample_cbd(buf.v.data(), eta, p);
    return true;
  }
};

MlKem::MlKem(MlKemParameterSet set) : params_(&mlkem_params(set)), hashes_(std::make_unique<Hashes>()) {
  if (!mds().ok()) throw std::runtime_error("ML-KEM: OpenSSL provides no SHA3-256/512 or SHAKE128/256");
  hashes_->ctx = EVP_MD_CTX_new();
  if (hashes_->ctx == nullptr) throw std::runtime_error("ML-KEM: EVP_MD_CTX_new failed");
}
MlKem::~MlKem() = default;
MlKem::MlKem(MlKem&&) noexcept = default;
MlKem& MlKem::operator=(MlKem&&) noexcept = default;

namespace {

// K-PKE.Encrypt(ek, m, r) (Algorithm 14); ek already passed the input checks.
bool pke_encrypt(MlKem::Hashes& hs, const MlKemParams& p, const std::uint8_t* ek, const std::uint8_t m[32],
                 const std::uint8_t r[32], std::uint8_t* c) {
  const int k = p.k;
  Poly at[kMaxK * kMaxK];
  Poly t_hat[kMaxK];
  Wiped<std::array<Poly, kMaxK>> y, y_cache;
  Wiped<Poly> e, u, mu;
  const std::uint8_t* rho = ek + 384 * k;
  if (!hs.gen_matrix(at, rho, k, true)) return false;
  for (int i = 0; i < k; ++i) mlkem::decode12(ek + 384 * i, t_hat[i]);
  std::uint8_t n = 0;
  for (int i = 0; i < k; ++i) {
    if (!hs.cbd(r, n++, p.eta1, y.v[i])) return false;
    mlkem::ntt(y.v[i]);
    mlkem::mulcache_compute(y_cache.v[i], y.v[i]);
  }
  const std::uint8_t e2_index = static_cast<std::uint8_t>(2 * k);
  for (int i = 0; i < k; ++i) {
    if (!hs.cbd(r, n++, p.eta2, e.v)) return false;  // e1[i]
    mlkem::basemul_acc(u.v, &at[i * k], y.v.data(), y_cache.v.data(), k);
    mlkem::invntt_tomont(u.v);
    mlkem::poly_add(u.v, e.v);
    mlkem::poly_reduce(u.v);
    mlkem::compress_encode(u.v, p.du, c + 32 * p.du * i);
  }
  if (!hs.cbd(r, e2_index, p.eta2, e.v)) return false;  // e2
  mlkem::basemul_acc(u.v, t_hat, y.v.data(), y_cache.v.data(), k);
  mlkem::invntt_tomont(u.v);
  mlkem::poly_add(u.v, e.v);
  mlkem::from_message(m, mu.v);
  mlkem::poly_add(u.v, mu.v);
  mlkem::poly_reduce(u.v);
  mlkem::compress_encode(u.v, p.dv, c + 32 * p.du * k);
  return true;
}

// K-PKE.Decrypt(dk_PKE, c) (Algorithm 15).
void pke_decrypt(const MlKemParams& p, const std::uint8_t* dk_pke, const std::uint8_t* c, std::uint8_t m[32]) {
  const int k = p.k;
  Wiped<std::array<Poly, kMaxK>> s;
  Poly u[kMaxK], u_cache[kMaxK];
  Wiped<Poly> w, v;
  for (int i = 0; i < k; ++i) {
    mlkem::decode_decompress(c + 32 * p.du * i, p.du, u[i]);
    mlkem::ntt(u[i]);
    mlkem::mulcache_compute(u_cache[i], u[i]);
    mlkem::decode12(dk_pke + 384 * i, s.v[i]);
  }
  mlkem::basemul_acc(w.v, s.v.data(), u, u_cache, k);
  mlkem::invntt_tomont(w.v);
  mlkem::decode_decompress(c + 32 * p.du * k, p.dv, v.v);
  mlkem::poly_sub(w.v, v.v, w.v);
  mlkem::poly_reduce(w.v);
  mlkem::to_message(w.v, m);
}

}  // namespace

Status<MlKemError> MlKem::keygen_internal(ByteSpan d, ByteSpan z, MutableByteSpan ek, MutableByteSpan dk) {
  const MlKemParams& p = *params_;
  if (d.size() != kSeedSize || z.size() != kSeedSize) return Err(MlKemError::kBadSeedLength);
  if (ek.size() != p.encaps_key_size || dk.size() != p.decaps_key_size) return Err(MlKemError::kBadOutputLength);
  const int k = p.k;
  Hashes& hs = *hashes_;

  // K-PKE.KeyGen(d) (Algorithm 13): (rho, sigma) = G(d || k).
  Wiped<std::array<std::uint8_t, 64>> rho_sigma;
  const auto kb = static_cast<std::uint8_t>(k);
  if (!hs.g(d, ByteSpan(&kb, 1), rho_sigma.v.data())) return Err(MlKemError::kBackend);
  const std::uint8_t* rho = rho_sigma.v.data();
  const std::uint8_t* sigma = rho_sigma.v.data() + 32;
  ct_declassify(rho, 32);  // rho is part of the public key

  Poly a[kMaxK * kMaxK];
  if (!hs.gen_matrix(a, rho, k, false)) return Err(MlKemError::kBackend);
  Wiped<std::array<Poly, kMaxK>> s, s_cache;
  Wiped<Poly> e, t;
  std::uint8_t n = 0;
  for (int i = 0; i < k; ++i) {
    if (!hs.cbd(sigma, n++, p.eta1, s.v[i])) return Err(MlKemError::kBackend);
    mlkem::ntt(s.v[i]);
    mlkem::mulcache_compute(s_cache.v[i], s.v[i]);
  }
  for (int i = 0; i < k; ++i) {
    if (!hs.cbd(sigma, n++, p.eta1, e.v)) return Err(MlKemError::kBackend);
    mlkem::ntt(e.v);
    // t_hat[i] = sum_j A[i][j] o s_hat[j] + e_hat[i]
    mlkem::basemul_acc(t.v, &a[i * k], s.v.data(), s_cache.v.data(), k);
    mlkem::poly_tomont(t.v);
    mlkem::poly_add(t.v, e.v);
    mlkem::poly_reduce(t.v);
    mlkem::encode12(t.v, ek.data() + 384 * i);
  }
  std::memcpy(ek.data() + 384 * k, rho, 32);
  // dk = dk_PKE || ek || H(ek) || z (Algorithm 16).
  for (int i = 0; i < k; ++i) mlkem::encode12(s.v[i], dk.data() + 384 * i);
  std::uint8_t* dk_ek = dk.data() + 384 * k;
  std::memcpy(dk_ek, ek.data(), ek.size());
  if (!hs.h(ek, dk_ek + ek.size())) return Err(MlKemError::kBackend);
  std::memcpy(dk_ek + ek.size() + 32, z.data(), 32);
  return {};
}

Status<MlKemError> MlKem::keygen(MutableByteSpan ek, MutableByteSpan dk) {
  SecretBytes dz(64);
  if (!random_bytes(dz.mutable_span()).ok()) return Err(MlKemError::kBackend);
  return keygen_internal(dz.span().first(32), dz.span().subspan(32), ek, dk);
}

Status<MlKemError> MlKem::check_encaps_key(ByteSpan ek) const {
  const MlKemParams& p = *params_;
  if (ek.size() != p.encaps_key_size) return Err(MlKemError::kBadEncapsKeyLength);
  for (int i = 0; i < p.k; ++i)
    if (!mlkem::decode12_is_reduced(ek.data() + 384 * i)) return Err(MlKemError::kEncapsKeyNotReduced);
  return {};
}

Status<MlKemError> MlKem::check_decaps_key(ByteSpan dk) {
  const MlKemParams& p = *params_;
  if (dk.size() != p.decaps_key_size) return Err(MlKemError::kBadDecapsKeyLength);
  const ByteSpan ek = dk.subspan(384 * p.k, p.encaps_key_size);
  const ByteSpan h = dk.subspan(384 * p.k + p.encaps_key_size, 32);
  std::uint8_t computed[32];
  if (!hashes_->h(ek, computed)) return Err(MlKemError::kBackend);
  if (std::memcmp(computed, h.data(), 32) != 0) return Err(MlKemError::kDecapsKeyHashMismatch);  // public
  return {};
}

Status<MlKemError> MlKem::encaps_internal(ByteSpan ek, ByteSpan m, MutableByteSpan c, MutableByteSpan k) {
  const MlKemParams& p = *params_;
  if (m.size() != kSeedSize) return Err(MlKemError::kBadSeedLength);
  if (c.size() != p.ciphertext_size || k.size() != kSharedSecretSize) return Err(MlKemError::kBadOutputLength);
  if (auto st = check_encaps_key(ek); !st) return st;
  Hashes& hs = *hashes_;
  // (K, r) = G(m || H(ek)) (Algorithm 17).
  std::uint8_t h_ek[32];
  if (!hs.h(ek, h_ek)) return Err(MlKemError::kBackend);
  Wiped<std::array<std::uint8_t, 64>> kr;
  if (!hs.g(m, ByteSpan(h_ek, 32), kr.v.data())) return Err(MlKemError::kBackend);
  if (!pke_encrypt(hs, p, ek.data(), m.data(), kr.v.data() + 32, c.data())) return Err(MlKemError::kBackend);
  std::memcpy(k.data(), kr.v.data(), 32);
  return {};
}

Status<MlKemError> MlKem::encaps(ByteSpan ek, MutableByteSpan c, MutableByteSpan k) {
  SecretBytes m(32);
  if (!random_bytes(m.mutable_span()).ok()) return Err(MlKemError::kBackend);
  return encaps_internal(ek, m.span(), c, k);
}

Status<MlKemError> MlKem::decaps(ByteSpan dk, ByteSpan c, MutableByteSpan k) {
  const MlKemParams& p = *params_;
  if (k.size() != kSharedSecretSize) return Err(MlKemError::kBadOutputLength);
  // §7.3 input checks: ciphertext type, decapsulation key type, hash check.
  if (c.size() != p.ciphertext_size) return Err(MlKemError::kBadCiphertextLength);
  if (auto st = check_decaps_key(dk); !st) return st;
  return decaps_checked_key(dk, c, k);
}

Status<MlKemError> MlKem::decaps_checked_key(ByteSpan dk, ByteSpan c, MutableByteSpan k) {
  const MlKemParams& p = *params_;
  if (k.size() != kSharedSecretSize) return Err(MlKemError::kBadOutputLength);
  if (c.size() != p.ciphertext_size) return Err(MlKemError::kBadCiphertextLength);
  if (dk.size() != p.decaps_key_size) return Err(MlKemError::kBadDecapsKeyLength);
  Hashes& hs = *hashes_;
  const std::uint8_t* dk_pke = dk.data();
  const std::uint8_t* ek = dk.data() + 384 * p.k;
  const std::uint8_t* h = ek + p.encaps_key_size;
  const std::uint8_t* z = h + 32;

  // Algorithm 18.
  Wiped<std::array<std::uint8_t, 32>> m_prime;
  pke_decrypt(p, dk_pke, c.data(), m_prime.v.data());
  Wiped<std::array<std::uint8_t, 64>> kr;  // (K', r')
  if (!hs.g(ByteSpan(m_prime.v.data(), 32), ByteSpan(h, 32), kr.v.data())) return Err(MlKemError::kBackend);
  Wiped<std::array<std::uint8_t, 32>> k_bar;
  if (!hs.j(ByteSpan(z, 32), c, k_bar.v.data())) return Err(MlKemError::kBackend);
  std::array<std::uint8_t, 32 * (11 * 4 + 5)> c_prime;
  if (!pke_encrypt(hs, p, ek, m_prime.v.data(), kr.v.data() + 32, c_prime.data()))
    return Err(MlKemError::kBackend);
  // If c != c', K' <- K_bar: a branch-free select.
  const std::uint8_t equal = ct_equal_mask(c.data(), c_prime.data(), c.size());
  for (int i = 0; i < 32; ++i)
    k[i] = static_cast<std::uint8_t>((kr.v[i] & equal) | (k_bar.v[i] & static_cast<std::uint8_t>(~equal)));
  secure_zero(c_prime.data(), c_prime.size());
  return {};
}

}  // namespace layersec::crypto
