// Key server election (802.1X-2020 §9.5), SAK generation and distribution
// (§9.8), the rekey triggers, and the XPN salt/SSCI helpers.
#include "layersec/mka/key_server.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "layersec/mka/fake_secy_test_support.h"
#include "layersec/mka/keys.h"

namespace layersec::mka {
namespace {

using testing::DeterministicRandom;

MemberId mi_of(std::uint8_t b) {
  MemberId m{};
  m.fill(b);
  return m;
}

TEST(MkaElection, LowestPriorityValueWins) {
  const std::vector<KeyServerCandidate> c = {{30, 0x5}, {10, 0x9}, {20, 0x1}};
  EXPECT_EQ(elect_key_server(c), 1u);
}

TEST(MkaElection, PriorityTieGoesToLowestSci) {
  const std::vector<KeyServerCandidate> c = {{10, 0x0200000000050001}, {10, 0x0200000000030001},
                                             {10, 0x0200000000040001}};
  EXPECT_EQ(elect_key_server(c), 1u);
  // The port breaks a tie between two SCIs of one MAC address.
  const std::vector<KeyServerCandidate> ports = {{7, 0x0200000000030002}, {7, 0x0200000000030001}};
  EXPECT_EQ(elect_key_server(ports), 1u);
}

TEST(MkaElection, Priority255NeverWins) {
  const std::vector<KeyServerCandidate> only_255 = {{255, 0x1}, {255, 0x2}};
  EXPECT_FALSE(elect_key_server(only_255).has_value());
  const std::vector<KeyServerCandidate> mixed = {{255, 0x1}, {254, 0x9}};
  EXPECT_EQ(elect_key_server(mixed), 1u);
  EXPECT_FALSE(elect_key_server(std::vector<KeyServerCandidate>{}).has_value());
}

TEST(MkaElection, RanksBeforeIsAStrictOrder) {
  const KeyServerCandidate a{10, 5}, b{10, 6}, c{11, 1};
  EXPECT_TRUE(ranks_before(a, b));
  EXPECT_FALSE(ranks_before(b, a));
  EXPECT_FALSE(ranks_before(a, a));
  EXPECT_TRUE(ranks_before(b, c));
}

struct Keys {
  SecretBytes cak;
  SecretBytes kek;
  std::vector<std::uint8_t> ckn = {1, 2, 3, 4};
  explicit Keys(std::size_t cak_len = 16) : cak(std::vector<std::uint8_t>(cak_len, 0x42)) {
    auto k = derive_kek(cak, ckn);
    EXPECT_TRUE(k.ok());
    kek = std::move(*k);
  }
};

TEST(MkaKeyServer, StandbyIgnoresRekeysAndCannotGenerate) {
  Keys k;
  KeyServer ks({});
  DeterministicRandom rng(1);
  ks.request_rekey(RekeyReason::kMemberJoined);
  EXPECT_FALSE(ks.pending().has_value());
  auto g = ks.generate(k.cak, k.kek, mi_of(1), {}, 0, rng, TimePoint{});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error(), KeyServerError::kNotElected);
}

TEST(MkaKeyServer, GeneratesTheSakOf9_8_1AndWrapsItWithTheKek) {
  Keys k;
  KeyServer ks({});
  ks.elect();
  ASSERT_EQ(ks.pending(), RekeyReason::kNewKeyServer);
  // The nonce is the first 16 octets the random source gives.
  std::vector<std::uint8_t> nonce(16);
  for (std::size_t i = 0; i < nonce.size(); ++i) nonce[i] = static_cast<std::uint8_t>(0xA0 + i);
  DeterministicRandom rng(1, nonce);
  const MemberId own = mi_of(0x11);
  const std::vector<MemberId> members = {mi_of(0x22), mi_of(0x33)};
  auto g = ks.generate(k.cak, k.kek, own, members, 2, rng, TimePoint::from_ns(5));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->ki.mi, own);
  EXPECT_EQ(g->ki.kn, 1u);
  EXPECT_EQ(g->an, 2);
  EXPECT_EQ(g->reason, RekeyReason::kNewKeyServer);
  EXPECT_EQ(ks.state(), KeyServerState::kDistributing);
  EXPECT_FALSE(ks.pending().has_value());

  std::vector<std::uint8_t> mi_list;
  for (const auto& m : {own, members[0], members[1]}) mi_list.insert(mi_list.end(), m.begin(), m.end());
  auto expected = derive_sak(k.cak, nonce, mi_list, 1, 16);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(fingerprint(g->sak), fingerprint(*expected));

  const DistributedSak& ds = g->parameter_set;
  EXPECT_TRUE(ds.has_key);
  EXPECT_EQ(ds.kn, 1u);
  EXPECT_EQ(ds.distributed_an, 2);
  EXPECT_EQ(ds.confidentiality_offset, static_cast<std::uint8_t>(ConfidentialityOffset::kOffset0));
  EXPECT_FALSE(ds.cipher_suite.has_value());  // GCM-AES-128: the 28-octet default form
  ASSERT_EQ(ds.wrapped_sak.size(), 24u);
  auto unwrapped = unwrap_key(k.kek, ds.wrapped_sak);
  ASSERT_TRUE(unwrapped.ok());
  EXPECT_EQ(fingerprint(*unwrapped), fingerprint(g->sak));
  ASSERT_NE(ks.distributing(), nullptr);
  EXPECT_EQ(*ks.distributing(), ds);
  ks.distribution_done();
  EXPECT_EQ(ks.state(), KeyServerState::kElected);
  EXPECT_EQ(ks.distributing(), nullptr);
}

TEST(MkaKeyServer, KnIncrementsAndEverySakIsFresh) {
  Keys k;
  KeyServer ks({});
  ks.elect();
  DeterministicRandom rng(7);
  std::vector<std::string> fps;
  for (std::uint32_t i = 1; i <= 5; ++i) {
    auto g = ks.generate(k.cak, k.kek, mi_of(1), {}, static_cast<std::uint8_t>(i % 4), rng, TimePoint{});
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->ki.kn, i);
    fps.push_back(fingerprint(g->sak));
    ks.distribution_done();
  }
  for (std::size_t i = 0; i < fps.size(); ++i) {
    for (std::size_t j = i + 1; j < fps.size(); ++j) EXPECT_NE(fps[i], fps[j]);
  }
  ks.reset_numbering();
  auto g = ks.generate(k.cak, k.kek, mi_of(2), {}, 0, rng, TimePoint{});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->ki.kn, 1u);
}

TEST(MkaKeyServer, Gcm256CarriesItsCipherSuiteAndA40OctetWrap) {
  Keys k(32);
  KeyServerConfig c;
  c.suite = CipherSuite::kGcmAes256;
  c.offset = ConfidentialityOffset::kOffset30;
  KeyServer ks(c);
  ks.elect();
  DeterministicRandom rng(3);
  auto g = ks.generate(k.cak, k.kek, mi_of(1), {}, 0, rng, TimePoint{});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->sak.size(), 32u);
  EXPECT_EQ(g->parameter_set.cipher_suite, macsec::cipher_suite_id(CipherSuite::kGcmAes256));
  EXPECT_EQ(g->parameter_set.wrapped_sak.size(), 40u);
  EXPECT_EQ(g->parameter_set.confidentiality_offset, 2);
}

TEST(MkaKeyServer, RandomFailureChangesNothing) {
  Keys k;
  KeyServer ks({});
  ks.elect();
  DeterministicRandom rng(3);
  rng.fail_next = true;
  auto g = ks.generate(k.cak, k.kek, mi_of(1), {}, 0, rng, TimePoint{});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error(), KeyServerError::kRandom);
  EXPECT_EQ(ks.last_kn(), 0u);
  EXPECT_EQ(ks.state(), KeyServerState::kElected);
  EXPECT_EQ(ks.pending(), RekeyReason::kNewKeyServer);
}

TEST(MkaKeyServer, FirstReasonIsKeptAndStandDownDropsIt) {
  KeyServer ks({});
  ks.elect();
  ks.request_rekey(RekeyReason::kMemberJoined);
  EXPECT_EQ(ks.pending(), RekeyReason::kNewKeyServer);
  ks.stand_down();
  EXPECT_FALSE(ks.pending().has_value());
  EXPECT_EQ(ks.state(), KeyServerState::kStandby);
  ks.elect();
  EXPECT_EQ(ks.pending(), RekeyReason::kNewKeyServer);
}

TEST(MkaKeyServer, TimerAndPnThreshold) {
  Keys k;
  KeyServerConfig c;
  c.rekey_interval = Duration::seconds(30);
  c.pn_threshold = 1000;
  KeyServer ks(c);
  ks.elect();
  DeterministicRandom rng(3);
  ASSERT_TRUE(ks.generate(k.cak, k.kek, mi_of(1), {}, 0, rng, TimePoint::from_ns(0)).ok());
  ks.distribution_done();
  EXPECT_EQ(ks.next_deadline(), TimePoint{} + Duration::seconds(30));
  ks.on_time(TimePoint{} + Duration::seconds(29));
  EXPECT_FALSE(ks.pending().has_value());
  ks.on_pn(999);
  EXPECT_FALSE(ks.pending().has_value());
  ks.on_time(TimePoint{} + Duration::seconds(30));
  EXPECT_EQ(ks.pending(), RekeyReason::kTimer);
  EXPECT_EQ(ks.next_deadline(), TimePoint::max());  // pending: no deadline until the next SAK

  KeyServer pn(c);
  pn.elect();
  ASSERT_TRUE(pn.generate(k.cak, k.kek, mi_of(1), {}, 0, rng, TimePoint{}).ok());
  pn.on_pn(1000);
  EXPECT_EQ(pn.pending(), RekeyReason::kPnThreshold);
}

TEST(MkaKeyServer, DefaultPnThresholdsAndOutOfRange) {
  EXPECT_EQ(KeyServer({}).pn_threshold(), 0xC0000000ULL);
  KeyServerConfig x;
  x.suite = CipherSuite::kGcmAesXpn128;
  EXPECT_EQ(KeyServer(x).pn_threshold(), 0xC000000000000000ULL);
  KeyServerConfig bad;
  bad.pn_threshold = 0x100000000ULL;  // beyond a 32-bit PN
  EXPECT_THROW(KeyServer{bad}, std::invalid_argument);
}

TEST(MkaKeyServer, AbandonPutsTheReasonBack) {
  Keys k;
  KeyServer ks({});
  ks.elect();
  DeterministicRandom rng(3);
  ASSERT_TRUE(ks.generate(k.cak, k.kek, mi_of(1), {}, 0, rng, TimePoint{}).ok());
  ks.abandon(RekeyReason::kNewKeyServer);
  EXPECT_EQ(ks.state(), KeyServerState::kElected);
  EXPECT_EQ(ks.pending(), RekeyReason::kNewKeyServer);
  EXPECT_EQ(ks.distributing(), nullptr);
}

TEST(MkaXpn, SaltIsTheKeyServerMiXoredWithTheKn) {
  KeyIdentifier ki;
  for (std::size_t i = 0; i < ki.mi.size(); ++i) ki.mi[i] = static_cast<std::uint8_t>(i + 1);
  ki.kn = 0x11223344;
  const Salt s = xpn_salt(ki);
  EXPECT_EQ(s[0], 0x01 ^ 0x33);
  EXPECT_EQ(s[1], 0x02 ^ 0x44);
  EXPECT_EQ(s[2], 0x03 ^ 0x11);
  EXPECT_EQ(s[3], 0x04 ^ 0x22);
  for (std::size_t i = 4; i < s.size(); ++i) EXPECT_EQ(s[i], ki.mi[i]);
  KeyIdentifier next = ki;
  next.kn = ki.kn + 1;
  EXPECT_NE(xpn_salt(next), s);
}

TEST(MkaXpn, SsciCountsFromTheGreatestSci) {
  const std::vector<std::uint64_t> scis = {0x30, 0x10, 0x20};
  EXPECT_EQ(ssci_of(0x30, scis), 1u);
  EXPECT_EQ(ssci_of(0x20, scis), 2u);
  EXPECT_EQ(ssci_of(0x10, scis), 3u);
  EXPECT_EQ(ssci_of(0x40, scis), 0u);
  const std::vector<std::uint64_t> dup = {0x30, 0x30, 0x10};
  EXPECT_EQ(ssci_of(0x10, dup), 2u);
}

}  // namespace
}  // namespace layersec::mka
