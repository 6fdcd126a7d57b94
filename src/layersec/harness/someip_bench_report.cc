#include "layersec/harness/someip_bench_report.h"

#include "layersec/harness/results_format.h"
#include "layersec/harness/results_json.h"

namespace layersec::harness {

nlohmann::json to_json(const SomeipBenchRow& r) {
  nlohmann::json j = {
      {"name", r.name},
      {"topology", r.topology},
      {"measure", r.measure},
      {"iterations", r.iterations},
      {"payload_bytes", r.payload_bytes},
      {"msgs_per_s", r.msgs_per_s},
      {"cpu_pct", r.cpu_pct},
      {"timeouts", r.timeouts},
      {"secoc_protected", r.secoc_protected},
      {"secoc_verified", r.secoc_verified},
      {"secoc_rejected", r.secoc_rejected},
      {"baseline", r.baseline},
      {"baseline_mean_us", r.baseline_mean_us},
      {"baseline_p50_us", r.baseline_p50_us},
      {"baseline_p99_us", r.baseline_p99_us},
      {"ratio_mean", r.ratio_mean},
      {"ratio_p50", r.ratio_p50},
      {"ratio_p99", r.ratio_p99},
  };
  add_latency_fields(j, r.latency);
  return j;
}

nlohmann::json to_json(const SomeipGoal& g) {
  return {{"topology", g.topology}, {"what", g.what},       {"limit", g.limit},     {"ratio_p50", g.ratio_p50},
          {"ratio_p99", g.ratio_p99}, {"met_p50", g.met_p50}, {"met_p99", g.met_p99}};
}

nlohmann::json someip_bench_json(const SomeipBenchReport& rep) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : rep.rows) rows.push_back(to_json(r));
  nlohmann::json goals = nlohmann::json::array();
  for (const auto& g : rep.goals) goals.push_back(to_json(g));
  return {{"rows", rows},
          {"goals", goals},
          {"notes", rep.notes},
          {"reference",
           {{"source", "issue 4 (not measured by layersec)"},
            {"vsomeip_rtt_p50_us", 204},
            {"vsomeip_rtt_p99_us", 263},
            {"udp_rtt_p50_us", 53},
            {"udp_rtt_p99_us", 74}}}};
}

void write_someip_bench_method(std::ostream& out, const SomeipBenchOptions& o) {
  out << "layersec bench someip: SOME/IP runtime latency, unsecured and SecOC (vendor profile:\n"
         "CMAC-AES256, 64-bit MAC, 16-bit truncated FV) beside bare UDP, all measured in this run.\n"
         "method: closed loop, one message in flight, "
      << o.payload_bytes << "-byte payload, " << o.iterations << " measured + " << o.warmup
      << " warm-up exchanges per row,\n"
         "  rows interleaved in "
      << o.rounds
      << " blocks each.\n"
         "  udp-bare / rr-*: round trip on the client's CLOCK_MONOTONIC; event-*: one way,\n"
         "  server notify() -> client event handler (same machine, same clock).\n"
         "  sim: both runtimes on the in-process simulator, one thread; figures are REAL\n"
         "       wall time of the code path (framing, simulated switch, runtime, SecOC);\n"
         "       simulated link delay is not included.\n"
         "  netns: two network namespaces + veth, server on a thread in the other\n"
         "       namespace, SocketTransport + EventLoop on both sides, kernel UDP.\n\n";
}

void write_someip_bench_report(std::ostream& out, const SomeipBenchReport& rep) {
  for (const auto& n : rep.notes) out << "note: " << n << "\n";
  out << format_printf("%-8s %-16s %-10s %9s %9s %9s %9s %10s  %-16s %7s %7s\n", "topology", "name", "measure",
                       "mean_us", "p50_us", "p99_us", "max_us", "msgs/s", "baseline", "x p50", "x p99");
  for (const auto& r : rep.rows) {
    out << format_printf("%-8s %-16s %-10s %9.2f %9.2f %9.2f %9.2f %10.0f  %-16s", r.topology.c_str(),
                         r.name.c_str(), r.measure.c_str(), r.latency.mean, r.latency.p50, r.latency.p99,
                         r.latency.max, r.msgs_per_s, r.baseline.empty() ? "-" : r.baseline.c_str());
    if (r.baseline.empty())
      out << format_printf(" %7s %7s\n", "-", "-");
    else
      out << format_printf(" %7.3f %7.3f\n", r.ratio_p50, r.ratio_p99);
  }
  out << "\ngoals (issue 4):\n";
  for (const auto& g : rep.goals) {
    out << format_printf("  %-6s %-24s <= %.1fx: p50 %.3fx %s, p99 %.3fx %s\n", g.topology.c_str(), g.what.c_str(),
                         g.limit, g.ratio_p50, g.met_p50 ? "met" : "NOT met", g.ratio_p99,
                         g.met_p99 ? "met" : "NOT met");
  }
  out << "reference (the issue's figure, not measured here): vsomeip ~204 us median / 263 us p99\n"
         "round trip between two namespaces on this machine class, bare UDP ~53 / 74 us.\n";
}

}  // namespace layersec::harness
