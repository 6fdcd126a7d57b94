// The gPTP node loop on a real interface (IO): one TimeAwareSystem (one
// port) over a PtpSocket, local time CLOCK_MONOTONIC_RAW. Polls the socket
// until the core's next deadline, hands it every frame with its RX
// timestamp, sends what it outputs and reports each event message's TX
// timestamp from the error queue. Calls `each_second` once a second and
// stops after `duration_s` (0: never) or when *stop becomes non-zero.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>

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
  // Offsets the servo measured during the last second (as ptp4l's summary).
  std::uint64_t window_samples = 0;
  double window_rms_ns = 0, window_max_abs_ns = 0;
};

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
