// The testbed measures what it claims: secured scenarios really protect the
// traffic (a frame tampered inside the switch is dropped, not delivered), the
// hybrid scenarios put MACsec frames on the wire, RSA scenarios really
// establish their key with Mode B before the loop, and the two timing models
// keep the relations that hold by construction (no speed thresholds).
#include "layersec/harness/testbed.h"

#include <gtest/gtest.h>

#include "layersec/harness/testbed_test_support.h"

#include "layersec/net/frame.h"
#include "layersec/net/recorder.h"
#include "layersec/net/sim_attack.h"

namespace layersec::harness {
namespace {

// Flips one payload bit of the publisher's event frames inside the switch
// (after the port's MACsec validation, before it is protected again for the
// egress link) and fixes the UDP checksum, so only SecOC can notice.
struct Tamper {
  explicit Tamper(Testbed& bed, bool multicast)
      : hook({1.0, 42 + 16, 1, true}, 99, [&bed, multicast](ByteSpan frame, net::PortId ingress) {
          if (ingress != bed.publisher_port()) return false;
          const auto m = multicast ? net::match_udp_dst_port(30510) : net::match_udp_dst_port(Testbed::subscriber_port());
          return m(frame, ingress);
        }) {}
  net::BitFlipHook hook;
};

void expect_tamper_rejected(Security s, bool multicast) {
  const int n = multicast ? 2 : 1;
  Testbed bed(test_options(s, KeyDistribution::kPsk, n, multicast), nullptr);
  bed.start();
  bed.idle(Duration::milliseconds(50));
  ASSERT_TRUE(bed.run_iteration(1).completed);
  EXPECT_EQ(bed.security_rejections(), 0u);
  const auto delivered = bed.notifications_delivered();
  Tamper t(bed, multicast);
  bed.segment().add_hook(&t.hook);
  bed.idle(Duration::milliseconds(50));
  const IterationSample s2 = bed.run_iteration(2, Duration::milliseconds(100));
  bed.segment().remove_hook(&t.hook);
  EXPECT_GE(t.hook.modified(), 1u);
  EXPECT_FALSE(s2.completed);
  EXPECT_EQ(bed.notifications_delivered(), delivered) << "a tampered event reached the application";
  EXPECT_GE(bed.security_rejections(), static_cast<std::uint64_t>(n));
  // And the loop recovers with the next genuine event.
  bed.idle(Duration::milliseconds(50));
  EXPECT_TRUE(bed.run_iteration(3).completed);
}

TEST(HarnessTestbedTest, SecocRejectsATamperedEvent) { expect_tamper_rejected(Security::kSecoc, false); }
TEST(HarnessTestbedTest, HybridRejectsATamperedMulticastEvent) { expect_tamper_rejected(Security::kHybrid, true); }

TEST(HarnessTestbedTest, UnsecuredDeliversATamperedEvent) {
  // The control: without SecOC the same tampering goes through unnoticed.
  Testbed bed(test_options(Security::kNone, KeyDistribution::kNone), nullptr);
  bed.start();
  bed.idle(Duration::milliseconds(50));
  ASSERT_TRUE(bed.run_iteration(1).completed);
  const auto delivered = bed.notifications_delivered();
  Tamper t(bed, false);
  bed.segment().add_hook(&t.hook);
  bed.idle(Duration::milliseconds(50));
  (void)bed.run_iteration(2, Duration::milliseconds(100));
  bed.segment().remove_hook(&t.hook);
  EXPECT_GE(t.hook.modified(), 1u);
  EXPECT_EQ(bed.notifications_delivered(), delivered + 1);
  EXPECT_EQ(bed.security_rejections(), 0u);
}

class WireTap final : public net::FrameRecorder {
 public:
  void record(TimePoint, ByteSpan frame) override {
    ++frames;
    if (frame.size() >= 14 && frame[12] == 0x88 && frame[13] == 0xE5) ++macsec;
  }
  std::uint64_t frames = 0;
  std::uint64_t macsec = 0;
};

TEST(HarnessTestbedTest, HybridPutsOnlyMacsecFramesOnTheWire) {
  Testbed bed(test_options(Security::kHybrid, KeyDistribution::kPsk, 2, true), nullptr);
  WireTap tap;
  bed.segment().add_tap(&tap, net::TapPoint::kIngress);
  bed.start();
  bed.idle(Duration::milliseconds(50));
  ASSERT_TRUE(bed.run_iteration(1).completed);
  bed.segment().remove_tap(&tap);
  EXPECT_GT(tap.frames, 0u);
  EXPECT_EQ(tap.macsec, tap.frames);
}

TEST(HarnessTestbedTest, SecocCountersTimeEveryCallOfASecuredIteration) {
  Testbed bed(test_options(Security::kSecoc, KeyDistribution::kPsk, 2, true), nullptr);
  bed.start();
  bed.idle(Duration::milliseconds(50));
  const IterationSample s = bed.run_iteration(1);
  ASSERT_TRUE(s.completed);
  EXPECT_EQ(s.secoc_ops, 1u + 3u * 2u);  // protect; per subscriber verify, protect; verify
  EXPECT_GT(s.secoc_ns, 0);
  EXPECT_LE(s.secoc_ns, s.round_trip_ns);  // inside the measured window
  Testbed plain(test_options(Security::kNone, KeyDistribution::kNone, 2, true), nullptr);
  plain.start();
  plain.idle(Duration::milliseconds(50));
  const IterationSample p = plain.run_iteration(1);
  ASSERT_TRUE(p.completed);
  EXPECT_EQ(p.secoc_ops, 0u);
  EXPECT_EQ(p.secoc_ns, 0);
}

TEST(HarnessTestbedTest, ParallelModelIsPositiveAndBoundedBySerial) {
  // By construction (the same measured pieces, overlapped only where they
  // are independent), per iteration: 0 < model <= serial.
  for (bool multicast : {false, true}) {
    const int n = multicast ? 4 : 1;
    Testbed bed(test_options(Security::kHybrid, KeyDistribution::kPsk, n, multicast), nullptr);
    bed.start();
    for (std::uint32_t seq = 1; seq <= 5; ++seq) {
      bed.idle(Duration::milliseconds(50));
      const IterationSample s = bed.run_iteration(seq);
      ASSERT_TRUE(s.completed);
      EXPECT_GT(s.model_round_trip_ns, 0);
      EXPECT_GT(s.model_one_way_ns, 0);
      EXPECT_LE(s.model_round_trip_ns, s.round_trip_ns);
      EXPECT_LE(s.model_one_way_ns, s.one_way_ns);
      EXPECT_LT(s.model_one_way_ns, s.model_round_trip_ns);  // the answers come after the events
    }
  }
}

TEST(HarnessTestbedTest, RsaScenarioEstablishesItsKeyWithModeB) {
  auto creds = Credentials::create(2, 0x1234);
  Testbed bed(test_options(Security::kSecoc, KeyDistribution::kRsaModeB, 2, true), creds);
  bed.start();
  ASSERT_TRUE(bed.establishment_ns().has_value());
  EXPECT_GT(*bed.establishment_ns(), 0);
  bed.idle(Duration::milliseconds(50));
  EXPECT_TRUE(bed.run_iteration(1).completed);
  EXPECT_EQ(bed.security_rejections(), 0u);
  // Without credentials a Mode B testbed is refused at construction.
  EXPECT_THROW(Testbed(test_options(Security::kSecoc, KeyDistribution::kRsaModeB), nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace layersec::harness
