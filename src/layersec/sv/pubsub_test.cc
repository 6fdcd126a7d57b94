// Publisher pacing and smpCnt, subscriber supervision (gaps, duplicates,
// stale frames, confRev change, Simulate, timeouts, unknown APPID, malformed).
#include <gtest/gtest.h>

#include <vector>

#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/replay.h"
#include "layersec/sv/subscriber.h"

namespace layersec::sv {
namespace {

std::vector<Sample> samples_for(std::size_t asdus, std::int32_t base) {
  std::vector<Sample> v(asdus * 8);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = Sample{base + static_cast<std::int32_t>(i), static_cast<std::uint32_t>(i)};
  return v;
}

StreamConfig stream_for(const Profile& p) {
  StreamConfig c;
  c.asdus_per_frame = p.asdus_per_frame;
  return c;
}

SubscriptionConfig subscription_for(const Profile& p) {
  SubscriptionConfig s;
  s.asdus_per_frame = p.asdus_per_frame;
  s.smp_cnt_wrap = p.smp_cnt_wrap();
  s.timeout = Duration::microseconds(static_cast<std::int64_t>(3 * p.interarrival_us()));
  return s;
}

TEST(SvProfiles, PaperProfilesArithmetic) {
  const auto all = paper_profiles();
  ASSERT_EQ(all.size(), 8u);
  const std::uint32_t rates[] = {4000, 4800, 4800, 5760, 14400, 12800, 15360, 96000};
  const std::uint32_t asdus[] = {1, 1, 2, 1, 6, 8, 8, 1};
  const std::uint32_t fps[] = {4000, 4800, 2400, 5760, 2400, 1600, 1920, 96000};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(all[i].sample_rate_hz, rates[i]);
    EXPECT_EQ(all[i].asdus_per_frame, asdus[i]);
    EXPECT_EQ(all[i].frames_per_second(), fps[i]);
  }
  EXPECT_NEAR(find_profile("96000/1")->interarrival_us(), 10.4167, 1e-3);  // the paper's ~10.4 us
  EXPECT_DOUBLE_EQ(find_profile("4000/1")->interarrival_us(), 250.0);
  EXPECT_EQ(find_profile("4000/1")->smp_cnt_wrap(), 4000u);
  EXPECT_EQ(find_profile("15360/8")->smp_cnt_wrap(), 15360u);
  EXPECT_EQ(find_profile("96000/1")->smp_cnt_wrap(), 65536u);  // 16-bit smpCnt, see profiles.h
  EXPECT_FALSE(find_profile("4000/2").has_value());
  EXPECT_FALSE(find_profile("nonsense").has_value());
  EXPECT_TRUE(find_profile("LE-60Hz-256spc").has_value());
}

TEST(SvProfiles, DeadlinesAreAbsoluteAndDoNotDrift) {
  const auto p = *find_profile("4800/1");
  const TimePoint start = TimePoint::from_ns(1'000);
  EXPECT_EQ(p.deadline(start, 0), start);
  EXPECT_EQ(p.deadline(start, 1).ns() - start.ns(), 208'333);
  EXPECT_EQ(p.deadline(start, 2).ns() - start.ns(), 416'666);
  EXPECT_EQ(p.deadline(start, 4800).ns() - start.ns(), 1'000'000'000);
  // One hour later, still exact: the k-th deadline is computed, not summed.
  EXPECT_EQ(p.deadline(start, 4800ull * 3600).ns() - start.ns(), 3600'000'000'000);
  const auto q = *find_profile("96000/1");
  for (std::uint64_t k = 0; k < 96000; ++k) {
    const auto d = q.deadline(start, k + 1) - q.deadline(start, k);
    ASSERT_TRUE(d.ns() == 10'416 || d.ns() == 10'417) << k;
  }
}

TEST(SvPublisher, SmpCntWrapsAtTheSampleRate) {
  for (const auto& p : paper_profiles()) {
    SCOPED_TRACE(std::string(p.name));
    Publisher pub(stream_for(p), p, TimePoint{});
    const auto samples = samples_for(p.asdus_per_frame, 0);
    std::uint32_t expected = 0;
    const std::uint64_t frames = p.frames_per_second() + 3;  // one second and a wrap
    for (std::uint64_t k = 0; k < frames; ++k) {
      EXPECT_EQ(pub.next_deadline(), p.deadline(TimePoint{}, k));
      auto f = pub.build_next(samples);
      ASSERT_TRUE(f.ok());
      auto d = decode_frame(*f);
      ASSERT_TRUE(d.ok());
      for (std::size_t a = 0; a < d->no_asdu; ++a) {
        ASSERT_EQ(d->asdus[a].smp_cnt, expected) << k;
        expected = (expected + 1) % p.smp_cnt_wrap();
      }
    }
    EXPECT_EQ(pub.counters().frames, frames);
  }
}

// 96 kHz: the default wrap is the 16-bit range (libiec61850 does the same);
// 48,000 is a per-stream setting on both sides. 70,000 frames: a subscriber
// that expects 48,000 drops the 17,536 frames with smpCnt >= 48,000 of a
// 65,536 stream (the failure seen with the old default).
TEST(SvPublisher, SmpCntWrapIsAPerStreamSetting) {
  const auto p = *find_profile("96000/1");
  for (std::uint32_t wrap : {0u, 48000u, 65536u}) {
    SCOPED_TRACE(wrap);
    StreamConfig sc = stream_for(p);
    sc.smp_cnt_wrap = wrap;
    Publisher pub(sc, p, TimePoint{});
    const std::uint32_t effective = wrap == 0 ? 65536u : wrap;
    EXPECT_EQ(pub.smp_cnt_wrap(), effective);
    Subscriber matched, other;
    auto cfg = subscription_for(p);
    cfg.smp_cnt_wrap = effective;
    const auto m = matched.add_stream(cfg);
    cfg.smp_cnt_wrap = effective == 65536u ? 48000u : 65536u;
    const auto o = other.add_stream(cfg);
    const auto samples = samples_for(1, 0);
    for (int k = 0; k < 70000; ++k) {
      auto f = pub.build_next(samples);
      ASSERT_TRUE(f.ok());
      const TimePoint due = p.deadline(TimePoint{}, static_cast<std::uint64_t>(k));
      ASSERT_TRUE(matched.on_frame(*f, due).ok()) << k;
      other.on_frame(*f, due).ignore();
    }
    EXPECT_EQ(matched.counters(m).delivered, 70000u);
    EXPECT_EQ(matched.counters(m).gaps, 0u);
    if (effective == 65536u) {
      EXPECT_EQ(other.counters(o).bad_smp_cnt, 17536u);  // smpCnt 48000..65535
      EXPECT_EQ(other.counters(o).delivered, 70000u - 17536u);
    } else {
      EXPECT_EQ(other.counters(o).delivered, 70000u);  // seen as one gap at the early wrap
      EXPECT_EQ(other.counters(o).gaps, 1u);
      EXPECT_EQ(other.counters(o).missing_samples, 17536u);
    }
  }
  StreamConfig bad = stream_for(p);
  bad.smp_cnt_wrap = 65537;
  EXPECT_THROW(Publisher(bad, p, TimePoint{}), std::invalid_argument);
  auto bad_sub = subscription_for(p);
  bad_sub.smp_cnt_wrap = 0;
  Subscriber s;
  EXPECT_THROW(s.add_stream(bad_sub), std::invalid_argument);
  const auto eight = *find_profile("12800/8");
  StreamConfig short_wrap = stream_for(eight);
  short_wrap.smp_cnt_wrap = 4;  // fewer values than ASDUs in a frame
  EXPECT_THROW(Publisher(short_wrap, eight, TimePoint{}), std::invalid_argument);
}

TEST(SvPublisher, PatchesValuesInPlace) {
  const auto p = *find_profile("14400/6");
  Publisher pub(stream_for(p), p, TimePoint{});
  const Dataset ds = Dataset::four_i_four_u();
  for (int k = 0; k < 3; ++k) {
    const auto samples = samples_for(6, 1000 * k - 5);
    auto f = pub.build_next(samples);
    ASSERT_TRUE(f.ok());
    auto d = decode_frame(*f);
    ASSERT_TRUE(d.ok());
    for (std::size_t a = 0; a < 6; ++a) {
      std::array<Sample, 8> got{};
      ASSERT_TRUE(ds.decode(d->asdus[a].seq_data, got));
      for (std::size_t c = 0; c < 8; ++c) {
        EXPECT_EQ(got[c].value, samples[a * 8 + c].value);
        EXPECT_EQ(got[c].quality, samples[a * 8 + c].quality);
      }
    }
  }
  auto bad = pub.build_next(samples_for(5, 0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), PublishError::kBadSamples);
  StreamConfig wrong = stream_for(p);
  wrong.asdus_per_frame = 2;
  EXPECT_THROW(Publisher(wrong, p, TimePoint{}), std::invalid_argument);
}

TEST(SvPublisher, SkipToKeepsSmpCntAlignedWithTime) {
  const auto p = *find_profile("4000/1");
  Publisher pub(stream_for(p), p, TimePoint{});
  ASSERT_TRUE(pub.build_next(samples_for(1, 0)).ok());
  EXPECT_EQ(pub.skip_to(TimePoint::from_ns(100)), 0u);
  // Woke up 10.1 ms late: frames 1..39 are stale, frame 40 (due at 10 ms) goes now.
  EXPECT_EQ(pub.skip_to(TimePoint::from_ns(10'100'000)), 39u);
  EXPECT_EQ(pub.frame_index(), 40u);
  EXPECT_EQ(pub.next_smp_cnt(), 40);
  EXPECT_EQ(pub.counters().skipped_frames, 39u);
}

TEST(SvReplayWindow, Verdicts) {
  SmpCntWindow w(4000);
  EXPECT_EQ(w.check(17, 17).verdict, SmpCntWindow::Verdict::kFirst);
  w.accept(3999);
  EXPECT_EQ(w.check(0, 0).verdict, SmpCntWindow::Verdict::kNext);  // wrap
  EXPECT_EQ(w.check(3999, 3999).verdict, SmpCntWindow::Verdict::kDuplicate);
  EXPECT_EQ(w.check(3998, 3999).verdict, SmpCntWindow::Verdict::kDuplicate);  // same 2-ASDU frame again
  EXPECT_EQ(w.check(3998, 3998).verdict, SmpCntWindow::Verdict::kStale);
  EXPECT_EQ(w.check(3999, 0).verdict, SmpCntWindow::Verdict::kStale);  // overlaps the last sample
  EXPECT_EQ(w.check(2000, 2000).verdict, SmpCntWindow::Verdict::kStale);
  const auto gap = w.check(5, 5);
  EXPECT_EQ(gap.verdict, SmpCntWindow::Verdict::kGap);
  EXPECT_EQ(gap.missing, 5u);
  EXPECT_EQ(w.check(1999, 1999).verdict, SmpCntWindow::Verdict::kGap);  // exactly half a wrap ahead
}

struct Harness {
  Profile p;
  Publisher pub;
  Subscriber sub;
  std::size_t id;
  explicit Harness(const Profile& profile, StreamConfig s, SubscriptionConfig c)
      : p(profile), pub(s, profile, TimePoint{}), id(sub.add_stream(c)) {}
  explicit Harness(const Profile& profile) : Harness(profile, stream_for(profile), subscription_for(profile)) {}
  std::vector<std::uint8_t> next(std::int32_t base = 0) {
    auto f = pub.build_next(samples_for(p.asdus_per_frame, base));
    EXPECT_TRUE(f.ok());
    return {f->begin(), f->end()};
  }
};

TEST(SvSubscriber, DeliversAndCountsGapsDuplicatesAndStaleFrames) {
  Harness h(*find_profile("4800/2"));
  const auto f0 = h.next(0);
  const auto f1 = h.next(1);
  const auto f2 = h.next(2);
  const auto f3 = h.next(3);
  auto r = h.sub.on_frame(f0, TimePoint{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->frame->asdus[1].smp_cnt, 1);
  EXPECT_EQ(r->stream, h.id);
  ASSERT_TRUE(h.sub.on_frame(f1, TimePoint{}).ok());
  r = h.sub.on_frame(f1, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kDuplicate);
  r = h.sub.on_frame(f3, TimePoint{});  // f2 lost
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->missing_samples, 2u);
  r = h.sub.on_frame(f2, TimePoint{});  // late
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kStale);
  const auto& c = h.sub.counters(h.id);
  EXPECT_EQ(c.received, 5u);
  EXPECT_EQ(c.delivered, 3u);
  EXPECT_EQ(c.duplicates, 1u);
  EXPECT_EQ(c.stale, 1u);
  EXPECT_EQ(c.replays, 0u);  // unsecured stream: supervision only
  EXPECT_EQ(c.gaps, 1u);
  EXPECT_EQ(c.missing_samples, 2u);
}

TEST(SvSubscriber, ConfRevChangeSimulateAndSvId) {
  const auto p = *find_profile("4000/1");
  auto sub_cfg = subscription_for(p);
  sub_cfg.conf_rev = 1;
  Harness h(p, stream_for(p), sub_cfg);
  ASSERT_TRUE(h.sub.on_frame(h.next(), TimePoint{}).ok());

  StreamConfig changed = stream_for(p);
  changed.conf_rev = 2;
  Publisher pub2(changed, p, TimePoint{});
  ASSERT_TRUE(pub2.skip_to(p.deadline(TimePoint{}, 5)) > 0);
  auto f = pub2.build_next(samples_for(1, 0));
  ASSERT_TRUE(f.ok());
  auto r = h.sub.on_frame(*f, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kConfRevMismatch);
  EXPECT_EQ(h.sub.counters(h.id).conf_rev_changes, 1u);

  StreamConfig sim = stream_for(p);
  sim.simulate = true;
  Publisher pub3(sim, p, TimePoint{});
  ASSERT_TRUE(pub3.skip_to(p.deadline(TimePoint{}, 6)) > 0);
  f = pub3.build_next(samples_for(1, 0));
  ASSERT_TRUE(f.ok());
  r = h.sub.on_frame(*f, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kSimulated);
  EXPECT_EQ(h.sub.counters(h.id).simulated, 1u);
  // A subscription that accepts simulation (LPHD.Sim true) takes it.
  auto sim_cfg = subscription_for(p);
  sim_cfg.accept_simulated = true;
  Subscriber s2;
  s2.add_stream(sim_cfg);
  auto ok = s2.on_frame(*f, TimePoint{});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->frame->simulate());

  StreamConfig other = stream_for(p);
  other.sv_id = "OTHERMU001";
  Publisher pub4(other, p, TimePoint{});
  ASSERT_TRUE(pub4.skip_to(p.deadline(TimePoint{}, 7)) > 0);
  f = pub4.build_next(samples_for(1, 0));
  ASSERT_TRUE(f.ok());
  r = h.sub.on_frame(*f, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kWrongSvId);
}

TEST(SvSubscriber, UnknownAppIdWrongNoAsduAndMalformedAreCounted) {
  const auto p = *find_profile("4000/1");
  Harness h(p);
  StreamConfig other = stream_for(p);
  other.appid = 0x4001;
  Publisher pub2(other, p, TimePoint{});
  auto f = pub2.build_next(samples_for(1, 0));
  ASSERT_TRUE(f.ok());
  auto r = h.sub.on_frame(*f, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kUnknownAppId);
  EXPECT_EQ(h.sub.unknown_appid(), 1u);

  const auto two = *find_profile("4800/2");
  Publisher pub3(stream_for(two), two, TimePoint{});
  f = pub3.build_next(samples_for(2, 0));
  ASSERT_TRUE(f.ok());
  r = h.sub.on_frame(*f, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kWrongNoAsdu);
  EXPECT_EQ(h.sub.counters(h.id).wrong_no_asdu, 1u);

  auto bytes = h.next();
  bytes.resize(bytes.size() - 3);
  r = h.sub.on_frame(bytes, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kMalformed);
  EXPECT_EQ(h.sub.malformed(DecodeError::kLengthMismatch), 1u);
  EXPECT_EQ(h.sub.malformed_total(), 1u);
  const std::vector<std::uint8_t> junk(5, 0xFF);
  EXPECT_FALSE(h.sub.on_frame(junk, TimePoint{}).ok());
  EXPECT_EQ(h.sub.malformed(DecodeError::kTruncated), 1u);
}

TEST(SvSubscriber, StreamTimeoutFromInjectedTime) {
  const auto p = *find_profile("4000/1");
  Harness h(p);  // timeout = 3 interarrivals = 750 us
  EXPECT_EQ(h.sub.next_timeout(), TimePoint::max());
  ASSERT_TRUE(h.sub.on_frame(h.next(), TimePoint::from_ns(0)).ok());
  EXPECT_EQ(h.sub.next_timeout(), TimePoint::from_ns(750'000));
  EXPECT_EQ(h.sub.poll(TimePoint::from_ns(700'000)), 0u);
  EXPECT_FALSE(h.sub.timed_out(h.id));
  EXPECT_EQ(h.sub.poll(TimePoint::from_ns(800'000)), 1u);
  EXPECT_TRUE(h.sub.timed_out(h.id));
  EXPECT_EQ(h.sub.poll(TimePoint::from_ns(900'000)), 0u);  // counted once per outage
  EXPECT_EQ(h.sub.counters(h.id).timeouts, 1u);
  ASSERT_TRUE(h.sub.on_frame(h.next(), TimePoint::from_ns(1'000'000)).ok());
  EXPECT_FALSE(h.sub.timed_out(h.id));
}

TEST(SvSubscriber, TimeoutRestartsSupervisionOnlyOnUnsecuredStreams) {
  const auto p = *find_profile("4000/1");
  Harness h(p);
  const auto f0 = h.next();
  const auto f1 = h.next();
  ASSERT_TRUE(h.sub.on_frame(f0, TimePoint::from_ns(0)).ok());
  ASSERT_TRUE(h.sub.on_frame(f1, TimePoint::from_ns(250'000)).ok());
  // A restarted publisher comes back at smpCnt 0 after a silence.
  EXPECT_FALSE(h.sub.on_frame(f0, TimePoint::from_ns(300'000)).ok());  // no timeout yet: stale
  EXPECT_EQ(h.sub.poll(TimePoint::from_ns(2'000'000)), 1u);
  EXPECT_TRUE(h.sub.on_frame(f0, TimePoint::from_ns(2'000'000)).ok());

  // Secured: the replay window survives the timeout within the key epoch.
  StreamConfig sc = stream_for(p);
  sc.security = *parse_scheme("chaskey12-selective");
  SubscriptionConfig sub_cfg = subscription_for(p);
  sub_cfg.security = sc.security;
  KeyMaterial k1, k2;
  k1.key_id = k2.key_id = 1;
  k1.key = SecretBytes(16);
  k2.key = SecretBytes(16);
  Publisher pub(sc, p, TimePoint{}, std::move(k1));
  Subscriber sub;
  const auto id = sub.add_stream(sub_cfg, std::move(k2));
  auto g0 = pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(g0.ok());
  const std::vector<std::uint8_t> frame0(g0->begin(), g0->end());
  auto g1 = pub.build_next(samples_for(1, 1));
  ASSERT_TRUE(g1.ok());
  ASSERT_TRUE(sub.on_frame(frame0, TimePoint::from_ns(0)).ok());
  ASSERT_TRUE(sub.on_frame(*g1, TimePoint::from_ns(250'000)).ok());
  EXPECT_EQ(sub.poll(TimePoint::from_ns(2'000'000)), 1u);
  EXPECT_FALSE(sub.on_frame(frame0, TimePoint::from_ns(2'000'000)).ok());  // replay after silence
  EXPECT_EQ(sub.counters(id).replays, 1u);
}

TEST(SvSubscriber, FramesWithNonConsecutiveSmpCntAreDropped) {
  const auto p = *find_profile("4800/2");
  Harness h(p);
  auto bytes = h.next();
  auto d = decode_frame(bytes);
  ASSERT_TRUE(d.ok());
  store_be16(&bytes[d->asdus[1].smp_cnt_offset], 7);
  auto r = h.sub.on_frame(bytes, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kBadSmpCnt);
  store_be16(&bytes[d->asdus[0].smp_cnt_offset], 4800);  // beyond the wrap
  store_be16(&bytes[d->asdus[1].smp_cnt_offset], 4801);
  EXPECT_FALSE(h.sub.on_frame(bytes, TimePoint{}).ok());
  EXPECT_EQ(h.sub.counters(h.id).bad_smp_cnt, 2u);
}

}  // namespace
}  // namespace layersec::sv
