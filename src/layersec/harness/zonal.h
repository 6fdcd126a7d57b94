// The multi-hop zonal network on the simulated segments (issue 16, part 3;
// the hybrid paper's zonal architecture, §4.7, and its future work, §7.4).
//
// Topology (one run): a central compute node C, `hops` zonal switches in a
// chain Z1 - Z2 - ... - Zh with Z1 next to C, and behind every switch Zk one
// ECU (100 Mbit/s access link) and two cameras (backbone speed). Every switch
// is a net::Segment, the links between switches net::SegmentTrunk. On every
// link a MACsec SecY at each end (GCM-AES-128, SCI included, the C-tag in the
// clear and covered by the ICV), hop by hop: a switch validates on ingress
// and protects again on egress with the next link's SA. SOME/IP control
// events travel end to end from each ECU to C, protected by the real SecOC
// engine (vendor profile, the SOME/IP header authenticated as the runtime's
// binding does), as PCP 6 (ST); cameras stream PCP 0 (BE) UDP to C.
//
// Shaping (ZonalShaper): on, every egress port of the network (ECU and
// camera NICs, each switch's egress onto each link, both directions) runs a
// tsn::EgressPort with two classes; on the ST path the port has one exclusive
// ST window per ECU stream passing it, placed where that stream's frame
// arrives (the ECUs release at the cycle start, so the windows follow the
// frame hop by hop: time-triggered traffic as 802.1Qbv is meant for), BE
// gets the rest with the length-aware guard band. Strict: the same ports with
// every gate open (strict priority, no gates). FIFO: no shaper, the links'
// FIFO queues.
//
// Clocks (ZonalClockOptions, zonal_clock.h): ideal (every node on simulated
// time), free (drifting oscillators) or gptp (drifting oscillators
// disciplined by gPTP). Each egress port's shaper runs on the clock of the
// node it belongs to and each ECU releases its event at its own clock's
// cycle start; the row then reports the gate misalignment between adjacent
// hops of the farthest ECU's path.
//
// Everything is simulated time: latencies are exact nanoseconds of the
// simulation (ECU application send to SecOC verification at C), never the
// host's clock. Processing is the switches' fixed store-and-forward delay;
// crypto costs no simulated time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layersec/harness/zonal_clock.h"

namespace layersec::harness {

enum class ZonalShaper : std::uint8_t {
  kOn,      // 802.1Qbv windows per hop, exclusive ST gates, guard band
  kStrict,  // EgressPort with every gate open: strict priority only
  kFifo,    // no shaper: one FIFO per link direction
};
[[nodiscard]] const char* to_string(ZonalShaper s);  // "on", "strict", "fifo"

struct ZonalOptions {
  int hops = 4;                               // zonal switches in the chain, 1..4
  double be_load_pct = 80;                    // camera load into C's link, % of port_bps at wire rate, 0..95
  std::uint64_t port_bps = 1'000'000'000;     // trunks, C's link, cameras: 100 or 1000 Mbit/s
  std::uint64_t ecu_bps = 100'000'000;        // ECU access links: 100 or 1000 Mbit/s
  ZonalShaper shaper = ZonalShaper::kOn;
  int cycles = 1000;                          // ST events per ECU, one per cycle, 1..1000000
  std::int64_t cycle_ns = 1'000'000;          // gate cycle and ST period, 100 us .. 100 ms
  std::int64_t switching_delay_ns = 2'000;    // per switch (the bound's per-hop processing), 0 .. 1 ms
  std::int64_t cable_ns = 100;                // propagation delay of every link, 0 .. 100 us
  bool compromised_switch = false;            // Z1 reads, alters and re-protects every ST event
  std::uint64_t seed = 1;
  ZonalClockOptions clock{};                  // ideal: every node on simulated time
};

// Throws std::invalid_argument naming the field and the accepted range.
void validate(const ZonalOptions& o);

// ST of one ECU (zone k: k switches to C).
struct ZonalStream {
  int zone = 0;
  std::uint64_t sent = 0;
  std::uint64_t accepted = 0;          // SecOC-verified at C
  std::uint64_t secoc_rejected = 0;
  std::int64_t min_ns = 0, p50_ns = 0, p99_ns = 0, max_ns = 0;  // of accepted events
  std::optional<std::int64_t> bound_ns;  // analytic (on, strict); none for FIFO
  std::int64_t planned_ns = 0;           // the arrival the ST windows were placed for (wire + cable + switching)
  std::uint64_t over_bound = 0;          // accepted events later than bound_ns
};

struct ZonalRow {
  int hops = 0;
  ZonalShaper shaper = ZonalShaper::kOn;
  double be_load_pct = 0;
  std::uint64_t port_bps = 0;
  std::uint64_t ecu_bps = 0;
  int cycles = 0;
  // The farthest ECU's stream (zone == hops): the row's figures.
  std::uint64_t st_sent = 0;
  std::uint64_t st_lost = 0;  // sent - accepted
  std::int64_t st_min_ns = 0, st_p50_ns = 0, st_p99_ns = 0, st_max_ns = 0;
  std::optional<std::int64_t> bound_ns;
  std::int64_t planned_ns = 0;
  std::vector<ZonalStream> streams;  // zone 1..hops
  std::uint64_t st_over_bound = 0;   // over every stream
  // BE (cameras), wire rate (frame + FCS + preamble + IFG) on C's link over
  // the measured cycles.
  std::uint64_t be_sent = 0;
  std::uint64_t be_delivered = 0;
  std::uint64_t be_dropped = 0;  // queue and shaper drops anywhere
  double be_offered_mbit_s = 0;
  double be_throughput_mbit_s = 0;
  // Shaped ports: frames on the wire when their gate closed (0 with the guard band).
  std::uint64_t transmission_overruns = 0;
  // Frames a SecY refused anywhere (0 unless attacked).
  std::uint64_t macsec_drops = 0;
  // The nodes' clocks (zonal_clock.h) and the gate misalignment between
  // adjacent egress ports of the farthest ECU's path (ECU, Zh, ..., Z1), at
  // every measured cycle start; all 0 with ideal clocks.
  ZonalClock clock = ZonalClock::kIdeal;
  double drift_ppm = 0;                  // the bound the nodes' errors were drawn in (0: ideal)
  double wander_ppm_per_s = 0;           // the bound of their rates of change
  std::optional<double> sync_interval_ms;  // gptp only
  Misalignment misalign{};
  double start_offset_max_ns = 0;        // gptp: largest |node - GM| when the network starts
};

// The compromised zonal switch (Z1, which every event crosses): it holds the
// keys of its links, so hop-by-hop MACsec hands it the plaintext.
struct ZonalCompromise {
  int hops = 0;
  std::uint64_t st_sent = 0;
  std::uint64_t read_plaintext = 0;   // SOME/IP events the switch parsed in the clear
  std::string example_read;           // one event as the switch read it (service.method, payload hex)
  std::uint64_t altered = 0;          // events it changed and re-protected
  std::uint64_t macsec_accepted_at_central = 0;  // of those, verified by C's SecY (the next hop's SA)
  std::uint64_t secoc_rejected = 0;   // rejected by SecOC at C
  std::uint64_t accepted = 0;         // altered events SecOC accepted (must be 0)
};

struct ZonalRun {
  ZonalRow row;
  std::optional<ZonalCompromise> compromise;  // with compromised_switch
};

// Builds the network, runs `cycles` cycles plus the drain, returns the row.
// Throws std::invalid_argument for bad options (validate()) and
// std::runtime_error if the network cannot be built.
[[nodiscard]] ZonalRun run_zonal(const ZonalOptions& o);

struct ZonalSweepOptions {
  int min_hops = 1;
  int max_hops = 4;
  double be_load_pct = 80;
  std::uint64_t port_bps = 1'000'000'000;
  int cycles = 1000;
  std::uint64_t seed = 1;
  // Clock rows (shaper on) after the ideal on/strict/fifo rows of each hop
  // count: every gptp drift x wander x sync interval, every free drift x wander.
  std::vector<ZonalClock> clocks;          // kIdeal entries are ignored (the ideal rows are always there)
  std::vector<double> drift_ppm = {100};
  std::vector<double> wander_ppm_per_s = {0};
  std::vector<int> log_sync_intervals = {-3};
};

struct ZonalReport {
  ZonalSweepOptions options;
  std::vector<ZonalRow> rows;   // per hop count: on, strict, fifo (ideal clocks), then the clock rows
  ZonalCompromise compromise;   // max_hops, shaper on, ideal clocks
};

// Every hop count in [min_hops, max_hops] with each shaper setting, the
// clock rows, then the compromised-switch run at max_hops. Throws as
// run_zonal.
[[nodiscard]] ZonalReport run_zonal_sweep(const ZonalSweepOptions& o);

}  // namespace layersec::harness
