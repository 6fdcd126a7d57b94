// ByteReader / ByteWriter: bounds-checked big-endian codecs over std::span.
//
// Every parser in layersec reads untrusted bytes through ByteReader. Errors are
// sticky (like llvm::DataExtractor with a Cursor): once a read runs past the
// end, every later read fails and returns zero, so a long fixed layout can be
// read straight through and checked once with ok() or finish(). Child readers
// hand out views of length-prefixed parts without copying (BoringSSL's CBS).
//
// ByteWriter writes into a caller-owned buffer; overflow is sticky too and
// nothing is written past the buffer. Length fields are reserved and
// backpatched once the enclosed part is complete (BoringSSL's CBB).
//
// BER (X.690) tag/length support covers what IEC 61850-9-2 needs: one-byte
// tags (low-tag-number form) and definite lengths in short and long form up to
// four length octets. Indefinite lengths are rejected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace layersec {

using ByteSpan = std::span<const std::uint8_t>;
using MutableByteSpan = std::span<std::uint8_t>;

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(ByteSpan data) : data_(data) {}

  // True while no read has failed.
  [[nodiscard]] bool ok() const { return ok_; }
  // True when no read failed and every byte was consumed (trailing bytes are
  // an error for every layersec parser).
  [[nodiscard]] bool finish() const { return ok_ && pos_ == data_.size(); }
  [[nodiscard]] std::size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }
  [[nodiscard]] std::size_t position() const { return pos_; }
  [[nodiscard]] bool empty() const { return remaining() == 0; }
  // The unread bytes (empty once failed).
  [[nodiscard]] ByteSpan rest() const { return ok_ ? data_.subspan(pos_) : ByteSpan{}; }
  // The whole underlying view.
  [[nodiscard]] ByteSpan data() const { return data_; }
  // Marks the reader failed (for semantic errors found by the caller).
  void fail() { ok_ = false; }

  // Big-endian unsigned reads; return 0 and fail when fewer bytes remain.
  std::uint8_t u8();
  std::uint16_t u16();
  std::uint32_t u24();
  std::uint32_t u32();
  std::uint64_t u48();
  std::uint64_t u64();
  // Reads n bytes as a view (empty view and failure when short).
  ByteSpan bytes(std::size_t n);
  // Copies out.size() bytes.
  bool copy_to(MutableByteSpan out);
  bool skip(std::size_t n);
  // Looks at the next byte without consuming it; 0 and false when empty.
  bool peek_u8(std::uint8_t& out) const;

  // Convenience forms that report success directly.
  bool read_u8(std::uint8_t& v) { v = u8(); return ok_; }
  bool read_u16(std::uint16_t& v) { v = u16(); return ok_; }
  bool read_u24(std::uint32_t& v) { v = u24(); return ok_; }
  bool read_u32(std::uint32_t& v) { v = u32(); return ok_; }
  bool read_u64(std::uint64_t& v) { v = u64(); return ok_; }

  // Child views: the next n bytes, or a part prefixed by an 8/16/24/32-bit
  // big-endian length. On failure the child is empty-and-failed and this
  // reader is failed too.
  ByteReader sub(std::size_t n);
  ByteReader sub_u8_prefixed();
  ByteReader sub_u16_prefixed();
  ByteReader sub_u24_prefixed();
  ByteReader sub_u32_prefixed();

  // BER: reads one identifier octet (high-tag-number form is rejected) and a
  // definite length (short form, or long form with 1..4 length octets, no
  // indefinite form, length must fit in the remaining bytes).
  bool ber_header(std::uint8_t& tag, std::size_t& length);
  // Reads a TLV and returns its value as a child reader.
  bool ber_tlv(std::uint8_t& tag, ByteReader& value);
  // Reads a TLV that must carry `expected_tag`.
  bool ber_expect(std::uint8_t expected_tag, ByteReader& value);

 private:
  ByteSpan data_{};
  std::size_t pos_ = 0;
  bool ok_ = true;
  static ByteReader failed_child() {
    ByteReader r;
    r.ok_ = false;
    return r;
  }
  bool need(std::size_t n);
};

class ByteWriter {
 public:
  explicit ByteWriter(MutableByteSpan buffer) : buf_(buffer) {}

  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] std::size_t size() const { return pos_; }
  [[nodiscard]] std::size_t capacity() const { return buf_.size(); }
  // The bytes written so far.
  [[nodiscard]] ByteSpan written() const { return ByteSpan(buf_.data(), pos_); }
  [[nodiscard]] MutableByteSpan written_mutable() { return MutableByteSpan(buf_.data(), pos_); }

  bool u8(std::uint8_t v);
  bool u16(std::uint16_t v);
  bool u24(std::uint32_t v);  // fails if v > 0xFFFFFF
  bool u32(std::uint32_t v);
  bool u48(std::uint64_t v);  // fails if v >= 2^48
  bool u64(std::uint64_t v);
  bool bytes(ByteSpan b);
  bool fill(std::uint8_t value, std::size_t n);
  // Reserves n bytes and returns a view of them for the caller to fill in
  // later (empty on overflow).
  MutableByteSpan reserve(std::size_t n);

  // Length backpatching. `begin_length(width)` reserves a width-byte
  // big-endian length field (1..4); `end_length(mark)` writes the number of
  // bytes written since the field. Fails if the length does not fit.
  struct LengthMark {
    std::size_t field_pos = 0;
    std::size_t width = 0;
  };
  LengthMark begin_length(std::size_t width);
  bool end_length(const LengthMark& mark);

  // BER writing. ber_header writes a tag and the minimal definite length.
  bool ber_header(std::uint8_t tag, std::size_t length);
  bool ber_tlv(std::uint8_t tag, ByteSpan value);
  // Nested TLV whose length is not known up front: begin_ber reserves room for
  // the longest length form; end_ber writes the minimal form and moves the
  // contents down.
  struct BerMark {
    std::size_t tag_pos = 0;
  };
  BerMark begin_ber(std::uint8_t tag);
  bool end_ber(const BerMark& mark);

 private:
  MutableByteSpan buf_;
  std::size_t pos_ = 0;
  bool ok_ = true;
  bool need(std::size_t n);
};

// Number of octets the minimal BER definite-length form of `length` takes.
std::size_t ber_length_size(std::size_t length);

// Big-endian stores/loads on raw buffers for fixed-offset patching of
// pre-encoded frames (the caller guarantees the bounds).
inline void store_be16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}
inline void store_be64(std::uint8_t* p, std::uint64_t v) {
  store_be32(p, static_cast<std::uint32_t>(v >> 32));
  store_be32(p + 4, static_cast<std::uint32_t>(v));
}
inline std::uint16_t load_be16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
inline std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
inline std::uint64_t load_be64(const std::uint8_t* p) {
  return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}

}  // namespace layersec
