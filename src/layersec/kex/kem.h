// Key encapsulation mechanisms behind one KEM-shaped interface:
// generate / encapsulate / decapsulate (the shape of BoringSSL's key shares).
//
//   scheme name          what                                     shared secret
//   ml-kem-512/768/1024  FIPS 203 (crypto/mlkem.h, ours)           K, 32 bytes
//   x25519               RFC 9180 DHKEM(X25519, HKDF-SHA256)       32 bytes
//   ecdh-p256            RFC 9180 DHKEM(P-256, HKDF-SHA256)        32 bytes
//   ecdh-p521            RFC 9180 DHKEM(P-521, HKDF-SHA512)        64 bytes
//   rsa-2048/3072/15360  RSA-OAEP (SHA-256, MGF1-SHA-256, empty     32 random bytes
//                        label; RFC 8017 §7.1) key transport
//   ntru-ees613ep1       NTRUEncrypt (libntru 0.5) key transport   32 random bytes
//   ntru-ees1171ep1        of a random secret; set named in result
//   x25519+ml-kem-768    hybrid: HKDF-SHA256 over both secrets     32 bytes
//                        and the whole transcript (kem.cc)
//
// DH-KEMs follow RFC 9180 §4.1 exactly (Encap/Decap with ExtractAndExpand,
// kem_context = enc || pkR), so the shared secret is bound to the ephemeral
// and the static public key and the RFC's Appendix A vectors apply. Points are
// uncompressed SEC1 (0x04 || X || Y); X25519 keys are raw 32 bytes.
//
// Key formats (public / private bytes):
//   ML-KEM   ek / dk (FIPS 203)
//   x25519   32-byte u / 32-byte scalar (or scalar || public)
//   ecdh-*   uncompressed point / big-endian scalar of Nsk bytes (32 or 66),
//            optionally followed by the public point
//   rsa-*    DER SubjectPublicKeyInfo / DER PKCS#8 (or PKCS#1) private key
//   ntru-*   libntru ntru_export_pub / u16 length || ntru_export_priv || pub
//   hybrid   x25519 pk || ek / x25519 sk || dk
//
// Deterministic variants (known answers), per scheme, see seed_help():
//   ML-KEM   keygen seed d || z (64); encaps seed m (32)
//   x25519, ecdh-*   keygen seed = the private scalar; encaps seed = the
//            ephemeral private scalar (RFC 9180 skEm)
//   rsa-*    keygen "seed" = a DER private key (RSA keys are not derived from
//            seeds); encaps seed = secret (32) || OAEP seed (32)
//   ntru-*   keygen seed = CTR_DRBG seed for libntru (any length 1..1024);
//            encaps seed = secret (32) || CTR_DRBG seed (>= 1 byte)
//   hybrid   keygen seed = x25519 scalar (32) || d || z; encaps seed =
//            ephemeral x25519 scalar (32) || m (32)
//
// Failures are typed (KemError); nothing secret is logged. A Kem object holds
// per-scheme contexts and is thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"

namespace layersec::kex {

enum class KemScheme : std::uint8_t {
  kMlKem512,
  kMlKem768,
  kMlKem1024,
  kX25519,
  kEcdhP256,
  kEcdhP521,
  kRsa2048,
  kRsa3072,
  kRsa15360,
  kNtruEes613ep1,
  kNtruEes1171ep1,
  kHybridX25519MlKem768,
};
inline constexpr KemScheme kAllKemSchemes[] = {
    KemScheme::kMlKem512,      KemScheme::kMlKem768,       KemScheme::kMlKem1024, KemScheme::kX25519,
    KemScheme::kEcdhP256,      KemScheme::kEcdhP521,       KemScheme::kRsa2048,   KemScheme::kRsa3072,
    KemScheme::kRsa15360,      KemScheme::kNtruEes613ep1,  KemScheme::kNtruEes1171ep1,
    KemScheme::kHybridX25519MlKem768,
};

// "ml-kem-768", "x25519", "rsa-3072", "ntru-ees613ep1", "x25519+ml-kem-768".
std::string_view scheme_name(KemScheme s);
std::optional<KemScheme> parse_scheme(std::string_view name);
// Claimed classical security level in bits (for the paper's comparisons).
int security_bits(KemScheme s);

enum class KemError : std::uint8_t {
  kBadPublicKey,         // wrong length, not on the curve, fails a check, undecodable
  kBadPrivateKey,        // wrong length or undecodable
  kBadCiphertextLength,  // ciphertext of the wrong length
  kBadCiphertext,        // ciphertext rejected (RSA-OAEP/NTRU decoding, bad point)
  kBadSeed,              // deterministic input of the wrong length or form
  kWrongScheme,          // a private key loaded for another scheme
  kBackend,              // OpenSSL/libntru failure (incl. RNG)
};
std::string_view to_string(KemError e);

struct KemKeyPair {
  std::vector<std::uint8_t> public_key;
  SecretBytes private_key;
};

struct Encapsulation {
  std::vector<std::uint8_t> ciphertext;
  SecretBytes shared_secret;
};

// A private key parsed once for repeated decapsulation.
class KemPrivateKey {
 public:
  virtual ~KemPrivateKey() = default;
  [[nodiscard]] virtual KemScheme scheme() const = 0;
};

class Kem {
 public:
  virtual ~Kem() = default;
  [[nodiscard]] virtual KemScheme scheme() const = 0;
  [[nodiscard]] std::string_view name() const { return scheme_name(scheme()); }
  // Fixed sizes; 0 where the size depends on the key (RSA DER encodings).
  [[nodiscard]] virtual std::size_t public_key_size() const = 0;
  [[nodiscard]] virtual std::size_t ciphertext_size() const = 0;
  [[nodiscard]] virtual std::size_t shared_secret_size() const = 0;
  // What the deterministic inputs mean (for the CLI's help).
  [[nodiscard]] virtual std::string_view seed_help() const = 0;

  // A fresh key pair from OpenSSL's DRBG (libntru's for NTRU).
  virtual Result<KemKeyPair, KemError> generate() = 0;
  // A key pair from deterministic input (see the header comment).
  virtual Result<KemKeyPair, KemError> generate_from_seed(ByteSpan seed) = 0;

  // Encapsulates a fresh shared secret to `public_key`.
  virtual Result<Encapsulation, KemError> encapsulate(ByteSpan public_key) = 0;
  virtual Result<Encapsulation, KemError> encapsulate_with_seed(ByteSpan public_key, ByteSpan seed) = 0;

  // Parses a private key once (validating its form).
  virtual Result<std::unique_ptr<KemPrivateKey>, KemError> load_private_key(ByteSpan private_key) = 0;
  // Recovers the shared secret. ML-KEM returns the implicit-rejection key for
  // a well-formed but wrong ciphertext; RSA-OAEP and NTRU report
  // kBadCiphertext; DH-KEMs report kBadCiphertext for an invalid point.
  virtual Result<SecretBytes, KemError> decapsulate(const KemPrivateKey& key, ByteSpan ciphertext) = 0;
  // load_private_key + decapsulate.
  Result<SecretBytes, KemError> decapsulate(ByteSpan private_key, ByteSpan ciphertext);
};

// Builds the KEM for `scheme`. Throws std::runtime_error when the backend
// lacks the algorithm (configuration error).
std::unique_ptr<Kem> make_kem(KemScheme scheme);

// Reads an RSA private key in PEM (PKCS#8 or PKCS#1) from `path` and returns
// it as DER PKCS#8 for the rsa-* KEMs (used for pre-generated RSA-15360 keys).
// Refuses files readable by group or others (mode must be 0600 or stricter).
// I/O adapter: defined in kem_files.cc (library kex_io).
enum class KeyFileError : std::uint8_t { kUnreadable, kLooseMode, kNotRsaPrivateKey, kWrongSize };
Result<SecretBytes, KeyFileError> load_rsa_private_key_pem(const std::string& path, int expected_bits);
std::string_view to_string(KeyFileError e);

}  // namespace layersec::kex
