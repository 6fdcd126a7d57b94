// Freshness attacks from the outside attack on the stack (issue 13), each
// reproduced on the engine: extra authenticated data (the SOME/IP header),
// hold-back-and-release (time bound), late PDUs of the previous reset cycle,
// a restarted receiver resuming at once, timestamp freshness (no sync
// needed, replay across a receiver restart), and the state file (missing,
// corrupt, symlinks).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "layersec/secoc/config.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"

namespace layersec::secoc {
namespace {

RxInput at(TimePoint t, ByteSpan header = {}, std::uint64_t source = 0) {
  RxInput in;
  in.now = t;
  in.header = header;
  in.source = source;
  return in;
}

TxInput tx_at(TimePoint t, ByteSpan header = {}) {
  TxInput in;
  in.now = t;
  in.header = header;
  return in;
}

TimePoint ms(std::int64_t v) { return TimePoint{} + Duration::milliseconds(v); }

// --- extra authenticated data ------------------------------------------------

TEST(EngineHeader, HeaderIsAuthenticatedButNotTransmitted) {
  for (const PduProfile& prof : {PduProfile::vendor(), PduProfile::aead_gcm()}) {
    LinkOptions o;
    o.profile = prof;
    SimulatedLink link(o);
    const std::uint8_t h1[12] = {0x12, 0x34, 0x80, 0x01, 0, 0, 0, 1, 1, 1, 2, 0};
    std::uint8_t h2[12];
    std::copy(std::begin(h1), std::end(h1), h2);
    h2[11] = 0x01;  // return code E_NOT_OK instead of E_OK
    const std::uint8_t pl[6] = {1, 2, 3, 4, 5, 6};
    std::vector<std::uint8_t> wire(64), out(64);
    auto n = link.sender().protect(0, pl, wire, tx_at(link.now(), h1));
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, o.profile.secured_size(sizeof pl));  // nothing extra on the wire
    const ByteSpan secured(wire.data(), *n);
    // A relabelled header fails, and leaves no trace.
    auto bad = link.receiver().verify(0, secured, out, at(link.now(), h2));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), Rejection::kMacMismatch);
    auto none = link.receiver().verify(0, secured, out, at(link.now()));
    ASSERT_FALSE(none.ok());
    auto good = link.receiver().verify(0, secured, out, at(link.now(), h1));
    ASSERT_TRUE(good.ok());
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + 6), std::vector<std::uint8_t>(pl, pl + 6));
  }
}

// --- hold back and release ---------------------------------------------------

TEST(EngineTimeBound, HeldBackTrafficIsStaleWhenReleased) {
  // The attack: everything the sender emits (PDUs and sync messages) is held
  // for 10 s and then released in order. Before the time bound 880 of 1,000
  // were accepted as fresh.
  LinkOptions o;
  SimulatedLink link(o);
  const std::uint8_t pl[8] = {};
  std::vector<std::uint8_t> out;
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  struct Held {
    bool sync = false;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Held> held;
  std::vector<std::uint8_t> sync(link.sender().sync_message_size());
  TimePoint t = link.now();
  for (int i = 0; i < 1000; ++i) {
    t += Duration::milliseconds(10);
    auto p = link.sender().poll(t, sync);
    ASSERT_TRUE(p.ok());
    if (p->sync_bytes) held.push_back({true, std::vector<std::uint8_t>(sync.begin(), sync.begin() + p->sync_bytes)});
    std::vector<std::uint8_t> w(64);
    auto n = link.sender().protect(0, pl, w, tx_at(t));
    ASSERT_TRUE(n.ok());
    w.resize(*n);
    held.push_back({false, w});
  }
  // Released 10 s after the last was sent (every message held >= 10 s).
  const TimePoint release = t + Duration::seconds(10);
  int accepted = 0, stale = 0, syncs = 0, stale_syncs = 0;
  for (const auto& h : held) {
    if (h.sync) {
      ++syncs;
      auto r = link.receiver().handle_sync(0, h.bytes, release);
      if (r.ok()) ++accepted;
      else if (r.error() == Rejection::kStale) ++stale_syncs;
    } else {
      out.resize(h.bytes.size());
      auto r = link.receiver().verify(0, h.bytes, out, at(release));
      if (r.ok()) ++accepted;
      else if (r.error() == Rejection::kStale) ++stale;
    }
  }
  // Nothing is accepted; every sync and every PDU of the receiver's cycle is
  // stale (PDUs of later cycles fail as mac-mismatch: their cycle never
  // became acceptable).
  EXPECT_EQ(accepted, 0);
  EXPECT_EQ(syncs, 10);
  EXPECT_EQ(stale_syncs, syncs);
  EXPECT_GE(stale, 99);
  EXPECT_EQ(link.receiver().counters().accepted, 1u);
}

TEST(EngineTimeBound, PduIsAcceptedUntilCycleStartPlusPeriodPlusMaxAge) {
  LinkOptions o;  // period 1 s, max age 1 s (defaults)
  SimulatedLink link(o);
  const std::uint8_t pl[4] = {};
  std::vector<std::uint8_t> out(64);
  const auto w1 = link.send(pl);
  const auto w2 = link.send(pl);
  // The cycle started at t = 0: fresh until 2 s.
  ASSERT_TRUE(link.receiver().verify(0, w1, out, at(ms(2000))).ok());
  auto late = link.receiver().verify(0, w2, out, at(ms(2001)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error(), Rejection::kStale);
  // A sync from the future beyond max age is refused too.
  std::vector<std::uint8_t> sync(link.sender().sync_message_size());
  auto p = link.sender().poll(ms(5000), sync);
  ASSERT_TRUE(p.ok());
  ASSERT_GT(p->sync_bytes, 0u);
  auto early = link.receiver().handle_sync(0, sync, ms(3000));
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error(), Rejection::kStale);
  EXPECT_TRUE(link.receiver().handle_sync(0, sync, ms(4500)).ok());
}

TEST(EngineTimeBound, ZeroMaxAgeIsAnExplicitlyUnboundedChannel) {
  LinkOptions o;
  EngineConfig rc = link_receiver_config(o);
  rc.sync_rx[0].max_age = Duration::zero();
  EXPECT_NE(rc.describe().find("NO time bound"), std::string::npos);
  MemoryStateStore s1, s2;
  auto tx = std::move(Engine::start(link_sender_config(o), s1)).value();
  auto rx = std::move(Engine::start(rc, s2)).value();
  for (Engine* e : {tx.get(), rx.get()}) {
    ASSERT_TRUE(e->install_key(0, 1, test_key(o.profile.algorithm, 1), TimePoint{}).ok());
    ASSERT_TRUE(e->install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), TimePoint{}).ok());
  }
  std::vector<std::uint8_t> sync(tx->sync_message_size()), w(64), out(64);
  auto p = tx->poll(TimePoint{}, sync);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(rx->handle_sync(0, ByteSpan(sync.data(), p->sync_bytes)).ok());
  const std::uint8_t pl[2] = {};
  auto n = tx->protect(0, pl, w);
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(rx->verify(0, ByteSpan(w.data(), *n), out).ok());  // no time given, none needed
}

// --- late PDUs of the previous reset cycle ---------------------------------------

TEST(EngineCycles, LatePduOfPreviousCycleIsAcceptedOnceWithinTheWindow) {
  for (FreshnessMode mode : {FreshnessMode::kStrict, FreshnessMode::kReorderTolerant}) {
    SCOPED_TRACE(mode == FreshnessMode::kStrict ? "strict" : "tolerant");
    LinkOptions o;
    o.mode = mode;
    SimulatedLink link(o);
    const std::uint8_t pl[4] = {9, 9, 9, 9};
    std::vector<std::uint8_t> out;
    ASSERT_TRUE(link.receive(link.send(pl), out).ok());   // msg 1 of cycle 1
    const auto late1 = link.send(pl);                     // msg 2, held back
    const auto late2 = link.send(pl);                     // msg 3, held back
    link.advance(Duration::milliseconds(1000));           // sync: cycle 2 (delivered)
    ASSERT_EQ(link.receiver().rx_freshness(0).last.reset, 2u);
    ASSERT_TRUE(link.receive(link.send(pl), out).ok());   // msg 1 of cycle 2 first
    // Before: both lost (reordered behind the next cycle's sync and first PDU).
    auto r1 = link.receive(late1, out);
    ASSERT_TRUE(r1.ok()) << to_string(r1.error());
    auto r2 = link.receive(late2, out);
    ASSERT_TRUE(r2.ok()) << to_string(r2.error());
    EXPECT_EQ(link.receiver().counters().accepted_previous_cycle, 2u);
    // Each once.
    auto dup = link.receive(late1, out);
    ASSERT_FALSE(dup.ok());
    EXPECT_EQ(link.receiver().rx_freshness(0).last.reset, 2u);
  }
}

TEST(EngineCycles, PreviousCycleClosesAfterWPdusOrItsTimeBound) {
  LinkOptions o;
  o.window = 8;
  SimulatedLink link(o);
  const std::uint8_t pl[4] = {};
  std::vector<std::uint8_t> out;
  const auto late = link.send(pl);
  link.advance(Duration::milliseconds(1000));
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  auto r = link.receive(late, out);  // the current cycle has accepted W PDUs
  ASSERT_FALSE(r.ok());
  // Time bound: a fresh link, late PDU released after cycle1 start + 2 s.
  SimulatedLink l2(o);
  const auto late2 = l2.send(pl);
  l2.advance(Duration::milliseconds(1000));
  out.resize(late2.size());
  auto r2 = l2.receiver().verify(0, late2, out, at(ms(2001)));
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(l2.receiver().counters().accepted_previous_cycle, 0u);
}

TEST(EngineCycles, NextCycleAcceptanceKeepsThePreviousCycleForLatePdus) {
  // The sync is lost; the receiver moves on through candidate 2; a PDU of
  // the old cycle reordered behind it is still accepted.
  LinkOptions o;
  o.verify_attempts = 2;
  o.mode = FreshnessMode::kReorderTolerant;
  SimulatedLink link(o);
  const std::uint8_t pl[4] = {};
  std::vector<std::uint8_t> out;
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  const auto late = link.send(pl);
  link.advance(Duration::milliseconds(1000), /*deliver_sync=*/false);
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  EXPECT_EQ(link.receiver().counters().accepted_next_cycle, 1u);
  ASSERT_TRUE(link.receive(late, out).ok());
  EXPECT_EQ(link.receiver().counters().accepted_previous_cycle, 1u);
}

// --- restarted receiver ------------------------------------------------------------

TEST(EngineRestart, RestartedReceiverResumesAtARequestedSyncAndRefusesOldPdus) {
  LinkOptions o;
  MemoryStateStore s_tx, s_rx;
  auto tx = std::move(Engine::start(link_sender_config(o), s_tx)).value();
  auto keys = [&](Engine& e) {
    ASSERT_TRUE(e.install_key(0, 1, test_key(o.profile.algorithm, 1), TimePoint{}).ok());
    ASSERT_TRUE(e.install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), TimePoint{}).ok());
  };
  keys(*tx);
  std::vector<std::uint8_t> sync(tx->sync_message_size()), out(64);
  const std::uint8_t pl[4] = {};
  std::vector<std::vector<std::uint8_t>> recorded;
  {
    auto rx = std::move(Engine::start(link_receiver_config(o), s_rx)).value();
    keys(*rx);
    auto p = tx->poll(ms(0), sync);
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE(rx->handle_sync(0, ByteSpan(sync.data(), p->sync_bytes), ms(0)).ok());
    for (int i = 0; i < 5; ++i) {
      std::vector<std::uint8_t> w(64);
      auto n = tx->protect(0, pl, w, tx_at(ms(10)));
      ASSERT_TRUE(n.ok());
      w.resize(*n);
      ASSERT_TRUE(rx->verify(0, w, out, at(ms(10))).ok());
      recorded.push_back(w);
    }
  }  // kill -9 of the receiver: only the persisted sync floor survives
  auto rx = std::move(Engine::start(link_receiver_config(o), s_rx)).value();
  keys(*rx);
  // The resend of the latest sync does not resynchronise it (its message
  // counters were not persisted) ...
  auto p = tx->poll(ms(20), sync);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->sync_bytes, 0u);
  // ... but a sync the sender starts on request (the runtime asks for one
  // when the restarted receiver subscribes) does, at once.
  tx->request_sync();
  p = tx->poll(ms(30), sync);
  ASSERT_TRUE(p.ok());
  ASSERT_GT(p->sync_bytes, 0u);
  auto st = rx->handle_sync(0, ByteSpan(sync.data(), p->sync_bytes), ms(30));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(*st, SyncOutcome::kAccepted);
  // Recorded traffic from before the restart is refused, new traffic flows.
  for (const auto& w : recorded) EXPECT_FALSE(rx->verify(0, w, out, at(ms(40))).ok());
  std::vector<std::uint8_t> w(64);
  auto n = tx->protect(0, pl, w, tx_at(ms(40)));
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(rx->verify(0, ByteSpan(w.data(), *n), out, at(ms(40))).ok());
  // The requested cycle restarted the period.
  EXPECT_EQ(p->next_deadline, ms(1030));
}

// --- timestamp freshness -------------------------------------------------------------

struct TimestampPair {
  MemoryStateStore s_tx, s_rx;
  std::unique_ptr<Engine> tx, rx;
  TimestampPair(FreshnessMode mode, unsigned tx_bits, std::uint32_t sources = 1,
                std::optional<TimePoint> rx_start = std::nullopt, std::uint32_t window = 8) {
    PduProfile p = PduProfile::vendor();
    p.kind = ProfileKind::kCustom;
    p.freshness = FreshnessLayout::timestamp_us(64, static_cast<std::uint8_t>(tx_bits));
    EngineConfig tc;
    tc.key_groups = {{"sd", AuthAlgorithm::kCmacAes256}};
    tc.tx_pdus = {{0, 0xFFF0, p, 0}};
    EngineConfig rc;
    rc.key_groups = tc.key_groups;
    RxPduConfig r;
    r.id = 0;
    r.data_id = 0xFFF0;
    r.profile = p;
    r.mode = mode;
    r.window = window;
    r.max_sources = sources;
    rc.rx_pdus = {r};
    StartOptions so;
    so.now = rx_start;
    tx = std::move(Engine::start(tc, s_tx)).value();
    rx = std::move(Engine::start(rc, s_rx, so)).value();
    EXPECT_TRUE(tx->install_key(0, 1, test_key(AuthAlgorithm::kCmacAes256, 1), TimePoint{}).ok());
    EXPECT_TRUE(rx->install_key(0, 1, test_key(AuthAlgorithm::kCmacAes256, 1), TimePoint{}).ok());
  }
  std::vector<std::uint8_t> send(TimePoint t, ByteSpan header = {}) {
    const std::uint8_t pl[3] = {7, 8, 9};
    std::vector<std::uint8_t> w(64);
    auto n = tx->protect(0, pl, w, tx_at(t, header));
    EXPECT_TRUE(n.ok());
    w.resize(n.ok() ? *n : 0);
    return w;
  }
  Result<std::size_t, Rejection> recv(const std::vector<std::uint8_t>& w, TimePoint t,
                                      std::uint64_t source = 0, ByteSpan header = {}) {
    std::vector<std::uint8_t> out(64);
    return rx->verify(0, w, out, at(t, header, source));
  }
};

TEST(EngineTimestamp, NeedsNoSyncAndRejectsReplayStaleAndFuture) {
  TimestampPair p(FreshnessMode::kStrict, 64);
  const auto w1 = p.send(ms(1000));
  const auto w2 = p.send(ms(1000));  // same microsecond: the FV still increases
  ASSERT_TRUE(p.recv(w1, ms(1001)).ok());  // first message, no sync ever
  ASSERT_TRUE(p.recv(w2, ms(1001)).ok());
  auto replay = p.recv(w1, ms(1002));
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error(), Rejection::kReplay);
  const auto w3 = p.send(ms(1100));
  auto old = p.recv(w3, ms(2101));  // 1.001 s old, max age 1 s
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error(), Rejection::kStale);
  const auto w4 = p.send(ms(5000));
  auto future = p.recv(w4, ms(3000));  // 2 s ahead of our clock
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.error(), Rejection::kStale);
  EXPECT_TRUE(p.recv(w4, ms(4500)).ok());
  // Protect without the time is refused, not silently stamped 0.
  std::vector<std::uint8_t> w(64);
  const std::uint8_t pl[1] = {};
  auto n = p.tx->protect(0, pl, w);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error(), ProtectError::kNoTime);
}

TEST(EngineTimestamp, TruncatedTimestampIsReconstructedFromTheReceiversClock) {
  TimestampPair p(FreshnessMode::kStrict, 24);  // 16.7 s of microseconds
  for (std::int64_t t : {1000, 20000, 40000, 16777 * 5 + 3}) {
    const auto w = p.send(ms(t));
    EXPECT_TRUE(p.recv(w, ms(t + 300)).ok()) << t;
    // The same low bits one wrap later are stale, not fresh.
    EXPECT_FALSE(p.recv(w, ms(t + 16777 + 300)).ok()) << t;
  }
  // Config: 24 bits cannot disambiguate a 5 s max age.
  PduProfile prof = PduProfile::vendor();
  prof.kind = ProfileKind::kCustom;
  prof.freshness = FreshnessLayout::timestamp_us(64, 20);
  EngineConfig rc;
  rc.key_groups = {{"g", AuthAlgorithm::kCmacAes256}};
  RxPduConfig r;
  r.profile = prof;
  r.max_age = Duration::seconds(5);
  rc.rx_pdus = {r};
  EXPECT_THROW(rc.validate(), ConfigError);
}

TEST(EngineTimestamp, RestartedReceiverRefusesEverythingRecordedBeforeItsStart) {
  // No persisted receiver state: traffic sent before the receiver's start is
  // refused, so a recording replayed right after a restart gets nothing.
  std::vector<std::vector<std::uint8_t>> recorded;
  {
    TimestampPair p(FreshnessMode::kReorderTolerant, 64, 1, ms(0));
    for (int i = 0; i < 20; ++i) {
      recorded.push_back(p.send(ms(100 + i)));
      ASSERT_TRUE(p.recv(recorded.back(), ms(100 + i)).ok());
    }
  }
  TimestampPair restarted(FreshnessMode::kReorderTolerant, 64, 1, ms(200));
  int accepted = 0;
  for (const auto& w : recorded) {
    auto r = restarted.recv(w, ms(250));
    if (r.ok()) ++accepted;
    else EXPECT_EQ(r.error(), Rejection::kStale);
  }
  EXPECT_EQ(accepted, 0);
}

TEST(EngineTimestamp, ReorderTolerantAcceptsLatePdusOnceAndSourcesAreSeparate) {
  TimestampPair p(FreshnessMode::kReorderTolerant, 64, 2);
  std::vector<std::vector<std::uint8_t>> w;
  for (int i = 0; i < 6; ++i) w.push_back(p.send(ms(1000 + i)));
  ASSERT_TRUE(p.recv(w[5], ms(1010)).ok());
  ASSERT_TRUE(p.recv(w[3], ms(1011)).ok());  // late, within the window
  EXPECT_FALSE(p.recv(w[3], ms(1011)).ok());
  // Source 2 (another authenticated sender sharing the PDU, e.g. SD) has its
  // own state. (The runtime binds the source address into the header, so
  // relabelled bytes fail the MAC before they reach this state.)
  ASSERT_TRUE(p.recv(w[3], ms(1012), 2).ok());
  EXPECT_FALSE(p.recv(w[3], ms(1012), 2).ok());
  EXPECT_TRUE(p.recv(w[4], ms(1013)).ok());  // source 0 is now the most recent
  // A third source evicts the least recently used (2); the evicted one's
  // history becomes the floor for sources without state.
  EXPECT_TRUE(p.recv(w[2], ms(1014), 3).ok());
  auto evicted = p.recv(w[1], ms(1015), 2);
  ASSERT_FALSE(evicted.ok());  // below the evicted floor
  EXPECT_TRUE(evicted.error() == Rejection::kReplay || evicted.error() == Rejection::kOutOfWindow);
}

TEST(EngineTimestamp, ConfigRefusesAeadAndSyncChannel) {
  nlohmann::json j = {
      {"keyGroups", {{{"name", "g"}, {"algorithm", "cmac-aes256"}}, {{"name", "p"}, {"algorithm", "aes256-gcm"}}}},
      {"syncRx", {{{"id", 0}, {"dataId", 1}, {"keyGroup", "g"}}}},
      {"rxPdus", {{{"id", 0}, {"dataId", 2}, {"keyGroup", "g"}, {"freshness", "timestamp"}, {"maxAgeMs", 500}}}}};
  const EngineConfig ok = config_from_json(j);
  EXPECT_TRUE(ok.rx_pdus[0].profile.freshness.timestamp);
  EXPECT_EQ(ok.rx_pdus[0].max_age, Duration::milliseconds(500));
  auto err = [](const nlohmann::json& x) {
    try {
      (void)config_from_json(x);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto k = j;
  k["rxPdus"][0]["syncChannel"] = 0;
  EXPECT_EQ(err(k).rfind("$.rxPdus[0].syncChannel", 0), 0u) << err(k);
  k = j;
  k["rxPdus"][0]["profile"] = "aead-gcm";
  k["rxPdus"][0]["keyGroup"] = "p";
  EXPECT_EQ(err(k).rfind("$.rxPdus[0].freshness", 0), 0u) << err(k);
  k = j;
  k["rxPdus"][0]["maxAgeMs"] = 0;
  EXPECT_EQ(err(k).rfind("$.rxPdus[0].maxAgeMs", 0), 0u) << err(k);
  k = j;
  k["rxPdus"][0]["freshness"] = "counter";
  EXPECT_EQ(err(k).rfind("$.rxPdus[0].maxAgeMs", 0), 0u) << err(k);
  // aead-gcm rx PDUs must name the sender's senderId.
  k = j;
  k["rxPdus"][0] = {{"id", 0}, {"dataId", 2}, {"keyGroup", "p"}, {"profile", "aead-gcm"}, {"syncChannel", 0}};
  EXPECT_EQ(err(k).rfind("$.rxPdus[0].senderId", 0), 0u) << err(k);
  k["rxPdus"][0]["senderId"] = 0;
  EXPECT_EQ(err(k), "");
  // ... and a node with an aead-gcm tx PDU its own.
  k = j;
  k["txPdus"] = {{{"id", 0}, {"dataId", 3}, {"keyGroup", "p"}, {"profile", "aead-gcm"}}};
  EXPECT_EQ(err(k).rfind("$.senderId", 0), 0u) << err(k);
}

// --- the state file ----------------------------------------------------------------

std::string temp_dir() {
  std::string t = ::testing::TempDir() + "/secoc_state_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

TEST(EngineStateFile, MissingIsAnErrorUnlessFirstStartAndCorruptIsNamed) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/state";
  LinkOptions o;
  FileStateStore store(path);
  auto e = Engine::start(link_sender_config(o), store);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), StartError::kStateMissing);
  StartOptions first;
  first.first_start = true;
  ASSERT_TRUE(Engine::start(link_sender_config(o), store, first).ok());
  ASSERT_TRUE(Engine::start(link_sender_config(o), store).ok());  // now it exists
  // Deleted: the trip counter would restart at 1 and reuse the FV space.
  ASSERT_EQ(std::remove(path.c_str()), 0);
  auto deleted = Engine::start(link_sender_config(o), store);
  ASSERT_FALSE(deleted.ok());
  EXPECT_EQ(deleted.error(), StartError::kStateMissing);
  {
    std::ofstream f(path);
    f << "garbage\n";
  }
  ::chmod(path.c_str(), 0600);
  auto corrupt = Engine::start(link_sender_config(o), store);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error(), StartError::kStateCorrupt);
  // A state file others can read or write is refused.
  ::chmod(path.c_str(), 0644);
  auto loose = store.load();
  ASSERT_FALSE(loose.ok());
  EXPECT_EQ(loose.error(), StoreError::kIo);
  EXPECT_NE(store.last_error().find("group or others"), std::string::npos) << store.last_error();
  std::remove(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(EngineStateFile, PlantedSymlinksAreNeitherFollowedNorKept) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/state";
  const std::string victim = dir + "/victim";
  {
    std::ofstream f(victim);
    f << "precious\n";
  }
  // The attack: a symlink at the old fixed temp name and at the state path.
  ASSERT_EQ(::symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  FileStateStore store(path);
  auto refused = store.load();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(store.last_error().find("symbolic link"), std::string::npos) << store.last_error();
  PersistedState s;
  s.tx_trip = 5;
  ASSERT_TRUE(store.save(s).ok()) << store.last_error();
  std::ifstream v(victim);
  std::string line;
  std::getline(v, line);
  EXPECT_EQ(line, "precious");  // never written through
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));  // the symlink itself was replaced
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto back = store.load();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tx_trip, 5u);
  // No temp file of ours is left behind.
  int left = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) left += std::string(e->d_name).find(".state.tmp.") == 0;
    ::closedir(d);
  }
  EXPECT_EQ(left, 0);
  std::remove((path + ".tmp").c_str());
  std::remove(path.c_str());
  std::remove(victim.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace layersec::secoc
