#include "layersec/harness/dtls_fanout_rows.h"

#include <functional>
#include <string>

namespace layersec::harness {

ScenarioResult to_scenario_result(const FanoutRow& f) {
  ScenarioResult r;
  const std::string variant = to_string(f.variant);
  const bool dtls = f.variant == FanoutVariant::kDtlsFanout;
  const bool group = f.variant == FanoutVariant::kGroupSecoc;
  r.name = variant + "-n" + std::to_string(f.n);
  r.series = "dtls-fanout";
  r.label = variant + ", " + std::to_string(f.n) + " subscribers (" + to_string(f.transport) +
            " transport, latency to the last receiver)";
  r.topology = to_string(f.transport);
  r.security = dtls ? "dtls" : group ? "secoc" : "none";
  r.key_distribution = dtls ? "dtls-handshake" : group ? "group-psk" : "none";
  r.delivery = dtls ? "unicast" : "multicast";
  r.subscribers = static_cast<int>(f.n);
  r.payload_bytes = f.payload_bytes;
  r.iterations = static_cast<int>(f.iterations);
  // Over the memory transport the latency is the parallel-ECU figure
  // (dtls_fanout.h), whether or not the row said so.
  r.timing_model = f.timing_model.empty() && f.transport == FanoutTransport::kMemory ? kParallelEcus
                                                                                      : f.timing_model;
  r.latency = f.latency;
  r.one_way = f.latency;  // the fan-out measures one way (publish -> last receiver)
  if (f.latency_serial.count > 0) {
    r.serial_latency = f.latency_serial;
    r.serial_one_way = f.latency_serial;
  }
  r.cpu_us_per_iteration = f.publisher_cpu_us_per_msg;
  r.cpu_pct = f.cpu_pct;
  r.rss_kib = f.rss_kib;
  if (f.baseline_p99_us > 0) {
    r.baseline_p99_us = f.baseline_p99_us;
    r.ratio_p99 = f.ratio_p99;
  }
  if (f.handshake_ms_total > 0) r.establishment_ms = f.handshake_ms_total;
  r.timeouts = f.expected - f.delivered;
  r.notes = "publisher crypto ops per message " + std::to_string(f.crypto_ops_per_msg) +
            "; publisher CPU per message " + std::to_string(f.publisher_cpu_us_per_msg) + " us" +
            (f.protocol.empty() ? std::string()
                                : "; " + f.protocol + " " + f.cipher + " (Debian 12 ships no DTLS 1.3 library)");
  return r;
}

std::vector<ScenarioResult> run_fanout_scenario_rows(const BenchScenarioOptions& o, std::ostream& err) {
  FanoutOptions fo;
  fo.transports = {FanoutTransport::kMemory};
  fo.group_sizes.clear();
  if (o.group_sizes.empty()) {
    fo.group_sizes = o.quick ? std::vector<std::size_t>{2, 8} : std::vector<std::size_t>{2, 4, 8, 16, 32, 64};
  } else {
    for (int n : o.group_sizes) fo.group_sizes.push_back(static_cast<std::size_t>(n));
  }
  fo.iterations = static_cast<std::size_t>(o.iterations);
  err << "dtls fan-out baseline: OpenSSL DTLS 1.2 (Debian 12 ships no DTLS 1.3 library), in-process memory "
         "transport\n";
  std::vector<ScenarioResult> rows;
  // On a terminal (options.progress): one line per group size, rewritten per row.
  const std::size_t total = 3 * fo.group_sizes.size();
  std::size_t done = 0;
  std::function<void(const FanoutRow&)> progress;
  if (o.progress) {
    progress = [&](const FanoutRow& f) {
      ++done;
      err << "\r[dtls " << done << "/" << total << "] " << to_string(f.variant) << " N=" << f.n << "        "
          << (done % 3 == 0 ? "\n" : "") << std::flush;
    };
  }
  for (const auto& f : run_fanout_table(fo, progress)) rows.push_back(to_scenario_result(f));
  return rows;
}

}  // namespace layersec::harness
