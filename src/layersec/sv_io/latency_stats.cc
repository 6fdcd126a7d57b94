#include "layersec/sv_io/latency_stats.h"

#include <algorithm>

namespace layersec::sv_io {

Percentiles percentiles(std::vector<std::int64_t>& ns) {
  Percentiles r;
  if (ns.empty()) return r;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    const std::size_t i = std::min(ns.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ns.size())));
    return static_cast<double>(ns[i]) / 1000.0;
  };
  r.p50 = at(0.50);
  r.p99 = at(0.99);
  r.p999 = at(0.999);
  r.max = static_cast<double>(ns.back()) / 1000.0;
  double sum = 0;
  for (auto v : ns) sum += static_cast<double>(v);
  r.mean = sum / static_cast<double>(ns.size()) / 1000.0;
  return r;
}

nlohmann::json stats_json(std::vector<std::int64_t>& ns) {
  const auto p = percentiles(ns);
  return nlohmann::json{{"samples", ns.size()}, {"mean", p.mean}, {"p50", p.p50},
                        {"p99", p.p99},         {"p999", p.p999}, {"max", p.max}};
}

}  // namespace layersec::sv_io
