#include "layersec/base/bytes.h"

#include <cstring>

namespace layersec {

bool ByteReader::need(std::size_t n) {
  if (!ok_ || data_.size() - pos_ < n) {
    ok_ = false;
    return false;
  }
  return true;
}

std::uint8_t ByteReader::u8() {
  if (!need(1)) return 0;
  return data_[pos_++];
}

std::uint16_t ByteReader::u16() {
  if (!need(2)) return 0;
  const auto v = load_be16(data_.data() + pos_);
  pos_ += 2;
  return v;
}

std::uint32_t ByteReader::u24() {
  if (!need(3)) return 0;
  const auto* p = data_.data() + pos_;
  pos_ += 3;
  return (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
}

std::uint32_t ByteReader::u32() {
  if (!need(4)) return 0;
  const auto v = load_be32(data_.data() + pos_);
  pos_ += 4;
  return v;
}

std::uint64_t ByteReader::u48() {
  if (!need(6)) return 0;
  const auto* p = data_.data() + pos_;
  pos_ += 6;
  return (std::uint64_t{load_be16(p)} << 32) | load_be32(p + 2);
}

std::uint64_t ByteReader::u64() {
  if (!need(8)) return 0;
  const auto v = load_be64(data_.data() + pos_);
  pos_ += 8;
  return v;
}

ByteSpan ByteReader::bytes(std::size_t n) {
  if (!need(n)) return {};
  auto v = data_.subspan(pos_, n);
  pos_ += n;
  return v;
}

bool ByteReader::copy_to(MutableByteSpan out) {
  auto v = bytes(out.size());
  if (!ok_) return false;
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size());
  return true;
}

bool ByteReader::skip(std::size_t n) {
  if (!need(n)) return false;
  pos_ += n;
  return true;
}

bool ByteReader::peek_u8(std::uint8_t& out) const {
  if (!ok_ || pos_ >= data_.size()) {
    out = 0;
    return false;
  }
  out = data_[pos_];
  return true;
}

ByteReader ByteReader::sub(std::size_t n) {
  if (!need(n)) return failed_child();
  ByteReader child(data_.subspan(pos_, n));
  pos_ += n;
  return child;
}

ByteReader ByteReader::sub_u8_prefixed() {
  const std::size_t n = u8();
  return ok_ ? sub(n) : failed_child();
}
ByteReader ByteReader::sub_u16_prefixed() {
  const std::size_t n = u16();
  return ok_ ? sub(n) : failed_child();
}
ByteReader ByteReader::sub_u24_prefixed() {
  const std::size_t n = u24();
  return ok_ ? sub(n) : failed_child();
}
ByteReader ByteReader::sub_u32_prefixed() {
  const std::size_t n = u32();
  return ok_ ? sub(n) : failed_child();
}

bool ByteReader::ber_header(std::uint8_t& tag, std::size_t& length) {
  tag = u8();
  if (!ok_) return false;
  if ((tag & 0x1F) == 0x1F) {  // high-tag-number form: not used by 9-2
    ok_ = false;
    return false;
  }
  const std::uint8_t first = u8();
  if (!ok_) return false;
  if ((first & 0x80) == 0) {
    length = first;
  } else {
    const std::size_t octets = first & 0x7F;
    if (octets == 0 || octets > 4) {  // indefinite form or absurd length
      ok_ = false;
      return false;
    }
    std::size_t len = 0;
    for (std::size_t i = 0; i < octets; ++i) len = (len << 8) | u8();
    if (!ok_) return false;
    length = len;
  }
  if (length > data_.size() - pos_) {
    ok_ = false;
    return false;
  }
  return true;
}

bool ByteReader::ber_tlv(std::uint8_t& tag, ByteReader& value) {
  std::size_t len = 0;
  if (!ber_header(tag, len)) {
    value = failed_child();
    return false;
  }
  value = sub(len);
  return ok_;
}

bool ByteReader::ber_expect(std::uint8_t expected_tag, ByteReader& value) {
  std::uint8_t tag = 0;
  if (!ber_tlv(tag, value)) return false;
  if (tag != expected_tag) {
    ok_ = false;
    value = failed_child();
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------

bool ByteWriter::need(std::size_t n) {
  if (!ok_ || buf_.size() - pos_ < n) {
    ok_ = false;
    return false;
  }
  return true;
}

bool ByteWriter::u8(std::uint8_t v) {
  if (!need(1)) return false;
  buf_[pos_++] = v;
  return true;
}

bool ByteWriter::u16(std::uint16_t v) {
  if (!need(2)) return false;
  store_be16(buf_.data() + pos_, v);
  pos_ += 2;
  return true;
}

bool ByteWriter::u24(std::uint32_t v) {
  if (v > 0xFFFFFFu) {
    ok_ = false;
    return false;
  }
  if (!need(3)) return false;
  buf_[pos_] = static_cast<std::uint8_t>(v >> 16);
  buf_[pos_ + 1] = static_cast<std::uint8_t>(v >> 8);
  buf_[pos_ + 2] = static_cast<std::uint8_t>(v);
  pos_ += 3;
  return true;
}

bool ByteWriter::u32(std::uint32_t v) {
  if (!need(4)) return false;
  store_be32(buf_.data() + pos_, v);
  pos_ += 4;
  return true;
}

bool ByteWriter::u48(std::uint64_t v) {
  if (v >> 48) {
    ok_ = false;
    return false;
  }
  if (!need(6)) return false;
  store_be16(buf_.data() + pos_, static_cast<std::uint16_t>(v >> 32));
  store_be32(buf_.data() + pos_ + 2, static_cast<std::uint32_t>(v));
  pos_ += 6;
  return true;
}

bool ByteWriter::u64(std::uint64_t v) {
  if (!need(8)) return false;
  store_be64(buf_.data() + pos_, v);
  pos_ += 8;
  return true;
}

bool ByteWriter::bytes(ByteSpan b) {
  if (!need(b.size())) return false;
  if (!b.empty()) std::memcpy(buf_.data() + pos_, b.data(), b.size());
  pos_ += b.size();
  return true;
}

bool ByteWriter::fill(std::uint8_t value, std::size_t n) {
  if (!need(n)) return false;
  std::memset(buf_.data() + pos_, value, n);
  pos_ += n;
  return true;
}

MutableByteSpan ByteWriter::reserve(std::size_t n) {
  if (!need(n)) return {};
  auto v = buf_.subspan(pos_, n);
  pos_ += n;
  return v;
}

ByteWriter::LengthMark ByteWriter::begin_length(std::size_t width) {
  LengthMark m{pos_, width};
  if (width < 1 || width > 4) {
    ok_ = false;
    return m;
  }
  fill(0, width);
  return m;
}

bool ByteWriter::end_length(const LengthMark& mark) {
  if (!ok_) return false;
  const std::size_t len = pos_ - mark.field_pos - mark.width;
  if (mark.width < 4 && (len >> (8 * mark.width)) != 0) {
    ok_ = false;
    return false;
  }
  if (mark.width == 4 && len > 0xFFFFFFFFu) {
    ok_ = false;
    return false;
  }
  for (std::size_t i = 0; i < mark.width; ++i) {
    buf_[mark.field_pos + mark.width - 1 - i] = static_cast<std::uint8_t>(len >> (8 * i));
  }
  return true;
}

std::size_t ber_length_size(std::size_t length) {
  if (length < 0x80) return 1;
  std::size_t octets = 0;
  for (std::size_t l = length; l != 0; l >>= 8) ++octets;
  return 1 + octets;
}

bool ByteWriter::ber_header(std::uint8_t tag, std::size_t length) {
  if ((tag & 0x1F) == 0x1F || length > 0xFFFFFFFFu) {
    ok_ = false;
    return false;
  }
  const std::size_t lsize = ber_length_size(length);
  if (!need(1 + lsize)) return false;
  buf_[pos_++] = tag;
  if (lsize == 1) {
    buf_[pos_++] = static_cast<std::uint8_t>(length);
  } else {
    buf_[pos_++] = static_cast<std::uint8_t>(0x80 | (lsize - 1));
    for (std::size_t i = lsize - 1; i > 0; --i) {
      buf_[pos_++] = static_cast<std::uint8_t>(length >> (8 * (i - 1)));
    }
  }
  return true;
}

bool ByteWriter::ber_tlv(std::uint8_t tag, ByteSpan value) {
  return ber_header(tag, value.size()) && bytes(value);
}

namespace {
constexpr std::size_t kBerMaxLengthOctets = 5;  // 0x84 + four length bytes
}

ByteWriter::BerMark ByteWriter::begin_ber(std::uint8_t tag) {
  BerMark m{pos_};
  if ((tag & 0x1F) == 0x1F) {
    ok_ = false;
    return m;
  }
  if (u8(tag)) fill(0, kBerMaxLengthOctets);
  return m;
}

bool ByteWriter::end_ber(const BerMark& mark) {
  if (!ok_) return false;
  const std::size_t content_pos = mark.tag_pos + 1 + kBerMaxLengthOctets;
  const std::size_t len = pos_ - content_pos;
  if (len > 0xFFFFFFFFu) {
    ok_ = false;
    return false;
  }
  const std::size_t lsize = ber_length_size(len);
  std::uint8_t* lp = buf_.data() + mark.tag_pos + 1;
  if (lsize == 1) {
    lp[0] = static_cast<std::uint8_t>(len);
  } else {
    lp[0] = static_cast<std::uint8_t>(0x80 | (lsize - 1));
    for (std::size_t i = 1; i < lsize; ++i) {
      lp[i] = static_cast<std::uint8_t>(len >> (8 * (lsize - 1 - i)));
    }
  }
  const std::size_t shift = kBerMaxLengthOctets - lsize;
  if (shift != 0) {
    std::memmove(lp + lsize, lp + kBerMaxLengthOctets, len);
    pos_ -= shift;
  }
  return true;
}

}  // namespace layersec
