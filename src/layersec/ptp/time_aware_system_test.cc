// TimeAwareSystem on hand-fed messages: role checks, Signaling validation and
// application, GM Sync/Follow_Up from TX timestamps, a slave's holdover.
#include "layersec/ptp/time_aware_system.h"

#include <cmath>

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


// A GM whose clock runs 10 ppm fast against the slave's local time line, its
// Sync/Follow_Up fed to a slave by hand (no path delay).
struct HandFedGm {
  static constexpr std::int64_t kT0 = 1'000'000'000;
  static constexpr std::int64_t kGm0 = 1'000'000'000'000'000'000LL;
  static constexpr std::int64_t kInterval = 125'000'000;
  std::uint16_t seq = 0;
  PortIdentity source = kPeer;
  static std::int64_t gm_at(std::int64_t local) { return kGm0 + (local - kT0) + (local - kT0) / 100'000; }
  // A Sync received at `local`; its Follow_Up's origin `error_ns` off the GM's time.
  void feed(TimeAwareSystem& slave, std::int64_t local, std::int64_t error_ns = 0) {
    Message sync;
    sync.header = make_header(MessageType::kSync, source, ++seq, -3, 1);
    slave.receive(0, sync, TimePoint::from_ns(local));
    Message fu;
    fu.header = make_header(MessageType::kFollowUp, source, seq, -3, 1);
    fu.timestamp = from_ns(gm_at(local) + error_ns);
    slave.receive(0, fu, TimePoint::from_ns(local));
    slave.clear_output();
  }
};

TEST(PtpTimeAwareSystem, HoldoverKeepsTheServosFrequencyEstimateNotItsLastOutput) {
  SystemConfig c;
  c.profile = Profile::kAutomotive;
  c.role = Role::kSlave;
  c.clock_identity = 0x0200000000000003ULL;
  c.initial_offset_ns = HandFedGm::kGm0 - HandFedGm::kT0 + 30'000;  // 30 us off: one step
  TimeAwareSystem slave(c);
  HandFedGm gm;
  std::int64_t t = HandFedGm::kT0;
  for (int i = 0; i < 400; ++i, t += HandFedGm::kInterval) gm.feed(slave, t);
  ASSERT_STREQ(slave.state(), "slave");
  EXPECT_NEAR(slave.clock().frequency_ppb(), 10'000, 50);
  // One noisy sample (+4 us): the PI output answers it with its
  // proportional term (kp 1.31 at 8 Syncs/s: about -5.2 ppm).
  const std::int64_t last = t;
  gm.feed(slave, last, -4'000);
  EXPECT_GT(std::fabs(slave.clock().frequency_ppb() - 10'000), 3'000);
  // Then no Sync for 3 intervals (the GM was killed): syncReceiptTimeout.
  slave.on_timer(TimePoint::from_ns(last + 3 * HandFedGm::kInterval));
  EXPECT_STREQ(slave.state(), "uncalibrated");
  // Holdover runs at the integrator's estimate (off only by ki's share of
  // the noisy sample, 0.13 * 4 us), not at the last output.
  EXPECT_NEAR(slave.clock().frequency_ppb(), 10'000, 1'000);
  // The GM is back 2 s later: the slave's first offset is what holdover
  // lost: about 2.2 us in the 375 ms before the timeout plus 1 us after it
  // (at the last output it would be 5.7 ppm for 2.375 s: 13.6 us).
  gm.feed(slave, last + 2'375'000'000);
  ASSERT_TRUE(slave.status().valid);
  EXPECT_LT(std::fabs(slave.status().offset_ns), 5'000);
  // It relocks without a step and follows again.
  t = last + 2'375'000'000;
  for (int i = 0; i < 80; ++i) gm.feed(slave, t += HandFedGm::kInterval);
  EXPECT_STREQ(slave.state(), "slave");
  EXPECT_LT(std::fabs(slave.status().offset_ns), 100);
  EXPECT_NEAR(slave.clock().frequency_ppb(), 10'000, 50);
}


// Automotive (static roles): the Sync source a slave follows stays its source
// through a syncReceiptTimeout. Another source's Syncs during the silence
// (an attacker's, 1 s ahead) are dropped as second_gm and never move the
// clock; the GM's Syncs are taken again when they return. Before, the
// timeout forgot the source and the first Sync after it, whoever sent it,
// became the source (cli.ptp_relay_netns, a relay stalled under load).
TEST(PtpTimeAwareSystem, AutomotiveSlaveKeepsItsSourceThroughASyncTimeout) {
  SystemConfig c;
  c.profile = Profile::kAutomotive;
  c.role = Role::kSlave;
  c.clock_identity = 0x0200000000000003ULL;
  c.initial_offset_ns = HandFedGm::kGm0 - HandFedGm::kT0 + 30'000;
  TimeAwareSystem slave(c);
  HandFedGm gm;
  std::int64_t t = HandFedGm::kT0;
  for (int i = 0; i < 200; ++i, t += HandFedGm::kInterval) gm.feed(slave, t);
  ASSERT_STREQ(slave.state(), "slave");
  ASSERT_EQ(slave.grandmaster_identity(), kPeer.clock_identity);
  slave.on_timer(TimePoint::from_ns(t + 3 * HandFedGm::kInterval));
  EXPECT_STREQ(slave.state(), "uncalibrated");
  const std::int64_t probe = t + 100 * HandFedGm::kInterval;  // the clock's mapping, read at one instant
  const std::int64_t synced_before = slave.clock().to_synced(probe);
  const std::uint64_t dropped = slave.counters(0).drops[DropReason::kSecondGm];
  HandFedGm attacker;
  attacker.source = PortIdentity{0x0200000000000BADULL, 1};
  t += 4 * HandFedGm::kInterval;
  for (int i = 0; i < 40; ++i, t += HandFedGm::kInterval) attacker.feed(slave, t, 1'000'000'000);
  EXPECT_EQ(slave.counters(0).drops[DropReason::kSecondGm] - dropped, 40U);
  EXPECT_EQ(slave.clock().to_synced(probe), synced_before);  // no step, no frequency change
  EXPECT_EQ(slave.grandmaster_identity(), kPeer.clock_identity);
  EXPECT_FALSE(slave.status().valid);
  for (int i = 0; i < 80; ++i, t += HandFedGm::kInterval) gm.feed(slave, t);
  EXPECT_STREQ(slave.state(), "slave");
  EXPECT_LT(std::fabs(slave.status().offset_ns), 1'000);
}

}  // namespace
}  // namespace layersec::ptp
