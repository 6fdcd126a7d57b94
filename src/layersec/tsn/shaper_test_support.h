// Test doubles for the real-time shaper (shaper_driver.h): a clock the test
// sets and a timer that only records its deadline (the test advances the
// clock and calls service() itself), and the two-class schedule the first-hop
// tests share. Header-only, test code only.
#pragma once

#include <cstdint>

#include <gtest/gtest.h>

#include "layersec/tsn/shaper_driver.h"
#include "layersec/tsn/taprio.h"

namespace layersec::tsn::testing_support {

class FakeClock final : public Clock {
 public:
  [[nodiscard]] std::int64_t now_ns() const override { return now; }
  std::int64_t now = 0;
};

class FakeTimer final : public ShaperTimer {
 public:
  void arm(std::int64_t at_ns) override {
    armed = true;
    at = at_ns;
    ++arms;
  }
  void disarm() override { armed = false; }
  bool armed = false;
  std::int64_t at = 0;
  int arms = 0;
};

// 1 ms cycle from 0: ST (class 1, PCP 5..7) 300 us, then BE (class 0) 700 us,
// validated for a port of `link_bps`.
inline TaprioSchedule st_be_schedule(std::uint64_t link_bps) {
  GclLimits lim;
  lim.link_bps = link_bps;
  auto parsed = parse_taprio(
      "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 "
      "sched-entry S 02 300000 sched-entry S 01 700000",
      lim);
  EXPECT_TRUE(parsed.ok()) << parsed.message;
  return parsed.ok() ? *parsed.schedule : TaprioSchedule{};
}

}  // namespace layersec::tsn::testing_support
