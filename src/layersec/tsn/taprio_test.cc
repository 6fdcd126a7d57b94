#include "layersec/tsn/taprio.h"

#include <gtest/gtest.h>

namespace layersec::tsn {
namespace {

// The example of tc-taprio(8).
constexpr const char* kManPage =
    "tc qdisc replace dev eth0 parent root handle 100 taprio \\\n"
    "              num_tc 3 \\\n"
    "              map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 \\\n"
    "              queues 1@0 1@1 2@2 \\\n"
    "              base-time 1528743495910289987 \\\n"
    "              sched-entry S 01 300000 \\\n"
    "              sched-entry S 02 300000 \\\n"
    "              sched-entry S 04 400000 \\\n"
    "              clockid CLOCK_TAI\n";

TEST(Taprio, ParsesTheManPageExample) {
  auto p = parse_taprio(kManPage);
  ASSERT_TRUE(p.ok()) << p.message;
  const auto& s = *p.schedule;
  EXPECT_EQ(s.num_tc, 3);
  EXPECT_EQ(s.map[0], 2);
  EXPECT_EQ(s.map[2], 1);
  EXPECT_EQ(s.map[3], 0);
  ASSERT_EQ(s.queues.size(), 3u);
  EXPECT_EQ(s.queues[2], std::make_pair(2, 2));
  EXPECT_EQ(s.gcl.base_time_ns, 1528743495910289987LL);
  ASSERT_EQ(s.gcl.entries.size(), 3u);
  EXPECT_EQ(s.gcl.entries[0], (GateEntry{0x01, 300000}));
  EXPECT_EQ(s.gcl.entries[2], (GateEntry{0x04, 400000}));
  EXPECT_EQ(cycle_time_of(s.gcl), 1'000'000);
  EXPECT_EQ(s.clockid, "CLOCK_TAI");
  EXPECT_EQ(s.traffic_classes().traffic_class(3), 0);
  EXPECT_EQ(s.traffic_classes().traffic_class(2), 1);
}

TEST(Taprio, RoundTrips) {
  auto p = parse_taprio(std::string(kManPage) + " cycle-time 1000000 cycle-time-extension 5000 flags 0x1 "
                                                "txtime-delay 200000 max-sdu 0 300 1500");
  ASSERT_TRUE(p.ok()) << p.message;
  const std::string text = to_taprio(*p.schedule);
  auto q = parse_taprio(text);
  ASSERT_TRUE(q.ok()) << q.message << "\n" << text;
  EXPECT_EQ(q.schedule->gcl, p.schedule->gcl);
  EXPECT_EQ(q.schedule->map, p.schedule->map);
  EXPECT_EQ(q.schedule->queues, p.schedule->queues);
  EXPECT_EQ(q.schedule->max_sdu, p.schedule->max_sdu);
  EXPECT_EQ(q.schedule->flags, 1u);
  EXPECT_EQ(q.schedule->txtime_delay_ns, 200000);
  EXPECT_EQ(to_taprio(*q.schedule), text);
}

TEST(Taprio, MapDefaultsToTable85) {
  auto p = parse_taprio("taprio num_tc 4 base-time 0 sched-entry S 0x8 500000 sched-entry S 0x7 500000");
  ASSERT_TRUE(p.ok()) << p.message;
  EXPECT_EQ(p.schedule->traffic_classes().traffic_class(7), 3);
  EXPECT_EQ(p.schedule->traffic_classes().traffic_class(0), 0);
}

struct Bad {
  const char* text;
  TaprioError error;
  const char* names;  // a substring the message must contain
};

TEST(Taprio, MalformedSchedulesNameTheEntry) {
  const Bad cases[] = {
      {"taprio num_tc 2 base-time 0 sched-entry S 01 300000 sched-entry S 04 300000", TaprioError::kBadSchedule,
       "sched-entry 1: gate mask 0x04"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01 300000 sched-entry S 02 500 ", TaprioError::kBadSchedule,
       "sched-entry 1: interval 500 ns"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01 300000 sched-entry S 02 300000 cycle-time 500000",
       TaprioError::kBadSchedule, "cycle-time 500000"},
      {"taprio num_tc 2 base-time 0 sched-entry H 01 300000", TaprioError::kUnsupported, "sched-entry 0: command H"},
      {"taprio num_tc 2 base-time 0 sched-entry S zz 300000", TaprioError::kSyntax, "sched-entry 0: gate mask 'zz'"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01", TaprioError::kSyntax, "sched-entry 0"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01 3e5", TaprioError::kSyntax, "interval '3e5'"},
      {"taprio num_tc 9 base-time 0 sched-entry S 01 300000", TaprioError::kBadValue, "num_tc 9"},
      {"taprio num_tc 2 map 0 1 2 base-time 0 sched-entry S 01 300000", TaprioError::kBadValue, "priority 2"},
      {"taprio num_tc 2 queues 1@0 base-time 0 sched-entry S 01 300000", TaprioError::kBadValue, "queues"},
      {"taprio num_tc 2 sched-entry S 01 300000", TaprioError::kSyntax, "base-time is missing"},
      {"taprio base-time 0 sched-entry S 01 300000", TaprioError::kSyntax, "num_tc is missing"},
      {"taprio num_tc 2 base-time 0", TaprioError::kBadSchedule, "no sched-entry"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01 300000 bogus 1", TaprioError::kSyntax, "'bogus'"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01 300000 clockid CLOCK_FOO", TaprioError::kUnsupported,
       "CLOCK_FOO"},
      {"taprio num_tc 2 base-time 0 sched-entry S 01 300000 max-sdu 1 70000", TaprioError::kBadValue, "max-sdu"},
      {"taprio num_tc 2 base-time -5 sched-entry S 01 300000", TaprioError::kBadSchedule, "negative"},
      {"taprio num_tc 2 base-time 99999999999999999999 sched-entry S 01 300000", TaprioError::kSyntax, "base-time"},
  };
  for (const auto& c : cases) {
    auto p = parse_taprio(c.text);
    EXPECT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.error, c.error) << c.text << ": " << p.message;
    EXPECT_NE(p.message.find(c.names), std::string::npos) << c.text << ": " << p.message;
  }
}

TEST(Taprio, BaseTimeInThePastIsRefusedWhenTheCallerSaysNow) {
  GclLimits lim;
  lim.now_ns = 1'000'000'000;
  auto p = parse_taprio("taprio num_tc 1 base-time 5 sched-entry S 01 300000", lim);
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.message.find("in the past"), std::string::npos) << p.message;
}

TEST(Taprio, ShortestIntervalFollowsThePortSpeed) {
  GclLimits slow;
  slow.link_bps = 100'000'000;  // 100BASE-T1: one minimum frame is 6.72 us
  EXPECT_FALSE(parse_taprio("taprio num_tc 1 base-time 0 sched-entry S 01 5000", slow).ok());
  EXPECT_TRUE(parse_taprio("taprio num_tc 1 base-time 0 sched-entry S 01 5000").ok());
}

}  // namespace
}  // namespace layersec::tsn
