#include "layersec/harness/dtls_fanout_report.h"

#include "layersec/harness/results.h"
#include "layersec/harness/results_format.h"
#include "layersec/harness/results_json.h"

namespace layersec::harness {

nlohmann::json to_json(const FanoutRow& r) {
  nlohmann::json j = {
      {"name", to_string(r.variant)},
      {"topology", to_string(r.transport)},
      {"timing_model", r.timing_model},
      {"iterations", r.iterations},
      {"cpu_pct", r.cpu_pct},
      {"rss_kib", r.rss_kib},
      {"baseline", "multicast-unsecured"},
      {"baseline_p99_us", r.baseline_p99_us},
      {"ratio_p99", r.ratio_p99},
      {"n", r.n},
      {"subscribers", r.n},
      {"payload_bytes", r.payload_bytes},
      {"crypto_ops_per_msg", r.crypto_ops_per_msg},
      {"publisher_cpu_us_per_msg", r.publisher_cpu_us_per_msg},
      {"delivered", r.delivered},
      {"expected", r.expected},
  };
  add_latency_fields(j, r.latency);
  if (r.latency_serial.count > 0) {
    nlohmann::json serial = {{"timing_model", kSerialOneThread}};
    add_latency_fields(serial, r.latency_serial);
    j["serial_one_thread"] = std::move(serial);
  } else {
    j["serial_one_thread"] = nullptr;
  }
  if (r.variant == FanoutVariant::kDtlsFanout) {
    j["establishment_ms"] = r.handshake_ms_total;
    j["handshake_ms_total"] = r.handshake_ms_total;
    j["handshake_ms_per_session"] = r.handshake_ms_per_session;
    j["cipher"] = r.cipher;
    j["protocol"] = r.protocol;
    j["group_p99_us"] = r.group_p99_us;
    j["ratio_p99_vs_group"] = r.ratio_p99_vs_group;
  }
  return j;
}

nlohmann::json fanout_json(const std::vector<FanoutRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) j.push_back(to_json(r));
  return j;
}

void write_fanout_method(std::ostream& out, const FanoutOptions& o) {
  out << "layersec bench dtls: DTLS unicast fan-out vs group-keyed SecOC (seed paper 6.5, Table 21)\n"
         "note: Debian 12 ships no DTLS 1.3 library (OpenSSL 3.0 has none), so DTLS 1.2 with\n"
         "      ECDHE-ECDSA-AES128-GCM-SHA256 stands in for DTLS 1.3 TLS_AES_128_GCM_SHA256\n"
         "      (the same AES-128-GCM record protection per subscriber).\n"
         "method: closed loop, one message in flight, "
      << o.payload_bytes << "-byte payload, " << o.iterations << " measured + " << o.warmup
      << " warm-up messages per row;\n"
         "        latency = publisher starts sending -> last subscriber has decrypted/verified\n"
         "        (CLOCK_MONOTONIC); every delivery compared byte for byte. DTLS handshakes\n"
         "        are done before measurement and reported separately. loopback: UDP on\n"
         "        127.0.0.1, one thread + socket per subscriber, multicast via lo; memory:\n"
         "        one thread, in-process datagram queues; latency under the parallel-ECU\n"
         "        model: the publisher's sends are serial on its CPU, each subscriber\n"
         "        processes on its own CPU from when its datagram was sent (the serial\n"
         "        one-thread figure is kept in --json as serial_one_thread).\n"
         "        ops = publisher crypto operations per message (counted); pub_cpu = publisher\n"
         "        thread CPU per message for the publish step; ratio = p99 / p99 of\n"
         "        multicast-unsecured at the same N and transport, same run.\n\n";
  out << format_printf("%-9s %3s  %-20s %9s %9s %9s %9s %9s  %6s  %8s  %7s  %6s\n", "transport", "N", "name",
                       "mean_us", "p50_us", "p95_us", "p99_us", "max_us", "ops", "pub_cpu", "ratio", "cpu%");
}

void write_fanout_row(std::ostream& out, const FanoutRow& r) {
  out << format_printf("%-9s %3zu  %-20s %9.1f %9.1f %9.1f %9.1f %9.1f  %6.1f  %8.2f  %7.2f  %6.1f",
                       to_string(r.transport), r.n, to_string(r.variant), r.latency.mean, r.latency.p50,
                       r.latency.p95, r.latency.p99, r.latency.max, r.crypto_ops_per_msg,
                       r.publisher_cpu_us_per_msg, r.ratio_p99, r.cpu_pct);
  if (r.variant == FanoutVariant::kDtlsFanout) {
    out << format_printf("  vs group p99 x%.2f, handshakes %.1f ms (%.2f ms each)", r.ratio_p99_vs_group,
                         r.handshake_ms_total, r.handshake_ms_per_session);
  }
  out << "\n" << std::flush;
}

void write_fanout_negotiated(std::ostream& out, const std::vector<FanoutRow>& rows) {
  for (const auto& r : rows) {
    if (r.variant == FanoutVariant::kDtlsFanout) {
      out << "\nDTLS negotiated: " << r.protocol << " " << r.cipher << "\n";
      return;
    }
  }
}

}  // namespace layersec::harness
