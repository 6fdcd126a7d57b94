// `layersec bench mka`: MKA on the user-space MACsec link, measured between
// two network namespaces with real `layersec macsec up --mka` processes (the
// binary itself, spawned in each namespace) on a veth pair:
//
//   bring-up    both processes start; "link up" is the later one's
//               mka_started event. Figures: until both transmit with the
//               agreed SAK (their mka_sak_transmitting events), and until the
//               first UDP datagram of a flow that A sends from its first
//               moment (every 1/rate s, static neighbour entries: no ARP in
//               the way) arrives through B's TAP. With the bounded hellos
//               (3 at 0.5 s) as configured, and the 802.1X-2020 timers.
//   rekey       UDP at `rate` datagrams/s from A to B for `seconds`, twice
//               in the same run: the baseline with no rekey, then with the
//               key server (A) rekeying every `rekey_interval_ms` (A is
//               restarted with that timer between the two). Lost datagrams
//               (sequence numbers that never arrived) in each, and the
//               number of rekeys completed during the second.
//   exclusion   B is killed (-9): the time until A reports it lost
//               (mka_peer_lost), with the configured hello and life times.
//
// CLOCK_MONOTONIC is one clock for every namespace of the machine, so the
// processes' event times and this process's send/receive times compare.
// Root, `ip` and /dev/net/tun required; start-up failures throw
// std::runtime_error naming what is missing.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::bench {

struct MkaBenchOptions {
  std::string program;                 // the layersec binary ("" or /proc/self/exe: this one)
  std::string cipher_suite = "gcm-aes-128";
  double rate = 10000;                 // datagrams/s in the load phases
  double seconds = 4;                  // each load phase
  std::uint32_t rekey_interval_ms = 1000;
  std::uint32_t hello_ms = 2000;       // MKA Hello Time
  std::uint32_t life_ms = 6000;        // MKA Life Time
  std::size_t payload = 200;           // UDP payload octets
};

struct MkaLoadPhase {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;  // distinct sequence numbers
  std::uint64_t lost = 0;      // sent - received
  std::uint64_t send_errors = 0;
  std::uint32_t rekeys = 0;    // SAKs A started transmitting with during the phase
  double seconds = 0;          // measured send duration
};

struct MkaBenchReport {
  MkaBenchOptions options;
  double bringup_sak_ms = 0;        // link up -> both transmit with the SAK
  std::optional<double> bringup_first_frame_ms;  // link up -> first datagram through the TAPs
  MkaLoadPhase baseline;
  MkaLoadPhase rekey;
  std::optional<double> exclusion_ms;  // kill -9 -> mka_peer_lost at the key server
  std::string sak_fingerprint;         // the first SAK both agreed (fingerprint)
  std::vector<std::string> notes;
};

MkaBenchReport run_mka_bench(const MkaBenchOptions& options);

// {"options", "bringup", "rekey": {"baseline", "with_rekeys", "goal"}, "exclusion", "method", "notes"}.
nlohmann::json mka_bench_json(const MkaBenchReport& report);
void write_mka_bench_table(std::ostream& out, const MkaBenchReport& report);

}  // namespace layersec::bench
