// Peer delay: the 802.1AS-2020 §11.2.19 formulas on exact timestamps from a
// responder whose clock runs 100 ppm fast, asCapable rules, drops by reason.
#include "layersec/ptp/peer_delay.h"

#include <gtest/gtest.h>

#include <cmath>

namespace layersec::ptp {
namespace {

const PortIdentity kSelf{0x0200000000000001ULL, 1};
const PortIdentity kPeer{0x0200000000000002ULL, 1};

struct Exchange {
  std::int64_t t1, t2, t3, t4;
};

// Responder clock R(t) = 5e9 + t·(1 + 1e-4); link delay d; turnaround 10 µs.
Exchange exchange_at(std::int64_t t1, std::int64_t d) {
  auto R = [](std::int64_t t) { return 5'000'000'000LL + t + static_cast<std::int64_t>(std::llround(t * 1e-4)); };
  return Exchange{t1, R(t1 + d), R(t1 + d + 10'000), t1 + 2 * d + 10'000};
}

Message resp_for(std::uint16_t seq, std::int64_t t2) {
  Message m;
  m.header = make_header(MessageType::kPdelayResp, kPeer, seq, 0x7F, 1);
  m.timestamp = from_ns(t2);
  m.port = kSelf;
  return m;
}

Message fu_for(std::uint16_t seq, std::int64_t t3) {
  Message m;
  m.header = make_header(MessageType::kPdelayRespFollowUp, kPeer, seq, 0x7F, 1);
  m.timestamp = from_ns(t3);
  m.port = kSelf;
  return m;
}

// Runs one complete exchange at local time t1 (the timer is due then).
void run_exchange(PdelayInitiator& in, std::int64_t t1, std::int64_t d) {
  auto req = in.on_timer(TimePoint::from_ns(t1));
  ASSERT_TRUE(req.has_value());
  const std::uint16_t seq = req->header.sequence_id;
  const Exchange e = exchange_at(t1, d);
  in.on_req_sent(seq, TimePoint::from_ns(e.t1));
  ASSERT_FALSE(in.on_resp(resp_for(seq, e.t2), TimePoint::from_ns(e.t4)).has_value());
  ASSERT_FALSE(in.on_resp_follow_up(fu_for(seq, e.t3)).has_value());
}

PdelayConfig config() {
  PdelayConfig c;
  c.neighbor_prop_delay_thresh_ns = 1000;
  return c;
}

TEST(PtpPeerDelay, MeanLinkDelayAndNeighborRateRatio) {
  PdelayInitiator in(kSelf, config());
  EXPECT_FALSE(in.as_capable());
  for (int k = 1; k <= 20; ++k) run_exchange(in, k * 1'000'000'000LL, 800);
  ASSERT_TRUE(in.rate_ratio_valid());
  EXPECT_NEAR(in.neighbor_rate_ratio(), 1.0001, 1e-9);
  // The delay is in the responder's time base: 800 ns · 1.0001.
  EXPECT_NEAR(in.mean_link_delay_ns(), 800.08, 0.5);
  EXPECT_TRUE(in.as_capable());
  EXPECT_EQ(in.exchanges(), 20U);
  EXPECT_EQ(in.drops().total(), 0U);
}

TEST(PtpPeerDelay, CorrectionFieldsJoinT3) {
  PdelayInitiator in(kSelf, config());
  for (int k = 1; k <= 12; ++k) {
    auto req = in.on_timer(TimePoint::from_ns(k * 1'000'000'000LL));
    ASSERT_TRUE(req.has_value());
    const auto seq = req->header.sequence_id;
    const Exchange e = exchange_at(k * 1'000'000'000LL, 500);
    in.on_req_sent(seq, TimePoint::from_ns(e.t1));
    // The responder reports t3 - 96 ns and puts 96 ns (split over both
    // messages) into the correction fields: t3c is unchanged.
    Message r = resp_for(seq, e.t2);
    r.header.correction = 32 << 16;
    Message f = fu_for(seq, e.t3 - 96);
    f.header.correction = 64 << 16;
    ASSERT_FALSE(in.on_resp(r, TimePoint::from_ns(e.t4)).has_value());
    ASSERT_FALSE(in.on_resp_follow_up(f).has_value());
  }
  EXPECT_NEAR(in.mean_link_delay_ns(), 500.05, 0.5);
}

TEST(PtpPeerDelay, AsCapableRules) {
  {
    PdelayInitiator in(kSelf, config());
    for (int k = 1; k <= 5; ++k) run_exchange(in, k * 1'000'000'000LL, 1500);  // above the 1000 ns threshold
    EXPECT_FALSE(in.as_capable());
  }
  {
    PdelayInitiator in(kSelf, config());
    for (int k = 1; k <= 5; ++k) run_exchange(in, k * 1'000'000'000LL, 300);
    EXPECT_TRUE(in.as_capable());
    // Four requests without an answer: more than allowedLostResponses (3).
    for (int k = 6; k <= 10; ++k) ASSERT_TRUE(in.on_timer(TimePoint::from_ns(k * 1'000'000'000LL)).has_value());
    EXPECT_EQ(in.lost_responses(), 4U);
    EXPECT_FALSE(in.as_capable());
    run_exchange(in, 11'000'000'000LL, 300);
    EXPECT_TRUE(in.as_capable());
  }
  {
    PdelayConfig c = config();
    c.as_capable_from_config = true;  // automotive
    PdelayInitiator in(kSelf, c);
    EXPECT_TRUE(in.as_capable());
  }
  {
    PdelayConfig c = config();
    c.enabled = false;  // inhibit_delay_req
    PdelayInitiator in(kSelf, c);
    EXPECT_EQ(in.next_deadline(), TimePoint::max());
    EXPECT_FALSE(in.on_timer(TimePoint::from_ns(1)).has_value());
  }
}

TEST(PtpPeerDelay, RefusedResponsesAreCountedAndChangeNothing) {
  PdelayInitiator in(kSelf, config());
  for (int k = 1; k <= 3; ++k) run_exchange(in, k * 1'000'000'000LL, 400);
  const double delay = in.mean_link_delay_ns();
  auto req = in.on_timer(TimePoint::from_ns(4'000'000'000LL));
  ASSERT_TRUE(req.has_value());
  const auto seq = req->header.sequence_id;
  in.on_req_sent(seq, TimePoint::from_ns(4'000'000'000LL));
  EXPECT_EQ(in.on_resp(resp_for(static_cast<std::uint16_t>(seq + 1), 1), TimePoint::from_ns(4'000'100'000LL)),
            DropReason::kWrongSequence);
  Message other = resp_for(seq, 1);
  other.port = kPeer;  // an answer to someone else's request
  EXPECT_EQ(in.on_resp(other, TimePoint::from_ns(4'000'100'000LL)), DropReason::kWrongSequence);
  Message neg = resp_for(seq, 1);
  neg.header.correction = -1;
  EXPECT_EQ(in.on_resp(neg, TimePoint::from_ns(4'000'100'000LL)), DropReason::kBadCorrection);
  Message own = resp_for(seq, 1);
  own.header.source = kSelf;
  EXPECT_EQ(in.on_resp(own, TimePoint::from_ns(4'000'100'000LL)), DropReason::kOwnMessage);
  EXPECT_EQ(in.on_resp_follow_up(fu_for(seq, 1)), DropReason::kWrongSequence);  // no response yet
  EXPECT_EQ(in.drops()[DropReason::kWrongSequence], 3U);
  EXPECT_EQ(in.drops()[DropReason::kBadCorrection], 1U);
  EXPECT_EQ(in.drops()[DropReason::kOwnMessage], 1U);
  EXPECT_EQ(in.mean_link_delay_ns(), delay);
  EXPECT_EQ(in.exchanges(), 3U);
}

TEST(PtpPeerDelay, ResponderAnswersWithT2ThenT3) {
  PdelayResponder r(kPeer, 1);
  Message req;
  req.header = make_header(MessageType::kPdelayReq, kSelf, 77, 0, 1);
  const Message resp = r.on_req(req, TimePoint::from_ns(1'500'000'123LL));
  EXPECT_EQ(resp.header.type, MessageType::kPdelayResp);
  EXPECT_EQ(resp.header.sequence_id, 77);
  EXPECT_EQ(resp.port, kSelf);
  EXPECT_EQ(to_ns(resp.timestamp), 1'500'000'123LL);
  EXPECT_FALSE(r.on_resp_sent(78, TimePoint::from_ns(1'500'010'000LL)).has_value());
  auto fu = r.on_resp_sent(77, TimePoint::from_ns(1'500'010'000LL));
  ASSERT_TRUE(fu.has_value());
  EXPECT_EQ(fu->header.type, MessageType::kPdelayRespFollowUp);
  EXPECT_EQ(to_ns(fu->timestamp), 1'500'010'000LL);
  EXPECT_EQ(fu->port, kSelf);
  EXPECT_FALSE(r.on_resp_sent(77, TimePoint::from_ns(1'500'010'000LL)).has_value());  // only once
}

TEST(PtpPeerDelay, IntervalOf) {
  EXPECT_EQ(interval_of(0), Duration::seconds(1));
  EXPECT_EQ(interval_of(-3), Duration::milliseconds(125));
  EXPECT_EQ(interval_of(2), Duration::seconds(4));
}

}  // namespace
}  // namespace layersec::ptp
