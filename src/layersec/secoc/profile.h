// SecOC security profiles and the per-PDU parameters they fix, named as in
// AUTOSAR (SecureCommunicationAuthenticationProps / FreshnessProps, AP
// SecOcSecureComProps): authInfoTxLength, freshnessValueLength,
// freshnessValueTxLength, authPduHeaderLength, secured area offset/length.
//
//   profile1  24Bit-CMAC-8Bit-FV   CMAC/AES-128, 24-bit MAC, 8 FV bits sent  [PRS_SecOc_00610]
//   profile2  24Bit-CMAC-No-FV     CMAC/AES-128, 24-bit MAC, no FV           [PRS_SecOc_00620]
//   profile3  JASPAR               CMAC/AES-128, 28-bit MAC, 4 of 64 FV bits [PRS_SecOc_00630]
//   vendor    the seed paper's profile (Table 8/9/10, TPS_MANI_03140):
//             CMAC/AES-256, 64-bit MAC, 64-bit FV (Trip16|Reset16|Msg32), 16 bits sent
//   custom    any algorithm (CMAC-AES-128/256, HMAC-SHA256) and lengths in bits
//   aead-gcm  NON-STANDARD, never a default: AES-GCM encrypts the Authentic
//             I-PDU; nonce = DataId || senderId || complete FV (see engine.h)
//
// The FV length of Profile 1 is not fixed by the PRS; we use the 64-bit
// Trip|Reset|Msg layout (secoc_facts.md section 4, tag [U]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "layersec/crypto/mac.h"
#include "layersec/secoc/freshness_layout.h"

namespace layersec::secoc {

enum class ProfileKind : std::uint8_t {
  kProfile1,
  kProfile2,
  kProfile3,
  kVendor,
  kCustom,
  kAeadGcm,  // non-standard confidentiality profile
};
std::string_view to_string(ProfileKind k);

// Authenticator algorithm. The first three are the MAC algorithms allowed for
// SecOC PDUs here; kAesGcm128/256 select the non-standard AEAD profile.
enum class AuthAlgorithm : std::uint8_t {
  kCmacAes128,
  kCmacAes256,
  kHmacSha256,
  kAesGcm128,
  kAesGcm256,
};
std::string_view to_string(AuthAlgorithm a);
[[nodiscard]] bool is_aead(AuthAlgorithm a);
[[nodiscard]] std::size_t key_size(AuthAlgorithm a);
// Untruncated authenticator length in bits (CMAC 128, HMAC-SHA256 256, GCM 128).
[[nodiscard]] unsigned full_tag_bits(AuthAlgorithm a);
// The crypto::MacAlgorithm of a MAC algorithm (precondition: !is_aead(a)).
[[nodiscard]] crypto::MacAlgorithm mac_algorithm(AuthAlgorithm a);

// Parameters of one Secured I-PDU. Lengths in bits unless named *_bytes.
struct PduProfile {
  ProfileKind kind = ProfileKind::kVendor;
  AuthAlgorithm algorithm = AuthAlgorithm::kCmacAes256;
  std::uint16_t auth_info_tx_length = 64;   // authInfoTxLength (truncated MAC bits)
  FreshnessLayout freshness = FreshnessLayout::fv64(16);  // freshnessValueLength = total()
  std::uint8_t auth_pdu_header_length = 0;  // authPduHeaderLength, bytes 0..4
  std::uint32_t secured_area_offset = 0;    // securedAreaOffset, bytes
  std::uint32_t secured_area_length = 0;    // securedAreaLength, bytes; 0 = to the end

  [[nodiscard]] unsigned freshness_value_length() const { return freshness.total(); }
  [[nodiscard]] unsigned freshness_value_tx_length() const { return freshness.tx_bits; }
  // Bytes after the Authentic I-PDU: ceil((FVtx + MACtx)/8), bit-packed.
  [[nodiscard]] std::size_t auth_info_bytes() const {
    return (std::size_t{freshness.tx_bits} + auth_info_tx_length + 7) / 8;
  }
  // Bytes of the complete FV in DataToAuthenticator: ceil(FVlen/8).
  [[nodiscard]] std::size_t fv_bytes() const { return (freshness.total() + 7) / 8; }
  // Secured I-PDU length for an Authentic I-PDU of n bytes.
  [[nodiscard]] std::size_t secured_size(std::size_t n) const {
    return auth_pdu_header_length + n + auth_info_bytes();
  }
  // Per-attempt online forgery probability is 2^-forgery_exponent().
  [[nodiscard]] unsigned forgery_exponent() const { return auth_info_tx_length; }
  // Empty if the combination is usable; otherwise why not.
  [[nodiscard]] std::string validate() const;
  // One line: profile, algorithm, lengths, "forgery 2^-N per attempt",
  // and "NON-STANDARD" / "no replay protection" where they apply.
  [[nodiscard]] std::string describe() const;

  static PduProfile profile1();
  static PduProfile profile2();
  static PduProfile profile3();
  static PduProfile vendor();
  // Non-standard AEAD profile; 128-bit tag unless changed (must be 64..128,
  // multiple of 8).
  static PduProfile aead_gcm(AuthAlgorithm gcm = AuthAlgorithm::kAesGcm256);
};

// Trip and reset counter widths used for every PDU of an engine (JASPAR
// TripCntLength / ResetCntLength); the paper's FV64 uses 16 and 16.
inline constexpr std::uint8_t kDefaultTripBits = 16;
inline constexpr std::uint8_t kDefaultResetBits = 16;

}  // namespace layersec::secoc
