#include "layersec/tsn/traffic_class.h"

#include <gtest/gtest.h>

namespace layersec::tsn {
namespace {

int tc(const TrafficClassMap& m, int pcp) { return m.traffic_class(static_cast<std::uint8_t>(pcp)); }

TEST(TrafficClassMap, Table85EightClassesPutsBackgroundBelowBestEffort) {
  auto m = TrafficClassMap::standard(8);
  ASSERT_TRUE(m);
  const int want[8] = {1, 0, 2, 3, 4, 5, 6, 7};
  for (int p = 0; p < 8; ++p) EXPECT_EQ(tc(*m, p), want[p]) << "pcp " << p;
}

TEST(TrafficClassMap, Table85FewerClasses) {
  const int want[8][8] = {
      {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 2, 2}, {0, 0, 1, 1, 2, 2, 3, 3},
      {0, 0, 1, 1, 2, 2, 3, 4}, {1, 0, 2, 2, 3, 3, 4, 5}, {1, 0, 2, 3, 4, 4, 5, 6}, {1, 0, 2, 3, 4, 5, 6, 7},
  };
  for (int n = 1; n <= 8; ++n) {
    auto m = TrafficClassMap::standard(n);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->num_classes(), n);
    for (int p = 0; p < 8; ++p) {
      EXPECT_EQ(tc(*m, p), want[n - 1][p]) << n << " classes, pcp " << p;
      EXPECT_LT(tc(*m, p), n);
    }
  }
  EXPECT_FALSE(TrafficClassMap::standard(0));
  EXPECT_FALSE(TrafficClassMap::standard(9));
}

TEST(TrafficClassMap, CustomMapIsCheckedAndNamesThePriority) {
  std::string why;
  auto ok = TrafficClassMap::custom(2, {1, 1, 1, 1, 1, 1, 0, 0}, &why);
  ASSERT_TRUE(ok);
  EXPECT_EQ(tc(*ok, 6), 0);
  EXPECT_FALSE(TrafficClassMap::custom(2, {0, 0, 0, 2, 0, 0, 0, 0}, &why));
  EXPECT_NE(why.find("priority 3"), std::string::npos) << why;
  EXPECT_FALSE(TrafficClassMap::custom(9, {}, &why));
}

}  // namespace
}  // namespace layersec::tsn
