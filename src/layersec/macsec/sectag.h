// MACsec SecTAG codec (IEEE 802.1AE-2018 clause 9) and secure-frame layout.
//
// A secure frame (MPDU with its MAC addresses) is laid out as
//
//   DA(6) SA(6) [clear tags] | 88-E5 TCI/AN(1) SL(1) PN(4) [SCI(8)] | Secure Data | ICV(16)
//                              '-------------- SecTAG (9.3) ---------'
//
// where "clear tags" are zero, one or two 802.1Q/802.1ad tags kept in front of
// the SecTAG in clear-tag mode (docs/macsec.md) and absent in standard mode.
//
// parse_sectag() decodes one SecTAG through a ByteReader and rejects reserved
// or inconsistent bits (9.5, 9.7, 9.12) with a typed SecTagError.
// locate_secure_frame() finds the SecTAG in a frame and checks the length
// rules of 9.7/9.12 (SL against the Secure Data length, minimum sizes).
// encode_sectag() writes a SecTAG through a ByteWriter.
// Nothing here allocates; all views point into the caller's buffer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::macsec {

inline constexpr std::uint16_t kMacsecEtherType = 0x88E5;  // 802.1AE-2018 9.2
inline constexpr std::uint16_t kCTagTpid = 0x8100;         // 802.1Q C-VLAN tag
inline constexpr std::uint16_t kSTagTpid = 0x88A8;         // 802.1Q S-VLAN tag (802.1ad)
inline constexpr std::size_t kMacAddressesSize = 12;       // DA + SA
inline constexpr std::size_t kVlanTagSize = 4;
inline constexpr std::size_t kMaxClearTags = 2;
inline constexpr std::size_t kSecTagSizeNoSci = 8;   // EtherType, TCI/AN, SL, PN
inline constexpr std::size_t kSecTagSizeWithSci = 16;
inline constexpr std::size_t kIcvSize = 16;          // every GCM-AES suite (14.5)
inline constexpr std::size_t kShortLengthLimit = 48; // SL is set only below this (9.7)
inline constexpr std::uint16_t kEndStationPort = 0x0001;  // implicit SCI port (9.9)
// Minimum Ethernet frame without FCS; MACs pad shorter frames up to it.
inline constexpr std::size_t kMinFrameSize = 60;

// Secure Channel Identifier (802.1AE-2018 8.2.1, 9.9): a 48-bit MAC address
// (the system identifier) followed by a 16-bit port identifier, held as a
// 64-bit big-endian number so it can be compared and used as a key.
struct Sci {
  std::uint64_t value = 0;

  static constexpr Sci from_parts(const std::uint8_t* mac, std::uint16_t port) {
    std::uint64_t v = 0;
    for (int i = 0; i < 6; ++i) v = (v << 8) | mac[i];
    return Sci{(v << 16) | port};
  }
  [[nodiscard]] constexpr std::uint16_t port() const { return static_cast<std::uint16_t>(value); }
  // The system identifier (MAC address) as 6 bytes.
  [[nodiscard]] std::array<std::uint8_t, 6> mac() const;
  // The 8-byte wire form.
  [[nodiscard]] std::array<std::uint8_t, 8> bytes() const;
  constexpr auto operator<=>(const Sci&) const = default;
};

// TCI bits of octet 3 of the SecTAG (9.5), AN in its two low bits (9.6).
inline constexpr std::uint8_t kTciV = 0x80;    // version, must be 0
inline constexpr std::uint8_t kTciEs = 0x40;   // end station (implicit SCI = SA || 0x0001)
inline constexpr std::uint8_t kTciSc = 0x20;   // SCI present
inline constexpr std::uint8_t kTciScb = 0x10;  // single copy broadcast (EPON)
inline constexpr std::uint8_t kTciE = 0x08;    // encryption
inline constexpr std::uint8_t kTciC = 0x04;    // changed text
inline constexpr std::uint8_t kAnMask = 0x03;

// Why a SecTAG or secure frame is not valid. Every one of these is counted
// as InPktsBadTag by the SecY (10.6.1), except kNotMacsec (untagged).
enum class SecTagError : std::uint8_t {
  kTooShort,            // fewer octets than a SecTAG, or than SecTAG + ICV + data
  kNotMacsec,           // EtherType is not 88-E5 (not a MACsec frame)
  kVersion,             // V bit set (9.5)
  kEsWithSc,            // ES and SC both set (9.5)
  kScbWithSc,           // SCB and SC both set (9.5)
  kEncryptedNotChanged, // E set but C clear (9.5: E implies C)
  kChangedNotEncrypted, // C set but E clear: with a 16-octet ICV C is set only with E (14.5)
  kReservedBits,        // the two high bits of the SL octet are not zero (9.7)
  kShortLengthTooLarge, // SL >= 48 (9.7)
  kShortLengthMismatch, // SL != 0 and SL != Secure Data length, or SL == 0 and data < 48
  kPnZero,              // PN field zero with a 32-bit PN suite (9.8, 10.6.2)
};
std::string_view to_string(SecTagError e);

// A decoded SecTAG (without its EtherType).
struct SecTag {
  bool es = false;
  bool sc = false;
  bool scb = false;
  bool e = false;
  bool c = false;
  std::uint8_t an = 0;
  std::uint8_t sl = 0;
  std::uint32_t pn = 0;
  Sci sci{};  // meaningful only when sc

  [[nodiscard]] std::uint8_t tci_an() const {
    return static_cast<std::uint8_t>((es ? kTciEs : 0) | (sc ? kTciSc : 0) | (scb ? kTciScb : 0) |
                                     (e ? kTciE : 0) | (c ? kTciC : 0) | (an & kAnMask));
  }
  // Encoded size including the EtherType: 8 or 16 octets.
  [[nodiscard]] std::size_t size() const { return sc ? kSecTagSizeWithSci : kSecTagSizeNoSci; }
  bool operator==(const SecTag&) const = default;
};

// Options for SecTAG parsing that depend on the receiving SecY.
struct SecTagParseOptions {
  // XPN suites carry the low 32 bits of a 64-bit PN, which may be zero
  // (802.1AEbw); otherwise PN 0 is invalid.
  bool allow_zero_pn = false;
};

// Parses a SecTAG starting at its EtherType (88-E5). On success the reader is
// positioned after the SecTAG. Checks the bits that a SecTAG alone can show
// to be invalid (V, ES/SC, SCB/SC, E/C, SL reserved bits and range, PN 0).
[[nodiscard]] Result<SecTag, SecTagError> parse_sectag(ByteReader& reader,
                                                       SecTagParseOptions options = {});

// Writes the SecTAG (EtherType first). Returns false if the writer overflowed.
bool encode_sectag(ByteWriter& writer, const SecTag& tag);

// The Short Length for a Secure Data field of `secure_data_size` octets (9.7).
[[nodiscard]] constexpr std::uint8_t short_length_for(std::size_t secure_data_size) {
  return secure_data_size < kShortLengthLimit ? static_cast<std::uint8_t>(secure_data_size) : 0;
}

// The parts of a secure frame, as views into the frame.
struct SecureFrameView {
  ByteSpan addresses;   // DA || SA
  ByteSpan clear_tags;  // 0, 4 or 8 octets of VLAN tags before the SecTAG
  ByteSpan sectag;      // the encoded SecTAG including its EtherType
  ByteSpan secure_data; // User Data, encrypted or not
  ByteSpan icv;         // 16 octets
  ByteSpan padding;     // MAC padding after the ICV (minimum-size frames only)
  SecTag tag;
};

// Locates and validates the SecTAG of `frame`. With `max_clear_tags` > 0 up
// to that many 0x8100/0x88A8 tags are skipped before the SecTAG (clear-tag
// mode). Returns kNotMacsec when the EtherType found is not 88-E5 and
// kTooShort when the frame cannot hold DA, SA and an EtherType. Validates the
// SecTAG (parse_sectag) and the lengths of 9.12: SL must equal the Secure Data
// length when non-zero and the Secure Data must be at least 48 octets when SL
// is zero; an ICV of kIcvSize octets must follow. In a frame of at most
// kMinFrameSize octets (plus clear tags) octets after SL + ICV are MAC
// padding (9.7) and returned as `padding`; elsewhere they are a mismatch.
[[nodiscard]] Result<SecureFrameView, SecTagError> locate_secure_frame(
    ByteSpan frame, std::size_t max_clear_tags, SecTagParseOptions options = {});

// Number of octets of VLAN tags (0x8100 / 0x88A8, at most `max_tags`) that
// follow the MAC addresses of `frame`.
[[nodiscard]] std::size_t leading_vlan_tags_size(ByteSpan frame, std::size_t max_tags);

}  // namespace layersec::macsec
