// The zonal network (zonal.h): ST against its analytic bound with the shaper
// on under 80 % camera load for 1-4 hops, no ST loss, the contrast without
// the shaper, and the compromised switch. Simulated time only: every figure
// asserted is a count or an exact simulated latency. With per-node clocks
// (zonal_clock.h): free-running clocks with no drift change nothing; gPTP
// keeps the gates of adjacent hops within tens of ns and ST on its plan;
// free-running clocks drift apart and ST misses its windows.
#include "layersec/harness/zonal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "layersec/harness/zonal_clock.h"
#include "layersec/harness/zonal_schedule.h"
#include "layersec/tsn/gate_control_list.h"

namespace layersec::harness {
namespace {

ZonalOptions small(int hops, ZonalShaper s) {
  ZonalOptions o;
  o.hops = hops;
  o.shaper = s;
  o.be_load_pct = 80;
  o.port_bps = 100'000'000;  // 100 Mbit/s backbone: BE frames block for 120 us, so contention shows
  o.cycles = 150;
  o.seed = 7;
  return o;
}

TEST(ZonalGateList, ExclusiveWindowsMergedBelowOneMinimumFrame) {
  // 100 Mbit/s: a minimum frame is 6.72 us. Windows 2 us apart merge; a
  // window 3 us after the cycle start is pulled to 0.
  const auto g = zonal_gate_list({{40'000, 50'000}, {3'000, 12'000}, {52'000, 60'000}}, 1'000'000, 100'000'000);
  ASSERT_EQ(g.entries.size(), 4u);
  EXPECT_EQ(g.entries[0], (tsn::GateEntry{kStGate, 12'000}));
  EXPECT_EQ(g.entries[1], (tsn::GateEntry{kBeGate, 28'000}));
  EXPECT_EQ(g.entries[2], (tsn::GateEntry{kStGate, 20'000}));
  EXPECT_EQ(g.entries[3], (tsn::GateEntry{kBeGate, 940'000}));
  tsn::GclLimits lim;
  lim.num_classes = 2;
  lim.link_bps = 100'000'000;
  EXPECT_FALSE(tsn::validate(g, lim).has_value());
  // No window: both gates open all cycle (strict priority).
  const auto open = zonal_gate_list({}, 1'000'000, 100'000'000);
  ASSERT_EQ(open.entries.size(), 1u);
  EXPECT_EQ(open.entries[0].gates, kBeGate | kStGate);
  EXPECT_THROW((void)zonal_gate_list({{900'000, 1'100'000}}, 1'000'000, 100'000'000), std::invalid_argument);
}

TEST(Zonal, OptionsAreValidatedByName) {
  ZonalOptions o;
  o.hops = 5;
  try {
    validate(o);
    FAIL() << "hops 5 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("hops"), std::string::npos);
  }
  o.hops = 2;
  o.be_load_pct = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.be_load_pct = 80;
  o.port_bps = 10'000'000;
  EXPECT_THROW(validate(o), std::invalid_argument);
}

TEST(Zonal, StWithinBoundAndNoLossWithShaperOnFor1To4Hops) {
  for (int hops = 1; hops <= 4; ++hops) {
    SCOPED_TRACE("hops " + std::to_string(hops));
    const ZonalRow r = run_zonal(small(hops, ZonalShaper::kOn)).row;
    ASSERT_EQ(r.streams.size(), static_cast<std::size_t>(hops));
    for (const auto& s : r.streams) {
      SCOPED_TRACE("zone " + std::to_string(s.zone));
      EXPECT_EQ(s.sent, 150u);
      EXPECT_EQ(s.accepted, s.sent);  // ST loss 0
      EXPECT_EQ(s.secoc_rejected, 0u);
      ASSERT_TRUE(s.bound_ns.has_value());
      EXPECT_LE(s.max_ns, *s.bound_ns);
      EXPECT_EQ(s.over_bound, 0u);
      // The windows follow the frame: every event arrives exactly when planned,
      // however the cameras' bursts fall.
      EXPECT_EQ(s.min_ns, s.planned_ns);
      EXPECT_EQ(s.max_ns, s.planned_ns);
    }
    EXPECT_EQ(r.st_lost, 0u);
    EXPECT_EQ(r.transmission_overruns, 0u);
    EXPECT_EQ(r.macsec_drops, 0u);
    // The cameras' 80 % gets through (guard band and ST windows take < 14 %).
    EXPECT_EQ(r.be_dropped, 0u);
    EXPECT_GT(r.be_throughput_mbit_s, 0.9 * r.be_offered_mbit_s);
  }
}

TEST(Zonal, WithoutTheShaperTheWorstCaseIsLarger) {
  for (int hops : {1, 4}) {
    SCOPED_TRACE("hops " + std::to_string(hops));
    const ZonalRow on = run_zonal(small(hops, ZonalShaper::kOn)).row;
    const ZonalRow strict = run_zonal(small(hops, ZonalShaper::kStrict)).row;
    const ZonalRow fifo = run_zonal(small(hops, ZonalShaper::kFifo)).row;
    EXPECT_GT(strict.st_max_ns, on.st_max_ns);
    EXPECT_GT(fifo.st_max_ns, strict.st_max_ns);
    // Strict priority stays within its own bound (one BE frame of blocking per hop).
    ASSERT_TRUE(strict.bound_ns.has_value());
    EXPECT_EQ(strict.st_over_bound, 0u);
    EXPECT_FALSE(fifo.bound_ns.has_value());
    EXPECT_EQ(strict.st_lost, 0u);
    EXPECT_EQ(fifo.st_lost, 0u);
  }
}

TEST(Zonal, CompromisedSwitchReadsButEveryAlterationIsRejected) {
  ZonalOptions o = small(3, ZonalShaper::kOn);
  o.compromised_switch = true;
  const ZonalRun run = run_zonal(o);
  ASSERT_TRUE(run.compromise.has_value());
  const ZonalCompromise& c = *run.compromise;
  EXPECT_EQ(c.st_sent, 3u * 150u);
  EXPECT_EQ(c.read_plaintext, c.st_sent);  // hop-by-hop MACsec hands the switch the plaintext
  EXPECT_EQ(c.altered, c.st_sent);
  EXPECT_NE(c.example_read.find("0x4010.0x8001"), std::string::npos);
  EXPECT_EQ(c.macsec_accepted_at_central, c.altered);  // re-protected with the next link's SA
  EXPECT_EQ(c.secoc_rejected, c.altered);
  EXPECT_EQ(c.accepted, 0u);
  for (const auto& s : run.row.streams) EXPECT_EQ(s.accepted, 0u);
}

// ---- per-node clocks ---------------------------------------------------------

ZonalOptions clocked(int hops, ZonalClock clock, double drift_ppm, int log_sync_interval = -3) {
  ZonalOptions o = small(hops, ZonalShaper::kOn);
  o.clock.mode = clock;
  o.clock.drift_ppm = drift_ppm;
  o.clock.log_sync_interval = log_sync_interval;
  return o;
}

void expect_same_figures(const ZonalRow& a, const ZonalRow& b) {
  EXPECT_EQ(a.st_sent, b.st_sent);
  EXPECT_EQ(a.st_lost, b.st_lost);
  EXPECT_EQ(a.st_min_ns, b.st_min_ns);
  EXPECT_EQ(a.st_p50_ns, b.st_p50_ns);
  EXPECT_EQ(a.st_p99_ns, b.st_p99_ns);
  EXPECT_EQ(a.st_max_ns, b.st_max_ns);
  EXPECT_EQ(a.be_sent, b.be_sent);
  EXPECT_EQ(a.be_delivered, b.be_delivered);
  EXPECT_EQ(a.be_throughput_mbit_s, b.be_throughput_mbit_s);
  EXPECT_EQ(a.transmission_overruns, b.transmission_overruns);
  ASSERT_EQ(a.streams.size(), b.streams.size());
  for (std::size_t i = 0; i < a.streams.size(); ++i) {
    EXPECT_EQ(a.streams[i].min_ns, b.streams[i].min_ns) << i;
    EXPECT_EQ(a.streams[i].max_ns, b.streams[i].max_ns) << i;
    EXPECT_EQ(a.streams[i].accepted, b.streams[i].accepted) << i;
  }
}

TEST(ZonalClocks, ClocksWithoutDriftGiveTheIdealFiguresExactly) {
  // Every shaper and ECU then reads its clock through the time base
  // (identity): the whole network's figures are those of simulated time.
  for (int hops : {1, 3}) {
    SCOPED_TRACE("hops " + std::to_string(hops));
    const ZonalRow ideal = run_zonal(small(hops, ZonalShaper::kOn)).row;
    const ZonalRow free0 = run_zonal(clocked(hops, ZonalClock::kFree, 0)).row;
    expect_same_figures(ideal, free0);
    EXPECT_EQ(free0.misalign.max_abs_ns, 0.0);
    EXPECT_EQ(free0.clock, ZonalClock::kFree);
    EXPECT_EQ(ideal.clock, ZonalClock::kIdeal);
    EXPECT_EQ(ideal.misalign.max_abs_ns, 0.0);
    EXPECT_GT(ideal.misalign.samples, 0u);
  }
}

TEST(ZonalClocks, GptpKeepsAdjacentGatesAlignedAndStOnItsPlan) {
  const ZonalRow r = run_zonal(clocked(4, ZonalClock::kGptp, 100)).row;
  EXPECT_EQ(r.clock, ZonalClock::kGptp);
  ASSERT_TRUE(r.sync_interval_ms.has_value());
  EXPECT_EQ(*r.sync_interval_ms, 125.0);
  EXPECT_EQ(r.misalign.samples, 4u * 150u);  // 4 adjacent pairs on the ECU, Z4, Z3, Z2, Z1 path
  EXPECT_LT(r.misalign.max_abs_ns, 100.0);
  EXPECT_LT(r.start_offset_max_ns, 100.0);
  EXPECT_EQ(r.st_lost, 0u);
  EXPECT_EQ(r.st_over_bound, 0u);
  EXPECT_EQ(r.transmission_overruns, 0u);
  EXPECT_EQ(r.macsec_drops, 0u);
  // Each frame arrives within the 1 us margin of every window: no window is
  // missed, so the latency stays within a few hundred ns of the plan.
  for (const auto& s : r.streams) {
    EXPECT_LT(std::llabs(s.max_ns - s.planned_ns), 1'000) << "zone " << s.zone;
    EXPECT_LT(std::llabs(s.min_ns - s.planned_ns), 1'000) << "zone " << s.zone;
  }
}

TEST(ZonalClocks, FreeRunningClocksDriftApartAndStMissesItsWindows) {
  const ZonalRow gptp = run_zonal(clocked(4, ZonalClock::kGptp, 100)).row;
  const ZonalRow free = run_zonal(clocked(4, ZonalClock::kFree, 100)).row;
  // Over 150 ms, clocks up to 200 ppm apart drift up to 30 us.
  EXPECT_GT(free.misalign.max_abs_ns, 10'000.0);
  EXPECT_GT(free.misalign.max_abs_ns, 100 * gptp.misalign.max_abs_ns);
  EXPECT_GT(free.misalign.rms_ns, gptp.misalign.rms_ns);
  // Frames reach ports whose ST window has already closed and wait a cycle.
  EXPECT_GT(free.st_max_ns, gptp.st_max_ns + 100'000);
  EXPECT_GT(free.st_p99_ns, gptp.st_p99_ns);
}

TEST(ZonalClocks, UnderAFrequencyRampLongerSyncIntervalsLetTheGatesDriftFurther) {
  // +-1 ppm/s per node: the servos lag the ramp by about ramp / (ki · Sync
  // rate); at 31.25 ms that stays inside the windows' 1 us margin.
  auto run = [](int log_interval) {
    ZonalOptions o = clocked(3, ZonalClock::kGptp, 100, log_interval);
    o.clock.wander_ppm_per_s = 1;
    return run_zonal(o).row;
  };
  const ZonalRow fast = run(-5), slow = run(0);
  EXPECT_EQ(fast.wander_ppm_per_s, 1.0);
  EXPECT_LT(fast.misalign.max_abs_ns, slow.misalign.max_abs_ns);
  EXPECT_LT(fast.misalign.max_abs_ns, 1'000.0);
  EXPECT_GT(slow.misalign.max_abs_ns, 1'000.0);
  EXPECT_EQ(fast.st_lost + slow.st_lost, 0u);
  for (const auto& s : fast.streams) EXPECT_LT(std::llabs(s.max_ns - s.planned_ns), 1'000) << "zone " << s.zone;
}

TEST(ZonalClocks, GptpClocksAreMonotonicAndTheirInverseExact) {
  ZonalClockOptions o;
  o.mode = ZonalClock::kGptp;
  o.log_sync_interval = -3;
  const ZonalClocks clocks(o, 2, 100, 3, 2'000'000'000);
  EXPECT_LT(clocks.start_offset_max_ns(), 100.0);
  for (int k = 1; k <= 2; ++k) {
    for (const auto& tb : {clocks.zone(k), clocks.ecu(k)}) {
      ASSERT_NE(tb, nullptr);
      std::int64_t last = tb->local_of(0);
      EXPECT_LT(std::llabs(last), 100);  // the GM's timescale, from network time 0
      for (std::int64_t t = 0; t < 2'000'000'000; t += 9'999'991) {
        const std::int64_t l = tb->local_of(t);
        EXPECT_GE(l, last);
        last = l;
        const std::int64_t r = tb->true_at_or_after(l + 5'000, t);
        EXPECT_GE(tb->local_of(r), l + 5'000);
        EXPECT_LT(tb->local_of(r - 1), l + 5'000);
        EXPECT_LT(std::llabs((r - t) - 5'000), 10);  // the clock runs at the GM's rate (+-100 ppm)
      }
    }
  }
  EXPECT_EQ(clocks.ppm().size(), 5u);
  for (double p : clocks.ppm()) EXPECT_LE(std::fabs(p), 100.0);
}

TEST(ZonalClocks, MisalignmentOfTwoLinearClocks) {
  const tsn::LinearTimeBase fast(0, 100'000), slow(0, -100'000);
  // Cycle starts 1, 2, 3 ms: fast reads them 100, 200, 300 ns early, slow as late.
  const Misalignment m = path_misalignment({&fast, &slow}, 1'000'000, 1'000'000, 3);
  EXPECT_EQ(m.samples, 3u);
  EXPECT_NEAR(m.max_abs_ns, 600.0, 2.0);
  EXPECT_NEAR(m.rms_ns, std::sqrt((200.0 * 200 + 400.0 * 400 + 600.0 * 600) / 3), 2.0);
  EXPECT_EQ(m.path_max_abs_ns, m.max_abs_ns);
  const Misalignment ideal = path_misalignment({nullptr, nullptr, nullptr}, 0, 1'000'000, 10);
  EXPECT_EQ(ideal.max_abs_ns, 0.0);
  EXPECT_EQ(ideal.samples, 20u);
}

TEST(ZonalClocks, OptionsAreValidatedByName) {
  auto refused = [](ZonalClockOptions c, const char* field) {
    try {
      validate(c);
      ADD_FAILURE() << field << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  ZonalClockOptions c;
  c.drift_ppm = 201;
  refused(c, "drift_ppm");
  c.drift_ppm = std::numeric_limits<double>::quiet_NaN();
  refused(c, "drift_ppm");
  c = {};
  c.log_sync_interval = 1;
  refused(c, "log_sync_interval");
  c = {};
  c.wander_ppm_per_s = 1.5;
  refused(c, "wander_ppm_per_s");
  c = {};
  c.timestamp_noise_ns = -1;
  refused(c, "timestamp_noise_ns");
  ZonalOptions o = small(2, ZonalShaper::kOn);
  o.clock.drift_ppm = -1;
  EXPECT_THROW(validate(o), std::invalid_argument);
  EXPECT_EQ(zonal_clock_from("gptp"), ZonalClock::kGptp);
  EXPECT_FALSE(zonal_clock_from("GPTP").has_value());
  EXPECT_EQ(sync_interval_ms(-5), 31.25);
}

}  // namespace
}  // namespace layersec::harness
