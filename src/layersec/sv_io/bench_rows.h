// The measurements of `layersec bench sv` (docs/sv.md, "Benchmarks"), each
// one row of its JSON report. They read the host's clocks, so they live here
// and not in the sv core.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/kex/kem.h"
#include "layersec/sv/profiles.h"

namespace layersec::sv_io {

// Publisher and subscriber of `profile` under `scheme` (a parse_scheme()
// name; "none" is the baseline) in one thread, frames handed to a sink
// standing in for the NIC's TX ring:
//   mac_ns / mac_wall_ns   mean of `mac_iterations` MACs over this frame (thread
//                          CPU time / wall time; 0 for "none")
//   p50/p99/max/mean_us    publisher per frame (patch + MAC + copy to a TX slot)
//   sub_p50/p99/max_us     subscriber per frame (decode + verify + supervise)
//   margin_p99, within_budget_p99, sub_margin_p99  against the interarrival time
// plus profile, rate, scheme, frame_bytes, mac_input_bytes, interarrival_us,
// frames, rss_kib. Throws std::runtime_error when a frame fails to build or
// verify.
nlohmann::json bench_row(const sv::Profile& profile, const std::string& scheme, std::size_t frames,
                         std::size_t mac_iterations);

// Paced sending on absolute deadlines for `seconds` (pacing.h: sleep to 60 us
// before each deadline, then spin; timer slack 1 ns), chaskey12-selective:
// {profile, scheme, interarrival_us, frames_due, frames_sent, frames_skipped,
//  lateness_p50_us, lateness_p99_us, lateness_max_us, method}.
nlohmann::json pacing_row(const sv::Profile& profile, double seconds);

// KDC handshake and distribution times for `kem` (an ML-KEM set): wall time
// (CLOCK_MONOTONIC) of each step, in process, over `iterations` - 1 fresh
// handshakes of one IED (the first one only joins it to the stream):
// {kem, iterations, handshake_us, ied_request_us, kdc_verify_us,
//  ied_confirm_us, distribution_seal_us_per_member, distribution_open_us
//  (each {samples, mean, p50, p99, max}), request_bytes, response_bytes,
//  distribution_bytes}.
nlohmann::json kdc_row(kex::KemScheme kem, std::size_t iterations);

}  // namespace layersec::sv_io
