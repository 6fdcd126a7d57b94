// Decoder of the ML-KEM vector file (vectors as data, vector_file.h): the
// NIST ACVP-Server v1.1.0.40 subset in ../shared/vectors/mlkem (FIPS 203
// keyGen, encapsulation and decapsulation incl. implicit rejection; 5 cases
// of each per parameter set). Throws VectorFileError for a missing or
// malformed file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// ML-KEM.KeyGen_internal(d, z) = (ek, dk).
struct MlKemKeyGenCase {
  std::string name;  // "ACVP tcId N"
  Bytes d, z, ek, dk;
};
// ML-KEM.Encaps_internal(ek, m) = (k, c); dk is the matching key.
struct MlKemEncapsCase {
  std::string name;
  Bytes ek, dk, m, c, k;
};
// ML-KEM.Decaps_internal(dk, c) = k; a "modified ciphertext" case expects
// the implicit-rejection key J(z || c).
struct MlKemDecapsCase {
  std::string name;
  Bytes dk, c, k;
  bool implicit_rejection = false;
};
struct MlKemCases {
  std::vector<MlKemKeyGenCase> keygen;
  std::vector<MlKemEncapsCase> encaps;
  std::vector<MlKemDecapsCase> decaps;
};

// The cases of one parameter set: "ML-KEM-512", "ML-KEM-768" or "ML-KEM-1024".
MlKemCases mlkem_cases(const VectorDirs& dirs, std::string_view set);

}  // namespace layersec::selftest
