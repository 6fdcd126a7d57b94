// Decoders of the key establishment vector files (vectors as data,
// vector_file.h), all in testdata/kex (testdata/kex/SOURCE.md says where
// each comes from):
//   RFC 9180 Appendix A DHKEM       dhkem_rfc9180.json
//   RFC 7748 §5.2 and §6.1 X25519   x25519_rfc7748.json
//   RFC 5903 §8.1 and §8.3 ECDH     ecdh_rfc5903.json
//   Wycheproof RSA-OAEP-2048        rsa_oaep_2048_sha256_wycheproof.json
//   libntru fixed-seed answers      ntru_libntru_kat.json (regression, not published)
// Each throws VectorFileError for a missing or malformed file.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "layersec/kex/kem.h"
#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// RFC 9180 DHKEM: Encap(pkR) with the ephemeral skE gives (shared, pkE).
struct DhKemCase {
  std::string name;
  kex::KemScheme scheme;
  Bytes sk_e, pk_e, sk_r, pk_r, shared;
};
std::vector<DhKemCase> dhkem_cases(const VectorDirs& dirs);

// Raw Diffie-Hellman (kex/raw_dh.h): dh(private_key, peer_public) = shared.
// `own_public` is the public key of private_key where the source gives it
// (empty otherwise). EC points are uncompressed SEC 1 (0x04 || x || y).
struct RawDhCase {
  std::string name;
  kex::KemScheme scheme;  // kX25519, kEcdhP256 or kEcdhP521
  Bytes private_key, peer_public, shared, own_public;
};
// RFC 7748 §5.2 function vectors and both directions of §6.1.
std::vector<RawDhCase> x25519_cases(const VectorDirs& dirs);
// RFC 5903 §8.1 and §8.3, both directions each.
std::vector<RawDhCase> ecdh_cases(const VectorDirs& dirs, kex::KemScheme scheme);

// RFC 7748 §5.2 iterated test: k = u = 9, then `iterations` times
// (k, u) = (X25519(k, u), k); the final k.
struct X25519IterationCase {
  std::string name;
  std::size_t iterations = 0;
  Bytes k;
};
std::vector<X25519IterationCase> x25519_iteration_cases(const VectorDirs& dirs);

// RSAES-OAEP decryption under `private_key` (PKCS#8 DER) with the empty
// label the rsa-* KEMs use: `secret` when expect_secret (a valid case
// encrypted under the empty label), otherwise the ciphertext must be refused.
struct RsaOaepCase {
  std::string name;  // "Wycheproof tcId N (comment)"
  Bytes private_key, ciphertext, secret;
  bool expect_secret = false;
};
std::vector<RsaOaepCase> rsa_oaep_cases(const VectorDirs& dirs);

// NTRU fixed answers: keygen from `keygen_seed` gives (public_key,
// private_key); encaps with `encaps_seed` gives (ciphertext, shared secret);
// decaps(private_key, ciphertext) gives the shared secret.
struct NtruCase {
  std::string name;
  kex::KemScheme scheme;
  Bytes keygen_seed, public_key, private_key, encaps_seed, ciphertext, shared;
};
std::vector<NtruCase> ntru_cases(const VectorDirs& dirs, kex::KemScheme scheme);

}  // namespace layersec::selftest
