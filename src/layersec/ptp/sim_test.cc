// The simulator: four hops of relays with ±100 ppm oscillators converge
// below 100 ns (automotive static roles and gptp with the BMCA); link
// asymmetry shows as asymmetry/2 per hop; spoofed and malformed Sync and
// Announce are dropped and counted by reason without moving the clock; an
// oscillator whose frequency ramps is tracked with a lag that grows with
// the sync interval.
#include "layersec/ptp/sim.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <vector>

namespace layersec::ptp {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kTai = 1'790'000'000LL * kSecond;  // a GM timescale far from the local clocks

SystemConfig node_config(Profile profile, Role role, std::uint64_t id, std::size_t ports) {
  SystemConfig c;
  c.profile = profile;
  c.role = role;
  c.clock_identity = id;
  c.port_count = ports;
  c.pdelay.neighbor_prop_delay_thresh_ns = 10'000;
  if (role == Role::kGm) c.initial_offset_ns = kTai;
  return c;
}

struct Chain {
  Simulator sim{42};
  std::vector<std::size_t> nodes;  // GM first, end station last
};

// GM - R1 - R2 - R3 - end station: four links, oscillators alternating
// +100 / -100 ppm, 3 ns timestamp noise, 600 ns links, 1 ms residence.
Chain make_chain(Profile profile, std::int64_t asymmetry_ns = 0, bool interval_request = false) {
  Chain ch;
  const double ppm[5] = {100, -100, 100, -100, 100};
  for (std::size_t i = 0; i < 5; ++i) {
    const bool gm = i == 0, end = i == 4;
    Role role = gm ? Role::kGm : Role::kSlave;
    if (profile == Profile::kGptp) role = Role::kAuto;
    SystemConfig c = node_config(profile, role, 0x0200000000000010ULL + i, gm || end ? 1 : 2);
    if (profile == Profile::kGptp && gm) {
      c.priority1 = 246;
      c.initial_offset_ns = kTai;
    }
    if (end) c.interval_request = interval_request;
    // Relays hold a frame 1 ms before it leaves (residence time; at 200 ppm
    // between neighbours that is 200 ns unless converted by the rate ratio).
    const std::int64_t latency = gm || end ? 20'000 : 1'000'000;
    ch.nodes.push_back(
        ch.sim.add_node(c, SimClock{ppm[i], static_cast<std::int64_t>(i) * 7'000'000'123LL, 3.0, latency}));
  }
  for (std::size_t i = 0; i + 1 < 5; ++i) {
    // Relays face the GM on port 0 and the next hop on port 1.
    ch.sim.connect(ch.nodes[i], i == 0 ? 0 : 1, ch.nodes[i + 1], 0, SimLink{600, asymmetry_ns});
  }
  return ch;
}

struct Stats {
  double max_abs = 0, rms = 0, mean = 0;
};

// Samples node vs GM every 100 ms for `seconds` of simulated time.
Stats measure(Chain& ch, std::size_t node, int seconds) {
  Stats s;
  int n = 0;
  double sum = 0, sq = 0;
  for (int k = 0; k < seconds * 10; ++k) {
    ch.sim.run_until(ch.sim.now() + kSecond / 10);
    const double o = ch.sim.offset_between(ch.nodes[node], ch.nodes[0]);
    s.max_abs = std::max(s.max_abs, std::fabs(o));
    sum += o;
    sq += o * o;
    ++n;
  }
  s.mean = sum / n;
  s.rms = std::sqrt(sq / n);
  return s;
}

TEST(PtpSim, AutomotiveFourHopsConvergeBelow100ns) {
  Chain ch = make_chain(Profile::kAutomotive);
  ch.sim.run_until(60 * kSecond);
  EXPECT_TRUE(ch.sim.node(ch.nodes[0]).is_grandmaster());
  EXPECT_STREQ(ch.sim.node(ch.nodes[4]).state(), "slave");
  EXPECT_STREQ(ch.sim.node(ch.nodes[2]).state(), "relay");
  const Stats s = measure(ch, 4, 30);
  std::cout << "automotive, 4 hops, +-100 ppm, 3 ns noise: end station offset rms " << s.rms << " ns, max " << s.max_abs
            << " ns\n";
  EXPECT_LT(s.max_abs, 100.0);
  for (std::size_t r = 1; r < 4; ++r) EXPECT_LT(std::fabs(ch.sim.offset_between(ch.nodes[r], ch.nodes[0])), 100.0);
  // The end station measured its rate against the GM: 100 ppm each way.
  EXPECT_NEAR(ch.sim.node(ch.nodes[4]).status().rate_ratio, (1 + 100e-6) / (1 + 100e-6), 1e-7);
  EXPECT_NEAR(ch.sim.node(ch.nodes[3]).status().rate_ratio, (1 + 100e-6) / (1 - 100e-6), 1e-7);
  EXPECT_NEAR(ch.sim.node(ch.nodes[4]).status().path_delay_ns, 600.0, 5.0);
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t p = 0; p < ch.sim.node(ch.nodes[i]).config().port_count; ++p) {
      EXPECT_EQ(ch.sim.node(ch.nodes[i]).counters(p).drops.total(), 0U) << "node " << i << " port " << p;
    }
  }
}

TEST(PtpSim, GptpBmcaPicksTheGmAndFourHopsConverge) {
  Chain ch = make_chain(Profile::kGptp);
  ch.sim.run_until(60 * kSecond);
  EXPECT_TRUE(ch.sim.node(ch.nodes[0]).is_grandmaster());
  for (std::size_t i = 1; i < 5; ++i) {
    EXPECT_FALSE(ch.sim.node(ch.nodes[i]).is_grandmaster()) << i;
    EXPECT_EQ(ch.sim.node(ch.nodes[i]).grandmaster_identity(), 0x0200000000000010ULL) << i;
    EXPECT_EQ(ch.sim.node(ch.nodes[i]).port_role(0), PortRole::kSlave) << i;
  }
  EXPECT_EQ(ch.sim.node(ch.nodes[2]).port_role(1), PortRole::kMaster);
  const Stats s = measure(ch, 4, 30);
  std::cout << "gptp+BMCA, 4 hops, +-100 ppm, 3 ns noise: end station offset rms " << s.rms << " ns, max " << s.max_abs
            << " ns\n";
  EXPECT_LT(s.max_abs, 100.0);
}

TEST(PtpSim, AsymmetryShowsAsHalfPerHop) {
  Chain ch = make_chain(Profile::kAutomotive, /*asymmetry_ns=*/40);
  ch.sim.run_until(60 * kSecond);
  const Stats s = measure(ch, 4, 20);
  // Each hop's delay toward the end station is 20 ns longer than the mean:
  // the end station runs 4 · 20 ns behind... (the mechanism cannot see it).
  EXPECT_NEAR(s.mean, -80.0, 15.0);
}

TEST(PtpSim, AutomotiveSlaveSwitchesToOperationalIntervals) {
  Chain ch = make_chain(Profile::kAutomotive, 0, /*interval_request=*/true);
  ch.sim.run_until(60 * kSecond);
  const auto& end = ch.sim.node(ch.nodes[4]);
  EXPECT_TRUE(end.operational_intervals());
  EXPECT_EQ(end.pdelay(0).log_interval(), 2);
  EXPECT_EQ(ch.sim.node(ch.nodes[3]).log_sync_interval(1), 0);  // the relay's port toward it now sends 1/s
  EXPECT_EQ(ch.sim.node(ch.nodes[3]).log_sync_interval(0), -3);
  ch.sim.run_until(120 * kSecond);
  const Stats s = measure(ch, 4, 30);
  std::cout << "automotive after the switch to 1 s Sync: offset rms " << s.rms << " ns, max " << s.max_abs << " ns\n";
  EXPECT_LT(s.max_abs, 100.0);
}

std::vector<std::uint8_t> bytes_of(const Message& m) {
  std::vector<std::uint8_t> b(kMaxMessageSize);
  b.resize(encode_message(m, b));
  return b;
}

TEST(PtpSim, SpoofedAndMalformedSyncAreDroppedByReason) {
  Chain ch = make_chain(Profile::kAutomotive);
  ch.sim.run_until(60 * kSecond);
  const std::size_t end = ch.nodes[4];
  const PortCounters before = ch.sim.node(end).counters(0);
  const PortIdentity rogue{0x0200000000000099ULL, 1};
  std::int64_t t = ch.sim.now();
  int n = 0;
  for (std::uint16_t k = 0; k < 50; ++k, t += kSecond / 5) {
    // A second GM, one second ahead.
    Message sync;
    sync.header = make_header(MessageType::kSync, rogue, k, -3, 1);
    Message fu;
    fu.header = make_header(MessageType::kFollowUp, rogue, k, -3, 1);
    fu.timestamp = from_ns(kTai + 100 * kSecond);
    ch.sim.inject(end, 0, bytes_of(sync), t);
    ch.sim.inject(end, 0, bytes_of(fu), t + 1000);
    ++n;
  }
  // The real GM's identity but domain 1, an impossible correction, a
  // Follow_Up for no Sync, a truncated message.
  const PortIdentity relay{0x0200000000000013ULL, 2};
  Message wrong_domain;
  wrong_domain.header = make_header(MessageType::kSync, relay, 1, -3, 1);
  wrong_domain.header.domain = 1;
  ch.sim.inject(end, 0, bytes_of(wrong_domain), t);
  Message bad_corr;
  bad_corr.header = make_header(MessageType::kSync, relay, 2, -3, 1);
  bad_corr.header.correction = -(std::int64_t{5} << 16);
  ch.sim.inject(end, 0, bytes_of(bad_corr), t + 10);
  Message stray;
  stray.header = make_header(MessageType::kFollowUp, relay, 60000, -3, 1);
  ch.sim.inject(end, 0, bytes_of(stray), t + 20);
  auto trunc = bytes_of(stray);
  trunc.resize(20);
  ch.sim.inject(end, 0, trunc, t + 30);
  Message announce;
  announce.header = make_header(MessageType::kAnnounce, rogue, 1, 0, 1);
  announce.announce.priority1 = 0;
  announce.announce.grandmaster_identity = rogue.clock_identity;
  ch.sim.inject(end, 0, bytes_of(announce), t + 40);
  const Stats s = measure(ch, 4, 15);
  const PortCounters& after = ch.sim.node(end).counters(0);
  auto delta = [&](DropReason r) { return after.drops[r] - before.drops[r]; };
  EXPECT_EQ(delta(DropReason::kSecondGm), 2U * n - n);  // the Syncs; their Follow_Ups match no Sync
  EXPECT_EQ(delta(DropReason::kWrongSequence), static_cast<std::uint64_t>(n) + 1);
  EXPECT_EQ(delta(DropReason::kWrongDomain), 1U);
  EXPECT_EQ(delta(DropReason::kBadCorrection), 1U);
  EXPECT_EQ(delta(DropReason::kMalformed), 1U);
  EXPECT_EQ(delta(DropReason::kAnnounceDisabled), 1U);
  EXPECT_EQ(after.malformed[static_cast<std::size_t>(ParseError::kTruncated)], 1U);
  EXPECT_LT(s.max_abs, 100.0);
}

TEST(PtpSim, GptpDropsAnnounceLoopsAndForeignSyncs) {
  Chain ch = make_chain(Profile::kGptp);
  ch.sim.run_until(40 * kSecond);
  const std::size_t end = ch.nodes[4];
  const PortCounters before = ch.sim.node(end).counters(0);
  Message loop;
  loop.header = make_header(MessageType::kAnnounce, PortIdentity{0x0200000000000077ULL, 1}, 1, 0, 1);
  loop.announce.priority1 = 1;
  loop.announce.grandmaster_identity = 0x0200000000000077ULL;
  loop.announce.has_path_trace = true;
  loop.announce.path_trace_count = 2;
  loop.announce.path_trace[0] = 0x0200000000000077ULL;
  loop.announce.path_trace[1] = 0x0200000000000014ULL;  // the end station itself
  ch.sim.inject(end, 0, bytes_of(loop), ch.sim.now() + 100);
  Message foreign;
  foreign.header = make_header(MessageType::kSync, PortIdentity{0x0200000000000077ULL, 1}, 9, -3, 1);
  ch.sim.inject(end, 0, bytes_of(foreign), ch.sim.now() + 200);
  const Stats s = measure(ch, 4, 10);
  const PortCounters& after = ch.sim.node(end).counters(0);
  EXPECT_EQ(after.drops[DropReason::kPathTraceLoop] - before.drops[DropReason::kPathTraceLoop], 1U);
  EXPECT_EQ(after.drops[DropReason::kSecondGm] - before.drops[DropReason::kSecondGm], 1U);
  EXPECT_EQ(ch.sim.node(end).grandmaster_identity(), 0x0200000000000010ULL);
  EXPECT_LT(s.max_abs, 100.0);
}

// A - R - B, all gptp/auto: B (priority1 240) beats A (246); R's port toward
// B becomes its slave port and A follows B through R.
TEST(PtpSim, BmcaFollowsTheBestClockWhereverItIs) {
  Simulator sim(7);
  SystemConfig a = node_config(Profile::kGptp, Role::kAuto, 0x0200000000000021ULL, 1);
  a.priority1 = 246;
  SystemConfig r = node_config(Profile::kGptp, Role::kAuto, 0x0200000000000022ULL, 2);
  SystemConfig b = node_config(Profile::kGptp, Role::kAuto, 0x0200000000000023ULL, 1);
  b.priority1 = 240;
  b.initial_offset_ns = kTai;
  const std::size_t na = sim.add_node(a, SimClock{50, 1'000, 2.0, 0});
  const std::size_t nr = sim.add_node(r, SimClock{-50, 2'000, 2.0, 500'000});
  const std::size_t nb = sim.add_node(b, SimClock{20, 3'000, 2.0, 0});
  sim.connect(na, 0, nr, 0, SimLink{400, 0});
  sim.connect(nr, 1, nb, 0, SimLink{400, 0});
  sim.run_until(40 * kSecond);
  EXPECT_TRUE(sim.node(nb).is_grandmaster());
  EXPECT_FALSE(sim.node(na).is_grandmaster());
  EXPECT_EQ(sim.node(nr).port_role(1), PortRole::kSlave);
  EXPECT_EQ(sim.node(nr).port_role(0), PortRole::kMaster);
  EXPECT_EQ(sim.node(na).port_role(0), PortRole::kSlave);
  EXPECT_EQ(sim.node(na).grandmaster_identity(), 0x0200000000000023ULL);
  sim.run_until(50 * kSecond);
  EXPECT_LT(std::fabs(sim.offset_between(na, nb)), 100.0);
}

// A slave locked to one grandmaster that a better one on another timescale
// (an hour ahead) replaces: the servo may step again for the new source,
// as on its first lock. Before, its first step was spent on the first GM and
// with gptp's step_threshold 0 it only slewed at 900 ppm (an hour away: never
// arriving); a relay that served its own raw clock for its first seconds
// did the same to the slaves behind it (docs/ptp.md, "A relay between real
// processes").
TEST(PtpSim, ANewGrandmasterOnAnotherTimescaleIsSteppedTo) {
  Simulator sim(11);
  SystemConfig a = node_config(Profile::kGptp, Role::kAuto, 0x0200000000000031ULL, 2);
  a.priority1 = 250;
  SystemConfig b = node_config(Profile::kGptp, Role::kAuto, 0x0200000000000032ULL, 1);
  b.priority1 = 240;
  b.initial_offset_ns = kTai;
  SystemConfig c = node_config(Profile::kGptp, Role::kAuto, 0x0200000000000033ULL, 1);
  c.priority1 = 230;
  c.initial_offset_ns = kTai + 3600 * kSecond;
  const std::size_t na = sim.add_node(a, SimClock{40, 1'000, 2.0, 0});
  const std::size_t nb = sim.add_node(b, SimClock{-30, 2'000, 2.0, 0});
  const std::size_t nc = sim.add_node(c, SimClock{10, 3'000, 2.0, 0});
  sim.connect(na, 0, nb, 0, SimLink{400, 0});
  sim.run_until(30 * kSecond);
  ASSERT_EQ(sim.node(na).grandmaster_identity(), 0x0200000000000032ULL);
  ASSERT_LT(std::fabs(sim.offset_between(na, nb)), 100.0);
  sim.connect(na, 1, nc, 0, SimLink{400, 0});  // the better GM appears
  sim.run_until(70 * kSecond);
  EXPECT_EQ(sim.node(na).grandmaster_identity(), 0x0200000000000033ULL);
  EXPECT_EQ(sim.node(na).port_role(1), PortRole::kSlave);
  EXPECT_LT(std::fabs(sim.offset_between(na, nc)), 100.0);
}

TEST(PtpSim, RecordedClockHistoryReplaysEveryServoUpdate) {
  Chain ch = make_chain(Profile::kAutomotive);
  ch.sim.record_clocks(true);
  ch.sim.run_until(20 * kSecond);
  EXPECT_EQ(ch.sim.clock_history(ch.nodes[0]).size(), 1u);  // the GM's clock never changes
  const auto& h = ch.sim.clock_history(ch.nodes[4]);
  ASSERT_GT(h.size(), 100u);  // ~8 servo updates a second
  for (std::size_t i = 1; i < h.size(); ++i) EXPECT_LT(h[i - 1].from_ns, h[i].from_ns) << i;
  EXPECT_TRUE(h.back().clock == ch.sim.node(ch.nodes[4]).clock());
  // The last recorded clock over the oscillator gives the offset the simulator measures.
  const std::int64_t now = ch.sim.now();
  const double rec = static_cast<double>(h.back().clock.to_synced(ch.sim.oscillator(ch.nodes[4], now)) -
                                         ch.sim.clock_history(ch.nodes[0]).back().clock.to_synced(
                                             ch.sim.oscillator(ch.nodes[0], now)));
  EXPECT_NEAR(rec, ch.sim.offset_between(ch.nodes[4], ch.nodes[0]), 1.0);
}

TEST(PtpSim, AFrequencyRampBendsTheOscillator) {
  Simulator sim(3);
  const SystemConfig c = node_config(Profile::kAutomotive, Role::kGm, 0x0200000000000031ULL, 1);
  // +1 ppm/s from 0: after 10 s the clock has gained 1/2 · 1e-6/s · (10 s)² = 50 us.
  SimClock ramp{0, 1'000, 0, 0};
  ramp.ppm_per_s = 1;
  const std::size_t a = sim.add_node(c, ramp);
  EXPECT_EQ(sim.oscillator(a, 10 * kSecond), 1'000 + 10 * kSecond + 50'000);
  // The same ramp with its error 0 at 10 s: 50 us behind then, at the nominal rate.
  ramp.ppm_at_ns = 10 * kSecond;
  const std::size_t b = sim.add_node(c, ramp);
  EXPECT_EQ(sim.oscillator(b, 10 * kSecond), 1'000 + 10 * kSecond - 50'000);
  EXPECT_EQ(sim.oscillator(b, 10 * kSecond + 1'000'000) - sim.oscillator(b, 10 * kSecond), 1'000'000);
  // -100 ppm at 10 s: 100 ns lost per ms there.
  ramp.ppm = -100;
  const std::size_t d = sim.add_node(c, ramp);
  EXPECT_EQ(sim.oscillator(d, 10 * kSecond + 1'000'000) - sim.oscillator(d, 10 * kSecond), 999'900);
}

// Every oscillator's error but the GM's changes by +-0.5 ppm/s (a temperature ramp): the
// servos track it with a lag that grows with the sync interval (the PI
// loop's integral term sees the ramp once per Sync).
TEST(PtpSim, AFrequencyRampIsTrackedWithALagThatGrowsWithTheSyncInterval) {
  auto worst = [](std::int8_t log_sync_interval) {
    Simulator sim(42);
    std::vector<std::size_t> nodes;
    for (std::size_t i = 0; i < 5; ++i) {
      SystemConfig c = node_config(Profile::kAutomotive, i == 0 ? Role::kGm : Role::kSlave,
                                   0x0200000000000040ULL + i, i == 0 || i == 4 ? 1 : 2);
      c.log_sync_interval = log_sync_interval;
      SimClock k{i % 2 ? -100.0 : 100.0, static_cast<std::int64_t>(i) * 7'000'000'123LL, 3.0, i == 0 || i == 4 ? 0 : 50'000};
      k.ppm_per_s = i == 0 ? 0 : i % 2 ? 0.5 : -0.5;  // the GM's frequency steady, the others ramping
      k.ppm_at_ns = 40 * kSecond;
      nodes.push_back(sim.add_node(c, k));
    }
    for (std::size_t i = 0; i + 1 < 5; ++i) sim.connect(nodes[i], i == 0 ? 0 : 1, nodes[i + 1], 0, SimLink{600, 0});
    sim.run_until(40 * kSecond);
    double m = 0;
    for (int k = 0; k < 100; ++k) {
      sim.run_until(sim.now() + kSecond / 10);
      m = std::max(m, std::fabs(sim.offset_between(nodes[4], nodes[0])));
    }
    return m;
  };
  const double fast = worst(-5), slow = worst(0);
  std::cout << "+-0.5 ppm/s ramps, 4 hops: end station max offset " << fast << " ns at 31.25 ms Sync, " << slow
            << " ns at 1 s\n";
  EXPECT_LT(fast, slow);
  EXPECT_LT(fast, 1'000.0);
  EXPECT_LT(slow, 20'000.0);
}

TEST(PtpSim, ConfigErrorsNameTheField) {
  SystemConfig c = node_config(Profile::kAutomotive, Role::kAuto, 1, 1);
  EXPECT_THROW(TimeAwareSystem{c}, ConfigError);
  c.role = Role::kSlave;
  c.port_count = 9;
  EXPECT_THROW(TimeAwareSystem{c}, ConfigError);
  c.port_count = 1;
  c.log_sync_interval = 9;
  try {
    TimeAwareSystem s(c);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("log_sync_interval"), std::string::npos);
  }
}

// Two Announcers on one link (an injected better clock beside the real
// upstream, as the netns hijack test does): the port keeps the superior
// information until it times out (802.1AS-2020 §10.3.12) instead of taking
// whichever Announce came last, and counts the real upstream's (now
// inferior) Announces; when the injection stops, the real GM returns after
// announceReceiptTimeout.
TEST(PtpSim, GptpKeepsTheSuperiorAnnouncerUntilItTimesOut) {
  constexpr std::uint64_t kRogue = 0x0200000000000099ULL;
  Chain ch = make_chain(Profile::kGptp);
  ch.sim.run_until(40 * kSecond);
  const std::size_t end = ch.nodes[4];
  ASSERT_EQ(ch.sim.node(end).grandmaster_identity(), 0x0200000000000010ULL);
  const std::uint64_t inferior_before = ch.sim.node(end).counters(0).drops[DropReason::kInferiorAnnounce];
  const std::int64_t t0 = ch.sim.now();
  for (int i = 0; i < 24; ++i) {  // 3 s of Announces every 125 ms
    Message a;
    a.header = make_header(MessageType::kAnnounce, PortIdentity{kRogue, 1}, static_cast<std::uint16_t>(i + 1), -3, 1);
    a.announce.priority1 = 0;
    a.announce.grandmaster_identity = kRogue;
    ch.sim.inject(end, 0, bytes_of(a), t0 + i * (kSecond / 8) + 1000);
  }
  for (int k = 1; k <= 12; ++k) {  // every 250 ms while it lasts: never handed back
    ch.sim.run_until(t0 + k * (kSecond / 4) + 2000);
    EXPECT_EQ(ch.sim.node(end).grandmaster_identity(), kRogue) << "at " << k * 250 << " ms";
  }
  EXPECT_GT(ch.sim.node(end).counters(0).drops[DropReason::kInferiorAnnounce], inferior_before);
  ch.sim.run_until(t0 + 8 * kSecond);  // 3 x 125 ms after the last one, then the real GM's next Announce
  EXPECT_EQ(ch.sim.node(end).grandmaster_identity(), 0x0200000000000010ULL);
}

}  // namespace
}  // namespace layersec::ptp
