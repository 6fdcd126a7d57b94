// Decoders of the key derivation and key wrap vector files (vectors as data,
// vector_file.h):
//   HKDF-SHA256   RFC 5869 Appendix A.1-A.3 (testdata/crypto)
//   AES key wrap  RFC 3394 §4.1-4.6 (testdata/crypto), the 802.1X-2020 copies
//                 and the SAKs wrapped in captured MKPDUs (shared mka/)
// Each throws VectorFileError for a missing or malformed file.
#pragma once

#include <string>
#include <vector>

#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

struct HkdfCase {
  std::string name;
  Bytes ikm, salt, info, okm;
};
std::vector<HkdfCase> hkdf_sha256_cases(const VectorDirs& dirs);

// wrap(kek, key_data) = wrapped, and unwrap the reverse.
struct KeyWrapCase {
  std::string name;
  Bytes kek, key_data, wrapped;
};
std::vector<KeyWrapCase> keywrap_cases(const VectorDirs& dirs);

}  // namespace layersec::selftest
