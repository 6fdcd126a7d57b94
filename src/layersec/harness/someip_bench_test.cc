#include "layersec/harness/someip_bench.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layersec/harness/dtls_fanout.h"
#include "layersec/harness/someip_bench_report.h"
#include "layersec/net/netns.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"

namespace layersec::harness {
namespace {

SomeipBenchOptions tiny(std::size_t iterations) {
  SomeipBenchOptions o;
  o.iterations = iterations;
  o.warmup = 2;
  return o;
}

std::vector<std::uint8_t> payload(std::uint64_t seq) {
  std::vector<std::uint8_t> p(64);
  fill_payload(seq, p);
  return p;
}

TEST(SomeipSimBed, SecuredRowsProtectAndVerifyEveryMessage) {
  SomeipSimBed bed;
  bed.start();
  const auto rr = measure_someip_row(bed, "rr-secoc", "sim", tiny(20));
  EXPECT_EQ(rr.latency.count, 20u);
  EXPECT_EQ(rr.timeouts, 0u);
  // Request protected by the client and verified by the server, response
  // protected by the server and verified by the client.
  EXPECT_EQ(rr.secoc_protected, 40u);
  EXPECT_EQ(rr.secoc_verified, 40u);
  EXPECT_EQ(rr.secoc_rejected, 0u);
  const auto ev = measure_someip_row(bed, "event-secoc", "sim", tiny(15));
  EXPECT_EQ(ev.secoc_protected, 15u);
  EXPECT_EQ(ev.secoc_verified, 15u);
  const auto plain = measure_someip_row(bed, "rr-unsecured", "sim", tiny(10));
  EXPECT_EQ(plain.latency.count, 10u);
  EXPECT_EQ(plain.secoc_protected, 0u) << "the unsecured row must not run through SecOC";
  EXPECT_EQ(plain.secoc_verified, 0u);
  const auto udp = measure_someip_row(bed, "udp-bare", "sim", tiny(10));
  EXPECT_EQ(udp.latency.count, 10u);
  EXPECT_EQ(udp.secoc_protected, 0u);
}

TEST(SomeipSimBed, CorruptedSecuredFrameIsRejectedNotDelivered) {
  SomeipSimBed bed;
  bed.start();
  ASSERT_TRUE(bed.round_trip(true, payload(1)).has_value());
  const std::uint64_t rejected0 = bed.server_counters().secoc_rejected;
  const std::uint64_t served0 = bed.server_counters().requests_served;

  // Flip one bit of every request's SOME/IP payload (Ethernet 14 + IPv4 20 +
  // UDP 8 + SOME/IP header 16 = offset 58), with valid UDP checksums, so only
  // SecOC can notice.
  net::BitFlipHook::Options bo;
  bo.min_offset = 58;
  bo.refresh = true;
  net::BitFlipHook secured_flip(bo, 7, net::match_udp_dst_port(kSecuredPort));
  bed.segment().add_hook(&secured_flip);
  EXPECT_FALSE(bed.round_trip(true, payload(2)).has_value());
  bed.segment().remove_hook(&secured_flip);
  EXPECT_GE(secured_flip.modified(), 1u);
  EXPECT_EQ(bed.server_counters().secoc_rejected, rejected0 + 1);
  EXPECT_EQ(bed.server_counters().requests_served, served0) << "a forged request reached the handler";
  EXPECT_GE(bed.security_rejections(), 1u);

  // The same corruption on the unsecured service is served (and echoed
  // corrupted, which the bench then refuses to count).
  net::BitFlipHook plain_flip(bo, 7, net::match_udp_dst_port(kPlainPort));
  bed.segment().add_hook(&plain_flip);
  EXPECT_FALSE(bed.round_trip(false, payload(3)).has_value());
  bed.segment().remove_hook(&plain_flip);
  EXPECT_EQ(bed.server_counters().requests_served, served0 + 1);
  EXPECT_EQ(bed.server_counters().secoc_rejected, rejected0 + 1);

  // Untampered traffic on the secured service still verifies afterwards.
  EXPECT_TRUE(bed.round_trip(true, payload(4)).has_value());
}

TEST(SomeipBench, SimReportHasEveryRowBaselineAndGoal) {
  const auto rep = run_someip_bench(tiny(10));
  ASSERT_EQ(rep.rows.size(), 5u);
  const char* names[] = {"udp-bare", "rr-unsecured", "rr-secoc", "event-unsecured", "event-secoc"};
  for (std::size_t i = 0; i < 5; ++i) {
    const auto j = to_json(rep.rows[i]);
    EXPECT_EQ(j["name"], names[i]);
    EXPECT_EQ(j["topology"], "sim");
    for (const char* k : {"mean_us", "p50_us", "p99_us", "max_us", "msgs_per_s"}) EXPECT_GT(j[k].get<double>(), 0) << k;
    EXPECT_LE(j["p50_us"].get<double>(), j["max_us"].get<double>());
  }
  EXPECT_EQ(rep.rows[1].baseline, "udp-bare");
  EXPECT_EQ(rep.rows[2].baseline, "rr-unsecured");
  EXPECT_EQ(rep.rows[4].baseline, "event-unsecured");
  EXPECT_NEAR(rep.rows[2].ratio_p50, rep.rows[2].latency.p50 / rep.rows[1].latency.p50, 1e-9);
  EXPECT_EQ(rep.rows[2].measure, "round trip");
  EXPECT_EQ(rep.rows[3].measure, "one way");
  ASSERT_EQ(rep.goals.size(), 2u);
  EXPECT_DOUBLE_EQ(rep.goals[0].limit, 1.3);
  EXPECT_DOUBLE_EQ(rep.goals[1].limit, 1.1);
  EXPECT_EQ(rep.goals[1].met_p50, rep.rows[2].ratio_p50 <= 1.1);
  // The writers: the --json document and the terminal report.
  const auto doc = someip_bench_json(rep);
  EXPECT_EQ(doc["rows"].size(), 5u);
  EXPECT_EQ(doc["goals"].size(), 2u);
  EXPECT_EQ(doc["reference"]["vsomeip_rtt_p50_us"], 204);
  EXPECT_EQ(doc["goals"][1]["what"], "rr-secoc / rr-unsecured");
  std::ostringstream text;
  write_someip_bench_report(text, rep);
  EXPECT_NE(text.str().find("goals (issue 4):"), std::string::npos);
  for (const char* n : names) EXPECT_NE(text.str().find(std::string("sim      ") + n), std::string::npos) << n;
}

TEST(SomeipNetnsBed, SecuredExchangesVerifyAcrossNamespaces) {
  std::string why;
  if (!net::netns_available(&why)) GTEST_SKIP() << "needs root for namespaces: " << why;
  SomeipNetnsBed bed;
  bed.start();
  for (const char* row : {"udp-bare", "rr-unsecured", "rr-secoc", "event-unsecured", "event-secoc"}) {
    const auto r = measure_someip_row(bed, row, "netns", tiny(10));
    EXPECT_EQ(r.latency.count, 10u) << row;
    if (std::string(row) == "rr-secoc") {
      EXPECT_EQ(r.secoc_protected, 20u);
      EXPECT_EQ(r.secoc_verified, 20u);
    } else if (std::string(row) == "event-secoc") {
      EXPECT_EQ(r.secoc_verified, 10u);
    } else {
      EXPECT_EQ(r.secoc_verified, 0u) << row;
    }
  }
}

}  // namespace
}  // namespace layersec::harness
