// Replay of recorded traffic (issue 13, item 10): frames recorded earlier
// under the same key are injected into the live stream at every smpCnt
// offset. Before the 64-bit frame counter, HMAC-SHA256, BLAKE2s and both
// Chaskey-12 schemes accepted every recorded frame whose smpCnt lay up to half
// a wrap ahead of the live stream (SmpCntWindow called it a gap), and each
// accepted replay moved the window so that the genuine frames behind it were
// dropped as stale. Now every recorded frame is refused and counted as a
// replay, and not one genuine frame is lost, under every scheme.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"

namespace layersec::sv {
namespace {

using Bytes = std::vector<std::uint8_t>;

KeyMaterial key_for(Scheme scheme, std::uint64_t initial_counter = 0) {
  KeyMaterial k;
  k.key_id = 1;
  k.key = SecretBytes(key_bytes_for(scheme));
  for (std::size_t i = 0; i < k.key.size(); ++i) k.key[i] = static_cast<std::uint8_t>(0x5A ^ (3 * i));
  k.initial_counter = initial_counter;
  return k;
}

std::vector<Sample> samples(std::uint64_t k, std::size_t asdus = 1) {
  std::vector<Sample> v(8 * asdus);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = Sample{static_cast<std::int32_t>(k * 8 + i), 0};
  return v;
}

struct Stream {
  StreamConfig pub;
  SubscriptionConfig sub;
};

Stream stream_for(const std::string& scheme, const Profile& p) {
  Stream s;
  s.pub.asdus_per_frame = p.asdus_per_frame;
  s.pub.security = *parse_scheme(scheme);
  s.pub.security.sender_id = s.pub.appid;
  s.sub.asdus_per_frame = p.asdus_per_frame;
  s.sub.smp_cnt_wrap = p.smp_cnt_wrap();
  s.sub.sv_id = s.pub.sv_id;
  s.sub.security = s.pub.security;
  s.sub.timeout = Duration::seconds(60);
  return s;
}

const char* const kEveryScheme[] = {"hmac-sha256", "hmac-sha256-80", "aes-gmac-128", "aes-gmac-64",
                                    "blake2s",     "chaskey12-full", "chaskey12-selective"};

TEST(SvReplay, RecordedFramesAreRefusedAtEverySmpCntOffsetAndNoGenuineFrameIsLost) {
  const Profile p = *find_profile("4000/1");
  const std::uint32_t wrap = p.smp_cnt_wrap();
  for (const char* scheme : kEveryScheme) {
    SCOPED_TRACE(scheme);
    const Stream s = stream_for(scheme, p);
    Publisher pub(s.pub, p, TimePoint{}, key_for(s.pub.security.scheme));
    Subscriber sub;
    const auto id = sub.add_stream(s.sub, key_for(s.pub.security.scheme));
    // One recorded second: a valid frame for every smpCnt (recorded[c] has
    // smpCnt c). The subscriber saw them live.
    std::vector<Bytes> recorded;
    for (std::uint32_t k = 0; k < wrap; ++k) {
      const TimePoint due = pub.next_deadline();
      auto f = pub.build_next(samples(k));
      ASSERT_TRUE(f.ok());
      recorded.emplace_back(f->begin(), f->end());
      ASSERT_TRUE(sub.on_frame(recorded.back(), due).ok()) << k;
    }
    // Later (the recording is 3 s old), the live stream runs for two more
    // seconds; before and after each genuine frame the attacker injects the
    // recorded frame whose smpCnt is `offset` ahead of the live one, for
    // every offset 0..wrap-1 (twice), and one `offset` behind.
    pub.skip_to(p.deadline(TimePoint{}, 3ull * wrap));
    std::uint64_t genuine = 0, injected = 0, genuine_lost = 0, replays_accepted = 0;
    for (std::uint32_t k = 0; k < 2 * wrap; ++k) {
      const TimePoint due = pub.next_deadline();
      const std::uint16_t live = pub.next_smp_cnt();
      auto f = pub.build_next(samples(k));
      ASSERT_TRUE(f.ok());
      const Bytes frame(f->begin(), f->end());
      const std::uint32_t offset = k % wrap;
      const Bytes& ahead = recorded[(live + offset) % wrap];
      const Bytes& behind = recorded[(live + wrap - offset) % wrap];
      ++injected;
      if (sub.on_frame(ahead, due).ok()) ++replays_accepted;
      ++genuine;
      if (!sub.on_frame(frame, due).ok()) ++genuine_lost;
      ++injected;
      if (sub.on_frame(behind, due).ok()) ++replays_accepted;
    }
    const auto& c = sub.counters(id);
    EXPECT_EQ(replays_accepted, 0u);
    EXPECT_EQ(genuine_lost, 0u);
    EXPECT_EQ(c.delivered, wrap + genuine);
    EXPECT_EQ(c.replayed_counter, injected);  // every injection refused and counted
    EXPECT_EQ(c.replays, injected);
    EXPECT_EQ(c.bad_tag, 0u);
    EXPECT_EQ(c.stale + c.duplicates, 0u);
    // The live run starts at smpCnt 0 after the recorded 3999: consecutive.
    EXPECT_EQ(c.gaps, 0u);
    EXPECT_EQ(c.smp_cnt_resyncs, 0u);
  }
}

TEST(SvReplay, ARecordingPlayedToASubscriberThatMissedItIsRefusedOnceTheLiveStreamIsSeen) {
  // A burst of recorded frames in their original order right after the
  // genuine frame: every one of them is older than what was accepted.
  const Profile p = *find_profile("4800/2");
  for (const char* scheme : kEveryScheme) {
    SCOPED_TRACE(scheme);
    const Stream s = stream_for(scheme, p);
    Publisher pub(s.pub, p, TimePoint{}, key_for(s.pub.security.scheme));
    std::vector<Bytes> recorded;
    for (int k = 0; k < 2400; ++k) {
      auto f = pub.build_next(samples(static_cast<std::uint64_t>(k), 2));
      ASSERT_TRUE(f.ok());
      recorded.emplace_back(f->begin(), f->end());
    }
    Subscriber sub;
    const auto id = sub.add_stream(s.sub, key_for(s.pub.security.scheme));
    for (int k = 0; k < 100; ++k) {
      auto f = pub.build_next(samples(static_cast<std::uint64_t>(k), 2));
      ASSERT_TRUE(f.ok());
      ASSERT_TRUE(sub.on_frame(*f, TimePoint{}).ok());
      for (const auto& r : recorded) EXPECT_FALSE(sub.on_frame(r, TimePoint{}).ok());
    }
    EXPECT_EQ(sub.counters(id).delivered, 100u);
    EXPECT_EQ(sub.counters(id).replayed_counter, 100u * recorded.size());
  }
}

TEST(SvReplay, RestartedPublisherIsFollowedAndItsOldFramesStayRefused) {
  // A restarted publisher (same key, counter base later, smpCnt anywhere) is
  // followed at once; frames of its previous run replayed after that are
  // refused. The counter floor outlives a stream timeout.
  const Profile p = *find_profile("4000/1");
  for (const char* scheme : kEveryScheme) {
    SCOPED_TRACE(scheme);
    const Stream s = stream_for(scheme, p);
    auto sub_cfg = s.sub;
    sub_cfg.timeout = Duration::milliseconds(10);
    Subscriber sub;
    const auto id = sub.add_stream(sub_cfg, key_for(s.pub.security.scheme));
    std::vector<Bytes> first_run;
    {
      Publisher pub(s.pub, p, TimePoint{}, key_for(s.pub.security.scheme, 1'000'000));  // smpCnt 0..999
      for (int k = 0; k < 1000; ++k) {
        const TimePoint due = pub.next_deadline();
        auto f = pub.build_next(samples(static_cast<std::uint64_t>(k)));
        ASSERT_TRUE(f.ok());
        first_run.emplace_back(f->begin(), f->end());
        ASSERT_TRUE(sub.on_frame(first_run.back(), due).ok());
      }
    }
    const TimePoint restart = TimePoint::from_ns(5'000'000'000);
    EXPECT_EQ(sub.poll(restart), 1u);  // silence: timed out
    Publisher pub2(s.pub, p, restart, key_for(s.pub.security.scheme, 2'000'000));  // smpCnt from 0 again
    for (int k = 0; k < 500; ++k) {
      const TimePoint due = pub2.next_deadline();
      auto f = pub2.build_next(samples(static_cast<std::uint64_t>(k)));
      ASSERT_TRUE(f.ok());
      ASSERT_TRUE(sub.on_frame(*f, due).ok()) << k;
      if (k % 2 == 0) {
        EXPECT_FALSE(sub.on_frame(first_run[static_cast<std::size_t>(k)], due).ok());
      }
    }
    const auto& c = sub.counters(id);
    EXPECT_EQ(c.delivered, 1500u);
    EXPECT_EQ(c.smp_cnt_resyncs, 1u);  // smpCnt 0 after 999 looks stale: followed once
    EXPECT_EQ(c.replayed_counter, 250u);
    EXPECT_EQ(c.stale, 0u);
  }
}

}  // namespace
}  // namespace layersec::sv
