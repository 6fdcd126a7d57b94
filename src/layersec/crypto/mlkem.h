// ML-KEM-512 / 768 / 1024 (FIPS 203, August 2024), written here on OpenSSL's
// SHA3-256, SHA3-512, SHAKE128 and SHAKE256 (OpenSSL 3.0 has no ML-KEM).
//
//   keygen_internal(d, z)  -> (ek, dk)   ML-KEM.KeyGen_internal, Algorithm 16
//   encaps_internal(ek, m) -> (K, c)     ML-KEM.Encaps_internal, Algorithm 17
//   decaps(dk, c)          -> K          ML-KEM.Decaps_internal, Algorithm 18,
//                                        with implicit rejection K = J(z || c)
//
// Input checks (§7.2, §7.3) run on every call: the encapsulation key's length
// and modulus check (ByteEncode_12(ByteDecode_12(t)) == t), the decapsulation
// key's length and hash check (H(ek) == h), and the ciphertext length. A
// failed check is a typed error and writes no key.
//
// Constant time: no branch, memory index or division depends on d, z, m, the
// secret vector s or the decrypted message; the re-encryption comparison and
// the choice between K' and J(z || c) are branch-free selects. Public values
// (rho, ek, c) are declassified for the valgrind check (mlkem_ct.h).
//
// SHAKE128 matrix sampling: OpenSSL 3.0 has no incremental squeeze
// (EVP_DigestSqueeze arrived in 3.3), so SampleNTT squeezes 3 blocks
// (504 bytes) with one EVP_DigestFinalXOF call; in the rare case (~1% per
// polynomial) that rejection sampling needs more, the XOF is re-run from a
// copy of the absorbed state with a longer output and the extra bytes are
// consumed. The result is identical to an incremental squeeze.
//
// An MlKem object owns its EVP_MD_CTX and is thread-compatible (one caller at
// a time); the EVP_MDs are fetched once per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::crypto {

enum class MlKemParameterSet : std::uint8_t { kMlKem512, kMlKem768, kMlKem1024 };
std::string_view to_string(MlKemParameterSet set);  // "ML-KEM-768"

enum class MlKemError : std::uint8_t {
  kBadSeedLength,          // d, z or m not 32 bytes
  kBadEncapsKeyLength,     // ek not 384k+32 bytes
  kEncapsKeyNotReduced,    // ek modulus check failed (§7.2)
  kBadDecapsKeyLength,     // dk not 768k+96 bytes
  kDecapsKeyHashMismatch,  // dk hash check failed (§7.3)
  kBadCiphertextLength,    // c not 32(du*k + dv) bytes
  kBadOutputLength,        // an output buffer has the wrong size
  kBackend,                // OpenSSL failed (SHA-3 unavailable, RNG failure)
};
std::string_view to_string(MlKemError e);

// Parameters of Table 2 and the sizes of Table 3.
struct MlKemParams {
  MlKemParameterSet set;
  int k;
  int eta1;
  int eta2;
  int du;
  int dv;
  std::size_t encaps_key_size;   // 384k + 32
  std::size_t decaps_key_size;   // 768k + 96
  std::size_t ciphertext_size;   // 32(du*k + dv)
};
const MlKemParams& mlkem_params(MlKemParameterSet set);

class MlKem {
 public:
  static constexpr std::size_t kSeedSize = 32;          // d, z, m
  static constexpr std::size_t kSharedSecretSize = 32;  // K

  // Throws std::runtime_error if OpenSSL lacks SHA-3/SHAKE (a configuration
  // error at start-up).
  explicit MlKem(MlKemParameterSet set);
  ~MlKem();
  MlKem(MlKem&&) noexcept;
  MlKem& operator=(MlKem&&) noexcept;
  MlKem(const MlKem&) = delete;
  MlKem& operator=(const MlKem&) = delete;

  [[nodiscard]] const MlKemParams& params() const { return *params_; }

  // ML-KEM.KeyGen_internal(d, z). ek: encaps_key_size, dk: decaps_key_size.
  Status<MlKemError> keygen_internal(ByteSpan d, ByteSpan z, MutableByteSpan ek, MutableByteSpan dk);
  // ML-KEM.KeyGen with d, z from OpenSSL's DRBG.
  Status<MlKemError> keygen(MutableByteSpan ek, MutableByteSpan dk);

  // ML-KEM.Encaps_internal(ek, m): c (ciphertext_size) and K (32 bytes).
  Status<MlKemError> encaps_internal(ByteSpan ek, ByteSpan m, MutableByteSpan c, MutableByteSpan k);
  // ML-KEM.Encaps with m from OpenSSL's DRBG.
  Status<MlKemError> encaps(ByteSpan ek, MutableByteSpan c, MutableByteSpan k);

  // ML-KEM.Decaps(dk, c) -> K (32 bytes). A ciphertext that does not
  // re-encrypt identically yields the implicit-rejection key J(z || c), not an
  // error; only malformed inputs are errors.
  Status<MlKemError> decaps(ByteSpan dk, ByteSpan c, MutableByteSpan k);
  // The same for a dk that already passed check_decaps_key() and has not
  // changed since (a key parsed once and held, as kex::Kem does): the hash
  // check is not repeated; lengths are still checked.
  Status<MlKemError> decaps_checked_key(ByteSpan dk, ByteSpan c, MutableByteSpan k);

  // The input checks alone (§7.2 and §7.3).
  Status<MlKemError> check_encaps_key(ByteSpan ek) const;
  Status<MlKemError> check_decaps_key(ByteSpan dk);

  struct Hashes;  // implementation detail (mlkem.cc): the SHA-3 context

 private:
  const MlKemParams* params_;
  std::unique_ptr<Hashes> hashes_;
};

}  // namespace layersec::crypto
