// `sv publish`: a merging unit on a real interface. The sans-I/O
// sv::Publisher gives the frames and their absolute deadlines
// (Profile::deadline); PacedPublisher builds the next frame as soon as the
// previous one is sent, sleeps (clock_nanosleep TIMER_ABSTIME) until `spin`
// before its deadline, spins to it and sends it on a FrameSink. Late wake-ups skip the frames whose deadlines passed
// (counted by the publisher), so smpCnt stays aligned with time. Keys the KDC
// sends while it runs are scheduled for their valid-from time (converted
// from the wall clock to CLOCK_MONOTONIC).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/sv/kdc.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv_io/frame_port.h"
#include "layersec/sv_io/kdc_client.h"
#include "layersec/sv_io/keys.h"
#include "layersec/sv_io/pacing.h"

namespace layersec::sv_io {

// When a paced run ends: after `max_frames` send attempts, at the first
// deadline at or after `end`, or on a stop request (stop_signal.h).
struct PacingLimits {
  std::uint64_t max_frames = UINT64_MAX;
  TimePoint end = TimePoint::max();
  Duration spin = Duration::microseconds(50);  // spin this long before each deadline
};

// What a paced run did (jitter samples in the recorder, pacing.h).
struct PacedRunResult {
  std::uint64_t sent = 0;
  std::uint64_t send_errors = 0;
  int last_errno = 0;  // of the last failed send
};

class PacedPublisher {
 public:
  // `publisher`, `sink` and `wall` are not owned. The samples are
  // fill_samples() (samples.h) of the frame's first sample number.
  PacedPublisher(sv::Publisher& publisher, FrameSink& sink, const Clock& wall);

  // Keys from the KDC: drained every ~10 ms of frames while running.
  void set_kdc(KdcClient* kdc) { kdc_ = kdc; }
  // Schedules a key newer than any seen (re-deliveries are ignored).
  void take_key(sv::kdc::GroupKeyUpdate update);

  // Sends until `limits` say stop. Each frame is built (patched, signed)
  // right after the previous send, before its own deadline; at the deadline
  // only send() runs. Throws std::runtime_error "publisher failed: ..." when
  // a frame cannot be built (signing failed).
  PacedRunResult run(const PacingLimits& limits, JitterRecorder& jitter);

 private:
  // Builds the frame of pub_->frame_index() (valid until the next build).
  ByteSpan build(std::vector<sv::Sample>& samples);

  sv::Publisher* pub_;
  FrameSink* sink_;
  const Clock* wall_;
  KdcClient* kdc_ = nullptr;
  NewestKeyFilter keys_;
};

// Everything `sv publish` runs after its options are parsed.
struct PublishRun {
  std::string iface;
  sv::StreamConfig stream;  // eth.src is set to the interface's MAC
  sv::Profile profile{};
  std::optional<sv::KeyMaterial> key;  // none: unsecured (scheme none)
  std::optional<KdcClient> kdc;        // the keys came from the KDC
  std::optional<sv::kdc::GroupKeyUpdate> announced;  // the KDC's next key
  std::uint32_t key_id_shown = 1;      // the key id of the start-up line
  double duration_s = 0;               // 0: count alone
  std::uint64_t count = 0;             // 0: duration alone
  double spin_us = 50;
  bool json = false;
  bool realtime = false;               // mlockall + SCHED_FIFO 80, best effort
};

// Opens the AF_PACKET socket (EtherType 0x88BA, blocking), sets the frame
// counter base from the wall clock (host.h), fine timer slack and, with
// `realtime`, SCHED_FIFO (a warning on stderr when refused), installs the
// stop handlers, starts 20 ms from now and prints a start-up line (text mode)
// and the final report to `out`: one JSON line {"type":"publisher", iface,
// profile, rate, auth, frame_bytes, interarrival_us, frames_sent,
// frames_skipped, send_errors, frames_due, on_time_frames, on_time_share,
// returned_on_time_frames, returned_on_time_share, elapsed_s, load_average,
// method, spin_us, realtime, [key_id], rekeys, [kdc_rejected],
// [last_send_error], sched: {runqueue_wait_ms, cpu_ms,
// involuntary_switches, rt_runtime_us, rt_period_us (the kernel's real-time
// throttle, net::rt_throttle; null when unreadable)}, jitter_us: {lateness, send_done, period_dev} each
// {samples, mean, p50, p99, p999, max}} with --json, else a summary line, an
// on-time line and a line per jitter figure. Throws std::runtime_error on
// start-up failures.
void publish_on_interface(PublishRun run, std::ostream& out);

}  // namespace layersec::sv_io
