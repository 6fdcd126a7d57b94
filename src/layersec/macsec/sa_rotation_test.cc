// Runtime SA switching (sa_rotation.h): install the next SA on both sides
// while frames flow, switch the encoding SA between two frames, keep the old
// receive SA until the peer's frames arrive on the new AN (plus the retire
// delay) or the timeout passes, recover from PN exhaustion by switching, and
// refuse unsafe updates without touching the SecY. Time is injected.
#include "layersec/macsec/sa_rotation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layersec/macsec/link.h"

namespace layersec::macsec {
namespace {

const net::MacAddress kMacA = net::MacAddress::local(0x5a01);
const net::MacAddress kMacB = net::MacAddress::local(0x5b01);
const Sci kSciA = Sci::from_parts(kMacA.bytes.data(), 1);
const Sci kSciB = Sci::from_parts(kMacB.bytes.data(), 1);

TimePoint at_ms(std::int64_t ms) { return TimePoint::from_ns(ms * 1000000); }

std::vector<std::uint8_t> key(std::uint8_t seed) {
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed * 17 + i * 5 + 3);
  return k;
}

SaConfig sa(std::uint8_t an, std::uint8_t key_seed, std::uint64_t pn = 1, std::string pointer = "/sa") {
  SaConfig s;
  s.an = an;
  s.pn = pn;
  const auto k = key(key_seed);
  s.sak = SecretBytes(ByteSpan(k.data(), k.size()));
  s.pointer = std::move(pointer);
  return s;
}

struct SaSpec {
  std::uint8_t an;
  std::uint8_t key_seed;
  std::uint64_t pn = 1;
};

// A node's configuration: transmit SAs, encoding AN, one receive SC (the peer).
LinkConfig config(Sci self, Sci peer, const std::vector<SaSpec>& tx, std::uint8_t encoding,
                  const std::vector<SaSpec>& rx) {
  LinkConfig c;
  c.sci = self;
  c.secy.sci = self;
  for (std::size_t i = 0; i < tx.size(); ++i)
    c.tx_sas.push_back(sa(tx[i].an, tx[i].key_seed, tx[i].pn, "/tx/sas/" + std::to_string(i)));
  c.encoding_an = encoding;
  RxScConfig sc;
  sc.sci = peer;
  sc.pointer = "/rx/0";
  for (std::size_t i = 0; i < rx.size(); ++i)
    sc.sas.push_back(sa(rx[i].an, rx[i].key_seed, rx[i].pn, "/rx/0/sas/" + std::to_string(i)));
  c.rx_scs.push_back(std::move(sc));
  return c;
}

std::vector<std::uint8_t> plain_from(const net::MacAddress& src, const net::MacAddress& dst, std::uint8_t tag) {
  std::vector<std::uint8_t> f(dst.bytes.begin(), dst.bytes.end());
  f.insert(f.end(), src.bytes.begin(), src.bytes.end());
  f.push_back(0x08);
  f.push_back(0x00);
  for (int i = 0; i < 46; ++i) f.push_back(static_cast<std::uint8_t>(tag + i));
  return f;
}

// One frame from `tx` (a SecY) in flight: the secure bytes.
std::vector<std::uint8_t> send(MacsecLink& tx, const net::MacAddress& src, const net::MacAddress& dst,
                               std::uint8_t tag = 0) {
  auto secure = tx.protect(plain_from(src, dst, tag));
  EXPECT_TRUE(secure.has_value());
  return secure ? std::vector<std::uint8_t>(secure->begin(), secure->end()) : std::vector<std::uint8_t>{};
}

bool deliver(MacsecLink& rx, std::vector<std::uint8_t> wire) {
  return rx.validate(MutableByteSpan(wire.data(), wire.size())).has_value();
}

std::uint8_t an_of(const std::vector<std::uint8_t>& secure) { return secure.at(14) & 0x03; }

bool has(const std::vector<RotationAction>& actions, RotationAction::Kind k, std::uint8_t an) {
  for (const auto& a : actions)
    if (a.kind == k && a.an == an) return true;
  return false;
}

TEST(SaRotation, SwitchWhileTrafficFlowsLosesNothingAndRetiresTheOldSa) {
  // A sends with key 1, B with key 2 (AN 0); the next epoch is keys 3 / 4 at AN 1.
  LinkConfig ca0 = config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2}});
  LinkConfig cb0 = config(kSciB, kSciA, {{0, 2}}, 0, {{0, 1}});
  MacsecLink a(make_secy(ca0, kMacA));
  MacsecLink b(make_secy(cb0, kMacB));
  SaRotation ra(ca0, kSciA);
  SaRotation rb(cb0, kSciB);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(deliver(b, send(a, kMacA, kMacB)));
    ASSERT_TRUE(deliver(a, send(b, kMacB, kMacA)));
  }

  // Step 1 on both: the next SAs installed, the encoding SA unchanged.
  auto act = ra.apply(a.secy(), config(kSciA, kSciB, {{0, 1}, {1, 3}}, 0, {{0, 2}, {1, 4}}), kSciA, at_ms(1000));
  EXPECT_TRUE(has(act, RotationAction::Kind::kTxSaInstalled, 1));
  EXPECT_TRUE(has(act, RotationAction::Kind::kRxSaInstalled, 1));
  EXPECT_FALSE(has(act, RotationAction::Kind::kEncodingSaSwitched, 1));
  EXPECT_EQ(act.size(), 2u);
  act = rb.apply(b.secy(), config(kSciB, kSciA, {{0, 2}, {1, 4}}, 0, {{0, 1}, {1, 3}}), kSciB, at_ms(1000));
  EXPECT_EQ(act.size(), 2u);
  EXPECT_EQ(a.secy().tx_sa_status(0).next_pn, 6u);  // the running SA kept its PN
  auto a_in_flight = send(a, kMacA, kMacB);          // AN 0, delivered after A switched

  // Step 2 on A: switch to AN 1 and drop AN 0.
  act = ra.apply(a.secy(), config(kSciA, kSciB, {{1, 3}}, 1, {{1, 4}}), kSciA, at_ms(2000));
  EXPECT_TRUE(has(act, RotationAction::Kind::kEncodingSaSwitched, 1));
  EXPECT_TRUE(has(act, RotationAction::Kind::kTxSaRemoved, 0));
  EXPECT_TRUE(has(act, RotationAction::Kind::kRxSaRetireScheduled, 0));
  EXPECT_EQ(a.secy().encoding_an(), 1u);
  EXPECT_FALSE(a.secy().tx_sa_status(0).installed);
  auto first_new = send(a, kMacA, kMacB);
  EXPECT_EQ(an_of(first_new), 1u);
  ASSERT_TRUE(deliver(b, first_new));
  ASSERT_TRUE(deliver(b, a_in_flight));  // B still has A's AN 0
  // B has not switched: A keeps accepting AN 0 (no timeout yet).
  EXPECT_TRUE(ra.poll(a.secy(), at_ms(10000)).empty());
  ASSERT_TRUE(deliver(a, send(b, kMacB, kMacA)));
  EXPECT_TRUE(ra.poll(a.secy(), at_ms(11000)).empty());
  EXPECT_EQ(ra.pending_retirements(), 1u);

  auto b_in_flight = send(b, kMacB, kMacA);  // AN 0, delivered after B switched
  // Step 2 on B.
  act = rb.apply(b.secy(), config(kSciB, kSciA, {{1, 4}}, 1, {{1, 3}}), kSciB, at_ms(12000));
  EXPECT_TRUE(has(act, RotationAction::Kind::kEncodingSaSwitched, 1));
  // B already received A's AN 1 frames before the request: retire after the
  // next new-AN frame seen after the request, plus the delay.
  EXPECT_TRUE(rb.poll(b.secy(), at_ms(12000)).empty());
  ASSERT_TRUE(deliver(b, send(a, kMacA, kMacB)));
  EXPECT_TRUE(rb.poll(b.secy(), at_ms(12100)).empty());  // seen now; delay 1 s

  ASSERT_TRUE(deliver(a, send(b, kMacB, kMacA)));  // first AN 1 frame from B
  EXPECT_TRUE(ra.poll(a.secy(), at_ms(12500)).empty());
  ASSERT_TRUE(deliver(a, b_in_flight));  // a late AN 0 frame still validates
  EXPECT_TRUE(ra.poll(a.secy(), at_ms(13000)).empty());
  act = ra.poll(a.secy(), at_ms(13500));
  ASSERT_EQ(act.size(), 1u);
  EXPECT_EQ(act[0].kind, RotationAction::Kind::kRxSaRetired);
  EXPECT_EQ(act[0].an, 0u);
  EXPECT_EQ(act[0].sci, kSciB);
  EXPECT_FALSE(a.secy().rx_sa_status(kSciB, 0).installed);
  act = rb.poll(b.secy(), at_ms(13500));
  ASSERT_EQ(act.size(), 1u);
  EXPECT_EQ(act[0].kind, RotationAction::Kind::kRxSaRetired);

  // Nothing was lost or rejected during the switch.
  EXPECT_EQ(a.secy().stats().InPktsOK, 5u + 1 + 1 + 1);
  EXPECT_EQ(b.secy().stats().InPktsOK, 5u + 3);
  EXPECT_EQ(a.secy().stats().InPktsNotUsingSA + a.secy().stats().InPktsNotValid, 0u);
  EXPECT_EQ(b.secy().stats().InPktsNotUsingSA + b.secy().stats().InPktsNotValid, 0u);
  EXPECT_EQ(a.secy().rx_sa_status(kSciB, 1).stats.InPktsOK, 1u);
  // After retirement an AN 0 frame (a replay of B's old one) is not used.
  auto replay = b_in_flight;
  EXPECT_FALSE(deliver(a, replay));
  EXPECT_EQ(a.secy().stats().InPktsNotUsingSA, 1u);
  EXPECT_EQ(a.secy().rx_sc_stats(kSciB)->InPktsNotUsingSA, 1u);
}

TEST(SaRotation, PnExhaustionSignalsAndTheSwitchRestartsTransmission) {
  const std::uint64_t last = 0xFFFFFFFFULL;
  LinkConfig ca = config(kSciA, kSciB, {{0, 1, last - 1}}, 0, {{0, 2}});
  LinkConfig cb = config(kSciB, kSciA, {{0, 2}}, 0, {{0, 1, last - 1}, {1, 3}});
  MacsecLink a(make_secy(ca, kMacA));
  MacsecLink b(make_secy(cb, kMacB));
  SaRotation ra(ca, kSciA);
  EXPECT_TRUE(a.secy().new_sa_needed());  // past the rekey threshold already
  ASSERT_TRUE(deliver(b, send(a, kMacA, kMacB)));  // PN 2^32-2
  ASSERT_TRUE(deliver(b, send(a, kMacA, kMacB)));  // PN 2^32-1, the last
  EXPECT_TRUE(a.secy().tx_sa_status(0).exhausted);
  EXPECT_FALSE(a.protect(plain_from(kMacA, kMacB, 0)).has_value());
  EXPECT_EQ(a.stats().tx_protect_errors, 1u);
  EXPECT_TRUE(a.secy().new_sa_needed());
  EXPECT_TRUE(a.stats_json()["tx_sa"]["new_sa_needed"].get<bool>());
  // The signal is acted on: new SA at AN 1, switch, old one dropped.
  auto act = ra.apply(a.secy(), config(kSciA, kSciB, {{1, 3}}, 1, {{0, 2}}), kSciA, at_ms(0));
  EXPECT_TRUE(has(act, RotationAction::Kind::kEncodingSaSwitched, 1));
  EXPECT_TRUE(has(act, RotationAction::Kind::kTxSaRemoved, 0));
  EXPECT_FALSE(a.secy().new_sa_needed());
  auto f = send(a, kMacA, kMacB);
  EXPECT_EQ(an_of(f), 1u);
  ASSERT_TRUE(deliver(b, f));
  EXPECT_EQ(b.secy().rx_sa_status(kSciA, 1).stats.InPktsOK, 1u);
  EXPECT_EQ(b.secy().rx_sa_status(kSciA, 0).stats.InPktsOK, 2u);
  // Applying the same configuration again changes nothing.
  LinkConfig c2 = config(kSciA, kSciB, {{1, 3}}, 1, {{0, 2}});
  EXPECT_TRUE(ra.apply(a.secy(), c2, kSciA, at_ms(1)).empty());
}

// Every refused update leaves the SecY exactly as it was.
TEST(SaRotation, UnsafeOrImpossibleUpdatesAreRefusedWithoutChange) {
  LinkConfig ca = config(kSciA, kSciB, {{0, 1}, {1, 5}}, 0, {{0, 2}});
  MacsecLink a(make_secy(ca, kMacA));
  MacsecLink b(make_secy(config(kSciB, kSciA, {{0, 2}}, 0, {{0, 1}}), kMacB));
  SaRotation ra(ca, kSciA);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(deliver(b, send(a, kMacA, kMacB)));
  // Switch to AN 1 and drop AN 0 (key 1 is now retired for transmission).
  ra.apply(a.secy(), config(kSciA, kSciB, {{1, 5}}, 1, {{0, 2}}), kSciA, at_ms(0));
  const std::string before = a.stats_json().dump();

  auto expect_refused = [&](const LinkConfig& next, Sci sci, const std::string& pointer_prefix) {
    try {
      ra.apply(a.secy(), next, sci, at_ms(5));
      ADD_FAILURE() << "update accepted: " << pointer_prefix;
    } catch (const LinkConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(pointer_prefix, 0), 0u) << e.what();
    }
    EXPECT_EQ(a.stats_json().dump(), before);
    EXPECT_EQ(a.secy().encoding_an(), 1u);
  };
  // The encoding SA's key changed in place.
  expect_refused(config(kSciA, kSciB, {{1, 6}}, 1, {{0, 2}}), kSciA, "/tx/sas/0/key_file");
  // Key 1 (used on AN 0 before) installed again at AN 2: its PNs would repeat.
  expect_refused(config(kSciA, kSciB, {{1, 5}, {2, 1}}, 1, {{0, 2}}), kSciA, "/tx/sas/1/key_file");
  // The same new key twice.
  expect_refused(config(kSciA, kSciB, {{1, 5}, {2, 9}, {3, 9}}, 1, {{0, 2}}), kSciA, "/tx/sas/2/key_file");
  // Settings that need a restart.
  LinkConfig suite = config(kSciA, kSciB, {{1, 5}}, 1, {{0, 2}});
  suite.secy.suite = CipherSuite::kGcmAes256;
  expect_refused(suite, kSciA, "/cipher_suite");
  expect_refused(config(kSciB, kSciB, {{1, 5}}, 1, {{0, 2}}), kSciB, "/sci");
  LinkConfig integ = config(kSciA, kSciB, {{1, 5}}, 1, {{0, 2}});
  integ.secy.confidentiality = false;
  expect_refused(integ, kSciA, "/confidentiality");
  // Traffic still flows on AN 1.
  EXPECT_EQ(an_of(send(a, kMacA, kMacB)), 1u);
}

TEST(SaRotation, TimeoutRetiresWhenThePeerNeverSwitchesAndZeroWaitsForFrames) {
  LinkConfig ca = config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2}, {1, 4}});
  ca.rx_retire_timeout_ms = 5000;
  MacsecLink a(make_secy(ca, kMacA));
  SaRotation ra(ca, kSciA);
  LinkConfig next = config(kSciA, kSciB, {{0, 1}}, 0, {{1, 4}});
  next.rx_retire_timeout_ms = 5000;
  auto act = ra.apply(a.secy(), next, kSciA, at_ms(1000));
  ASSERT_TRUE(has(act, RotationAction::Kind::kRxSaRetireScheduled, 0));
  EXPECT_TRUE(ra.poll(a.secy(), at_ms(5999)).empty());
  act = ra.poll(a.secy(), at_ms(6000));
  ASSERT_EQ(act.size(), 1u);
  EXPECT_EQ(act[0].kind, RotationAction::Kind::kRxSaRetiredTimeout);
  EXPECT_FALSE(a.secy().rx_sa_status(kSciB, 0).installed);
  EXPECT_TRUE(a.secy().rx_sa_status(kSciB, 1).installed);

  // timeout 0: only frames on a newer SA retire it.
  LinkConfig c0 = config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2}, {1, 4}});
  c0.rx_retire_timeout_ms = 0;
  MacsecLink a0(make_secy(c0, kMacA));
  MacsecLink b0(make_secy(config(kSciB, kSciA, {{1, 4}}, 1, {{0, 1}}), kMacB));
  SaRotation r0(c0, kSciA);
  LinkConfig n0 = config(kSciA, kSciB, {{0, 1}}, 0, {{1, 4}});
  n0.rx_retire_timeout_ms = 0;
  r0.apply(a0.secy(), n0, kSciA, at_ms(0));
  EXPECT_TRUE(r0.poll(a0.secy(), at_ms(3600LL * 1000)).empty());
  ASSERT_TRUE(deliver(a0, send(b0, kMacB, kMacA)));
  EXPECT_TRUE(r0.poll(a0.secy(), at_ms(3600LL * 1000 + 1)).empty());
  EXPECT_EQ(r0.poll(a0.secy(), at_ms(3601LL * 1000 + 1)).size(), 1u);
}

TEST(SaRotation, LowestPnRaisedListingAgainCancelsRetirementAndScsComeAndGo) {
  LinkConfig ca = config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2}, {1, 4}});
  MacsecLink a(make_secy(ca, kMacA));
  SaRotation ra(ca, kSciA);
  // Unchanged SA with a higher configured PN: its lowest acceptable PN rises.
  auto act = ra.apply(a.secy(), config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2, 100}, {1, 4}}), kSciA, at_ms(0));
  ASSERT_EQ(act.size(), 1u);
  EXPECT_EQ(act[0].kind, RotationAction::Kind::kRxSaLowestPnRaised);
  EXPECT_EQ(a.secy().rx_sa_status(kSciB, 0).lowest_pn, 100u);
  // A lower configured PN later does not lower it (and is not an error).
  act = ra.apply(a.secy(), config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2, 1}, {1, 4}}), kSciA, at_ms(1));
  EXPECT_TRUE(act.empty());
  EXPECT_EQ(a.secy().rx_sa_status(kSciB, 0).lowest_pn, 100u);
  // Dropped, then listed again before it was retired: the retirement is cancelled.
  ra.apply(a.secy(), config(kSciA, kSciB, {{0, 1}}, 0, {{1, 4}}), kSciA, at_ms(2));
  EXPECT_EQ(ra.pending_retirements(), 1u);
  ra.apply(a.secy(), config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2, 100}, {1, 4}}), kSciA, at_ms(3));
  EXPECT_EQ(ra.pending_retirements(), 0u);
  EXPECT_TRUE(ra.poll(a.secy(), at_ms(10LL * 60 * 1000)).empty());
  EXPECT_TRUE(a.secy().rx_sa_status(kSciB, 0).installed);
  // A second peer appears, then the first one goes; validate_frames changes at run time.
  const Sci kSciC{0x020000005c010001ULL};
  LinkConfig two = config(kSciA, kSciC, {{0, 1}}, 0, {{0, 7}});
  two.secy.validate_frames = ValidateFrames::kCheck;
  act = ra.apply(a.secy(), two, kSciA, at_ms(4));
  EXPECT_TRUE(has(act, RotationAction::Kind::kRxScAdded, 0));
  EXPECT_TRUE(has(act, RotationAction::Kind::kRxScRemoved, 0));
  EXPECT_TRUE(has(act, RotationAction::Kind::kSettingChanged, 0));
  EXPECT_EQ(a.secy().rx_scis(), std::vector<Sci>{kSciC});
  EXPECT_EQ(a.secy().config().validate_frames, ValidateFrames::kCheck);
  // The per-SC JSON lists the new SC with its SA.
  const auto j = per_sc_json(a.secy());
  ASSERT_EQ(j["rx_scs"].size(), 1u);
  EXPECT_EQ(j["rx_scs"][0]["sci"], "020000005c010001");
  EXPECT_EQ(j["rx_scs"][0]["sas"][0]["an"], 0);
}

}  // namespace
}  // namespace layersec::macsec

namespace layersec::macsec {
namespace {

// With a PnStore, a reload that brings a key without PN state is refused as
// a whole (nothing changes) unless the SA says "new_key"; with it the SA is
// installed and its record created, so the next start resumes after it.
TEST(SaRotation, ReloadNeedsPnStateOrNewKeyForEveryNewSa) {
  MemoryPnStore store;
  LinkConfig c0 = config(kSciA, kSciB, {{0, 1}}, 0, {{0, 2}});
  MacsecLink a(make_secy(c0, kMacA, &store, /*all_keys_new=*/true));
  SaRotation r(c0, kSciA);
  const std::size_t records = store.size();

  LinkConfig c1 = config(kSciA, kSciB, {{0, 1}, {1, 3}}, 0, {{0, 2}, {1, 4}});
  try {
    (void)r.apply(a.secy(), c1, kSciA, at_ms(0));
    FAIL() << "a reload with keys without PN state was applied";
  } catch (const LinkConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("/tx/sas/1/key_file: no PN state for key id ", 0), 0u) << m;
  }
  EXPECT_FALSE(a.secy().tx_sa_status(1).installed);
  EXPECT_FALSE(a.secy().rx_sa_status(kSciB, 1).installed);
  EXPECT_EQ(store.size(), records);

  c1.tx_sas[1].new_key = true;
  c1.rx_scs[0].sas[1].new_key = true;
  auto actions = r.apply(a.secy(), c1, kSciA, at_ms(0));
  EXPECT_TRUE(has(actions, RotationAction::Kind::kTxSaInstalled, 1));
  EXPECT_TRUE(has(actions, RotationAction::Kind::kRxSaInstalled, 1));
  EXPECT_EQ(store.size(), records + 2);

  // The state file path and the reserve block are fixed while running.
  LinkConfig c2 = config(kSciA, kSciB, {{0, 1}, {1, 3}}, 0, {{0, 2}, {1, 4}});
  c2.pn_reserve_block = 7;
  EXPECT_THROW((void)r.apply(a.secy(), c2, kSciA, at_ms(0)), LinkConfigError);
}

}  // namespace
}  // namespace layersec::macsec
