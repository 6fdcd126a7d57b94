// A gPTP end station on real frames (IO):
//
//   PtpPort   one TimeAwareSystem (one port) over any frame transport, local
//             time CLOCK_MONOTONIC_RAW: it takes whole received Ethernet
//             frames with their RX timestamps, runs the core's timers, and
//             hands every frame the core outputs to a FrameSink, which sends
//             it and returns an event message's TX timestamp. `layersec ptp`
//             runs it on a PtpSocket (run_ptp below); `layersec macsec up
//             --ptp` runs it beside the link's SecY (macsec/link_ptp.h), where
//             the sink protects the frame first.
//   run_ptp   the loop behind `layersec ptp`: polls a PtpSocket until the
//             core's next deadline, calls `each_second` once a second and
//             stops after `duration_s` (0: never) or when *stop becomes
//             non-zero.
//   status_json  the once-a-second JSON line both commands print.
#pragma once

#include <array>
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/ptp/ptp_socket.h"
#include "layersec/ptp/time_aware_system.h"

namespace layersec::ptp {

struct RunnerOptions {
  std::string interface;
  SystemConfig system{};  // clock_identity 0: derived from the interface MAC
  double duration_s = 0;
  int tx_timestamp_timeout_ms = 50;
};

struct RunnerStats {
  std::uint64_t frames_in = 0, frames_out = 0;
  std::uint64_t rx_without_timestamp = 0;  // dropped: no SCM_TIMESTAMPING
  std::uint64_t tx_timestamp_missed = 0;   // event messages whose TX timestamp never came
  std::uint64_t send_errors = 0;
  std::uint64_t clock_steps = 0;           // phase steps the servo made (kJump)
  // Offsets the servo measured during the last second (as ptp4l's summary).
  std::uint64_t window_samples = 0;
  double window_rms_ns = 0, window_max_abs_ns = 0;
};

// What sending one frame gave: whether it went out, and for an event message
// its TX timestamp on the raw time line (nullopt: none came in time).
struct SendOutcome {
  bool sent = false;
  std::optional<std::int64_t> tx_raw_ns;
};
// The gPTP message of a received Ethernet frame (14-octet header, then the
// message): a zero Ethernet pad of a short frame is trimmed, anything else
// is left for the codec to refuse; nullopt for a runt (under 18 octets).
std::optional<ByteSpan> frame_message(ByteSpan frame);

// Sends one whole Ethernet frame (01-80-C2-00-00-0E, the port's MAC, 0x88F7,
// the message). `event`: the core needs the frame's TX timestamp.
using FrameSink = std::function<SendOutcome(ByteSpan frame, bool event)>;
// A FrameSink that sends on `sock` (which must outlive it) and waits up to
// `tx_timestamp_timeout_ms` for an event message's TX timestamp.
FrameSink socket_sink(PtpSocket& sock, int tx_timestamp_timeout_ms);

class PtpPort {
 public:
  // config.port_count is set to 1; clock_identity 0 becomes the EUI-64 of
  // `mac`. Throws ConfigError (time_aware_system.h) for a bad configuration.
  PtpPort(SystemConfig config, const std::array<std::uint8_t, 6>& mac, FrameSink sink);

  // A received Ethernet frame (14-octet header, then the message; a zero
  // Ethernet pad of a short frame is trimmed) with its RX time on the raw
  // time line. Anything malformed is counted by the core (drops).
  void receive(ByteSpan frame, std::int64_t rx_raw_ns);
  // Runs the core's timers when `now_raw_ns` reached next_deadline_ns().
  void on_timer(std::int64_t now_raw_ns);
  [[nodiscard]] std::int64_t next_deadline_ns() const { return sys_.next_deadline().ns(); }
  // Ends the current one-second window of offset samples (stats().window_*).
  void close_window();

  [[nodiscard]] const TimeAwareSystem& system() const { return sys_; }
  [[nodiscard]] const RunnerStats& stats() const { return st_; }
  [[nodiscard]] RunnerStats& stats() { return st_; }
  [[nodiscard]] const std::array<std::uint8_t, 6>& mac() const { return mac_; }

 private:
  void flush();
  TimeAwareSystem sys_;
  std::array<std::uint8_t, 6> mac_;
  FrameSink sink_;
  RunnerStats st_;
  std::uint64_t seen_samples_ = 0, n_ = 0;
  double sum_sq_ = 0, max_abs_ = 0;
};

// The layersec clock of `sys` minus this host's CLOCK_REALTIME now (ns): the
// true error when the GM's time is this host's CLOCK_REALTIME.
double synced_minus_realtime_ns(const TimeAwareSystem& sys);

// A port's refused messages by reason (and malformed ones by parse error as
// "malformed.REASON"), non-zero counts only.
nlohmann::json port_drops_json(const TimeAwareSystem& sys, std::size_t port);

// The once-a-second line: t_s, state, offset_ns (slave − GM at the last Sync,
// null unless synchronised), path_delay_ns, rate_ratio, offset_rms_ns /
// offset_max_ns over the second, freq_ppb, servo, as_capable,
// operational_intervals, offset_to_realtime_ns, grandmaster (clock identity,
// 16 hex digits), syncs, clock_steps and drops (by reason, non-zero only).
nlohmann::json status_json(const TimeAwareSystem& sys, double elapsed_s, double offset_to_realtime_ns,
                           const RunnerStats& st);

// Called once a second: the system, seconds since start, and
// offset_to_realtime_ns = layersec clock − this host's CLOCK_REALTIME (the
// true error when the GM's time is this host's CLOCK_REALTIME, as in a
// namespace test with ptp4l or layersec as GM on the same machine).
using SecondCallback =
    std::function<void(const TimeAwareSystem&, double elapsed_s, double offset_to_realtime_ns, const RunnerStats&)>;

// Throws PtpSocketError or ConfigError at start-up.
RunnerStats run_ptp(const RunnerOptions& options, const SecondCallback& each_second,
                    const volatile std::sig_atomic_t* stop, TimestampingInfo* info_out);

}  // namespace layersec::ptp
