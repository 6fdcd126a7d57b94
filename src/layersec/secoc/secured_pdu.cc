#include "layersec/secoc/secured_pdu.h"

#include <cstring>

namespace layersec::secoc {

Result<ByteSpan, CodecError> secured_area(const PduProfile& profile, ByteSpan authentic) {
  const std::size_t off = profile.secured_area_offset;
  if (off == 0 && profile.secured_area_length == 0) return authentic;  // the common case
  if (off > authentic.size()) return Err(CodecError::kSecuredAreaOutside);
  if (profile.secured_area_length == 0) return authentic.subspan(off);
  if (profile.secured_area_length > authentic.size() - off)
    return Err(CodecError::kSecuredAreaOutside);
  return authentic.subspan(off, profile.secured_area_length);
}

Status<CodecError> write_header(const PduProfile& profile, std::size_t n, MutableByteSpan out) {
  const unsigned h = profile.auth_pdu_header_length;
  if (h == 0) return {};
  if (out.size() < h) return Err(CodecError::kBufferTooSmall);
  if (h < 8 && (n >> (8 * h)) != 0) return Err(CodecError::kPayloadTooLong);
  for (unsigned i = 0; i < h; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * (h - 1 - i)));
  return {};
}

WireLayout::WireLayout(const PduProfile& profile)
    : header(profile.auth_pdu_header_length),
      tail(static_cast<std::uint8_t>(profile.auth_info_bytes())),
      fv_tx_bits(profile.freshness.tx_bits),
      mac_bytes(static_cast<std::uint8_t>((profile.auth_info_tx_length + 7) / 8)),
      mac_last_mask(static_cast<std::uint8_t>(0xFF << ((8 - profile.auth_info_tx_length % 8) % 8))),
      pad_mask(static_cast<std::uint8_t>(
          (1U << (8 * profile.auth_info_bytes() - profile.freshness.tx_bits - profile.auth_info_tx_length)) - 1)),
      mac_bits(profile.auth_info_tx_length) {}

void pack_auth_info(const PduProfile& profile, std::uint64_t truncated_fv, const std::uint8_t* tag,
                    std::uint8_t* out) {
  pack_auth_info(WireLayout(profile), truncated_fv, tag, out);
}

void pack_auth_info(const WireLayout& w, std::uint64_t truncated_fv, const std::uint8_t* tag,
                    std::uint8_t* out) {
  const unsigned fv_bits = w.fv_tx_bits;
  const std::size_t mac_bytes = w.mac_bytes;
  if (fv_bits % 8 == 0) {
    // Byte-aligned fast path (Profiles 1 and 2, the vendor profile).
    const std::size_t fvb = fv_bits / 8;
    for (std::size_t i = 0; i < fvb; ++i)
      out[i] = static_cast<std::uint8_t>(truncated_fv >> (8 * (fvb - 1 - i)));
    std::memcpy(out + fvb, tag, mac_bytes);
    if (w.mac_last_mask != 0xFF) out[fvb + mac_bytes - 1] &= w.mac_last_mask;
    return;
  }
  const std::size_t n = w.tail;
  std::memset(out, 0, n);
  // FV: fv_bits MSB-first from bit 0.
  const std::uint64_t fv_left = truncated_fv << (64 - fv_bits);  // fv_bits in 1..63 here
  const std::size_t fv_bytes = (fv_bits + 7) / 8;
  for (std::size_t i = 0; i < fv_bytes; ++i) out[i] = static_cast<std::uint8_t>(fv_left >> (56 - 8 * i));
  // MAC: starts at bit fv_bits.
  const std::size_t q = fv_bits / 8;
  const unsigned s = fv_bits % 8;
  for (std::size_t i = 0; i < mac_bytes; ++i) {
    std::uint8_t b = tag[i];
    if (i == mac_bytes - 1) b &= w.mac_last_mask;
    out[q + i] |= static_cast<std::uint8_t>(b >> s);
    if (q + i + 1 < n) out[q + i + 1] |= static_cast<std::uint8_t>(b << (8 - s));
  }
}

Result<SecuredPduView, CodecError> parse_secured_pdu(const PduProfile& profile, ByteSpan secured) {
  return parse_secured_pdu(WireLayout(profile), secured);
}

Result<SecuredPduView, CodecError> parse_secured_pdu(const WireLayout& w, ByteSpan secured) {
  const std::size_t hdr = w.header;
  const std::size_t tail = w.tail;
  if (secured.size() < hdr + tail) return Err(CodecError::kTooShort);
  ByteReader r(secured);
  std::size_t n = secured.size() - hdr - tail;
  if (hdr != 0) {
    std::uint64_t len = 0;
    for (std::size_t i = 0; i < hdr; ++i) len = (len << 8) | r.u8();
    if (len != n) return Err(CodecError::kBadHeaderLength);
  }
  SecuredPduView v;
  v.authentic = r.bytes(n);
  const ByteSpan t = r.bytes(tail);
  if (!r.finish()) return Err(CodecError::kTooShort);
  // From here on every index is within `t` (tail = ceil((fv+mac)/8) bytes).

  if (w.pad_mask != 0 && (t[tail - 1] & w.pad_mask) != 0) return Err(CodecError::kNonZeroPadding);
  const std::size_t mac_bytes = w.mac_bytes;
  const std::size_t q = w.fv_tx_bits / 8;
  const unsigned s = w.fv_tx_bits % 8;
  std::uint64_t fv = 0;
  for (std::size_t i = 0; i < q; ++i) fv = (fv << 8) | t[i];
  if (s == 0) {
    v.truncated_fv = fv;
    std::memcpy(v.tag.data(), t.data() + q, mac_bytes);
  } else {
    v.truncated_fv = (fv << s) | (t[q] >> (8 - s));
    for (std::size_t i = 0; i < mac_bytes; ++i) {
      const std::uint8_t hi = static_cast<std::uint8_t>(t[q + i] << s);
      const std::uint8_t lo = (q + i + 1 < tail) ? static_cast<std::uint8_t>(t[q + i + 1] >> (8 - s)) : 0;
      v.tag[i] = static_cast<std::uint8_t>(hi | lo);
    }
  }
  if (w.mac_last_mask != 0xFF) v.tag[mac_bytes - 1] &= w.mac_last_mask;  // implies mac_bytes >= 1
  return v;
}

Result<std::size_t, CodecError> write_secured_pdu(const PduProfile& profile, ByteSpan authentic,
                                                  std::uint64_t truncated_fv, ByteSpan tag,
                                                  MutableByteSpan out) {
  const std::size_t total = profile.secured_size(authentic.size());
  if (out.size() < total) return Err(CodecError::kBufferTooSmall);
  if (tag.size() < (profile.auth_info_tx_length + 7u) / 8u) return Err(CodecError::kTooShort);
  auto st = write_header(profile, authentic.size(), out);
  if (!st) return Err(st.error());
  const std::size_t hdr = profile.auth_pdu_header_length;
  if (!authentic.empty()) std::memmove(out.data() + hdr, authentic.data(), authentic.size());
  pack_auth_info(profile, truncated_fv, tag.data(), out.data() + hdr + authentic.size());
  return total;
}

}  // namespace layersec::secoc
