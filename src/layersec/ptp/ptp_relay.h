// A gPTP time-aware relay on real frames (IO): one TimeAwareSystem with N
// ports (2..kMaxPorts) over N frame sinks, as `layersec ptp --iface A
// --iface B ...` runs it on N PtpSockets in one process.
//
//   PtpRelay        the core with port_count N: a frame received on port k
//                   goes to core port k, what the core emits for port k goes
//                   to sink k (which sends it and returns an event message's
//                   TX timestamp). Under the automotive profile port 0 faces
//                   the GM (the core's static relay roles: port 0 slave, the
//                   others master); under gptp the BMCA decides per port.
//                   It counts per port what the core does not: frames,
//                   missing TX timestamps, send errors and the Syncs it
//                   forwarded, and the residence time of each forwarded Sync
//                   (its TX timestamp on the master port minus the RX
//                   timestamp of the upstream Sync it carries on).
//   run_ptp_relay   the loop: one poll over all sockets and the core's
//                   deadline, a callback once a second, stops after
//                   `duration_s` (0: never) or when *stop becomes non-zero.
//   relay_status_json  status_json (ptp_runner.h) of the relay's own clock
//                   plus "ports" (per port: name, role, path_delay_ns,
//                   neighbor_rate_ratio, as_capable, syncs_received,
//                   syncs_forwarded, frames, drops by reason) and
//                   "residence_ns" over the second (syncs, p50, max, and
//                   after_follow_up_p50/max: the part after the upstream
//                   Follow_Up's receipt).
#pragma once

#include <array>
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/ptp/ptp_runner.h"
#include "layersec/ptp/time_aware_system.h"

namespace layersec::ptp {

struct RelayPortStats {
  std::uint64_t frames_in = 0, frames_out = 0;
  std::uint64_t rx_without_timestamp = 0;  // dropped: no SCM_TIMESTAMPING
  std::uint64_t tx_timestamp_missed = 0;   // event messages whose TX timestamp never came
  std::uint64_t send_errors = 0;
  std::uint64_t syncs_forwarded = 0;       // Syncs sent on this port carrying an upstream Sync on
};

struct RelayStats {
  std::vector<RelayPortStats> ports;
  std::uint64_t clock_steps = 0;  // phase steps of the relay's own clock
  // The relay's own offsets during the last second (as RunnerStats).
  std::uint64_t window_samples = 0;
  double window_rms_ns = 0, window_max_abs_ns = 0;
  // Residence times (ns) of the Syncs forwarded during the last second.
  std::uint64_t window_residence_samples = 0;
  double window_residence_p50_ns = 0, window_residence_max_ns = 0;
  // The part of it after the upstream Follow_Up arrived (the core forwards
  // a Sync when its Follow_Up is in): forwarded Sync's TX − Follow_Up's RX.
  double window_after_follow_up_p50_ns = 0, window_after_follow_up_max_ns = 0;
  std::uint64_t residence_samples = 0;  // since start
};

class PtpRelay {
 public:
  // One MAC and one sink per port; config.port_count becomes macs.size(),
  // clock_identity 0 the EUI-64 of macs[0]. Throws ConfigError for fewer
  // than 2 or more than kMaxPorts ports, sinks not matching macs, or what
  // the core refuses.
  PtpRelay(SystemConfig config, const std::vector<std::array<std::uint8_t, 6>>& macs, std::vector<FrameSink> sinks);

  // A received Ethernet frame on `port` (as PtpPort::receive).
  void receive(std::size_t port, ByteSpan frame, std::int64_t rx_raw_ns);
  // A frame the socket gave without an RX timestamp: counted, dropped.
  void count_rx_without_timestamp(std::size_t port);
  void on_timer(std::int64_t now_raw_ns);
  [[nodiscard]] std::int64_t next_deadline_ns() const { return sys_.next_deadline().ns(); }
  // Ends the current one-second window (stats().window_*).
  void close_window();

  [[nodiscard]] std::size_t port_count() const { return macs_.size(); }
  [[nodiscard]] const TimeAwareSystem& system() const { return sys_; }
  [[nodiscard]] const RelayStats& stats() const { return st_; }
  // The totals over all ports as RunnerStats (for status_json).
  [[nodiscard]] RunnerStats totals() const;

 private:
  struct LastSync {
    bool valid = false;
    std::uint16_t seq = 0;
    std::int64_t rx = 0;
  };
  struct Upstream {
    std::int64_t sync_rx = 0, follow_up_rx = 0;
  };
  void flush(const std::optional<Upstream>& upstream);
  TimeAwareSystem sys_;
  std::vector<std::array<std::uint8_t, 6>> macs_;
  std::vector<FrameSink> sinks_;
  std::vector<LastSync> last_sync_;
  RelayStats st_;
  std::uint64_t seen_samples_ = 0, n_ = 0;
  double sum_sq_ = 0, max_abs_ = 0;
  std::vector<double> residence_, after_follow_up_;
};

nlohmann::json relay_status_json(const PtpRelay& relay, const std::vector<std::string>& names, double elapsed_s,
                                 double offset_to_realtime_ns);

struct RelayOptions {
  std::vector<std::string> interfaces;  // 2..kMaxPorts, distinct; [0] faces the GM under automotive
  SystemConfig system{};                // clock_identity 0: derived from the first interface's MAC
  double duration_s = 0;
  int tx_timestamp_timeout_ms = 50;
};

// Called once a second: the relay, seconds since start, and its clock minus
// this host's CLOCK_REALTIME (ns).
using RelaySecondCallback = std::function<void(const PtpRelay&, double elapsed_s, double offset_to_realtime_ns)>;

// Throws PtpSocketError or ConfigError at start-up. `info_out` (may be
// null) receives each interface's timestamping capabilities.
RelayStats run_ptp_relay(const RelayOptions& options, const RelaySecondCallback& each_second,
                         const volatile std::sig_atomic_t* stop, std::vector<TimestampingInfo>* info_out);

}  // namespace layersec::ptp
