#include "layersec/attack/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace layersec::attack {
namespace {

AttackRow row(std::uint64_t accepted, std::uint64_t lost) {
  AttackRow r;
  r.layer = "secoc";
  r.configuration = "secoc-profile1-counter";
  r.attack_class = "A2.replay.immediate";
  r.attempts = 1000;
  r.accepted = accepted;
  r.rejected = {{"secoc_rejected_freshness", 1000 - accepted}};
  r.legit_delivered = 50;
  r.legit_lost = lost;
  return r;
}

TEST(AttackReportTest, AcceptedOrLostFailsUnlessTheRowExpectsIt) {
  EXPECT_FALSE(row_failed(row(0, 0)));
  EXPECT_TRUE(row_failed(row(1, 0)));
  EXPECT_TRUE(row_failed(row(0, 1)));
  auto expected = row(1000, 0);
  expected.acceptance_expected = true;
  EXPECT_FALSE(row_failed(expected));
  auto lossy = row(0, 3);
  lossy.loss_allowed = true;
  EXPECT_FALSE(row_failed(lossy));
  EXPECT_TRUE(any_failed({row(0, 0), row(2, 0)}));
  EXPECT_FALSE(any_failed({row(0, 0), expected}));
}

TEST(AttackReportTest, JsonRowsCarryEveryField) {
  auto r = row(0, 0);
  r.recovery_ms = 12.5;
  const auto j = rows_json({r, row(1, 0)}, AttackOptions{1000, 7, false});
  EXPECT_EQ(j["run"]["attempts_per_class"], 1000);
  EXPECT_EQ(j["run"]["seed"], 7);
  EXPECT_TRUE(j["run"]["failed"].get<bool>());
  ASSERT_EQ(j["rows"].size(), 2U);
  const auto& a = j["rows"][0];
  for (const char* key : {"layer", "configuration", "class", "attempts", "accepted", "rejected", "rejected_total",
                          "legit_delivered", "legit_lost", "recovery_ms", "violates", "weakness", "failed", "note"})
    EXPECT_TRUE(a.contains(key)) << key;
  EXPECT_EQ(a["rejected"]["secoc_rejected_freshness"], 1000);
  EXPECT_EQ(a["rejected_total"], 1000);
  EXPECT_DOUBLE_EQ(a["recovery_ms"].get<double>(), 12.5);
  EXPECT_FALSE(a["failed"].get<bool>());
  EXPECT_TRUE(j["rows"][1]["recovery_ms"].is_null());
  EXPECT_TRUE(j["rows"][1]["failed"].get<bool>());
}

TEST(AttackReportTest, TableNamesEveryFailingRowAndWhy) {
  std::ostringstream out;
  write_table(out, {row(0, 0), row(3, 2)});
  const std::string text = out.str();
  EXPECT_NE(text.find("secoc_rejected_freshness=1000"), std::string::npos);
  EXPECT_NE(text.find("FAILED secoc secoc-profile1-counter A2.replay.immediate: 3 attacker frames accepted; "
                      "2 legitimate messages lost"),
            std::string::npos);
  EXPECT_NE(text.find("2 rows, 1 failed"), std::string::npos);
}

// A row that shows a documented weakness is reported (WEAK, listed with the
// weakness) without failing the run, unless the run is strict; a weakness
// that no longer reproduces is said to.
TEST(AttackReportTest, KnownWeaknessesAreShownAndFailOnlyWhenStrict) {
  auto weak = row(5, 0);
  weak.weakness = "state-file-rollback: an older copy of the state file";
  auto fixed = row(0, 0);
  fixed.weakness = "example-fixed: a weakness that no longer reproduces";
  EXPECT_TRUE(row_violates(weak));
  EXPECT_FALSE(row_failed(weak));
  EXPECT_TRUE(row_failed(weak, true));
  EXPECT_FALSE(any_failed({weak, fixed}));
  EXPECT_TRUE(any_failed({weak, fixed}, true));
  std::ostringstream out;
  write_table(out, {weak, fixed});
  const std::string text = out.str();
  EXPECT_NE(text.find("  WEAK\n"), std::string::npos) << text;
  EXPECT_NE(text.find("WEAK secoc secoc-profile1-counter A2.replay.immediate: 5 attacker frames accepted (known "
                      "weakness: state-file-rollback"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NOT SHOWN secoc secoc-profile1-counter A2.replay.immediate: the known weakness did not "
                      "reproduce (example-fixed: a weakness that no longer reproduces)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 rows, 0 failed, 1 show a known weakness"), std::string::npos) << text;
  const auto j = rows_json({weak}, AttackOptions{10, 1, true});
  EXPECT_TRUE(j["run"]["failed"].get<bool>());
  EXPECT_EQ(j["run"]["weaknesses"], 1);
  EXPECT_EQ(j["rows"][0]["weakness"], weak.weakness);
  EXPECT_TRUE(j["rows"][0]["violates"].get<bool>());
}

}  // namespace
}  // namespace layersec::attack
