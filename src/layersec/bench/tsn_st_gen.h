// `layersec bench tsn --st-source gen`: our own time-triggered ST talker and
// listener (the ST stream as 802.1Qbv scheduled traffic is sent: each frame
// released on an absolute schedule phase-locked to the ST window of the gate
// control list, tsn/st_stream.h). The sender thread sleeps on
// CLOCK_MONOTONIC until shortly before each release (sv_io pacing: timer
// slack 1 ns, then a spin), stamps the datagram with its sequence number and
// CLOCK_MONOTONIC send time and sends it; the release times are on the
// shaper's CLOCK_TAI (base time 0), converted once by the measured offset
// between the two clocks. The listener in the other namespace (one
// CLOCK_MONOTONIC for both) takes every datagram through tsn::StReceiver:
// every ST frame is a latency sample, loss by sequence, duplicates,
// reordering, RFC 3550 jitter, refusals by reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layersec/net/io.h"
#include "layersec/tsn/st_stream.h"

namespace layersec::bench {

struct StGenSpec {
  tsn::StPlan plan;
  std::size_t payload_bytes = 1000;
  std::uint32_t run_id = 0;
  double seconds = 3;
  int realtime_priority = 0;     // > 0: both threads SCHED_FIFO at it
  std::int64_t spin_ns = 30'000;  // spin this long before each release
  std::string dst_ip;             // the listener's address (tx is unconnected)
  std::uint16_t dst_port = 0;
};

struct StGenResult {
  std::uint64_t cycles = 0;        // cycles of the run
  std::uint64_t sent = 0;          // sequence numbers used (send attempted)
  std::uint64_t send_errors = 0;   // sendto refused (counted lost unless they arrived)
  std::uint64_t lost = 0;          // sequence numbers below `sent` that never arrived
  tsn::StReceiverCounters rx;
  std::uint64_t refused_total = 0;
  std::vector<double> latency_us;  // one per received frame
  std::vector<std::uint64_t> sample_seqs;  // the sequence number of each latency sample
  double jitter_ms = 0;
  double duration_s = 0;           // cycles x cycle time
  double throughput_mbit_s = 0;    // received payload over duration_s
  std::vector<double> release_late_us;  // send start - planned release
  std::string realtime_error[2];   // sender, listener: "" or why SCHED_FIFO was refused
};

// Runs the talker on `tx` and the listener on `rx` (a bound UDP socket)
// for spec.seconds (whole cycles) and returns what the listener saw 200 ms
// after the last release. Blocks; both sockets stay open.
StGenResult run_st_generator(const net::UniqueFd& tx, const net::UniqueFd& rx, const StGenSpec& spec);

}  // namespace layersec::bench
