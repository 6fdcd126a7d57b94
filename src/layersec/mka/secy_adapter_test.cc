// Two MKA participants driving two real macsec::SecY through
// MacsecSecYDriver: the SAK they agree on protects frames (AES-GCM) that the
// other SecY verifies, across timer rekeys, with 1,000 frames/s each way and
// none lost; XPN included.
#include "layersec/mka/secy_adapter.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <vector>

#include "layersec/mka/fake_secy_test_support.h"
#include "layersec/mka/mka_sim_test_support.h"
#include "layersec/mka/participant.h"

namespace layersec::mka {
namespace {

using testing::DeterministicRandom;
using testing::sci_of;
using testing::test_cak;
using testing::test_ckn;

struct Node {
  std::unique_ptr<macsec::SecY> secy;
  std::unique_ptr<MacsecSecYDriver> driver;
  std::unique_ptr<DeterministicRandom> rng;
  std::unique_ptr<Participant> p;
  std::uint64_t sci = 0;
  std::uint64_t delivered = 0;
  std::uint64_t lost = 0;
};

Node make_node(std::uint64_t sci, std::uint8_t priority, CipherSuite suite, Duration rekey) {
  Node n;
  n.sci = sci;
  macsec::SecYConfig c;
  c.sci = macsec::Sci{sci};
  c.suite = suite;
  n.secy = std::make_unique<macsec::SecY>(c);
  n.driver = std::make_unique<MacsecSecYDriver>(*n.secy);
  n.rng = std::make_unique<DeterministicRandom>(sci);
  ParticipantConfig pc;
  pc.sci = sci;
  pc.ckn = test_ckn();
  pc.key_server_priority = priority;
  pc.cipher_suite = suite;
  pc.rekey_interval = rekey;
  n.p = std::make_unique<Participant>(pc, test_cak(0x11, 16), *n.driver, *n.rng);
  return n;
}

std::vector<std::uint8_t> data_frame(std::uint64_t sci, std::uint32_t seq) {
  std::vector<std::uint8_t> f(64, 0);
  for (int i = 0; i < 6; ++i) f[i] = 0xFF;
  for (int i = 0; i < 6; ++i) f[6 + i] = static_cast<std::uint8_t>(sci >> (56 - 8 * i));
  f[12] = 0x88;
  f[13] = 0xB5;
  for (int i = 0; i < 4; ++i) f[14 + i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
  return f;
}

bool live_at(const Participant& p, std::uint64_t sci) {
  for (const auto& pi : p.peers()) {
    if (pi.live && pi.sci == sci) return true;
  }
  return false;
}

// Runs two nodes for `seconds` of fake time in 1 ms steps: MKPDUs take 1 ms,
// every step each node protects one frame and the other validates it.
void run(std::array<Node, 2>& n, int seconds) {
  std::array<std::vector<std::vector<std::uint8_t>>, 2> wire;  // sent last step, by sender
  auto take = [&](int i, Output out) {
    for (auto& f : out.frames) wire[static_cast<std::size_t>(i)].push_back(std::move(f));
  };
  TimePoint now{};
  take(0, n[0].p->start(now));
  take(1, n[1].p->start(now));
  std::uint32_t seq = 0;
  std::vector<std::uint8_t> out(256);
  for (int ms = 1; ms <= seconds * 1000; ++ms) {
    now = TimePoint{} + Duration::milliseconds(ms);
    auto arriving = std::move(wire);
    wire = {};
    for (int i = 0; i < 2; ++i) {
      for (const auto& f : arriving[static_cast<std::size_t>(i)]) take(1 - i, n[static_cast<std::size_t>(1 - i)].p->on_mkpdu(f, now));
    }
    for (int i = 0; i < 2; ++i) {
      if (n[static_cast<std::size_t>(i)].p->next_deadline() <= now) take(i, n[static_cast<std::size_t>(i)].p->on_timer(now));
      if (ms % 1000 == 0) {
        const std::uint8_t an = n[static_cast<std::size_t>(i)].secy->encoding_an();
        take(i, n[static_cast<std::size_t>(i)].p->on_tx_pn(n[static_cast<std::size_t>(i)].secy->tx_sa_status(an).next_pn, now));
      }
    }
    for (int i = 0; i < 2; ++i) {
      Node& tx = n[static_cast<std::size_t>(i)];
      Node& rx = n[static_cast<std::size_t>(1 - i)];
      const auto plain = data_frame(tx.sci, ++seq);
      auto len = tx.secy->protect(plain, out);
      if (!len) continue;  // not transmitting yet
      std::vector<std::uint8_t> wire_frame(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*len));
      auto got = rx.secy->validate(wire_frame);
      if (got && got->verified() && std::equal(plain.begin(), plain.end(), got->frame.begin(), got->frame.end())) {
        ++rx.delivered;
      } else if (live_at(*rx.p, tx.sci) && rx.secy->tx_sa_status(rx.secy->encoding_an()).enabled) {
        ++rx.lost;
      }
    }
  }
}

void expect_hitless(CipherSuite suite) {
  std::array<Node, 2> n = {make_node(sci_of(1), 10, suite, Duration::seconds(10)),
                           make_node(sci_of(2), 20, suite, Duration::zero())};
  run(n, 45);
  EXPECT_EQ(n[0].p->stats().rekey(RekeyReason::kTimer), 4u);
  EXPECT_EQ(n[0].lost + n[1].lost, 0u);
  EXPECT_GT(n[0].delivered, 44000u);
  EXPECT_GT(n[1].delivered, 44000u);
  const InstalledSak* a = n[0].p->sak().transmitting();
  const InstalledSak* b = n[1].p->sak().transmitting();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->fingerprint, b->fingerprint);
  EXPECT_EQ(a->ki.kn, 5u);
  std::printf("%s over macsec::SecY: %llu + %llu frames verified, %llu lost, 4 timer rekeys\n",
              std::string(to_string(suite)).c_str(), static_cast<unsigned long long>(n[0].delivered),
              static_cast<unsigned long long>(n[1].delivered),
              static_cast<unsigned long long>(n[0].lost + n[1].lost));
}

TEST(MkaSecYAdapter, Gcm128FramesVerifyAcrossRekeys) { expect_hitless(CipherSuite::kGcmAes128); }
TEST(MkaSecYAdapter, XpnFramesVerifyAcrossRekeys) { expect_hitless(CipherSuite::kGcmAesXpn256); }

TEST(MkaSecYAdapter, RefusesAnotherSuiteOrOffsetAndChangesNothing) {
  macsec::SecYConfig c;
  c.sci = macsec::Sci{sci_of(1)};
  macsec::SecY secy(c);
  MacsecSecYDriver d(secy);
  const SecretBytes sak(std::vector<std::uint8_t>(32, 1));
  SaMaterial m;
  m.sak = &sak;
  m.suite = CipherSuite::kGcmAes256;
  EXPECT_EQ(d.install_rx_sa(sci_of(2), m, 1).error(), SecYError::kRefused);
  EXPECT_EQ(secy.rx_sc_count(), 0u);
  const SecretBytes sak16(std::vector<std::uint8_t>(16, 1));
  m.sak = &sak16;
  m.suite = CipherSuite::kGcmAes128;
  m.offset = ConfidentialityOffset::kOffset30;
  EXPECT_EQ(d.install_tx_sa(m, 1).error(), SecYError::kRefused);
  m.offset = ConfidentialityOffset::kOffset0;
  EXPECT_TRUE(d.install_rx_sa(sci_of(2), m, 5).ok());
  EXPECT_EQ(secy.rx_sc_count(), 1u);
  EXPECT_EQ(d.rx_next_pn(sci_of(2), 0), 5u);
  EXPECT_EQ(d.enable_tx_sa(1).error(), SecYError::kNoSuchSa);
  EXPECT_TRUE(d.install_tx_sa(m, 7).ok());
  EXPECT_TRUE(d.enable_tx_sa(0).ok());
  EXPECT_EQ(d.tx_next_pn(0), 7u);
  d.retire_tx_sa(0);
  EXPECT_EQ(d.tx_next_pn(0), 0u);
  d.remove_rx_sc(sci_of(2));
  EXPECT_EQ(secy.rx_sc_count(), 0u);
}

}  // namespace
}  // namespace layersec::mka
