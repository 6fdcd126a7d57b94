// The PN state the workers of `macsec up --workers N` share
// (shared_pn_state.h): threads hammering one transmit SA's allocation and
// one receive SA's replay check, each thread with its own SecY (its own
// cipher contexts and counters). No timing assertions: only what every
// interleaving must give.
#include "layersec/macsec/shared_pn_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "layersec/macsec/link_workers.h"
#include "layersec/macsec/secy.h"

namespace layersec::macsec {
namespace {

const std::uint8_t kSrc[6] = {0x02, 0x00, 0x00, 0x78, 0x00, 0x01};
const Sci kTxSci = Sci::from_parts(kSrc, 1);
const Sci kRxOwnSci{0x0200007800020001ULL};
constexpr CipherSuite kSuite = CipherSuite::kGcmAes128;

// The SAK (SaKeys holds a view): the same key for every SecY of a test.
const std::vector<std::uint8_t>& sak() {
  static const std::vector<std::uint8_t> k = [] {
    std::vector<std::uint8_t> v(sak_size(kSuite));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(1 + 13 * i);
    return v;
  }();
  return k;
}

SaKeys keys_of(std::uint8_t /*seed*/) {
  SaKeys keys;
  keys.sak = sak();
  return keys;
}

std::vector<std::uint8_t> plain(std::size_t n, std::uint8_t fill) {
  std::vector<std::uint8_t> f = {0x02, 0x00, 0x00, 0x78, 0x00, 0x02, 0x02, 0x00, 0x00, 0x78, 0x00, 0x01, 0x08, 0x00};
  f.resize(14 + n, fill);
  return f;
}

// The 32-bit PN field of a secure frame (SecTAG right after the addresses).
std::uint64_t pn_of(const std::vector<std::uint8_t>& f) {
  return (std::uint64_t{f[16]} << 24) | (std::uint64_t{f[17]} << 16) | (std::uint64_t{f[18]} << 8) | f[19];
}

SecY transmitter(PnStore* store, std::uint64_t block, std::uint64_t first_pn = 1) {
  SecYConfig c;
  c.suite = kSuite;
  c.sci = kTxSci;
  SecY y(c);
  if (store != nullptr) y.set_pn_store(store, block);
  EXPECT_TRUE(y.install_tx_sa(0, keys_of(1), first_pn, PnStart::kNewKey).ok());
  EXPECT_TRUE(y.set_encoding_sa(0).ok());
  return y;
}

SecY receiver(PnStore* store, std::uint64_t block, std::uint32_t window) {
  SecYConfig c;
  c.suite = kSuite;
  c.sci = kRxOwnSci;
  c.replay_window = window;
  SecY y(c);
  if (store != nullptr) y.set_pn_store(store, block);
  EXPECT_TRUE(y.add_rx_sc(kTxSci).ok());
  EXPECT_TRUE(y.install_rx_sa(kTxSci, 0, keys_of(1), 1, PnStart::kNewKey).ok());
  return y;
}

PnKey tx_key() { return PnKey{PnDirection::kTransmit, kTxSci, pn_fingerprint(kSuite, keys_of(1))}; }
PnKey rx_key() { return PnKey{PnDirection::kReceive, kTxSci, pn_fingerprint(kSuite, keys_of(1))}; }

TEST(SharedPnState, ThreadsTakeDistinctIncreasingPnsAllPersisted) {
  MemoryPnStore store;
  constexpr int kThreads = 4;
  constexpr int kFrames = 5000;
  std::vector<SecY> secys;
  secys.push_back(transmitter(&store, 64));
  for (int i = 1; i < kThreads; ++i) secys.push_back(transmitter(nullptr, 64));
  WorkerPnState shared(secys[0], &store, 64);
  for (auto& y : secys) y.set_shared_pn_state(&shared);

  std::vector<std::vector<std::uint64_t>> pns(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      const auto p = plain(60, static_cast<std::uint8_t>(t));
      std::vector<std::uint8_t> out(p.size() + 32);
      for (int i = 0; i < kFrames; ++i) {
        auto n = secys[static_cast<std::size_t>(t)].protect(p, out);
        ASSERT_TRUE(n.ok());
        pns[static_cast<std::size_t>(t)].push_back(pn_of(out));
      }
    });
  }
  go = true;
  for (auto& th : threads) th.join();

  std::set<std::uint64_t> all;
  for (const auto& v : pns) {
    ASSERT_EQ(v.size(), static_cast<std::size_t>(kFrames));
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LT(v[i - 1], v[i]) << "a thread's PNs must increase";
    all.insert(v.begin(), v.end());
  }
  // Never two frames with one PN, and no gap: 1 .. threads * frames.
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kThreads * kFrames));
  EXPECT_EQ(*all.begin(), 1U);
  EXPECT_EQ(*all.rbegin(), static_cast<std::uint64_t>(kThreads * kFrames));
  // The record covers every PN used; the shared state says where it is.
  EXPECT_GE(store.load(tx_key()).value().value(), *all.rbegin());
  const auto st = shared.tx_sa_status(0);
  EXPECT_EQ(st.next_pn, *all.rbegin() + 1);
  // Each worker counted its own frames.
  std::uint64_t sent = 0;
  for (const auto& y : secys) sent += y.stats().OutPktsEncrypted;
  EXPECT_EQ(sent, static_cast<std::uint64_t>(kThreads * kFrames));
}

TEST(SharedPnState, ExhaustionAndNewSaNeededAcrossThreads) {
  const std::uint64_t last = max_pn(kSuite);
  std::vector<SecY> secys;
  for (int i = 0; i < 3; ++i) secys.push_back(transmitter(nullptr, 1, last - 99));
  WorkerPnState shared(secys[0], nullptr, 1);
  for (auto& y : secys) y.set_shared_pn_state(&shared);
  EXPECT_TRUE(shared.new_sa_needed(0));  // past three quarters of the PN space
  std::atomic<int> ok{0}, exhausted{0};
  std::vector<std::thread> threads;
  for (auto& y : secys) {
    threads.emplace_back([&] {
      const auto p = plain(20, 1);
      std::vector<std::uint8_t> out(p.size() + 32);
      for (int i = 0; i < 100; ++i) {
        auto n = y.protect(p, out);
        if (n) {
          ++ok;
        } else {
          EXPECT_EQ(n.error(), ProtectError::kPnExhausted);
          ++exhausted;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 100);  // last - 99 .. last, once each; never a wrap
  EXPECT_EQ(exhausted.load(), 200);
  EXPECT_TRUE(shared.tx_sa_status(0).exhausted);
}

TEST(SharedPnState, NewSaNeededFollowsTheThreshold) {
  SecYConfig c;
  c.suite = kSuite;
  c.sci = kTxSci;
  c.pn_rekey_threshold = 10;
  SecY y(c);
  ASSERT_TRUE(y.install_tx_sa(0, keys_of(1), 1).ok());
  WorkerPnState shared(y, nullptr, 1);
  y.set_shared_pn_state(&shared);
  const auto p = plain(20, 1);
  std::vector<std::uint8_t> out(p.size() + 32);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(y.protect(p, out).ok());
  EXPECT_FALSE(shared.new_sa_needed(0));
  ASSERT_TRUE(y.protect(p, out).ok());
  EXPECT_TRUE(shared.new_sa_needed(0));
}

// Frames of one sender, each validated by every thread at once: exactly one
// thread accepts each, the others count it late; the window only rises.
TEST(SharedPnState, SamePnValidatedConcurrentlyIsAcceptedOnce) {
  MemoryPnStore tx_store;
  SecY tx = transmitter(&tx_store, 16);
  constexpr int kFrames = 2000;
  std::vector<std::vector<std::uint8_t>> frames;
  for (int i = 0; i < kFrames; ++i) {
    const auto p = plain(100, static_cast<std::uint8_t>(i));
    std::vector<std::uint8_t> out(p.size() + 32);
    auto n = tx.protect(p, out);
    ASSERT_TRUE(n.ok());
    out.resize(*n);
    frames.push_back(out);
  }
  MemoryPnStore store;
  constexpr int kThreads = 4;
  std::vector<SecY> secys;
  secys.push_back(receiver(&store, 16, 64));
  for (int i = 1; i < kThreads; ++i) secys.push_back(receiver(nullptr, 16, 64));
  WorkerPnState shared(secys[0], &store, 16);
  for (auto& y : secys) y.set_shared_pn_state(&shared);

  std::vector<std::vector<std::uint64_t>> accepted(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kFrames; ++i) {
        auto f = frames[static_cast<std::size_t>(i)];  // each thread its own copy (validated in place)
        auto r = secys[static_cast<std::size_t>(t)].validate(f);
        if (r) {
          EXPECT_TRUE(r->verified());
          accepted[static_cast<std::size_t>(t)].push_back(r->pn);
        } else {
          EXPECT_EQ(r.error(), ReceiveDrop::kLate);
        }
      }
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  std::multiset<std::uint64_t> all;
  for (const auto& v : accepted) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kFrames));
  for (std::uint64_t pn = 1; pn <= kFrames; ++pn) EXPECT_EQ(all.count(pn), 1U) << "PN " << pn;
  std::uint64_t ok = 0, late = 0;
  for (const auto& y : secys) {
    ok += y.stats().InPktsOK;
    late += y.stats().InPktsLate;
  }
  EXPECT_EQ(ok, static_cast<std::uint64_t>(kFrames));
  EXPECT_EQ(late, static_cast<std::uint64_t>((kThreads - 1) * kFrames));
  const auto st = shared.rx_sa_status(kTxSci, 0);
  EXPECT_EQ(st.next_pn, static_cast<std::uint64_t>(kFrames) + 1);
  EXPECT_EQ(st.lowest_pn, static_cast<std::uint64_t>(kFrames) + 1 - 64);
  EXPECT_GE(store.load(rx_key()).value().value(), static_cast<std::uint64_t>(kFrames));
}

// Two workers finishing frames out of wire order: accepted within the window,
// late beyond it (window 0: any reordering between workers is a drop).
TEST(SharedPnState, ReorderingBetweenWorkersWithinTheWindow) {
  for (std::uint32_t window : {0U, 8U}) {
    SecY tx = transmitter(nullptr, 1);
    std::vector<std::vector<std::uint8_t>> frames;
    for (int i = 0; i < 10; ++i) {
      const auto p = plain(30, 1);
      std::vector<std::uint8_t> out(p.size() + 32);
      auto n = tx.protect(p, out);
      ASSERT_TRUE(n.ok());
      out.resize(*n);
      frames.push_back(out);
    }
    SecY a = receiver(nullptr, 1, window);
    SecY b = receiver(nullptr, 1, window);
    WorkerPnState shared(a, nullptr, 1);
    a.set_shared_pn_state(&shared);
    b.set_shared_pn_state(&shared);
    // Worker b finishes PN 5 before worker a finishes PNs 1..4 (copies:
    // validate decrypts in place).
    auto fifth = frames[4];
    EXPECT_TRUE(b.validate(fifth).ok());
    int ok = 0;
    for (int i = 0; i < 4; ++i) {
      auto f = frames[static_cast<std::size_t>(i)];
      ok += a.validate(f).ok() ? 1 : 0;
    }
    EXPECT_EQ(ok, window == 0 ? 0 : 4) << "window " << window;
    EXPECT_EQ(a.stats().InPktsLate, window == 0 ? 4U : 0U);
    // A replay of any of them, to either worker, is refused.
    auto again = frames[4];
    EXPECT_EQ(a.validate(again).error(), ReceiveDrop::kLate);
  }
}

// The periodic tick and the exit save go through the shared state; the
// SecYs' own (stale) PN state never lowers a record.
TEST(SharedPnState, TickAndPersistCoverEveryPnAndRestartResumesAbove) {
  MemoryPnStore store;
  SecY a = transmitter(&store, 1000);
  SecY b = transmitter(nullptr, 1000);
  std::uint64_t highest = 0;
  {
    WorkerPnState shared(a, &store, 1000);
    a.set_shared_pn_state(&shared);
    b.set_shared_pn_state(&shared);
    const auto p = plain(30, 1);
    std::vector<std::uint8_t> out(p.size() + 32);
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE((i % 2 ? a : b).protect(p, out).ok());
      highest = std::max(highest, pn_of(out));
      EXPECT_GE(store.load(tx_key()).value().value(), highest);  // persisted before use
    }
    // a's own state says next PN 1: its persist/tick must not save that.
    ASSERT_TRUE(a.persist_pn_state().ok());
    ASSERT_TRUE(a.tick_pn_state().ok());
    EXPECT_GE(store.load(tx_key()).value().value(), highest);
    ASSERT_TRUE(shared.tick().ok());
    EXPECT_GE(store.load(tx_key()).value().value(), highest);
    // "kill -9" here: the record covers every PN sent. A clean exit:
    ASSERT_TRUE(shared.persist().ok());
    EXPECT_EQ(store.load(tx_key()).value().value(), highest);
  }
  SecYConfig c;
  c.suite = kSuite;
  c.sci = kTxSci;
  SecY restarted(c);
  restarted.set_pn_store(&store, 1000);
  ASSERT_TRUE(restarted.install_tx_sa(0, keys_of(1), 1, PnStart::kResume).ok());
  EXPECT_EQ(restarted.tx_sa_status(0).next_pn, highest + 1);
}

TEST(SharedPnState, PnNotPersistedUsesNoPn) {
  MemoryPnStore store;
  SecY a = transmitter(&store, 1);
  WorkerPnState shared(a, &store, 1);
  a.set_shared_pn_state(&shared);
  const auto p = plain(30, 1);
  std::vector<std::uint8_t> out(p.size() + 32);
  ASSERT_TRUE(a.protect(p, out).ok());
  store.set_fail_saves(true);
  auto r = a.protect(p, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), ProtectError::kPnNotPersisted);
  EXPECT_EQ(a.stats().OutPktsPnNotPersisted, 1U);
  store.set_fail_saves(false);
  ASSERT_TRUE(a.protect(p, out).ok());
  EXPECT_EQ(pn_of(out), 2U);
}

TEST(SharedPnState, SumWorkerCountersAddsCountersNotPnFields) {
  const nlohmann::json w0 = {
      {"secy", {{"InPktsOK", 3}, {"OutPktsEncrypted", 5}}},
      {"link", {{"tx_frames", 5}, {"tx_offload_refused", {{"bad_header", 1}}}}},
      {"per_sc",
       {{"tx_sc", {{"sci", "0200007800010001"}, {"OutPktsEncrypted", 5}, {"sas", {{{"an", 0}, {"next_pn", 1}, {"OutPktsEncrypted", 5}}}}}},
        {"rx_scs", {{{"sci", "0200007800020001"}, {"InPktsOK", 3}, {"sas", {{{"an", 0}, {"lowest_pn", 1}, {"InPktsOK", 3}}}}}}}}}};
  nlohmann::json w1 = w0;
  w1["secy"]["InPktsOK"] = 4;
  w1["link"]["tx_offload_refused"]["bad_header"] = 2;
  w1["per_sc"]["tx_sc"]["sas"][0]["OutPktsEncrypted"] = 7;
  w1["per_sc"]["rx_scs"][0]["sas"][0]["InPktsOK"] = 1;
  const auto j = runner::sum_worker_counters({w0, w1});
  EXPECT_EQ(j["secy"]["InPktsOK"], 7);
  EXPECT_EQ(j["secy"]["OutPktsEncrypted"], 10);
  EXPECT_EQ(j["link"]["tx_frames"], 10);
  EXPECT_EQ(j["link"]["tx_offload_refused"]["bad_header"], 3);
  EXPECT_EQ(j["tx_sc"]["sci"], "0200007800010001");
  EXPECT_EQ(j["tx_sc"]["sas"][0]["an"], 0);
  EXPECT_EQ(j["tx_sc"]["sas"][0]["next_pn"], 1);
  EXPECT_EQ(j["tx_sc"]["sas"][0]["OutPktsEncrypted"], 12);
  EXPECT_EQ(j["rx_scs"][0]["sas"][0]["InPktsOK"], 4);
  EXPECT_EQ(j["rx_scs"][0]["sas"][0]["lowest_pn"], 1);
  ASSERT_EQ(j["workers"].size(), 2U);
  EXPECT_EQ(j["workers"][1]["secy"]["InPktsOK"], 4);
}

}  // namespace
}  // namespace layersec::macsec
