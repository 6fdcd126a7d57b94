#include "layersec/harness/zonal_report.h"

#include <optional>
#include <vector>

#include "layersec/harness/results_format.h"

namespace layersec::harness {

namespace {
double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

nlohmann::json bound_json(const std::optional<std::int64_t>& b) {
  return b ? nlohmann::json(us(*b)) : nlohmann::json(nullptr);
}

const char* kMethod =
    "topology: central node C - Z1 - ... - Zh (zonal switches in a chain, each a simulated segment), behind every Zk "
    "one ECU (100 Mbit/s link) and two cameras; MACsec GCM-AES-128 hop by hop on every link (each switch validates "
    "on ingress and protects again with the next link's SA); SecOC vendor profile end to end ECU -> C over SOME/IP "
    "notifications (header authenticated); ST = the events (PCP 6, one per ECU per 1 ms cycle, released at the "
    "cycle start), BE = camera UDP (PCP 0, 1,478-byte frames in bursts of 8). Latency: simulated time, ECU send -> "
    "SecOC verified at C, exact ns; the row's ST figures are the farthest ECU's (h switches). shaper on: 802.1Qbv "
    "windows placed hop by hop for each ECU's frame, exclusive gates, guard band; strict: same ports, all gates "
    "open; fifo: no shaper. bound: tsn::latency_bound per egress port (worst arrival in the cycle, blocking, "
    "same-class frames of other ECUs) + 2 us switching per switch + 100 ns cable per link; planned: where the "
    "windows expect the frame (wire + cable + switching). BE throughput: wire rate delivered to C.";

const char* kClockMethod =
    "clock rows (shaper on): every node (C, switches, ECUs) has its own oscillator, its frequency error at the start "
    "drawn (seeded) uniformly in +-drift_ppm and changing linearly at a rate drawn in +-wander_ppm_per_s (a "
    "temperature ramp); each egress port's gates run on its node's clock and each ECU releases at "
    "its own cycle start. free: the oscillators agree at the start of the run and drift apart. gptp: a gPTP "
    "simulator (802.1AS automotive profile: C grandmaster, every switch a relay, every ECU a slave; 3 ns timestamp "
    "noise, 600 ns links, 50 us relay residence) runs beside the network on the same topology, converges for 30 s + "
    "40 sync intervals, then disciplines the clocks during the run (servo updates recorded, applied at their "
    "simulated instants). misalign: at every cycle start, the difference between the true times at which adjacent "
    "egress ports of the farthest ECU's path (ECU, Zh, ..., Z1) read the same local time (their corresponding gate "
    "events), max and rms; path: first against last port.";

nlohmann::json ms_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json to_json(const ZonalRow& r) {
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : r.streams) {
    streams.push_back({{"zone", s.zone},
                       {"sent", s.sent},
                       {"accepted", s.accepted},
                       {"secoc_rejected", s.secoc_rejected},
                       {"min_us", us(s.min_ns)},
                       {"p50_us", us(s.p50_ns)},
                       {"p99_us", us(s.p99_ns)},
                       {"max_us", us(s.max_ns)},
                       {"bound_us", bound_json(s.bound_ns)},
                       {"planned_us", us(s.planned_ns)},
                       {"over_bound", s.over_bound}});
  }
  return {{"hops", r.hops},
          {"shaper", to_string(r.shaper)},
          {"be_load_pct", r.be_load_pct},
          {"port_mbit", r.port_bps / 1'000'000},
          {"ecu_mbit", r.ecu_bps / 1'000'000},
          {"cycles", r.cycles},
          {"st_sent", r.st_sent},
          {"st_lost", r.st_lost},
          {"st_min_us", us(r.st_min_ns)},
          {"st_p50_us", us(r.st_p50_ns)},
          {"st_p99_us", us(r.st_p99_ns)},
          {"st_max_us", us(r.st_max_ns)},
          {"bound_us", bound_json(r.bound_ns)},
          {"planned_us", us(r.planned_ns)},
          {"st_over_bound", r.st_over_bound},
          {"be_sent", r.be_sent},
          {"be_dropped", r.be_dropped},
          {"be_offered_mbit_s", r.be_offered_mbit_s},
          {"be_throughput_mbit_s", r.be_throughput_mbit_s},
          {"transmission_overruns", r.transmission_overruns},
          {"macsec_drops", r.macsec_drops},
          {"clock", to_string(r.clock)},
          {"drift_ppm", r.drift_ppm},
          {"wander_ppm_per_s", r.wander_ppm_per_s},
          {"sync_interval_ms", ms_json(r.sync_interval_ms)},
          {"misalign_max_ns", r.misalign.max_abs_ns},
          {"misalign_rms_ns", r.misalign.rms_ns},
          {"misalign_path_max_ns", r.misalign.path_max_abs_ns},
          {"start_offset_max_ns", r.start_offset_max_ns},
          {"streams", streams}};
}

nlohmann::json to_json(const ZonalCompromise& c) {
  return {{"hops", c.hops},
          {"switch", "Z1"},
          {"st_sent", c.st_sent},
          {"read_plaintext", c.read_plaintext},
          {"example_read", c.example_read},
          {"altered", c.altered},
          {"macsec_accepted_at_central", c.macsec_accepted_at_central},
          {"secoc_rejected", c.secoc_rejected},
          {"accepted", c.accepted}};
}

nlohmann::json zonal_json(const ZonalReport& rep) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : rep.rows) rows.push_back(to_json(r));
  nlohmann::json clocks = nlohmann::json::array();
  for (ZonalClock c : rep.options.clocks) clocks.push_back(to_string(c));
  nlohmann::json intervals = nlohmann::json::array();
  for (int l : rep.options.log_sync_intervals) intervals.push_back(sync_interval_ms(l));
  return {{"method", kMethod},
          {"clock_method", kClockMethod},
          {"options",
           {{"min_hops", rep.options.min_hops},
            {"max_hops", rep.options.max_hops},
            {"be_load_pct", rep.options.be_load_pct},
            {"port_mbit", rep.options.port_bps / 1'000'000},
            {"cycles", rep.options.cycles},
            {"seed", rep.options.seed},
            {"clocks", clocks},
            {"drift_ppm", rep.options.drift_ppm},
            {"wander_ppm_per_s", rep.options.wander_ppm_per_s},
            {"sync_interval_ms", intervals}}},
          {"rows", rows},
          {"compromised_switch", to_json(rep.compromise)}};
}

void write_zonal_method(std::ostream& out, const ZonalSweepOptions& o) {
  out << "layersec bench zonal: ST control events across " << o.min_hops << "-" << o.max_hops
      << " zonal switches under " << o.be_load_pct << " % camera load, backbone " << o.port_bps / 1'000'000
      << " Mbit/s, " << o.cycles << " cycles of 1 ms per row (seed " << o.seed << ")\n"
      << "method: " << kMethod << "\n";
  bool clocked = false;
  for (ZonalClock c : o.clocks) clocked = clocked || c != ZonalClock::kIdeal;
  if (clocked) out << "clocks: " << kClockMethod << "\n";
  out << "\n";
}

void write_zonal_report(std::ostream& out, const ZonalReport& rep) {
  out << format_printf("%4s %-7s %7s %5s %10s %10s %10s %10s %10s %10s %10s\n", "hops", "shaper", "st_sent", "lost",
                       "p50_us", "p99_us", "max_us", "planned_us", "bound_us", "over_bnd", "be_Mbit/s");
  for (const auto& r : rep.rows) {
    if (r.clock != ZonalClock::kIdeal) continue;
    const std::string bound = r.bound_ns ? format_printf("%.3f", us(*r.bound_ns)) : std::string("-");
    out << format_printf("%4d %-7s %7llu %5llu %10.3f %10.3f %10.3f %10.3f %10s %10llu %10.1f\n", r.hops,
                         to_string(r.shaper), static_cast<unsigned long long>(r.st_sent),
                         static_cast<unsigned long long>(r.st_lost), us(r.st_p50_ns), us(r.st_p99_ns), us(r.st_max_ns),
                         us(r.planned_ns), bound.c_str(), static_cast<unsigned long long>(r.st_over_bound),
                         r.be_throughput_mbit_s);
  }
  bool clocked = false;
  for (const auto& r : rep.rows) clocked = clocked || r.clock != ZonalClock::kIdeal;
  if (clocked) {
    out << "\nshaper on, per-node clocks (misalign: adjacent egress ports of the farthest path; ideal = the row above)\n"
        << format_printf("%4s %-6s %5s %6s %8s %11s %11s %11s %5s %10s %10s %10s %8s\n", "hops", "clock", "ppm",
                         "ppm/s", "sync_ms", "misal_max", "misal_rms", "path_max", "lost", "p99_us", "max_us", "bound_us",
                         "over_bnd");
    // Per hop count: the ideal row (the baseline of the same run), then the clock rows.
    std::vector<const ZonalRow*> order;
    for (int hops = rep.options.min_hops; hops <= rep.options.max_hops; ++hops)
      for (const auto& r : rep.rows)
        if (r.hops == hops && r.shaper == ZonalShaper::kOn) order.push_back(&r);
    for (const ZonalRow* row : order) {
      const ZonalRow& r = *row;
      const std::string sync = r.sync_interval_ms ? format_printf("%.2f", *r.sync_interval_ms) : std::string("-");
      const std::string bound = r.bound_ns ? format_printf("%.3f", us(*r.bound_ns)) : std::string("-");
      out << format_printf("%4d %-6s %5.0f %6.2f %8s %9.1fns %9.1fns %9.1fns %5llu %10.3f %10.3f %10s %8llu\n", r.hops,
                           to_string(r.clock), r.drift_ppm, r.wander_ppm_per_s, sync.c_str(), r.misalign.max_abs_ns, r.misalign.rms_ns,
                           r.misalign.path_max_abs_ns, static_cast<unsigned long long>(r.st_lost), us(r.st_p99_ns),
                           us(r.st_max_ns), bound.c_str(), static_cast<unsigned long long>(r.st_over_bound));
    }
  }
  const ZonalCompromise& c = rep.compromise;
  out << "\ncompromised switch Z1 (holds its links' MACsec keys), " << c.hops << " hops, shaper on:\n"
      << "  read in the clear: " << c.read_plaintext << " of " << c.st_sent << " events, e.g. " << c.example_read
      << "\n"
      << "  altered and re-protected: " << c.altered << "; MACsec at C accepted " << c.macsec_accepted_at_central
      << "; SecOC at C rejected " << c.secoc_rejected << "; altered events accepted: " << c.accepted << "\n";
}

}  // namespace layersec::harness
