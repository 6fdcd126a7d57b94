// RequestTable and SessionCounter on their own: session ids (start at 1,
// skip 0, wrap, skip pending ones), capacity, answering, timeouts earliest
// first with answered requests' stale deadlines skipped, compaction at
// 2 x capacity, and drain on stop.
#include "layersec/someip/request_table.h"

#include <gtest/gtest.h>

#include <set>

namespace layersec::someip {
namespace {

TimePoint at_ms(std::int64_t ms) { return TimePoint{} + Duration::milliseconds(ms); }

PendingRequest call(std::int64_t deadline_ms, int* fired = nullptr) {
  PendingRequest p;
  p.service = 0x1234;
  p.instance = 1;
  p.method = 1;
  p.to = Endpoint{IpAddress::v4(10, 0, 0, 1), 30509, L4Proto::kUdp};
  p.deadline = at_ms(deadline_ms);
  if (fired) p.handler = [fired](const ResponseResult&) { ++*fired; };
  return p;
}

TEST(SessionCounterTest, StartsAtOneSkipsZeroAndWraps) {
  SessionCounter c;
  EXPECT_EQ(c.next(), 1);
  EXPECT_EQ(c.next(), 2);
  for (int i = 3; i < 0xFFFF; ++i) c.next();
  EXPECT_EQ(c.next(), 0xFFFF);
  EXPECT_EQ(c.next(), 1);  // never 0
}

// Nothing is allocated before the first request (a server never makes one):
// the unallocated table answers every query as an empty one, and drain of
// an idle table stops at once.
TEST(RequestTableTest, AnUnusedTableAnswersAsEmptyAndTheFirstInsertWorks) {
  RequestTable t(2);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.full());
  EXPECT_FALSE(t.contains(1));
  EXPECT_FALSE(t.contains(0xFFFF));
  EXPECT_EQ(t.find(1), nullptr);
  EXPECT_EQ(t.next_deadline(), TimePoint::max());
  EXPECT_FALSE(t.pop_expired(at_ms(1'000'000)).has_value());
  EXPECT_TRUE(t.drain().empty());
  const std::uint16_t a = t.take_session();
  t.insert(a, call(10));
  const std::uint16_t b = t.take_session();
  t.insert(b, call(20));
  EXPECT_TRUE(t.full());
  EXPECT_NE(t.find(a), nullptr);
  auto all = t.drain();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, a);
  EXPECT_EQ(all[1].first, b);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.full());
}

TEST(RequestTableTest, SessionsSkipPendingOnes) {
  RequestTable t(4);
  const std::uint16_t a = t.take_session();
  EXPECT_EQ(a, 1);
  t.insert(a, call(100));
  for (int i = 2; i <= 0xFFFF; ++i) {
    const std::uint16_t s = t.take_session();  // 2 .. 0xFFFF, none pending
    ASSERT_EQ(s, i);
  }
  // Wrapped: 1 is still pending, so the next is 2.
  EXPECT_EQ(t.take_session(), 2);
}

TEST(RequestTableTest, CapacityFindAndTake) {
  RequestTable t(2);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.full());
  t.insert(7, call(100));
  t.insert(9, call(200));
  EXPECT_TRUE(t.full());
  EXPECT_EQ(t.size(), 2u);
  ASSERT_NE(t.find(9), nullptr);
  EXPECT_EQ(t.find(9)->deadline, at_ms(200));
  EXPECT_EQ(t.find(8), nullptr);
  PendingRequest p = t.take(7);
  EXPECT_EQ(p.deadline, at_ms(100));
  EXPECT_FALSE(t.contains(7));
  EXPECT_FALSE(t.full());
  t.insert(8, call(300));  // the freed slot is reused
  EXPECT_EQ(t.size(), 2u);
}

TEST(RequestTableTest, ExpiresEarliestFirstAndSkipsAnswered) {
  RequestTable t(8);
  t.insert(1, call(300));
  t.insert(2, call(100));
  t.insert(3, call(200));
  EXPECT_EQ(t.next_deadline(), at_ms(100));
  t.take(2);  // answered: its heap entry is stale
  EXPECT_EQ(t.next_deadline(), at_ms(100));  // stale entries may wake early
  EXPECT_FALSE(t.pop_expired(at_ms(150)).has_value());
  EXPECT_EQ(t.next_deadline(), at_ms(200));
  auto e = t.pop_expired(at_ms(400));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->first, 3);
  e = t.pop_expired(at_ms(400));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->first, 1);
  EXPECT_FALSE(t.pop_expired(at_ms(400)).has_value());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.next_deadline(), TimePoint::max());
}

TEST(RequestTableTest, ReusedSessionWithNewDeadlineIsNotExpiredByTheOldEntry) {
  RequestTable t(4);
  t.insert(5, call(100));
  t.take(5);
  t.insert(5, call(500));  // same session, later deadline
  EXPECT_FALSE(t.pop_expired(at_ms(200)).has_value());
  auto e = t.pop_expired(at_ms(500));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->second.deadline, at_ms(500));
}

// Many answered requests: the heap is compacted in place and timeouts still
// come out right for the ones left pending.
TEST(RequestTableTest, CompactionKeepsPendingDeadlines) {
  RequestTable t(4);
  std::uint16_t keep = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::uint16_t s = t.take_session();
    t.insert(s, call(10'000 + i));
    if (i == 500) keep = s;
    else t.take(s);
  }
  EXPECT_EQ(t.size(), 1u);
  auto e = t.pop_expired(at_ms(20'000));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->first, keep);
  EXPECT_EQ(e->second.deadline, at_ms(10'500));
  EXPECT_FALSE(t.pop_expired(at_ms(20'000)).has_value());
}

TEST(RequestTableTest, DrainReturnsEveryPendingInSessionOrder) {
  RequestTable t(4);
  int fired = 0;
  t.insert(30, call(100, &fired));
  t.insert(10, call(200, &fired));
  t.insert(20, call(300, &fired));
  t.take(20);
  auto all = t.drain();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, 10);
  EXPECT_EQ(all[1].first, 30);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.next_deadline(), TimePoint::max());
  for (auto& [s, p] : all) p.handler(ResponseResult{});
  EXPECT_EQ(fired, 2);
}

}  // namespace
}  // namespace layersec::someip
