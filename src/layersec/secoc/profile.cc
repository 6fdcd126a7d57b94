#include "layersec/secoc/profile.h"

#include <cstdio>

namespace layersec::secoc {

std::string_view to_string(ProfileKind k) {
  switch (k) {
    case ProfileKind::kProfile1: return "profile1";
    case ProfileKind::kProfile2: return "profile2";
    case ProfileKind::kProfile3: return "profile3";
    case ProfileKind::kVendor: return "vendor";
    case ProfileKind::kCustom: return "custom";
    case ProfileKind::kAeadGcm: return "aead-gcm";
  }
  return "unknown";
}

std::string_view to_string(AuthAlgorithm a) {
  switch (a) {
    case AuthAlgorithm::kCmacAes128: return "cmac-aes128";
    case AuthAlgorithm::kCmacAes256: return "cmac-aes256";
    case AuthAlgorithm::kHmacSha256: return "hmac-sha256";
    case AuthAlgorithm::kAesGcm128: return "aes128-gcm";
    case AuthAlgorithm::kAesGcm256: return "aes256-gcm";
  }
  return "unknown";
}

bool is_aead(AuthAlgorithm a) {
  return a == AuthAlgorithm::kAesGcm128 || a == AuthAlgorithm::kAesGcm256;
}

std::size_t key_size(AuthAlgorithm a) {
  switch (a) {
    case AuthAlgorithm::kCmacAes128:
    case AuthAlgorithm::kAesGcm128: return 16;
    case AuthAlgorithm::kCmacAes256:
    case AuthAlgorithm::kHmacSha256:
    case AuthAlgorithm::kAesGcm256: return 32;
  }
  return 0;
}

unsigned full_tag_bits(AuthAlgorithm a) { return a == AuthAlgorithm::kHmacSha256 ? 256 : 128; }

crypto::MacAlgorithm mac_algorithm(AuthAlgorithm a) {
  switch (a) {
    case AuthAlgorithm::kCmacAes128: return crypto::MacAlgorithm::kCmacAes128;
    case AuthAlgorithm::kHmacSha256: return crypto::MacAlgorithm::kHmacSha256;
    default: return crypto::MacAlgorithm::kCmacAes256;
  }
}

std::string PduProfile::validate() const {
  if (auth_info_tx_length == 0 || auth_info_tx_length > full_tag_bits(algorithm))
    return "authInfoTxLength must be 1.." + std::to_string(full_tag_bits(algorithm)) + " for " +
           std::string(to_string(algorithm));
  if (is_aead(algorithm) && (auth_info_tx_length % 8 != 0 || auth_info_tx_length < 64))
    return "authInfoTxLength of an AES-GCM profile must be a multiple of 8 in 64..128";
  if (!freshness.valid())
    return "freshness layout invalid: need trip+reset+msg+resetFlag <= 64 bits and "
           "resetFlag < freshnessValueTxLength <= resetFlag + message counter bits";
  if (is_aead(algorithm) && !freshness.has_freshness())
    return "the AES-GCM profile needs a freshness value (it is part of the nonce)";
  if (auth_pdu_header_length > 4) return "authPduHeaderLength must be 0..4 bytes";
  return {};
}

std::string PduProfile::describe() const {
  char buf[320];
  const bool standard = kind == ProfileKind::kProfile1 || kind == ProfileKind::kProfile2 ||
                        kind == ProfileKind::kProfile3;
  std::snprintf(buf, sizeof buf,
                "%s (%s) %s authInfoTxLength=%u freshnessValueLength=%u "
                "freshnessValueTxLength=%u header=%uB; forgery probability 2^-%u per attempt%s%s",
                std::string(to_string(kind)).c_str(),
                kind == ProfileKind::kAeadGcm ? "NON-STANDARD AEAD, confidentiality"
                : standard                    ? "AUTOSAR PRS_SecOc standard"
                                              : "vendor-defined, TPS_MANI_03140",
                std::string(to_string(algorithm)).c_str(), unsigned{auth_info_tx_length},
                freshness.total(), unsigned{freshness.tx_bits}, unsigned{auth_pdu_header_length},
                forgery_exponent(),
                freshness.has_freshness() ? "" : "; NO freshness value: no replay protection",
                "");
  return buf;
}

PduProfile PduProfile::profile1() {
  PduProfile p;
  p.kind = ProfileKind::kProfile1;
  p.algorithm = AuthAlgorithm::kCmacAes128;
  p.auth_info_tx_length = 24;
  p.freshness = FreshnessLayout::fv64(8);
  return p;
}

PduProfile PduProfile::profile2() {
  PduProfile p;
  p.kind = ProfileKind::kProfile2;
  p.algorithm = AuthAlgorithm::kCmacAes128;
  p.auth_info_tx_length = 24;
  p.freshness = FreshnessLayout{};
  return p;
}

PduProfile PduProfile::profile3() {
  // JASPAR: 64-bit FV = Trip16 | Reset16 | MsgUpper28 | MsgLower2 | ResetFlag2,
  // 4 bits sent (MsgCntLower | ResetFlag), 28-bit MAC.
  PduProfile p;
  p.kind = ProfileKind::kProfile3;
  p.algorithm = AuthAlgorithm::kCmacAes128;
  p.auth_info_tx_length = 28;
  p.freshness = FreshnessLayout::jaspar(16, 16, 30, 2, 4);
  return p;
}

PduProfile PduProfile::vendor() {
  PduProfile p;
  p.kind = ProfileKind::kVendor;
  p.algorithm = AuthAlgorithm::kCmacAes256;
  p.auth_info_tx_length = 64;
  p.freshness = FreshnessLayout::fv64(16);
  return p;
}

PduProfile PduProfile::aead_gcm(AuthAlgorithm gcm) {
  PduProfile p;
  p.kind = ProfileKind::kAeadGcm;
  p.algorithm = gcm;
  p.auth_info_tx_length = 128;
  p.freshness = FreshnessLayout::fv64(16);
  return p;
}

}  // namespace layersec::secoc
