// SV key distribution centre: authentication, group-key distribution to a
// publisher and two subscribers, SV frames under the distributed keys,
// membership change, scheduled switchover, and every rejection path.
#include "layersec/sv/kdc.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"

namespace layersec::sv::kdc {
namespace {

// Wall-clock time of the tests (2027-01-15).
const TimePoint kT0 = TimePoint::from_ns(1'800'000'000LL * 1'000'000'000LL);

KeyMaterial clone(const KeyMaterial& k) {
  KeyMaterial c;
  c.key_id = k.key_id;
  c.key = k.key.clone();
  c.time_of_current_key = k.time_of_current_key;
  c.time_to_next_key_min = k.time_to_next_key_min;
  c.initial_counter = k.initial_counter;
  return c;
}

struct Node {
  std::unique_ptr<IedClient> client;
  std::vector<GroupKeyUpdate> updates;
};

class KdcTest : public ::testing::Test {
 protected:
  void SetUp() override { make(kex::KemScheme::kMlKem768); }

  void make(kex::KemScheme kem, Duration lead = Duration::milliseconds(20)) {
    nodes.clear();
    KdcConfig cfg;
    cfg.kem = kem;
    cfg.key_lifetime = Duration::seconds(1);
    cfg.key_change_lead = lead;
    auto k = Kdc::create(cfg);
    ASSERT_TRUE(k.ok());
    kdc = std::move(k).value();
    for (const char* id : {"MU01", "P101", "P102"}) {
      auto a = kdc->register_ied(id);
      ASSERT_TRUE(a.ok());
      auto c = IedClient::create(id, kem, std::move(a).value(),
                                 std::vector<std::uint8_t>(kdc->public_key().begin(), kdc->public_key().end()));
      ASSERT_TRUE(c.ok());
      nodes[id].client = std::move(c).value();
    }
    StreamGroupConfig g;
    g.appid = 0x4000;
    g.sv_id = "LAYERSEC01";
    g.security = *parse_scheme("chaskey12-selective");
    g.publisher = "MU01";
    g.subscribers = {"P101", "P102"};
    auto s = kdc->add_stream(g, kT0);
    ASSERT_TRUE(s.ok());
    stream = s.value();
  }

  // Runs the authentication exchange and delivers the initial keys.
  void authenticate(const std::string& id, TimePoint now) {
    Node& n = nodes[id];
    auto req = n.client->start(now);
    ASSERT_TRUE(req.ok());
    auto res = kdc->on_auth_request(*req, now);
    ASSERT_TRUE(res.ok()) << to_string(res.error());
    ASSERT_TRUE(n.client->on_auth_response(res->response, now).ok());
    deliver(res->distributions, now);
  }

  void deliver(const std::vector<Outgoing>& out, TimePoint now) {
    for (const auto& o : out) {
      auto u = nodes[o.recipient].client->on_key_distribution(o.message, now);
      ASSERT_TRUE(u.ok()) << o.recipient << ": " << to_string(u.error());
      nodes[o.recipient].updates.push_back(std::move(u).value());
    }
  }

  std::unique_ptr<Kdc> kdc;
  std::map<std::string, Node> nodes;
  std::size_t stream = 0;
};

StreamConfig stream_of(const GroupKeyUpdate& u) {
  StreamConfig c;
  c.appid = u.appid;
  c.sv_id = u.sv_id;
  c.security = u.security;
  return c;
}

SubscriptionConfig subscription_of(const GroupKeyUpdate& u) {
  SubscriptionConfig s;
  s.appid = u.appid;
  s.sv_id = u.sv_id;
  s.security = u.security;
  s.smp_cnt_wrap = 4000;
  s.timeout = Duration::seconds(60);
  return s;
}

std::vector<Sample> samples(std::int32_t k) {
  std::vector<Sample> v(8);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = Sample{k * 8 + static_cast<std::int32_t>(i), 0};
  return v;
}

TEST_F(KdcTest, EndToEndPublisherAndTwoSubscribersVerifyFrames) {
  for (const char* id : {"MU01", "P101", "P102"}) authenticate(id, kT0);
  ASSERT_EQ(nodes["MU01"].updates.size(), 1u);
  const auto& pu = nodes["MU01"].updates[0];
  EXPECT_EQ(pu.role, Role::kPublisher);
  EXPECT_EQ(pu.key.key_id, 1u);
  EXPECT_EQ(pu.appid, 0x4000);
  EXPECT_EQ(pu.sv_id, "LAYERSEC01");
  EXPECT_EQ(pu.security.scheme, Scheme::kChaskey12Selective);
  EXPECT_EQ(pu.key.time_of_current_key, 1'800'000'000u);
  EXPECT_EQ(nodes["P101"].updates[0].role, Role::kSubscriber);
  EXPECT_EQ(kdc->counters().sessions, 3u);

  const Profile p = *find_profile("4000/1");
  Publisher pub(stream_of(pu), p, kT0, clone(pu.key));
  Subscriber s1, s2;
  const auto i1 = s1.add_stream(subscription_of(nodes["P101"].updates[0]), clone(nodes["P101"].updates[0].key));
  const auto i2 = s2.add_stream(subscription_of(nodes["P102"].updates[0]), clone(nodes["P102"].updates[0].key));
  for (int k = 0; k < 200; ++k) {
    auto f = pub.build_next(samples(k));
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(s1.on_frame(*f, kT0).ok());
    ASSERT_TRUE(s2.on_frame(*f, kT0).ok());
  }
  EXPECT_EQ(s1.counters(i1).delivered, 200u);
  EXPECT_EQ(s2.counters(i2).delivered, 200u);
  EXPECT_EQ(s1.counters(i1).bad_tag, 0u);
}

TEST_F(KdcTest, RemovedSubscriberCannotUseTheNewKey) {
  for (const char* id : {"MU01", "P101", "P102"}) authenticate(id, kT0);
  const Profile p = *find_profile("4000/1");
  Publisher pub(stream_of(nodes["MU01"].updates[0]), p, kT0, clone(nodes["MU01"].updates[0].key));
  Subscriber s1, s2;
  const auto i1 = s1.add_stream(subscription_of(nodes["P101"].updates[0]), clone(nodes["P101"].updates[0].key));
  const auto i2 = s2.add_stream(subscription_of(nodes["P102"].updates[0]), clone(nodes["P102"].updates[0].key));

  const TimePoint t_remove = kT0 + Duration::milliseconds(10);
  auto out = kdc->remove_member(stream, "P102", t_remove);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 2u);
  for (const auto& o : *out) EXPECT_NE(o.recipient, "P102");  // the removed member gets nothing
  deliver(*out, t_remove);
  const auto& pub_new = nodes["MU01"].updates.back();
  ASSERT_EQ(pub_new.key.key_id, 2u);
  EXPECT_EQ(pub_new.valid_from, t_remove + Duration::milliseconds(20));
  pub.schedule_rekey(clone(pub_new.key), pub_new.valid_from);
  ASSERT_TRUE(s1.set_next_key(i1, clone(nodes["P101"].updates.back().key)).ok());

  // 400 frames = 100 ms: 30 ms under key 1, then key 2.
  std::uint64_t s2_after = 0, s2_rejected_after = 0;
  for (int k = 0; k < 400; ++k) {
    const TimePoint due = pub.next_deadline();
    auto f = pub.build_next(samples(k));
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(s1.on_frame(*f, due).ok()) << "frame " << k;
    auto d2 = s2.on_frame(*f, due);
    if (due >= pub_new.valid_from) {
      ++s2_after;
      if (!d2.ok()) ++s2_rejected_after;
    } else {
      EXPECT_TRUE(d2.ok()) << "frame " << k << " before the switch";
    }
  }
  EXPECT_EQ(s1.counters(i1).delivered, 400u);
  EXPECT_EQ(s1.counters(i1).key_changes, 1u);
  EXPECT_GT(s2_after, 250u);
  EXPECT_EQ(s2_rejected_after, s2_after);  // every frame under the new key refused
  EXPECT_EQ(s2.counters(i2).unknown_key, s2_after);
  EXPECT_EQ(s2.counters(i2).delivered, 400u - s2_after);
  // The removed member may still authenticate (it is registered) but gets no key for the stream.
  nodes["P102"].updates.clear();
  authenticate("P102", t_remove + Duration::milliseconds(5));
  EXPECT_TRUE(nodes["P102"].updates.empty());
}

TEST_F(KdcTest, ScheduledRekeySwitchesOverWithoutLosingFrames) {
  for (const char* id : {"MU01", "P101", "P102"}) authenticate(id, kT0);
  const Profile p = *find_profile("4000/1");
  Publisher pub(stream_of(nodes["MU01"].updates[0]), p, kT0, clone(nodes["MU01"].updates[0].key));
  Subscriber s1, s2;
  const auto i1 = s1.add_stream(subscription_of(nodes["P101"].updates[0]), clone(nodes["P101"].updates[0].key));
  const auto i2 = s2.add_stream(subscription_of(nodes["P102"].updates[0]), clone(nodes["P102"].updates[0].key));
  EXPECT_EQ(kdc->next_deadline(), kT0 + Duration::seconds(1) - Duration::milliseconds(20));

  // 1.2 s of frames; the KDC is polled every 10 ms of stream time.
  std::size_t rekeys = 0;
  TimePoint next_poll = kT0;
  for (int k = 0; k < 4800; ++k) {
    const TimePoint due = pub.next_deadline();
    if (due >= next_poll) {
      auto out = kdc->poll(due);
      if (!out.empty()) {
        ++rekeys;
        ASSERT_EQ(out.size(), 3u);
        deliver(out, due);
        const auto& u = nodes["MU01"].updates.back();
        EXPECT_EQ(u.valid_from, kT0 + Duration::seconds(1));  // exactly at the old key's change time
        pub.schedule_rekey(clone(u.key), u.valid_from);
        ASSERT_TRUE(s1.set_next_key(i1, clone(nodes["P101"].updates.back().key)).ok());
        ASSERT_TRUE(s2.set_next_key(i2, clone(nodes["P102"].updates.back().key)).ok());
      }
      next_poll = due + Duration::milliseconds(10);
    }
    auto f = pub.build_next(samples(k));
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(s1.on_frame(*f, due).ok()) << k;
    ASSERT_TRUE(s2.on_frame(*f, due).ok()) << k;
  }
  EXPECT_EQ(rekeys, 1u);
  EXPECT_EQ(kdc->current_key_id(stream), 2u);
  EXPECT_EQ(s1.counters(i1).delivered, 4800u);
  EXPECT_EQ(s2.counters(i2).delivered, 4800u);
  EXPECT_EQ(s1.counters(i1).key_changes, 1u);
  EXPECT_EQ(s2.counters(i2).gaps, 0u);
  EXPECT_EQ(pub.counters().rekeys, 1u);
}

TEST_F(KdcTest, TamperedDistributionIsRejected) {
  authenticate("MU01", kT0);
  authenticate("P101", kT0);
  auto out = kdc->rekey(stream, kT0);
  ASSERT_TRUE(out.ok());
  std::vector<std::uint8_t> msg;
  for (const auto& o : *out) {
    if (o.recipient == "P101") msg = o.message;
  }
  ASSERT_FALSE(msg.empty());
  auto parsed = parse_key_distribution(msg);
  ASSERT_TRUE(parsed.ok());
  // Flip one bit in: the key id (AAD), the valid-from time (AAD), the KEM
  // ciphertext, the wrapped key, the AEAD tag.
  const std::size_t key_id_off = 7 + 1 + 4 + 4 + 8 + 1 + 2 + 1 + 10;
  const std::size_t ct_off = static_cast<std::size_t>(parsed->kem_ciphertext.data() - msg.data());
  const std::size_t wrapped_off = parsed->aad_length;
  const std::size_t positions[] = {key_id_off + 3, key_id_off + 7 + 7, ct_off + 100, wrapped_off + 1,
                                   msg.size() - 1};
  for (std::size_t pos : positions) {
    auto bad = msg;
    bad[pos] ^= 0x01;
    auto r = nodes["P101"].client->on_key_distribution(bad, kT0);
    ASSERT_FALSE(r.ok()) << pos;
    EXPECT_EQ(r.error(), KdcError::kBadTag) << pos;
  }
  EXPECT_EQ(nodes["P101"].client->counters().rejected_by(KdcError::kBadTag), 5u);
  // The genuine message still opens afterwards: rejections changed no state.
  EXPECT_TRUE(nodes["P101"].client->on_key_distribution(msg, kT0).ok());
}

TEST_F(KdcTest, ReplayedAndStaleDistributionsAreRejected) {
  authenticate("MU01", kT0);
  authenticate("P101", kT0);
  auto first = kdc->rekey(stream, kT0);
  ASSERT_TRUE(first.ok());
  std::vector<std::uint8_t> old;
  for (const auto& o : *first) {
    if (o.recipient == "P101") old = o.message;
  }
  IedClient& c = *nodes["P101"].client;
  ASSERT_TRUE(c.on_key_distribution(old, kT0).ok());
  auto again = c.on_key_distribution(old, kT0);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), KdcError::kReplay);

  // A distribution whose key's change time has passed is stale.
  auto second = kdc->rekey(stream, kT0 + Duration::milliseconds(1));
  ASSERT_TRUE(second.ok());
  std::vector<std::uint8_t> late;
  for (const auto& o : *second) {
    if (o.recipient == "P101") late = o.message;
  }
  auto stale = c.on_key_distribution(late, kT0 + Duration::seconds(5));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error(), KdcError::kStale);
  EXPECT_EQ(c.counters().rejected_by(KdcError::kReplay), 1u);
  EXPECT_EQ(c.counters().rejected_by(KdcError::kStale), 1u);
}

TEST_F(KdcTest, WrongRecipientIsRejected) {
  authenticate("MU01", kT0);
  authenticate("P101", kT0);
  authenticate("P102", kT0);
  auto out = kdc->rekey(stream, kT0);
  ASSERT_TRUE(out.ok());
  std::vector<std::uint8_t> for_p1;
  for (const auto& o : *out) {
    if (o.recipient == "P101") for_p1 = o.message;
  }
  IedClient& p2 = *nodes["P102"].client;
  auto r = p2.on_key_distribution(for_p1, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kWrongRecipient);

  // Readdressed to P102 (same length): the session id is P101's.
  auto readdressed = for_p1;
  readdressed[7 + 1 + 3] = '2';  // "P101" -> "P102"
  r = p2.on_key_distribution(readdressed, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kWrongSession);
  // ... and with P102's session id too: the AEAD (bound to P101's KEM key,
  // session key and the original header) fails.
  const std::uint32_t sid = p2.session_id();
  readdressed[12] = static_cast<std::uint8_t>(sid >> 24);
  readdressed[13] = static_cast<std::uint8_t>(sid >> 16);
  readdressed[14] = static_cast<std::uint8_t>(sid >> 8);
  readdressed[15] = static_cast<std::uint8_t>(sid);
  r = p2.on_key_distribution(readdressed, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kBadTag);
}

TEST_F(KdcTest, AuthenticationRejectsForgedReplayedStaleAndUnknownRequests) {
  IedClient& c = *nodes["P101"].client;
  auto req = c.start(kT0);
  ASSERT_TRUE(req.ok());
  // Tampered ciphertext: ML-KEM implicit rejection gives another secret, the tag fails.
  auto bad = *req;
  bad[bad.size() - kTagSize - 10] ^= 0x40;
  auto r = kdc->on_auth_request(bad, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kBadTag);
  EXPECT_FALSE(kdc->has_session("P101"));
  // Stale timestamp.
  r = kdc->on_auth_request(*req, kT0 + Duration::seconds(31));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kStale);
  // Genuine, then replayed.
  r = kdc->on_auth_request(*req, kT0);
  ASSERT_TRUE(r.ok());
  auto replay = kdc->on_auth_request(*req, kT0 + Duration::milliseconds(1));
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error(), KdcError::kReplay);
  ASSERT_TRUE(c.on_auth_response(r->response, kT0).ok());
  // The response replayed to the IED: no outstanding request.
  auto again = c.on_auth_response(r->response, kT0);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), KdcError::kNoPendingRequest);

  // An IED provisioned with the wrong identity value cannot authenticate.
  SecretBytes wrong(32);
  wrong[0] = 1;
  auto impostor = IedClient::create("P102", kex::KemScheme::kMlKem768, std::move(wrong),
                                    std::vector<std::uint8_t>(kdc->public_key().begin(), kdc->public_key().end()));
  ASSERT_TRUE(impostor.ok());
  auto ireq = (*impostor)->start(kT0);
  ASSERT_TRUE(ireq.ok());
  r = kdc->on_auth_request(*ireq, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kBadTag);
  // Unknown identity, and a deregistered one.
  auto a = kdc->register_ied("XX01");
  ASSERT_TRUE(a.ok());
  auto x = IedClient::create("XX01", kex::KemScheme::kMlKem768, std::move(a).value(),
                             std::vector<std::uint8_t>(kdc->public_key().begin(), kdc->public_key().end()));
  ASSERT_TRUE(x.ok());
  kdc->deregister_ied("XX01");
  auto xreq = (*x)->start(kT0);
  ASSERT_TRUE(xreq.ok());
  r = kdc->on_auth_request(*xreq, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kUnknownIed);

  // A response confirmed under another session key: the tag fails.
  auto req2 = c.start(kT0 + Duration::milliseconds(2));
  ASSERT_TRUE(req2.ok());
  auto res2 = kdc->on_auth_request(*req2, kT0 + Duration::milliseconds(2));
  ASSERT_TRUE(res2.ok());
  auto forged = res2->response;
  forged[forged.size() - kTagSize - 1] ^= 1;  // N_K changed
  auto f = c.on_auth_response(forged, kT0);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error(), KdcError::kBadTag);
  EXPECT_TRUE(c.on_auth_response(res2->response, kT0).ok());

  const auto& k = kdc->counters();
  EXPECT_EQ(k.rejected_by(KdcError::kBadTag), 2u);
  EXPECT_EQ(k.rejected_by(KdcError::kStale), 1u);
  EXPECT_EQ(k.rejected_by(KdcError::kReplay), 1u);
  EXPECT_EQ(k.rejected_by(KdcError::kUnknownIed), 1u);
}

TEST_F(KdcTest, ReauthenticationRedeliversTheCurrentKey) {
  authenticate("P101", kT0);
  ASSERT_EQ(nodes["P101"].updates.size(), 1u);
  const std::uint32_t first_session = nodes["P101"].client->session_id();
  authenticate("P101", kT0 + Duration::milliseconds(3));
  ASSERT_EQ(nodes["P101"].updates.size(), 2u);
  EXPECT_NE(nodes["P101"].client->session_id(), first_session);
  EXPECT_EQ(nodes["P101"].updates[1].key.key_id, 1u);
  EXPECT_TRUE(crypto::ct_equal(nodes["P101"].updates[0].key.key.span(), nodes["P101"].updates[1].key.key.span()));
}

TEST_F(KdcTest, DistributionDuringTheLeadCarriesBothKeys) {
  authenticate("MU01", kT0);
  authenticate("P102", kT0);
  auto out = kdc->rekey(stream, kT0);  // key 2 valid from kT0 + 20 ms
  ASSERT_TRUE(out.ok());
  deliver(*out, kT0);
  ASSERT_EQ(nodes["P102"].updates.back().key.key_id, 2u);
  authenticate("P101", kT0 + Duration::milliseconds(5));
  ASSERT_EQ(nodes["P101"].updates.size(), 2u);
  EXPECT_EQ(nodes["P101"].updates[0].key.key_id, 1u);
  EXPECT_EQ(nodes["P101"].updates[1].key.key_id, 2u);
  EXPECT_EQ(nodes["P101"].updates[0].next_change, nodes["P101"].updates[1].valid_from);
  // P102 already holds key 2; re-authenticating in the lead re-delivers key 1
  // and key 2 in the new session, both accepted (deliver() asserts it).
  authenticate("P102", kT0 + Duration::milliseconds(6));
  ASSERT_EQ(nodes["P102"].updates.size(), 4u);
  EXPECT_EQ(nodes["P102"].updates[2].key.key_id, 1u);
  EXPECT_EQ(nodes["P102"].updates[3].key.key_id, 2u);
  // After the switch a re-authentication carries key 2 only.
  authenticate("P102", kT0 + Duration::milliseconds(30));
  ASSERT_EQ(nodes["P102"].updates.size(), 5u);
  EXPECT_EQ(nodes["P102"].updates[4].key.key_id, 2u);
}

// An IED as `sv publish|subscribe --kdc` drives one: the first
// authentication's keys start the stream (initial_keys), every later key for
// the stream with a higher id is scheduled (publisher, at its valid-from) or
// announced (subscriber).
struct Member {
  std::optional<Publisher> pub;
  Subscriber sub;
  std::size_t id = 0;
  std::uint32_t newest = 0;
  std::size_t seen = 0;  // updates already taken
};

void start_member(Member& m, std::vector<GroupKeyUpdate>& updates, TimePoint now, const Profile& p) {
  std::vector<GroupKeyUpdate> copy;
  for (const auto& u : updates) {
    GroupKeyUpdate c;
    c.role = u.role;
    c.appid = u.appid;
    c.sv_id = u.sv_id;
    c.security = u.security;
    c.key = clone(u.key);
    c.valid_from = u.valid_from;
    c.next_change = u.next_change;
    copy.push_back(std::move(c));
  }
  auto k = initial_keys(std::move(copy), now);
  ASSERT_TRUE(k.current.has_value());
  m.newest = k.current->key.key_id;
  if (k.current->role == Role::kPublisher) {
    m.pub.emplace(stream_of(*k.current), p, now, clone(k.current->key));
    if (k.next) {
      m.newest = k.next->key.key_id;
      m.pub->schedule_rekey(clone(k.next->key), k.next->valid_from);
    }
  } else {
    m.id = m.sub.add_stream(subscription_of(*k.current), clone(k.current->key));
    if (k.next) {
      m.newest = k.next->key.key_id;
      ASSERT_TRUE(m.sub.set_next_key(m.id, clone(k.next->key)).ok());
    }
  }
  m.seen = updates.size();
}

void take_new_keys(Member& m, const std::vector<GroupKeyUpdate>& updates) {
  for (; m.seen < updates.size(); ++m.seen) {
    const auto& u = updates[m.seen];
    if (u.key.key_id <= m.newest) continue;
    m.newest = u.key.key_id;
    if (m.pub) {
      m.pub->schedule_rekey(clone(u.key), u.valid_from);
    } else {
      ASSERT_TRUE(m.sub.set_next_key(m.id, clone(u.key)).ok());
    }
  }
}

// The sv_netns.sh KDC run that lost frames (key lifetime 1 s, lead 0.3 s,
// P102 removed at 2 s), with the publisher authenticating 130 ms after the
// removal, inside its lead window. Before the fix the KDC handed the
// publisher the removed member's key (key 3, "still in use until 2.3 s") and
// the new one; the publisher sent under key 3 until 2.3 s, which P101 (that
// had only key 4 announced, key 3's announcement replaced) refused as
// unknown_key, 680 frames, while P102, removed, accepted them. Now the
// publisher starts with key 4: P101 loses nothing, P102 accepts nothing.
TEST_F(KdcTest, PublisherAuthenticatingInTheLeadOfARemovalNeverServesTheRemovedMember) {
  make(kex::KemScheme::kMlKem768, Duration::milliseconds(300));
  const Profile p = *find_profile("4000/1");
  for (const char* id : {"P101", "P102"}) authenticate(id, kT0);
  Member p101, p102, mu01;
  start_member(p101, nodes["P101"].updates, kT0, p);
  start_member(p102, nodes["P102"].updates, kT0, p);
  // KDC polled every 10 ms up to the removal; scheduled rekeys at 0.7 s and
  // 1.7 s announce keys 2 and 3 to both subscribers.
  const TimePoint t_remove = kT0 + Duration::seconds(2);
  for (TimePoint t = kT0; t < t_remove; t = t + Duration::milliseconds(10)) deliver(kdc->poll(t), t);
  auto removed = kdc->remove_member(stream, "P102", t_remove);
  ASSERT_TRUE(removed.ok());
  deliver(*removed, t_remove);
  take_new_keys(p101, nodes["P101"].updates);
  take_new_keys(p102, nodes["P102"].updates);
  EXPECT_EQ(p101.newest, 4u);
  EXPECT_EQ(p102.newest, 3u);

  const TimePoint t_pub = t_remove + Duration::milliseconds(130);
  authenticate("MU01", t_pub);
  const auto& pub_updates = nodes["MU01"].updates;
  for (const auto& u : pub_updates) EXPECT_NE(u.key.key_id, 3u) << "the revoked key was handed to the publisher";
  start_member(mu01, nodes["MU01"].updates, t_pub, p);
  ASSERT_TRUE(mu01.pub.has_value());
  EXPECT_EQ(mu01.pub->signer()->key_id(), 4u);

  // 0.5 s of frames (2,000), the KDC still polled every 10 ms.
  TimePoint next_poll = t_pub;
  for (int k = 0; k < 2000; ++k) {
    const TimePoint due = mu01.pub->next_deadline();
    if (due >= next_poll) {
      deliver(kdc->poll(due), due);
      next_poll = due + Duration::milliseconds(10);
    }
    auto f = mu01.pub->build_next(samples(k));
    ASSERT_TRUE(f.ok());
    EXPECT_TRUE(p101.sub.on_frame(*f, due).ok()) << "P101 lost frame " << k;
    EXPECT_FALSE(p102.sub.on_frame(*f, due).ok()) << "removed P102 accepted frame " << k;
  }
  EXPECT_EQ(p101.sub.counters(p101.id).delivered, 2000u);
  EXPECT_EQ(p101.sub.counters(p101.id).unknown_key, 0u);
  EXPECT_EQ(p102.sub.counters(p102.id).delivered, 0u);
  EXPECT_EQ(p102.sub.counters(p102.id).unknown_key, 2000u);
  // A subscriber authenticating in the same window still gets the old key
  // too, for a publisher that was already running on it.
  nodes["P101"].updates.clear();
  authenticate("P101", t_pub);
  ASSERT_EQ(nodes["P101"].updates.size(), 2u);
  EXPECT_EQ(nodes["P101"].updates[0].key.key_id, 3u);
  EXPECT_EQ(nodes["P101"].updates[1].key.key_id, 4u);
}

// A running publisher and a second rekey inside a removal's lead window:
// the publisher keeps both scheduled keys (a single pending slot replaced
// key 2 by key 3 and kept the removed member's key 1 in use until key 3's
// later switch); the subscriber that stays keeps both announcements.
TEST_F(KdcTest, RekeyInsideARemovalsLeadKeepsEverySwitchTime) {
  make(kex::KemScheme::kMlKem768, Duration::milliseconds(300));
  const Profile p = *find_profile("4000/1");
  for (const char* id : {"MU01", "P101", "P102"}) authenticate(id, kT0);
  Member mu01, p101, p102;
  start_member(mu01, nodes["MU01"].updates, kT0, p);
  start_member(p101, nodes["P101"].updates, kT0, p);
  start_member(p102, nodes["P102"].updates, kT0, p);
  const TimePoint t_remove = kT0 + Duration::milliseconds(100);
  const TimePoint t_rekey = kT0 + Duration::milliseconds(250);
  const TimePoint key2_from = t_remove + Duration::milliseconds(300);
  std::uint64_t p102_after_switch = 0;
  for (int k = 0; k < 4000 * 7 / 10; ++k) {  // 0.7 s
    const TimePoint due = mu01.pub->next_deadline();
    if (k == 400) {  // t_remove
      auto out = kdc->remove_member(stream, "P102", t_remove);
      ASSERT_TRUE(out.ok());
      deliver(*out, t_remove);
    }
    if (k == 1000) {  // t_rekey, inside the removal's lead
      auto out = kdc->rekey(stream, t_rekey);
      ASSERT_TRUE(out.ok());
      deliver(*out, t_rekey);
    }
    for (auto* m : {&mu01, &p101, &p102}) {
      const char* id = m == &mu01 ? "MU01" : (m == &p101 ? "P101" : "P102");
      take_new_keys(*m, nodes[id].updates);
    }
    auto f = mu01.pub->build_next(samples(k));
    ASSERT_TRUE(f.ok());
    EXPECT_TRUE(p101.sub.on_frame(*f, due).ok()) << "P101 lost frame " << k;
    const bool p102_ok = p102.sub.on_frame(*f, due).ok();
    if (due >= key2_from) {
      EXPECT_FALSE(p102_ok) << "removed P102 accepted frame " << k << " after the switch";
      ++p102_after_switch;
    }
  }
  EXPECT_EQ(mu01.pub->counters().rekeys, 2u);  // key 2 at 0.4 s, key 3 at 0.55 s
  EXPECT_EQ(p101.sub.counters(p101.id).delivered, 2800u);
  EXPECT_EQ(p101.sub.counters(p101.id).key_changes, 2u);
  EXPECT_EQ(p102.sub.counters(p102.id).unknown_key, p102_after_switch);
  EXPECT_EQ(p102_after_switch, 1200u);
}

TEST(KdcCodec, StrictParsingAndRoundTrip) {
  KdcConfig cfg;
  auto kdc = Kdc::create(cfg);
  ASSERT_TRUE(kdc.ok());
  auto a = (*kdc)->register_ied("MU01");
  ASSERT_TRUE(a.ok());
  auto c = IedClient::create("MU01", cfg.kem, std::move(a).value(),
                             std::vector<std::uint8_t>((*kdc)->public_key().begin(), (*kdc)->public_key().end()));
  ASSERT_TRUE(c.ok());
  StreamGroupConfig g;
  g.security = *parse_scheme("hmac-sha256-128");
  g.publisher = "MU01";
  ASSERT_TRUE((*kdc)->add_stream(g, kT0).ok());
  auto req = (*c)->start(kT0);
  ASSERT_TRUE(req.ok());
  auto res = (*kdc)->on_auth_request(*req, kT0);
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(res->distributions.size(), 1u);
  const std::vector<std::uint8_t> msgs[] = {*req, res->response, res->distributions[0].message};
  const MessageType types[] = {MessageType::kAuthRequest, MessageType::kAuthResponse, MessageType::kKeyDistribution};
  for (int i = 0; i < 3; ++i) {
    const auto& m = msgs[i];
    auto t = peek_type(m);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, types[i]);
    auto round = [&](ByteSpan b) -> std::optional<std::vector<std::uint8_t>> {
      switch (types[i]) {
        case MessageType::kAuthRequest: {
          auto p = parse_auth_request(b);
          if (!p) return std::nullopt;
          return encode(*p);
        }
        case MessageType::kAuthResponse: {
          auto p = parse_auth_response(b);
          if (!p) return std::nullopt;
          return encode(*p);
        }
        case MessageType::kKeyDistribution: {
          auto p = parse_key_distribution(b);
          if (!p) return std::nullopt;
          return encode(*p);
        }
      }
      return std::nullopt;
    };
    auto again = round(m);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, m);
    // Every truncation and one trailing byte are malformed.
    for (std::size_t n = 0; n < m.size(); ++n) EXPECT_FALSE(round(ByteSpan(m.data(), n)).has_value()) << n;
    auto longer = m;
    longer.push_back(0);
    EXPECT_FALSE(round(longer).has_value());
  }
  // A request handed to the response parser is the wrong type.
  auto wrong = parse_auth_response(*req);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error(), KdcError::kWrongType);
  // The KDC counts a malformed request.
  auto r = (*kdc)->on_auth_request(ByteSpan(req->data(), 20), kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kMalformed);
  EXPECT_EQ((*kdc)->counters().rejected_by(KdcError::kMalformed), 1u);
}

class KdcParameterSets : public ::testing::TestWithParam<kex::KemScheme> {};

TEST_P(KdcParameterSets, KeysDistributeAndMismatchedSetsAreRefused) {
  KdcConfig cfg;
  cfg.kem = GetParam();
  auto kdc = Kdc::create(cfg);
  ASSERT_TRUE(kdc.ok());
  auto a = (*kdc)->register_ied("MU01");
  ASSERT_TRUE(a.ok());
  auto c = IedClient::create("MU01", cfg.kem, a->clone(),
                             std::vector<std::uint8_t>((*kdc)->public_key().begin(), (*kdc)->public_key().end()));
  ASSERT_TRUE(c.ok());
  StreamGroupConfig g;
  g.security = *parse_scheme("aes-gmac-128");
  g.publisher = "MU01";
  ASSERT_TRUE((*kdc)->add_stream(g, kT0).ok());
  auto req = (*c)->start(kT0);
  ASSERT_TRUE(req.ok());
  auto res = (*kdc)->on_auth_request(*req, kT0);
  ASSERT_TRUE(res.ok());
  ASSERT_TRUE((*c)->on_auth_response(res->response, kT0).ok());
  ASSERT_EQ(res->distributions.size(), 1u);
  auto u = (*c)->on_key_distribution(res->distributions[0].message, kT0);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->key.key.size(), 16u);
  EXPECT_EQ(u->security.scheme, Scheme::kAesGmac);

  // A request made for another parameter set is refused by this KDC.
  const auto other = GetParam() == kex::KemScheme::kMlKem768 ? kex::KemScheme::kMlKem1024 : kex::KemScheme::kMlKem768;
  KdcConfig ocfg;
  ocfg.kem = other;
  auto okdc = Kdc::create(ocfg);
  ASSERT_TRUE(okdc.ok());
  auto oc = IedClient::create("MU01", other, a->clone(),
                              std::vector<std::uint8_t>((*okdc)->public_key().begin(), (*okdc)->public_key().end()));
  ASSERT_TRUE(oc.ok());
  auto oreq = (*oc)->start(kT0);
  ASSERT_TRUE(oreq.ok());
  auto r = (*kdc)->on_auth_request(*oreq, kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KdcError::kWrongKem);
}

INSTANTIATE_TEST_SUITE_P(MlKem, KdcParameterSets,
                         ::testing::Values(kex::KemScheme::kMlKem512, kex::KemScheme::kMlKem768,
                                           kex::KemScheme::kMlKem1024));

TEST(KdcConfigTest, BadConfigurationsAreRefused) {
  KdcConfig cfg;
  cfg.kem = kex::KemScheme::kX25519;
  EXPECT_FALSE(Kdc::create(cfg).ok());
  cfg.kem = kex::KemScheme::kMlKem512;
  cfg.key_change_lead = Duration::seconds(10);
  cfg.key_lifetime = Duration::seconds(5);
  EXPECT_FALSE(Kdc::create(cfg).ok());
  cfg.key_lifetime = Duration::seconds(60);
  auto kdc = Kdc::create(cfg);
  ASSERT_TRUE(kdc.ok());
  StreamGroupConfig g;
  g.publisher = "MU01";
  auto s = (*kdc)->add_stream(g, kT0);  // scheme none
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), KdcError::kBadConfig);
  g.security = *parse_scheme("blake2s");
  s = (*kdc)->add_stream(g, kT0);  // publisher not registered
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), KdcError::kUnknownIed);
  EXPECT_FALSE((*kdc)->register_ied("").ok());
  EXPECT_FALSE((*kdc)->register_ied(std::string(65, 'x')).ok());
}

}  // namespace
}  // namespace layersec::sv::kdc
