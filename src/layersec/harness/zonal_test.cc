// The zonal network (zonal.h): ST against its analytic bound with the shaper
// on under 80 % camera load for 1-4 hops, no ST loss, the contrast without
// the shaper, and the compromised switch. Simulated time only: every figure
// asserted is a count or an exact simulated latency.
#include "layersec/harness/zonal.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

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

}  // namespace
}  // namespace layersec::harness
