// What a participant does with MKPDUs it must not believe: every bad input
// is dropped, counted by its DropReason, leaves no state behind, and the
// session with the honest peers goes on. Also: the real MKPDUs of a
// wpa_supplicant 2.10 pair replayed into our participant in the place of
// one of them.
#include "layersec/mka/participant.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "layersec/mka/mka_sim_test_support.h"
#include "support/vectors.h"

namespace layersec::mka {
namespace {

using testing::at_ms;
using testing::DeterministicRandom;
using testing::FakeSecY;
using testing::sci_of;
using testing::Sim;
using testing::test_cak;
using testing::test_ckn;

SecretBytes ick_for(const SecretBytes& cak, const std::vector<std::uint8_t>& ckn) {
  auto i = derive_ick(cak, ckn);
  EXPECT_TRUE(i.ok());
  return std::move(*i);
}
SecretBytes kek_for(const SecretBytes& cak, const std::vector<std::uint8_t>& ckn) {
  auto k = derive_kek(cak, ckn);
  EXPECT_TRUE(k.ok());
  return std::move(*k);
}

// An insider's forgery: `frame` decoded, edited, encoded with `ick`.
std::vector<std::uint8_t> forge(const std::vector<std::uint8_t>& frame, const std::function<void(Mkpdu&)>& edit,
                                const SecretBytes& ick) {
  auto d = decode_mkpdu(frame);
  if (!d) {
    ADD_FAILURE() << "template does not decode";
    return {};
  }
  Mkpdu m = d->mkpdu;
  edit(m);
  auto f = encode_mkpdu(m, ick);
  if (!f) {
    ADD_FAILURE() << "forgery does not encode: " << to_string(f.error());
    return {};
  }
  return std::move(*f);
}

struct Pair {
  Sim s;
  std::size_t z = 0;
  std::size_t a = 0;
  SecretBytes ick = ick_for(test_cak(), test_ckn());
  SecretBytes kek = kek_for(test_cak(), test_ckn());
  Pair() {
    z = s.add("zonal", sci_of(0x10), 1, [](ParticipantConfig& c) { c.rekey_interval = Duration::seconds(10); });
    a = s.add("ecu", sci_of(0x21), kNeverKeyServer);
    s.start(z);
    s.start(a);
    s.run_until(at_ms(15000));  // KN 2 by now
  }
  // Still one CA, one SAK, nothing lost.
  void expect_alive() {
    s.run_for(Duration::seconds(10));
    EXPECT_TRUE(s.is_live_peer(z, s.nodes[a].sci));
    EXPECT_TRUE(s.is_live_peer(a, s.nodes[z].sci));
    EXPECT_FALSE(s.tx_fingerprint(z).empty());
    EXPECT_EQ(s.tx_fingerprint(z), s.tx_fingerprint(a));
    EXPECT_EQ(s.total_lost(), 0u);
  }
  // Drops `frame` into `to` and checks the reason.
  void expect_drop(std::size_t to, const std::vector<std::uint8_t>& frame, DropReason r) {
    const std::uint64_t before = s.p(to).stats().drop(r);
    const Output out = s.inject(to, frame);
    ASSERT_TRUE(out.dropped.has_value()) << "accepted, expected " << to_string(r);
    EXPECT_EQ(*out.dropped, r) << to_string(*out.dropped);
    EXPECT_EQ(s.p(to).stats().drop(r), before + 1);
    EXPECT_TRUE(out.sa_actions.empty());
  }
};

TEST(MkaParticipantInput, EveryBadInputIsDroppedByReasonAndTheSessionLives) {
  Pair t;
  auto& s = t.s;
  const auto z = t.z;
  const auto a = t.a;
  ASSERT_GE(s.p(z).key_server().last_kn(), 2u);
  const std::string fp = s.tx_fingerprint(a);
  const std::vector<std::uint8_t> zf = s.last_sent(z);
  const std::vector<std::uint8_t> af = s.last_sent(a);
  const MemberId z_mi = s.p(z).mi();
  const KeyIdentifier in_use = s.p(a).sak().transmitting()->ki;
  const std::uint8_t tx_an = *s.secy(a).encoding;
  auto next_z = [&](const std::function<void(Mkpdu&)>& edit) {
    return forge(zf, [&](Mkpdu& m) {
      m.basic.actor_mn = s.p(z).mn() + 1;  // fresher than anything z sent
      edit(m);
    }, t.ick);
  };
  auto dist = [&](std::uint32_t kn, std::uint8_t an) {
    DistributedSak d;
    d.distributed_an = an;
    d.confidentiality_offset = 1;
    d.kn = kn;
    auto w = wrap_key(t.kek, SecretBytes(std::vector<std::uint8_t>(16, 0x77)));
    EXPECT_TRUE(w.ok());
    d.wrapped_sak = *w;
    return d;
  };
  const auto free_an = static_cast<std::uint8_t>((tx_an + 2) & 3);

  // Malformed: truncated, garbage, not EAPOL-MKA.
  std::vector<std::uint8_t> cut(zf.begin(), zf.end() - 3);
  t.expect_drop(a, cut, DropReason::kMalformed);
  t.expect_drop(a, std::vector<std::uint8_t>(64, 0xAB), DropReason::kMalformed);
  EXPECT_GE(s.p(a).stats().malformed[static_cast<std::size_t>(MkpduError::kBodyLengthMismatch)] +
                s.p(a).stats().malformed[static_cast<std::size_t>(MkpduError::kIndividualDestination)] +
                s.p(a).stats().malformed[static_cast<std::size_t>(MkpduError::kDestinationNotAllowed)],
            1u);
  // Another CA; the right CKN with the wrong CAK (ICV); one flipped bit.
  t.expect_drop(a, forge(zf, [](Mkpdu& m) { m.basic.ckn = {9, 9, 9}; }, t.ick), DropReason::kUnknownCkn);
  const SecretBytes wrong_ick = ick_for(test_cak(0x55), test_ckn());
  t.expect_drop(a, forge(zf, [&](Mkpdu& m) { m.basic.actor_mn = s.p(z).mn() + 1; }, wrong_ick),
                DropReason::kBadIcv);
  std::vector<std::uint8_t> flipped = zf;
  flipped[30] ^= 0x01;
  t.expect_drop(a, flipped, DropReason::kBadIcv);
  // Replays: the latest MKPDU again, an older one.
  t.expect_drop(a, zf, DropReason::kReplayedMn);
  std::vector<std::uint8_t> older;
  for (const auto& x : s.tap) {
    if (x.from == z) {
      older = x.frame;
      break;
    }
  }
  t.expect_drop(a, older, DropReason::kStaleMn);
  // Reflections: our own MKPDU; our SCI under another MI (a previous run of ours).
  t.expect_drop(a, af, DropReason::kOwnMi);
  t.expect_drop(a, forge(af, [](Mkpdu& m) { m.basic.actor_mi[0] ^= 0xFF; }, t.ick), DropReason::kOwnSci);
  // The key server's MI from another SCI.
  t.expect_drop(a, next_z([](Mkpdu& m) { m.basic.sci = sci_of(0x77); }), DropReason::kPeerSciChanged);

  // A member with a worse priority claiming to be key server and distributing a SAK.
  auto rogue = forge(zf, [&](Mkpdu& m) {
    m.basic.sci = sci_of(0x66);
    m.basic.actor_mi.fill(0x66);
    m.basic.actor_mn = 1;
    m.basic.key_server_priority = 200;
    m.basic.key_server = true;
    m.live_peers = PeerList{0, {PeerEntry{s.p(a).mi(), s.p(a).mn()}, PeerEntry{z_mi, s.p(z).mn()}}};
    m.potential_peers.reset();
    m.distributed_sak = dist(in_use.kn + 5, free_an);
  }, t.ick);
  t.expect_drop(a, rogue, DropReason::kNotKeyServer);
  auto rogue_for_z = forge(rogue, [&](Mkpdu& m) {
    m.live_peers = PeerList{0, {PeerEntry{z_mi, s.p(z).mn()}}};
  }, t.ick);
  t.expect_drop(z, rogue_for_z, DropReason::kNotKeyServer);  // z is the key server itself
  for (const auto& pi : s.p(a).peers()) EXPECT_NE(pi.sci, sci_of(0x66));

  // Distributed SAKs "from z" that must not be believed.
  t.expect_drop(a, next_z([&](Mkpdu& m) {
    m.distributed_sak = dist(in_use.kn + 1, free_an);
    m.distributed_sak->wrapped_sak[5] ^= 0x40;
  }), DropReason::kUnwrapFailed);
  s.run_for(Duration::seconds(3));  // z's own next MKPDU reuses that MN: dropped as a replay, then fine
  t.expect_drop(a, next_z([&](Mkpdu& m) { m.distributed_sak = dist(0, free_an); }), DropReason::kUnknownKeyNumber);
  t.expect_drop(a, next_z([&](Mkpdu& m) { m.distributed_sak = dist(1, free_an); }), DropReason::kStaleKeyNumber);
  t.expect_drop(a, next_z([&](Mkpdu& m) {
    m.distributed_sak = dist(s.p(a).sak().transmitting()->ki.kn + 1, *s.secy(a).encoding);
  }), DropReason::kAnInUse);
  t.expect_drop(a, next_z([&](Mkpdu& m) {
    DistributedSak d = dist(in_use.kn + 9, free_an);
    d.cipher_suite = macsec::cipher_suite_id(CipherSuite::kGcmAes256);
    auto w = wrap_key(t.kek, SecretBytes(std::vector<std::uint8_t>(32, 0x77)));
    EXPECT_TRUE(w.ok());
    d.wrapped_sak = *w;
    m.distributed_sak = d;
  }), DropReason::kCipherSuiteMismatch);
  t.expect_drop(a, next_z([&](Mkpdu& m) {
    DistributedSak d;
    d.has_key = false;
    m.distributed_sak = d;
  }), DropReason::kMacsecNotAdvised);

  // A SAK Use naming a KN the key server never issued, and KN 0.
  auto next_a = [&](const std::function<void(Mkpdu&)>& edit) {
    return forge(s.last_sent(a), [&](Mkpdu& m) {
      m.basic.actor_mn = s.p(a).mn() + 1;
      edit(m);
    }, t.ick);
  };
  t.expect_drop(z, next_a([&](Mkpdu& m) {
    m.sak_use->latest_rx = true;
    m.sak_use->latest.key_server_mi = z_mi;
    m.sak_use->latest.kn = s.p(z).key_server().last_kn() + 7;
  }), DropReason::kUnknownKeyNumber);
  t.expect_drop(z, next_a([&](Mkpdu& m) {
    m.sak_use->latest_rx = true;
    m.sak_use->latest.kn = 0;
  }), DropReason::kUnknownKeyNumber);

  EXPECT_EQ(s.tx_fingerprint(a), fp);  // no bad input moved the SAK
  t.expect_alive();
  EXPECT_EQ(s.p(a).stats().mi_changes, 0u);
}

TEST(MkaParticipantInput, MiConflictMakesUsChooseANewMi) {
  Pair t;
  auto& s = t.s;
  const MemberId old = s.p(t.a).mi();
  // Another SCI sends with a's MI.
  auto clash = forge(s.last_sent(t.z), [&](Mkpdu& m) {
    m.basic.sci = sci_of(0x44);
    m.basic.actor_mi = old;
    m.basic.actor_mn = 1;
  }, t.ick);
  t.expect_drop(t.a, clash, DropReason::kMiConflict);
  EXPECT_NE(s.p(t.a).mi(), old);
  EXPECT_EQ(s.count_events(t.a, EventType::kMiChanged), 1u);
  t.expect_alive();
}

TEST(MkaParticipantInput, TwoMembersDrawingTheSameMiRecover) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  // b's random source starts with a's MI.
  const MemberId clash = s.p(a).mi();
  s.nodes.push_back(Sim::Node{});
  const auto b = s.nodes.size() - 1;
  auto& n = s.nodes[b];
  n.name = "b";
  n.sci = sci_of(2);
  n.config.sci = n.sci;
  n.config.ckn = test_ckn();
  n.config.key_server_priority = 20;
  n.secy = std::make_unique<FakeSecY>(n.sci, &s.sequence);
  n.rng = std::make_unique<DeterministicRandom>(99, std::vector<std::uint8_t>(clash.begin(), clash.end()));
  n.p = std::make_unique<Participant>(n.config, test_cak(), *n.secy, *n.rng);
  ASSERT_EQ(s.p(b).mi(), clash);
  s.start(a);
  s.start(b);
  s.run_until(at_ms(5000));
  EXPECT_GE(s.p(a).stats().drop(DropReason::kMiConflict) + s.p(b).stats().drop(DropReason::kMiConflict), 1u);
  EXPECT_NE(s.p(a).mi(), s.p(b).mi());
  EXPECT_EQ(s.tx_fingerprint(a), s.tx_fingerprint(b));
  EXPECT_FALSE(s.tx_fingerprint(a).empty());
}

TEST(MkaParticipantInput, PeerTableIsBoundedAndPotentialPeersExpire) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10, [](ParticipantConfig& c) { c.max_peers = 2; });
  s.start(a);
  s.run_until(at_ms(100));
  const SecretBytes ick = ick_for(test_cak(), test_ckn());
  auto member = [&](std::uint8_t id) {
    return forge(s.last_sent(a), [&](Mkpdu& m) {
      m.basic.sci = sci_of(id);
      m.basic.actor_mi.fill(id);
      m.basic.actor_mn = 1;
      m.live_peers.reset();
      m.potential_peers.reset();
    }, ick);
  };
  EXPECT_FALSE(s.inject(a, member(7)).dropped.has_value());
  EXPECT_FALSE(s.inject(a, member(8)).dropped.has_value());
  const Output full = s.inject(a, member(9));
  ASSERT_TRUE(full.dropped.has_value());
  EXPECT_EQ(*full.dropped, DropReason::kPeerTableFull);
  EXPECT_EQ(s.p(a).peers().size(), 2u);
  s.run_until(at_ms(7000));  // potential peers that never list us go after the life time
  EXPECT_EQ(s.p(a).peers().size(), 0u);
  EXPECT_EQ(s.p(a).stats().potential_peers_expired, 2u);
  EXPECT_FALSE(s.inject(a, member(9)).dropped.has_value());
}

TEST(MkaParticipantInput, NothingIsAcceptedBeforeStart) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  const auto b = s.add("b", sci_of(2), 20);
  s.start(b);
  const Output out = s.inject(a, s.last_sent(b));
  ASSERT_TRUE(out.dropped.has_value());
  EXPECT_EQ(*out.dropped, DropReason::kNotStarted);
  EXPECT_TRUE(out.frames.empty());
  EXPECT_EQ(s.p(a).next_deadline(), TimePoint::max());
}

TEST(MkaParticipantInput, CipherSuiteMismatchNeverInstalls) {
  Sim s;
  const auto a = s.add("a", sci_of(1), 10);
  const auto b = s.add("b", sci_of(2), 20, [](ParticipantConfig& c) { c.cipher_suite = CipherSuite::kGcmAes256; });
  s.start(a);
  s.start(b);
  s.run_until(at_ms(10000));
  EXPECT_GE(s.p(b).stats().drop(DropReason::kCipherSuiteMismatch), 1u);
  // Its MKPDUs carry a SAK we cannot use, so they are dropped whole and it
  // never stays live: nothing is ever installed.
  EXPECT_TRUE(s.secy(b).rx.empty());
  EXPECT_TRUE(s.secy(b).tx.empty());
  for (const auto& c : s.secy(b).calls) EXPECT_EQ(c.type, SaActionType::kRemoveRxSc);
}

// ---- wpa_supplicant 2.10 (../shared/vectors/mka/mka_vectors.json): peer A
// (priority 10, key server) and peer B (priority 20). Our participant takes
// B's place (B's SCI, MI from the random source, priority, CAK/CKN) and is fed
// A's real MKPDUs in order; what it sends is compared with what B sent.
TEST(MkaParticipantInput, AcceptsARealWpaSupplicantKeyServer) {
  const auto vectors = layersec::testing::load_vector_json("mka/mka_vectors.json").at("vectors");
  nlohmann::json v;
  for (const auto& x : vectors) {
    if (x.at("id") == "interop-wpa_supplicant-2.10-PSK-MKA") v = x;
  }
  ASSERT_FALSE(v.is_null());
  const auto hex = [](const nlohmann::json& j) { return layersec::testing::hex(j.get<std::string>()); };
  std::vector<std::vector<std::uint8_t>> f;
  for (const auto& m : v.at("mkpdus")) f.push_back(hex(m.at("mkpdu_hex")));
  ASSERT_EQ(f.size(), 8u);
  auto decoded = [&](std::size_t i) {
    auto d = decode_mkpdu(f[i]);
    EXPECT_TRUE(d.ok());
    return d->mkpdu;
  };
  const Mkpdu a1 = decoded(0);
  const Mkpdu b2 = decoded(1);
  const Mkpdu b4 = decoded(3);
  const Mkpdu b5 = decoded(4);
  const Mkpdu b7 = decoded(6);

  ParticipantConfig c;
  c.sci = b2.basic.sci;
  c.ckn = b2.basic.ckn;
  c.key_server_priority = b2.basic.key_server_priority;
  c.mka_version = 1;
  c.macsec_capability = b2.basic.macsec_capability;
  std::uint64_t seq = 0;
  FakeSecY secy(c.sci, &seq);
  DeterministicRandom rng(1, std::vector<std::uint8_t>(b2.basic.actor_mi.begin(), b2.basic.actor_mi.end()));
  Participant p(c, SecretBytes(hex(v.at("inputs").at("cak"))), secy, rng);
  ASSERT_EQ(p.mi(), b2.basic.actor_mi);

  TimePoint now = at_ms(0);
  Output out = p.start(now);
  ASSERT_EQ(out.frames.size(), 1u);  // our MN 1 (wpa's B listed nobody yet in its MN 1; ours was sent first)

  // A's hello: A becomes potential; our next MKPDU lists it like B's frame 2.
  out = p.on_mkpdu(f[0], now += Duration::milliseconds(100));
  ASSERT_FALSE(out.dropped.has_value());
  ASSERT_EQ(out.frames.size(), 1u);
  auto ours = decode_mkpdu(out.frames[0]);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->mkpdu.basic.key_server, b2.basic.key_server);
  EXPECT_EQ(ours->mkpdu.basic.key_server_priority, b2.basic.key_server_priority);
  EXPECT_EQ(ours->mkpdu.basic.sci, b2.basic.sci);
  EXPECT_EQ(ours->mkpdu.potential_peers, b2.potential_peers);
  EXPECT_FALSE(ours->mkpdu.live_peers.has_value());
  EXPECT_EQ(p.peers().size(), 1u);
  EXPECT_EQ(p.peers()[0].mi, a1.basic.actor_mi);

  // A's frame 3 lists our MI with MN 1 and distributes KN 1: A is live, key
  // server, and its SAK is the one both wpa_supplicants installed.
  out = p.on_mkpdu(f[2], now += Duration::milliseconds(100));
  ASSERT_FALSE(out.dropped.has_value()) << to_string(*out.dropped);
  EXPECT_EQ(p.key_server_sci(), a1.basic.sci);
  const std::string installed_fp = fingerprint(hex(v.at("mkpdus")[2].at("distributed_sak").at("unwrapped_sak")));
  ASSERT_NE(secy.rx_sa(a1.basic.sci, 0), nullptr);
  EXPECT_EQ(secy.rx_sa(a1.basic.sci, 0)->fingerprint, installed_fp);
  EXPECT_EQ(secy.tx.at(0).fingerprint, installed_fp);
  EXPECT_FALSE(secy.encoding.has_value());  // receive first; transmit when the key server does
  ASSERT_EQ(out.frames.size(), 1u);
  ours = decode_mkpdu(out.frames[0]);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->mkpdu.basic.key_server, b4.basic.key_server);
  EXPECT_EQ(ours->mkpdu.live_peers, b4.live_peers);
  EXPECT_EQ(ours->mkpdu.sak_use, b4.sak_use);  // latest KN 1 rx, not tx; lowest PNs 1 as wpa's

  // Frame 6: A transmits with KN 1 (SAK Use latest tx): so do we (B's frame 5).
  out = p.on_mkpdu(f[5], now += Duration::milliseconds(100));
  ASSERT_FALSE(out.dropped.has_value());
  EXPECT_EQ(secy.encoding, std::optional<std::uint8_t>(0));
  ASSERT_EQ(out.frames.size(), 1u);
  ours = decode_mkpdu(out.frames[0]);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->mkpdu.sak_use->latest_tx, b5.sak_use->latest_tx);
  EXPECT_EQ(ours->mkpdu.sak_use->latest_rx, b5.sak_use->latest_rx);
  EXPECT_EQ(ours->mkpdu.sak_use->latest, b5.sak_use->latest);

  // Frame 8: A reports KN 1 in its old-key slot (it retired): we retire too
  // and report as B's frame 7 did.
  out = p.on_mkpdu(f[7], now += Duration::milliseconds(100));
  ASSERT_FALSE(out.dropped.has_value());
  out = p.on_timer(now += Duration::milliseconds(300));
  const Mkpdu after = p.preview_mkpdu();
  EXPECT_EQ(after.sak_use, b7.sak_use);
  EXPECT_EQ(after.live_peers->peers[0].mi, a1.basic.actor_mi);

  // A's frames again: replays.
  EXPECT_EQ(p.on_mkpdu(f[7], now).dropped, DropReason::kReplayedMn);
  EXPECT_EQ(p.on_mkpdu(f[2], now).dropped, DropReason::kStaleMn);
  // B's own frames come back to us as our own MI and SCI.
  EXPECT_EQ(p.on_mkpdu(f[1], now).dropped, DropReason::kOwnMi);
  std::uint64_t drops = 0;
  for (auto d : p.stats().drops) drops += d;
  EXPECT_EQ(drops, 3u);
  EXPECT_TRUE(secy.violations.empty());
}

}  // namespace
}  // namespace layersec::mka
