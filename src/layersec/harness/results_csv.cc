#include "layersec/harness/results_csv.h"

#include <nlohmann/json.hpp>

#include "layersec/harness/results_format.h"
#include "layersec/harness/results_json.h"

namespace layersec::harness {

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string csv_header() {
  return "name,series,paper_id,topology,security,key_distribution,delivery,subscribers,payload_bytes,"
         "iterations,completed,mean_us,p50_us,p95_us,p99_us,max_us,one_way_mean_us,one_way_p99_us,"
         "secoc_path_us,cpu_pct,cpu_us_per_iteration,rss_kib,baseline_p99_us,ratio_p99,ratio_mean,"
         "establishment_ms,security_rejections,timeouts,paper_mean_ms,paper_p99_ms,paper_source,"
         "timing_model,serial_mean_us,serial_p99_us";
}

void write_csv(std::ostream& out, const std::vector<ScenarioResult>& rows) {
  out << csv_header() << "\n";
  auto num = [](double v) { return format_fixed(v, 3); };
  auto onum = [](const std::optional<double>& v) { return format_optional(v, 4, ""); };
  for (const auto& r : rows) {
    const nlohmann::json p = paper_json(r);
    std::string paper_mean, paper_p99, paper_source;
    if (p.is_object()) {
      paper_mean = format_fixed(p["mean_ms"].get<double>(), 2);
      if (p.contains("p99_ms")) paper_p99 = format_fixed(p["p99_ms"].get<double>(), 2);
      paper_source = p["source"].get<std::string>();
    }
    out << csv_field(r.name) << ',' << csv_field(r.series) << ',' << csv_field(r.paper_id) << ','
        << csv_field(r.topology) << ',' << csv_field(r.security) << ',' << csv_field(r.key_distribution)
        << ',' << csv_field(r.delivery) << ',' << r.subscribers << ',' << r.payload_bytes << ','
        << r.iterations << ',' << r.latency.count << ',' << num(r.latency.mean) << ','
        << num(r.latency.p50) << ',' << num(r.latency.p95) << ',' << num(r.latency.p99) << ','
        << num(r.latency.max) << ',' << num(r.one_way.mean) << ',' << num(r.one_way.p99) << ','
        << num(r.secoc_path_us) << ',' << format_fixed(r.cpu_pct, 4) << ',' << num(r.cpu_us_per_iteration) << ','
        << r.rss_kib << ',' << onum(r.baseline_p99_us) << ',' << onum(r.ratio_p99) << ','
        << onum(r.ratio_mean) << ',' << onum(r.establishment_ms) << ',' << r.security_rejections << ','
        << r.timeouts << ',' << paper_mean << ',' << paper_p99 << ',' << csv_field(paper_source) << ','
        << csv_field(r.timing_model) << ',' << (r.serial_latency ? num(r.serial_latency->mean) : std::string())
        << ',' << (r.serial_latency ? num(r.serial_latency->p99) : std::string()) << "\n";
  }
}

}  // namespace layersec::harness
