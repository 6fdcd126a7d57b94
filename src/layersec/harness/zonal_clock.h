// The nodes' clocks of the zonal network (zonal.h; issue 17, integration):
// what every time-aware shaper and every time-triggered ECU reads.
//
//  - ideal: every node reads simulated time (no time base; the network runs
//    exactly as without this file).
//  - free: every node's oscillator has its own frequency error (see
//    ZonalClockOptions); the clocks agree at the network's time 0 (as if
//    synchronised once, then left running) and drift apart from there.
//  - gptp: the same oscillators disciplined by gPTP (802.1AS automotive
//    profile, static roles): a ptp::Simulator with the network's topology
//    runs beside it (C the grandmaster, every zonal switch a relay with port
//    0 toward C, every ECU a slave end station of its switch; link delay =
//    cable + kPhyDelayNs each way, Gaussian timestamp noise, a relay
//    residence time of kResidenceNs). It runs for `warmup` first (the servos
//    lock), then over the whole network run, recording every servo update; a
//    node's shaper then reads  synced(oscillator(t)) - epoch  (epoch: the
//    grandmaster's synchronised time at the network's time 0), held
//    monotonic. gPTP frames do not travel through the shaped zonal links
//    (their timestamps are taken at the PHY in this model, so queueing would
//    not change them; see docs/tsn.md).
// Cameras carry only BE and run every gate open, so they read simulated
// time in every mode.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "layersec/tsn/time_base.h"

namespace layersec::harness {

enum class ZonalClock : std::uint8_t {
  kIdeal,  // every node on simulated time (the network's figures without clocks)
  kGptp,   // drifting oscillators disciplined by gPTP
  kFree,   // drifting oscillators, no synchronisation after time 0
};
[[nodiscard]] const char* to_string(ZonalClock c);  // "ideal", "gptp", "free"
[[nodiscard]] std::optional<ZonalClock> zonal_clock_from(std::string_view name);

inline constexpr std::int64_t kPhyDelayNs = 500;     // PHY TX + RX latency per link, symmetric
inline constexpr std::int64_t kResidenceNs = 50'000;  // a relay's Sync residence time

// Every node's oscillator: a frequency error at the network's time 0 drawn
// (seeded) uniformly in [-drift_ppm, +drift_ppm], changing linearly at a
// rate drawn uniformly in [-wander_ppm_per_s, +wander_ppm_per_s] (a
// temperature ramp; 0: constant). The draws do not depend on the mode, so
// free and gptp rows of one seed run the same oscillators.
struct ZonalClockOptions {
  ZonalClock mode = ZonalClock::kIdeal;
  double drift_ppm = 100;             // 0..200 (802.1AS allows ±100)
  double wander_ppm_per_s = 0;        // 0..1
  int log_sync_interval = -3;         // gptp: Sync every 2^n s, -7..0 (-3: 125 ms, the automotive default)
  double timestamp_noise_ns = 3;      // gptp: Gaussian, standard deviation, 0..1000
  std::int64_t warmup_ns = 0;         // gptp: before the network starts, 0..70 s; 0: 30 s + 40 sync intervals
};

// Throws std::invalid_argument naming the field and its range.
void validate(const ZonalClockOptions& o);
// The sync interval in milliseconds (2^log · 1000).
[[nodiscard]] double sync_interval_ms(int log_sync_interval);

// The clocks of one network with `hops` zonal switches, valid over network
// time [0, horizon_ns] (beyond it a gptp clock keeps its last rate).
class ZonalClocks {
 public:
  // Throws std::invalid_argument for bad options (validate()).
  ZonalClocks(const ZonalClockOptions& o, int hops, std::int64_t cable_ns, std::uint64_t seed,
              std::int64_t horizon_ns);

  // nullptr in ideal mode. zone k and ecu k are 1-based.
  [[nodiscard]] std::shared_ptr<const tsn::TimeBase> central() const { return nodes_[0]; }
  [[nodiscard]] std::shared_ptr<const tsn::TimeBase> zone(int k) const;
  [[nodiscard]] std::shared_ptr<const tsn::TimeBase> ecu(int k) const;
  // The oscillator's frequency error of each node (C, Z1..Zh, ECU1..ECUh), ppm.
  [[nodiscard]] const std::vector<double>& ppm() const { return ppm_; }
  // gptp: the largest |node - grandmaster| at network time 0 (the servos'
  // state after the warm-up), ns; 0 otherwise.
  [[nodiscard]] double start_offset_max_ns() const { return start_offset_max_ns_; }
  [[nodiscard]] const ZonalClockOptions& options() const { return options_; }

 private:
  ZonalClockOptions options_;
  int hops_;
  std::vector<std::shared_ptr<const tsn::TimeBase>> nodes_;  // C, Z1..Zh, ECU1..ECUh
  std::vector<double> ppm_;
  double start_offset_max_ns_ = 0;
};

// Gate misalignment along a path of egress ports (first to last in the
// direction the frames travel; nullptr = simulated time): for every cycle
// start L = first_local + c·period (c < count), the true time at which each
// port's clock reads L; between adjacent ports the difference of those
// times (positive: the downstream port's gates switch later). Corresponding
// gate events of a cycle are at the same local offsets, so this is the
// misalignment of every gate event of that cycle (up to drift·offset, below
// 1 ns per 10 us of offset at 100 ppm).
struct Misalignment {
  double max_abs_ns = 0;       // adjacent ports, over all cycles
  double rms_ns = 0;           // adjacent ports, over all cycles
  double path_max_abs_ns = 0;  // first against last port
  std::uint64_t samples = 0;   // adjacent pairs x cycles
};
[[nodiscard]] Misalignment path_misalignment(const std::vector<const tsn::TimeBase*>& ports, std::int64_t first_local,
                                             std::int64_t period, int count);

}  // namespace layersec::harness
