#include "layersec/attack/recovery_attacks.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "layersec/attack/attack_test_support.h"

namespace layersec::attack {
namespace {

const RowIndex& rows() {
  static const RowIndex r = [] {
    AttackOptions o;
    o.attempts = 300;
    o.seed = 5;
    return index_rows(run_recovery_attacks(o));
  }();
  return r;
}

const char* const kConfigs[] = {"secoc-vendor-counter", "secoc-vendor-timestamp", "macsec-gcm-aes-128",
                                "sv-62351-hmac-sha256"};

const AttackRow& row(const std::string& config, const std::string& cls) { return find_row(rows(), config, cls); }

TEST(RecoveryAttacks, EveryConfigurationAndClass) {
  EXPECT_EQ(rows().size(), 4u * 6u);
  for (const auto& [key, r] : rows()) {
    EXPECT_FALSE(r.note.empty()) << key.first << " " << key.second;
    EXPECT_EQ(r.attempts, 300u) << key.first << " " << key.second;
    EXPECT_EQ(r.accepted, 0u) << key.first << " " << key.second;
    EXPECT_FALSE(row_failed(r)) << key.first << " " << key.second;
  }
}

TEST(RecoveryAttacks, BurstsInsideTheWindowLoseNothing) {
  for (const char* c : kConfigs) {
    for (const int n : {1, 10, 100, 1000}) {
      const AttackRow& r = row(c, "L.loss-burst-" + std::to_string(n));
      ASSERT_TRUE(r.recovery_ms.has_value()) << c << " " << n;
      EXPECT_GT(r.legit_delivered, 0u) << c << " " << n;
      const bool beyond_window = std::string(c) == "secoc-vendor-counter" && n >= 100;
      EXPECT_EQ(r.loss_allowed, beyond_window) << c << " " << n;
      if (!beyond_window) {
        EXPECT_EQ(r.legit_lost, 0u) << c << " " << n;
        EXPECT_EQ(*r.recovery_ms, 0.0) << c << " " << n;
      } else {
        EXPECT_LE(*r.recovery_ms, 1000.0) << c << " " << n;  // within one sync period
      }
    }
  }
}

TEST(RecoveryAttacks, ReorderInsideTheWindowDeliversEverything) {
  for (const char* c : {"secoc-vendor-counter", "secoc-vendor-timestamp", "macsec-gcm-aes-128"}) {
    const AttackRow& r = row(c, "L.reorder-in-window");
    EXPECT_EQ(r.legit_lost, 0u) << c;
    EXPECT_GT(r.legit_delivered, 2u * r.attempts) << c;
  }
  // SV: no reorder window, the later-sent frame of each swapped pair is a replay.
  const AttackRow& sv = row("sv-62351-hmac-sha256", "L.reorder-in-window");
  EXPECT_TRUE(sv.loss_allowed);
  EXPECT_EQ(sv.legit_lost, sv.attempts);
  EXPECT_EQ(sv.rejected.at("replayed_counter"), sv.attempts);
}

TEST(RecoveryAttacks, DuplicatesAreRefused) {
  for (const char* c : kConfigs) {
    const AttackRow& r = row(c, "L.duplicate");
    EXPECT_EQ(r.accepted, 0u) << c;
    EXPECT_EQ(total_rejected(r), r.attempts) << c;
    EXPECT_EQ(r.legit_lost, 0u) << c;
  }
  EXPECT_EQ(row("macsec-gcm-aes-128", "L.duplicate").rejected.at("InPktsLate"), 300u);
  EXPECT_EQ(row("sv-62351-hmac-sha256", "L.duplicate").rejected.at("replayed_counter"), 300u);
  EXPECT_EQ(row("secoc-vendor-timestamp", "L.duplicate").rejected.at("secoc_rejected_replay"), 300u);
}

}  // namespace
}  // namespace layersec::attack
