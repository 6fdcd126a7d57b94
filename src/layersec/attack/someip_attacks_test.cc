#include "layersec/attack/someip_attacks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
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
    if (std::getenv("LAYERSEC_ATTACK_PRINT") != nullptr) write_table(std::cout, *rows_);
  }
  static void TearDownTestSuite() {
    delete rows_;
    rows_ = nullptr;
  }
  static std::vector<AttackRow>* rows_;
};
std::vector<AttackRow>* SomeipAttacks::rows_ = nullptr;

bool passive(const AttackRow& r) { return r.attack_class == "A1.passive" || r.attack_class == "A3.switch.read-plaintext"; }

TEST_F(SomeipAttacks, EverySecuredRowAcceptsNothingAndLosesNothing) {
  int secured = 0;
  for (const auto& r : *rows_) {
    SCOPED_TRACE(r.configuration + " " + r.attack_class);
    EXPECT_FALSE(row_failed(r));
    EXPECT_FALSE(r.note.empty());
    if (!r.loss_allowed) {
      EXPECT_EQ(r.legit_lost, 0U);
    }
    // Every class but the one that holds back the whole stream runs
    // legitimate traffic beside the attack.
    // (Unsecured, A2.rr.response-to-other-session costs every legitimate call.)
    if (r.attack_class != "A2.holdback.all" && !(r.layer == "someip" && r.loss_allowed)) {
      EXPECT_GT(r.legit_delivered, 0U);
    }
    if (r.layer != "someip" && !passive(r) && !r.acceptance_expected) {
      ++secured;
      EXPECT_EQ(r.accepted, 0U);
      EXPECT_EQ(r.attempts, r.attack_class == "A2.sync.holdback" ? 8U : 200U);
      // Every attempt is refused under a counter of the subscriber (a flipped
      // SOME/IP length can split one datagram into two refused parts).
      EXPECT_GE(total_rejected(r), r.attempts);
      // A3.switch.alter can turn a message into the first segment of a
      // SOME/IP-TP message: the reassembler holds it without a counter.
      if (r.attack_class == "A3.switch.alter") {
        EXPECT_LE(r.rejected.count("uncounted") ? r.rejected.at("uncounted") : 0, 4U);
      } else {
        EXPECT_EQ(r.rejected.count("uncounted"), 0U);
      }
    }
  }
  // Secured rows by configuration: vendor counter 12 + 4 sync, timestamp
  // 12 + 5 request/response, profile 1 and 3: 12 + after-wrap + 4 sync,
  // profile 2: 11 (no bitflip.fv) - 4 replay-type rows (expected), aead:
  // 12 + 4 sync, hybrids: 12 + A3.alter + 4 sync.
  // Multicast: 4 classes on secoc-vendor-counter-multicast.
  EXPECT_EQ(secured, 4 + 12 + 4 + (12 + 5) + (12 + 1 + 4) + 7 + (12 + 1 + 4) + (12 + 4) + (12 + 1 + 4) + (12 + 1 + 4));
  EXPECT_FALSE(any_failed(*rows_));
}

TEST_F(SomeipAttacks, ProfileTwoHasNoReplayProtection) {
  for (const char* cls : {"A2.replay.immediate", "A2.replay.delayed", "A2.holdback.release", "A2.holdback.all"}) {
    SCOPED_TRACE(cls);
    const AttackRow* r = find(*rows_, "secoc-profile2", cls);
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(r->acceptance_expected);
    EXPECT_EQ(r->accepted, r->attempts);
  }
  EXPECT_EQ(find(*rows_, "secoc-profile2", "A2.bitflip.fv"), nullptr);
  const AttackRow* mac = find(*rows_, "secoc-profile2", "A2.bitflip.mac");
  ASSERT_NE(mac, nullptr);
  EXPECT_EQ(mac->accepted, 0U);
  EXPECT_NE(mac->note.find("brute force: forgery 2^-24"), std::string::npos);
}

TEST_F(SomeipAttacks, AeadHidesThePayloadFromWireAndSwitch) {
  for (const char* config : {"secoc-aead-gcm-counter", "hybrid-aead-gcm-macsec-hop"}) {
    const AttackRow* r = find(*rows_, config, "A1.passive");
    ASSERT_NE(r, nullptr) << config;
    EXPECT_FALSE(r->acceptance_expected);
    EXPECT_GE(r->attempts, 200U);
    EXPECT_EQ(r->accepted, 0U);
  }
  const AttackRow* a3 = find(*rows_, "hybrid-aead-gcm-macsec-hop", "A3.switch.read-plaintext");
  ASSERT_NE(a3, nullptr);
  EXPECT_FALSE(a3->acceptance_expected);
  EXPECT_EQ(a3->attempts, 200U);
  EXPECT_EQ(a3->accepted, 0U);
  // Integrity-only SecOC under MACsec: the switch holding the keys reads it.
  const AttackRow* v3 = find(*rows_, "hybrid-vendor-macsec-hop", "A3.switch.read-plaintext");
  ASSERT_NE(v3, nullptr);
  EXPECT_TRUE(v3->acceptance_expected);
  EXPECT_EQ(v3->accepted, 200U);
}

TEST_F(SomeipAttacks, SyncMessagesAreJudgedByTheEngine) {
  for (const char* config : {"secoc-vendor-counter", "secoc-profile1-counter", "secoc-profile3-counter",
                             "secoc-aead-gcm-counter", "hybrid-vendor-macsec-hop", "hybrid-aead-gcm-macsec-hop"}) {
    SCOPED_TRACE(config);
    const AttackRow* replay = find(*rows_, config, "A2.sync.replay");
    const AttackRow* forge = find(*rows_, config, "A2.sync.forge");
    const AttackRow* flip = find(*rows_, config, "A2.sync.bitflip");
    const AttackRow* hold = find(*rows_, config, "A2.sync.holdback");
    ASSERT_TRUE(replay && forge && flip && hold);
    EXPECT_EQ(replay->rejected, (std::map<std::string, std::uint64_t>{{"secoc_sync_rejected_stale", 200}}));
    EXPECT_EQ(forge->rejected, (std::map<std::string, std::uint64_t>{{"secoc_sync_rejected_mac-mismatch", 200}}));
    EXPECT_EQ(flip->rejected.at("secoc_sync_rejected_mac-mismatch"), 200U);
    EXPECT_EQ(hold->rejected.at("secoc_sync_rejected_stale"), 8U);
    // Missing a reset cycle loses its traffic until the next sync; the row
    // ends with 20 notifications that must all arrive.
    EXPECT_TRUE(hold->loss_allowed);
    EXPECT_GE(hold->legit_delivered, 20U);
  }
  EXPECT_EQ(find(*rows_, "secoc-vendor-timestamp", "A2.sync.replay"), nullptr);
  EXPECT_EQ(find(*rows_, "secoc-profile2", "A2.sync.replay"), nullptr);
}

TEST_F(SomeipAttacks, RequestResponseAttacks) {
  auto row = [&](const char* config, const char* cls) {
    const AttackRow* r = find(*rows_, config, cls);
    EXPECT_NE(r, nullptr) << config << " " << cls;
    return r ? *r : AttackRow{};
  };
  using Reasons = std::map<std::string, std::uint64_t>;
  // Secured: the server never executes a replayed request; forged responses
  // fail their MAC; responses that match no pending call are late.
  const char* ts = "secoc-vendor-timestamp";
  EXPECT_EQ(row(ts, "A2.rr.replay-request").rejected, (Reasons{{"server_secoc_rejected_replay", 200}}));
  EXPECT_EQ(row(ts, "A2.rr.replay-response").rejected, (Reasons{{"someip_late_responses", 200}}));
  EXPECT_EQ(row(ts, "A2.rr.response-to-other-session").rejected, (Reasons{{"secoc_rejected_mac-mismatch", 200}}));
  EXPECT_EQ(row(ts, "A2.rr.response-to-other-client").rejected, (Reasons{{"someip_late_responses", 200}}));
  EXPECT_EQ(row(ts, "A2.rr.event-to-response").rejected, (Reasons{{"secoc_rejected_mac-mismatch", 200}}));
  for (const char* cls : {"A2.rr.replay-request", "A2.rr.response-to-other-session", "A2.rr.event-to-response"}) {
    const AttackRow r = row(ts, cls);
    EXPECT_EQ(r.accepted, 0U) << cls;
    EXPECT_EQ(r.legit_lost, 0U) << cls;
    EXPECT_EQ(r.legit_delivered, 200U) << cls;
    // Unsecured, the same attacks succeed every time.
    const AttackRow u = row("someip-unsecured", cls);
    EXPECT_TRUE(u.acceptance_expected);
    EXPECT_EQ(u.accepted, 200U) << cls;
  }
}

TEST_F(SomeipAttacks, ReplayAfterTheTransmittedCounterWrapped) {
  for (const char* config : {"secoc-profile1-counter", "secoc-profile3-counter"}) {
    SCOPED_TRACE(config);
    const AttackRow* r = find(*rows_, config, "A2.replay.after-wrap");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->accepted, 0U);
    // The reconstructed FV is larger: the MAC fails (or, across a reset
    // cycle the sync messages started, the FV is out of the window).
    EXPECT_GT(r->rejected.at("secoc_rejected_mac-mismatch"), 0U);
    for (const auto& [reason, n] : r->rejected)
      EXPECT_TRUE(reason == "secoc_rejected_mac-mismatch" || reason == "secoc_rejected_out-of-window") << reason;
  }
  EXPECT_EQ(find(*rows_, "secoc-vendor-counter", "A2.replay.after-wrap"), nullptr);
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
  for (const char* config : {"someip-unsecured", "secoc-vendor-counter", "secoc-vendor-timestamp",
                             "secoc-profile1-counter", "secoc-profile2", "secoc-profile3-counter"}) {
    const AttackRow* r = find(*rows_, config, "A1.passive");
    ASSERT_NE(r, nullptr) << config;
    EXPECT_TRUE(r->acceptance_expected);
    EXPECT_GE(r->accepted, 200U) << config;
    EXPECT_GE(r->attempts, r->accepted);
  }
}

TEST_F(SomeipAttacks, RejectionReasonsAreTheEnginesOwn) {
  for (const char* config :
       {"secoc-vendor-counter", "secoc-vendor-timestamp", "hybrid-vendor-macsec-hop", "secoc-profile1-counter",
        "secoc-profile3-counter", "secoc-aead-gcm-counter", "hybrid-aead-gcm-macsec-hop"}) {
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
