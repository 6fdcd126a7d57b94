// Decoders of the AES-GCM / AES-GMAC vector files (vectors as data,
// vector_file.h):
//   the GCM specification test cases (McGrew-Viega 1-6 and 13-18,
//   testdata/crypto/gcm_vectors.json), and the IEEE 802.1AE-2018 Annex C,
//   supplementary and negative frames (shared macsec/) as GCM/GMAC cases.
// Each throws VectorFileError for a missing or malformed file.
#pragma once

#include <string>
#include <vector>

#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// One GCM known answer. An integrity-only case is GMAC: `aad` authenticated,
// empty plaintext. A negative case must not open.
struct GcmCase {
  std::string name;
  Bytes key, iv, aad, plaintext, ciphertext, tag;
  bool integrity_only = false;
  bool positive = true;
};

std::vector<GcmCase> gcm_spec_cases(const VectorDirs& dirs);

// 802.1AE-2018 §14.5: IV = SCI || PN, or (SSCI || PN64) XOR Salt for the
// XPN suites; integrity-only frames authenticate DA..user data (GMAC),
// confidentiality frames authenticate DA..SecTAG and encrypt the user data.
// Clear tags between SA and SecTAG are outside the ICV (§8.1) and removed.
// Frames that are not MACsec frames at all are skipped. Names are the ids.
std::vector<GcmCase> macsec_gcm_cases(const VectorDirs& dirs);

}  // namespace layersec::selftest
