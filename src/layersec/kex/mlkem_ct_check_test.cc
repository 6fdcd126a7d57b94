// The ct-check rounds give correct results for every parameter set (outside
// valgrind the marking is a no-op; tests/cli/kem_ct_valgrind.sh runs them
// under memcheck).
#include "layersec/kex/mlkem_ct_check.h"

#include <gtest/gtest.h>

namespace layersec::kex {
namespace {

TEST(MlKemCtCheck, RoundsAreCorrect) {
  for (auto set : {crypto::MlKemParameterSet::kMlKem512, crypto::MlKemParameterSet::kMlKem768,
                   crypto::MlKemParameterSet::kMlKem1024}) {
    auto r = run_mlkem_ct_check(set, 2);
    ASSERT_TRUE(r.ok()) << to_string(r.error());
    EXPECT_EQ(r->rounds, 2);
    EXPECT_EQ(r->wrong_results, 0);
  }
  EXPECT_EQ(to_string(MlKemCtStep::kDecapsRejection), "decaps (rejection)");
}

TEST(MlKemCtCheck, LeakControlBranchesOnTheSecretByte) {
  EXPECT_EQ(mlkem_ct_leak_control(), 0);  // 0x5A is even
}

}  // namespace
}  // namespace layersec::kex
