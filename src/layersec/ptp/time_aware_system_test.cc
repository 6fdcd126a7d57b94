// TimeAwareSystem on hand-fed messages: role checks, Signaling validation and
// application, GM Sync/Follow_Up from TX timestamps.
#include "layersec/ptp/time_aware_system.h"

#include <gtest/gtest.h>

namespace layersec::ptp {
namespace {

SystemConfig gm_config() {
  SystemConfig c;
  c.profile = Profile::kAutomotive;
  c.role = Role::kGm;
  c.clock_identity = 0x0200000000000001ULL;
  c.initial_offset_ns = 1'000'000'000'000'000'000LL;
  return c;
}

const PortIdentity kPeer{0x0200000000000002ULL, 1};

TEST(PtpTimeAwareSystem, GmSendsSyncThenFollowUpWithItsTime) {
  TimeAwareSystem gm(gm_config());
  EXPECT_TRUE(gm.is_grandmaster());
  EXPECT_EQ(gm.pdelay(0).next_deadline(), TimePoint::max());  // inhibit_delay_req
  gm.on_timer(TimePoint::from_ns(5'000));
  ASSERT_EQ(gm.output().size(), 1U);
  const Transmit sync = gm.output()[0];
  EXPECT_EQ(sync.message.header.type, MessageType::kSync);
  EXPECT_TRUE(sync.event);
  EXPECT_EQ(sync.message.header.log_interval, -3);
  gm.clear_output();
  gm.tx_timestamp(0, MessageType::kSync, sync.message.header.sequence_id, TimePoint::from_ns(7'000));
  ASSERT_EQ(gm.output().size(), 1U);
  const Message& fu = gm.output()[0].message;
  EXPECT_EQ(fu.header.type, MessageType::kFollowUp);
  EXPECT_EQ(fu.header.sequence_id, sync.message.header.sequence_id);
  EXPECT_EQ(to_ns(fu.timestamp), 1'000'000'000'000'007'000LL);
  EXPECT_EQ(fu.follow_up.cumulative_scaled_rate_offset, 0);
  EXPECT_EQ(gm.next_deadline(), TimePoint::from_ns(5'000 + 125'000'000));
}

TEST(PtpTimeAwareSystem, SignalingSetsTheSyncIntervalAndBadValuesAreCounted) {
  TimeAwareSystem gm(gm_config());
  Message sig;
  sig.header = make_header(MessageType::kSignaling, kPeer, 1, 0x7F, 0);
  sig.has_interval_request = true;
  sig.interval.time_sync_interval = 0;
  gm.receive(0, sig, TimePoint::from_ns(1));
  EXPECT_EQ(gm.log_sync_interval(0), 0);
  sig.interval.time_sync_interval = 9;  // outside -8..8 and not 126/127/-128
  gm.receive(0, sig, TimePoint::from_ns(2));
  EXPECT_EQ(gm.counters(0).drops[DropReason::kBadInterval], 1U);
  EXPECT_EQ(gm.log_sync_interval(0), 0);
  sig.interval.time_sync_interval = kIntervalInitial;
  gm.receive(0, sig, TimePoint::from_ns(3));
  EXPECT_EQ(gm.log_sync_interval(0), -3);
}

TEST(PtpTimeAwareSystem, SyncOnAMasterPortAndOwnMessagesAreDropped) {
  TimeAwareSystem gm(gm_config());
  Message sync;
  sync.header = make_header(MessageType::kSync, kPeer, 1, -3, 1);
  gm.receive(0, sync, TimePoint::from_ns(1));
  EXPECT_EQ(gm.counters(0).drops[DropReason::kWrongRole], 1U);
  sync.header.source = PortIdentity{gm_config().clock_identity, 1};
  gm.receive(0, sync, TimePoint::from_ns(2));
  EXPECT_EQ(gm.counters(0).drops[DropReason::kOwnMessage], 1U);
  Message announce;
  announce.header = make_header(MessageType::kAnnounce, kPeer, 1, 0, 1);
  gm.receive(0, announce, TimePoint::from_ns(3));
  EXPECT_EQ(gm.counters(0).drops[DropReason::kAnnounceDisabled], 1U);
  const std::uint8_t junk[10] = {0};
  gm.receive(0, ByteSpan(junk), TimePoint::from_ns(4));
  EXPECT_EQ(gm.counters(0).drops[DropReason::kMalformed], 1U);
  EXPECT_EQ(gm.counters(0).rx, 4U);
}

TEST(PtpTimeAwareSystem, ResponderAnswersPdelayReq) {
  TimeAwareSystem gm(gm_config());
  Message req;
  req.header = make_header(MessageType::kPdelayReq, kPeer, 9, 0, 0);
  gm.receive(0, req, TimePoint::from_ns(100));
  ASSERT_EQ(gm.output().size(), 1U);
  EXPECT_EQ(gm.output()[0].message.header.type, MessageType::kPdelayResp);
  EXPECT_EQ(to_ns(gm.output()[0].message.timestamp), 100);
  gm.clear_output();
  gm.tx_timestamp(0, MessageType::kPdelayResp, 9, TimePoint::from_ns(300));
  ASSERT_EQ(gm.output().size(), 1U);
  EXPECT_EQ(gm.output()[0].message.header.type, MessageType::kPdelayRespFollowUp);
  EXPECT_EQ(to_ns(gm.output()[0].message.timestamp), 300);
}

}  // namespace
}  // namespace layersec::ptp
