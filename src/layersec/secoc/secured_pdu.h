// Secured I-PDU codec (AUTOSAR SWS_SecOC_00261 / [PRS_SecOc_00211]):
//
//   [Header: authentic length, authPduHeaderLength bytes, big-endian]
//   Authentic I-PDU
//   Truncated FV (freshnessValueTxLength LSBs) | Truncated MAC (authInfoTxLength MSBs)
//
// The truncated FV and MAC are packed MSB-first bit by bit with no padding
// between them; only the last byte is padded with zero bits (autoas/as
// SecOC_BitMove, EasyXMen SECOC_BIT_TO_BYTE). The header is not part of the
// MAC input (SWS_SecOC_00262). Nonzero padding bits are rejected so a Secured
// I-PDU has exactly one encoding.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/secoc/profile.h"

namespace layersec::secoc {

inline constexpr std::size_t kMaxTagBytes = 32;

enum class CodecError : std::uint8_t {
  kTooShort,           // fewer bytes than header + auth info
  kBadHeaderLength,    // header length disagrees with the PDU size
  kNonZeroPadding,     // pad bits of the last byte are not zero
  kSecuredAreaOutside, // secured area extends past the Authentic I-PDU
  kBufferTooSmall,     // output buffer too small
  kPayloadTooLong,     // length does not fit the header
};

// A parsed Secured I-PDU: views into the input, nothing copied but the tag.
struct SecuredPduView {
  ByteSpan authentic;
  std::uint64_t truncated_fv = 0;
  // Truncated authenticator, left-aligned, unused low bits zero.
  std::array<std::uint8_t, kMaxTagBytes> tag{};
};

// The byte layout of a profile's Secured I-PDU reduced to counts and masks:
// computed once per configured PDU (an offset table, as open62541 does for
// fixed layouts), so parsing and packing per message do no bit-width
// arithmetic. Built from a valid profile (PduProfile::validate()).
struct WireLayout {
  WireLayout() = default;
  explicit WireLayout(const PduProfile& profile);
  std::uint8_t header = 0;         // authPduHeaderLength
  std::uint8_t tail = 0;           // auth_info_bytes(): truncated FV | truncated MAC
  std::uint8_t fv_tx_bits = 0;     // freshnessValueTxLength
  std::uint8_t mac_bytes = 0;      // ceil(authInfoTxLength / 8)
  std::uint8_t mac_last_mask = 0;  // bits of the last MAC byte that are MAC bits
  std::uint8_t pad_mask = 0;       // padding bits of the last tail byte (must be zero)
  std::uint16_t mac_bits = 0;      // authInfoTxLength
};

// Parses `secured` under `profile` (or its precomputed layout). No state is
// touched.
[[nodiscard]] Result<SecuredPduView, CodecError> parse_secured_pdu(const PduProfile& profile,
                                                                   ByteSpan secured);
[[nodiscard]] Result<SecuredPduView, CodecError> parse_secured_pdu(const WireLayout& layout,
                                                                   ByteSpan secured);

// The part of `authentic` that enters DataToAuthenticator
// (securedAreaOffset / securedAreaLength; length 0 = to the end).
[[nodiscard]] Result<ByteSpan, CodecError> secured_area(const PduProfile& profile,
                                                        ByteSpan authentic);
// Writes the header for an Authentic I-PDU of `n` bytes into out[0..hdr).
[[nodiscard]] Status<CodecError> write_header(const PduProfile& profile, std::size_t n,
                                              MutableByteSpan out);

// Packs truncated FV and MAC (tag: left-aligned, at least ceil(MACtx/8)
// bytes) into out[0..auth_info_bytes()).
void pack_auth_info(const PduProfile& profile, std::uint64_t truncated_fv, const std::uint8_t* tag,
                    std::uint8_t* out);
void pack_auth_info(const WireLayout& layout, std::uint64_t truncated_fv, const std::uint8_t* tag,
                    std::uint8_t* out);

// Whole-PDU writer for tests, vectors and the sync message: header ||
// authentic || packed auth info. Returns the size written.
[[nodiscard]] Result<std::size_t, CodecError> write_secured_pdu(const PduProfile& profile,
                                                                ByteSpan authentic,
                                                                std::uint64_t truncated_fv,
                                                                ByteSpan tag, MutableByteSpan out);

// Complete FV as ceil(FVlen/8) big-endian bytes (right-aligned when FVlen is
// not a multiple of 8, an assumption: secoc_facts.md section 3, tag [U]).
// Returns the byte count written to out (at most 8). Inline: it is on the
// path of every protect and verify.
inline std::size_t encode_fv(const PduProfile& profile, std::uint64_t fv, std::uint8_t* out) {
  const std::size_t n = profile.fv_bytes();
  if (n == 8) {
    store_be64(out, fv);
    return 8;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(fv >> (8 * (n - 1 - i)));
  return n;
}


}  // namespace layersec::secoc
