// MKA participants on an in-memory LAN with fake time (mka_sim_test_support.h):
// bring-up, the zonal switch as key server of three members, membership
// changes, timer and PN rekeys, make-before-break ordering, election,
// kill-and-restart, cipher suites (XPN SSCI/salt, GCM-AES-256, offset).
// Bad inputs and the wpa_supplicant replay are in participant_input_test.cc.
#include "layersec/mka/participant.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "layersec/mka/mka_sim_test_support.h"

namespace layersec::mka {
namespace {

using testing::at_ms;
using testing::FakeSecY;
using testing::sci_of;
using testing::Sim;

// Every up node transmits with the same SAK, holds a receive SA with it for
// every other up node, and counts them all live; returns the fingerprint.
std::string expect_converged(Sim& s) {
  std::string fp;
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    if (!s.nodes[i].up) continue;
    const std::string mine = s.tx_fingerprint(i);
    EXPECT_FALSE(mine.empty()) << s.nodes[i].name << " does not transmit";
    if (fp.empty()) fp = mine;
    EXPECT_EQ(mine, fp) << s.nodes[i].name;
    const std::uint8_t an = *s.secy(i).encoding;
    for (std::size_t j = 0; j < s.nodes.size(); ++j) {
      if (j == i || !s.nodes[j].up) continue;
      EXPECT_TRUE(s.is_live_peer(i, s.nodes[j].sci)) << s.nodes[i].name << " sees " << s.nodes[j].name;
      const FakeSecY::RxSa* rx = s.secy(i).rx_sa(s.nodes[j].sci, an);
      EXPECT_NE(rx, nullptr) << s.nodes[i].name << " has no RX SA for " << s.nodes[j].name;
      if (rx != nullptr) {
        EXPECT_EQ(rx->fingerprint, fp);
      }
    }
  }
  return fp;
}

std::uint64_t ms_of(std::uint64_t ns) { return ns / 1000000; }

TEST(MkaParticipant, TwoMembersBringUpTheSameSak) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  const auto b = s.add("b", sci_of(2), 20);
  s.start(a);
  s.start(b);
  s.run_until(at_ms(2000));
  EXPECT_EQ(s.p(a).state(), ParticipantState::kLive);
  EXPECT_EQ(s.p(b).state(), ParticipantState::kLive);
  EXPECT_TRUE(s.p(a).is_key_server());
  EXPECT_FALSE(s.p(b).is_key_server());
  EXPECT_EQ(s.p(b).key_server_sci(), sci_of(1));
  const std::string fp = expect_converged(s);
  // The SAK a generated is the SAK b installed (fingerprints, never keys).
  const Event* gen = s.last_event(a, EventType::kSakGenerated);
  const Event* inst = s.last_event(b, EventType::kSakInstalled);
  ASSERT_NE(gen, nullptr);
  ASSERT_NE(inst, nullptr);
  EXPECT_EQ(gen->sak_fingerprint, fp);
  EXPECT_EQ(inst->sak_fingerprint, fp);
  EXPECT_EQ(inst->ki, gen->ki);
  EXPECT_EQ(gen->ki.kn, 1u);
  EXPECT_EQ(gen->rekey, RekeyReason::kNewKeyServer);
  EXPECT_EQ(s.total_lost(), 0u);
  EXPECT_GT(s.nodes[a].data_delivered, 100u);
  // Bring-up: 1 ms links, so a handful of MKPDU exchanges.
  std::printf("bring-up (sim, 1 ms links): first protected frame at a %llu ms, at b %llu ms\n",
              static_cast<unsigned long long>(ms_of(s.nodes[a].first_delivery_ns)),
              static_cast<unsigned long long>(ms_of(s.nodes[b].first_delivery_ns)));
  EXPECT_LE(s.nodes[a].first_delivery_ns, 20000000u);
  EXPECT_LE(s.nodes[b].first_delivery_ns, 20000000u);
  for (const std::size_t i : {a, b}) {
    EXPECT_TRUE(s.secy(i).violations.empty());
    for (std::size_t r = 0; r < kDropReasonCount; ++r) EXPECT_EQ(s.p(i).stats().drops[r], 0u) << r;
  }
}

TEST(MkaParticipant, BoundedHellosThenHelloTime) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  s.start(a);
  s.run_until(at_ms(8000));
  std::vector<std::int64_t> sent;
  for (const auto& t : s.tap) sent.push_back(t.at.ns() / 1000000);
  const std::vector<std::int64_t> expected = {0, 500, 1000, 1500, 3500, 5500, 7500};
  EXPECT_EQ(sent, expected);
  EXPECT_EQ(s.p(a).state(), ParticipantState::kSearching);
  EXPECT_EQ(s.p(a).mn(), 7u);
}

TEST(MkaParticipant, ZonalSwitchIsKeyServerForThreeMembers) {
  Sim s;
  // The paper's zonal switch: the only member allowed to be key server.
  const auto z = s.add("zonal", sci_of(0x10), 1);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  const auto e2 = s.add("ecu2", sci_of(0x22), kNeverKeyServer);
  for (const auto i : {z, e1, e2}) s.start(i);
  s.run_until(at_ms(20000));
  for (const auto i : {z, e1, e2}) {
    EXPECT_EQ(s.p(i).key_server_sci(), sci_of(0x10)) << s.nodes[i].name;
    EXPECT_EQ(s.p(i).live_peer_count(), 2u);
  }
  EXPECT_TRUE(s.p(z).is_key_server());
  expect_converged(s);
  EXPECT_EQ(s.total_lost(), 0u);
  EXPECT_EQ(s.p(e1).stats().saks_generated, 0u);
  std::printf("zonal bring-up: %llu SAKs generated, first frame at ecu1 %llu ms, ecu2 %llu ms\n",
              static_cast<unsigned long long>(s.p(z).stats().saks_generated),
              static_cast<unsigned long long>(ms_of(s.nodes[e1].first_delivery_ns)),
              static_cast<unsigned long long>(ms_of(s.nodes[e2].first_delivery_ns)));
}

TEST(MkaParticipant, LeavingMemberIsExcludedAfterTheLifeTimeAndRekeyed) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  const auto e2 = s.add("ecu2", sci_of(0x22), kNeverKeyServer);
  for (const auto i : {z, e1, e2}) s.start(i);
  s.run_until(at_ms(10000));
  const std::string before = expect_converged(s);
  const std::uint64_t generated = s.p(z).stats().saks_generated;
  s.kill(e2);
  const TimePoint killed = s.now;
  s.run_until(at_ms(20000));
  const Event* lost = s.last_event(z, EventType::kPeerLost);
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->sci, sci_of(0x22));
  EXPECT_EQ(lost->loss, PeerLossReason::kLifeTimeExpired);
  const Duration exclusion = lost->at - killed;
  std::printf("time to exclude a member that left: %.3f s (life time 6 s, hello 2 s)\n", exclusion.s());
  EXPECT_GE(exclusion, Duration::seconds(4));
  EXPECT_LE(exclusion, Duration::seconds(6) + Duration::milliseconds(10));
  // Excluded: no receive SA for it anywhere, a new SAK without it.
  for (const auto i : {z, e1}) EXPECT_EQ(s.secy(i).rx_scis().count(sci_of(0x22)), 0u);
  EXPECT_EQ(s.p(z).stats().rekey(RekeyReason::kMemberLeft), 1u);
  EXPECT_EQ(s.p(z).stats().saks_generated, generated + 1);
  const std::string after = expect_converged(s);
  EXPECT_NE(after, before);
  EXPECT_EQ(s.nodes[z].data_lost + s.nodes[e1].data_lost, 0u);
}

TEST(MkaParticipant, JoiningMemberTriggersARekey) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  const auto e2 = s.add("ecu2", sci_of(0x22), kNeverKeyServer);
  s.start(z);
  s.start(e1);
  s.run_until(at_ms(5000));
  const std::string two = expect_converged(s);
  s.start(e2);
  const std::uint64_t joined_at = static_cast<std::uint64_t>(s.now.ns());
  s.run_until(at_ms(15000));
  EXPECT_EQ(s.p(z).stats().rekey(RekeyReason::kMemberJoined), 1u);
  const std::string three = expect_converged(s);
  EXPECT_NE(two, three);
  EXPECT_EQ(s.total_lost(), 0u);
  std::printf("join: ecu2's first protected frame %llu ms after it started\n",
              static_cast<unsigned long long>(ms_of(s.nodes[e2].first_delivery_ns - joined_at)));
}

TEST(MkaParticipant, OperatorRekeyOnlyOnTheKeyServerAndWithoutLoss) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  s.start(z);
  s.start(e1);
  s.run_until(at_ms(5000));
  const std::string before = expect_converged(s);
  // Not the key server: refused, and nothing about it changes.
  const std::size_t e1_events = s.nodes[e1].events.size();
  EXPECT_FALSE(s.p(e1).rekey_now(s.now).has_value());
  EXPECT_EQ(s.nodes[e1].events.size(), e1_events);
  EXPECT_EQ(s.p(e1).stats().rekey(RekeyReason::kOperator), 0u);
  // The key server: a new SAK with reason kOperator, taken into use by
  // both while frames flow, none lost.
  auto out = s.p(z).rekey_now(s.now);
  ASSERT_TRUE(out.has_value());
  s.apply(z, std::move(*out));
  s.run_until(at_ms(15000));
  EXPECT_EQ(s.p(z).stats().rekey(RekeyReason::kOperator), 1u);
  bool operator_sak = false;
  for (const auto& e : s.nodes[z].events) {
    operator_sak |= e.type == EventType::kSakGenerated && e.rekey == RekeyReason::kOperator;
  }
  EXPECT_TRUE(operator_sak);
  const std::string after = expect_converged(s);
  EXPECT_NE(before, after);
  EXPECT_EQ(s.total_lost(), 0u);
  // A stopped participant refuses too.
  (void)s.p(z).stop(s.now);
  EXPECT_FALSE(s.p(z).rekey_now(s.now).has_value());
}

TEST(MkaParticipant, TimerRekeysCycleTheAnWithoutLosingFrames) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1, [](ParticipantConfig& c) { c.rekey_interval = Duration::seconds(20); });
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  s.start(z);
  s.start(e1);
  s.run_until(at_ms(101000));
  EXPECT_EQ(s.p(z).stats().rekey(RekeyReason::kTimer), 5u);
  std::vector<std::uint8_t> ans;
  std::vector<std::uint32_t> kns;
  for (const auto& e : s.nodes[z].events) {
    if (e.type != EventType::kSakGenerated) continue;
    ans.push_back(e.an);
    kns.push_back(e.ki.kn);
  }
  EXPECT_EQ(ans, (std::vector<std::uint8_t>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(kns, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
  expect_converged(s);
  EXPECT_EQ(s.total_lost(), 0u);
  EXPECT_GT(s.nodes[z].data_delivered, 9000u);
}

TEST(MkaParticipant, PnThresholdRekeysBeforeThePnRunsOut) {
  Sim s;
  auto tweak = [](ParticipantConfig& c) { c.pn_rekey_threshold = 300; };
  const auto z = s.add("zonal", sci_of(0x10), 1, tweak);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer, tweak);
  s.start(z);
  s.start(e1);
  std::uint64_t max_pn = 0;
  for (int t = 1; t <= 30; ++t) {
    s.run_until(at_ms(t * 1000));
    for (const auto i : {z, e1}) {
      for (const auto& [an, sa] : s.secy(i).tx) max_pn = std::max(max_pn, sa.next_pn);
    }
  }
  // 100 frames/s, the PN reported every second: a new SAK well before the
  // threshold plus a few seconds of traffic.
  EXPECT_GE(s.p(z).stats().rekey(RekeyReason::kPnThreshold), 5u);
  EXPECT_LE(max_pn, 300u + 500u);
  EXPECT_EQ(s.total_lost(), 0u);
  expect_converged(s);
}

TEST(MkaParticipant, NonKeyServerPnReachesTheKeyServerThroughSakUse) {
  Sim s;
  auto tweak = [](ParticipantConfig& c) { c.pn_rekey_threshold = 1000000; };
  const auto z = s.add("zonal", sci_of(0x10), 1, tweak);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer, tweak);
  s.start(z);
  s.start(e1);
  s.run_until(at_ms(5000));
  const std::uint32_t kn = s.p(z).sak().old()->ki.kn;
  // Only ecu1's transmit PN is high (the key server's own is low).
  s.secy(e1).tx.at(*s.secy(e1).encoding).next_pn = 1000001;
  s.apply(e1, s.p(e1).on_tx_pn(1000001, s.now));
  s.run_until(at_ms(6000));
  EXPECT_EQ(s.p(z).stats().rekey(RekeyReason::kPnThreshold), 1u);
  s.run_until(at_ms(10000));
  EXPECT_GT(s.p(z).sak().old()->ki.kn, kn);
  expect_converged(s);
  EXPECT_EQ(s.total_lost(), 0u);
}

// For every SAK: at each node its receive SAs come before its transmit SA,
// which comes before it transmits; nobody transmits on a SAK before every
// other member holding that SAK has a receive SA for it; and an old SA is
// retired only after every other member transmits with the new SAK.
TEST(MkaParticipant, MakeBeforeBreakOrderOfSecYCalls) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1, [](ParticipantConfig& c) { c.rekey_interval = Duration::seconds(15); });
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  const auto e2 = s.add("ecu2", sci_of(0x22), kNeverKeyServer);
  const auto e3 = s.add("ecu3", sci_of(0x23), 50);
  for (const auto i : {z, e1, e2}) s.start(i);
  s.run_until(at_ms(10000));
  s.start(e3);
  s.run_until(at_ms(40000));
  s.kill(e2);
  s.run_until(at_ms(70000));
  EXPECT_EQ(s.total_lost(), 0u);

  std::map<std::string, std::uint64_t> first_install;  // fp -> first install (any node)
  for (std::size_t p = 0; p < s.nodes.size(); ++p) {
    const auto& calls = s.secy(p).calls;
    for (const auto& c : calls) {
      if (c.type != SaActionType::kEnableTx) continue;
      // Locally: receive SAs (for the peers live then) before the transmit
      // SA, both before the enable.
      std::uint64_t tx_seq = 0;
      std::uint64_t first_rx = 0;
      for (const auto& d : calls) {
        if (d.fingerprint != c.fingerprint || d.seq > c.seq) continue;
        if (d.type == SaActionType::kInstallTxSa) tx_seq = d.seq;
        if (d.type == SaActionType::kInstallRxSa && first_rx == 0) first_rx = d.seq;
      }
      EXPECT_NE(tx_seq, 0u);
      EXPECT_NE(first_rx, 0u);
      EXPECT_LT(first_rx, tx_seq) << s.nodes[p].name;
      // Globally: every other node that holds this SAK at that moment can receive p on it.
      for (std::size_t q = 0; q < s.nodes.size(); ++q) {
        if (q == p) continue;
        bool holds = false;
        bool receives_p = false;
        for (const auto& d : s.secy(q).calls) {
          if (d.seq > c.seq || d.fingerprint != c.fingerprint) continue;
          holds = true;
          if (d.type == SaActionType::kInstallRxSa && d.sci == s.nodes[p].sci && d.an == c.an) receives_p = true;
        }
        if (holds) {
          EXPECT_TRUE(receives_p) << s.nodes[p].name << " transmits before " << s.nodes[q].name << " receives";
        }
      }
    }
    // Retiring: the receive SA of q on the old SAK goes only after q transmits with p's current SAK.
    std::string current;
    for (const auto& c : calls) {
      if (c.type == SaActionType::kEnableTx) current = c.fingerprint;
      if (c.type != SaActionType::kRetireRxSa) continue;
      std::size_t q = s.nodes.size();
      for (std::size_t k = 0; k < s.nodes.size(); ++k) {
        if (s.nodes[k].sci == c.sci) q = k;
      }
      ASSERT_LT(q, s.nodes.size());
      if (!s.nodes[q].up && s.nodes[q].incarnation == 1 && q == e2) continue;  // e2 died: its SC goes
      bool q_switched = false;
      for (const auto& d : s.secy(q).calls) {
        if (d.type == SaActionType::kEnableTx && d.fingerprint == current && d.seq < c.seq) q_switched = true;
      }
      EXPECT_TRUE(q_switched) << s.nodes[p].name << " retired " << s.nodes[q].name << "'s old SA too early";
    }
    EXPECT_TRUE(s.secy(p).violations.empty());
  }
}

TEST(MkaParticipant, ElectionByPriorityThenLowestSci) {
  Sim s;
  const auto a = s.add("a", sci_of(3), 20);
  const auto b = s.add("b", sci_of(5), 10);
  const auto c = s.add("c", sci_of(4), 10);
  for (const auto i : {a, b, c}) s.start(i);
  s.run_until(at_ms(10000));
  for (const auto i : {a, b, c}) EXPECT_EQ(s.p(i).key_server_sci(), sci_of(4)) << s.nodes[i].name;
  EXPECT_TRUE(s.p(c).is_key_server());
  expect_converged(s);
}

TEST(MkaParticipant, NobodyMayBeKeyServerMeansNoSak) {
  Sim s;
  const auto a = s.add("a", sci_of(1), kNeverKeyServer);
  const auto b = s.add("b", sci_of(2), kNeverKeyServer);
  s.start(a);
  s.start(b);
  s.run_until(at_ms(10000));
  for (const auto i : {a, b}) {
    EXPECT_EQ(s.p(i).state(), ParticipantState::kLive);
    EXPECT_FALSE(s.p(i).key_server_sci().has_value());
    EXPECT_TRUE(s.secy(i).calls.empty());
  }
}

TEST(MkaParticipant, BetterPriorityJoiningTakesOverWithoutAnAnClash) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 20);
  const auto b = s.add("b", sci_of(2), 30);
  s.start(a);
  s.start(b);
  s.run_until(at_ms(5000));
  const std::uint8_t an_before = *s.secy(a).encoding;
  const auto c = s.add("c", sci_of(3), 5);
  s.start(c);
  s.run_until(at_ms(20000));
  for (const auto i : {a, b, c}) EXPECT_EQ(s.p(i).key_server_sci(), sci_of(3));
  EXPECT_FALSE(s.p(a).is_key_server());
  expect_converged(s);
  EXPECT_NE(*s.secy(c).encoding, an_before);
  EXPECT_EQ(s.p(a).stats().drop(DropReason::kAnInUse) + s.p(b).stats().drop(DropReason::kAnInUse), 0u);
  EXPECT_EQ(s.nodes[a].data_lost + s.nodes[b].data_lost, 0u);
}

TEST(MkaParticipant, KillAndRestartIsANewMemberAndTheOldMiGoes) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  s.start(z);
  s.start(e1);
  s.run_until(at_ms(5000));
  const MemberId old_mi = s.p(e1).mi();
  const std::string before = expect_converged(s);
  // Frames e1 sent before it died: an attacker recorded them.
  std::vector<std::vector<std::uint8_t>> recorded;
  for (const auto& t : s.tap) {
    if (t.from == e1) recorded.push_back(t.frame);
  }
  s.kill(e1);
  s.run_until(at_ms(5500));
  s.restart(e1);  // kill -9 and start again: new MI, a fresh SecY
  EXPECT_NE(s.p(e1).mi(), old_mi);
  const std::uint64_t restarted = static_cast<std::uint64_t>(s.now.ns());
  s.run_until(at_ms(9000));
  const Event* lost = s.last_event(z, EventType::kPeerLost);
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->mi, old_mi);
  EXPECT_EQ(lost->loss, PeerLossReason::kSuperseded);
  for (const auto& pi : s.p(z).peers()) EXPECT_NE(pi.mi, old_mi);
  const std::string after = expect_converged(s);
  EXPECT_NE(after, before);
  std::printf("restart: the restarted member's first protected frame %llu ms after it started\n",
              static_cast<unsigned long long>(ms_of(s.nodes[e1].first_delivery_ns - restarted)));
  // Replaying the dead incarnation's MKPDUs changes nothing.
  const std::uint64_t saks = s.p(z).stats().saks_generated;
  for (const auto& f : recorded) s.inject(z, f);
  EXPECT_EQ(s.p(z).stats().drop(DropReason::kSupersededMi), recorded.size());
  for (const auto& f : recorded) s.inject(e1, f);
  EXPECT_EQ(s.p(e1).stats().drop(DropReason::kOwnSci), recorded.size());
  s.run_until(at_ms(15000));
  EXPECT_EQ(s.p(z).stats().saks_generated, saks);
  EXPECT_EQ(expect_converged(s), after);
}

TEST(MkaParticipant, RestartedKeyServerTakesOverAgainWithANewSak) {
  Sim s;
  const auto z = s.add("zonal", sci_of(0x10), 1);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer);
  const auto e2 = s.add("ecu2", sci_of(0x22), kNeverKeyServer);
  for (const auto i : {z, e1, e2}) s.start(i);
  s.run_until(at_ms(5000));
  const std::string before = expect_converged(s);
  const std::uint8_t old_an = *s.secy(e1).encoding;
  s.kill(z);
  s.run_until(at_ms(5200));
  s.restart(z);
  s.run_until(at_ms(12000));
  for (const auto i : {e1, e2}) {
    EXPECT_EQ(s.p(i).key_server_sci(), sci_of(0x10));
    EXPECT_EQ(s.last_event(i, EventType::kPeerLost)->loss, PeerLossReason::kSuperseded);
  }
  const std::string after = expect_converged(s);
  EXPECT_NE(after, before);
  // The new key server knew nothing, yet chose an AN the CA was not using.
  EXPECT_NE(*s.secy(z).encoding, old_an);
  EXPECT_EQ(s.nodes[e1].data_lost + s.nodes[e2].data_lost, 0u);
}

TEST(MkaParticipant, XpnGivesEveryTransmitterItsOwnSsciAndOneSalt) {
  Sim s;
  auto xpn = [](ParticipantConfig& c) { c.cipher_suite = CipherSuite::kGcmAesXpn128; };
  const auto z = s.add("zonal", sci_of(0x10), 1, xpn);
  const auto e1 = s.add("ecu1", sci_of(0x21), kNeverKeyServer, xpn);
  const auto e2 = s.add("ecu2", sci_of(0x22), kNeverKeyServer, xpn);
  for (const auto i : {z, e1, e2}) s.start(i);
  s.run_until(at_ms(20000));
  expect_converged(s);
  std::set<std::uint32_t> sscis;
  const Salt salt = s.secy(z).encoding_sa()->salt;
  for (const auto p : {z, e1, e2}) {
    const auto* tx = s.secy(p).encoding_sa();
    sscis.insert(tx->ssci);
    EXPECT_NE(tx->ssci, 0u);
    EXPECT_EQ(tx->salt, salt);
    EXPECT_EQ(tx->salt, xpn_salt(tx->ki));
    for (const auto q : {z, e1, e2}) {
      if (q == p) continue;
      const auto* rx = s.secy(q).rx_sa(s.nodes[p].sci, *s.secy(p).encoding);
      ASSERT_NE(rx, nullptr);
      EXPECT_EQ(rx->ssci, tx->ssci) << s.nodes[q].name << " receiving " << s.nodes[p].name;
      EXPECT_EQ(rx->salt, salt);
      EXPECT_EQ(rx->suite, CipherSuite::kGcmAesXpn128);
    }
  }
  EXPECT_EQ(sscis.size(), 3u);
  // The greatest SCI gets SSCI 1.
  EXPECT_EQ(s.secy(e2).encoding_sa()->ssci, 1u);
  EXPECT_EQ(s.secy(z).encoding_sa()->ssci, 3u);
  EXPECT_EQ(s.total_lost(), 0u);
}

// A GCM nonce is (SSCI || PN) XOR salt: two transmitters with one SSCI under
// one SAK would reuse nonces. Members join at different times (so their
// live views differ while a SAK is distributed) and rekeys follow: under
// every SAK, every transmitter has its own SSCI and every receiver uses it.
TEST(MkaParticipant, XpnSscisNeverCollideWhileMembersJoin) {
  Sim s;
  auto xpn = [](ParticipantConfig& c) {
    c.cipher_suite = CipherSuite::kGcmAesXpn128;
    c.rekey_interval = Duration::seconds(7);
  };
  const auto z = s.add("zonal", sci_of(0x10), 1, xpn);
  std::vector<std::size_t> ecus;
  for (std::uint8_t i = 0; i < 4; ++i) ecus.push_back(s.add("ecu", sci_of(static_cast<std::uint8_t>(0x30 - i)), kNeverKeyServer, xpn));
  s.start(z);
  s.start(ecus[0]);
  s.run_until(at_ms(3));  // z is distributing the first SAK
  s.start(ecus[1]);
  s.run_until(at_ms(4));
  s.start(ecus[2]);
  s.run_until(at_ms(2000));
  s.start(ecus[3]);
  s.run_until(at_ms(30000));
  expect_converged(s);
  EXPECT_EQ(s.total_lost(), 0u);
  std::map<std::string, std::map<std::uint64_t, std::uint32_t>> tx_ssci;  // SAK -> SCI -> SSCI
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    for (const auto& c : s.secy(i).calls) {
      if (c.type != SaActionType::kInstallTxSa) continue;
      auto [it, fresh] = tx_ssci[c.fingerprint].emplace(s.nodes[i].sci, c.ssci);
      if (!fresh) {
        EXPECT_EQ(it->second, c.ssci);
      }
    }
  }
  EXPECT_GE(tx_ssci.size(), 4u);
  for (const auto& [fp, by_sci] : tx_ssci) {
    std::set<std::uint32_t> seen;
    for (const auto& [sci, ssci] : by_sci) {
      EXPECT_NE(ssci, 0u);
      EXPECT_TRUE(seen.insert(ssci).second) << "two transmitters with SSCI " << ssci;
    }
  }
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    for (const auto& c : s.secy(i).calls) {
      if (c.type != SaActionType::kInstallRxSa) continue;
      const auto& by_sci = tx_ssci[c.fingerprint];
      const auto it = by_sci.find(c.sci);
      if (it != by_sci.end()) {
        EXPECT_EQ(c.ssci, it->second) << s.nodes[i].name;
      }
    }
  }
}

TEST(MkaParticipant, Gcm256WithConfidentialityOffset30) {
  Sim s;
  s.cak_len = 32;
  auto cfg = [](ParticipantConfig& c) {
    c.cipher_suite = CipherSuite::kGcmAes256;
    c.confidentiality_offset = ConfidentialityOffset::kOffset30;
  };
  const auto a = s.add("a", sci_of(1), 10, cfg);
  const auto b = s.add("b", sci_of(2), 20, cfg);
  s.start(a);
  s.start(b);
  s.run_until(at_ms(3000));
  expect_converged(s);
  for (const auto i : {a, b}) {
    EXPECT_EQ(s.secy(i).encoding_sa()->offset, ConfidentialityOffset::kOffset30);
    EXPECT_EQ(s.secy(i).rx.begin()->second.suite, CipherSuite::kGcmAes256);
  }
  EXPECT_EQ(s.p(a).preview_mkpdu().sak_use->latest.kn + s.p(a).preview_mkpdu().sak_use->old.kn, 1u);
}

TEST(MkaParticipant, StopRemovesEverySaAndPeersLoseIt) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  const auto b = s.add("b", sci_of(2), 20);
  s.start(a);
  s.start(b);
  s.run_until(at_ms(3000));
  expect_converged(s);
  const MemberId mi = s.p(b).mi();
  s.apply(b, s.p(b).stop(s.now));
  s.nodes[b].up = false;
  EXPECT_TRUE(s.secy(b).rx.empty());
  EXPECT_TRUE(s.secy(b).tx.empty());
  EXPECT_FALSE(s.secy(b).encoding.has_value());
  EXPECT_EQ(s.p(b).state(), ParticipantState::kIdle);
  EXPECT_NE(s.p(b).mi(), mi);
  s.run_until(at_ms(12000));
  EXPECT_EQ(s.p(a).live_peer_count(), 0u);
  EXPECT_EQ(s.p(a).state(), ParticipantState::kSearching);
  // Alone: nothing protected goes out on a key the departed member holds.
  EXPECT_FALSE(s.secy(a).encoding.has_value());
  EXPECT_TRUE(s.secy(a).rx.empty());
}

TEST(MkaParticipant, SecYRefusalIsReportedAndRetried) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  const auto b = s.add("b", sci_of(2), 20);
  s.secy(b).fail_install_rx = SecYError::kBackend;
  s.start(a);
  s.start(b);
  s.run_until(at_ms(5000));
  EXPECT_EQ(s.count_events(b, EventType::kSecYError), 1u);
  EXPECT_GE(s.p(b).stats().secy_errors, 1u);
  expect_converged(s);
  EXPECT_EQ(s.total_lost(), 0u);
}

}  // namespace
}  // namespace layersec::mka
