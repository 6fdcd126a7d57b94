// IEC 61850-9-2 SV frame codec. See frame.h for the layout.
#include "layersec/sv/frame.h"

#include <algorithm>
#include <cstring>

namespace layersec::sv {

static_assert(static_cast<std::size_t>(DecodeError::kBadExtension) + 1 == kDecodeErrorCount,
              "kDecodeErrorCount must count every DecodeError");

std::string_view to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kTruncated: return "truncated";
    case DecodeError::kNotSv: return "not-sv";
    case DecodeError::kLengthMismatch: return "length-mismatch";
    case DecodeError::kBadBer: return "bad-ber";
    case DecodeError::kUnexpectedTag: return "unexpected-tag";
    case DecodeError::kBadFieldSize: return "bad-field-size";
    case DecodeError::kBadNoAsdu: return "bad-noasdu";
    case DecodeError::kTooManyAsdus: return "too-many-asdus";
    case DecodeError::kOversizedAsdu: return "oversized-asdu";
    case DecodeError::kTrailingBytes: return "trailing-bytes";
    case DecodeError::kBadExtension: return "bad-extension";
  }
  return "unknown";
}

std::string_view to_string(EncodeError e) {
  switch (e) {
    case EncodeError::kBufferTooSmall: return "buffer-too-small";
    case EncodeError::kBadNoAsdu: return "bad-noasdu";
    case EncodeError::kFieldTooLarge: return "field-too-large";
    case EncodeError::kFrameTooLarge: return "frame-too-large";
  }
  return "unknown";
}

std::uint16_t header_crc16(ByteSpan data) {
  std::uint16_t crc = 0xFFFF;
  for (std::uint8_t b : data) {
    crc ^= b;
    for (int i = 0; i < 8; ++i) crc = (crc & 1) ? static_cast<std::uint16_t>((crc >> 1) ^ 0xA001) : static_cast<std::uint16_t>(crc >> 1);
  }
  return crc;
}

namespace {

using Fail = Err<DecodeError>;

// Reads the value of a fixed-size unsigned field (big-endian, 1..8 octets).
bool read_fixed(ByteReader& v, std::size_t size, std::uint64_t& out) {
  if (v.remaining() != size) return false;
  out = 0;
  for (std::size_t i = 0; i < size; ++i) out = (out << 8) | v.u8();
  return v.ok();
}

// Absolute offset of a child reader's first byte inside `frame`.
std::size_t offset_in(ByteSpan frame, const ByteReader& r) {
  return static_cast<std::size_t>(r.data().data() - frame.data());
}

// Parses one ASDU (the contents of a 0x30 TLV). 9-2 Annex A order.
Status<DecodeError> decode_asdu(ByteSpan frame, ByteReader r, Asdu& a) {
  if (r.remaining() > kMaxAsduBytes) return Fail(DecodeError::kOversizedAsdu);
  std::uint8_t t = 0;
  ByteReader v;
  std::uint64_t n = 0;

  // svID (mandatory)
  if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t != tag::kSvId) return Fail(DecodeError::kUnexpectedTag);
  if (v.remaining() == 0) return Fail(DecodeError::kBadFieldSize);
  if (v.remaining() > kMaxIdentifierBytes) return Fail(DecodeError::kOversizedAsdu);
  a.sv_id = v.rest();

  if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t == tag::kDatSet) {  // datSet (optional)
    if (v.remaining() > kMaxIdentifierBytes) return Fail(DecodeError::kOversizedAsdu);
    a.dat_set = v.rest();
    a.has_dat_set = true;
    if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  }
  // smpCnt (mandatory, INT16U as 2 octets)
  if (t != tag::kSmpCnt) return Fail(DecodeError::kUnexpectedTag);
  a.smp_cnt_offset = offset_in(frame, v);
  if (!read_fixed(v, 2, n)) return Fail(DecodeError::kBadFieldSize);
  a.smp_cnt = static_cast<std::uint16_t>(n);
  // confRev (mandatory, INT32U as 4 octets)
  if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t != tag::kConfRev) return Fail(DecodeError::kUnexpectedTag);
  if (!read_fixed(v, 4, n)) return Fail(DecodeError::kBadFieldSize);
  a.conf_rev = static_cast<std::uint32_t>(n);

  if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t == tag::kRefrTm) {  // refrTm (optional, UtcTime 8 octets)
    if (v.remaining() != 8) return Fail(DecodeError::kBadFieldSize);
    a.refr_tm = v.rest();
    a.has_refr_tm = true;
    if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  }
  // smpSynch (mandatory, 1 octet)
  if (t != tag::kSmpSynch) return Fail(DecodeError::kUnexpectedTag);
  if (!read_fixed(v, 1, n)) return Fail(DecodeError::kBadFieldSize);
  a.smp_synch = static_cast<std::uint8_t>(n);

  if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t == tag::kSmpRate) {  // smpRate (optional, INT16U)
    if (!read_fixed(v, 2, n)) return Fail(DecodeError::kBadFieldSize);
    a.smp_rate = static_cast<std::uint16_t>(n);
    a.has_smp_rate = true;
    if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  }
  // sample data (mandatory)
  if (t != tag::kSeqData) return Fail(DecodeError::kUnexpectedTag);
  a.seq_data_offset = offset_in(frame, v);
  a.seq_data = v.rest();

  if (r.empty()) return {};
  if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t == tag::kSmpMod) {  // smpMod (optional, INT16U)
    if (!read_fixed(v, 2, n)) return Fail(DecodeError::kBadFieldSize);
    a.smp_mod = static_cast<std::uint16_t>(n);
    a.has_smp_mod = true;
    if (r.empty()) return {};
    if (!r.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  }
  if (t == tag::kGmIdentity) {  // gmIdentity (optional, 8 octets; 9-2 Ed.2.1)
    if (v.remaining() != 8) return Fail(DecodeError::kBadFieldSize);
    a.gm_identity = v.rest();
    a.has_gm_identity = true;
    if (r.empty()) return {};
    return Fail(DecodeError::kTrailingBytes);
  }
  return Fail(DecodeError::kUnexpectedTag);
}

}  // namespace

Result<Frame, DecodeError> decode_frame(ByteSpan frame) {
  Frame f;
  ByteReader r(frame);
  if (!r.copy_to(f.eth.dst) || !r.copy_to(f.eth.src)) return Fail(DecodeError::kTruncated);
  std::uint16_t type = r.u16();
  if (!r.ok()) return Fail(DecodeError::kTruncated);
  if (type == kEtherTypeVlan) {
    const std::uint16_t tci = r.u16();
    type = r.u16();
    if (!r.ok()) return Fail(DecodeError::kTruncated);
    f.eth.has_vlan = true;
    f.eth.priority = static_cast<std::uint8_t>(tci >> 13);
    f.eth.dei = (tci & 0x1000) != 0;
    f.eth.vlan_id = tci & 0x0FFF;
  }
  if (type != kEtherTypeSv) return Fail(DecodeError::kNotSv);
  f.ethertype_offset = r.position() - 2;

  const std::size_t header_pos = r.position();
  f.appid = r.u16();
  f.length = r.u16();
  f.reserved1 = r.u16();
  f.reserved2 = r.u16();
  if (!r.ok()) return Fail(DecodeError::kTruncated);
  // Length counts APPID..end of APDU (+ extension): at least the 8 header bytes.
  if (f.length < 8 || f.length > frame.size() - header_pos) return Fail(DecodeError::kLengthMismatch);
  f.frame_end = header_pos + f.length;
  // Bytes after Length are tolerated only as padding of a minimum-size frame.
  if (f.frame_end != frame.size() && frame.size() > kMinEthernetFrame) {
    return Fail(DecodeError::kLengthMismatch);
  }

  ByteReader body(frame.subspan(header_pos + 8, f.length - 8));
  const std::size_t ext_len = f.reserved1 & kReserved1ExtensionLengthMask;
  std::uint8_t t = 0;
  ByteReader pdu;
  if (!body.ber_tlv(t, pdu)) return Fail(DecodeError::kBadBer);
  if (t != tag::kSavPdu) return Fail(DecodeError::kUnexpectedTag);
  f.savpdu_end = offset_in(frame, body) + body.position();
  if (body.remaining() != ext_len) {
    return Fail(ext_len == 0 ? DecodeError::kLengthMismatch : DecodeError::kBadExtension);
  }
  if (ext_len != 0) {
    f.extension = body.rest();
    // The header CRC guards Length and Reserved1, which announce the extension.
    if (header_crc16(frame.subspan(f.ethertype_offset, 8)) != f.reserved2) return Fail(DecodeError::kBadExtension);
  }

  // noASDU: INTEGER (1..65535), encoded minimal two's complement.
  ByteReader v;
  if (!pdu.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t != tag::kNoAsdu) return Fail(DecodeError::kUnexpectedTag);
  {
    const std::size_t len = v.remaining();
    if (len == 0 || len > 3) return Fail(DecodeError::kBadNoAsdu);
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < len; ++i) n = (n << 8) | v.u8();
    const auto first = v.data()[0];
    if ((first & 0x80) != 0) return Fail(DecodeError::kBadNoAsdu);             // negative
    if (len > 1 && first == 0 && (v.data()[1] & 0x80) == 0) return Fail(DecodeError::kBadNoAsdu);  // non-minimal
    if (n == 0 || n > 65535) return Fail(DecodeError::kBadNoAsdu);
    if (n > kMaxAsdus) return Fail(DecodeError::kTooManyAsdus);
    f.no_asdu = static_cast<std::uint16_t>(n);
  }
  if (!pdu.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  if (t == tag::kSecurity) {
    f.security = v.rest();
    f.has_security = true;
    if (!pdu.ber_tlv(t, v)) return Fail(DecodeError::kBadBer);
  }
  if (t != tag::kSeqAsdu) return Fail(DecodeError::kUnexpectedTag);
  if (!pdu.empty()) return Fail(DecodeError::kTrailingBytes);

  std::size_t count = 0;
  ByteReader seq = v;
  while (!seq.empty()) {
    ByteReader asdu;
    if (!seq.ber_tlv(t, asdu)) return Fail(DecodeError::kBadBer);
    if (t != tag::kAsdu) return Fail(DecodeError::kUnexpectedTag);
    if (count == f.no_asdu) return Fail(DecodeError::kBadNoAsdu);
    auto st = decode_asdu(frame, asdu, f.asdus[count]);
    if (!st) return Fail(st.error());
    ++count;
  }
  if (count != f.no_asdu) return Fail(DecodeError::kBadNoAsdu);
  return f;
}

namespace {

std::size_t tlv_size(std::size_t value_len) { return 1 + ber_length_size(value_len) + value_len; }

std::size_t asdu_content_size(const Asdu& a) {
  std::size_t n = tlv_size(a.sv_id.size());
  if (a.has_dat_set) n += tlv_size(a.dat_set.size());
  n += tlv_size(2) + tlv_size(4);
  if (a.has_refr_tm) n += tlv_size(8);
  n += tlv_size(1);
  if (a.has_smp_rate) n += tlv_size(2);
  n += tlv_size(a.seq_data.size());
  if (a.has_smp_mod) n += tlv_size(2);
  if (a.has_gm_identity) n += tlv_size(8);
  return n;
}

std::size_t no_asdu_octets(std::uint16_t n) { return n < 0x80 ? 1 : (n < 0x8000 ? 2 : 3); }

bool write_no_asdu(ByteWriter& w, std::uint16_t n) {
  const std::size_t len = no_asdu_octets(n);
  bool ok = w.ber_header(tag::kNoAsdu, len);
  if (len == 3) ok = ok && w.u8(0);
  if (len >= 2) ok = ok && w.u8(static_cast<std::uint8_t>(n >> 8));
  return ok && w.u8(static_cast<std::uint8_t>(n));
}

}  // namespace

std::size_t encoded_size(const Frame& f) {
  if (f.no_asdu == 0 || f.no_asdu > kMaxAsdus) return 0;
  std::size_t seq = 0;
  for (std::size_t i = 0; i < f.no_asdu; ++i) seq += tlv_size(asdu_content_size(f.asdus[i]));
  std::size_t pdu = tlv_size(no_asdu_octets(f.no_asdu)) + tlv_size(seq);
  if (f.has_security) pdu += tlv_size(f.security.size());
  const std::size_t apdu = tlv_size(pdu);
  return kEthernetAddressBytes + (f.eth.has_vlan ? 4 : 0) + 2 + 8 + apdu + f.extension.size();
}

Result<std::size_t, EncodeError> encode_frame(const Frame& f, MutableByteSpan out) {
  if (f.no_asdu == 0 || f.no_asdu > kMaxAsdus) return Err(EncodeError::kBadNoAsdu);
  if (f.extension.size() > kReserved1ExtensionLengthMask) return Err(EncodeError::kFieldTooLarge);
  for (std::size_t i = 0; i < f.no_asdu; ++i) {
    const Asdu& a = f.asdus[i];
    if (a.sv_id.size() > kMaxIdentifierBytes || a.dat_set.size() > kMaxIdentifierBytes ||
        asdu_content_size(a) > kMaxAsduBytes || (a.has_refr_tm && a.refr_tm.size() != 8) ||
        (a.has_gm_identity && a.gm_identity.size() != 8)) {
      return Err(EncodeError::kFieldTooLarge);
    }
  }
  const std::size_t total = encoded_size(f);
  const std::size_t header_pos = kEthernetAddressBytes + (f.eth.has_vlan ? 4 : 0) + 2;
  if (total - header_pos > 0xFFFF) return Err(EncodeError::kFrameTooLarge);
  if (out.size() < total) return Err(EncodeError::kBufferTooSmall);

  ByteWriter w(out.first(total));
  w.bytes(f.eth.dst);
  w.bytes(f.eth.src);
  if (f.eth.has_vlan) {
    w.u16(kEtherTypeVlan);
    w.u16(static_cast<std::uint16_t>((f.eth.priority & 7) << 13 | (f.eth.dei ? 0x1000 : 0) |
                                     (f.eth.vlan_id & 0x0FFF)));
  }
  w.u16(kEtherTypeSv);
  w.u16(f.appid);
  w.u16(static_cast<std::uint16_t>(total - header_pos));
  const std::uint16_t reserved1 =
      static_cast<std::uint16_t>((f.reserved1 & ~kReserved1ExtensionLengthMask) | f.extension.size());
  w.u16(reserved1);
  std::uint16_t reserved2 = f.reserved2;
  if (!f.extension.empty()) {
    if (!w.ok()) return Err(EncodeError::kBufferTooSmall);
    reserved2 = header_crc16(w.written().subspan(header_pos - 2, 8));  // EtherType..Reserved1
  }
  w.u16(reserved2);

  // Lengths are known from the sizes above, so every header is written in its
  // final minimal form in one pass (no backpatching or moving needed).
  std::size_t seq_len = 0;
  for (std::size_t i = 0; i < f.no_asdu; ++i) seq_len += tlv_size(asdu_content_size(f.asdus[i]));
  std::size_t pdu_len = tlv_size(no_asdu_octets(f.no_asdu)) + tlv_size(seq_len);
  if (f.has_security) pdu_len += tlv_size(f.security.size());
  w.ber_header(tag::kSavPdu, pdu_len);
  write_no_asdu(w, f.no_asdu);
  if (f.has_security) w.ber_tlv(tag::kSecurity, f.security);
  w.ber_header(tag::kSeqAsdu, seq_len);
  for (std::size_t i = 0; i < f.no_asdu; ++i) {
    const Asdu& a = f.asdus[i];
    w.ber_header(tag::kAsdu, asdu_content_size(a));
    w.ber_tlv(tag::kSvId, a.sv_id);
    if (a.has_dat_set) w.ber_tlv(tag::kDatSet, a.dat_set);
    w.ber_header(tag::kSmpCnt, 2);
    w.u16(a.smp_cnt);
    w.ber_header(tag::kConfRev, 4);
    w.u32(a.conf_rev);
    if (a.has_refr_tm) w.ber_tlv(tag::kRefrTm, a.refr_tm);
    w.ber_header(tag::kSmpSynch, 1);
    w.u8(a.smp_synch);
    if (a.has_smp_rate) {
      w.ber_header(tag::kSmpRate, 2);
      w.u16(a.smp_rate);
    }
    w.ber_tlv(tag::kSeqData, a.seq_data);
    if (a.has_smp_mod) {
      w.ber_header(tag::kSmpMod, 2);
      w.u16(a.smp_mod);
    }
    if (a.has_gm_identity) w.ber_tlv(tag::kGmIdentity, a.gm_identity);
  }
  w.bytes(f.extension);
  if (!w.ok() || w.size() != total) return Err(EncodeError::kBufferTooSmall);
  return total;
}

bool same_content(const Frame& a, const Frame& b) {
  auto eq = [](ByteSpan x, ByteSpan y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
  };
  if (!(a.eth == b.eth) || a.appid != b.appid || a.reserved1 != b.reserved1 ||
      a.reserved2 != b.reserved2 || a.has_security != b.has_security || !eq(a.security, b.security) ||
      a.no_asdu != b.no_asdu || !eq(a.extension, b.extension)) {
    return false;
  }
  for (std::size_t i = 0; i < a.no_asdu; ++i) {
    const Asdu& x = a.asdus[i];
    const Asdu& y = b.asdus[i];
    if (!eq(x.sv_id, y.sv_id) || x.has_dat_set != y.has_dat_set || !eq(x.dat_set, y.dat_set) ||
        x.smp_cnt != y.smp_cnt || x.conf_rev != y.conf_rev || x.has_refr_tm != y.has_refr_tm ||
        !eq(x.refr_tm, y.refr_tm) || x.smp_synch != y.smp_synch ||
        x.has_smp_rate != y.has_smp_rate || x.smp_rate != y.smp_rate || !eq(x.seq_data, y.seq_data) ||
        x.has_smp_mod != y.has_smp_mod || x.smp_mod != y.smp_mod ||
        x.has_gm_identity != y.has_gm_identity || !eq(x.gm_identity, y.gm_identity)) {
      return false;
    }
  }
  return true;
}

}  // namespace layersec::sv
