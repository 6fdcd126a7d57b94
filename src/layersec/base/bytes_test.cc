// Edge-case tests for ByteReader / ByteWriter (bytes.h): truncation at every
// width, sticky errors, child views, BER (X.690 §8.1.2-8.1.3) headers and
// length backpatching.
#include "layersec/base/bytes.h"

#include <array>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace layersec {
namespace {

std::vector<std::uint8_t> seq(std::size_t n, std::uint8_t start = 1) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(start + i);
  return v;
}

// ---------------------------------------------------------------------------
// Reader: fixed widths

TEST(ByteReader, ReadsEveryWidthBigEndian) {
  const std::vector<std::uint8_t> d = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A,
                                       0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14,
                                       0x15, 0x16, 0x17, 0x18};
  ByteReader r(d);
  EXPECT_EQ(r.u8(), 0x01);
  EXPECT_EQ(r.u16(), 0x0203);
  EXPECT_EQ(r.u24(), 0x040506u);
  EXPECT_EQ(r.u32(), 0x0708090Au);
  EXPECT_EQ(r.u48(), 0x0B0C0D0E0F10ull);
  EXPECT_EQ(r.u64(), 0x1112131415161718ull);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.finish());
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.position(), d.size());
}

TEST(ByteReader, ReadsMaximumValues) {
  const std::vector<std::uint8_t> d(8 + 6 + 4 + 3 + 2 + 1, 0xFF);
  ByteReader r(d);
  EXPECT_EQ(r.u64(), 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(r.u48(), 0xFFFFFFFFFFFFull);
  EXPECT_EQ(r.u32(), 0xFFFFFFFFu);
  EXPECT_EQ(r.u24(), 0xFFFFFFu);
  EXPECT_EQ(r.u16(), 0xFFFF);
  EXPECT_EQ(r.u8(), 0xFF);
  EXPECT_TRUE(r.finish());
}

// Reads one value of `width` bytes with the reader's generic API.
std::uint64_t read_width(ByteReader& r, int width) {
  switch (width) {
    case 1: return r.u8();
    case 2: return r.u16();
    case 3: return r.u24();
    case 4: return r.u32();
    case 6: return r.u48();
    case 8: return r.u64();
  }
  ADD_FAILURE() << "bad width";
  return 0;
}

TEST(ByteReader, TruncationAtEveryWidthAndEveryShortLength) {
  for (int width : {1, 2, 3, 4, 6, 8}) {
    for (int avail = 0; avail < width; ++avail) {
      SCOPED_TRACE(testing::Message() << "width " << width << " avail " << avail);
      const auto d = seq(static_cast<std::size_t>(avail), 0xA0);
      ByteReader r(d);
      EXPECT_EQ(read_width(r, width), 0u);
      EXPECT_FALSE(r.ok());
      EXPECT_FALSE(r.finish());
      EXPECT_EQ(r.remaining(), 0u);
      EXPECT_TRUE(r.rest().empty());
      // Nothing was consumed by the failed read.
      EXPECT_EQ(r.position(), 0u);
      // Sticky: even a read that would fit now fails and returns zero.
      if (avail > 0) {
        EXPECT_EQ(r.u8(), 0);
        EXPECT_FALSE(r.ok());
      }
    }
    // Exactly enough succeeds.
    const auto d = seq(static_cast<std::size_t>(width));
    ByteReader r(d);
    read_width(r, width);
    EXPECT_TRUE(r.finish()) << "width " << width;
  }
}

TEST(ByteReader, ConvenienceReadsReportFailure) {
  const std::vector<std::uint8_t> d = {0x12, 0x34, 0x56};
  ByteReader r(d);
  std::uint16_t v16 = 0;
  EXPECT_TRUE(r.read_u16(v16));
  EXPECT_EQ(v16, 0x1234);
  std::uint32_t v32 = 7;
  EXPECT_FALSE(r.read_u32(v32));
  EXPECT_EQ(v32, 0u);
  std::uint8_t v8 = 9;
  EXPECT_FALSE(r.read_u8(v8));  // sticky, although one byte is left
  EXPECT_EQ(v8, 0);
  std::uint64_t v64 = 1;
  EXPECT_FALSE(r.read_u64(v64));
  std::uint32_t v24 = 1;
  EXPECT_FALSE(r.read_u24(v24));
}

TEST(ByteReader, StickyErrorSurvivesLongLayout) {
  const auto d = seq(10);
  ByteReader r(d);
  r.u32();
  r.u64();  // fails: 6 left
  r.u16();  // would fit but the reader is failed
  r.u8();
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.finish());
  std::uint8_t peeked = 0xEE;
  EXPECT_FALSE(r.peek_u8(peeked));
  EXPECT_EQ(peeked, 0);
  EXPECT_TRUE(r.bytes(1).empty());
  EXPECT_FALSE(r.skip(0) && r.ok());
}

TEST(ByteReader, FailMarksSemanticError) {
  const auto d = seq(4);
  ByteReader r(d);
  EXPECT_EQ(r.u8(), 1);
  r.fail();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.u8(), 0);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ByteReader, BytesSkipCopyPeek) {
  const auto d = seq(8);
  ByteReader r(d);
  std::uint8_t p = 0;
  EXPECT_TRUE(r.peek_u8(p));
  EXPECT_EQ(p, 1);
  EXPECT_EQ(r.position(), 0u);
  auto b = r.bytes(3);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.data(), d.data());  // a view, not a copy
  EXPECT_TRUE(r.skip(2));
  std::array<std::uint8_t, 2> out{};
  EXPECT_TRUE(r.copy_to(out));
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[1], 7);
  EXPECT_EQ(r.remaining(), 1u);
  EXPECT_EQ(r.rest().size(), 1u);
  EXPECT_EQ(r.rest()[0], 8);
  EXPECT_FALSE(r.finish());  // one trailing byte
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.bytes(0).empty());
  EXPECT_TRUE(r.ok());
  std::array<std::uint8_t, 2> too_big{0xEE, 0xEE};
  EXPECT_FALSE(r.copy_to(too_big));
  EXPECT_EQ(too_big[0], 0xEE);  // nothing copied on failure
  EXPECT_FALSE(r.ok());
}

TEST(ByteReader, SkipPastEndFails) {
  const auto d = seq(3);
  ByteReader r(d);
  EXPECT_FALSE(r.skip(4));
  EXPECT_FALSE(r.ok());
}

TEST(ByteReader, HugeLengthsDoNotWrap) {
  const auto d = seq(4);
  ByteReader r(d);
  r.u8();
  EXPECT_TRUE(r.bytes(SIZE_MAX).empty());
  EXPECT_FALSE(r.ok());
  ByteReader r2(d);
  r2.u16();
  ByteReader c = r2.sub(SIZE_MAX - 1);
  EXPECT_FALSE(c.ok());
  EXPECT_FALSE(r2.ok());
}

TEST(ByteReader, FinishRejectsTrailingBytes) {
  const auto d = seq(3);
  ByteReader r(d);
  r.u16();
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.finish());
  r.u8();
  EXPECT_TRUE(r.finish());
  ByteReader empty;
  EXPECT_TRUE(empty.finish());
  EXPECT_EQ(empty.u8(), 0);
  EXPECT_FALSE(empty.finish());
}

// ---------------------------------------------------------------------------
// Reader: child views

TEST(ByteReader, SubIsBoundedView) {
  const auto d = seq(6);
  ByteReader r(d);
  ByteReader c = r.sub(4);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.position(), 4u);
  EXPECT_EQ(c.data().data(), d.data());
  EXPECT_EQ(c.u32(), 0x01020304u);
  // The child cannot read into the parent's remaining bytes.
  EXPECT_EQ(c.u8(), 0);
  EXPECT_FALSE(c.ok());
  // A failing child leaves the parent intact.
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.u16(), 0x0506);
  EXPECT_TRUE(r.finish());
}

TEST(ByteReader, SubLongerThanParentFailsBoth) {
  const auto d = seq(4);
  ByteReader r(d);
  r.u8();
  ByteReader c = r.sub(4);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.remaining(), 0u);
  EXPECT_EQ(c.u8(), 0);
  EXPECT_FALSE(r.ok());
}

TEST(ByteReader, LengthPrefixedChildren) {
  // u8: 2 bytes; u16: 3 bytes; u24: 1 byte; u32: 0 bytes.
  const std::vector<std::uint8_t> d = {0x02, 0xAA, 0xBB, 0x00, 0x03, 0x01, 0x02, 0x03,
                                       0x00, 0x00, 0x01, 0xCC, 0x00, 0x00, 0x00, 0x00};
  ByteReader r(d);
  ByteReader a = r.sub_u8_prefixed();
  EXPECT_EQ(a.u16(), 0xAABB);
  EXPECT_TRUE(a.finish());
  ByteReader b = r.sub_u16_prefixed();
  EXPECT_EQ(b.remaining(), 3u);
  EXPECT_EQ(b.u24(), 0x010203u);
  EXPECT_TRUE(b.finish());
  ByteReader c = r.sub_u24_prefixed();
  EXPECT_EQ(c.u8(), 0xCC);
  EXPECT_TRUE(c.finish());
  ByteReader e = r.sub_u32_prefixed();
  EXPECT_TRUE(e.ok());
  EXPECT_TRUE(e.empty());
  EXPECT_TRUE(e.finish());
  EXPECT_TRUE(r.finish());
}

TEST(ByteReader, LengthPrefixOverflowingParentFails) {
  struct Case {
    int width;
    std::vector<std::uint8_t> bytes;
  };
  const std::vector<Case> cases = {
      {1, {0x03, 0x01, 0x02}},                        // claims 3, has 2
      {1, {0xFF}},                                    // claims 255, has 0
      {2, {0x00, 0x02, 0x01}},                        // claims 2, has 1
      {2, {0xFF, 0xFF, 0x01, 0x02}},                  // claims 65535
      {3, {0x00, 0x00, 0x05, 1, 2, 3, 4}},            // claims 5, has 4
      {4, {0x00, 0x00, 0x00, 0x09, 1, 2, 3, 4, 5}},   // claims 9, has 5
      {4, {0xFF, 0xFF, 0xFF, 0xFF, 1}},               // claims 4 GiB
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << "width " << c.width << " size " << c.bytes.size());
    ByteReader r(c.bytes);
    ByteReader child;
    switch (c.width) {
      case 1: child = r.sub_u8_prefixed(); break;
      case 2: child = r.sub_u16_prefixed(); break;
      case 3: child = r.sub_u24_prefixed(); break;
      default: child = r.sub_u32_prefixed(); break;
    }
    EXPECT_FALSE(child.ok());
    EXPECT_EQ(child.remaining(), 0u);
    EXPECT_FALSE(r.ok());
  }
}

TEST(ByteReader, TruncatedLengthPrefixFails) {
  for (int width = 1; width <= 4; ++width) {
    for (int avail = 0; avail < width; ++avail) {
      const std::vector<std::uint8_t> d(static_cast<std::size_t>(avail), 0x00);
      ByteReader r(d);
      ByteReader child = width == 1   ? r.sub_u8_prefixed()
                         : width == 2 ? r.sub_u16_prefixed()
                         : width == 3 ? r.sub_u24_prefixed()
                                      : r.sub_u32_prefixed();
      EXPECT_FALSE(child.ok()) << width << "/" << avail;
      EXPECT_FALSE(r.ok()) << width << "/" << avail;
    }
  }
}

TEST(ByteReader, NestedChildren) {
  // outer(u8 len 5){ inner(u8 len 2){AA BB} CC DD } EE
  const std::vector<std::uint8_t> d = {0x05, 0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE};
  ByteReader r(d);
  ByteReader outer = r.sub_u8_prefixed();
  ByteReader inner = outer.sub_u8_prefixed();
  EXPECT_EQ(inner.u16(), 0xAABB);
  EXPECT_TRUE(inner.finish());
  EXPECT_EQ(outer.u16(), 0xCCDD);
  EXPECT_TRUE(outer.finish());
  EXPECT_EQ(r.u8(), 0xEE);
  EXPECT_TRUE(r.finish());
  // An inner length that overflows the outer child fails the outer only.
  const std::vector<std::uint8_t> bad = {0x03, 0x05, 0xAA, 0xBB, 0xEE};
  ByteReader r2(bad);
  ByteReader o2 = r2.sub_u8_prefixed();
  ByteReader i2 = o2.sub_u8_prefixed();
  EXPECT_FALSE(i2.ok());
  EXPECT_FALSE(o2.ok());
  EXPECT_TRUE(r2.ok());
  EXPECT_EQ(r2.u8(), 0xEE);
}

// ---------------------------------------------------------------------------
// Reader: BER

TEST(ByteReaderBer, ShortFormLengths) {
  for (std::size_t len : {0u, 1u, 5u, 0x7Fu}) {
    std::vector<std::uint8_t> d = {0x80, static_cast<std::uint8_t>(len)};
    const auto body = seq(len);
    d.insert(d.end(), body.begin(), body.end());
    ByteReader r(d);
    std::uint8_t tag = 0;
    ByteReader v;
    ASSERT_TRUE(r.ber_tlv(tag, v)) << len;
    EXPECT_EQ(tag, 0x80);
    EXPECT_EQ(v.remaining(), len);
    if (len) {
      EXPECT_EQ(v.data()[0], 1);
    }
    EXPECT_TRUE(r.finish());
  }
}

TEST(ByteReaderBer, LongFormLengths) {
  struct Case {
    std::vector<std::uint8_t> len_octets;
    std::size_t length;
  };
  const std::vector<Case> cases = {
      {{0x81, 0x80}, 0x80},
      {{0x81, 0xFF}, 0xFF},
      {{0x82, 0x01, 0x00}, 0x100},
      {{0x82, 0x12, 0x34}, 0x1234},
      {{0x83, 0x01, 0x00, 0x00}, 0x10000},
      {{0x84, 0x00, 0x01, 0x00, 0x01}, 0x10001},
      // Non-minimal long forms are valid BER (not DER) and accepted.
      {{0x81, 0x05}, 5},
      {{0x84, 0x00, 0x00, 0x00, 0x00}, 0},
  };
  for (const auto& c : cases) {
    std::vector<std::uint8_t> d = {0x30};
    d.insert(d.end(), c.len_octets.begin(), c.len_octets.end());
    d.resize(d.size() + c.length, 0x5A);
    ByteReader r(d);
    std::uint8_t tag = 0;
    std::size_t length = 0;
    ASSERT_TRUE(r.ber_header(tag, length)) << c.length;
    EXPECT_EQ(tag, 0x30);
    EXPECT_EQ(length, c.length);
    EXPECT_EQ(r.remaining(), c.length);
  }
}

TEST(ByteReaderBer, RejectsIndefiniteAndOverlongLengthForms) {
  for (std::uint8_t first : {0x80, 0x85, 0x86, 0x88, 0xFE, 0xFF}) {
    std::vector<std::uint8_t> d = {0x04, first};
    d.resize(64, 0x00);
    ByteReader r(d);
    std::uint8_t tag = 0;
    std::size_t length = 0;
    EXPECT_FALSE(r.ber_header(tag, length)) << int(first);
    EXPECT_FALSE(r.ok());
    ByteReader r2(d);
    ByteReader v;
    EXPECT_FALSE(r2.ber_tlv(tag, v));
    EXPECT_FALSE(v.ok());
  }
}

TEST(ByteReaderBer, RejectsLengthPastEnd) {
  const std::vector<std::vector<std::uint8_t>> inputs = {
      {0x04, 0x01},                          // short form, 0 of 1 byte
      {0x04, 0x7F, 0x00},                    // 1 of 127
      {0x04, 0x81, 0x80, 0x00},              // 1 of 128
      {0x04, 0x82, 0x01, 0x00, 0x00},        // 1 of 256
      {0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xFF},  // 4 GiB
  };
  for (const auto& d : inputs) {
    ByteReader r(d);
    std::uint8_t tag = 0;
    ByteReader v;
    EXPECT_FALSE(r.ber_tlv(tag, v)) << d.size();
    EXPECT_FALSE(r.ok());
    EXPECT_FALSE(v.ok());
  }
}

TEST(ByteReaderBer, RejectsTruncatedHeader) {
  const std::vector<std::vector<std::uint8_t>> inputs = {
      {},                  // no tag
      {0x04},              // no length
      {0x04, 0x81},        // long form, no length octet
      {0x04, 0x82, 0x01},  // long form, one of two octets
      {0x04, 0x84, 0x00, 0x00, 0x00},
  };
  for (const auto& d : inputs) {
    ByteReader r(d);
    std::uint8_t tag = 0;
    std::size_t length = 0;
    EXPECT_FALSE(r.ber_header(tag, length)) << d.size();
    EXPECT_FALSE(r.ok());
  }
}

TEST(ByteReaderBer, RejectsHighTagNumberForm) {
  // X.690 §8.1.2.4: low five bits all ones announce a multi-octet tag.
  for (std::uint8_t tag_octet : {0x1F, 0x3F, 0x5F, 0x9F, 0xBF, 0xFF}) {
    const std::vector<std::uint8_t> d = {tag_octet, 0x01, 0x00, 0x00};
    ByteReader r(d);
    std::uint8_t tag = 0;
    std::size_t length = 0;
    EXPECT_FALSE(r.ber_header(tag, length)) << int(tag_octet);
  }
  // 0x1E is still a one-octet tag.
  const std::vector<std::uint8_t> ok = {0x1E, 0x00};
  ByteReader r(ok);
  std::uint8_t tag = 0;
  std::size_t length = 0;
  EXPECT_TRUE(r.ber_header(tag, length));
  EXPECT_EQ(tag, 0x1E);
}

TEST(ByteReaderBer, ExpectChecksTagAndTrailingBytes) {
  const std::vector<std::uint8_t> d = {0x80, 0x02, 0x12, 0x34, 0x81, 0x01, 0x56};
  ByteReader r(d);
  ByteReader v;
  ASSERT_TRUE(r.ber_expect(0x80, v));
  EXPECT_EQ(v.u16(), 0x1234);
  EXPECT_TRUE(v.finish());
  EXPECT_FALSE(r.finish());  // one more TLV
  ByteReader w;
  EXPECT_FALSE(r.ber_expect(0x82, w));
  EXPECT_FALSE(w.ok());
  EXPECT_FALSE(r.ok());
}

TEST(ByteReaderBer, NestedTlvs) {
  // 60 0a [80 01 05] [a2 05 [83 03 aa bb cc]]
  const std::vector<std::uint8_t> d = {0x60, 0x0A, 0x80, 0x01, 0x05, 0xA2,
                                       0x05, 0x83, 0x03, 0xAA, 0xBB, 0xCC};
  ByteReader r(d);
  ByteReader apdu;
  ASSERT_TRUE(r.ber_expect(0x60, apdu));
  EXPECT_TRUE(r.finish());
  ByteReader n;
  ASSERT_TRUE(apdu.ber_expect(0x80, n));
  EXPECT_EQ(n.u8(), 5);
  ByteReader seqv;
  ASSERT_TRUE(apdu.ber_expect(0xA2, seqv));
  EXPECT_TRUE(apdu.finish());
  ByteReader leaf;
  ASSERT_TRUE(seqv.ber_expect(0x83, leaf));
  EXPECT_EQ(leaf.u24(), 0xAABBCCu);
  EXPECT_TRUE(seqv.finish());
  // Inner length larger than its parent's value: only the parent fails.
  const std::vector<std::uint8_t> bad = {0x60, 0x03, 0x80, 0x05, 0x00, 0x99};
  ByteReader r2(bad);
  ByteReader a2;
  ASSERT_TRUE(r2.ber_expect(0x60, a2));
  ByteReader l2;
  EXPECT_FALSE(a2.ber_expect(0x80, l2));
  EXPECT_TRUE(r2.ok());
  EXPECT_EQ(r2.u8(), 0x99);
}

TEST(ByteReaderBer, LengthSize) {
  EXPECT_EQ(ber_length_size(0), 1u);
  EXPECT_EQ(ber_length_size(0x7F), 1u);
  EXPECT_EQ(ber_length_size(0x80), 2u);
  EXPECT_EQ(ber_length_size(0xFF), 2u);
  EXPECT_EQ(ber_length_size(0x100), 3u);
  EXPECT_EQ(ber_length_size(0xFFFF), 3u);
  EXPECT_EQ(ber_length_size(0x10000), 4u);
  EXPECT_EQ(ber_length_size(0xFFFFFF), 4u);
  EXPECT_EQ(ber_length_size(0x1000000), 5u);
  EXPECT_EQ(ber_length_size(0xFFFFFFFFu), 5u);
}

// ---------------------------------------------------------------------------
// Writer

TEST(ByteWriter, WritesEveryWidthBigEndian) {
  std::array<std::uint8_t, 24> buf{};
  ByteWriter w(buf);
  EXPECT_TRUE(w.u8(0x01));
  EXPECT_TRUE(w.u16(0x0203));
  EXPECT_TRUE(w.u24(0x040506));
  EXPECT_TRUE(w.u32(0x0708090A));
  EXPECT_TRUE(w.u48(0x0B0C0D0E0F10ull));
  EXPECT_TRUE(w.u64(0x1112131415161718ull));
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.size(), 24u);
  EXPECT_EQ(w.capacity(), 24u);
  for (std::size_t i = 0; i < buf.size(); ++i) EXPECT_EQ(buf[i], i + 1) << i;
  ByteReader r(w.written());
  EXPECT_EQ(r.u8(), 0x01);
  EXPECT_EQ(r.u16(), 0x0203);
  EXPECT_EQ(r.u24(), 0x040506u);
  EXPECT_EQ(r.u32(), 0x0708090Au);
  EXPECT_EQ(r.u48(), 0x0B0C0D0E0F10ull);
  EXPECT_EQ(r.u64(), 0x1112131415161718ull);
  EXPECT_TRUE(r.finish());
}

TEST(ByteWriter, RejectsOutOfRangeValues) {
  std::array<std::uint8_t, 16> buf{};
  ByteWriter w(buf);
  EXPECT_FALSE(w.u24(0x1000000));
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.size(), 0u);
  ByteWriter w2(buf);
  EXPECT_TRUE(w2.u24(0xFFFFFF));
  EXPECT_TRUE(w2.u48(0xFFFFFFFFFFFFull));
  EXPECT_FALSE(w2.u48(0x1000000000000ull));
  EXPECT_FALSE(w2.ok());
  EXPECT_EQ(w2.size(), 9u);
}

// A writer over the middle of a guarded buffer: every overflow must leave the
// guard bytes untouched.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t n) : storage_(n + 2 * kGuard, 0xAA) {}
  MutableByteSpan span() { return MutableByteSpan(storage_.data() + kGuard, storage_.size() - 2 * kGuard); }
  bool guards_intact() const {
    for (std::size_t i = 0; i < kGuard; ++i)
      if (storage_[i] != 0xAA || storage_[storage_.size() - 1 - i] != 0xAA) return false;
    return true;
  }

 private:
  static constexpr std::size_t kGuard = 16;
  std::vector<std::uint8_t> storage_;
};

TEST(ByteWriter, OverflowAtEveryWidthIsStickyAndWritesNothing) {
  for (int width : {1, 2, 3, 4, 6, 8}) {
    for (int cap = 0; cap < width; ++cap) {
      SCOPED_TRACE(testing::Message() << "width " << width << " cap " << cap);
      GuardedBuffer g(static_cast<std::size_t>(cap));
      auto span = g.span();
      std::fill(span.begin(), span.end(), 0x11);
      ByteWriter w(span);
      bool r = false;
      switch (width) {
        case 1: r = w.u8(0xFF); break;
        case 2: r = w.u16(0xFFFF); break;
        case 3: r = w.u24(0xFFFFFF); break;
        case 4: r = w.u32(0xFFFFFFFF); break;
        case 6: r = w.u48(0xFFFFFFFFFFFF); break;
        case 8: r = w.u64(~0ull); break;
      }
      EXPECT_FALSE(r);
      EXPECT_FALSE(w.ok());
      EXPECT_EQ(w.size(), 0u);
      EXPECT_TRUE(g.guards_intact());
      for (auto b : span) EXPECT_EQ(b, 0x11);  // nothing partially written
      if (cap > 0) {
        EXPECT_FALSE(w.u8(0x22));  // sticky although it would fit
        EXPECT_EQ(span[0], 0x11);
      }
    }
  }
}

TEST(ByteWriter, BytesFillReserveOverflow) {
  GuardedBuffer g(8);
  ByteWriter w(g.span());
  const auto five = seq(5);
  EXPECT_TRUE(w.bytes(five));
  EXPECT_FALSE(w.bytes(five));
  EXPECT_EQ(w.size(), 5u);
  EXPECT_FALSE(w.fill(0x00, 1));
  EXPECT_TRUE(w.reserve(1).empty());
  EXPECT_TRUE(g.guards_intact());

  GuardedBuffer g2(8);
  ByteWriter w2(g2.span());
  EXPECT_TRUE(w2.fill(0x7E, 3));
  auto res = w2.reserve(4);
  ASSERT_EQ(res.size(), 4u);
  store_be32(res.data(), 0xDEADBEEF);
  EXPECT_TRUE(w2.bytes(ByteSpan{}));
  EXPECT_FALSE(w2.fill(0x00, 2));
  EXPECT_TRUE(g2.guards_intact());
  EXPECT_EQ(w2.size(), 7u);
  const std::vector<std::uint8_t> expect = {0x7E, 0x7E, 0x7E, 0xDE, 0xAD, 0xBE, 0xEF};
  EXPECT_EQ(std::vector<std::uint8_t>(w2.written().begin(), w2.written().end()), expect);
}

TEST(ByteWriter, ExactFitSucceeds) {
  std::array<std::uint8_t, 8> buf{};
  ByteWriter w(buf);
  EXPECT_TRUE(w.u64(1));
  EXPECT_TRUE(w.ok());
  EXPECT_FALSE(w.u8(0));
  ByteWriter empty(MutableByteSpan{});
  EXPECT_TRUE(empty.bytes(ByteSpan{}));
  EXPECT_TRUE(empty.ok());
  EXPECT_FALSE(empty.u8(0));
}

TEST(ByteWriter, LengthBackpatchingEveryWidth) {
  for (std::size_t width = 1; width <= 4; ++width) {
    std::array<std::uint8_t, 32> buf{};
    ByteWriter w(buf);
    w.u8(0xEE);
    auto m = w.begin_length(width);
    w.u16(0x1234);
    w.u8(0x56);
    ASSERT_TRUE(w.end_length(m)) << width;
    w.u8(0xFF);
    ByteReader r(w.written());
    EXPECT_EQ(r.u8(), 0xEE);
    ByteReader c = width == 1   ? r.sub_u8_prefixed()
                   : width == 2 ? r.sub_u16_prefixed()
                   : width == 3 ? r.sub_u24_prefixed()
                                : r.sub_u32_prefixed();
    EXPECT_EQ(c.remaining(), 3u) << width;
    EXPECT_EQ(c.u24(), 0x123456u);
    EXPECT_EQ(r.u8(), 0xFF);
    EXPECT_TRUE(r.finish());
  }
}

TEST(ByteWriter, LengthOfEmptyPartIsZero) {
  std::array<std::uint8_t, 4> buf{0xFF, 0xFF, 0xFF, 0xFF};
  ByteWriter w(buf);
  auto m = w.begin_length(2);
  ASSERT_TRUE(w.end_length(m));
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(buf[1], 0);
}

TEST(ByteWriter, OneByteLengthOverflowFails) {
  std::vector<std::uint8_t> buf(300);
  {
    ByteWriter w(buf);
    auto m = w.begin_length(1);
    w.fill(0x01, 255);
    EXPECT_TRUE(w.end_length(m));
    EXPECT_EQ(buf[0], 0xFF);
  }
  {
    ByteWriter w(buf);
    auto m = w.begin_length(1);
    w.fill(0x01, 256);
    EXPECT_FALSE(w.end_length(m));
    EXPECT_FALSE(w.ok());
    EXPECT_FALSE(w.u8(0));  // sticky
  }
  {
    std::vector<std::uint8_t> big(70000);
    ByteWriter w(big);
    auto m = w.begin_length(2);
    w.fill(0x01, 65536);
    EXPECT_FALSE(w.end_length(m));
    ByteWriter w3(big);
    auto m3 = w3.begin_length(3);
    w3.fill(0x01, 65536);
    EXPECT_TRUE(w3.end_length(m3));
    EXPECT_EQ(big[0], 0x01);
    EXPECT_EQ(big[1], 0x00);
    EXPECT_EQ(big[2], 0x00);
  }
}

TEST(ByteWriter, BadLengthWidthFails) {
  std::array<std::uint8_t, 16> buf{};
  for (std::size_t width : {0u, 5u, 8u}) {
    ByteWriter w(buf);
    auto m = w.begin_length(width);
    EXPECT_FALSE(w.ok()) << width;
    EXPECT_FALSE(w.end_length(m));
  }
}

TEST(ByteWriter, LengthFieldThatDoesNotFitFails) {
  GuardedBuffer g(3);
  ByteWriter w(g.span());
  w.u8(1);
  auto m = w.begin_length(4);
  EXPECT_FALSE(w.ok());
  EXPECT_FALSE(w.end_length(m));
  EXPECT_TRUE(g.guards_intact());
}

TEST(ByteWriter, NestedLengths) {
  std::array<std::uint8_t, 32> buf{};
  ByteWriter w(buf);
  auto outer = w.begin_length(2);
  auto inner = w.begin_length(1);
  w.u32(0xCAFEBABE);
  ASSERT_TRUE(w.end_length(inner));
  w.u8(0x77);
  ASSERT_TRUE(w.end_length(outer));
  const std::vector<std::uint8_t> expect = {0x00, 0x06, 0x04, 0xCA, 0xFE, 0xBA, 0xBE, 0x77};
  EXPECT_EQ(std::vector<std::uint8_t>(w.written().begin(), w.written().end()), expect);
}

// ---------------------------------------------------------------------------
// Writer: BER

std::vector<std::uint8_t> ber_via_tlv(std::uint8_t tag, const std::vector<std::uint8_t>& value) {
  std::vector<std::uint8_t> buf(value.size() + 8);
  ByteWriter w(buf);
  EXPECT_TRUE(w.ber_tlv(tag, value));
  return {w.written().begin(), w.written().end()};
}

TEST(ByteWriterBer, HeaderUsesMinimalLengthForms) {
  struct Case {
    std::size_t length;
    std::vector<std::uint8_t> header;
  };
  const std::vector<Case> cases = {
      {0, {0x80, 0x00}},
      {0x7F, {0x80, 0x7F}},
      {0x80, {0x80, 0x81, 0x80}},
      {0xFF, {0x80, 0x81, 0xFF}},
      {0x100, {0x80, 0x82, 0x01, 0x00}},
      {0xFFFF, {0x80, 0x82, 0xFF, 0xFF}},
      {0x10000, {0x80, 0x83, 0x01, 0x00, 0x00}},
      {0x1000000, {0x80, 0x84, 0x01, 0x00, 0x00, 0x00}},
      {0xFFFFFFFFu, {0x80, 0x84, 0xFF, 0xFF, 0xFF, 0xFF}},
  };
  for (const auto& c : cases) {
    std::array<std::uint8_t, 8> buf{};
    ByteWriter w(buf);
    ASSERT_TRUE(w.ber_header(0x80, c.length)) << c.length;
    EXPECT_EQ(std::vector<std::uint8_t>(w.written().begin(), w.written().end()), c.header)
        << c.length;
  }
}

TEST(ByteWriterBer, HeaderRejectsHighTagAndHugeLength) {
  std::array<std::uint8_t, 8> buf{};
  ByteWriter w(buf);
  EXPECT_FALSE(w.ber_header(0x1F, 1));
  EXPECT_FALSE(w.ok());
  ByteWriter w2(buf);
  EXPECT_FALSE(w2.ber_header(0x04, std::size_t{0x100000000ull}));
  ByteWriter w3(buf);
  auto m = w3.begin_ber(0xBF);  // high-tag-number form
  EXPECT_FALSE(w3.ok());
  EXPECT_EQ(w3.size(), 0u);
  EXPECT_FALSE(w3.end_ber(m));
}

TEST(ByteWriterBer, HeaderOverflowWritesNothing) {
  GuardedBuffer g(2);
  ByteWriter w(g.span());
  EXPECT_FALSE(w.ber_header(0x80, 0x80));  // needs 3 bytes
  EXPECT_EQ(w.size(), 0u);
  EXPECT_TRUE(g.guards_intact());
}

TEST(ByteWriterBer, BeginEndBerProducesMinimalLengthsAndMovesContents) {
  for (std::size_t len : {0u, 1u, 5u, 0x7Fu, 0x80u, 0x81u, 0xFFu, 0x100u, 0x1234u, 0xFFFFu, 0x10000u}) {
    SCOPED_TRACE(len);
    std::vector<std::uint8_t> value(len);
    for (std::size_t i = 0; i < len; ++i) value[i] = static_cast<std::uint8_t>(i * 7 + 3);
    std::vector<std::uint8_t> buf(len + 16, 0xCC);
    ByteWriter w(buf);
    w.u8(0x99);  // something before, to check the mark offset
    auto m = w.begin_ber(0xA2);
    EXPECT_EQ(m.tag_pos, 1u);
    ASSERT_TRUE(w.bytes(value));
    ASSERT_TRUE(w.end_ber(m));
    ASSERT_TRUE(w.u8(0x55));  // writing continues right after the moved contents
    std::vector<std::uint8_t> expect = {0x99};
    const auto tlv = ber_via_tlv(0xA2, value);
    expect.insert(expect.end(), tlv.begin(), tlv.end());
    expect.push_back(0x55);
    ASSERT_EQ(w.size(), expect.size());
    EXPECT_TRUE(std::equal(expect.begin(), expect.end(), buf.begin()));
    // Parses back.
    ByteReader r(w.written());
    EXPECT_EQ(r.u8(), 0x99);
    ByteReader v;
    ASSERT_TRUE(r.ber_expect(0xA2, v));
    EXPECT_TRUE(std::equal(value.begin(), value.end(), v.data().begin(), v.data().end()));
    EXPECT_EQ(r.u8(), 0x55);
    EXPECT_TRUE(r.finish());
  }
}

TEST(ByteWriterBer, NestedBer) {
  // 60 { 80 01 05, a2 { 30 { 83 03 aa bb cc } } , 87 <200 bytes> }
  std::vector<std::uint8_t> buf(512);
  ByteWriter w(buf);
  auto apdu = w.begin_ber(0x60);
  const std::uint8_t five[] = {0x05};
  w.ber_tlv(0x80, five);
  auto seqof = w.begin_ber(0xA2);
  auto asdu = w.begin_ber(0x30);
  const std::uint8_t leaf[] = {0xAA, 0xBB, 0xCC};
  w.ber_tlv(0x83, leaf);
  ASSERT_TRUE(w.end_ber(asdu));
  ASSERT_TRUE(w.end_ber(seqof));
  std::vector<std::uint8_t> big(200, 0x42);
  w.ber_tlv(0x87, big);
  ASSERT_TRUE(w.end_ber(apdu));
  ASSERT_TRUE(w.ok());

  std::vector<std::uint8_t> expect = {0x60, 0x81, 3 + 9 + 3 + 200, 0x80, 0x01, 0x05, 0xA2, 0x07, 0x30,
                                      0x05, 0x83, 0x03, 0xAA, 0xBB, 0xCC, 0x87, 0x81, 0xC8};
  // (a push_back loop: gcc 12 -O2 reports a false -Warray-bounds on insert here)
  for (std::uint8_t b : big) expect.push_back(b);
  EXPECT_EQ(std::vector<std::uint8_t>(w.written().begin(), w.written().end()), expect);
}

TEST(ByteWriterBer, BeginBerOverflowFails) {
  // begin_ber reserves the longest form (tag + 5 length octets); a buffer
  // smaller than that fails even if the final TLV would have fitted.
  GuardedBuffer g(5);
  ByteWriter w(g.span());
  auto m = w.begin_ber(0x80);
  EXPECT_FALSE(w.ok());
  EXPECT_FALSE(w.end_ber(m));
  EXPECT_TRUE(g.guards_intact());
  // Overflow inside the contents is sticky and end_ber refuses.
  GuardedBuffer g2(10);
  ByteWriter w2(g2.span());
  auto m2 = w2.begin_ber(0x80);
  EXPECT_TRUE(w2.ok());
  EXPECT_FALSE(w2.fill(0x01, 5));
  EXPECT_FALSE(w2.end_ber(m2));
  EXPECT_TRUE(g2.guards_intact());
}

TEST(ByteOrder, StoreLoadHelpers) {
  std::array<std::uint8_t, 8> b{};
  store_be16(b.data(), 0xA1B2);
  EXPECT_EQ(b[0], 0xA1);
  EXPECT_EQ(b[1], 0xB2);
  EXPECT_EQ(load_be16(b.data()), 0xA1B2);
  store_be32(b.data(), 0x01020304);
  EXPECT_EQ(load_be32(b.data()), 0x01020304u);
  EXPECT_EQ(b[0], 0x01);
  EXPECT_EQ(b[3], 0x04);
  store_be64(b.data(), 0x8877665544332211ull);
  EXPECT_EQ(b[0], 0x88);
  EXPECT_EQ(b[7], 0x11);
  EXPECT_EQ(load_be64(b.data()), 0x8877665544332211ull);
}

}  // namespace
}  // namespace layersec
