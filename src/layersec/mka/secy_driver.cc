#include "layersec/mka/secy_driver.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "layersec/crypto/kdf.h"

namespace layersec::mka {

std::string_view to_string(CipherSuite s) {
  switch (s) {
    case CipherSuite::kGcmAes128: return "GCM-AES-128";
    case CipherSuite::kGcmAes256: return "GCM-AES-256";
    case CipherSuite::kGcmAesXpn128: return "GCM-AES-XPN-128";
    case CipherSuite::kGcmAesXpn256: return "GCM-AES-XPN-256";
  }
  return "?";
}

std::optional<CipherSuite> cipher_suite_from_string(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (auto s : {CipherSuite::kGcmAes128, CipherSuite::kGcmAes256, CipherSuite::kGcmAesXpn128,
                 CipherSuite::kGcmAesXpn256}) {
    if (upper == to_string(s)) return s;
  }
  return std::nullopt;
}

std::uint64_t cipher_suite_id(CipherSuite s) {
  switch (s) {
    case CipherSuite::kGcmAes128: return kCipherSuiteGcmAes128;
    case CipherSuite::kGcmAes256: return kCipherSuiteGcmAes256;
    case CipherSuite::kGcmAesXpn128: return kCipherSuiteGcmAesXpn128;
    case CipherSuite::kGcmAesXpn256: return kCipherSuiteGcmAesXpn256;
  }
  return 0;
}

std::optional<CipherSuite> cipher_suite_from_id(std::uint64_t id) {
  if (id == kCipherSuiteGcmAes128 || id == kCipherSuiteGcmAes128Legacy) return CipherSuite::kGcmAes128;
  if (id == kCipherSuiteGcmAes256) return CipherSuite::kGcmAes256;
  if (id == kCipherSuiteGcmAesXpn128) return CipherSuite::kGcmAesXpn128;
  if (id == kCipherSuiteGcmAesXpn256) return CipherSuite::kGcmAesXpn256;
  return std::nullopt;
}

std::size_t sak_size(CipherSuite s) {
  return (s == CipherSuite::kGcmAes256 || s == CipherSuite::kGcmAesXpn256) ? 32 : 16;
}

bool is_xpn(CipherSuite s) { return s == CipherSuite::kGcmAesXpn128 || s == CipherSuite::kGcmAesXpn256; }

std::uint64_t max_pn(CipherSuite s) { return is_xpn(s) ? UINT64_MAX : 0xFFFFFFFFULL; }

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
