#include "layersec/someip/tp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace layersec::someip {
namespace {

using Bytes = std::vector<std::uint8_t>;

Header big_header() {
  Header h;
  h.service_id = 0x5555;
  h.method_id = 0x0042;
  h.client_id = 0x0011;
  h.session_id = 0x0007;
  h.interface_version = 3;
  h.message_type = MessageType::kResponse;
  return h;
}

Bytes payload(std::size_t n) {
  Bytes p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return p;
}

std::vector<Bytes> segment(const Header& h, const Bytes& p, std::size_t seg = kTpMaxSegment) {
  TpSegmenter s(h, p, seg);
  std::vector<Bytes> out;
  while (!s.done()) {
    Bytes buf(s.max_segment_message_size());
    ByteWriter w(buf);
    EXPECT_TRUE(s.write_next(w));
    buf.resize(w.size());
    out.push_back(buf);
  }
  EXPECT_EQ(out.size(), s.segment_count());
  return out;
}

TpSegment seg_of(const Bytes& b) {
  auto m = parse_message(b);
  EXPECT_TRUE(m.ok());
  if (!m) return {};
  auto s = parse_tp_segment(*m);
  EXPECT_TRUE(s.ok());
  if (!s) return {};
  return *s;
}

const Endpoint kPeer{IpAddress::v4(10, 0, 0, 2), 40000, L4Proto::kUdp};
const TimePoint kT0 = TimePoint::from_ns(1'000'000'000);

TEST(SomeipTp, SegmentsFollowTheRules) {
  const Bytes p = payload(5000);
  const auto segs = segment(big_header(), p);
  ASSERT_EQ(segs.size(), 4u);  // 1392 * 3 + 824
  std::uint32_t expect_off = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const TpSegment s = seg_of(segs[i]);
    EXPECT_EQ(s.header.message_type, MessageType::kTpResponse);
    EXPECT_EQ(s.header.session_id, 7);  // all segments keep the session id
    EXPECT_EQ(s.offset, expect_off);
    EXPECT_EQ(s.more_segments, i + 1 < segs.size());
    if (s.more_segments) {
      EXPECT_EQ(s.data.size(), kTpMaxSegment);
      EXPECT_EQ(s.data.size() % 16, 0u);
    }
    // Length = 8 + 4 + segment (feat_req_someiptp_771).
    EXPECT_EQ(s.header.length, 12 + s.data.size());
    expect_off += static_cast<std::uint32_t>(s.data.size());
  }
  // Wire form of the TP header: offset in 16-byte units in the upper 28 bits.
  const Bytes& second = segs[1];
  EXPECT_EQ(load_be32(second.data() + 16), (1392u / 16u) << 4 | 1u);
  // Segment size is rounded down to a multiple of 16.
  const auto odd = segment(big_header(), payload(100), 40);
  ASSERT_EQ(odd.size(), 4u);
  EXPECT_EQ(seg_of(odd[0]).data.size(), 32u);
}

Bytes reassemble_in_order(TpReassembler& r, const std::vector<Bytes>& segs, TimePoint now) {
  Bytes out;
  for (const auto& b : segs) {
    auto o = r.on_segment(now, kPeer, seg_of(b));
    EXPECT_TRUE(o.ok());
    if (o.ok() && o->status == TpReassembler::Status::kComplete)
      out.assign(o->message.begin(), o->message.end());
  }
  return out;
}

TEST(SomeipTp, ReassemblesInOrderAndRestoresHeader) {
  const Bytes p = payload(5000);
  TpReassembler r;
  const Bytes msg = reassemble_in_order(r, segment(big_header(), p), kT0);
  ASSERT_EQ(msg.size(), 16 + p.size());
  auto m = parse_message(msg);
  ASSERT_TRUE(m.ok());
  Header expect = big_header();
  expect.length = static_cast<std::uint32_t>(8 + p.size());
  EXPECT_EQ(m->header, expect);
  EXPECT_TRUE(std::equal(p.begin(), p.end(), m->payload.begin()));
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_EQ(r.counters().completed, 1u);
}

TEST(SomeipTp, ShuffledAndDuplicatedSegments) {
  const Bytes p = payload(10000);
  auto segs = segment(big_header(), p);
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    auto order = segs;
    // duplicate a few
    order.push_back(segs[rng() % segs.size()]);
    order.push_back(segs[rng() % segs.size()]);
    std::shuffle(order.begin(), order.end(), rng);
    TpReassembler r;
    int completes = 0;
    Bytes msg;
    for (const auto& b : order) {
      auto o = r.on_segment(kT0, kPeer, seg_of(b));
      ASSERT_TRUE(o.ok());
      if (o->status == TpReassembler::Status::kComplete) {
        ++completes;
        msg.assign(o->message.begin(), o->message.end());
      }
    }
    // A duplicate after completion starts a new (incomplete) message.
    EXPECT_EQ(completes, 1);
    ASSERT_EQ(msg.size(), 16 + p.size());
    EXPECT_TRUE(std::equal(p.begin(), p.end(), msg.begin() + 16));
  }
}

TEST(SomeipTp, OverlappingAndInconsistentSegmentsAbort) {
  const Bytes p = payload(4000);
  const auto segs = segment(big_header(), p);
  {  // same offset, different bytes
    TpReassembler r;
    auto o = r.on_segment(kT0, kPeer, seg_of(segs[0]));
    ASSERT_TRUE(o.ok());
    Bytes evil = segs[0];
    evil[100] ^= 0xFF;
    auto e = r.on_segment(kT0, kPeer, seg_of(evil));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), TpError::kOverlap);
    EXPECT_EQ(r.in_progress(), 0u);
    EXPECT_EQ(r.counters().aborted, 1u);
  }
  {  // partial overlap: a segment starting inside another
    TpReassembler r;
    ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(segs[0])).ok());
    TpSegment s = seg_of(segs[1]);
    s.offset -= 16;
    auto e = r.on_segment(kT0, kPeer, s);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), TpError::kOverlap);
  }
  {  // two different ends
    TpReassembler r;
    ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(segs.back())).ok());
    TpSegment s = seg_of(segs.back());
    s.offset += 16;
    auto e = r.on_segment(kT0, kPeer, s);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), TpError::kInconsistentLength);
  }
  {  // data beyond the end
    TpReassembler r;
    ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(segs[1])).ok());
    TpSegment last = seg_of(segs.back());
    last.offset = 0;
    last.data = last.data.subspan(0, 32);
    auto e = r.on_segment(kT0, kPeer, last);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), TpError::kInconsistentLength);
  }
  {  // misaligned middle segment
    TpReassembler r;
    TpSegment s = seg_of(segs[0]);
    s.data = s.data.subspan(0, 100);
    auto e = r.on_segment(kT0, kPeer, s);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), TpError::kMisaligned);
  }
  {  // interface version changes mid-message
    TpReassembler r;
    ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(segs[0])).ok());
    TpSegment s = seg_of(segs[1]);
    s.header.interface_version = 9;
    auto e = r.on_segment(kT0, kPeer, s);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error(), TpError::kInconsistentHeader);
  }
}

TEST(SomeipTp, LimitsAndTimeouts) {
  TpLimits limits;
  limits.max_message_size = 3000;
  limits.max_concurrent = 2;
  limits.timeout = Duration::milliseconds(500);
  TpReassembler r(limits);
  const auto big = segment(big_header(), payload(4000));
  // Too large: the third segment ends past 3000.
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(big[0])).ok());
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(big[1])).ok());
  auto e = r.on_segment(kT0, kPeer, seg_of(big[2]));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), TpError::kTooLarge);
  EXPECT_EQ(r.in_progress(), 0u);

  // Concurrency: two messages in flight, the third is refused.
  Header h = big_header();
  const auto small = payload(2000);
  for (std::uint16_t client = 1; client <= 3; ++client) {
    h.client_id = client;
    auto segs = segment(h, small);
    auto o = r.on_segment(kT0, kPeer, seg_of(segs[0]));
    if (client <= 2) {
      ASSERT_TRUE(o.ok());
    } else {
      ASSERT_FALSE(o.ok());
      EXPECT_EQ(o.error(), TpError::kTooManyReassemblies);
    }
  }
  EXPECT_EQ(r.in_progress(), 2u);
  EXPECT_EQ(r.next_deadline(), kT0 + Duration::milliseconds(500));
  EXPECT_LE(r.buffered_bytes(), 2 * (16 + limits.max_message_size));
  // Timeout frees both; a late last segment then starts (and never completes) a new one.
  r.on_timer(kT0 + Duration::milliseconds(499));
  EXPECT_EQ(r.in_progress(), 2u);
  r.on_timer(kT0 + Duration::milliseconds(500));
  EXPECT_EQ(r.in_progress(), 0u);
  EXPECT_EQ(r.counters().timed_out, 2u);
  EXPECT_EQ(r.next_deadline(), TimePoint::max());
  h.client_id = 1;
  auto segs = segment(h, small);
  auto late = r.on_segment(kT0 + Duration::seconds(1), kPeer, seg_of(segs[1]));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->status, TpReassembler::Status::kIncomplete);
}

TEST(SomeipTp, NewSessionSupersedesOld) {
  TpReassembler r;
  Header h = big_header();
  const auto p = payload(3000);
  auto s1 = segment(h, p);
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(s1[0])).ok());
  h.session_id = 8;
  auto s2 = segment(h, p);
  Bytes msg = reassemble_in_order(r, s2, kT0);
  EXPECT_EQ(msg.size(), 16 + p.size());
  EXPECT_EQ(r.counters().superseded, 1u);
  // Different sources are kept apart.
  const Endpoint other{IpAddress::v4(10, 0, 0, 3), 40000, L4Proto::kUdp};
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(s1[0])).ok());
  ASSERT_TRUE(r.on_segment(kT0, other, seg_of(s1[0])).ok());
  EXPECT_EQ(r.in_progress(), 2u);
}

TEST(SomeipTp, RejectsNonTpAndEmpty) {
  TpReassembler r;
  TpSegment s;
  s.header = big_header();
  auto e = r.on_segment(kT0, kPeer, s);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), TpError::kNotTp);
  s.header.message_type = MessageType::kTpResponse;
  auto e2 = r.on_segment(kT0, kPeer, s);
  ASSERT_FALSE(e2.ok());
  EXPECT_EQ(e2.error(), TpError::kEmptySegment);
}

// Every segment the reassembler refuses is counted once under its TpError
// (TpCounters::rejected_by), and the reasons add up to `rejected`.
TEST(SomeipTp, EveryRefusalIsCountedByReason) {
  TpLimits limits;
  limits.max_message_size = 3000;
  limits.max_concurrent = 2;
  TpReassembler r(limits);
  const auto by = [&](TpError e) { return r.counters().rejected_by[static_cast<std::size_t>(e)]; };
  const auto big = segment(big_header(), payload(4000));
  TpSegment plain = seg_of(big[0]);
  plain.header.message_type = MessageType::kRequest;
  EXPECT_EQ(r.on_segment(kT0, kPeer, plain).error(), TpError::kNotTp);
  TpSegment empty = seg_of(big[0]);
  empty.data = {};
  EXPECT_EQ(r.on_segment(kT0, kPeer, empty).error(), TpError::kEmptySegment);
  TpSegment odd = seg_of(big[0]);
  odd.data = odd.data.subspan(0, 100);
  EXPECT_EQ(r.on_segment(kT0, kPeer, odd).error(), TpError::kMisaligned);
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(big[0])).ok());
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(big[1])).ok());
  EXPECT_EQ(r.on_segment(kT0, kPeer, seg_of(big[2])).error(), TpError::kTooLarge);  // past 3000
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(big[0])).ok());
  TpSegment changed = seg_of(big[1]);
  changed.header.interface_version = 9;
  EXPECT_EQ(r.on_segment(kT0, kPeer, changed).error(), TpError::kInconsistentHeader);
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(big[0])).ok());
  Bytes evil = big[0];
  evil[100] ^= 0xFF;
  EXPECT_EQ(r.on_segment(kT0, kPeer, seg_of(evil)).error(), TpError::kOverlap);
  const auto small = segment(big_header(), payload(2000));
  ASSERT_TRUE(r.on_segment(kT0, kPeer, seg_of(small.back())).ok());
  TpSegment second_end = seg_of(small.back());
  second_end.offset += 16;
  EXPECT_EQ(r.on_segment(kT0, kPeer, second_end).error(), TpError::kInconsistentLength);
  Header h = big_header();
  for (std::uint16_t client = 1; client <= 3; ++client) {
    h.client_id = client;
    auto o = r.on_segment(kT0, kPeer, seg_of(segment(h, payload(2000))[0]));
    if (client == 3) {
      EXPECT_EQ(o.error(), TpError::kTooManyReassemblies);
    } else {
      EXPECT_TRUE(o.ok());
    }
  }
  std::uint64_t sum = 0;
  for (const TpError e : {TpError::kNotTp, TpError::kEmptySegment, TpError::kMisaligned, TpError::kTooLarge,
                          TpError::kInconsistentHeader, TpError::kOverlap, TpError::kInconsistentLength,
                          TpError::kTooManyReassemblies}) {
    EXPECT_EQ(by(e), 1u) << to_string(e);
    sum += by(e);
  }
  EXPECT_EQ(by(TpError::kTruncatedTpHeader), 0u);  // parse_tp_segment's, counted by the runtime
  EXPECT_EQ(r.counters().rejected, sum);
}

}  // namespace
}  // namespace layersec::someip
