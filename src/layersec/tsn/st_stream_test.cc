#include "layersec/tsn/st_stream.h"

#include <vector>

#include <gtest/gtest.h>

#include "layersec/tsn/pass_through.h"

namespace layersec::tsn {
namespace {

constexpr std::int64_t kUs = 1000;

// The bench's schedule: ST (class 1) 600 us, then BE (class 0) 400 us.
GateControlList bench_gcl() {
  GateControlList g;
  g.entries = {{0x02, 600 * kUs}, {0x01, 400 * kUs}};
  return g;
}

// 1000-byte datagrams in tagged frames (1046 octets as queued), 42 Mbit/s
// offered (0.7 of the 60 % share of a 100 Mbit/s port): 42,000 bits per cycle.
StPlanInputs bench_inputs(std::size_t expansion = 0) {
  StPlanInputs in;
  in.traffic_class = 1;
  in.payload_bytes = 1000;
  in.frame_bytes = 1046;
  in.expansion_bytes = expansion;
  in.link_bps = 100'000'000;
  in.offered_bits_per_cycle = 42'000;
  return in;
}

TEST(StStream, PlanSpreadsTheCyclesFramesOverTheWindow) {
  auto p = plan_st_releases(bench_gcl(), bench_inputs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->cycle_ns, 1000 * kUs);
  EXPECT_EQ(p->window_open_ns, 0);
  EXPECT_EQ(p->window_len_ns, 600 * kUs);
  // (1046 + FCS 4 + preamble 8 + gap 12) octets at 100 Mbit/s.
  EXPECT_EQ(p->wire_ns, 85'600);
  EXPECT_EQ(p->max_frames_per_cycle, 6u);  // ceil(42000 / 8000)
  EXPECT_EQ(p->spacing_ns, (600 * kUs - 85'600) / 6);
  EXPECT_GE(p->spacing_ns, p->wire_ns);
  EXPECT_EQ(p->planned_max_ahead, 0u);
  EXPECT_EQ(p->planned_max_wait_ns, 0);
  EXPECT_EQ(p->tail_slack_ns, 600 * kUs - (5 * p->spacing_ns + p->wire_ns));
  EXPECT_GT(p->tail_slack_ns, 0);
}

TEST(StStream, FramesPerCycleKeepTheOfferedRateExactly) {
  auto p = plan_st_releases(bench_gcl(), bench_inputs());
  ASSERT_TRUE(p);
  // 5.25 frames per cycle: 5, 5, 5, 6, then again.
  const std::vector<std::uint64_t> want{5, 5, 5, 6, 5, 5, 5, 6};
  for (std::uint64_t c = 0; c < want.size(); ++c) EXPECT_EQ(frames_in_cycle(*p, c), want[c]) << "cycle " << c;
  EXPECT_EQ(frames_before_cycle(*p, 1000), 5250u);
  std::uint64_t sum = 0;
  for (std::uint64_t c = 0; c < 1000; ++c) {
    const std::uint64_t n = frames_in_cycle(*p, c);
    EXPECT_LE(n, p->max_frames_per_cycle);
    sum += n;
  }
  EXPECT_EQ(sum, 5250u);
}

TEST(StStream, ReleasesArePhaseLockedToTheWindow) {
  GateControlList g;
  g.entries = {{0x01, 250 * kUs}, {0x02, 600 * kUs}, {0x01, 150 * kUs}};  // ST window at 250 us
  auto p = plan_st_releases(g, bench_inputs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->window_open_ns, 250 * kUs);
  const std::int64_t cycle0 = 7'000 * kUs;  // a cycle boundary (base time 0)
  for (std::uint64_t c = 0; c < 8; ++c) {
    std::int64_t prev = INT64_MIN;
    for (std::uint64_t k = 0; k < frames_in_cycle(*p, c); ++k) {
      const std::int64_t t = release_ns(*p, cycle0, c, k);
      const std::int64_t in_cycle = (t - cycle0) % p->cycle_ns;
      EXPECT_EQ((t - cycle0) / p->cycle_ns, static_cast<std::int64_t>(c));
      EXPECT_GE(in_cycle, 250 * kUs);                       // not before the gate opens
      EXPECT_LE(in_cycle + p->wire_ns, 850 * kUs);          // off the wire before it closes
      if (prev != INT64_MIN) {
        EXPECT_GE(t - prev, p->wire_ns);  // the previous frame has left
      }
      prev = t;
    }
  }
}

TEST(StStream, WindowAcrossTheCycleBoundaryStartsWhereTheGateOpens) {
  GateControlList g;
  g.entries = {{0x02, 100 * kUs}, {0x01, 400 * kUs}, {0x02, 500 * kUs}};
  auto p = plan_st_releases(g, bench_inputs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->window_open_ns, 500 * kUs);
  EXPECT_EQ(p->window_len_ns, 600 * kUs);  // 500 to the boundary + 100 after it
}

TEST(StStream, SpacingNeverBelowTheWireTimeWithMacsec) {
  // 32 octets of SecTAG and ICV: 88.16 us on the wire, more than the even
  // spread (85.3 us): the spacing is the wire time, still nothing ahead.
  auto p = plan_st_releases(bench_gcl(), bench_inputs(32));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->wire_ns, 88'160);
  EXPECT_EQ(p->spacing_ns, p->wire_ns);
  EXPECT_EQ(p->planned_max_ahead, 0u);
  EXPECT_EQ(p->tail_slack_ns, 600 * kUs - 6 * 88'160);
}

TEST(StStream, OpenGatesGiveTheWholeCycle) {
  GateControlList g;
  g.entries = {{0x03, 1000 * kUs}};
  auto p = plan_st_releases(g, bench_inputs());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->window_open_ns, 0);
  EXPECT_EQ(p->window_len_ns, 1000 * kUs);
}

TEST(StStream, PlanErrorsNameTheProblem) {
  StPlanError e{};
  std::string why;
  auto in = bench_inputs();
  in.offered_bits_per_cycle = 8 * 8000;  // 8 frames: 8 x 85.6 us > 600 us
  EXPECT_FALSE(plan_st_releases(bench_gcl(), in, &e, &why));
  EXPECT_EQ(e, StPlanError::kDoesNotFit);
  EXPECT_NE(why.find("600000"), std::string::npos) << why;
  in = bench_inputs();
  in.traffic_class = 2;
  EXPECT_FALSE(plan_st_releases(bench_gcl(), in, &e, &why));
  EXPECT_EQ(e, StPlanError::kNoWindow);
  in = bench_inputs();
  in.offered_bits_per_cycle = 0;
  EXPECT_FALSE(plan_st_releases(bench_gcl(), in, &e, &why));
  EXPECT_EQ(e, StPlanError::kNoLoad);
  EXPECT_STREQ(to_string(StPlanError::kDoesNotFit), "does_not_fit");
}

std::vector<std::uint8_t> datagram(std::uint32_t run, std::uint64_t seq, std::int64_t sent, std::size_t size = 100) {
  std::vector<std::uint8_t> b(size);
  EXPECT_TRUE(encode_st_datagram({run, seq, sent}, MutableByteSpan(b.data(), b.size())));
  return b;
}

TEST(StStream, ReceiverSamplesEveryFrameAndCountsLoss) {
  StReceiver r(100, 7, 10);
  for (std::uint64_t s : {0, 1, 2, 4}) {
    auto d = datagram(7, s, 1000 * static_cast<std::int64_t>(s));
    EXPECT_FALSE(r.on_datagram(d, 1000 * static_cast<std::int64_t>(s) + 50'000));
  }
  EXPECT_EQ(r.counters().received, 4u);
  EXPECT_EQ(r.latency_us().size(), 4u);
  for (double l : r.latency_us()) EXPECT_DOUBLE_EQ(l, 50.0);
  EXPECT_DOUBLE_EQ(r.jitter_ms(), 0.0);  // constant transit
  EXPECT_EQ(r.lost(5), 1u);               // seq 3
  EXPECT_EQ(r.lost(4), 1u);
  EXPECT_EQ(r.counters().reordered, 0u);
  EXPECT_EQ(r.counters().highest_seq_plus1, 5u);
}

TEST(StStream, ReceiverCountsDuplicatesAndReorderingWithoutSampling) {
  StReceiver r(100, 7, 10);
  EXPECT_FALSE(r.on_datagram(datagram(7, 5, 0), 10));
  EXPECT_FALSE(r.on_datagram(datagram(7, 3, 0), 20));  // late: reordered
  EXPECT_FALSE(r.on_datagram(datagram(7, 5, 0), 30));  // duplicate
  EXPECT_EQ(r.counters().received, 2u);
  EXPECT_EQ(r.counters().duplicates, 1u);
  EXPECT_EQ(r.counters().reordered, 1u);
  EXPECT_EQ(r.latency_us().size(), 2u);
  EXPECT_EQ(r.sample_seqs(), (std::vector<std::uint64_t>{5, 3}));
  EXPECT_EQ(r.lost(6), 4u);  // 0, 1, 2, 4
  EXPECT_EQ(r.refused_total(), 0u);
}

TEST(StStream, ReceiverRefusesWhatIsNotTheGenerators) {
  StReceiver r(100, 7, 10);
  const auto expect_refused = [&](const std::vector<std::uint8_t>& d, StRefusal why, std::int64_t now = 1'000) {
    auto got = r.on_datagram(d, now);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, why) << to_string(why);
  };
  expect_refused(datagram(7, 1, 0, 99), StRefusal::kSize);
  expect_refused(std::vector<std::uint8_t>(100, 0), StRefusal::kMagic);
  expect_refused(datagram(8, 1, 0), StRefusal::kRunId);
  expect_refused(datagram(7, 10, 0), StRefusal::kSeqRange);
  expect_refused(datagram(7, UINT64_MAX, 0), StRefusal::kSeqRange);
  auto padded = datagram(7, 1, 0);
  padded.back() = 1;
  expect_refused(padded, StRefusal::kPadding);
  expect_refused(datagram(7, 1, 5'000), StRefusal::kBadTime);
  expect_refused(datagram(7, 1, INT64_MIN), StRefusal::kBadTime);  // now - sent would overflow
  EXPECT_EQ(r.refused_total(), 8u);
  EXPECT_EQ(r.counters().refused[static_cast<int>(StRefusal::kSeqRange)], 2u);
  // Nothing else changed: no sample, no sequence number taken.
  EXPECT_EQ(r.counters().received, 0u);
  EXPECT_TRUE(r.latency_us().empty());
  EXPECT_FALSE(r.on_datagram(datagram(7, 1, 0), 1'000));
  EXPECT_EQ(r.counters().received, 1u);
}

TEST(StStream, JitterIsRfc3550) {
  // Transit alternates 0 and 1600 ns: J += (|D| - J) / 16 after the first.
  StReceiver r(100, 1, 100);
  double j = 0;
  for (std::uint64_t s = 0; s < 40; ++s) {
    const std::int64_t transit = s % 2 == 0 ? 0 : 1600;
    EXPECT_FALSE(r.on_datagram(datagram(1, s, 10'000 * static_cast<std::int64_t>(s)),
                               10'000 * static_cast<std::int64_t>(s) + transit));
    if (s > 0) j += (1600.0 - j) / 16.0;
  }
  EXPECT_NEAR(r.jitter_ms(), j / 1e6, 1e-12);
}

TEST(StStream, EncodeNeedsRoomForTheHeader) {
  std::vector<std::uint8_t> b(kStHeaderBytes - 1);
  EXPECT_FALSE(encode_st_datagram({1, 2, 3}, MutableByteSpan(b.data(), b.size())));
}

TEST(PassThroughTimes, RecordsOnlyTheTimedClass) {
  PassThroughTimes t(1);
  t.record(PassThroughTimes::Leg::kEgressIn, 1, 2'500);
  t.record(PassThroughTimes::Leg::kEgressIn, 0, 9'000);
  t.record(PassThroughTimes::Leg::kIngress, -1, 9'000);
  t.record(PassThroughTimes::Leg::kEgressOut, 1, -5);  // a clock read out of order counts as 0
  ASSERT_EQ(t.us(PassThroughTimes::Leg::kEgressIn).size(), 1u);
  EXPECT_DOUBLE_EQ(t.us(PassThroughTimes::Leg::kEgressIn)[0], 2.5);
  EXPECT_TRUE(t.us(PassThroughTimes::Leg::kIngress).empty());
  ASSERT_EQ(t.us(PassThroughTimes::Leg::kEgressOut).size(), 1u);
  EXPECT_DOUBLE_EQ(t.us(PassThroughTimes::Leg::kEgressOut)[0], 0.0);
}

}  // namespace
}  // namespace layersec::tsn
