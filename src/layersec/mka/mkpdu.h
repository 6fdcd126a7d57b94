// MKPDU codec: EAPOL-MKA frames (IEEE 802.1X-2020 §11.11, §11.12), sans-I/O.
//
//   Ethernet  DA(6) SA(6) EtherType 0x888E                      (§11.1)
//   EAPOL     protocol version (1..3), packet type 5, body length (§11.3)
//   MKPDU     Basic Parameter Set (always first, no type octet), then
//             parameter sets, each a 4-octet header
//               type(8) | type-specific(8) | type-specific(4) body length(12)
//             a body and zero padding to a multiple of 4 octets; then the
//             16-octet ICV, optionally announced by an ICV Indicator (255).
//
// decode_mkpdu() validates the whole frame before it returns anything (parse,
// then act: never a partial result) and hands back the value types below plus
// the span the ICV covers and the ICV, so the caller verifies with
// mka::verify_icv (keys.h) before it believes any field. encode_mkpdu() is
// its inverse: deterministic, canonical (sets in ascending type order, unknown
// sets after the known ones in their stored order, reserved bits and padding
// zero), and it refuses every value the decoder would refuse, so a Mkpdu that
// encodes decodes back to an equal Mkpdu.
//
// Rules the codec enforces (the participant enforces the semantics: CKN match,
// MN freshness, key server election, KN/AN meaning, ...):
//  - DA a group address from DecodeOptions::allowed_destinations (default the
//    PAE group address 01-80-C2-00-00-03), never an individual address
//    (§11.11.2 a); EtherType 0x888E (a VLAN tag is stripped below us);
//  - EAPOL version 1..3, type 5; the body length covers exactly the rest of
//    the frame (trailing octets are refused), is >= 32 and a multiple of 4
//    (§11.11.2 b, c);
//  - Basic Parameter Set: MKA version >= 1 (kept: a later version adds set
//    types, which the unknown-set rule skips), algorithm agility 00-80-C2-01,
//    CKN 1..32 octets (§11.11.2 d, g);
//  - every set's body plus padding fits before the ICV; padding is zero;
//    each known set type at most once; fixed-size sets have their exact
//    lengths (peer lists a multiple of 16, SAK use 0 or 40, distributed SAK 0,
//    28, 36 or 52 with the wrap length matching a known cipher suite, XPN 8,
//    ICV Indicator 16 and only directly before the ICV);
//  - a set type the codec does not know (0, 9..254) is kept opaque in
//    unknown_sets and skipped, not refused: the common header exists so that
//    an implementation can skip sets a later MKA version defines (the XPN set,
//    type 8, arrived that way). The caller sees them and may count them.
//  - reserved bits are ignored on receipt and sent as zero (so a frame with a
//    reserved bit set decodes, and re-encodes with it clear).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/mka/keys.h"

namespace layersec::mka {

inline constexpr MacAddress kPaeGroupAddress = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x03};  // §11.1.1
inline constexpr std::uint16_t kEapolEtherType = 0x888E;
inline constexpr std::uint8_t kEapolPacketTypeMka = 5;  // EAPOL-MKA (§11.3.2)
inline constexpr std::uint8_t kEapolVersion = 3;        // what we send (802.1X-2010 and later)
inline constexpr std::uint8_t kMkaVersion = 3;          // 802.1X-2020 (wpa_supplicant 2.10 sends 1)
inline constexpr std::uint32_t kAlgorithmAgility = 0x0080C201;  // §9.3.1: 802.1X-2009 algorithms
inline constexpr std::size_t kEthernetHeaderSize = 14;
inline constexpr std::size_t kEapolHeaderSize = 4;
inline constexpr std::size_t kParameterSetHeaderSize = 4;
inline constexpr std::size_t kBasicFixedBodySize = 28;  // SCI, MI, MN, algorithm agility
inline constexpr std::size_t kMinMkpduSize = 32;        // §11.11.2 b: EAPOL body >= 32 octets
inline constexpr std::size_t kMaxCknSize = 32;
inline constexpr std::size_t kMaxSetBodySize = 0x0FFF;  // 12-bit body length
inline constexpr std::size_t kMiSize = 12;

// Member Identifier (§9.4.2): 96 random bits.
using MemberId = std::array<std::uint8_t, kMiSize>;

// Parameter set types (§11.11.1 Table 11-7). The Basic Parameter Set has none:
// it is the first set and its first octet is the MKA version.
enum class ParameterSetType : std::uint8_t {
  kLivePeerList = 1,
  kPotentialPeerList = 2,
  kSakUse = 3,
  kDistributedSak = 4,
  kDistributedCak = 5,
  kKmd = 6,
  kAnnouncement = 7,
  kXpn = 8,
  kIcvIndicator = 255,
};

// MACsec Capability (§11.11.1 Basic Parameter Set, 2 bits).
enum class MacsecCapability : std::uint8_t {
  kNotImplemented = 0,
  kIntegrity = 1,                     // integrity without confidentiality
  kConfidentiality = 2,               // + confidentiality, offset 0 only
  kConfidentialityWithOffset = 3,     // + confidentiality, offset 0, 30 or 50
};

// MACsec cipher suite identifiers (802.1AE-2018 Table 14-1) are
// macsec::cipher_suite_id(); this one is the GCM-AES-128 identifier as
// misprinted in 802.1AE-2006 and 802.1X-2010 (00-80-02-00-01-00-00-01).
inline constexpr std::uint64_t kCipherSuiteGcmAes128Legacy = 0x0080020001000001ULL;
// The suite a cipher suite identifier names (the legacy one included), or
// nullopt for an identifier this project does not implement.
std::optional<macsec::CipherSuite> cipher_suite_from_id(std::uint64_t cipher_suite);
// SAK length (16 or 32) for a known cipher suite, 0 for an unknown one.
std::size_t sak_length_of(std::uint64_t cipher_suite);

// Basic Parameter Set (§11.11.1 Figure 11-8).
struct BasicParameterSet {
  std::uint8_t mka_version = kMkaVersion;  // >= 1
  std::uint8_t key_server_priority = 0xFF;  // lower wins (§9.5)
  bool key_server = false;
  bool macsec_desired = false;
  MacsecCapability macsec_capability = MacsecCapability::kNotImplemented;
  std::uint64_t sci = 0;  // MAC (48 bits) || port (16 bits), big-endian as macsec::Sci::value
  MemberId actor_mi{};
  std::uint32_t actor_mn = 0;
  // Algorithm agility is always kAlgorithmAgility (others are refused).
  std::vector<std::uint8_t> ckn;  // CAK Name, 1..32 octets
  bool operator==(const BasicParameterSet&) const = default;
};

// One (MI, MN) entry of a Live or Potential Peer List (§11.11.1 Figure 11-9).
struct PeerEntry {
  MemberId mi{};
  std::uint32_t mn = 0;
  bool operator==(const PeerEntry&) const = default;
};

// Live Peer List (type 1) or Potential Peer List (type 2).
struct PeerList {
  // Live Peer List octet 2: the key server's SSCI for XPN cipher suites
  // (802.1X-2020, MKA version 3); reserved otherwise and always 0 in a
  // Potential Peer List (ignored on receipt, sent as 0).
  std::uint8_t key_server_ssci = 0;
  std::vector<PeerEntry> peers;  // may be empty
  bool operator==(const PeerList&) const = default;
};

// One key of the MACsec SAK Use set: the key server MI and KN that name the
// SAK, and the lowest PN the sender accepts with it (low 32 bits; the XPN set
// carries the high 32 bits).
struct SakUseKey {
  MemberId key_server_mi{};
  std::uint32_t kn = 0;
  std::uint32_t lowest_acceptable_pn = 0;
  bool operator==(const SakUseKey&) const = default;
};

// MACsec SAK Use (type 3, §11.11.1 Figure 11-10). Body length 40, or 0 (the
// empty form: no keys, only the flags of the header octets).
struct SakUse {
  std::uint8_t latest_an = 0;  // 0..3
  bool latest_tx = false;
  bool latest_rx = false;
  std::uint8_t old_an = 0;  // 0..3
  bool old_tx = false;
  bool old_rx = false;
  bool plain_tx = false;
  bool plain_rx = false;
  bool delay_protect = false;
  bool has_keys = true;  // false: the 0-length body form; latest/old must then be zero
  SakUseKey latest{};
  SakUseKey old{};
  bool operator==(const SakUse&) const = default;
};

// Distributed SAK (type 4, §11.11.1 Figure 11-11).
//   body 0:  no SAK ("plain text": MACsec without a key distributed)
//   body 28: KN, AES-KW(SAK) 24 octets — the default suite GCM-AES-128
//   body 36/52: KN, cipher suite (8), AES-KW(SAK) 24/40 octets
struct DistributedSak {
  std::uint8_t distributed_an = 0;          // 0..3
  std::uint8_t confidentiality_offset = 0;  // 0..3: 0 integrity only, 1 confidentiality offset 0, 2 offset 30, 3 offset 50
  bool has_key = true;  // false: the 0-length body form (kn 0, no suite, no wrapped key)
  std::uint32_t kn = 0;
  // Absent: the default suite (GCM-AES-128), body 28. Present: written
  // before the wrapped key; a known suite's SAK length must match the wrap.
  std::optional<std::uint64_t> cipher_suite;
  std::vector<std::uint8_t> wrapped_sak;  // RFC 3394 wrap with the KEK: 24 or 40 octets
  bool operator==(const DistributedSak&) const = default;
};

// Distributed CAK (type 5, Figure 11-12): AES-KW of a 128-bit CAK (24 octets)
// and its CKN (1..32 octets). A 256-bit CAK (40-octet wrap) is not decoded.
struct DistributedCak {
  std::vector<std::uint8_t> wrapped_cak;  // 24 octets
  std::vector<std::uint8_t> ckn;          // 1..32 octets
  bool operator==(const DistributedCak&) const = default;
};

// One TLV of an Announcement (§11.12: 7-bit type, 9-bit length).
struct AnnouncementTlv {
  std::uint8_t type = 0;            // 0..127
  std::vector<std::uint8_t> value;  // 0..511 octets
  bool operator==(const AnnouncementTlv&) const = default;
};
inline constexpr std::uint8_t kTlvMacsecCipherSuites = 112;  // §11.12.3

// Announcement (type 7, Figure 11-15): TLVs kept as they came. The MACsec
// Cipher Suites TLV is checked on decode (entries of 10 octets) and read
// with announced_cipher_suites().
struct Announcement {
  std::vector<AnnouncementTlv> tlvs;
  bool operator==(const Announcement&) const = default;
};

// One entry of the MACsec Cipher Suites TLV (§11.12.3).
struct CipherSuiteEntry {
  MacsecCapability implementation_capability = MacsecCapability::kNotImplemented;
  std::uint64_t cipher_suite = 0;
  bool operator==(const CipherSuiteEntry&) const = default;
};
// The entries of every MACsec Cipher Suites TLV in `a`, in order (decode has
// validated their lengths; a TLV whose length is not a multiple of 10 is
// skipped here and refused by encode).
std::vector<CipherSuiteEntry> announced_cipher_suites(const Announcement& a);
// An Announcement TLV carrying `entries` (type 112).
AnnouncementTlv cipher_suites_tlv(std::span<const CipherSuiteEntry> entries);

// XPN (type 8, 802.1X-2020 §11.11.1): the high 32 bits of the lowest
// acceptable PNs of the SAK Use set, and the MKA suspension time.
struct XpnParameterSet {
  std::uint8_t suspension_time = 0;  // octet 2
  std::uint32_t latest_lowest_acceptable_pn_high = 0;
  std::uint32_t old_lowest_acceptable_pn_high = 0;
  bool operator==(const XpnParameterSet&) const = default;
};

// A set of a type the codec does not know, kept as it came (body without
// padding); see the rule at the top.
struct UnknownParameterSet {
  std::uint8_t type = 0;
  std::vector<std::uint8_t> body;  // up to kMaxSetBodySize octets
  bool operator==(const UnknownParameterSet&) const = default;
};

// A whole EAPOL-MKA frame, without its ICV. A value type (owns its bytes).
struct Mkpdu {
  MacAddress destination = kPaeGroupAddress;
  MacAddress source{};
  std::uint8_t eapol_version = kEapolVersion;  // 1..3
  BasicParameterSet basic;
  std::optional<PeerList> live_peers;       // type 1
  std::optional<PeerList> potential_peers;  // type 2
  std::optional<SakUse> sak_use;            // type 3
  std::optional<DistributedSak> distributed_sak;  // type 4
  std::optional<DistributedCak> distributed_cak;  // type 5
  std::optional<std::vector<std::uint8_t>> kmd;   // type 6: Key Management Domain, opaque
  std::optional<Announcement> announcement;       // type 7
  std::optional<XpnParameterSet> xpn;             // type 8
  std::vector<UnknownParameterSet> unknown_sets;  // in order of appearance
  // Whether an ICV Indicator (type 255, body length 16) precedes the ICV.
  // wpa_supplicant omits it for the default 16-octet ICV.
  bool icv_indicator = false;
  bool operator==(const Mkpdu&) const = default;
};

// Why a frame is refused (decode) or a Mkpdu cannot be written (encode).
enum class MkpduError : std::uint8_t {
  kShortFrame,              // shorter than Ethernet + EAPOL headers
  kIndividualDestination,   // DA is an individual (unicast) address (§11.11.2 a)
  kDestinationNotAllowed,   // DA a group address the caller does not accept
  kWrongEtherType,          // not 0x888E
  kBadEapolVersion,         // EAPOL protocol version not 1..3
  kNotMka,                  // EAPOL packet type not 5 (EAPOL-MKA)
  kBodyLengthMismatch,      // EAPOL body length runs past the frame
  kTrailingBytes,           // octets after the EAPOL body
  kBadMkpduLength,          // EAPOL body < 32 octets or not a multiple of 4 (§11.11.2 b, c)
  kBadMkaVersion,           // MKA version 0
  kBadBasicSetLength,       // basic set body < 28 octets, or body + padding runs past the EAPOL body
  kBadCknLength,            // CKN (basic set body - 28) 0 or more than 32 octets (§11.11.2 d)
  kWrongAlgorithmAgility,   // not 00-80-C2-01 (§11.11.2 g)
  kBadSetLength,            // a set body + padding runs past the EAPOL body
  kBadPadding,              // a padding octet is not zero
  kDuplicateSet,            // a known set type appears twice
  kBadPeerListLength,       // peer list body not a multiple of 16
  kBadSakUseLength,         // SAK use body not 0 or 40
  kBadDistributedSakLength, // distributed SAK body not 0, 28, 36 or 52
  kCipherSuiteKeyMismatch,  // a known cipher suite with the other wrap length
  kBadDistributedCakLength, // distributed CAK body not 24 + 1..32
  kBadAnnouncementTlv,      // a TLV runs past the set, or a cipher suite TLV not 10·n octets
  kBadXpnLength,            // XPN body not 8
  kBadIcvIndicator,         // ICV indicator body not 16, or not directly before the ICV
  kMissingIcv,              // a set (basic or other) ends inside the last 16 octets: no room for the ICV
  // Encode only:
  kBadField,                // a value out of range (AN > 3, capability > 3, TLV type > 127, ...)
  kSetTooLong,              // a set body beyond 4095 octets, or the EAPOL body beyond 65535
  kBufferTooSmall,          // the output buffer cannot hold the frame
  kIcvComputation,          // compute_icv failed (bad ICK length)
};
inline constexpr std::size_t kMkpduErrorCount = static_cast<std::size_t>(MkpduError::kIcvComputation) + 1;
std::string_view to_string(MkpduError e);

struct DecodeOptions {
  // Group destination addresses accepted; empty means kPaeGroupAddress only.
  std::span<const MacAddress> allowed_destinations{};
};

// What decode_mkpdu returns: the Mkpdu, and the ICV with the span it covers.
struct DecodedMkpdu {
  Mkpdu mkpdu;
  ByteSpan icv_covered;  // DA .. the octet before the ICV: a view into the decoded frame
  Icv icv{};
};

// Decodes a whole Ethernet frame (no FCS, no VLAN tag). The result's
// icv_covered views `frame`: keep the frame alive while it is used. Nothing
// in the result is authenticated until verify_mkpdu_icv() says so.
[[nodiscard]] Result<DecodedMkpdu, MkpduError> decode_mkpdu(ByteSpan frame, const DecodeOptions& options = {});

// verify_icv(ick, d.icv_covered, d.icv) (constant time); false on a bad ICK too.
[[nodiscard]] bool verify_mkpdu_icv(const DecodedMkpdu& d, const SecretBytes& ick);

// Octets encode_mkpdu writes for `m` (meaningful when encode succeeds).
[[nodiscard]] std::size_t encoded_size(const Mkpdu& m);

// Writes the frame for `m` into `out` and appends the ICV computed with `ick`
// (compute_icv, keys.h); returns the frame length. Deterministic. On failure
// the content of `out` is unspecified.
[[nodiscard]] Result<std::size_t, MkpduError> encode_mkpdu(const Mkpdu& m, const SecretBytes& ick, MutableByteSpan out);
[[nodiscard]] Result<std::vector<std::uint8_t>, MkpduError> encode_mkpdu(const Mkpdu& m, const SecretBytes& ick);
// The same with a given ICV (tests, fuzzing, replaying a captured frame).
[[nodiscard]] Result<std::size_t, MkpduError> encode_mkpdu_with_icv(const Mkpdu& m, const Icv& icv,
                                                                    MutableByteSpan out);

}  // namespace layersec::mka
