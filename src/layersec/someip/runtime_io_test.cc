// A Runtime on the split I/O (transport.h) with nothing but a ManualClock, a
// hand-driven alarm and RecordingWriters joined by the test: what a fuzzer
// or a unit test provides without a simulator or sockets. The runtime reads
// time only from the injected clock: SD phases, request deadlines and the
// wake-ups it asks for follow the ManualClock exactly.
#include <gtest/gtest.h>

#include <vector>

#include "layersec/someip/fake_io_test_support.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/runtime_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

struct Host {
  RecordingWriter io;
  ManualAlarm alarm;
  SeededRandom random;
  std::unique_ptr<Runtime> rt;
  std::size_t carried = 0;  // io.sent entries already delivered
  Host(std::uint8_t id, RuntimeConfig c, const Clock& clock)
      : io(IpAddress::v4(10, 0, 0, id)), random(id),
        rt(std::make_unique<Runtime>(std::move(c), RuntimeIo(io, clock, alarm), random)) {}
  Endpoint ep(std::uint16_t port) const { return Endpoint{io.local_address(), port, L4Proto::kUdp}; }
};

struct Net {
  ManualClock clock{TimePoint{} + Duration::seconds(1)};
  Host server{1, server_config(), clock};
  Host client{2, client_config(2), clock};
  bool drop_to_client = false;

  // Delivers every new datagram to the other host, then fires due alarms,
  // 1 ms at a time.
  void run(int ms) {
    for (int i = 0; i < ms; ++i) {
      for (int round = 0; round < 4; ++round)
        for (Host* from : {&server, &client}) {
          Host* to = from == &server ? &client : &server;
          while (from->carried < from->io.sent.size()) {
            const SentDatagram d = from->io.sent[from->carried++];
            if (to == &client && drop_to_client) continue;
            const Endpoint src = from->ep(d.from_port);
            if (d.to.address.is_multicast()) to->io.deliver_multicast(d.to, src, d.bytes);
            else if (d.to.address == to->io.local_address()) to->io.deliver(d.to.port, src, d.bytes);
          }
        }
      clock.advance(Duration::milliseconds(1));
      for (Host* h : {&server, &client}) h->alarm.fire_due(clock.now());
    }
  }
};

TEST(RuntimeIoTest, StartBindsAndStopReleasesThroughThePacketWriter) {
  Net n;
  ASSERT_TRUE(n.server.rt->start().ok());
  EXPECT_TRUE(n.server.io.bound(kSdPort));
  EXPECT_TRUE(n.server.io.bound(kServicePort));
  EXPECT_TRUE(n.server.io.joined(n.server.rt->config().sd_multicast));
  EXPECT_NE(n.server.alarm.at(), TimePoint::max());  // the SD initial wait
  n.server.rt->stop();
  EXPECT_FALSE(n.server.io.bound(kSdPort));
  EXPECT_FALSE(n.server.io.bound(kServicePort));
  EXPECT_EQ(n.server.io.joined_count(), 0u);
  EXPECT_EQ(n.server.alarm.at(), TimePoint::max());  // cancelled
}

TEST(RuntimeIoTest, DiscoveryRequestAndTimeoutOnTheInjectedClock) {
  Net n;
  ASSERT_TRUE(n.server.rt->set_method_handler(kService, kInstance, kMethod, [](const Request& r, Reply& reply) {
    reply.payload.assign(r.payload.rbegin(), r.payload.rend());
  }).ok());
  ASSERT_TRUE(n.server.rt->start().ok());
  ASSERT_TRUE(n.client.rt->start().ok());
  n.run(200);
  ASSERT_TRUE(n.client.rt->available(kService, kInstance));

  std::vector<ResponseResult> answers;
  std::vector<std::vector<std::uint8_t>> payloads;
  auto on_answer = [&](const ResponseResult& r) {
    answers.push_back(r);
    payloads.emplace_back(r.payload.begin(), r.payload.end());
  };
  ASSERT_TRUE(n.client.rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{1, 2, 3}, on_answer).ok());
  n.run(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].code, ReturnCode::kOk);
  EXPECT_EQ(payloads[0], (std::vector<std::uint8_t>{3, 2, 1}));

  // Answers lost: the request ends with kTimeout when the clock reaches its
  // deadline, not before.
  n.drop_to_client = true;
  const TimePoint sent_at = n.clock.now();
  ASSERT_TRUE(n.client.rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{4}, on_answer,
                                   Duration::milliseconds(50))
                  .ok());
  EXPECT_LE(n.client.alarm.at(), sent_at + Duration::milliseconds(50));
  n.run(49);
  EXPECT_EQ(answers.size(), 1u);
  n.run(2);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1].code, ReturnCode::kTimeout);
  EXPECT_EQ(n.client.rt->counters().request_timeouts, 1u);
}

}  // namespace
}  // namespace layersec::someip
