#include "layersec/sv_io/bench_report.h"

#include <string>

#include "layersec/sv/profiles.h"
#include "layersec/sv_io/bench_rows.h"
#include "layersec/sv_io/host.h"

namespace layersec::sv_io {
namespace {

const char* const kBenchSchemes[] = {"none", "hmac-sha256", "aes-gmac-128", "blake2s", "chaskey12-full",
                                     "chaskey12-selective"};

}  // namespace

nlohmann::json run_sv_bench(const SvBenchOptions& o, std::FILE* out) {
  const std::size_t frames = o.frames ? o.frames : (o.smoke ? 500 : 100'000);
  const std::size_t mac_iters = o.smoke ? 1'000 : 100'000;
  nlohmann::json rows = nlohmann::json::array();
  const std::string load_before = loadavg();
  std::fprintf(out, "layersec bench sv: %zu frames per row, MAC mean of %zu (thread CPU time); publisher = patch + MAC + "
                    "copy to a TX slot; load average %s\n",
                    frames, mac_iters, load_before.c_str());
  std::fprintf(out, "%-20s %-20s %6s %9s %9s %8s %8s %8s %9s %8s %8s %7s\n", "profile", "scheme", "bytes", "mac_ns",
                    "ia_us", "p50_us", "p99_us", "max_us", "margin", "sub_p99", "x_none", "rss");
  for (const auto& p : sv::paper_profiles()) {
    double none_p99 = 0;
    for (const char* s : kBenchSchemes) {
      auto row = bench_row(p, s, frames, mac_iters);
      if (std::string(s) == "none") none_p99 = row["p99_us"].get<double>();
      row["p99_vs_none"] = none_p99 > 0 ? row["p99_us"].get<double>() / none_p99 : 0.0;
      std::fprintf(out, "%-20s %-20s %6zu %9.1f %9.3f %8.3f %8.3f %8.2f %9.1f %8.3f %8.2f %7ld\n",
                        row["profile"].get<std::string>().c_str(), s, row["frame_bytes"].get<std::size_t>(),
                        row["mac_ns"].get<double>(), row["interarrival_us"].get<double>(), row["p50_us"].get<double>(),
                        row["p99_us"].get<double>(), row["max_us"].get<double>(), row["margin_p99"].get<double>(),
                        row["sub_p99_us"].get<double>(), row["p99_vs_none"].get<double>(), row["rss_kib"].get<long>());
      rows.push_back(std::move(row));
    }
  }
  nlohmann::json pacing = nlohmann::json::array();
  const double pace_s = o.smoke ? 0.01 : o.pacing_s;
  std::fprintf(out, "\npaced sending on absolute deadlines (clock_nanosleep TIMER_ABSTIME to 60 us before, then spin; "
                    "%.2f s per profile, chaskey12-selective; lateness = processing start - deadline):\n%-20s %9s %8s %8s %8s %10s %10s %10s\n",
                    pace_s, "profile", "ia_us", "due", "sent", "skipped", "late_p50", "late_p99", "late_max");
  for (const auto& p : sv::paper_profiles()) {
    auto row = pacing_row(p, pace_s);
    std::fprintf(out, "%-20s %9.3f %8zu %8zu %8llu %10.2f %10.2f %10.2f\n", row["profile"].get<std::string>().c_str(),
                      row["interarrival_us"].get<double>(), row["frames_due"].get<std::size_t>(),
                      row["frames_sent"].get<std::size_t>(),
                      static_cast<unsigned long long>(row["frames_skipped"].get<std::uint64_t>()),
                      row["lateness_p50_us"].get<double>(), row["lateness_p99_us"].get<double>(),
                      row["lateness_max_us"].get<double>());
    pacing.push_back(std::move(row));
  }
  nlohmann::json kdc_rows = nlohmann::json::array();
  const std::size_t kdc_iters = o.smoke ? 5 : 200;
  std::fprintf(out, "\nKDC (ML-KEM), %zu handshakes per set, wall time in us (mean / p99): request = IED encaps + "
                    "tag, verify = KDC decaps + checks + confirm + sealing the IED's current group key, confirm = IED check; seal/open = one group-key "
                    "distribution:\n%-12s %18s %16s %16s %16s %16s %16s %7s %7s %7s\n",
                    kdc_iters, "kem", "handshake", "request", "verify", "confirm", "seal", "open", "req_B", "res_B",
                    "dist_B");
  for (auto kem : {kex::KemScheme::kMlKem512, kex::KemScheme::kMlKem768, kex::KemScheme::kMlKem1024}) {
    auto row = kdc_row(kem, kdc_iters + 1);
    auto ms = [&](const char* k) {
      char b[40];
      std::snprintf(b, sizeof b, "%.1f / %.1f", row[k]["mean"].get<double>(), row[k]["p99"].get<double>());
      return std::string(b);
    };
    std::fprintf(out, "%-12s %18s %16s %16s %16s %16s %16s %7zu %7zu %7zu\n", row["kem"].get<std::string>().c_str(),
                      ms("handshake_us").c_str(), ms("ied_request_us").c_str(), ms("kdc_verify_us").c_str(),
                      ms("ied_confirm_us").c_str(), ms("distribution_seal_us_per_member").c_str(),
                      ms("distribution_open_us").c_str(), row["request_bytes"].get<std::size_t>(),
                      row["response_bytes"].get<std::size_t>(), row["distribution_bytes"].get<std::size_t>());
    kdc_rows.push_back(std::move(row));
  }
  std::fprintf(out, "\nReference (the paper's figures, Raspberry Pi, not measured here): publisher 71.93 us/frame "
                    "for 1-ASDU profiles, failing the 96 kHz profile's 10.4 us interarrival.\n");
  nlohmann::json doc{{"rows", rows},
                     {"loadavg_before", load_before},
                     {"loadavg_after", loadavg()},
                     {"frames_per_row", frames},
                     {"mac_iterations", mac_iters},
                     {"pacing", pacing},
                     {"kdc", kdc_rows},
                     {"smoke", o.smoke},
                     {"paper_reference",
                      {{"publisher_us_per_frame_1asdu", 71.93},
                       {"interarrival_96khz_us", 10.4},
                       {"note", "figures reported by arXiv 2608.22123 on a Raspberry Pi testbed, not measured here"}}}};
  return doc;
}

}  // namespace layersec::sv_io
