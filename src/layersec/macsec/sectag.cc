#include "layersec/macsec/sectag.h"

namespace layersec::macsec {

std::array<std::uint8_t, 6> Sci::mac() const {
  std::array<std::uint8_t, 6> m{};
  for (int i = 0; i < 6; ++i) m[i] = static_cast<std::uint8_t>(value >> (56 - 8 * i));
  return m;
}

std::array<std::uint8_t, 8> Sci::bytes() const {
  std::array<std::uint8_t, 8> b{};
  store_be64(b.data(), value);
  return b;
}

std::string_view to_string(SecTagError e) {
  switch (e) {
    case SecTagError::kTooShort: return "frame too short for a SecTAG, Secure Data and ICV";
    case SecTagError::kNotMacsec: return "EtherType is not 88-E5";
    case SecTagError::kVersion: return "TCI V bit set";
    case SecTagError::kEsWithSc: return "TCI ES and SC both set";
    case SecTagError::kScbWithSc: return "TCI SCB and SC both set";
    case SecTagError::kEncryptedNotChanged: return "TCI E set with C clear";
    case SecTagError::kChangedNotEncrypted: return "TCI C set with E clear";
    case SecTagError::kReservedBits: return "reserved bits of the SL octet set";
    case SecTagError::kShortLengthTooLarge: return "SL >= 48";
    case SecTagError::kShortLengthMismatch: return "SL disagrees with the Secure Data length";
    case SecTagError::kPnZero: return "PN is zero";
  }
  return "unknown SecTAG error";
}

Result<SecTag, SecTagError> parse_sectag(ByteReader& reader, SecTagParseOptions options) {
  // 9.3: EtherType(2) TCI/AN(1) SL(1) PN(4) [SCI(8)], read as one fixed layout.
  const std::uint16_t ethertype = reader.u16();
  const std::uint8_t tci_an = reader.u8();
  const std::uint8_t sl = reader.u8();
  const std::uint32_t pn = reader.u32();
  if (!reader.ok()) return Err(SecTagError::kTooShort);
  if (ethertype != kMacsecEtherType) return Err(SecTagError::kNotMacsec);

  SecTag tag;
  tag.es = (tci_an & kTciEs) != 0;
  tag.sc = (tci_an & kTciSc) != 0;
  tag.scb = (tci_an & kTciScb) != 0;
  tag.e = (tci_an & kTciE) != 0;
  tag.c = (tci_an & kTciC) != 0;
  tag.an = tci_an & kAnMask;
  tag.sl = sl;
  tag.pn = pn;
  // 9.12 validity rules, checked in the order of the clause.
  if ((tci_an & kTciV) != 0) return Err(SecTagError::kVersion);
  if (tag.es && tag.sc) return Err(SecTagError::kEsWithSc);
  if (tag.scb && tag.sc) return Err(SecTagError::kScbWithSc);
  if ((sl & 0xC0) != 0) return Err(SecTagError::kReservedBits);
  if (sl >= kShortLengthLimit) return Err(SecTagError::kShortLengthTooLarge);
  if (tag.e && !tag.c) return Err(SecTagError::kEncryptedNotChanged);
  if (tag.c && !tag.e) return Err(SecTagError::kChangedNotEncrypted);
  if (pn == 0 && !options.allow_zero_pn) return Err(SecTagError::kPnZero);
  if (tag.sc) {
    tag.sci.value = reader.u64();
    if (!reader.ok()) return Err(SecTagError::kTooShort);
  }
  return tag;
}

bool encode_sectag(ByteWriter& writer, const SecTag& tag) {
  writer.u16(kMacsecEtherType);
  writer.u8(tag.tci_an());
  writer.u8(tag.sl);
  writer.u32(tag.pn);
  if (tag.sc) writer.u64(tag.sci.value);
  return writer.ok();
}

std::size_t leading_vlan_tags_size(ByteSpan frame, std::size_t max_tags) {
  ByteReader r(frame);
  if (!r.skip(kMacAddressesSize)) return 0;
  std::size_t n = 0;
  while (n < max_tags) {
    ByteReader probe = r;
    const std::uint16_t tpid = probe.u16();
    if (!probe.skip(2) || (tpid != kCTagTpid && tpid != kSTagTpid)) break;
    r = probe;
    ++n;
  }
  return n * kVlanTagSize;
}

Result<SecureFrameView, SecTagError> locate_secure_frame(ByteSpan frame,
                                                         std::size_t max_clear_tags,
                                                         SecTagParseOptions options) {
  ByteReader r(frame);
  SecureFrameView v;
  v.addresses = r.bytes(kMacAddressesSize);
  if (!r.ok() || r.remaining() < 2) return Err(SecTagError::kTooShort);
  // Clear-tag mode: skip up to max_clear_tags VLAN tags. A further tag makes
  // the EtherType found below 0x8100/0x88A8, i.e. not a MACsec frame.
  v.clear_tags = r.bytes(leading_vlan_tags_size(frame, max_clear_tags));
  if (r.remaining() < 2) return Err(SecTagError::kTooShort);
  const std::size_t sectag_start = r.position();
  auto tag = parse_sectag(r, options);
  if (!tag) return Err(tag.error());
  v.tag = *tag;
  v.sectag = frame.subspan(sectag_start, r.position() - sectag_start);
  // 9.12: at least one octet of Secure Data and the ICV must follow.
  if (r.remaining() < kIcvSize + 1) return Err(SecTagError::kTooShort);
  std::size_t data_size = r.remaining() - kIcvSize;
  // A MAC pads frames below the minimum size; SL tells the receiver where
  // the Secure Data really ends (9.7). Extra octets are accepted as padding
  // only in a minimum-size frame; anywhere else they are a length mismatch.
  if (v.tag.sl != 0 && data_size > v.tag.sl &&
      frame.size() <= kMinFrameSize + v.clear_tags.size()) {
    data_size = v.tag.sl;
  }
  if (v.tag.sl != 0 ? data_size != v.tag.sl : data_size < kShortLengthLimit)
    return Err(SecTagError::kShortLengthMismatch);
  v.secure_data = r.bytes(data_size);
  v.icv = r.bytes(kIcvSize);
  v.padding = r.rest();
  if (!r.ok()) return Err(SecTagError::kTooShort);
  return v;
}

}  // namespace layersec::macsec
