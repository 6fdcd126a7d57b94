#include "layersec/attack/someip_mc_attacks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace layersec::attack {
namespace {

TEST(SomeipMulticastAttacks, BothMembersRefuseEveryAttackUnderSecoc) {
  AttackOptions o;
  o.attempts = 100;
  o.seed = 5;
  const std::vector<AttackRow> rows = run_someip_multicast_attacks(o);
  if (std::getenv("LAYERSEC_ATTACK_PRINT") != nullptr) write_table(std::cout, rows);
  ASSERT_EQ(rows.size(), 8U);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.configuration + " " + r.attack_class);
    EXPECT_FALSE(row_failed(r));
    EXPECT_FALSE(r.note.empty());
    EXPECT_EQ(r.attempts, 100U);
    // Every legitimate notification reached both members.
    EXPECT_EQ(r.legit_delivered, 200U);
    EXPECT_EQ(r.legit_lost, 0U);
    if (r.configuration == "secoc-vendor-counter-multicast") {
      EXPECT_FALSE(r.acceptance_expected);
      EXPECT_EQ(r.accepted, 0U);
      // Multicast attempts are judged by both members; the unicast one by B.
      EXPECT_EQ(total_rejected(r), r.attack_class == "A2.mc.member-a-to-b" ? 100U : 200U);
    }
  }
  auto find = [&](const std::string& config, const std::string& cls) -> const AttackRow* {
    for (const auto& r : rows)
      if (r.configuration == config && r.attack_class == cls) return &r;
    return nullptr;
  };
  const AttackRow* replay = find("secoc-vendor-counter-multicast", "A2.mc.replay");
  ASSERT_NE(replay, nullptr);
  EXPECT_EQ(replay->rejected.at("secoc_rejected_replay"), 200U);
  const AttackRow* a_to_b = find("secoc-vendor-counter-multicast", "A2.mc.member-a-to-b");
  ASSERT_NE(a_to_b, nullptr);
  EXPECT_EQ(a_to_b->rejected.at("secoc_rejected_replay"), 100U);
  for (const char* cls : {"A2.mc.replay", "A2.mc.bitflip.payload", "A2.mc.member-a-to-b"}) {
    const AttackRow* u = find("someip-unsecured-multicast", cls);
    ASSERT_NE(u, nullptr) << cls;
    EXPECT_TRUE(u->acceptance_expected);
    EXPECT_GT(u->accepted, 0U) << cls;
  }
}

}  // namespace
}  // namespace layersec::attack
