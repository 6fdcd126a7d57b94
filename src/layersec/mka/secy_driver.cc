#include "layersec/mka/secy_driver.h"

#include <algorithm>

#include "layersec/crypto/kdf.h"

namespace layersec::mka {

std::uint8_t offset_octets(ConfidentialityOffset o) {
  switch (o) {
    case ConfidentialityOffset::kOffset30: return 30;
    case ConfidentialityOffset::kOffset50: return 50;
    case ConfidentialityOffset::kIntegrityOnly:
    case ConfidentialityOffset::kOffset0: return 0;
  }
  return 0;
}

Salt xpn_salt(const KeyIdentifier& ki) {
  Salt salt = ki.mi;
  const std::uint32_t kn = ki.kn;
  salt[0] ^= static_cast<std::uint8_t>(kn >> 8);
  salt[1] ^= static_cast<std::uint8_t>(kn);
  salt[2] ^= static_cast<std::uint8_t>(kn >> 24);
  salt[3] ^= static_cast<std::uint8_t>(kn >> 16);
  return salt;
}

std::uint32_t ssci_of(std::uint64_t sci, std::span<const std::uint64_t> scis) {
  if (std::find(scis.begin(), scis.end(), sci) == scis.end()) return 0;
  // Position in descending order = 1 + the number of distinct greater SCIs.
  std::uint32_t greater = 0;
  for (std::size_t i = 0; i < scis.size(); ++i) {
    if (scis[i] <= sci) continue;
    if (std::find(scis.begin(), scis.begin() + static_cast<std::ptrdiff_t>(i), scis[i]) !=
        scis.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;  // counted already
    }
    ++greater;
  }
  return greater + 1;
}

std::string_view to_string(SecYError e) {
  switch (e) {
    case SecYError::kRefused: return "the SecY refused the SA";
    case SecYError::kBadKey: return "SAK length does not match the cipher suite";
    case SecYError::kNoSuchSa: return "no such SA";
    case SecYError::kBackend: return "SecY back end failure";
  }
  return "?";
}

bool SystemRandom::fill(MutableByteSpan out) { return crypto::random_bytes(out).ok(); }

}  // namespace layersec::mka
