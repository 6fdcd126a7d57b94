// gPTP inside a SecY keyed by MKA (`layersec macsec up --mka --ptp`, issue
// 17), without sockets: two MacsecLinks whose SecYs two MKA participants
// drive through mka::GatedSecYDriver (as LinkMka does), a grandmaster that
// sends a gPTP frame every 125 ms through gptp_wire_frame (LinkPtp's send
// path) and a slave that classifies and validates each frame as TapLink and
// LinkPtp do. Fake time in 1 ms steps: no timing assertion. Checked: before
// the first SAK nothing is sent and every gPTP frame is counted tx_no_sa;
// from the first SAK on every Sync reaches the slave's port across timer and
// operator rekeys (the largest gap is the sync interval); frames recorded
// before a rekey, replayed after it, are rejected by the SecY; plain 0x88F7
// never reaches a protected port. The sockets, the kernel timestamps and the
// measured rekey gap are tests/cli/ptp_mka_netns.sh's.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "layersec/macsec/link.h"
#include "layersec/macsec/link_ptp.h"
#include "layersec/macsec/secy.h"
#include "layersec/mka/fake_secy_test_support.h"
#include "layersec/mka/gated_secy_driver.h"
#include "layersec/mka/mka_sim_test_support.h"
#include "layersec/mka/participant.h"

namespace layersec::macsec {
namespace {

using mka::testing::sci_of;

struct End {
  std::uint64_t sci = 0;
  std::unique_ptr<MacsecLink> link;
  std::unique_ptr<mka::GatedSecYDriver> driver;
  std::unique_ptr<mka::testing::DeterministicRandom> rng;
  std::unique_ptr<mka::Participant> p;
  LinkPtpStats ptp;
};

End make_end(std::uint64_t sci, std::uint8_t priority, Duration rekey) {
  End e;
  e.sci = sci;
  SecYConfig c;
  c.sci = Sci{sci};
  e.link = std::make_unique<MacsecLink>(SecY(c));
  e.driver = std::make_unique<mka::GatedSecYDriver>(e.link->secy());
  e.rng = std::make_unique<mka::testing::DeterministicRandom>(sci);
  mka::ParticipantConfig pc;
  pc.sci = sci;
  pc.ckn = mka::testing::test_ckn();
  pc.key_server_priority = priority;
  pc.rekey_interval = rekey;
  e.p = std::make_unique<mka::Participant>(pc, mka::testing::test_cak(), *e.driver, *e.rng);
  return e;
}

// A Sync as 802.1AS puts it on the wire: 01-80-C2-00-00-0E, the port's MAC,
// 0x88F7, a 44-octet message (transportSpecific 1, messageType 0) whose
// sequenceId (header octets 30-31) is `seq`.
std::vector<std::uint8_t> gptp_sync(std::uint64_t sci, std::uint16_t seq) {
  std::vector<std::uint8_t> f(14 + 44, 0);
  const std::array<std::uint8_t, 6> group = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E};
  std::copy(group.begin(), group.end(), f.begin());
  for (int i = 0; i < 6; ++i) f[6 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sci >> (56 - 8 * i));
  f[12] = 0x88;
  f[13] = 0xF7;
  f[14] = 0x10;
  f[15] = 0x02;
  f[14 + 30] = static_cast<std::uint8_t>(seq >> 8);
  f[14 + 31] = static_cast<std::uint8_t>(seq);
  return f;
}

// What the slave's link does with a frame off the lower link when its port
// is protected: plain gPTP is refused before the SecY, a MACsec frame is
// validated, and verified gPTP goes to the port. True when it reached the port.
bool slave_receives(End& slave, std::vector<std::uint8_t> wire, LinkPtpStats& stats) {
  const ByteSpan w(wire.data(), wire.size());
  if (classify_lower_frame(w, true) == PtpFrameVerdict::kRefusedPlain) {
    ++stats.rx_plain_refused;
    return false;
  }
  auto plain = slave.link->validate(MutableByteSpan(wire.data(), wire.size()));
  if (!plain || classify_verified_frame(*plain, true) != PtpFrameVerdict::kToPort) return false;
  ++stats.rx_protected;
  return true;
}

struct SyncRun {
  std::vector<std::int64_t> delivered_ms;              // when each Sync reached the slave's port
  std::int64_t first_sak_ms = -1;                      // the GM's first protected Sync
  std::uint64_t sent_after_first_sak = 0;              // Syncs the GM put on the wire
  std::map<std::uint8_t, std::vector<std::uint8_t>> first_frame_of_an;  // recorded secure frames
  std::vector<std::uint8_t> last_frame;
  std::array<std::uint8_t, 5> ans_seen{};  // encoding ANs in order of use (first 5)
  std::size_t an_changes = 0;
};

// Runs GM `g` and slave `s` for `ms_total` ms; the GM sends a Sync every
// 125 ms; the slave's participant starts at 1 s (until then the GM has no
// peer and no SAK); `operator_rekey_ms`: the key server's SIGHUP.
SyncRun run(End& g, End& s, int ms_total, int operator_rekey_ms) {
  constexpr int kSlaveStartMs = 1000;
  SyncRun r;
  std::array<std::vector<std::vector<std::uint8_t>>, 2> mkpdus;  // sent last step, by sender
  auto take = [&](int from, mka::Output out) {
    for (auto& f : out.frames) mkpdus[static_cast<std::size_t>(from)].push_back(std::move(f));
  };
  std::array<End*, 2> ends = {&g, &s};
  TimePoint now{};
  take(0, g.p->start(now));
  std::uint16_t seq = 0;
  std::optional<std::uint8_t> an;
  for (int ms = 1; ms <= ms_total; ++ms) {
    now = TimePoint{} + Duration::milliseconds(ms);
    if (ms == kSlaveStartMs) take(1, s.p->start(now));
    const int up = ms < kSlaveStartMs ? 1 : 2;  // ends running
    auto arriving = std::move(mkpdus);
    mkpdus = {};
    for (int i = 0; i < up; ++i) {
      for (const auto& f : arriving[static_cast<std::size_t>(i)]) {
        if (1 - i < up) take(1 - i, ends[static_cast<std::size_t>(1 - i)]->p->on_mkpdu(f, now));
      }
    }
    for (int i = 0; i < up; ++i) {
      End& e = *ends[static_cast<std::size_t>(i)];
      if (e.p->next_deadline() <= now) take(i, e.p->on_timer(now));
      if (ms % 500 == 0) take(i, e.p->on_tx_pn(e.driver->encoding_next_pn(), now));  // LinkMka's kTxPnPeriod
    }
    if (ms == operator_rekey_ms) {
      auto out = g.p->rekey_now(now);
      EXPECT_TRUE(out.has_value()) << "the key server refused rekey_now";
      if (out) take(0, std::move(*out));
    }
    if (ms % 125 != 0) continue;
    const auto sync = gptp_sync(g.sci, ++seq);
    auto wire = gptp_wire_frame(*g.link, true, ByteSpan(sync.data(), sync.size()), g.ptp);
    if (!wire) {
      EXPECT_EQ(r.first_sak_ms, -1) << "a Sync was refused after the first SAK, at " << ms << " ms";
      continue;
    }
    if (r.first_sak_ms < 0) r.first_sak_ms = ms;
    ++r.sent_after_first_sak;
    std::vector<std::uint8_t> frame(wire->begin(), wire->end());
    const std::uint8_t frame_an = frame[14] & 0x03;  // TCI/AN octet of the SecTAG
    if (an != frame_an) {
      if (r.an_changes < r.ans_seen.size()) r.ans_seen[r.an_changes] = frame_an;
      ++r.an_changes;
      an = frame_an;
    }
    r.first_frame_of_an.try_emplace(frame_an, frame);
    r.last_frame = frame;
    if (slave_receives(s, std::move(frame), s.ptp)) r.delivered_ms.push_back(ms);
  }
  return r;
}

TEST(LinkPtpMka, ProtectedGptpWaitsForTheFirstSakThenSurvivesRekeys) {
  // GM: key server (priority 10), a new SAK every 3 s and a SIGHUP at 10.3 s.
  End g = make_end(sci_of(1), 10, Duration::seconds(3));
  End s = make_end(sci_of(2), 20, Duration::zero());
  const SyncRun r = run(g, s, 14000, 10300);

  // Fail closed before the first SAK: Syncs dropped and counted, none sent.
  ASSERT_GT(r.first_sak_ms, 1000) << "MKA never installed a SAK, or without a peer";
  EXPECT_EQ(g.ptp.tx_no_sa, static_cast<std::uint64_t>(r.first_sak_ms / 125 - 1));
  EXPECT_GT(g.ptp.tx_no_sa, 0u);
  EXPECT_EQ(g.ptp.tx_protect_errors, 0u);
  EXPECT_EQ(g.link->stats().tx_protect_errors, g.ptp.tx_no_sa);  // the link counts them too

  // From the first SAK on, every Sync reached the slave's port, across the
  // timer rekeys (3, 6, 9 s after the first) and the operator's at 10.3 s.
  EXPECT_GE(g.p->stats().rekey(mka::RekeyReason::kTimer), 3u);
  EXPECT_EQ(g.p->stats().rekey(mka::RekeyReason::kOperator), 1u);
  EXPECT_GE(r.an_changes, 5u) << "the GM did not switch SAKs";
  ASSERT_EQ(r.delivered_ms.size(), r.sent_after_first_sak);
  std::int64_t largest_gap = 0;
  for (std::size_t i = 1; i < r.delivered_ms.size(); ++i) {
    largest_gap = std::max(largest_gap, r.delivered_ms[i] - r.delivered_ms[i - 1]);
  }
  EXPECT_EQ(largest_gap, 125) << "a Sync was lost at a SAK rollover";
  EXPECT_EQ(s.ptp.rx_protected, r.sent_after_first_sak);
  EXPECT_EQ(s.link->stats().rx_dropped, 0u);
  std::printf("gPTP over MKA: %llu Syncs refused (no SA) before the first SAK at %lld ms, then %zu of %llu "
              "delivered across %zu SAK switches, largest gap %lld ms\n",
              static_cast<unsigned long long>(g.ptp.tx_no_sa), static_cast<long long>(r.first_sak_ms),
              r.delivered_ms.size(), static_cast<unsigned long long>(r.sent_after_first_sak), r.an_changes - 1,
              static_cast<long long>(largest_gap));
}

TEST(LinkPtpMka, ReplayedAndPlainGptpNeverReachTheProtectedPort) {
  End g = make_end(sci_of(1), 10, Duration::seconds(3));
  End s = make_end(sci_of(2), 20, Duration::zero());
  const SyncRun r = run(g, s, 14000, 10300);
  ASSERT_GE(r.an_changes, 5u);
  LinkPtpStats attacked;

  // A protected Sync recorded under the first SAK, replayed after its SA is
  // gone (a later SAK may have reused the AN: then its ICV fails).
  const std::uint8_t first_an = r.ans_seen[0];
  const std::uint64_t dropped_before = s.link->stats().rx_dropped;
  EXPECT_FALSE(slave_receives(s, r.first_frame_of_an.at(first_an), attacked));
  const SecYStats& st = s.link->secy().stats();
  EXPECT_EQ(st.InPktsNotUsingSA + st.InPktsNotValid, 1u);
  // The latest Sync again, under the SAK in use: the replay check.
  EXPECT_FALSE(slave_receives(s, r.last_frame, attacked));
  EXPECT_EQ(st.InPktsLate, 1u);
  EXPECT_EQ(s.link->stats().rx_dropped, dropped_before + 2);

  // Plain gPTP claiming the GM's port: refused before the SecY.
  EXPECT_FALSE(slave_receives(s, gptp_sync(g.sci, 1), attacked));
  EXPECT_EQ(attacked.rx_plain_refused, 1u);
  EXPECT_EQ(attacked.rx_protected, 0u);
}

TEST(LinkPtpMka, OnlyAMissingSaIsCountedAsNoSa) {
  SecYConfig c;
  c.sci = Sci{sci_of(1)};
  MacsecLink link{SecY(c)};
  LinkPtpStats stats;
  const auto sync = gptp_sync(sci_of(1), 1);
  const ByteSpan frame(sync.data(), sync.size());
  // Unprotected: the plain frame itself, whatever the SecY holds.
  auto plain = gptp_wire_frame(link, false, frame, stats);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->data(), frame.data());
  // No SA, then a disabled one (MKA's transmit SA before every peer has the SAK).
  EXPECT_FALSE(gptp_wire_frame(link, true, frame, stats).has_value());
  const std::array<std::uint8_t, 16> key{};
  ASSERT_TRUE(link.secy().install_tx_sa(0, SaKeys{ByteSpan(key.data(), key.size())}, 0xFFFFFFFFu).ok());
  ASSERT_TRUE(link.secy().enable_tx_sa(0, false).ok());
  EXPECT_FALSE(gptp_wire_frame(link, true, frame, stats).has_value());
  EXPECT_EQ(stats.tx_no_sa, 2u);
  // Enabled: the last PN of a 32-bit PN space, then exhaustion (another reason).
  ASSERT_TRUE(link.secy().enable_tx_sa(0, true).ok());
  auto secure = gptp_wire_frame(link, true, frame, stats);
  ASSERT_TRUE(secure.has_value());
  EXPECT_EQ(load_be16(secure->data() + 12), kMacsecEtherType);
  EXPECT_FALSE(gptp_wire_frame(link, true, frame, stats).has_value());
  EXPECT_EQ(stats.tx_no_sa, 2u);
  EXPECT_EQ(stats.tx_protect_errors, 1u);
  EXPECT_EQ(to_json(stats)["tx_no_sa"], 2);
}

}  // namespace
}  // namespace layersec::macsec
