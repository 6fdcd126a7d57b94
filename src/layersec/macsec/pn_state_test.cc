// PN persistence in the SecY core (pn_state.h) with an in-memory store: the
// attacks of issue 13 item 8 replayed in-process. A "crash" is dropping the
// SecY without persist_pn_state() and building a new one on the same store;
// a clean shutdown calls persist_pn_state() first.
#include "layersec/macsec/pn_state.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "layersec/macsec/secy.h"

namespace layersec::macsec {
namespace {

const std::uint8_t kSrc[6] = {0x02, 0x00, 0x00, 0x78, 0x00, 0x01};
const Sci kTxSci = Sci::from_parts(kSrc, 1);
const Sci kRxOwnSci{0x0200007800020001ULL};

std::vector<std::uint8_t> key(CipherSuite s, std::uint8_t seed) {
  std::vector<std::uint8_t> k(sak_size(s));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed + 13 * i);
  return k;
}

SaKeys keys_of(const std::vector<std::uint8_t>& k) {
  SaKeys keys;
  keys.sak = k;
  keys.ssci = 0x00000007;
  for (std::size_t i = 0; i < kSaltSize; ++i) keys.salt[i] = static_cast<std::uint8_t>(0x5A ^ i);
  return keys;
}

std::vector<std::uint8_t> plain(std::size_t n, std::uint8_t fill) {
  std::vector<std::uint8_t> f = {0x02, 0x00, 0x00, 0x78, 0x00, 0x02, 0x02, 0x00, 0x00, 0x78, 0x00, 0x01, 0x08, 0x00};
  f.resize(14 + n, fill);
  return f;
}

SecYConfig config(CipherSuite suite, Sci sci) {
  SecYConfig c;
  c.suite = suite;
  c.sci = sci;
  return c;
}

// A transmitter on `store` (block `block`), resuming or new.
SecY transmitter(CipherSuite suite, PnStore& store, std::uint64_t block, const std::vector<std::uint8_t>& k,
                 PnStart start, std::uint64_t first_pn = 1, std::uint8_t an = 0) {
  SecY y(config(suite, kTxSci));
  y.set_pn_store(&store, block);
  auto st = y.install_tx_sa(an, keys_of(k), first_pn, start);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : to_string(st.error()));
  EXPECT_TRUE(y.set_encoding_sa(an).ok());
  return y;
}

SecY receiver(CipherSuite suite, PnStore* store, std::uint64_t block, const std::vector<std::uint8_t>& k,
              PnStart start, std::uint64_t lowest = 1) {
  SecY y(config(suite, kRxOwnSci));
  if (store != nullptr) y.set_pn_store(store, block);
  EXPECT_TRUE(y.add_rx_sc(kTxSci).ok());
  auto st = y.install_rx_sa(kTxSci, 0, keys_of(k), lowest, start);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : to_string(st.error()));
  return y;
}

// Protects `n` frames and returns them; their PNs go to `pns`.
std::vector<std::vector<std::uint8_t>> send(SecY& y, int n, std::vector<std::uint64_t>& pns) {
  std::vector<std::vector<std::uint8_t>> frames;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t pn = y.tx_sa_status(y.encoding_an()).next_pn;
    const auto p = plain(40, static_cast<std::uint8_t>(i));
    std::vector<std::uint8_t> out(p.size() + 32);
    auto r = y.protect(p, out);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : to_string(r.error()));
    if (!r) break;
    out.resize(*r);
    pns.push_back(pn);
    frames.push_back(std::move(out));
  }
  return frames;
}

// Validates copies of `frames`; returns how many were delivered as verified.
int receive(SecY& y, const std::vector<std::vector<std::uint8_t>>& frames) {
  int ok = 0;
  for (auto f : frames) {
    auto r = y.validate(f);
    ok += (r.ok() && r->verified()) ? 1 : 0;
  }
  return ok;
}

class PnStateSuites : public ::testing::TestWithParam<CipherSuite> {};

// Attack 8a: a restarted transmitter with the same static SAK started at PN 1
// again (1,408 PNs reused). With a store, crash after crash, no PN repeats.
TEST_P(PnStateSuites, TransmitterRestartsNeverReuseAPn) {
  const CipherSuite suite = GetParam();
  const auto k = key(suite, 1);
  MemoryPnStore store;
  std::vector<std::uint64_t> pns;
  // The XPN case starts just below 2^32 so that the run crosses the 32-bit boundary.
  const std::uint64_t first = is_xpn(suite) ? 0xFFFFFFF0ULL : 1;
  {
    SecY y = transmitter(suite, store, 16, k, PnStart::kNewKey, first);
    send(y, 37, pns);
  }  // crash: no clean save
  for (int restart = 0; restart < 3; ++restart) {
    SecY y = transmitter(suite, store, 16, k, PnStart::kResume);
    EXPECT_TRUE(y.tx_sa_status(0).pn_resumed);
    const std::uint64_t resumed_at = y.tx_sa_status(0).next_pn;
    EXPECT_GT(resumed_at, pns.back());
    send(y, 21, pns);
    if (restart == 2) {
      // Clean shutdown: the exact PN, so the next start loses nothing.
      ASSERT_TRUE(y.persist_pn_state().ok());
      const std::uint64_t last = pns.back();
      SecY again = transmitter(suite, store, 16, k, PnStart::kResume);
      EXPECT_EQ(again.tx_sa_status(0).next_pn, last + 1);
    }
  }
  const std::set<std::uint64_t> unique(pns.begin(), pns.end());
  EXPECT_EQ(unique.size(), pns.size()) << "a PN was used twice under the same SAK and SCI";
  EXPECT_EQ(pns.size(), 37u + 3 * 21u);
  if (is_xpn(suite)) {
    EXPECT_GT(pns.back(), 0xFFFFFFFFULL);
  }
  // Saves happen once per block of 16, not per frame.
  EXPECT_LT(store.saves(), pns.size() / 4);
}

// Attack 8b: a restarted receiver accepted 1,002 of 1,002 frames recorded
// before the restart. After a crash or a clean restart it accepts none of
// the frames it accepted before, and still accepts new traffic.
TEST_P(PnStateSuites, ReceiverRestartRejectsFramesAcceptedBeforeIt) {
  const CipherSuite suite = GetParam();
  const auto k = key(suite, 2);
  MemoryPnStore tx_store;
  MemoryPnStore rx_store;
  const std::uint64_t first = is_xpn(suite) ? 0xFFFFFFC0ULL : 1;
  SecY tx = transmitter(suite, tx_store, 1000, k, PnStart::kNewKey, first);
  std::vector<std::uint64_t> pns;
  const auto recorded = send(tx, 100, pns);

  for (const bool clean : {false, true}) {
    SCOPED_TRACE(clean ? "clean shutdown" : "crash");
    rx_store.clear();
    {
      SecY rx = receiver(suite, &rx_store, 16, k, PnStart::kNewKey, first);
      ASSERT_EQ(receive(rx, {recorded.begin(), recorded.begin() + 60}), 60);
      if (clean) {
        ASSERT_TRUE(rx.persist_pn_state().ok());
      }
    }
    SecY rx = receiver(suite, &rx_store, 16, k, PnStart::kResume, first);
    EXPECT_TRUE(rx.rx_sa_status(kTxSci, 0).pn_resumed);
    // Every frame accepted before the restart, re-injected: all refused, counted late.
    EXPECT_EQ(receive(rx, {recorded.begin(), recorded.begin() + 60}), 0);
    // Counted late, or for XPN when the lowest PN has crossed a 2^32
    // boundary NotValid: 10.6.2 recovers such an old 32-bit PN field as one
    // 2^32 ahead, and the ICV then fails.
    EXPECT_EQ(rx.stats().InPktsLate + rx.stats().InPktsNotValid, 60u);
    if (!is_xpn(suite)) {
      EXPECT_EQ(rx.stats().InPktsLate, 60u);
    }
    EXPECT_EQ(rx.stats().InPktsOK, 0u);
    // Frames it never accepted: after a clean shutdown all of them; after a
    // crash those above the reserved block (at most one block is lost).
    const int fresh = receive(rx, {recorded.begin() + 60, recorded.end()});
    if (clean) {
      EXPECT_EQ(fresh, 40);
    } else {
      EXPECT_GE(fresh, 40 - 16);
      EXPECT_LT(fresh, 40);
    }
  }
  // Without a store (the old behaviour) the same replay is accepted in full:
  // this is what the store prevents.
  SecY plain_rx = receiver(suite, nullptr, 1, k, PnStart::kResume, first);
  EXPECT_EQ(receive(plain_rx, {recorded.begin(), recorded.begin() + 60}), 60);
}

INSTANTIATE_TEST_SUITE_P(AllSuites, PnStateSuites,
                         ::testing::Values(CipherSuite::kGcmAes128, CipherSuite::kGcmAes256,
                                           CipherSuite::kGcmAesXpn128, CipherSuite::kGcmAesXpn256));

TEST(PnState, MissingStateIsRefusedWithoutNewKey) {
  const auto k = key(CipherSuite::kGcmAes128, 3);
  MemoryPnStore store;
  SecY y(config(CipherSuite::kGcmAes128, kTxSci));
  y.set_pn_store(&store, 64);
  auto st = y.install_tx_sa(0, keys_of(k), 1, PnStart::kResume);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SaError::kPnStateMissing);
  EXPECT_FALSE(y.tx_sa_status(0).installed);
  ASSERT_TRUE(y.add_rx_sc(kRxOwnSci).ok());
  auto rs = y.install_rx_sa(kRxOwnSci, 0, keys_of(k), 1);
  ASSERT_FALSE(rs.ok());
  EXPECT_EQ(rs.error(), SaError::kPnStateMissing);
  EXPECT_EQ(store.size(), 0u);

  // With kNewKey the record is created at once, so the next start resumes.
  ASSERT_TRUE(y.install_tx_sa(0, keys_of(k), 1, PnStart::kNewKey).ok());
  EXPECT_EQ(store.size(), 1u);
  EXPECT_FALSE(y.tx_sa_status(0).pn_resumed);
  auto record = y.pn_record(PnDirection::kTransmit, kTxSci, keys_of(k));
  ASSERT_TRUE(record.ok());
  ASSERT_TRUE(record->has_value());
  EXPECT_EQ(**record, 0u);
  // kNewKey never rewinds an existing record.
  std::vector<std::uint64_t> pns;
  ASSERT_TRUE(y.set_encoding_sa(0).ok());
  send(y, 5, pns);
  SecY again(config(CipherSuite::kGcmAes128, kTxSci));
  again.set_pn_store(&store, 64);
  ASSERT_TRUE(again.install_tx_sa(0, keys_of(k), 1, PnStart::kNewKey).ok());
  EXPECT_TRUE(again.tx_sa_status(0).pn_resumed);
  EXPECT_GT(again.tx_sa_status(0).next_pn, pns.back());
}

TEST(PnState, AKeyMovedToAnotherAnKeepsItsPnState) {
  const auto k = key(CipherSuite::kGcmAes128, 4);
  MemoryPnStore store;
  std::vector<std::uint64_t> pns;
  {
    SecY y = transmitter(CipherSuite::kGcmAes128, store, 8, k, PnStart::kNewKey, 1, 0);
    send(y, 10, pns);
  }
  // The IV has no AN: the same key at AN 2 must not start over.
  SecY y = transmitter(CipherSuite::kGcmAes128, store, 8, k, PnStart::kResume, 1, 2);
  EXPECT_GT(y.tx_sa_status(2).next_pn, pns.back());
}

TEST(PnState, AFailedSaveSendsNothingAndAcceptsNothing) {
  const auto k = key(CipherSuite::kGcmAes128, 5);
  MemoryPnStore store;
  // Block 1: every PN is saved before it is used (or accepted).
  SecY tx = transmitter(CipherSuite::kGcmAes128, store, 1, k, PnStart::kNewKey);
  std::vector<std::uint64_t> pns;
  const auto frames = send(tx, 4, pns);
  store.set_fail_saves(true);
  const auto p = plain(40, 9);
  std::vector<std::uint8_t> out(p.size() + 32);
  auto r = tx.protect(p, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), ProtectError::kPnNotPersisted);
  EXPECT_EQ(tx.stats().OutPktsPnNotPersisted, 1u);
  EXPECT_EQ(tx.tx_sa_status(0).next_pn, 5u) << "the PN was not consumed";

  MemoryPnStore rx_store;
  SecY rx = receiver(CipherSuite::kGcmAes128, &rx_store, 1, k, PnStart::kNewKey);
  EXPECT_EQ(receive(rx, {frames[0], frames[1]}), 2);
  rx_store.set_fail_saves(true);
  auto f = frames[2];
  auto v = rx.validate(f);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error(), ReceiveDrop::kPnNotPersisted);
  EXPECT_EQ(rx.stats().InPktsPnNotPersisted, 1u);
  EXPECT_EQ(rx.rx_sa_status(kTxSci, 0).next_pn, 3u) << "the receive state did not advance";
  rx_store.set_fail_saves(false);
  EXPECT_EQ(receive(rx, {frames[2], frames[3]}), 2);
}

// Reservations double from 1 up to the block, and persist_pn_state() brings
// the record back to the exact PN and restarts the doubling: so a receiver
// that crashes refuses at most what was reserved since the last call.
TEST(PnState, ReservationsDoubleAndPersistBringsThemBack) {
  const auto k = key(CipherSuite::kGcmAes128, 10);
  MemoryPnStore store;
  SecY tx = transmitter(CipherSuite::kGcmAes128, store, 64, k, PnStart::kNewKey);
  std::vector<std::uint64_t> pns;
  std::vector<std::uint64_t> persisted;
  for (int i = 0; i < 200; ++i) {
    send(tx, 1, pns);
    persisted.push_back(tx.tx_sa_status(0).pn_persisted);
  }
  // persisted[i] after PN i+1: 1, 3, 7, 15, 31, 63, 127, then blocks of 64: 191, 255.
  EXPECT_EQ(persisted[0], 1u);
  EXPECT_EQ(persisted[1], 3u);
  EXPECT_EQ(persisted[3], 7u);
  EXPECT_EQ(persisted[63], 127u);
  EXPECT_EQ(persisted[126], 127u);
  EXPECT_EQ(persisted[127], 191u);
  EXPECT_EQ(persisted[199], 255u);
  const std::size_t saves = store.saves();
  EXPECT_EQ(saves, 1u + 9u);  // the new-key record + 9 reservations for 200 PNs
  ASSERT_TRUE(tx.persist_pn_state().ok());
  EXPECT_EQ(tx.tx_sa_status(0).pn_persisted, 200u);
  ASSERT_TRUE(tx.persist_pn_state().ok());
  EXPECT_EQ(store.saves(), saves + 1) << "an exact record is not written again";
  send(tx, 1, pns);
  EXPECT_EQ(tx.tx_sa_status(0).pn_persisted, 201u) << "the doubling starts again at 1";
}

// tick_pn_state sizes reservations to the traffic of the last period, so a
// steady SA saves about once per period, and brings a record that runs ahead
// (traffic slowed or stopped) back to the exact PN once.
TEST(PnState, TickSizesReservationsToTheTrafficAndTightensWhenIdle) {
  const auto k = key(CipherSuite::kGcmAes128, 11);
  MemoryPnStore store;
  SecY tx = transmitter(CipherSuite::kGcmAes128, store, 65536, k, PnStart::kNewKey);
  std::vector<std::uint64_t> pns;
  send(tx, 1000, pns);
  ASSERT_TRUE(tx.tick_pn_state().ok());
  for (int period = 0; period < 5; ++period) {
    const std::size_t before = store.saves();
    send(tx, 1000, pns);
    ASSERT_TRUE(tx.tick_pn_state().ok());
    EXPECT_LE(store.saves() - before, 2u) << "period " << period;
    // The record never falls behind what was used, and stays within two periods of it.
    EXPECT_GE(tx.tx_sa_status(0).pn_persisted, pns.back());
    EXPECT_LE(tx.tx_sa_status(0).pn_persisted, pns.back() + 2000);
  }
  // Idle: one exact save, then none.
  ASSERT_TRUE(tx.tick_pn_state().ok());
  EXPECT_EQ(tx.tx_sa_status(0).pn_persisted, pns.back());
  const std::size_t idle = store.saves();
  ASSERT_TRUE(tx.tick_pn_state().ok());
  ASSERT_TRUE(tx.tick_pn_state().ok());
  EXPECT_EQ(store.saves(), idle);
}

// A receiver ticked every 1,000 frames that crashes mid-period refuses every
// frame it accepted and loses at most two periods of the peer's new frames.
TEST(PnState, AReceiverCrashCostsAtMostTwoPeriods) {
  const auto k = key(CipherSuite::kGcmAes128, 12);
  MemoryPnStore tx_store;
  SecY tx = transmitter(CipherSuite::kGcmAes128, tx_store, 65536, k, PnStart::kNewKey);
  std::vector<std::uint64_t> pns;
  const auto before = send(tx, 2500, pns);
  const auto after = send(tx, 3000, pns);
  MemoryPnStore rx_store;
  {
    SecY rx = receiver(CipherSuite::kGcmAes128, &rx_store, 65536, k, PnStart::kNewKey);
    for (std::size_t i = 0; i < before.size(); ++i) {
      ASSERT_EQ(receive(rx, {before[i]}), 1);
      if ((i + 1) % 1000 == 0) {
        ASSERT_TRUE(rx.tick_pn_state().ok());
      }
    }
  }  // crash 500 frames into the third period
  SecY rx = receiver(CipherSuite::kGcmAes128, &rx_store, 65536, k, PnStart::kResume);
  EXPECT_EQ(receive(rx, before), 0);
  const int fresh = receive(rx, after);
  EXPECT_GE(fresh, 3000 - 2000);
  EXPECT_LT(fresh, 3000);
}

TEST(PnState, TwoSasOfOneScUnderOneKeyAreRefused) {
  const auto k = key(CipherSuite::kGcmAes128, 9);
  MemoryPnStore store;
  SecY y = transmitter(CipherSuite::kGcmAes128, store, 8, k, PnStart::kNewKey, 1, 0);
  auto st = y.install_tx_sa(1, keys_of(k), 100, PnStart::kNewKey);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SaError::kKeyShared);
  SecY rx = receiver(CipherSuite::kGcmAes128, &store, 8, k, PnStart::kNewKey);
  auto rs = rx.install_rx_sa(kTxSci, 1, keys_of(k), 1, PnStart::kNewKey);
  ASSERT_FALSE(rs.ok());
  EXPECT_EQ(rs.error(), SaError::kKeyShared);
}

TEST(PnState, AUsedUpRecordIsRefused) {
  const auto k = key(CipherSuite::kGcmAes128, 6);
  MemoryPnStore store;
  const PnKey pk{PnDirection::kTransmit, kTxSci, pn_fingerprint(CipherSuite::kGcmAes128, keys_of(k))};
  ASSERT_TRUE(store.save(pk, 0, max_pn(CipherSuite::kGcmAes128)).ok());
  SecY y(config(CipherSuite::kGcmAes128, kTxSci));
  y.set_pn_store(&store, 8);
  auto st = y.install_tx_sa(0, keys_of(k), 1, PnStart::kNewKey);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SaError::kPnStateUsedUp);
}

TEST(PnState, TheReservationNeverPassesTheLastPn) {
  const auto k = key(CipherSuite::kGcmAes128, 7);
  MemoryPnStore store;
  const std::uint64_t last = max_pn(CipherSuite::kGcmAes128);
  SecY y = transmitter(CipherSuite::kGcmAes128, store, 1000, k, PnStart::kNewKey, last - 2);
  std::vector<std::uint64_t> pns;
  send(y, 3, pns);
  EXPECT_EQ(pns.back(), last);
  EXPECT_EQ(y.tx_sa_status(0).pn_persisted, last);
  EXPECT_TRUE(y.tx_sa_status(0).exhausted);
  ASSERT_TRUE(y.persist_pn_state().ok());
  SecY again(config(CipherSuite::kGcmAes128, kTxSci));
  again.set_pn_store(&store, 1000);
  auto st = again.install_tx_sa(0, keys_of(k), 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SaError::kPnStateUsedUp);
}

TEST(PnState, FingerprintDependsOnSuiteKeyAndXpnParts) {
  const auto k = key(CipherSuite::kGcmAesXpn128, 8);
  SaKeys a = keys_of(k);
  SaKeys b = a;
  b.ssci = 8;
  SaKeys c = a;
  c.salt[0] ^= 1;
  EXPECT_NE(pn_fingerprint(CipherSuite::kGcmAesXpn128, a), pn_fingerprint(CipherSuite::kGcmAesXpn128, b));
  EXPECT_NE(pn_fingerprint(CipherSuite::kGcmAesXpn128, a), pn_fingerprint(CipherSuite::kGcmAesXpn128, c));
  EXPECT_NE(pn_fingerprint(CipherSuite::kGcmAesXpn128, a), pn_fingerprint(CipherSuite::kGcmAes128, a));
  // The non-XPN IV ignores SSCI and salt, and so does the fingerprint.
  EXPECT_EQ(pn_fingerprint(CipherSuite::kGcmAes128, a), pn_fingerprint(CipherSuite::kGcmAes128, b));
}

}  // namespace
}  // namespace layersec::macsec
