// PI servo and layersec clock: a slave clock 80 ppm slow converges onto a
// master in simulated samples; the first large offset is stepped.
#include "layersec/ptp/servo.h"

#include <gtest/gtest.h>

#include <cmath>

#include "layersec/ptp/bmca.h"

namespace layersec::ptp {
namespace {

TEST(PtpSyncedClock, MapsAndAdjusts) {
  SyncedClock c(1'000'000'000'000'000'000LL);
  EXPECT_EQ(c.to_synced(5), 1'000'000'000'000'000'005LL);
  c.set_frequency_ppb(1000, 1'000'000'000);  // +1 ppm from local 1 s on
  EXPECT_EQ(c.to_synced(2'000'000'000) - c.to_synced(1'000'000'000), 1'000'001'000);
  c.step(-0.25);
  EXPECT_NEAR(c.to_synced_fraction(1'000'000'000), 0.75, 1e-9);
  EXPECT_NEAR(static_cast<double>(c.to_local(c.to_synced(3'000'000'000)) - 3'000'000'000LL), 0.0, 1.0);
}

// Master time = local·(1 + 80e-6) + 3 ms: the slave's layersec clock starts
// 3 ms and 80 ppm off.
TEST(PtpPiServo, StepsThenLocksOnFrequencyAndPhase) {
  PiServo servo{PiServoConfig{}};
  servo.set_interval(0.125);
  SyncedClock clock;
  auto master = [](std::int64_t local) { return 3'000'000 + local + static_cast<std::int64_t>(std::llround(local * 80e-6)); };
  double last = 0;
  bool stepped = false;
  for (int k = 1; k <= 400; ++k) {
    const std::int64_t local = k * 125'000'000LL;
    const double offset = static_cast<double>(clock.to_synced(local) - master(local)) + clock.to_synced_fraction(local);
    const ServoOutput out = servo.sample(offset, local);
    if (out.state == ServoState::kJump) {
      stepped = true;
      clock.step(out.step_ns);
    }
    if (out.state != ServoState::kUnlocked) clock.set_frequency_ppb(out.frequency_ppb, local);
    last = offset;
  }
  EXPECT_TRUE(stepped);
  EXPECT_EQ(servo.state(), ServoState::kLocked);
  EXPECT_LT(std::fabs(last), 2.0);
  EXPECT_NEAR(clock.frequency_ppb(), 80'000.0, 5.0);
}

TEST(PtpPiServo, RefusesNonFiniteAndClampsFrequency) {
  PiServoConfig cfg;
  cfg.max_frequency_ppb = 1000;
  PiServo servo(cfg);
  EXPECT_EQ(servo.sample(std::nan(""), 1).state, ServoState::kUnlocked);
  EXPECT_EQ(servo.sample(0, 1'000'000'000).state, ServoState::kUnlocked);
  const ServoOutput o = servo.sample(1e6, 2'000'000'000);  // 1000 ppm apparent error
  EXPECT_LE(std::fabs(o.frequency_ppb), 1000.0);
}

TEST(PtpBmca, LowerFieldsWinInOrder) {
  PriorityVector a, b;
  a.priority1 = b.priority1 = 248;
  a.grandmaster_identity = 1;
  b.grandmaster_identity = 2;
  EXPECT_TRUE(better(a, b));
  b.priority1 = 246;
  EXPECT_TRUE(better(b, a));
  b.priority1 = 248;
  b.quality.clock_class = 6;
  EXPECT_TRUE(better(b, a));
  EXPECT_FALSE(better(a, a));
}

}  // namespace
}  // namespace layersec::ptp
