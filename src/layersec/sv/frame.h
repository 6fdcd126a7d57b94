// IEC 61850-9-2 Sampled Values frame codec (Ethernet to the last ASDU field).
//
// Frame layout (IEC 61850-9-2 Ed.2.1 §8 and Annex A; IEC 61869-9 §6.9):
//
//   dst(6) src(6) [0x8100 TCI(2)] 0x88BA APPID(2) Length(2) Reserved1(2) Reserved2(2)
//   savPdu  0x60 L {                                   APPLICATION 0 IMPLICIT SEQUENCE
//     noASDU   0x80 L INTEGER                           number of ASDUs that follow
//     security 0x81 L ANY OPTIONAL                      reserved by 9-2 for future use
//     seqASDU  0xA2 L { ASDU 0x30 L { ... } x noASDU }
//   }
//   [IEC 62351-6 security extension, see security.h]    counted in Length
//
//   ASDU: svID 0x80 VisibleString, datSet 0x81 OPTIONAL, smpCnt 0x82 (2 octets),
//         confRev 0x83 (4), refrTm 0x84 (8) OPTIONAL, smpSynch 0x85 (1),
//         smpRate 0x86 (2) OPTIONAL, sample data 0x87, smpMod 0x88 (2) OPTIONAL,
//         gmIdentity 0x89 (8) OPTIONAL   (fixed-size encodings per 9-2 Table 14)
//
// Length counts from APPID to the end of the APDU (and of the security
// extension when present). Reserved1 bit 15 is the Simulate bit (9-2 Ed.2.1).
// The bit use of the rest of Reserved1 and of Reserved2 is documented in
// security.h and docs/sv.md.
//
// decode_frame() parses into views of the caller's bytes (no copies, no
// allocation), validates everything and returns a typed reason on failure.
// encode_frame() writes a Frame back with minimal BER lengths; a frame that
// was encoded with minimal lengths re-encodes byte for byte.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::sv {

inline constexpr std::uint16_t kEtherTypeSv = 0x88BA;
inline constexpr std::uint16_t kEtherTypeVlan = 0x8100;
// Reserved1 bit 15: Simulate (IEC 61850-9-2 Ed.2.1 §8.2.1, Wireshark sv.reserve1.s_bit).
inline constexpr std::uint16_t kReserved1Simulate = 0x8000;
// Reserved1 bits 7..0: length of the security extension (see security.h).
inline constexpr std::uint16_t kReserved1ExtensionLengthMask = 0x00FF;
// Most ASDUs one frame may carry. IEC 61869-9 profiles use 1..8; 9-2 allows more.
inline constexpr std::size_t kMaxAsdus = 16;
// Largest ASDU we accept (bytes of its contents); bounds the per-frame work.
inline constexpr std::size_t kMaxAsduBytes = 1024;
// Largest svID / datSet (VisibleString129 per IEC 61850-7-2).
inline constexpr std::size_t kMaxIdentifierBytes = 129;
// Ethernet minimum frame without FCS: shorter frames are zero padded.
inline constexpr std::size_t kMinEthernetFrame = 60;
// Offset of the EtherType in an untagged frame.
inline constexpr std::size_t kEthernetAddressBytes = 12;

// BER tags of the savPdu (9-2 Annex A, IMPLICIT context-specific tags).
namespace tag {
inline constexpr std::uint8_t kSavPdu = 0x60;
inline constexpr std::uint8_t kNoAsdu = 0x80;
inline constexpr std::uint8_t kSecurity = 0x81;
inline constexpr std::uint8_t kSeqAsdu = 0xA2;
inline constexpr std::uint8_t kAsdu = 0x30;
inline constexpr std::uint8_t kSvId = 0x80;
inline constexpr std::uint8_t kDatSet = 0x81;
inline constexpr std::uint8_t kSmpCnt = 0x82;
inline constexpr std::uint8_t kConfRev = 0x83;
inline constexpr std::uint8_t kRefrTm = 0x84;
inline constexpr std::uint8_t kSmpSynch = 0x85;
inline constexpr std::uint8_t kSmpRate = 0x86;
inline constexpr std::uint8_t kSeqData = 0x87;
inline constexpr std::uint8_t kSmpMod = 0x88;
inline constexpr std::uint8_t kGmIdentity = 0x89;
}  // namespace tag

// Why a frame was rejected. Each maps to a drop counter.
enum class DecodeError : std::uint8_t {
  kTruncated,         // shorter than the Ethernet + SV header
  kNotSv,             // EtherType (after an optional 802.1Q tag) is not 0x88BA
  kLengthMismatch,    // Length field disagrees with the frame or the savPdu
  kBadBer,            // truncated or malformed BER (bad length, high tag, indefinite form)
  kUnexpectedTag,     // a tag not allowed at its position, or a missing mandatory field
  kBadFieldSize,      // a fixed-size field (smpCnt, confRev, ...) of the wrong size
  kBadNoAsdu,         // noASDU is 0, not a small INTEGER, or disagrees with the ASDUs present
  kTooManyAsdus,      // more than kMaxAsdus ASDUs
  kOversizedAsdu,     // an ASDU (or svID/datSet) larger than the limits above
  kTrailingBytes,     // bytes after the last element inside a constructed value
  kBadExtension,      // Reserved1 announces a security extension that does not fit
};
std::string_view to_string(DecodeError e);
inline constexpr std::size_t kDecodeErrorCount = 11;

enum class EncodeError : std::uint8_t {
  kBufferTooSmall,   // output buffer too short
  kBadNoAsdu,        // no_asdu is 0 or larger than kMaxAsdus
  kFieldTooLarge,    // svID/datSet/ASDU/extension beyond the limits
  kFrameTooLarge,    // Length would not fit in 16 bits
};
std::string_view to_string(EncodeError e);

// Ethernet II header with an optional 802.1Q tag.
struct EthernetHeader {
  std::array<std::uint8_t, 6> dst{};
  std::array<std::uint8_t, 6> src{};
  bool has_vlan = false;
  std::uint8_t priority = 4;  // PCP; IEC 61850-9-2 default for SV is 4
  bool dei = false;
  std::uint16_t vlan_id = 0;  // 0 = priority tag only
  bool operator==(const EthernetHeader&) const = default;
};

// One ASDU, as views of the frame bytes. Optional fields are empty views /
// has_* false when absent.
struct Asdu {
  ByteSpan sv_id;        // VisibleString bytes
  ByteSpan dat_set;      // empty when absent
  bool has_dat_set = false;
  std::uint16_t smp_cnt = 0;
  std::uint32_t conf_rev = 0;
  ByteSpan refr_tm;      // 8 bytes (UtcTime) when present
  bool has_refr_tm = false;
  std::uint8_t smp_synch = 0;  // 0 none, 1 local, 2 global, 5..254 per 61869-9
  std::uint16_t smp_rate = 0;
  bool has_smp_rate = false;
  ByteSpan seq_data;     // the dataset values (sample data)
  std::uint16_t smp_mod = 0;
  bool has_smp_mod = false;
  ByteSpan gm_identity;  // 8 bytes when present
  bool has_gm_identity = false;

  // Offsets in the frame (decode only; 0 after a manual build).
  std::size_t smp_cnt_offset = 0;   // first byte of the smpCnt value
  std::size_t seq_data_offset = 0;  // first byte of the sample data value

  [[nodiscard]] std::string_view sv_id_string() const {
    return {reinterpret_cast<const char*>(sv_id.data()), sv_id.size()};
  }
  [[nodiscard]] std::string_view dat_set_string() const {
    return {reinterpret_cast<const char*>(dat_set.data()), dat_set.size()};
  }
};

// A whole SV frame as views. Produced by decode_frame(); filled by hand (or by
// the stream template) for encode_frame().
struct Frame {
  EthernetHeader eth;
  std::uint16_t appid = 0x4000;
  std::uint16_t length = 0;      // decoded value; ignored (computed) by the encoder
  std::uint16_t reserved1 = 0;   // bit 15 Simulate; bits 7..0 extension length (computed)
  std::uint16_t reserved2 = 0;
  ByteSpan security;             // savPdu 'security' [1] contents (9-2's reserved field)
  bool has_security = false;
  std::uint16_t no_asdu = 0;
  std::array<Asdu, kMaxAsdus> asdus{};
  ByteSpan extension;            // IEC 62351-6 security extension bytes (after the savPdu)

  // Offsets in the frame (decode only).
  std::size_t ethertype_offset = 0;  // 12 or 16
  std::size_t savpdu_end = 0;        // one past the last savPdu byte
  std::size_t frame_end = 0;         // one past the extension (before Ethernet padding)

  [[nodiscard]] bool simulate() const { return (reserved1 & kReserved1Simulate) != 0; }
  [[nodiscard]] std::size_t header_offset() const { return ethertype_offset + 2; }  // APPID
};

// Parses and validates a whole frame (dst MAC to the end; no FCS). Trailing
// bytes beyond Length are allowed only as padding of a minimum-size frame.
Result<Frame, DecodeError> decode_frame(ByteSpan frame);

// Size encode_frame() will produce for `f` (0 if it cannot be encoded).
std::size_t encoded_size(const Frame& f);

// Writes `f` into out (minimal BER lengths, Length computed from the content
// plus f.extension, Reserved1 bits 7..0 set to f.extension.size(), other
// Reserved1 bits as given; Reserved2 is the header CRC when an extension is
// present, else as given). Returns the number of bytes written.
Result<std::size_t, EncodeError> encode_frame(const Frame& f, MutableByteSpan out);

// CRC-16 carried in Reserved2 when a security extension is present: CRC-16/
// MODBUS (reflected polynomial 0xA001, initial value 0xFFFF) over EtherType,
// APPID, Length and Reserved1 (8 bytes), as in EVerest's IEC 62351-6 GOOSE
// code (see docs/sv.md for the source and the disagreement).
std::uint16_t header_crc16(ByteSpan ethertype_to_reserved1);

// Field-by-field equality of two decoded frames (contents, not offsets).
bool same_content(const Frame& a, const Frame& b);

}  // namespace layersec::sv
