// The persisted counter floor (floor_store.h): a restarted secured
// subscriber refuses frames recorded before the restart even when they arrive
// before the first genuine frame (weakness sv-subscriber-floor, issue 15);
// a failed save refuses the frame; reservations are saved once per block.
#include "layersec/sv/floor_store.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"

namespace layersec::sv {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kBase = 1'780'000'000'000'000'000ULL;  // a wall-clock counter base

KeyMaterial key_for(Scheme scheme, std::uint64_t initial_counter = 0) {
  KeyMaterial k;
  k.key_id = 7;
  k.key = SecretBytes(key_bytes_for(scheme));
  for (std::size_t i = 0; i < k.key.size(); ++i) k.key[i] = static_cast<std::uint8_t>(0x33 ^ (5 * i));
  k.initial_counter = initial_counter;
  return k;
}

std::vector<Sample> samples(std::uint64_t k) {
  std::vector<Sample> v(8);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = Sample{static_cast<std::int32_t>(k * 8 + i), 0};
  return v;
}

struct Bed {
  Profile profile;
  StreamConfig pub;
  SubscriptionConfig sub;
};

Bed setup_for(const char* scheme) {
  Bed s{*find_profile("4000/1"), {}, {}};
  s.pub.security = *parse_scheme(scheme);
  s.pub.security.sender_id = s.pub.appid;
  s.sub.smp_cnt_wrap = s.profile.smp_cnt_wrap();
  s.sub.sv_id = s.pub.sv_id;
  s.sub.security = s.pub.security;
  s.sub.timeout = Duration::seconds(60);
  return s;
}

// A subscriber with one stream; start() attaches the store.
struct Sub {
  Subscriber sub;
  std::size_t id = 0;
};

Status<FloorError> start(Sub& s, const Bed& su, FloorStore& store, std::uint64_t reserve, FloorStart how) {
  s.id = s.sub.add_stream(su.sub, key_for(su.pub.security.scheme));
  return s.sub.set_floor_store(&store, reserve, how);
}

Bytes next_frame(Publisher& pub, std::uint64_t k) {
  auto f = pub.build_next(samples(k));
  EXPECT_TRUE(f.ok());
  return f.ok() ? Bytes(f->begin(), f->end()) : Bytes{};
}

const char* const kSchemes[] = {"hmac-sha256", "aes-gmac-128", "chaskey12-full", "chaskey12-selective"};

TEST(SvFloorStore, RestartedSubscriberRefusesTheRecordingBeforeTheFirstGenuineFrame) {
  for (const char* scheme : kSchemes) {
    SCOPED_TRACE(scheme);
    const Bed su = setup_for(scheme);
    Publisher pub(su.pub, su.profile, TimePoint{}, key_for(su.pub.security.scheme, kBase));
    MemoryFloorStore store;
    std::vector<Bytes> recorded;
    {
      Sub first;
      ASSERT_TRUE(start(first, su, store, 100, FloorStart::kFirstStart).ok());
      for (std::uint64_t k = 0; k < 250; ++k) {
        recorded.push_back(next_frame(pub, k));
        ASSERT_TRUE(first.sub.on_frame(recorded.back(), TimePoint{}).ok()) << k;
      }
      // Reservations at counters kBase, +100, +200 (and the first start's 0).
      EXPECT_EQ(first.sub.counters(first.id).floor_saves, 3u);
      EXPECT_EQ(first.sub.persisted_floor(first.id), kBase + 300);
    }  // killed: no clean shutdown
    EXPECT_EQ(store.saves(), 4u);

    Sub restarted;
    ASSERT_TRUE(start(restarted, su, store, 100, FloorStart::kResume).ok());
    // The attacker plays the whole recording before any genuine frame, twice.
    for (int pass = 0; pass < 2; ++pass) {
      for (const Bytes& r : recorded) {
        auto d = restarted.sub.on_frame(r, TimePoint{});
        ASSERT_FALSE(d.ok());
        EXPECT_EQ(d.error(), DropReason::kSecurity);
      }
    }
    const auto& c = restarted.sub.counters(restarted.id);
    EXPECT_EQ(c.delivered, 0u);
    EXPECT_EQ(c.replayed_counter, 2 * recorded.size());
    // The running publisher's frames below the reservation (kBase+250..+299)
    // are lost, by design, and counted; from kBase+300 on it flows again.
    std::uint64_t lost = 0;
    for (std::uint64_t k = 250; k < 400; ++k) {
      if (!restarted.sub.on_frame(next_frame(pub, k), TimePoint{}).ok()) ++lost;
    }
    EXPECT_EQ(lost, 50u);
    EXPECT_EQ(c.delivered, 100u);
    EXPECT_EQ(c.replayed_counter, 2 * recorded.size() + 50);
    EXPECT_EQ(c.floor_not_persisted, 0u);
  }
}

TEST(SvFloorStore, WithoutAStoreTheRestartedSubscriberAcceptsTheRecording) {
  // The weakness the store removes, shown on the same traffic.
  const Bed su = setup_for("hmac-sha256");
  Publisher pub(su.pub, su.profile, TimePoint{}, key_for(su.pub.security.scheme, kBase));
  std::vector<Bytes> recorded;
  for (std::uint64_t k = 0; k < 50; ++k) recorded.push_back(next_frame(pub, k));
  Subscriber fresh;
  const auto id = fresh.add_stream(su.sub, key_for(su.pub.security.scheme));
  for (const Bytes& r : recorded) EXPECT_TRUE(fresh.on_frame(r, TimePoint{}).ok());
  EXPECT_EQ(fresh.counters(id).delivered, 50u);
  EXPECT_FALSE(fresh.persisted_floor(id).has_value());
}

TEST(SvFloorStore, AFailedSaveRefusesTheFrameAndChangesNothing) {
  const Bed su = setup_for("hmac-sha256");
  Publisher pub(su.pub, su.profile, TimePoint{}, key_for(su.pub.security.scheme, kBase));
  MemoryFloorStore store;
  Sub s;
  ASSERT_TRUE(start(s, su, store, 10, FloorStart::kFirstStart).ok());
  const Bytes f0 = next_frame(pub, 0);
  store.set_fail_saves(true);
  auto d = s.sub.on_frame(f0, TimePoint{});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), DropReason::kFloorNotPersisted);
  const auto& c = s.sub.counters(s.id);
  EXPECT_EQ(c.floor_not_persisted, 1u);
  EXPECT_EQ(c.delivered, 0u);
  EXPECT_EQ(c.floor_saves, 0u);
  EXPECT_EQ(s.sub.persisted_floor(s.id), 0u);
  // Nothing moved: the same frame is accepted once the store works again.
  store.set_fail_saves(false);
  EXPECT_TRUE(s.sub.on_frame(f0, TimePoint{}).ok());
  EXPECT_EQ(c.delivered, 1u);
  EXPECT_EQ(s.sub.persisted_floor(s.id), kBase + 10);
  // Inside the reservation no save is needed, so a failing store does not
  // stop frames already covered; the one that crosses it is refused.
  store.set_fail_saves(true);
  for (std::uint64_t k = 1; k < 10; ++k) EXPECT_TRUE(s.sub.on_frame(next_frame(pub, k), TimePoint{}).ok()) << k;
  auto crossing = s.sub.on_frame(next_frame(pub, 10), TimePoint{});
  ASSERT_FALSE(crossing.ok());
  EXPECT_EQ(crossing.error(), DropReason::kFloorNotPersisted);
  EXPECT_EQ(c.delivered, 10u);
  EXPECT_EQ(c.floor_not_persisted, 2u);
}

TEST(SvFloorStore, TheFrameThatCrossesTheReservationSavesExactlyOnce) {
  const Bed su = setup_for("chaskey12-selective");
  Publisher pub(su.pub, su.profile, TimePoint{}, key_for(su.pub.security.scheme, kBase));
  MemoryFloorStore store;
  Sub s;
  ASSERT_TRUE(start(s, su, store, 16, FloorStart::kFirstStart).ok());
  ASSERT_EQ(store.saves(), 1u);  // the first start's record
  std::vector<std::size_t> saves_after;
  for (std::uint64_t k = 0; k < 48; ++k) {
    ASSERT_TRUE(s.sub.on_frame(next_frame(pub, k), TimePoint{}).ok()) << k;
    saves_after.push_back(store.saves());
  }
  for (std::uint64_t k = 0; k < 48; ++k) {
    // Frames kBase+0, +16, +32 cross the reservation: one save each.
    EXPECT_EQ(saves_after[k], 2 + k / 16) << k;
  }
  EXPECT_EQ(s.sub.persisted_floor(s.id), kBase + 48);
  EXPECT_EQ(*store.load(FloorKey{su.sub.appid, su.sub.sv_id}).value(), kBase + 48);
}

TEST(SvFloorStore, ACleanShutdownWritesTheExactFloorAndLosesNothing) {
  const Bed su = setup_for("hmac-sha256");
  Publisher pub(su.pub, su.profile, TimePoint{}, key_for(su.pub.security.scheme, kBase));
  MemoryFloorStore store;
  std::vector<Bytes> recorded;
  {
    Sub s;
    ASSERT_TRUE(start(s, su, store, 1000, FloorStart::kFirstStart).ok());
    for (std::uint64_t k = 0; k < 20; ++k) {
      recorded.push_back(next_frame(pub, k));
      ASSERT_TRUE(s.sub.on_frame(recorded.back(), TimePoint{}).ok());
    }
    EXPECT_EQ(s.sub.persisted_floor(s.id), kBase + 1000);
    ASSERT_TRUE(s.sub.persist_floors().ok());
    EXPECT_EQ(s.sub.persisted_floor(s.id), kBase + 20);
  }
  Sub again;
  ASSERT_TRUE(start(again, su, store, 1000, FloorStart::kResume).ok());
  for (const Bytes& r : recorded) EXPECT_FALSE(again.sub.on_frame(r, TimePoint{}).ok());
  for (std::uint64_t k = 20; k < 30; ++k) EXPECT_TRUE(again.sub.on_frame(next_frame(pub, k), TimePoint{}).ok()) << k;
  EXPECT_EQ(again.sub.counters(again.id).replayed_counter, 20u);
  EXPECT_EQ(again.sub.counters(again.id).delivered, 10u);
}

TEST(SvFloorStore, AMissingRecordFailsClosedUnlessFirstStart) {
  const Bed su = setup_for("hmac-sha256");
  MemoryFloorStore store;
  {
    Sub s;
    auto st = start(s, su, store, 10, FloorStart::kResume);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error(), FloorError::kMissing);
    EXPECT_EQ(store.saves(), 0u);
    EXPECT_FALSE(s.sub.persisted_floor(s.id).has_value());
  }
  {
    Sub s;
    ASSERT_TRUE(start(s, su, store, 10, FloorStart::kFirstStart).ok());
    EXPECT_EQ(s.sub.persisted_floor(s.id), 0u);
    EXPECT_EQ(store.size(), 1u);
  }
  // A first start never rewinds an existing record.
  ASSERT_TRUE(store.save(FloorKey{su.sub.appid, su.sub.sv_id}, kBase + 5).ok());
  {
    Sub s;
    ASSERT_TRUE(start(s, su, store, 10, FloorStart::kFirstStart).ok());
    EXPECT_EQ(s.sub.persisted_floor(s.id), kBase + 5);
    Publisher pub(su.pub, su.profile, TimePoint{}, key_for(su.pub.security.scheme, kBase));
    for (std::uint64_t k = 0; k < 5; ++k) EXPECT_FALSE(s.sub.on_frame(next_frame(pub, k), TimePoint{}).ok());
    EXPECT_TRUE(s.sub.on_frame(next_frame(pub, 5), TimePoint{}).ok());
  }
  // A record deleted from the store: the next start fails closed again.
  store.clear();
  Sub s;
  auto st = start(s, su, store, 10, FloorStart::kResume);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), FloorError::kMissing);
}

TEST(SvFloorStore, StoreFailuresAndBadReservesAreTypedAndAttachNothing) {
  const Bed su = setup_for("hmac-sha256");
  MemoryFloorStore store;
  store.set_fail_loads(true);
  Sub a;
  auto st = start(a, su, store, 10, FloorStart::kFirstStart);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), FloorError::kStore);
  store.set_fail_loads(false);
  store.set_fail_saves(true);
  Sub b;
  st = start(b, su, store, 10, FloorStart::kFirstStart);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), FloorError::kStore);  // the first record could not be written
  store.set_fail_saves(false);
  for (const std::uint64_t bad : {std::uint64_t{0}, kMaxFloorReserve + 1}) {
    Sub c;
    st = start(c, su, store, bad, FloorStart::kFirstStart);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error(), FloorError::kBadReserve);
  }
  EXPECT_EQ(store.size(), 0u);
  // An attached store takes no more streams.
  Sub d;
  ASSERT_TRUE(start(d, su, store, 10, FloorStart::kFirstStart).ok());
  SubscriptionConfig other = su.sub;
  other.appid = 0x4001;
  EXPECT_THROW(d.sub.add_stream(other, key_for(su.pub.security.scheme)), std::logic_error);
}

TEST(SvFloorStore, UnsecuredStreamsHaveNoFloor) {
  SubscriptionConfig plain;
  Subscriber sub;
  const auto id = sub.add_stream(plain);
  MemoryFloorStore store;
  ASSERT_TRUE(sub.set_floor_store(&store, 10, FloorStart::kResume).ok());
  EXPECT_EQ(store.size(), 0u);
  EXPECT_FALSE(sub.persisted_floor(id).has_value());
  EXPECT_TRUE(sub.persist_floors().ok());
}

TEST(SvFloorStore, ReservationSaturatesAtTheTopOfTheCounter) {
  EXPECT_EQ(floor_reservation(10, 5), 15u);
  EXPECT_EQ(floor_reservation(UINT64_MAX - 3, 5), UINT64_MAX);
  EXPECT_EQ(floor_reservation(UINT64_MAX - 5, 5), UINT64_MAX);
  EXPECT_EQ(floor_reservation(UINT64_MAX - 6, 5), UINT64_MAX - 1);
}

TEST(SvFloorStore, VerifierFloorOnlyRises) {
  auto v = FrameVerifier::create(*parse_scheme("hmac-sha256"), key_for(Scheme::kHmacSha256));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->counter_floor().has_value());
  v->raise_counter_floor(0);
  EXPECT_FALSE(v->counter_floor().has_value());
  v->raise_counter_floor(100);
  EXPECT_EQ(v->counter_floor(), 99u);
  v->raise_counter_floor(50);
  EXPECT_EQ(v->counter_floor(), 99u);
}

}  // namespace
}  // namespace layersec::sv
