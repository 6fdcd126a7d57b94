// PtpRelay over in-memory frame sinks (no sockets): GM -> relay -> slave,
// joined by simulated wires (1 µs and 3 µs one way), under the automotive
// profile and under gptp; the slave synchronises through the relay to the
// GM's clock, the relay counts what it forwarded and the residence times,
// a Sync arriving on a master port and a second GM's Sync are dropped and
// not forwarded, and the JSON line carries the per-port fields. Bad
// configurations are refused. The socket side runs as root in
// tests/cli/ptp_relay_netns.sh.
#include "layersec/ptp/ptp_relay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

namespace layersec::ptp {
namespace {

constexpr std::array<std::uint8_t, 6> kMacGm = {0x02, 0, 0, 0, 0, 0x01};
constexpr std::array<std::uint8_t, 6> kMacRelay0 = {0x02, 0, 0, 0, 0, 0x10};
constexpr std::array<std::uint8_t, 6> kMacRelay1 = {0x02, 0, 0, 0, 0, 0x11};
constexpr std::array<std::uint8_t, 6> kMacSlave = {0x02, 0, 0, 0, 0, 0x02};

SystemConfig config(Profile profile, Role role) {
  SystemConfig c;
  c.profile = profile;
  c.role = role;
  c.pdelay.neighbor_prop_delay_thresh_ns = 100'000;
  return c;
}

// Node 0 the GM (PtpPort), node 1 the relay (PtpRelay, two ports), node 2
// the slave (PtpPort). Each node's local time is global time plus its origin.
struct Chain {
  struct InFlight {
    std::int64_t at;
    int node;
    std::size_t port;
    std::vector<std::uint8_t> frame;
  };
  std::int64_t now = 1'000'000'000;
  std::array<std::int64_t, 3> origin{0, 7'654'321, 12'345'678};
  std::array<std::int64_t, 2> wire_ns{1000, 3000};  // GM-relay, relay-slave
  std::vector<InFlight> in_flight;
  std::unique_ptr<PtpPort> gm, slave;
  std::unique_ptr<PtpRelay> relay;
  std::int64_t residence_ns = 20'000;  // the relay's TX timestamps come this late
  std::function<void(std::vector<std::uint8_t>&)> rewrite_gm;  // applied to every GM frame
  std::vector<Message> relay_port1_out;                         // what the relay sent toward the slave

  std::int64_t local(int node, std::int64_t global) const { return global + origin[static_cast<std::size_t>(node)]; }
  FrameSink sink(int node, std::size_t port) {
    return [this, node, port](ByteSpan f, bool event) {
      // GM -> relay port 0, relay port 0 -> GM, relay port 1 -> slave, slave -> relay port 1.
      int to = 0;
      std::size_t to_port = 0;
      std::int64_t delay = wire_ns[0];
      std::int64_t stamp = now;
      if (node == 0) {
        to = 1;
      } else if (node == 2) {
        to = 1;
        to_port = 1;
        delay = wire_ns[1];
      } else {
        to = port == 0 ? 0 : 2;
        delay = wire_ns[port];
        stamp = now + residence_ns;  // the relay's frames leave later than they are made
      }
      std::vector<std::uint8_t> bytes(f.begin(), f.end());
      if (node == 0 && rewrite_gm) rewrite_gm(bytes);
      if (node == 1 && port == 1) {
        if (auto m = parse_message(ByteSpan(bytes.data() + 14, bytes.size() - 14))) relay_port1_out.push_back(*m);
      }
      in_flight.push_back({stamp + delay, to, to_port, std::move(bytes)});
      SendOutcome r;
      r.sent = true;
      if (event) r.tx_raw_ns = local(node, stamp);
      return r;
    };
  }
  void build(Profile profile, Role gm_role, Role relay_role, Role slave_role) {
    gm = std::make_unique<PtpPort>(config(profile, gm_role), kMacGm, sink(0, 0));
    relay = std::make_unique<PtpRelay>(config(profile, relay_role),
                                       std::vector<std::array<std::uint8_t, 6>>{kMacRelay0, kMacRelay1},
                                       std::vector<FrameSink>{sink(1, 0), sink(1, 1)});
    slave = std::make_unique<PtpPort>(config(profile, slave_role), kMacSlave, sink(2, 0));
  }
  std::int64_t deadline(int node) const {
    const std::int64_t d = node == 0 ? gm->next_deadline_ns() : node == 1 ? relay->next_deadline_ns() : slave->next_deadline_ns();
    return d == TimePoint::max().ns() ? TimePoint::max().ns() : d - origin[static_cast<std::size_t>(node)];
  }
  void deliver(const InFlight& f) {
    const ByteSpan b(f.frame.data(), f.frame.size());
    if (f.node == 0) gm->receive(b, local(0, now));
    if (f.node == 1) relay->receive(f.port, b, local(1, now));
    if (f.node == 2) slave->receive(b, local(2, now));
  }
  void run_until(std::int64_t end) {
    for (;;) {
      std::int64_t next = end;
      for (int i = 0; i < 3; ++i) next = std::min(next, deadline(i));
      for (const auto& f : in_flight) next = std::min(next, f.at);
      if (next >= end) break;
      now = std::max(now, next);
      auto it = std::min_element(in_flight.begin(), in_flight.end(),
                                 [](const InFlight& a, const InFlight& b) { return a.at < b.at; });
      if (it != in_flight.end() && it->at <= now) {
        const InFlight f = *it;
        in_flight.erase(it);
        deliver(f);
        continue;
      }
      gm->on_timer(local(0, now));
      relay->on_timer(local(1, now));
      slave->on_timer(local(2, now));
    }
    now = end;
  }
  double slave_minus_gm() const {
    return static_cast<double>(slave->system().clock().to_synced(local(2, now)) -
                               gm->system().clock().to_synced(local(0, now)));
  }
};

void expect_synchronised_through_relay(Chain& c) {
  const TimeAwareSystem& s = c.slave->system();
  EXPECT_STREQ(s.state(), "slave");
  EXPECT_STREQ(c.relay->system().state(), "relay");
  EXPECT_EQ(s.grandmaster_identity() == clock_identity_from_mac(kMacGm) ||
                s.grandmaster_identity() == clock_identity_from_mac(kMacRelay0),
            true);
  EXPECT_NEAR(s.pdelay(0).mean_link_delay_ns(), 3000.0, 1.0);
  EXPECT_NEAR(c.relay->system().pdelay(1).mean_link_delay_ns(), 3000.0, 1.0);
  // The slave reads the GM's time: the residence (20 µs) and both links are corrected.
  EXPECT_LT(std::fabs(c.slave_minus_gm()), 5.0);
  EXPECT_LT(std::fabs(s.status().offset_ns), 5.0);
  const RelayStats& st = c.relay->stats();
  EXPECT_EQ(st.ports[0].syncs_forwarded, 0u);
  EXPECT_GT(st.ports[1].syncs_forwarded, 100u);
  EXPECT_EQ(st.ports[1].tx_timestamp_missed, 0u);
  EXPECT_GT(c.relay->system().counters(0).sync_accepted, 100u);
  EXPECT_EQ(c.relay->system().port_role(0), PortRole::kSlave);
  EXPECT_EQ(c.relay->system().port_role(1), PortRole::kMaster);
  c.relay->close_window();
  EXPECT_GT(c.relay->stats().window_residence_samples, 0u);
  // The residence the relay saw is the sink's 20 µs (its TX stamp minus the Sync's RX stamp).
  EXPECT_NEAR(c.relay->stats().window_residence_p50_ns, 20'000.0, 1.0);
  EXPECT_NEAR(c.relay->stats().window_residence_max_ns, 20'000.0, 1.0);
  // The Follow_Up arrives with its Sync here, so all of it is after the Follow_Up.
  EXPECT_NEAR(c.relay->stats().window_after_follow_up_p50_ns, 20'000.0, 1.0);
}

TEST(PtpRelay, AutomotiveChainSynchronisesThroughTheRelay) {
  Chain c;
  c.build(Profile::kAutomotive, Role::kGm, Role::kSlave, Role::kSlave);
  EXPECT_EQ(c.relay->system().config().port_count, 2u);
  EXPECT_EQ(c.relay->system().config().clock_identity, clock_identity_from_mac(kMacRelay0));
  c.run_until(c.now + 30'000'000'000LL);
  expect_synchronised_through_relay(c);
  // Under automotive the slave follows the relay's port (no Announce).
  EXPECT_EQ(c.slave->system().grandmaster_identity(), clock_identity_from_mac(kMacRelay0));
  EXPECT_EQ(c.relay->system().grandmaster_identity(), clock_identity_from_mac(kMacGm));
}

TEST(PtpRelay, GptpChainSynchronisesThroughTheRelayByBmca) {
  Chain c;
  c.build(Profile::kGptp, Role::kGm, Role::kAuto, Role::kAuto);
  c.run_until(c.now + 30'000'000'000LL);
  expect_synchronised_through_relay(c);
  EXPECT_EQ(c.slave->system().grandmaster_identity(), clock_identity_from_mac(kMacGm));
}

TEST(PtpRelay, GptpRelayPassesTheGmTimePropertiesOn) {
  // A GM announcing UTC offset 37 s as valid (as ptp4l does): the relay's
  // Announce must carry the same, or a PTP-timescale slave behind it (ptp4l)
  // applies a different UTC offset than the GM meant.
  Chain c;
  c.build(Profile::kGptp, Role::kGm, Role::kAuto, Role::kAuto);
  c.rewrite_gm = [](std::vector<std::uint8_t>& f) {
    auto m = parse_message(ByteSpan(f.data() + 14, f.size() - 14));
    if (!m || m->header.type != MessageType::kAnnounce) return;
    m->header.flags = kFlagPtpTimescale | kFlagUtcOffsetValid | kFlagTimeTraceable;
    m->announce.current_utc_offset = 37;
    m->announce.time_source = 0x20;
    std::array<std::uint8_t, kMaxFrameSize> buf{};
    const std::size_t n = encode_frame(*m, kMacGm, buf);
    f.assign(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  };
  c.run_until(c.now + 10'000'000'000LL);
  std::size_t announces = 0;
  for (const Message& m : c.relay_port1_out) {
    if (m.header.type != MessageType::kAnnounce) continue;
    ++announces;
    EXPECT_EQ(m.header.flags, kFlagPtpTimescale | kFlagUtcOffsetValid | kFlagTimeTraceable);
    EXPECT_EQ(m.announce.current_utc_offset, 37);
    EXPECT_EQ(m.announce.time_source, 0x20);
    EXPECT_EQ(m.announce.grandmaster_identity, clock_identity_from_mac(kMacGm));
  }
  EXPECT_GT(announces, 3u);
  EXPECT_STREQ(c.slave->system().state(), "slave");
}

Message sync_from(std::uint64_t clock, std::uint16_t seq) {
  Message m;
  m.header = make_header(MessageType::kSync, PortIdentity{clock, 1}, seq, -3, 1);
  return m;
}

TEST(PtpRelay, SyncOnAMasterPortAndASecondGmAreDroppedNotForwarded) {
  Chain c;
  c.build(Profile::kAutomotive, Role::kGm, Role::kSlave, Role::kSlave);
  c.run_until(c.now + 10'000'000'000LL);
  const std::uint64_t forwarded = c.relay->stats().ports[1].syncs_forwarded;
  std::array<std::uint8_t, kMaxFrameSize> buf{};
  // A Sync into the master port (from the slave's side).
  std::size_t n = encode_frame(sync_from(0x0200000000000bad, 1), kMacSlave, buf);
  c.relay->receive(1, ByteSpan(buf.data(), n), c.local(1, c.now));
  EXPECT_EQ(c.relay->system().counters(1).drops[DropReason::kWrongRole], 1u);
  // A second GM's Sync and Follow_Up on the port facing the GM.
  n = encode_frame(sync_from(0x0200000000000bad, 2), kMacSlave, buf);
  c.relay->receive(0, ByteSpan(buf.data(), n), c.local(1, c.now));
  Message fu;
  fu.header = make_header(MessageType::kFollowUp, PortIdentity{0x0200000000000bad, 1}, 2, -3, 1);
  n = encode_frame(fu, kMacSlave, buf);
  c.relay->receive(0, ByteSpan(buf.data(), n), c.local(1, c.now));
  EXPECT_EQ(c.relay->system().counters(0).drops[DropReason::kSecondGm], 1u);
  EXPECT_EQ(c.relay->stats().ports[1].syncs_forwarded, forwarded);
  c.relay->count_rx_without_timestamp(0);
  EXPECT_EQ(c.relay->stats().ports[0].rx_without_timestamp, 1u);

  c.relay->close_window();
  const nlohmann::json j = relay_status_json(*c.relay, {"a", "b"}, 10.0, 0.0);
  EXPECT_EQ(j["state"], "relay");
  ASSERT_EQ(j["ports"].size(), 2u);
  EXPECT_EQ(j["ports"][0]["name"], "a");
  EXPECT_EQ(j["ports"][0]["role"], "slave");
  EXPECT_EQ(j["ports"][1]["role"], "master");
  EXPECT_TRUE(j["ports"][1]["path_delay_ns"].is_number());
  EXPECT_TRUE(j["ports"][1]["neighbor_rate_ratio"].is_number());
  EXPECT_EQ(j["ports"][1]["drops"]["wrong_role"], 1);
  EXPECT_EQ(j["ports"][0]["drops"]["second_gm"], 1);
  EXPECT_EQ(j["ports"][1]["syncs_forwarded"], forwarded);
  EXPECT_TRUE(j["residence_ns"].is_object());
}

TEST(PtpRelay, RefusesBadShapes) {
  const auto ok = [](ByteSpan, bool) { return SendOutcome{true, std::nullopt}; };
  const SystemConfig c = config(Profile::kGptp, Role::kAuto);
  EXPECT_THROW(PtpRelay(c, {kMacRelay0}, {ok}), ConfigError);
  EXPECT_THROW(PtpRelay(c, {kMacRelay0, kMacRelay1}, {ok}), ConfigError);
  std::vector<std::array<std::uint8_t, 6>> nine(kMaxPorts + 1, kMacRelay0);
  EXPECT_THROW(PtpRelay(c, nine, std::vector<FrameSink>(kMaxPorts + 1, ok)), ConfigError);
  EXPECT_THROW(PtpRelay(config(Profile::kAutomotive, Role::kAuto), {kMacRelay0, kMacRelay1}, {ok, ok}), ConfigError);
  EXPECT_NO_THROW(PtpRelay(c, {kMacRelay0, kMacRelay1}, {ok, ok}));
}

}  // namespace
}  // namespace layersec::ptp
