// PtpPort over fake frame sinks (no sockets): two ports joined by a simulated
// 1 µs wire synchronise, the Ethernet pad of short frames is trimmed only
// when it is zero, a missing TX timestamp is counted, and the JSON line
// carries its fields. The socket side is tested against ptp4l and through a
// MACsec link as root (tests/cli/ptp_ptp4l_netns.sh, ptp_macsec_netns.sh).
#include "layersec/ptp/ptp_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace layersec::ptp {
namespace {

constexpr std::array<std::uint8_t, 6> kMacGm = {0x02, 0, 0, 0, 0, 0x01};
constexpr std::array<std::uint8_t, 6> kMacSlave = {0x02, 0, 0, 0, 0, 0x02};

SystemConfig automotive(Role role) {
  SystemConfig c;
  c.profile = Profile::kAutomotive;
  c.role = role;
  c.pdelay.neighbor_prop_delay_thresh_ns = 100'000;
  return c;
}

// A wire between two ports; each port's local time is global time plus its
// own origin (the slave's differs by 12.3 ms), one-way delay 1 µs.
struct Wire {
  struct InFlight {
    std::int64_t at;
    int to;
    std::vector<std::uint8_t> frame;
  };
  std::int64_t now = 1'000'000'000;
  std::array<std::int64_t, 2> origin{0, 12'345'678};
  std::vector<InFlight> in_flight;
  std::array<std::unique_ptr<PtpPort>, 2> ports;
  bool stamp_tx = true;

  std::int64_t local(int i, std::int64_t global) const { return global + origin[static_cast<std::size_t>(i)]; }
  FrameSink sink(int self) {
    return [this, self](ByteSpan f, bool event) {
      in_flight.push_back({now + 1000, 1 - self, std::vector<std::uint8_t>(f.begin(), f.end())});
      SendOutcome r;
      r.sent = true;
      if (event && stamp_tx) r.tx_raw_ns = local(self, now);
      return r;
    };
  }
  // Runs events in time order until global time `end`.
  void run_until(std::int64_t end) {
    for (;;) {
      std::int64_t next = end;
      for (int i = 0; i < 2; ++i) {
        const std::int64_t d = ports[static_cast<std::size_t>(i)]->next_deadline_ns();
        if (d != TimePoint::max().ns()) next = std::min(next, d - origin[static_cast<std::size_t>(i)]);
      }
      for (const auto& f : in_flight) next = std::min(next, f.at);
      if (next >= end) break;
      now = std::max(now, next);
      auto it = std::find_if(in_flight.begin(), in_flight.end(), [&](const InFlight& f) { return f.at <= now; });
      if (it != in_flight.end()) {
        const InFlight f = *it;
        in_flight.erase(it);
        ports[static_cast<std::size_t>(f.to)]->receive(ByteSpan(f.frame.data(), f.frame.size()), local(f.to, now));
        continue;
      }
      for (int i = 0; i < 2; ++i) ports[static_cast<std::size_t>(i)]->on_timer(local(i, now));
    }
    now = end;
  }
};

TEST(PtpPort, TwoPortsOverFakeSinksSynchronise) {
  Wire w;
  w.ports[0] = std::make_unique<PtpPort>(automotive(Role::kGm), kMacGm, w.sink(0));
  w.ports[1] = std::make_unique<PtpPort>(automotive(Role::kSlave), kMacSlave, w.sink(1));
  EXPECT_TRUE(w.ports[0]->system().is_grandmaster());
  EXPECT_EQ(w.ports[1]->system().config().clock_identity, clock_identity_from_mac(kMacSlave));
  w.run_until(w.now + 20'000'000'000LL);
  const TimeAwareSystem& slave = w.ports[1]->system();
  EXPECT_STREQ(slave.state(), "slave");
  EXPECT_NEAR(slave.pdelay(0).mean_link_delay_ns(), 1000.0, 1.0);
  EXPECT_LT(std::fabs(slave.status().offset_ns), 5.0);
  // The slave's clock now reads the GM's: compare both at one global instant.
  const TimeAwareSystem& gm = w.ports[0]->system();
  const double diff = static_cast<double>(slave.clock().to_synced(w.local(1, w.now)) - gm.clock().to_synced(w.local(0, w.now)));
  EXPECT_LT(std::fabs(diff), 5.0);
  EXPECT_EQ(w.ports[1]->stats().clock_steps, 1u);  // the first lock steps once
  EXPECT_EQ(w.ports[0]->stats().tx_timestamp_missed, 0u);
  EXPECT_GT(w.ports[0]->stats().frames_out, 300u);
  w.ports[1]->close_window();
  EXPECT_GT(w.ports[1]->stats().window_samples, 0u);

  const nlohmann::json j = status_json(slave, 20.0, 0.0, w.ports[1]->stats());
  EXPECT_EQ(j["state"], "slave");
  EXPECT_TRUE(j["offset_ns"].is_number());
  EXPECT_EQ(j["grandmaster"], "020000fffe000001");
  EXPECT_EQ(j["clock_steps"], 1);
  EXPECT_TRUE(j["drops"].is_object());
}

TEST(PtpPort, MissingTxTimestampsAreCountedAndNoFollowUpGoes) {
  Wire w;
  w.stamp_tx = false;
  w.ports[0] = std::make_unique<PtpPort>(automotive(Role::kGm), kMacGm, w.sink(0));
  w.ports[1] = std::make_unique<PtpPort>(automotive(Role::kSlave), kMacSlave, w.sink(1));
  w.run_until(w.now + 2'000'000'000LL);
  EXPECT_GT(w.ports[0]->stats().tx_timestamp_missed, 10u);
  EXPECT_EQ(w.ports[1]->system().counters(0).sync_accepted, 0u);
  EXPECT_STRNE(w.ports[1]->system().state(), "slave");
}

TEST(PtpPort, OnlyAZeroPadIsTrimmed) {
  PtpPort gm(automotive(Role::kGm), kMacGm, [](ByteSpan, bool) { return SendOutcome{true, std::nullopt}; });
  // A Sync is 44 octets: a NIC pads its frame to the 60-octet minimum.
  Message sync;
  sync.header = make_header(MessageType::kSync, PortIdentity{0x0200000000000002ULL, 1}, 1, -3, 1);
  std::array<std::uint8_t, kMaxFrameSize> buf{};
  const std::size_t n = encode_frame(sync, kMacSlave, buf);
  ASSERT_EQ(n, 58u);
  std::vector<std::uint8_t> padded(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  padded.resize(60, 0);
  gm.receive(ByteSpan(padded.data(), padded.size()), 1000);
  // Parsed (the pad trimmed), then refused for what it is: a Sync to a GM.
  EXPECT_EQ(gm.system().counters(0).drops[DropReason::kWrongRole], 1u);
  EXPECT_EQ(gm.system().counters(0).drops[DropReason::kMalformed], 0u);
  padded.back() = 0x5A;  // a non-zero pad reaches the codec whole
  gm.receive(ByteSpan(padded.data(), padded.size()), 2000);
  EXPECT_EQ(gm.system().counters(0).malformed[static_cast<std::size_t>(ParseError::kTrailingBytes)], 1u);
  gm.receive(ByteSpan(padded.data(), 17), 3000);  // a runt: ignored
  EXPECT_EQ(gm.stats().frames_in, 3u);
}

}  // namespace
}  // namespace layersec::ptp
