// The soak runner, half a second: the counts add up, nothing attacked is
// accepted, legitimate traffic flows during and right after the load, and
// resident memory stays loosely bounded. No timing assertions.
#include "layersec/attack/soak_attacks.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace layersec::attack {
namespace {

// "RSS start/max/end A/B/C MiB" from a row's note.
bool rss(const std::string& note, double& start, double& max, double& end) {
  const auto at = note.find("RSS start/max/end ");
  return at != std::string::npos &&
         std::sscanf(note.c_str() + at, "RSS start/max/end %lf/%lf/%lf", &start, &max, &end) == 3;
}

TEST(SoakAttacks, HalfASecondAddsUpAndAcceptsNothing) {
  AttackOptions o;
  o.seed = 9;
  const auto rows = run_soak(o, 0.5);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.configuration);
    EXPECT_EQ(r.layer, "soak");
    EXPECT_EQ(r.attack_class, "S.mixed-load");
    EXPECT_GT(r.attempts, 0u);
    EXPECT_EQ(r.accepted, 0u);
    EXPECT_EQ(r.accepted + total_rejected(r), r.attempts) << r.note;
    EXPECT_GT(r.legit_delivered, 10u);
    EXPECT_EQ(r.legit_lost, 0u);
    EXPECT_NE(r.note.find("after the load 10/10 delivered at once"), std::string::npos) << r.note;
    EXPECT_FALSE(row_failed(r));
    double start = 0, max = 0, end = 0;
    ASSERT_TRUE(rss(r.note, start, max, end)) << r.note;
    EXPECT_GT(start, 0.0);
    EXPECT_LE(max, start + 256.0);  // loose: a leak per frame would show as far more
    EXPECT_LE(end, max);
  }
}

TEST(SoakAttacks, RefusesANonPositiveDuration) {
  EXPECT_THROW((void)run_soak(AttackOptions{}, 0.0), std::runtime_error);
}

// The soak table for a reader (LAYERSEC_SOAK_SECONDS, default 5):
//   LAYERSEC_SOAK_SECONDS=600 attack_test --gtest_also_run_disabled_tests
//     --gtest_filter='SoakAttacks.DISABLED_PrintSoakTable'  (one line)
TEST(SoakAttacks, DISABLED_PrintSoakTable) {
  const char* env = std::getenv("LAYERSEC_SOAK_SECONDS");
  const double seconds = env != nullptr ? std::atof(env) : 5.0;
  const auto rows = run_soak(AttackOptions{}, seconds > 0 ? seconds : 5.0);
  write_table(std::cout, rows);
  for (const auto& r : rows) std::cout << r.configuration << ": " << r.note << "\n";
}

}  // namespace
}  // namespace layersec::attack
