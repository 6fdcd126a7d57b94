// Engine behaviour over simulated time: randomised loss / reorder /
// duplicate / replay sequences against a reference model (both modes),
// restarts and persistence, burst-loss resynchronisation, configuration.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "layersec/secoc/config.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"
#include "support/vectors.h"

namespace layersec::secoc {
namespace {

// Vendor-strength MAC (64 bits, so a chance acceptance never makes the test
// flaky) with only 8 FV bits on the wire, so wraps happen every 256 PDUs.
PduProfile wrap_profile() {
  PduProfile p = PduProfile::vendor();
  p.kind = ProfileKind::kCustom;
  p.freshness = FreshnessLayout::fv64(8);
  return p;
}

struct Sent {
  std::uint64_t cycle = 0;
  std::uint64_t n = 0;
  std::vector<std::uint8_t> payload;
  std::vector<std::uint8_t> wire;
};

// Reference model of one receiver PDU: the current reset cycle, and the
// previous one for late PDUs while the current one has accepted fewer than W
// (engine.h); each cycle is time-bound to start + period + maxAge (1 s + 1 s).
struct Model {
  struct Cycle {
    bool valid = false;
    std::uint64_t cycle = 0;
    std::uint64_t last = 0;  // strict: last accepted; tolerant: highest
    std::set<std::uint64_t> seen{0};
    TimePoint start;
  };
  FreshnessMode mode;
  std::uint64_t w;
  Cycle cur, prev;
  bool fits(Cycle& c, const Sent& s, TimePoint now) {
    if (!c.valid || s.cycle != c.cycle || now > c.start + Duration::seconds(2)) return false;
    bool ok;
    if (mode == FreshnessMode::kStrict) {
      ok = s.n > c.last && s.n - c.last < w;
    } else {
      ok = (s.n > c.last && s.n - c.last < w) || (s.n <= c.last && c.last - s.n < w && !c.seen.count(s.n));
    }
    if (ok) {
      c.seen.insert(s.n);
      c.last = std::max(c.last, s.n);
    }
    return ok;
  }
  bool accept(const Sent& s, TimePoint now) {
    if (fits(cur, s, now)) return true;
    return cur.last < w && fits(prev, s, now);
  }
  void resync(std::uint64_t c, TimePoint now) {
    prev = cur;
    cur = Cycle{true, c, 0, {0}, now};
  }
};

void run_random(FreshnessMode mode, std::uint32_t seed, std::uint64_t& accepted, std::uint64_t& rejected) {
  LinkOptions o;
  o.profile = wrap_profile();
  o.mode = mode;
  o.window = 32;
  SimulatedLink link(o);
  Model model{mode, 32, {}, {}};
  model.resync(link.sender().reset(), link.now());
  std::mt19937 rng(seed);
  std::vector<Sent> all;
  std::vector<std::uint8_t> out;
  for (int batch = 0; batch < 6; ++batch) {
    std::vector<std::size_t> queue;
    int burst = 0;
    for (int k = 0; k < 50; ++k) {
      Sent s;
      s.cycle = link.sender().reset();
      s.n = link.sender().next_tx_freshness(0).msg;
      s.payload.resize(rng() % 20);
      for (auto& b : s.payload) b = static_cast<std::uint8_t>(rng());
      s.wire = link.send(s.payload);
      all.push_back(std::move(s));
      const std::size_t idx = all.size() - 1;
      const unsigned r = rng() % 100;
      if (burst > 0) {
        --burst;  // lost in a burst
      } else if (r < 8) {
        // single loss
      } else if (r < 11) {
        burst = static_cast<int>(rng() % 45);  // sometimes larger than W
      } else {
        queue.push_back(idx);
      }
      if (rng() % 100 < 5 && !queue.empty()) queue.push_back(queue[rng() % queue.size()]);  // duplicate
      if (rng() % 100 < 5) queue.push_back(rng() % all.size());                             // replay
    }
    // Local reordering.
    for (std::size_t i = 0; i + 1 < queue.size(); ++i)
      if (rng() % 100 < 10) std::swap(queue[i], queue[std::min(queue.size() - 1, i + 1 + rng() % 5)]);
    for (std::size_t idx : queue) {
      const Sent& s = all[idx];
      const auto before = link.receiver().rx_freshness(0);
      const bool want = model.accept(s, link.now());
      auto r = link.receive(s.wire, out);
      ASSERT_EQ(r.ok(), want) << "seed " << seed << " cycle " << s.cycle << " n " << s.n
                              << " rx last " << before.last.msg;
      if (want) {
        ++accepted;
        ASSERT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*r)), s.payload);
      } else {
        ++rejected;
        const auto after = link.receiver().rx_freshness(0);
        ASSERT_EQ(after.last, before.last);  // a rejection leaves no trace
        const Rejection e = r.error();
        ASSERT_TRUE(e == Rejection::kReplay || e == Rejection::kOutOfWindow ||
                    e == Rejection::kMacMismatch || e == Rejection::kStale)
            << to_string(e);
      }
    }
    // End of batch: next sync (new reset cycle), lost 10% of the time.
    const bool deliver = rng() % 10 != 0;
    link.advance(Duration::seconds(1), deliver);
    if (deliver) model.resync(link.sender().reset(), link.now());
  }
}

TEST(EngineRandomised, StrictAndBitmapAgreeWithReferenceModel) {
  for (FreshnessMode mode : {FreshnessMode::kStrict, FreshnessMode::kReorderTolerant}) {
    std::uint64_t accepted = 0, rejected = 0;
    for (std::uint32_t seed = 1; seed <= 60; ++seed) {
      run_random(mode, seed, accepted, rejected);
      if (::testing::Test::HasFatalFailure()) return;
    }
    // The sequences exercise both outcomes substantially.
    EXPECT_GT(accepted, 5000u);
    EXPECT_GT(rejected, 1000u);
    std::printf("mode %s: %llu accepted, %llu rejected\n",
                mode == FreshnessMode::kStrict ? "strict" : "reorder-tolerant",
                static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(rejected));
  }
}

// --- restarts ----------------------------------------------------------------

TEST(EngineRestart, KillBetweenTwoSendsNeverReusesAnFvAndReceiverFollows) {
  SimulatedLink link(LinkOptions{});
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> used;
  std::vector<std::vector<std::uint8_t>> old_wires;
  std::vector<std::uint8_t> out;
  const std::uint8_t pl[4] = {1, 2, 3, 4};
  std::uint64_t last_trip = 0;
  for (int life = 0; life < 6; ++life) {
    EXPECT_GT(link.sender().trip(), last_trip);
    last_trip = link.sender().trip();
    EXPECT_EQ(link.sender_store().state().tx_trip, last_trip);  // persisted before any send
    for (int i = 0; i < 2; ++i) {
      const auto c = link.sender().next_tx_freshness(0);
      EXPECT_TRUE(used.insert({c.trip, c.reset, c.msg}).second) << "FV reused";
      const auto w = link.send(pl);
      ASSERT_TRUE(link.receive(w, out).ok());
      old_wires.push_back(w);
    }
    link.restart_sender();  // killed between two sends
    link.advance(Duration::zero());  // start-up sync of the new incarnation
    for (const auto& w : old_wires) {
      auto r = link.receive(w, out);
      ASSERT_FALSE(r.ok());  // nothing from an earlier life is accepted again
    }
  }
}

TEST(EngineRestart, FileStateStoreIsAtomicAndRefusesCorruptState) {
  const std::string path = ::testing::TempDir() + "/secoc_state_" + std::to_string(::getpid());
  std::remove(path.c_str());
  LinkOptions o;
  {
    FileStateStore store(path);
    // A missing state file is refused unless this is the first provisioning.
    auto missing = Engine::start(link_sender_config(o), store);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), StartError::kStateMissing);
    for (std::uint64_t expect = 1; expect <= 3; ++expect) {
      StartOptions so;
      so.first_start = expect == 1;
      auto e = Engine::start(link_sender_config(o), store, so);
      ASSERT_TRUE(e.ok());
      EXPECT_EQ((*e)->trip(), expect);
    }
    auto loaded = store.load();
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->tx_trip, 3u);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_NE(::access((path + ".tmp").c_str(), F_OK), 0);  // no temp file left
  }
  {
    std::ofstream f(path, std::ios::trunc);
    f << "layersec-secoc-state 1\ntx_trip 7\n";  // truncated: no "end"
  }
  FileStateStore store(path);
  auto e = Engine::start(link_sender_config(o), store);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), StartError::kStateCorrupt);
  EXPECT_NE(store.last_error().find("corrupt"), std::string::npos) << store.last_error();
  // A store that cannot persist stops the start: no PDU without a durable trip.
  MemoryStateStore failing;
  failing.set_fail_saves(true);
  auto f = Engine::start(link_sender_config(o), failing);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error(), StartError::kStateStore);
  std::remove(path.c_str());
}

TEST(EngineRestart, StateSerialisationRoundTrip) {
  PersistedState s;
  s.tx_trip = 42;
  s.rx = {{0, 5, 6}, {3, 7, 8}};
  auto back = parse_state(serialize_state(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(parse_state("garbage").ok());
  EXPECT_FALSE(parse_state("layersec-secoc-state 1\nend\n").ok());  // no trip
}

// --- burst loss larger than W: resynchronisation time -----------------------

TEST(EngineResync, BurstLossLargerThanWRecoversAtTheNextSync) {
  for (FreshnessMode mode : {FreshnessMode::kStrict, FreshnessMode::kReorderTolerant}) {
    LinkOptions o;
    o.mode = mode;
    o.window = 32;
    o.sync_period = Duration::seconds(1);
    const Duration interval = Duration::milliseconds(10);
    const ResyncReport big = measure_burst_resync(o, interval, 50, 20);
    EXPECT_EQ(big.recovered, 20);
    // Recovery needs the next sync: at most one period (plus one PDU slot).
    EXPECT_LE(big.max, o.sync_period + interval);
    EXPECT_GT(big.mean, Duration::zero());
    std::printf("%s W=32 burst=50 @10ms, sync 1s: resync mean %.1f ms min %.1f max %.1f, %llu PDUs dropped\n",
                mode == FreshnessMode::kStrict ? "strict" : "tolerant", big.mean.ms(), big.min.ms(),
                big.max.ms(), static_cast<unsigned long long>(big.rejected_after_burst));
    // A burst below W - 1 costs nothing.
    const ResyncReport small = measure_burst_resync(o, interval, 20, 5);
    EXPECT_EQ(small.recovered, 5);
    EXPECT_EQ(small.max, Duration::zero());
  }
}

// --- configuration -------------------------------------------------------------

TEST(EngineConfigJson, LoadsExampleAndDescribesForgeryProbabilities) {
  const auto j = layersec::testing::load_testdata_json("secoc/engine_config.json");
  const EngineConfig c = config_from_json(j);
  ASSERT_EQ(c.tx_pdus.size(), 6u);
  EXPECT_EQ(c.tx_pdus[0].profile.kind, ProfileKind::kVendor);
  EXPECT_EQ(c.tx_pdus[1].profile.auth_pdu_header_length, 2);
  EXPECT_EQ(c.tx_pdus[3].profile.kind, ProfileKind::kCustom);
  EXPECT_EQ(c.tx_pdus[3].profile.freshness.tx_bits, 24);
  EXPECT_EQ(c.rx_pdus[1].mode, FreshnessMode::kReorderTolerant);
  EXPECT_EQ(c.rx_pdus[2].window, 4u);  // Profile 3: W capped to 2^2
  const std::string d = c.describe();
  EXPECT_NE(d.find("2^-64 per attempt"), std::string::npos);
  EXPECT_NE(d.find("2^-24 per attempt"), std::string::npos);
  EXPECT_NE(d.find("2^-28 per attempt"), std::string::npos);
  EXPECT_NE(d.find("NO freshness value"), std::string::npos);
  EXPECT_NE(d.find("NON-STANDARD"), std::string::npos);
  MemoryStateStore s;
  auto e = Engine::start(c, s);
  ASSERT_TRUE(e.ok());
}

std::string config_error(const nlohmann::json& j) {
  try {
    (void)config_from_json(j);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(EngineConfigJson, ErrorsNameTheJsonPath) {
  auto base = layersec::testing::load_testdata_json("secoc/engine_config.json");
  auto j = base;
  j["txPdus"][0]["authInfoTxLength"] = 200;
  EXPECT_EQ(config_error(j).rfind("$.txPdus[0]: authInfoTxLength must be 1..128", 0), 0u) << config_error(j);
  j = base;
  j["rxPdus"][2]["window"] = 32;
  EXPECT_EQ(config_error(j).rfind("$.rxPdus[2].window", 0), 0u) << config_error(j);
  j = base;
  j["rxPdus"][0]["bogus"] = 1;
  EXPECT_EQ(config_error(j), "$.rxPdus[0].bogus: unknown key");
  j = base;
  j["txPdus"][0]["keyGroup"] = "nope";
  EXPECT_EQ(config_error(j).rfind("$.txPdus[0].keyGroup", 0), 0u);
  j = base;
  j["txPdus"][0]["algorithm"] = "aes256-gcm";  // AEAD only via the explicit profile
  EXPECT_EQ(config_error(j).rfind("$.txPdus[0].algorithm", 0), 0u);
  j = base;
  j["rxPdus"][0].erase("syncChannel");
  EXPECT_EQ(config_error(j).rfind("$.rxPdus[0].syncChannel", 0), 0u);
  j = base;
  j["txPdus"][3]["freshnessValueTxLength"] = 40;
  EXPECT_EQ(config_error(j).rfind("$.txPdus[3].freshnessValueLength", 0), 0u) << config_error(j);
  j = base;
  j["txPdus"][1]["dataId"] = -1;
  EXPECT_EQ(config_error(j).rfind("$.txPdus[1].dataId", 0), 0u);
  // No profile given: the vendor profile, never the AEAD one.
  j = base;
  j["txPdus"][0].erase("profile");
  EXPECT_EQ(config_from_json(j).tx_pdus[0].profile.kind, ProfileKind::kVendor);
}

}  // namespace
}  // namespace layersec::secoc
