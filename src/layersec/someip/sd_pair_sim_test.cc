#include "layersec/someip/sd_pair_sim.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "layersec/someip/message_json.h"

namespace layersec::someip {
namespace {

TEST(SdPairSim, SameSeedSameRun) {
  const SdPairRun a = simulate_sd_pair(Duration::milliseconds(1500), 7);
  const SdPairRun b = simulate_sd_pair(Duration::milliseconds(1500), 7);
  ASSERT_EQ(a.datagrams.size(), b.datagrams.size());
  for (std::size_t i = 0; i < a.datagrams.size(); ++i) {
    EXPECT_EQ(a.datagrams[i].at, b.datagrams[i].at);
    EXPECT_EQ(a.datagrams[i].payload, b.datagrams[i].payload);
  }
  EXPECT_EQ(a.events, b.events);
}

TEST(SdPairSim, ClientFindsServerSubscribesAndBothShutDown) {
  const Duration d = Duration::milliseconds(3500);
  const SdPairRun run = simulate_sd_pair(d, 1);
  ASSERT_GE(run.datagrams.size(), 4u);
  const CapturedDatagram& first = run.datagrams.front();
  EXPECT_EQ(first.src, IpAddress::v4(10, 0, 0, 2));
  EXPECT_EQ(first.dst, IpAddress::v4(224, 224, 224, 245));
  EXPECT_EQ(first.src_port, 30490);
  EXPECT_EQ(datagram_to_json(first.payload).at("messages").at(0).at("sd").at("entries").at(0).at("type"), 0x00);
  // Every datagram is SD at or before the end; the last two are the shutdown.
  for (const auto& g : run.datagrams) EXPECT_LE(g.at, TimePoint::from_ns(0) + d);
  const auto& last = run.datagrams.back();
  EXPECT_EQ(last.at, TimePoint::from_ns(0) + d);
  const auto stop_offer = datagram_to_json(last.payload).at("messages").at(0).at("sd").at("entries").at(0);
  EXPECT_EQ(stop_offer.at("type"), 0x01);
  EXPECT_EQ(stop_offer.at("ttl"), 0);
  std::set<std::string> kinds;
  for (const auto& e : run.events) kinds.insert(e.at("event").get<std::string>());
  for (const char* k : {"service-available", "subscribed", "subscription-acked", "unsubscribed", "service-unavailable"})
    EXPECT_TRUE(kinds.count(k)) << k;
}

TEST(SdPairSim, ServerStartsLaterThanTheClient) {
  // The server's initial wait is 100-200 ms, the client's 10-50 ms: in the
  // first 60 ms only the client's FindService goes out.
  const Duration d = Duration::milliseconds(60);
  const SdPairRun run = simulate_sd_pair(d, 1);
  std::size_t from_client = 0;
  for (const auto& g : run.datagrams) {
    if (g.src == IpAddress::v4(10, 0, 0, 2) && g.at < TimePoint::from_ns(0) + d) ++from_client;
    if (g.src == IpAddress::v4(10, 0, 0, 1)) {
      EXPECT_EQ(g.at, TimePoint::from_ns(0) + d);
    }
  }
  EXPECT_GE(from_client, 1u);
}

}  // namespace
}  // namespace layersec::someip
