// The testbed measures what it claims: secured scenarios really protect the
// traffic (a frame tampered inside the switch is dropped, not delivered), the
// hybrid scenarios put MACsec frames on the wire, and RSA scenarios really
// establish their key with Mode B before the loop.
#include "layersec/harness/testbed.h"

#include <gtest/gtest.h>

#include "layersec/harness/scenario.h"
#include "layersec/net/frame.h"
#include "layersec/net/recorder.h"
#include "layersec/net/sim_attack.h"

namespace layersec::harness {
namespace {

TestbedOptions options(Security s, KeyDistribution k, int n = 1, bool multicast = false) {
  TestbedOptions o;
  o.security = s;
  o.keys = k;
  o.subscribers = n;
  o.multicast = multicast;
  o.seed = 42;
  return o;
}

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
  Testbed bed(options(s, KeyDistribution::kPsk, n, multicast), nullptr);
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
  Testbed bed(options(Security::kNone, KeyDistribution::kNone), nullptr);
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
  Testbed bed(options(Security::kHybrid, KeyDistribution::kPsk, 2, true), nullptr);
  WireTap tap;
  bed.segment().add_tap(&tap, net::TapPoint::kIngress);
  bed.start();
  bed.idle(Duration::milliseconds(50));
  ASSERT_TRUE(bed.run_iteration(1).completed);
  bed.segment().remove_tap(&tap);
  EXPECT_GT(tap.frames, 0u);
  EXPECT_EQ(tap.macsec, tap.frames);
}

TEST(HarnessTestbedTest, SecocPathMeasuresEveryMessageOfAnIteration) {
  Testbed bed(options(Security::kSecoc, KeyDistribution::kPsk, 2, true), nullptr);
  bed.start();
  bed.idle(Duration::milliseconds(50));
  ASSERT_TRUE(bed.run_iteration(1).completed);
  const SecocPathSample p = bed.measure_secoc_path(2);
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.operations, 1u + 3u * 2u);  // protect; per subscriber verify, protect; verify
  Testbed plain(options(Security::kNone, KeyDistribution::kNone), nullptr);
  EXPECT_FALSE(plain.measure_secoc_path(1).ok);
}

TEST(HarnessTestbedTest, RsaScenarioEstablishesItsKeyWithModeB) {
  auto creds = Credentials::create(2, 0x1234);
  Testbed bed(options(Security::kSecoc, KeyDistribution::kRsaModeB, 2, true), creds);
  bed.start();
  ASSERT_TRUE(bed.establishment_ns().has_value());
  EXPECT_GT(*bed.establishment_ns(), 0);
  bed.idle(Duration::milliseconds(50));
  EXPECT_TRUE(bed.run_iteration(1).completed);
  EXPECT_EQ(bed.security_rejections(), 0u);
  // Without credentials a Mode B testbed is refused at construction.
  EXPECT_THROW(Testbed(options(Security::kSecoc, KeyDistribution::kRsaModeB), nullptr), std::invalid_argument);
}

TEST(HarnessTestbedTest, ScenarioRunnerFillsEveryField) {
  ScenarioSpec spec;
  spec.name = "hybrid-psk-multicast";
  spec.series = "paper-scenarios";
  spec.paper_id = "3a-B";
  spec.testbed = options(Security::kHybrid, KeyDistribution::kPsk, 2, true);
  spec.iterations = 12;
  spec.warmup = 2;
  const ScenarioResult r = run_scenario(spec, nullptr);
  EXPECT_EQ(r.latency.count, 12u);
  EXPECT_EQ(r.samples_us.size(), 12u);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_EQ(r.security_rejections, 0u);
  EXPECT_LE(r.latency.p50, r.latency.p99);
  EXPECT_LE(r.latency.p99, r.latency.max);
  EXPECT_GT(r.latency.min, 0.0);
  EXPECT_EQ(r.one_way.count, 12u);
  EXPECT_EQ(r.secoc_ops_per_iteration, 7u);
  EXPECT_GT(r.secoc_path_us, 0.0);
  EXPECT_GT(r.rss_kib, 0u);
  EXPECT_GE(r.frames_on_wire, 12u * 3u);  // at least the event and 2 answers per iteration
  EXPECT_EQ(r.delivery, "multicast");
  EXPECT_EQ(r.security, "hybrid");
}

TEST(HarnessTestbedTest, PaperSpecsAreTheTenSubScenarios) {
  const auto specs = paper_scenario_specs(500, 1);
  ASSERT_EQ(specs.size(), 10u);
  const char* ids[] = {"1-A", "1-B", "2a-A", "2a-B", "2b-A", "2b-B", "3a-A", "3a-B", "3b-A", "3b-B"};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].paper_id, ids[i]);
    EXPECT_EQ(specs[i].iterations, 500);
    EXPECT_EQ(specs[i].testbed.payload_bytes, 64u);
    EXPECT_EQ(specs[i].testbed.subscribers, specs[i].testbed.multicast ? 2 : 1);
  }
}

}  // namespace
}  // namespace layersec::harness
