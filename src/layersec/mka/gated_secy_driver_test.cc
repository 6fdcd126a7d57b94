// MKA participants driving real 802.1AE SecYs (macsec/secy.h) through
// GatedSecYDriver, on an in-memory LAN with fake time: every MKPDU reaches every
// other member after 1 ms, and every member protects a data frame every
// millisecond that every other member validates. What the link will do on
// real sockets, checked frame by frame: the SAK agreed, no frame lost across
// timer rekeys nor at bring-up (make-before-break on a real SecY: the
// transmit SA is held back until enabled), a restarted member gets a new SAK
// and frames recorded before are rejected, a wrong CAK never carries a
// frame, three members and a leave, and an offset mismatch keeps the link
// closed.
#include "layersec/mka/gated_secy_driver.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "layersec/mka/fake_secy_test_support.h"
#include "layersec/mka/keys.h"
#include "layersec/mka/mka_sim_test_support.h"
#include "layersec/mka/participant.h"

namespace layersec::mka {
namespace {

using testing::at_ms;
using testing::DeterministicRandom;
using testing::sci_of;
using testing::test_cak;
using testing::test_ckn;

struct Member {
  std::string name;
  std::uint64_t sci = 0;
  ParticipantConfig config;
  std::uint8_t cak_fill = 0x11;
  std::uint8_t secy_offset = 0;  // the SecY's confidentiality offset
  std::unique_ptr<macsec::SecY> secy;
  std::unique_ptr<GatedSecYDriver> adapter;
  std::unique_ptr<DeterministicRandom> rng;
  std::unique_ptr<Participant> p;
  bool up = false;
  int incarnation = 0;
  std::vector<Event> events;
  std::uint64_t protected_frames = 0;
  std::uint64_t protect_failures_after_first = 0;  // refused after the first protected frame
  std::uint64_t delivered = 0;
  std::uint64_t rejected = 0;  // a frame of a live member's transmit SA that did not verify
  std::vector<std::vector<std::uint8_t>> recorded;  // secure frames it sent
};

// Members on one segment, real SecYs, fake time.
class Lan {
 public:
  std::vector<Member> m;
  TimePoint now{};

  std::size_t add(const std::string& name, std::uint8_t mac, std::uint8_t priority, CipherSuite suite,
                  std::uint8_t cak_fill = 0x11, std::uint8_t secy_offset = 0) {
    Member x;
    x.name = name;
    x.sci = sci_of(mac);
    x.config.sci = x.sci;
    x.config.ckn = test_ckn();
    x.config.key_server_priority = priority;
    x.config.cipher_suite = suite;
    x.config.rekey_interval = Duration::seconds(3);
    x.cak_fill = cak_fill;
    x.secy_offset = secy_offset;
    m.push_back(std::move(x));
    build(m.size() - 1);
    return m.size() - 1;
  }
  // A fresh process: new SecY (no SA), new participant (new MI).
  void build(std::size_t i) {
    Member& x = m[i];
    ++x.incarnation;
    macsec::SecYConfig c;
    c.sci = macsec::Sci{x.sci};
    c.suite = x.config.cipher_suite;
    c.confidentiality_offset = x.secy_offset;
    x.secy = std::make_unique<macsec::SecY>(c);
    x.adapter = std::make_unique<GatedSecYDriver>(*x.secy);
    x.rng = std::make_unique<DeterministicRandom>(x.sci * 31 + static_cast<std::uint64_t>(x.incarnation));
    const std::size_t cak_len = sak_size(x.config.cipher_suite);
    x.p = std::make_unique<Participant>(x.config, test_cak(x.cak_fill, cak_len), *x.adapter, *x.rng);
  }
  void start(std::size_t i) {
    m[i].up = true;
    apply(i, m[i].p->start(now));
  }
  void kill(std::size_t i) { m[i].up = false; }

  void run_until(TimePoint end) {
    while (now < end) {
      now = now + Duration::milliseconds(1);
      std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>> due;
      due.swap(in_flight_);
      for (auto& [from, frame] : due) {
        if (!m[from].up) continue;
        for (std::size_t to = 0; to < m.size(); ++to) {
          if (to != from && m[to].up) apply(to, m[to].p->on_mkpdu(frame, now));
        }
      }
      for (std::size_t i = 0; i < m.size(); ++i) {
        if (m[i].up && m[i].p->next_deadline() <= now) apply(i, m[i].p->on_timer(now));
      }
      if (now.ns() % 200'000'000 == 0) {
        for (std::size_t i = 0; i < m.size(); ++i) {
          if (m[i].up && m[i].adapter->encoding_next_pn() != 0) {
            apply(i, m[i].p->on_tx_pn(m[i].adapter->encoding_next_pn(), now));
          }
        }
      }
      data_tick();
    }
  }

  bool live_at(std::size_t at, std::uint64_t sci) const {
    for (const auto& pi : m[at].p->peers()) {
      if (pi.live && pi.sci == sci) return true;
    }
    return false;
  }
  // The fingerprint of the SAK `i` transmits with ("" when none).
  std::string tx_fingerprint(std::size_t i) const {
    const InstalledSak* k = m[i].p->sak().transmitting();
    return k == nullptr ? "" : k->fingerprint;
  }
  std::size_t count(std::size_t i, EventType t) const {
    std::size_t n = 0;
    for (const auto& e : m[i].events) n += e.type == t ? 1 : 0;
    return n;
  }

  // Validates a copy of `secure` at member `to`; true when it verified.
  bool deliver(std::size_t to, std::vector<std::uint8_t> secure) {
    auto r = m[to].secy->validate(MutableByteSpan(secure.data(), secure.size()));
    return r.ok() && r->verified();
  }

 private:
  void apply(std::size_t i, Output out) {
    for (auto& f : out.frames) in_flight_.emplace_back(i, std::move(f));
    m[i].events.insert(m[i].events.end(), out.events.begin(), out.events.end());
  }
  void data_tick() {
    for (std::size_t i = 0; i < m.size(); ++i) {
      Member& x = m[i];
      if (!x.up) continue;
      std::vector<std::uint8_t> plain(64, static_cast<std::uint8_t>(i));
      plain[12] = 0x08;
      plain[13] = 0x00;
      std::vector<std::uint8_t> out(plain.size() + 40);
      auto n = x.secy->protect(plain, out);
      if (!n) {
        if (x.protected_frames > 0 && x.p->live_peer_count() > 0) ++x.protect_failures_after_first;
        continue;
      }
      ++x.protected_frames;
      out.resize(*n);
      if (x.recorded.size() < 100) x.recorded.push_back(out);
      for (std::size_t to = 0; to < m.size(); ++to) {
        if (to == i || !m[to].up) continue;
        if (deliver(to, out)) {
          ++m[to].delivered;
        } else if (live_at(to, x.sci) && live_at(i, m[to].sci)) {
          ++m[to].rejected;
        }
      }
    }
  }
  std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>> in_flight_;
};

class MkaGatedSecY : public ::testing::TestWithParam<CipherSuite> {};

// Two members agree a SAK, carry a frame every millisecond both ways, and
// rekey every 3 s (the SAK lifetime) for 20 s: every rekey is hitless on the
// real SecYs, for every suite (XPN: SSCI and salt from the participant).
TEST_P(MkaGatedSecY, TwoMembersRekeyWithoutLosingAFrame) {
  Lan lan;
  const auto a = lan.add("a", 1, 10, GetParam());
  const auto b = lan.add("b", 2, 20, GetParam());
  lan.start(a);
  lan.start(b);
  lan.run_until(at_ms(20000));
  ASSERT_FALSE(lan.tx_fingerprint(a).empty());
  EXPECT_EQ(lan.tx_fingerprint(a), lan.tx_fingerprint(b));
  EXPECT_TRUE(lan.m[a].p->is_key_server());
  EXPECT_GE(lan.m[a].p->stats().rekey(RekeyReason::kTimer), 4U);
  EXPECT_GE(lan.count(b, EventType::kSakTransmitting), 5U);
  for (const std::size_t i : {a, b}) {
    SCOPED_TRACE(lan.m[i].name);
    EXPECT_GT(lan.m[i].delivered, 15000U);
    EXPECT_EQ(lan.m[i].rejected, 0U);
    EXPECT_EQ(lan.m[i].protect_failures_after_first, 0U);
    EXPECT_EQ(lan.m[i].p->stats().secy_errors, 0U);
    // Old SAs are retired: at most the SA in use and the next one remain.
    EXPECT_LE(lan.m[i].secy->rx_sc_count(), 1U);
  }
  // The SecY's MIB agrees: nothing arrived that did not verify.
  EXPECT_EQ(lan.m[b].secy->stats().InPktsNotValid, 0U);
  EXPECT_EQ(lan.m[b].secy->stats().InPktsNotUsingSA, 0U);
  EXPECT_EQ(lan.m[b].secy->stats().InPktsNoSCI, 0U);
}

INSTANTIATE_TEST_SUITE_P(Suites, MkaGatedSecY,
                         ::testing::Values(CipherSuite::kGcmAes128, CipherSuite::kGcmAes256,
                                           CipherSuite::kGcmAesXpn128, CipherSuite::kGcmAesXpn256),
                         [](const auto& info) {
                           std::string n(to_string(info.param));
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

// Before MKA installs a SAK the SecY sends nothing (fail closed), and a
// transmit SA that is installed but not yet enabled protects nothing even
// at the encoding AN.
TEST(MkaGatedSecYUnit, NothingIsProtectedBeforeEnable) {
  macsec::SecYConfig c;
  c.sci = macsec::Sci{sci_of(1)};
  macsec::SecY secy(c);
  GatedSecYDriver ad(secy);
  std::vector<std::uint8_t> plain(60, 0x42);
  std::vector<std::uint8_t> out(plain.size() + 40);
  auto n = secy.protect(plain, out);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error(), macsec::ProtectError::kNoTransmitSa);
  EXPECT_EQ(ad.encoding_next_pn(), 0U);

  const SecretBytes sak = test_cak(0x30, 16);
  SaMaterial mat;
  mat.sak = &sak;
  mat.an = 0;  // the SecY's encoding AN already
  ASSERT_TRUE(ad.install_tx_sa(mat, 1).ok());
  n = secy.protect(plain, out);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error(), macsec::ProtectError::kNoTransmitSa);
  EXPECT_EQ(ad.tx_next_pn(0), 1U);
  EXPECT_EQ(ad.encoding_next_pn(), 0U);
  ASSERT_TRUE(ad.enable_tx_sa(0).ok());
  n = secy.protect(plain, out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(ad.encoding_next_pn(), 2U);
  EXPECT_EQ(ad.enable_tx_sa(3).error(), SecYError::kNoSuchSa);
  ad.retire_tx_sa(0);
  EXPECT_FALSE(secy.protect(plain, out).ok());
  EXPECT_EQ(ad.tx_next_pn(0), 0U);
}

// A SecY whose offset differs from what the key server distributes never
// installs the SAK: the link stays closed (nothing protected, nothing
// delivered) and the participant counts the SecY errors.
TEST(MkaGatedSecYUnit, OffsetMismatchKeepsTheLinkClosed) {
  Lan lan;
  const auto a = lan.add("a", 1, 10, CipherSuite::kGcmAes128);
  const auto b = lan.add("b", 2, 20, CipherSuite::kGcmAes128, 0x11, /*secy_offset=*/30);
  lan.start(a);
  lan.start(b);
  lan.run_until(at_ms(5000));
  EXPECT_TRUE(lan.live_at(a, lan.m[b].sci));
  EXPECT_EQ(lan.m[b].protected_frames, 0U);
  EXPECT_EQ(lan.m[b].delivered, 0U);
  EXPECT_GT(lan.m[b].p->stats().secy_errors, 0U);
}

// kill -9 and restart: the restarted member comes back with a new MI and a
// new SecY; the key server hands out a new SAK, traffic resumes, and frames
// recorded before the restart (under the old SAK) are rejected by both.
TEST(MkaGatedSecYUnit, RestartGetsANewSakAndOldFramesAreRejected) {
  Lan lan;
  const auto a = lan.add("a", 1, 10, CipherSuite::kGcmAes128);
  const auto b = lan.add("b", 2, 20, CipherSuite::kGcmAes128);
  lan.m[a].config.rekey_interval = Duration::zero();
  lan.m[b].config.rekey_interval = Duration::zero();
  lan.build(a);
  lan.build(b);
  lan.start(a);
  lan.start(b);
  lan.run_until(at_ms(3000));
  const std::string before = lan.tx_fingerprint(a);
  ASSERT_FALSE(before.empty());
  const auto recorded_b = lan.m[b].recorded;
  const auto recorded_a = lan.m[a].recorded;
  ASSERT_FALSE(recorded_b.empty());
  lan.kill(b);
  lan.run_until(at_ms(4000));
  lan.build(b);
  lan.m[b].recorded.clear();
  const std::uint64_t delivered_before = lan.m[a].delivered;
  lan.start(b);
  lan.run_until(at_ms(9000));
  const std::string after = lan.tx_fingerprint(a);
  ASSERT_FALSE(after.empty());
  EXPECT_NE(after, before);
  EXPECT_EQ(lan.tx_fingerprint(b), after);
  EXPECT_GT(lan.m[a].delivered, delivered_before + 1000);
  EXPECT_GT(lan.m[b].delivered, 1000U);
  for (const auto& f : recorded_b) EXPECT_FALSE(lan.deliver(a, f));
  for (const auto& f : recorded_a) EXPECT_FALSE(lan.deliver(b, f));
}

// A member with another CAK is heard (its MKPDUs fail the ICV and are
// counted) but never becomes live, never gets a SAK, and none of its frames
// is delivered; the two others are unaffected.
TEST(MkaGatedSecYUnit, WrongCakNeverBecomesLive) {
  Lan lan;
  const auto a = lan.add("a", 1, 10, CipherSuite::kGcmAes128);
  const auto b = lan.add("b", 2, 20, CipherSuite::kGcmAes128);
  const auto x = lan.add("x", 3, 5, CipherSuite::kGcmAes128, /*cak_fill=*/0x77);
  for (auto i : {a, b, x}) lan.start(i);
  lan.run_until(at_ms(8000));
  EXPECT_FALSE(lan.live_at(a, lan.m[x].sci));
  EXPECT_FALSE(lan.live_at(b, lan.m[x].sci));
  EXPECT_GT(lan.m[a].p->stats().drop(DropReason::kBadIcv), 5U);
  EXPECT_EQ(lan.m[x].protected_frames, 0U);
  EXPECT_EQ(lan.m[x].delivered, 0U);
  EXPECT_EQ(lan.tx_fingerprint(a), lan.tx_fingerprint(b));
  EXPECT_GT(lan.m[b].delivered, 5000U);
  EXPECT_EQ(lan.m[a].rejected + lan.m[b].rejected, 0U);
}

// The paper's zonal switch: three members, the switch (lowest priority
// value) is key server; a member leaves and is excluded (its SC removed,
// a new SAK without it), the others keep their traffic.
TEST(MkaGatedSecYUnit, ThreeMembersAndALeave) {
  Lan lan;
  const auto sw = lan.add("switch", 1, 1, CipherSuite::kGcmAes256);
  const auto e1 = lan.add("ecu1", 2, 100, CipherSuite::kGcmAes256);
  const auto e2 = lan.add("ecu2", 3, 100, CipherSuite::kGcmAes256);
  for (auto i : {sw, e1, e2}) lan.start(i);
  lan.run_until(at_ms(4000));
  EXPECT_TRUE(lan.m[sw].p->is_key_server());
  const std::string fp = lan.tx_fingerprint(sw);
  for (auto i : {e1, e2}) EXPECT_EQ(lan.tx_fingerprint(i), fp);
  EXPECT_EQ(lan.m[sw].secy->rx_sc_count(), 2U);
  lan.kill(e2);
  lan.run_until(at_ms(14000));
  EXPECT_FALSE(lan.live_at(sw, lan.m[e2].sci));
  EXPECT_EQ(lan.m[sw].secy->rx_sc_count(), 1U);
  EXPECT_NE(lan.tx_fingerprint(sw), fp);
  EXPECT_EQ(lan.tx_fingerprint(e1), lan.tx_fingerprint(sw));
  EXPECT_EQ(lan.m[sw].rejected + lan.m[e1].rejected, 0U);
  EXPECT_EQ(lan.m[e1].protect_failures_after_first, 0U);
}

}  // namespace
}  // namespace layersec::mka
