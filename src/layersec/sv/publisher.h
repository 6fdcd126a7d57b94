// Sans-I/O SV publisher (merging unit side). It owns the stream's
// FrameTemplate and optional FrameSigner, knows the profile's pacing, and
// produces one frame per call. It never reads a clock and never sends:
// an adapter (AF_PACKET, the simulated segment, a benchmark loop) asks for
// next_deadline(), sleeps until then on its own clock (absolute deadlines,
// e.g. clock_nanosleep(TIMER_ABSTIME)), calls build_next() and hands the
// returned bytes to its socket. See docs/sv.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/security.h"
#include "layersec/sv/stream.h"

namespace layersec::sv {

enum class PublishError : std::uint8_t {
  kBadSamples,  // samples.size() != asdus_per_frame * channels
  kSecurity,    // signing failed (see last_security_error())
};

struct PublisherCounters {
  std::uint64_t frames = 0;           // frames built
  std::uint64_t skipped_frames = 0;   // deadlines passed over by skip_to()
  std::uint64_t rekeys = 0;           // key epochs started after the first
  std::uint64_t sign_failures = 0;
};

class Publisher {
 public:
  // Unsecured stream (config.security.scheme must be kNone) or secured one
  // with its first key. Throws std::invalid_argument on a bad configuration
  // (asdus_per_frame must equal the profile's, keys must fit the scheme).
  Publisher(const StreamConfig& config, const Profile& profile, TimePoint start);
  Publisher(const StreamConfig& config, const Profile& profile, TimePoint start, KeyMaterial key);

  [[nodiscard]] const Profile& profile() const { return profile_; }
  [[nodiscard]] const FrameTemplate& frame_template() const { return template_; }
  [[nodiscard]] std::uint64_t frame_index() const { return index_; }
  // Absolute time frame_index() is due.
  [[nodiscard]] TimePoint next_deadline() const { return profile_.deadline(start_, index_); }
  // smpCnt of the first ASDU of the next frame.
  [[nodiscard]] std::uint16_t next_smp_cnt() const;
  // Where smpCnt wraps (StreamConfig::smp_cnt_wrap or the profile's default).
  [[nodiscard]] std::uint32_t smp_cnt_wrap() const { return wrap_; }
  [[nodiscard]] const PublisherCounters& counters() const { return counters_; }
  [[nodiscard]] const FrameSigner* signer() const { return signer_ ? &*signer_ : nullptr; }
  [[nodiscard]] SecurityError last_security_error() const { return last_security_error_; }

  // Patches smpCnt, refrTm (when configured) and the samples (ASDU-major:
  // asdus_per_frame x channels) into the template, signs it, advances to the
  // next frame, and returns the frame (valid until the next call).
  Result<ByteSpan, PublishError> build_next(std::span<const Sample> samples, std::uint64_t refr_tm_utc = 0);

  // An adapter that woke up late skips to the latest frame whose deadline is
  // not after `now` (older samples are stale) and returns how many frames it
  // skipped. smpCnt stays aligned with time.
  std::uint64_t skip_to(TimePoint now);

  // The first frame whose deadline is at or after `at` uses `key` (IEC
  // 62351-9 key rollover: subscribers accept the announced next key).
  // Several keys may be scheduled (a rekey inside another's lead window);
  // each takes effect at its own time, and of those due for a frame the one
  // scheduled for the latest time wins. Throws on an unsecured stream.
  void schedule_rekey(KeyMaterial key, TimePoint at);
  [[nodiscard]] std::size_t scheduled_keys() const { return pending_.size(); }

 private:
  void init();
  StreamConfig config_;
  Profile profile_;
  TimePoint start_;
  FrameTemplate template_;
  std::optional<FrameSigner> signer_;
  std::uint64_t index_ = 0;
  std::uint32_t wrap_ = 0;
  std::vector<std::size_t> channel_offsets_;
  std::vector<bool> channel_quality_;
  struct PendingKey {
    KeyMaterial key;
    TimePoint at;
  };
  std::vector<PendingKey> pending_;  // ordered by `at`; allocated only by schedule_rekey
  PublisherCounters counters_;
  SecurityError last_security_error_ = SecurityError::kBadConfig;
};

}  // namespace layersec::sv
