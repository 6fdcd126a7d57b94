// Decoders of the MAC vector files (vectors as data, vector_file.h):
//   AES-CMAC   RFC 4493 §4, NIST SP 800-38B D.2/D.3 (shared secoc/), one
//              published SecOC MAC and the SecOC profile vectors (labelled
//              derived), the 802.1X-2020 AES-CMAC copies and the ICVs of
//              captured MKPDUs (shared mka/)
//   HMAC-SHA256  RFC 4231 §4.2-4.8 (testdata/crypto)
//   BLAKE2s-256  the BLAKE2 reference keyed KAT (testdata/crypto)
//   Chaskey      Mouha's reference tables and two generated sets (shared chaskey/)
// Each throws VectorFileError for a missing or malformed file.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "layersec/crypto/mac.h"
#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// One MAC known answer: the first `bits` bits of MAC(key, msg) are `tag`
// (`tag` holds (bits + 7) / 8 bytes, MSB first). A negative case's tag must
// not verify.
struct MacCase {
  std::string name;
  crypto::MacAlgorithm algorithm;
  Bytes key, msg, tag;
  std::size_t bits = 0;
  bool positive = true;
};

// Every AES-CMAC case (all three key sizes; the SecOC negative case last).
std::vector<MacCase> cmac_cases(const VectorDirs& dirs);
std::vector<MacCase> hmac_sha256_cases(const VectorDirs& dirs);
std::vector<MacCase> blake2s_cases(const VectorDirs& dirs);

// One Chaskey vector of a set: the set's tag length (8 or 16 bytes).
struct ChaskeyCase {
  std::string name;  // "<set id> len <n>"
  int rounds = 12;
  Bytes key, msg, tag;
};
// The four published sets, in file order; `sets` receives their count.
std::vector<ChaskeyCase> chaskey_cases(const VectorDirs& dirs, std::size_t* sets = nullptr);

}  // namespace layersec::selftest
