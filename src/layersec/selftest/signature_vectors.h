// Decoders of the handshake signature vector files (vectors as data,
// vector_file.h), in testdata/kex (testdata/kex/SOURCE.md):
//   Ed25519      RFC 8032 §7.1 TEST 1-3                ed25519_rfc8032.json
//   ECDSA P-256  RFC 6979 A.2.5, SHA-256 signatures     ecdsa_p256_rfc6979.json
// Raw keys are wrapped in the DER forms kex/pki.h takes: PKCS#8 and
// SubjectPublicKeyInfo (RFC 8410 §4 and §7 for Ed25519, RFC 5480 for P-256),
// and (r, s) as a DER Ecdsa-Sig-Value (RFC 5480 §2.2). Each throws
// VectorFileError for a missing or malformed file.
#pragma once

#include <string>
#include <vector>

#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// verify(public_key, message, signature) holds; where `deterministic`,
// sign(private_key, message) also gives exactly `signature`.
struct SignatureCase {
  std::string name;
  Bytes private_key;  // PKCS#8 DER
  Bytes public_key;   // SubjectPublicKeyInfo DER
  Bytes message, signature;
  bool deterministic = false;
};
std::vector<SignatureCase> ed25519_cases(const VectorDirs& dirs);
std::vector<SignatureCase> ecdsa_p256_cases(const VectorDirs& dirs);

}  // namespace layersec::selftest
