#include "layersec/harness/paper.h"

namespace layersec::harness {

const std::vector<PaperScenario>& paper_scenarios() {
  static const std::vector<PaperScenario> rows = [] {
    std::vector<PaperScenario> r;
    // id, label, mean, p50, p95, p99 (Table 19); sd (16/18); path; cpu; mem; est; est sd
    auto add = [&r](std::string id, std::string label, double mean, double p50, double p95, double p99,
                    double sd, std::optional<double> path, double cpu, double mem,
                    std::optional<double> est, std::optional<double> est_sd, std::string source) {
      r.push_back({std::move(id), std::move(label), mean, p50, p95, p99, sd, path, cpu, mem, est, est_sd,
                   std::move(source)});
    };
    add("1-A", "Unsecured Unicast", 6.07, 6.02, 6.35, 6.48, 0.18, std::nullopt, 16, 43, std::nullopt,
        std::nullopt, "Tables 16, 19");
    add("1-B", "Unsecured Multicast", 6.12, 6.07, 6.34, 6.47, 0.15, std::nullopt, 16, 43, std::nullopt,
        std::nullopt, "Tables 16, 19");
    add("2a-A", "SecOC-PSK Unicast", 28.37, 28.20, 30.92, 32.12, 1.56, 15.72, 40, 52, std::nullopt,
        std::nullopt, "Tables 16, 19");
    add("2a-B", "SecOC-PSK Multicast", 30.71, 30.52, 33.54, 34.84, 1.72, 17.32, 40, 52, std::nullopt,
        std::nullopt, "Tables 16, 19");
    add("2b-A", "SecOC-RSA Unicast", 28.40, 28.22, 31.02, 32.24, 1.60, 15.75, 41, 55, 25.23, 2.6,
        "Tables 17, 18, 19");
    add("2b-B", "SecOC-RSA Multicast", 30.80, 30.61, 33.67, 35.02, 1.76, 17.38, 41, 55, 31.33, 3.2,
        "Tables 17, 18, 19");
    add("3a-A", "Hybrid-PSK Unicast", 29.70, 29.52, 33.19, 34.79, 2.12, 15.88, 42, 53, std::nullopt,
        std::nullopt, "Tables 16, 19");
    add("3a-B", "Hybrid-PSK Multicast", 33.89, 33.66, 38.58, 40.73, 2.85, 17.78, 42, 53, std::nullopt,
        std::nullopt, "Tables 16, 19");
    add("3b-A", "Hybrid-RSA Unicast", 29.75, 29.56, 33.34, 34.98, 2.18, 15.92, 43, 56, 26.65, 3.3,
        "Tables 17, 18, 19");
    add("3b-B", "Hybrid-RSA Multicast", 33.98, 33.74, 38.78, 40.99, 2.92, 17.85, 43, 56, 33.77, 4.1,
        "Tables 17, 18, 19");
    return r;
  }();
  return rows;
}

const PaperScenario* paper_scenario(std::string_view id) {
  for (const auto& s : paper_scenarios()) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

const std::vector<PaperGroupPoint>& paper_group_points() {
  static const std::vector<PaperGroupPoint> points = {
      {2, 33.9, 34.6}, {4, 34.1, 62.3}, {8, 34.6, 118.9}, {16, 35.4, 234.8}};
  return points;
}

std::optional<double> paper_hybrid_group_ms(int n) {
  for (const auto& p : paper_group_points()) {
    if (p.n == n) return p.hybrid_ms;
  }
  return std::nullopt;
}

}  // namespace layersec::harness
