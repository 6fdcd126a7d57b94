// Rootless tests of the real I/O adapters: the event loop and UDP sockets on
// loopback. Namespace, AF_PACKET and TAP tests are in netns_test.cc.
#include <gtest/gtest.h>
#include <net/if.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/net/event_loop.h"
#include "layersec/net/interface.h"
#include "layersec/net/io.h"
#include "layersec/net/netns.h"
#include "layersec/net/udp_socket.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;
const Ipv4Address kLoopback = Ipv4Address::from_octets(127, 0, 0, 1);

TEST(EventLoopTest, TimersRunInDeadlineOrderOnInjectedClock) {
  ManualClock clock(TimePoint::from_ns(1000));
  EventLoop loop(clock);
  std::vector<int> order;
  loop.add_timer(TimePoint::from_ns(5000), [&] { order.push_back(2); });
  loop.add_timer(TimePoint::from_ns(3000), [&] { order.push_back(1); });
  const auto cancelled = loop.add_timer(TimePoint::from_ns(4000), [&] { order.push_back(99); });
  EXPECT_TRUE(loop.cancel_timer(cancelled));
  loop.add_timer(TimePoint::from_ns(9000), [&] { order.push_back(3); });
  // Nothing is due yet at t=1000 (deadline now: poll does not wait).
  EXPECT_EQ(loop.run_once(clock.now()), 0u);
  clock.set(TimePoint::from_ns(6000));
  EXPECT_EQ(loop.run_once(clock.now()), 2u);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  // A timer added by a timer for "now" runs on the next round, not this one.
  clock.set(TimePoint::from_ns(9000));
  loop.add_timer(TimePoint::from_ns(9000), [&] {
    order.push_back(4);
    loop.add_timer(clock.now(), [&] { order.push_back(5); });
  });
  EXPECT_EQ(loop.run_once(clock.now()), 2u);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(loop.run_once(clock.now()), 1u);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(EventLoopTest, DescriptorCallbacksAndUnwatch) {
  MonotonicClock clock;
  EventLoop loop(clock);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  UniqueFd r(fds[0]), w(fds[1]);
  int reads = 0;
  loop.watch(r.get(), POLLIN, [&](short revents) {
    EXPECT_TRUE(revents & POLLIN);
    char c;
    ASSERT_EQ(::read(r.get(), &c, 1), 1);
    ++reads;
    if (reads == 2) loop.unwatch(r.get());  // a callback may drop its own watch
  });
  ASSERT_EQ(::write(w.get(), "ab", 2), 2);
  EXPECT_TRUE(loop.run_until([&] { return reads == 2; }, clock.now() + Duration::seconds(5)));
  ASSERT_EQ(::write(w.get(), "c", 1), 1);
  loop.run_once(clock.now());
  EXPECT_EQ(reads, 2);
  // stop() from a timer ends run_until early.
  loop.add_timer_in(Duration::milliseconds(1), [&] { loop.stop(); });
  EXPECT_TRUE(loop.run_until(clock.now() + Duration::seconds(5)));
}

TEST(UdpSocketTest, LoopbackExchangeWithAddresses) {
  auto a = UdpSocket::open({kLoopback, 0});
  auto b = UdpSocket::open({kLoopback, 0});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->local_endpoint().port, 0);
  Bytes buf(2048);
  EXPECT_EQ(b->receive(buf).error(), IoError::kWouldBlock);
  const Bytes msg = {1, 2, 3, 4, 5};
  auto sent = a->send_to(b->local_endpoint(), msg);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(*sent, msg.size());

  MonotonicClock clock;
  EventLoop loop(clock);
  std::optional<ReceivedDatagram> got;
  loop.watch(b->fd(), POLLIN, [&](short) {
    auto d = b->receive(buf);
    if (d.ok()) got = *d;
  });
  ASSERT_TRUE(loop.run_until([&] { return got.has_value(); }, clock.now() + Duration::seconds(5)));
  EXPECT_EQ(got->size, msg.size());
  EXPECT_EQ(got->src, a->local_endpoint());
  EXPECT_EQ(got->dst, kLoopback);
  EXPECT_GT(got->interface_index, 0);
  EXPECT_EQ(Bytes(buf.begin(), buf.begin() + 5), msg);

  // A datagram larger than the buffer is reported, not silently cut.
  ASSERT_TRUE(a->send_to(b->local_endpoint(), Bytes(100, 9)).ok());
  Bytes small(10);
  pollfd p{b->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  auto r = b->receive(small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), IoError::kTruncated);
}

TEST(UdpSocketTest, ReuseAddressAndBindErrors) {
  auto a = UdpSocket::open({Ipv4Address::any(), 0});
  ASSERT_TRUE(a.ok());
  // SO_REUSEADDR on both lets a second socket share the port (multicast use).
  auto b = UdpSocket::open({Ipv4Address::any(), a->local_endpoint().port});
  EXPECT_TRUE(b.ok());
  UdpSocketOptions no_reuse;
  no_reuse.reuse_address = false;
  int err = 0;
  auto c = UdpSocket::open({Ipv4Address::any(), a->local_endpoint().port}, no_reuse, &err);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), IoError::kSystem);
  EXPECT_EQ(err, EADDRINUSE);
  EXPECT_FALSE(errno_text(err).empty());
  UdpSocketOptions bad_dev;
  bad_dev.bind_device = std::string(40, 'x');
  auto d = UdpSocket::open({Ipv4Address::any(), 0}, bad_dev);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), IoError::kBadArgument);
}

TEST(InterfaceTest, ReadsLoopbackAndRejectsBadNames) {
  auto index = interface_index("lo");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(*index, static_cast<int>(if_nametoindex("lo")));
  auto mac = interface_mac("lo");
  ASSERT_TRUE(mac.ok());
  EXPECT_EQ(*mac, MacAddress{});
  auto mtu = interface_mtu("lo");
  ASSERT_TRUE(mtu.ok());
  EXPECT_GE(*mtu, 1500);
  EXPECT_EQ(interface_index(std::string(IFNAMSIZ, 'x')).error(), IoError::kBadArgument);
  EXPECT_EQ(interface_mtu("").error(), IoError::kBadArgument);
  EXPECT_EQ(interface_is_up("nosuchif0").error(), IoError::kBadArgument);
  EXPECT_EQ(set_interface_ipv4("lo", Ipv4Address{}, 33).error(), IoError::kBadArgument);
}

TEST(RunCommandTest, StatusAndOutput) {
  std::string out;
  EXPECT_EQ(run_command({"sh", "-c", "echo hi; echo err >&2; exit 3"}, &out), 3);
  EXPECT_EQ(out, "hi\nerr\n");
  EXPECT_EQ(run_command({"/nonexistent/program"}), -1);
  EXPECT_EQ(run_command({}), -1);
}

TEST(ChildProcessTest, ExitStatusLogAndTermination) {
  const std::string log = ::testing::TempDir() + "layersec_child_" + std::to_string(::getpid()) + ".log";
  std::remove(log.c_str());
  {
    auto c = ChildProcess::spawn({"sh", "-c", "echo to-out; echo to-err >&2; exit 7"}, log);
    EXPECT_GT(c.pid(), 0);
    EXPECT_EQ(c.wait(), 7);
    EXPECT_FALSE(c.running());
    EXPECT_EQ(c.terminate(), 7);  // already reaped: idempotent
  }
  std::string text;
  ASSERT_EQ(run_command({"cat", log}, &text), 0);
  EXPECT_EQ(text, "to-out\nto-err\n");
  std::remove(log.c_str());

  auto sleeper = ChildProcess::spawn({"sleep", "30"});
  EXPECT_TRUE(sleeper.running());
  EXPECT_EQ(sleeper.terminate(), 128 + SIGTERM);
  EXPECT_FALSE(sleeper.running());
  EXPECT_THROW(ChildProcess::spawn({"/nonexistent/program"}), std::runtime_error);
}

}  // namespace
}  // namespace layersec::net
