// The real-time throttle reader: what /proc/sys/kernel's two files may say.
#include "layersec/net/thread_timing.h"

#include <gtest/gtest.h>

namespace layersec::net {
namespace {

TEST(RtThrottle, ParsesTheKernelsDefaultAndUnlimited) {
  auto t = parse_rt_throttle("950000\n", "1000000\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->runtime_us, 950000);
  EXPECT_EQ(t->period_us, 1000000);
  EXPECT_FALSE(t->unlimited());
  auto u = parse_rt_throttle("-1\n", "1000000\n");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->unlimited());
  EXPECT_TRUE(parse_rt_throttle("0", "1"));  // no trailing newline is fine
}

TEST(RtThrottle, RefusesWhatTheKernelCannotSay) {
  EXPECT_FALSE(parse_rt_throttle("", "1000000\n"));
  EXPECT_FALSE(parse_rt_throttle("950000\n", ""));
  EXPECT_FALSE(parse_rt_throttle("-2\n", "1000000\n"));           // below -1
  EXPECT_FALSE(parse_rt_throttle("1000001\n", "1000000\n"));      // runtime above its period
  EXPECT_FALSE(parse_rt_throttle("950000\n", "0\n"));             // empty period
  EXPECT_FALSE(parse_rt_throttle("950000\n", "4294967296\n"));    // beyond the kernel's int
  EXPECT_FALSE(parse_rt_throttle("95 0000\n", "1000000\n"));      // not one number
  EXPECT_FALSE(parse_rt_throttle("950000\n\n", "1000000\n"));     // trailing garbage
  EXPECT_FALSE(parse_rt_throttle("0x10\n", "1000000\n"));
  EXPECT_FALSE(parse_rt_throttle("99999999999999999999999\n", "1000000\n"));  // overflow
}

TEST(RtThrottle, ThisHostsSettingIsReadableAndConsistent) {
  // On Linux both files exist; whatever they hold passed the parser's checks.
  const auto t = rt_throttle();
  ASSERT_TRUE(t) << "/proc/sys/kernel/sched_rt_{runtime,period}_us unreadable";
  EXPECT_GE(t->period_us, 1);
  EXPECT_TRUE(t->unlimited() || t->runtime_us <= t->period_us);
}

}  // namespace
}  // namespace layersec::net
