#include "layersec/attack/someip_attacks.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace layersec::attack {
namespace {

const AttackRow* find(const std::vector<AttackRow>& rows, const std::string& config, const std::string& cls) {
  for (const auto& r : rows)
    if (r.configuration == config && r.attack_class == cls) return &r;
  return nullptr;
}

class SomeipAttacks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    AttackOptions o;
    o.attempts = 200;
    o.seed = 3;
    rows_ = new std::vector<AttackRow>(run_someip_attacks(o));
  }
  static void TearDownTestSuite() {
    delete rows_;
    rows_ = nullptr;
  }
  static std::vector<AttackRow>* rows_;
};
std::vector<AttackRow>* SomeipAttacks::rows_ = nullptr;

TEST_F(SomeipAttacks, EverySecuredRowAcceptsNothingAndLosesNothing) {
  int secured = 0;
  for (const auto& r : *rows_) {
    SCOPED_TRACE(r.configuration + " " + r.attack_class);
    EXPECT_FALSE(row_failed(r));
    EXPECT_FALSE(r.note.empty());
    EXPECT_EQ(r.legit_lost, 0U);
    // Every class but the one that holds back the whole stream runs
    // legitimate traffic beside the attack.
    if (r.attack_class != "A2.holdback.all") {
      EXPECT_GT(r.legit_delivered, 0U);
    }
    if (r.layer != "someip" && r.attack_class != "A1.passive") {
      ++secured;
      EXPECT_FALSE(r.acceptance_expected);
      EXPECT_EQ(r.accepted, 0U);
      EXPECT_EQ(r.attempts, 200U);
      // Every attempt is refused under a counter of the subscriber (a flipped
      // SOME/IP length can split one datagram into two refused parts).
      EXPECT_GE(total_rejected(r), r.attempts);
      EXPECT_EQ(r.rejected.count("uncounted"), 0U);
    }
  }
  EXPECT_EQ(secured, 3 * 12);
  EXPECT_FALSE(any_failed(*rows_));
}

TEST_F(SomeipAttacks, UnsecuredBaselineAcceptsTheAttacks) {
  for (const char* cls : {"A2.replay.immediate", "A2.replay.delayed", "A2.bitflip.payload", "A2.forge.wrong-key",
                          "A2.bitflip.someip-header", "A2.extend"}) {
    SCOPED_TRACE(cls);
    const AttackRow* r = find(*rows_, "someip-unsecured", cls);
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(r->acceptance_expected);
    EXPECT_GT(r->accepted, 0U);
  }
  const AttackRow* replay = find(*rows_, "someip-unsecured", "A2.replay.immediate");
  ASSERT_NE(replay, nullptr);
  EXPECT_EQ(replay->accepted, replay->attempts);
}

TEST_F(SomeipAttacks, PassiveCaptureReadsNothingUnderMacsec) {
  const AttackRow* r = find(*rows_, "hybrid-vendor-macsec-hop", "A1.passive");
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->acceptance_expected);
  EXPECT_GE(r->attempts, 200U);
  EXPECT_EQ(r->accepted, 0U);
}

TEST_F(SomeipAttacks, PassiveCaptureReadsThePayloadUnderIntegrityOnlySecoc) {
  for (const char* config : {"someip-unsecured", "secoc-vendor-counter", "secoc-vendor-timestamp"}) {
    const AttackRow* r = find(*rows_, config, "A1.passive");
    ASSERT_NE(r, nullptr) << config;
    EXPECT_TRUE(r->acceptance_expected);
    EXPECT_GE(r->accepted, 200U) << config;
    EXPECT_GE(r->attempts, r->accepted);
  }
}

TEST_F(SomeipAttacks, RejectionReasonsAreTheEnginesOwn) {
  for (const char* config :
       {"secoc-vendor-counter", "secoc-vendor-timestamp", "hybrid-vendor-macsec-hop"}) {
    SCOPED_TRACE(config);
    auto reasons = [&](const char* cls) {
      const AttackRow* r = find(*rows_, config, cls);
      EXPECT_NE(r, nullptr) << cls;
      return r ? r->rejected : std::map<std::string, std::uint64_t>{};
    };
    EXPECT_EQ(reasons("A2.bitflip.mac"), (std::map<std::string, std::uint64_t>{{"secoc_rejected_mac-mismatch", 200}}));
    EXPECT_EQ(reasons("A2.bitflip.payload"),
              (std::map<std::string, std::uint64_t>{{"secoc_rejected_mac-mismatch", 200}}));
    // Forgeries are judged on their MAC; one sent as a reset cycle starts
    // (the sync message still on its way) can be refused for its FV first.
    const auto forged = reasons("A2.forge.wrong-key");
    EXPECT_GE(forged.count("secoc_rejected_mac-mismatch") ? forged.at("secoc_rejected_mac-mismatch") : 0, 195U);
    for (const auto& [reason, count] : forged) {
      EXPECT_TRUE(reason == "secoc_rejected_mac-mismatch" || reason == "secoc_rejected_out-of-window") << reason;
    }
    EXPECT_EQ(reasons("A2.relabel.unbound-id"),
              (std::map<std::string, std::uint64_t>{{"secoc_unbound_rejected", 200}}));
    EXPECT_EQ(reasons("A2.replay.immediate"), (std::map<std::string, std::uint64_t>{{"secoc_rejected_replay", 200}}));
    // Held back and released: the time bound (timestamp: stale) or the
    // reset cycles the sync messages started meanwhile (counter) refuse it.
    EXPECT_EQ(total_rejected(*find(*rows_, config, "A2.holdback.all")), 200U);
    // Delayed replay: behind the counter window, or stale by the timestamp.
    const auto delayed = reasons("A2.replay.delayed");
    ASSERT_EQ(delayed.size(), 1U);
    EXPECT_TRUE(delayed.begin()->first == "secoc_rejected_out-of-window" ||
                delayed.begin()->first == "secoc_rejected_stale");
  }
}

TEST(SomeipAttacksRun, IsDeterministicFromTheSeed) {
  AttackOptions o;
  o.attempts = 20;
  o.seed = 9;
  const auto a = run_someip_attacks(o);
  const auto b = run_someip_attacks(o);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].rejected, b[i].rejected) << a[i].configuration << " " << a[i].attack_class;
    EXPECT_EQ(a[i].accepted, b[i].accepted);
  }
}

}  // namespace
}  // namespace layersec::attack
