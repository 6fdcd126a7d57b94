#include "layersec/kex/group_keys.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layersec/crypto/kdf.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"

namespace layersec::kex {
namespace {

const TimePoint kT0 = TimePoint::from_ns(1'780'000'000LL * 1'000'000'000LL);
constexpr std::uint16_t kService = 0x1234;
constexpr std::uint16_t kGroup = 0x0002;

GroupKeyConfig config() {
  GroupKeyConfig c;
  c.service_id = kService;
  c.eventgroup_id = kGroup;
  return c;
}

SecretBytes pairwise(std::uint8_t seed) { return SecretBytes(std::vector<std::uint8_t>(32, seed)); }

std::unique_ptr<GroupKeyManager> manager(const GroupKeyConfig& c = config()) {
  auto m = GroupKeyManager::create(c, kT0);
  EXPECT_TRUE(m.ok());
  return std::move(m).value();
}

const std::vector<std::uint8_t> kPdu = {0x12, 0x34, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef};

std::vector<std::uint8_t> tag_of(GroupKeyRing& ring) {
  std::vector<std::uint8_t> tag(ring.tag_size());
  const ByteSpan parts[] = {ByteSpan(kPdu)};
  EXPECT_TRUE(ring.compute(parts, tag).ok());
  return tag;
}
Status<GroupKeyError> check(GroupKeyRing& ring, std::uint32_t key_id, const std::vector<std::uint8_t>& tag,
                            TimePoint now) {
  const ByteSpan parts[] = {ByteSpan(kPdu)};
  return ring.verify(key_id, parts, tag, now);
}
GroupKeyError err(const Status<GroupKeyError>& s) {
  EXPECT_FALSE(s.ok());
  return s.ok() ? GroupKeyError::kBackend : s.error();
}
template <class T>
GroupKeyError err(const Result<T, GroupKeyError>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? GroupKeyError::kBackend : r.error();
}

// A group with members a, b, c that all installed the current key.
struct Group {
  std::unique_ptr<GroupKeyManager> server = manager();
  std::map<std::string, std::unique_ptr<GroupMember>> members;
  void add(const std::string& id, std::uint8_t seed, TimePoint now) {
    auto e = server->join(id, pairwise(seed), now);
    ASSERT_TRUE(e.ok());
    members[id] = std::make_unique<GroupMember>(config(), id, pairwise(seed));
    distribute(now);
  }
  void distribute(TimePoint now) {
    auto msgs = server->distribute();
    ASSERT_TRUE(msgs.ok());
    for (const auto& d : *msgs) {
      auto e = members.at(d.member_id)->on_distribution(d.message, now);
      ASSERT_TRUE(e.ok()) << to_string(e.error());
      EXPECT_EQ(e->key_id, server->current_key_id());
      EXPECT_TRUE(e->reset_freshness);
    }
  }
};

TEST(GroupKeysTest, JoinRekeysAndEveryMemberSharesTheKey) {
  Group g;
  EXPECT_EQ(g.server->current_key_id(), 1u);
  g.add("a", 1, kT0);
  g.add("b", 2, kT0);
  g.add("c", 3, kT0);
  EXPECT_EQ(g.server->current_key_id(), 4u);  // one new epoch per join
  EXPECT_EQ(g.server->member_count(), 3u);
  auto msgs = g.server->distribute();
  ASSERT_TRUE(msgs.ok());
  EXPECT_EQ(msgs->size(), 3u);  // N members, N wraps
  // Any member's tag verifies at every other member and at the server.
  const auto tag = tag_of(g.members["a"]->ring());
  EXPECT_TRUE(check(g.members["b"]->ring(), 4, tag, kT0).ok());
  EXPECT_TRUE(check(g.members["c"]->ring(), 4, tag, kT0).ok());
  EXPECT_TRUE(check(g.server->ring(), 4, tag, kT0).ok());
  // Group caveat, demonstrated: member c can forge "the publisher's" PDU.
  const auto forged = tag_of(g.members["c"]->ring());
  EXPECT_EQ(forged, tag_of(g.server->ring()));
}

TEST(GroupKeysTest, MemberThatLeftCannotAuthenticate) {
  Group g;
  g.add("a", 1, kT0);
  g.add("b", 2, kT0);
  g.add("c", 3, kT0);
  const TimePoint t1 = kT0 + Duration::seconds(10);
  auto e = g.server->leave("c", t1);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->reason, RekeyEvent::Reason::kLeave);
  EXPECT_EQ(e->key_id, 5u);
  EXPECT_EQ(e->previous_expires, t1);  // no overlap on leave
  auto msgs = g.server->distribute();
  ASSERT_TRUE(msgs.ok());
  ASSERT_EQ(msgs->size(), 2u);
  EXPECT_EQ(err(g.server->distribution_for("c")), GroupKeyError::kNotMember);
  // c intercepts a's message: useless without a's pairwise key.
  const auto& for_a = (*msgs)[0].member_id == "a" ? (*msgs)[0].message : (*msgs)[1].message;
  EXPECT_EQ(err(g.members["c"]->on_distribution(for_a, t1)), GroupKeyError::kUnwrapFailed);
  g.distribute(t1);
  // c still has key 4 only. Its tags are refused at once, whatever key id it claims.
  const auto old_tag = tag_of(g.members["c"]->ring());
  EXPECT_EQ(err(check(g.members["a"]->ring(), 4, old_tag, t1)), GroupKeyError::kUnknownKeyId);
  EXPECT_EQ(err(check(g.members["a"]->ring(), 5, old_tag, t1)), GroupKeyError::kBadTag);
  EXPECT_EQ(err(check(g.server->ring(), 4, old_tag, t1)), GroupKeyError::kUnknownKeyId);
  // The remaining members carry on with key 5.
  const auto tag = tag_of(g.members["b"]->ring());
  EXPECT_TRUE(check(g.members["a"]->ring(), 5, tag, t1).ok());
  EXPECT_TRUE(check(g.server->ring(), 5, tag, t1).ok());
}

TEST(GroupKeysTest, OverlapWindowForThePreviousKey) {
  Group g;
  g.add("a", 1, kT0);
  g.add("b", 2, kT0);
  // b tags a PDU with key 3 just before d joins.
  const auto in_flight = tag_of(g.members["b"]->ring());
  const TimePoint t1 = kT0 + Duration::seconds(100);
  g.add("d", 4, t1);  // key 4, overlap 2 s for key 3
  EXPECT_EQ(g.members["a"]->ring().previous_key_id(), 3u);
  EXPECT_TRUE(check(g.members["a"]->ring(), 3, in_flight, t1 + Duration::milliseconds(1999)).ok());
  EXPECT_TRUE(check(g.server->ring(), 3, in_flight, t1 + Duration::seconds(2)).ok());
  EXPECT_EQ(err(check(g.members["a"]->ring(), 3, in_flight, t1 + Duration::milliseconds(2001))),
            GroupKeyError::kKeyExpired);
  // Once expired it is gone for good.
  EXPECT_EQ(err(check(g.members["a"]->ring(), 3, in_flight, t1)), GroupKeyError::kUnknownKeyId);
  // The joiner never had key 3 (backward secrecy).
  EXPECT_EQ(err(check(g.members["d"]->ring(), 3, in_flight, t1)), GroupKeyError::kUnknownKeyId);
}

TEST(GroupKeysTest, OverlapOnLeaveOnlyWhenConfigured) {
  GroupKeyConfig c = config();
  c.overlap_on_leave = true;
  auto m = manager(c);
  ASSERT_TRUE(m->join("a", pairwise(1), kT0).ok());
  ASSERT_TRUE(m->join("b", pairwise(2), kT0).ok());
  auto e = m->leave("b", kT0);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->previous_expires, kT0 + c.overlap);
  EXPECT_EQ(m->ring().previous_key_id(), 3u);
}

TEST(GroupKeysTest, ManualRekeyAndEpochs) {
  auto m = manager();
  std::uint32_t last = m->current_key_id();
  for (int i = 0; i < 5; ++i) {
    auto e = m->rekey(kT0 + Duration::seconds(i));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->key_id, last + 1);
    EXPECT_TRUE(e->reset_freshness);
    last = e->key_id;
  }
}

TEST(GroupKeysTest, DistributionMessagesAreProtected) {
  Group g;
  g.add("a", 1, kT0);
  g.add("b", 2, kT0);
  ASSERT_TRUE(g.server->rekey(kT0 + Duration::seconds(1)).ok());
  auto msg = g.server->distribution_for("a");
  ASSERT_TRUE(msg.ok());
  GroupMember& a = *g.members["a"];
  // Every single-bit change is rejected and changes nothing.
  for (std::size_t i = 0; i < msg->size(); ++i) {
    auto t = *msg;
    t[i] ^= 0x01;
    auto r = a.on_distribution(t, kT0);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    ASSERT_EQ(a.ring().current_key_id(), 3u);
  }
  // Specific reasons.
  auto group = *msg;
  group[5] ^= 1;
  EXPECT_EQ(err(a.on_distribution(group, kT0)), GroupKeyError::kWrongGroup);
  auto overlap = *msg;
  overlap[13] ^= 1;  // overlap field is bound into the KEK
  EXPECT_EQ(err(a.on_distribution(overlap, kT0)), GroupKeyError::kUnwrapFailed);
  auto for_b = g.server->distribution_for("b");
  ASSERT_TRUE(for_b.ok());
  EXPECT_EQ(err(a.on_distribution(*for_b, kT0)), GroupKeyError::kUnwrapFailed);
  auto trailing = *msg;
  trailing.push_back(0);
  EXPECT_EQ(err(a.on_distribution(trailing, kT0)), GroupKeyError::kMalformed);
  // Genuine message works once; its replay is refused.
  ASSERT_TRUE(a.on_distribution(*msg, kT0).ok());
  EXPECT_EQ(a.ring().current_key_id(), 4u);
  EXPECT_EQ(err(a.on_distribution(*msg, kT0)), GroupKeyError::kReplay);
}

TEST(GroupKeysTest, MembershipErrors) {
  auto m = manager();
  ASSERT_TRUE(m->join("a", pairwise(1), kT0).ok());
  EXPECT_EQ(err(m->join("a", pairwise(1), kT0)), GroupKeyError::kAlreadyMember);
  EXPECT_EQ(err(m->join("", pairwise(1), kT0)), GroupKeyError::kBadArgument);
  EXPECT_EQ(err(m->join("x", SecretBytes(std::vector<std::uint8_t>(5, 1)), kT0)), GroupKeyError::kBadArgument);
  EXPECT_EQ(err(m->leave("nobody", kT0)), GroupKeyError::kNotMember);
  ASSERT_TRUE(m->join("modeb-only", SecretBytes(), kT0).ok());
  EXPECT_EQ(err(m->distribution_for("modeb-only")), GroupKeyError::kNoPairwiseKey);
  auto all = m->distribute();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);  // only "a" gets a wrapped message
  GroupKeyConfig bad = config();
  bad.key_size = 20;
  EXPECT_EQ(err(GroupKeyManager::create(bad, kT0)), GroupKeyError::kBadArgument);
}

// N members served through the Mode B handshake (one KEM encapsulation
// each), then a leave: the departed member is locked out.
TEST(GroupKeysTest, DistributionThroughModeB) {
  const std::int64_t now_s = kT0.ns() / 1'000'000'000;
  auto ca = create_ca({"vehicle-ca", CaKind::kVehicle, KeyAlgorithm::kEd25519,
                       Validity::days_from(now_s, 30)});
  ASSERT_TRUE(ca.ok());
  auto pub_id = issue_certificate(*ca, {"gateway", {kService}, KeyAlgorithm::kEd25519,
                                        Validity::days_from(now_s, 30)});
  ASSERT_TRUE(pub_id.ok());
  auto trust = TrustStore::create(std::span<const Certificate>(&ca->certificate, 1));
  ASSERT_TRUE(trust.ok());
  ModeBConfig mb;
  mb.kem = KemScheme::kX25519;
  auto pub = ModeBPublisher::create(mb, *pub_id, *trust);
  ASSERT_TRUE(pub.ok());

  auto server = manager();
  std::vector<Identity> ids;
  std::vector<std::unique_ptr<GroupMember>> members;
  const int n = 4;
  for (int i = 0; i < n; ++i) {
    auto id = issue_certificate(*ca, {"ecu-" + std::to_string(i), {kService}, KeyAlgorithm::kEd25519,
                                      Validity::days_from(now_s, 30)});
    ASSERT_TRUE(id.ok());
    ids.push_back(std::move(id).value());
    ASSERT_TRUE(server->join("ecu-" + std::to_string(i), SecretBytes(), kT0).ok());
    members.push_back(std::make_unique<GroupMember>(config(), "ecu-" + std::to_string(i), SecretBytes()));
  }
  auto serve = [&](int i, TimePoint now, std::optional<Duration> overlap) {
    auto sub = ModeBSubscriber::create(mb, ids[i], *trust);
    ASSERT_TRUE(sub.ok());
    auto req = (*sub)->start(kService, kGroup, now);
    ASSERT_TRUE(req.ok());
    auto acc = (*pub)->on_request(*req, now);
    ASSERT_TRUE(acc.ok());
    auto del = (*pub)->deliver(acc->handle, server->current_key(), server->current_key_id(), now);
    ASSERT_TRUE(del.ok());
    auto conf = (*sub)->on_delivery(*del, now);
    ASSERT_TRUE(conf.ok());
    auto act = (*pub)->on_confirm(*conf, now);
    ASSERT_TRUE(act.ok());
    ASSERT_TRUE(members[i]->install((*sub)->key_id(), (*sub)->key(), now, overlap).ok());
  };
  for (int i = 0; i < n; ++i) serve(i, kT0, std::nullopt);
  const std::uint32_t k1 = server->current_key_id();
  for (int i = 0; i < n; ++i) EXPECT_EQ(members[i]->ring().current_key_id(), k1);
  const auto tag0 = tag_of(members[0]->ring());
  for (int i = 1; i < n; ++i) EXPECT_TRUE(check(members[i]->ring(), k1, tag0, kT0).ok());

  // ecu-3 leaves; the rest get the new key over Mode B with no overlap.
  const TimePoint t1 = kT0 + Duration::seconds(30);
  ASSERT_TRUE(server->leave("ecu-3", t1).ok());
  for (int i = 0; i < n - 1; ++i) serve(i, t1, Duration::zero());
  const auto departed = tag_of(members[3]->ring());
  for (int i = 0; i < n - 1; ++i) {
    EXPECT_EQ(err(check(members[i]->ring(), k1, departed, t1)), GroupKeyError::kUnknownKeyId);
    EXPECT_EQ(err(check(members[i]->ring(), server->current_key_id(), departed, t1)), GroupKeyError::kBadTag);
  }
  EXPECT_TRUE(check(members[1]->ring(), server->current_key_id(), tag_of(members[0]->ring()), t1).ok());
}

}  // namespace
}  // namespace layersec::kex
