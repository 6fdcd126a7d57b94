// The runtime's counters in the node's JSON statistics (counters_json.h):
// SOME/IP-SD drops and ignored entries and SOME/IP-TP refusals by reason.
#include <gtest/gtest.h>

#include "layersec/someip/counters_json.h"
#include "layersec/someip/runtime_types.h"

namespace layersec::someip {
namespace {

TEST(RuntimeCountersJson, SdAndTpCountersAreShownByReason) {
  RuntimeCounters c;
  c.sd.received = 9;
  c.sd.own = 1;
  c.sd.rejected = 3;
  c.sd.not_someip = 1;
  c.sd.invalid_sd[static_cast<std::size_t>(SdError::kNotSdHeader)] = 2;
  c.sd.reboots = 4;
  c.sd.unknown_entries = 5;
  c.sd.unmatched_entries = 6;
  c.sd.unsent_entries = 7;
  c.sd.unsent_datagrams = 8;
  c.tp_rejected = 4;
  c.tp_rejected_by[static_cast<std::size_t>(TpError::kOverlap)] = 2;
  c.tp_rejected_by[static_cast<std::size_t>(TpError::kTruncatedTpHeader)] = 1;
  c.tp_reassembled_malformed = 1;
  c.tp.aborted = 2;
  c.tp.timed_out = 3;
  c.tp.superseded = 1;
  c.tp.duplicates = 5;
  const auto j = to_json(c);
  EXPECT_EQ(j["sd"]["received"], 9);
  EXPECT_EQ(j["sd"]["own"], 1);
  EXPECT_EQ(j["sd"]["rejected"], 3);
  EXPECT_EQ(j["sd"]["not_someip"], 1);
  EXPECT_EQ(j["sd"]["invalid_sd"].size(), 1u);
  EXPECT_EQ(j["sd"]["invalid_sd"][std::string(to_string(SdError::kNotSdHeader))], 2);
  EXPECT_EQ(j["sd"]["reboots"], 4);
  EXPECT_EQ(j["sd"]["unknown_entries"], 5);
  EXPECT_EQ(j["sd"]["unmatched_entries"], 6);
  EXPECT_EQ(j["sd"]["unsent_entries"], 7);
  EXPECT_EQ(j["sd"]["unsent_datagrams"], 8);
  EXPECT_EQ(j["tp_rejected"], 4);
  EXPECT_EQ(j["tp_rejected_by"].size(), 2u);
  EXPECT_EQ(j["tp_rejected_by"][std::string(to_string(TpError::kOverlap))], 2);
  EXPECT_EQ(j["tp_rejected_by"][std::string(to_string(TpError::kTruncatedTpHeader))], 1);
  EXPECT_EQ(j["tp_reassembled_malformed"], 1);
  EXPECT_EQ(j["tp_aborted"], 2);
  EXPECT_EQ(j["tp_timed_out"], 3);
  EXPECT_EQ(j["tp_superseded"], 1);
  EXPECT_EQ(j["tp_duplicates"], 5);
}

}  // namespace
}  // namespace layersec::someip
