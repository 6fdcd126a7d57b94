// The seed paper's published figures for its ten sub-scenarios (§5-6), kept
// beside our measurements and always labelled as the paper's. Milliseconds,
// as published; nothing here is measured by layersec.
//
// Sources (seed paper, "Hybrid SecOC + MACsec for SOME/IP"):
//   Table 14  scenario matrix (ids 1-A .. 3b-B)
//   Table 16  PSK rows: SecOC path, mean latency +- SD, CPU %, memory MiB
//   Table 17  one-time RSA-2048 session establishment (ms +- SD)
//   Table 18  RSA rows (steady state): SecOC path, latency, CPU %, memory
//   Table 19  latency distribution: mean, p50, p95, p99 for all ten
//   Table 21  hybrid (PSK) latency against multicast group size N
// Their testbed: two VMs on one host (virtio-net), vsomeip 3, a SecOC
// plugin, the Linux kernel macsec driver, half the round trip on the
// initiator's monotonic clock, 64-byte payload, 50 ms pacing, 500 iterations.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layersec::harness {

struct PaperScenario {
  std::string id;     // "1-A" .. "3b-B" (Table 14)
  std::string label;  // "Unsecured Unicast" ...
  double mean_ms = 0;     // Table 19
  double p50_ms = 0;      // Table 19
  double p95_ms = 0;      // Table 19
  double p99_ms = 0;      // Table 19
  double sd_ms = 0;       // Table 16 / 18
  std::optional<double> secoc_path_ms;     // Table 16 / 18 (N/A unsecured)
  double cpu_pct = 0;                      // Table 16 / 18
  double mem_mib = 0;                      // Table 16 / 18
  std::optional<double> establishment_ms;  // Table 17 (RSA rows)
  std::optional<double> establishment_sd_ms;
  std::string source;  // which tables
};

// The ten rows, in Table 14 order; nullptr for an unknown id.
[[nodiscard]] const std::vector<PaperScenario>& paper_scenarios();
[[nodiscard]] const PaperScenario* paper_scenario(std::string_view id);

// Table 21: hybrid PSK latency to the last receiver against group size N,
// and the DTLS unicast-fanout baseline's.
struct PaperGroupPoint {
  int n = 0;
  double hybrid_ms = 0;
  double dtls_ms = 0;
};
[[nodiscard]] const std::vector<PaperGroupPoint>& paper_group_points();
[[nodiscard]] std::optional<double> paper_hybrid_group_ms(int n);

}  // namespace layersec::harness
