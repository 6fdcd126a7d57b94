// `layersec bench macsec-link`: throughput of the user-space MACsec link
// (`layersec macsec up`, macsec/link.h TapLink) between two network
// namespaces, beside the plain veth it runs on, measured in the same run:
//
//   plain    iperf3 between the veth ends' own addresses, before any link
//            runs (so no AF_PACKET socket is on the veth);
//   macsec   the veth's addresses removed, a real `layersec macsec up`
//            process in each namespace (the binary itself, static GCM-AES-128
//            SAKs in 0600 key files, the default "isolate" lower link), and
//            the same iperf3 runs between the MACsec TAPs' addresses: once
//            with the TAP offloads (the default: 64 KiB TCP segments split
//            and joined by the link) and once with `--no-offload` (one TAP
//            read/write per frame), each with fresh keys and processes.
//
// Per path: one TCP run (iperf3 default, one stream) and one UDP run per
// datagram size (-b 0: as fast as the sender goes; the receiver's figure
// counts). CPU: utime+stime of the two `macsec up` processes from
// /proc/PID/stat over each run (cpu_pct: percent of one core, both processes
// summed; cpu_pct_per_gbit = cpu_pct / gbit_s), and the whole machine's busy
// time from /proc/stat (system_cpu_pct, percent of one core summed over the
// cores: iperf3, the kernel and anything else that ran). Root, `ip`, iperf3
// and /dev/net/tun required; start-up failures throw std::runtime_error
// naming what is missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace layersec::bench {

struct MacsecLinkBenchOptions {
  std::string program;  // the layersec binary ("" or /proc/self/exe: this one)
  std::string iperf3 = "iperf3";
  double seconds = 5;                                 // iperf3 -t per run
  bool tcp = true;
  std::vector<std::size_t> udp_sizes{64, 512, 1400};  // UDP datagram payloads (-l)
  bool with_offload = true;     // macsec rows with the TAP offloads (macsec up's default)
  bool without_offload = true;  // macsec rows with `macsec up --no-offload`
  bool rx_ring = false;         // true: every link with `macsec up --rx-ring` (PACKET_MMAP receive ring)
  // Every link with `macsec up --workers N` (and, N > 1, a replay_window of
  // kWorkersReplayWindow: frames the workers finish out of order stay
  // accepted); `fanout` ("" = macsec up's default) is passed as --fanout.
  int workers = 1;
  std::string fanout;
};

// The receivers' replay_window when the links run with workers (1 worker: 0,
// strict order, as always).
inline constexpr int kWorkersReplayWindow = 4096;

struct MacsecLinkBenchRow {
  std::string path;   // "macsec" or "plain"
  std::optional<bool> offload;  // macsec rows: the links ran with the TAP offloads
  std::string proto;  // "tcp" or "udp"
  std::size_t bytes = 0;  // UDP: datagram payload; TCP: iperf3's write size (131072)
  double seconds = 0;     // wall time of the iperf3 client
  double gbit_s = 0;      // receiver throughput
  std::optional<double> loss_pct;                 // UDP
  std::optional<double> cpu_pct;                  // macsec: both link processes, % of one core
  std::optional<double> cpu_user_pct, cpu_sys_pct;  // its split
  std::optional<double> cpu_pct_per_gbit;         // cpu_pct / gbit_s (macsec rows)
  double system_cpu_pct = 0;                      // the machine, % of one core summed over cores
  std::optional<double> system_cpu_pct_per_gbit;  // system_cpu_pct / gbit_s
  std::optional<double> ratio;                    // macsec rows: gbit_s / the plain row's of the same proto+bytes
};

struct MacsecLinkBenchReport {
  MacsecLinkBenchOptions options;
  std::vector<MacsecLinkBenchRow> rows;
  // {"offload": {"a": exit statistics, "b": ...}, "no_offload": {...}} of
  // the `macsec up` processes of each round that ran.
  nlohmann::json links;
  std::vector<std::string> notes;
};

MacsecLinkBenchReport run_macsec_link_bench(const MacsecLinkBenchOptions& options);

// {"rows": [...], "goals": {...}, "links": {...}, "method", "notes"}; the
// goals are judged on the TCP row with offloads (without when only that ran).
nlohmann::json macsec_link_bench_json(const MacsecLinkBenchReport& report);
// MACsec beside plain per proto and size, with the ratio and CPU per Gbit/s.
void write_macsec_link_bench_table(std::ostream& out, const MacsecLinkBenchReport& report);

}  // namespace layersec::bench
