// PacedPublisher's send loop on a recording sink: every frame is sent, in
// smpCnt order, each built before its slot, and nothing in the loop allocates
// between the first and the last send (the path `sv publish --realtime`
// runs 96,000 times a second). No timing is asserted: the frames are paced on
// the real CLOCK_MONOTONIC of a shared machine, late or not.
#include "layersec/sv_io/publisher_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "layersec/sv/frame.h"
#include "layersec/sv_io/host.h"

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

// Counts every scalar and array allocation of the test binary.
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace layersec::sv_io {
namespace {

// Copies each frame into a slot reserved before the run and notes the
// allocation count at the first and the last send.
class RecordingSink final : public FrameSink {
 public:
  RecordingSink(std::size_t frames, std::size_t frame_size) : slot_(frame_size), bytes_(frames * frame_size) {}
  Result<std::size_t, net::IoError> send(ByteSpan frame) override {
    const std::uint64_t now = g_allocations.load(std::memory_order_relaxed);
    if (count_ == 0) first_ = now;
    last_ = now;
    if (frame.size() != slot_ || (count_ + 1) * slot_ > bytes_.size()) return Err(net::IoError::kBadArgument);
    std::memcpy(bytes_.data() + count_ * slot_, frame.data(), slot_);
    ++count_;
    return frame.size();
  }
  [[nodiscard]] int last_errno() const override { return 0; }
  [[nodiscard]] ByteSpan frame(std::size_t i) const { return ByteSpan(bytes_.data() + i * slot_, slot_); }
  std::size_t count_ = 0;
  std::uint64_t first_ = 0, last_ = 0;

 private:
  std::size_t slot_;
  std::vector<std::uint8_t> bytes_;
};

struct Case {
  const char* scheme;
  std::size_t key_bytes;
};

void run_case(const Case& c, const char* profile_name, std::uint64_t frames) {
  SCOPED_TRACE(std::string(c.scheme) + " " + profile_name);
  const sv::Profile p = *sv::find_profile(profile_name);
  sv::StreamConfig cfg;
  cfg.asdus_per_frame = p.asdus_per_frame;
  cfg.security = *sv::parse_scheme(c.scheme);
  const TimePoint start = TimePoint::from_ns(mono_ns() + 1'000'000);
  std::optional<sv::Publisher> pub;
  if (c.key_bytes == 0) {
    pub.emplace(cfg, p, start);
  } else {
    sv::KeyMaterial k;
    k.key_id = 1;
    k.key = SecretBytes(c.key_bytes);
    for (std::size_t i = 0; i < c.key_bytes; ++i) k.key[i] = static_cast<std::uint8_t>(i + 1);
    pub.emplace(cfg, p, start, std::move(k));
  }
  RecordingSink sink(frames, pub->frame_template().size());
  PacedPublisher paced(*pub, sink, wall_clock());
  JitterRecorder jitter(nominal_period(p.frames_per_second()), frames);
  PacingLimits limits;
  limits.max_frames = frames;
  limits.spin = Duration::microseconds(50);
  const PacedRunResult r = paced.run(limits, jitter);

  EXPECT_EQ(r.sent, frames);
  EXPECT_EQ(r.send_errors, 0u);
  ASSERT_EQ(sink.count_, frames);
  EXPECT_EQ(jitter.lateness().size(), frames);
  EXPECT_LE(jitter.on_time(), frames);
  EXPECT_LE(jitter.returned_on_time(), jitter.on_time());  // returned on time implies started on time
  EXPECT_EQ(sink.last_ - sink.first_, 0u) << "the send loop allocated";
  // smpCnt moves forward from frame to frame by a whole number of frames
  // (modulo the wrap): a late wake-up may skip slots, never repeat or
  // reorder one.
  const std::uint32_t wrap = pub->smp_cnt_wrap();
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < sink.count_; ++i) {
    auto f = sv::decode_frame(sink.frame(i));
    ASSERT_TRUE(f.ok()) << i;
    const std::uint32_t cnt = f->asdus[0].smp_cnt;
    if (i > 0) {
      const std::uint32_t step = (cnt + wrap - prev) % wrap;
      EXPECT_TRUE(step != 0 && step % p.asdus_per_frame == 0 && step < wrap / 2) << i << ": " << prev << " -> " << cnt;
    }
    prev = cnt;
  }
  // Every frame built was sent: the loop builds the next frame only when it
  // will send it.
  EXPECT_EQ(pub->counters().frames, frames);
}

TEST(PacedPublisher, SendsEveryFrameInOrderWithoutAllocating) {
  for (const Case& c : {Case{"none", 0}, Case{"hmac-sha256", 32}, Case{"chaskey12-selective", 16}}) {
    run_case(c, "96000/1", 2000);
  }
  run_case(Case{"hmac-sha256", 32}, "12800/8", 200);
}

}  // namespace
}  // namespace layersec::sv_io
