#include "layersec/harness/modeb_handshake_bench.h"

#include <gtest/gtest.h>

#include <string>

namespace layersec::harness {
namespace {

TEST(ModeBHandshakeBench, TimesEveryIterationAndStep) {
  std::string why;
  auto t = time_mode_b_handshakes(kex::KemScheme::kX25519, "x25519", 3, 1'700'000'000, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_EQ(t->kem, "x25519");
  EXPECT_FALSE(t->rsa);
  EXPECT_EQ(t->wall.count, 3u);
  EXPECT_EQ(t->cpu.count, 3u);
  EXPECT_EQ(t->baseline.count, 3u);
  for (const auto& s : t->steps) EXPECT_EQ(s.count, 3u);
  EXPECT_GT(t->wall.p50, 0.0);
  EXPECT_GT(t->bytes_on_wire, 100u);
  // The handshake contains the bare KEM work and more.
  EXPECT_GT(t->cpu.p50, t->baseline.p50);
}

ModeBHandshakeTiming fixed() {
  ModeBHandshakeTiming t;
  t.kem = "rsa-2048";
  t.iterations = 2;
  t.rsa = true;
  t.wall = {2, 10, 0, 9, 10, 11, 12, 13};
  t.cpu = {2, 8, 0, 7, 8, 9, 9.5, 10};
  t.baseline = {2, 2, 0, 2, 2, 2, 2, 2};
  for (std::size_t k = 0; k < t.steps.size(); ++k) t.steps[k].p50 = static_cast<double>(k) + 0.25;
  t.bytes_on_wire = 1234;
  return t;
}

TEST(ModeBHandshakeBench, ReportLayout) {
  EXPECT_EQ(format_mode_b_timing(fixed()),
            "Mode B handshake, kem rsa-2048, 2 iterations, in process (no transmission)\n"
            "  total wall us: mean 10.0 p50 10.0 p95 11.0 p99 12.0 max 13.0\n"
            "  total CPU us:  mean 8.0 p50 8.0 p95 9.0 p99 9.5 max 10.0\n"
            "  baseline, bare KEM encaps+decaps in the same run, CPU us: p50 2.0 (handshake / baseline = 4.00)\n"
            "  subscriber request               wall p50 0.2 us\n"
            "  publisher validate+encaps+sign   wall p50 1.2 us\n"
            "  subscriber verify+decaps         wall p50 2.2 us\n"
            "  publisher confirm                wall p50 3.2 us\n"
            "  bytes on the wire (3 messages): 1234\n");
}

TEST(ModeBHandshakeBench, JsonKeys) {
  const auto j = mode_b_timing_json(fixed());
  for (const char* k : {"kem", "iterations", "mean_us", "p50_us", "p95_us", "p99_us", "max_us", "cpu_mean_us",
                        "cpu_p50_us", "cpu_p99_us", "baseline_bare_kem_cpu_p50_us", "ratio", "bytes", "steps"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j.size(), 14u);
  EXPECT_DOUBLE_EQ(j.at("ratio").get<double>(), 4.0);
  EXPECT_EQ(j.at("steps").size(), 4u);
  EXPECT_DOUBLE_EQ(j.at("steps").at("publisher confirm").at("p50_us").get<double>(), 3.25);
}

}  // namespace
}  // namespace layersec::harness
