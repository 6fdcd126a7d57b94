#include "layersec/harness/dtls_fanout.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layersec/harness/dtls_fanout_report.h"
#include "layersec/harness/dtls_fanout_rows.h"

namespace layersec::harness {
namespace {

std::vector<std::uint8_t> payload(std::uint64_t seq, std::size_t n = 64) {
  std::vector<std::uint8_t> p(n);
  fill_payload(seq, p);
  return p;
}

TEST(FillPayload, DiffersPerMessage) {
  EXPECT_NE(payload(1), payload(2));
  EXPECT_EQ(payload(7), payload(7));
  EXPECT_EQ(payload(0x0102030405060708)[0], 0x01);
  EXPECT_EQ(payload(0x0102030405060708)[7], 0x08);
}

TEST(DtlsMemorySession, HandshakeNegotiatesDtls12AesGcmAndDeliversIntact) {
  DtlsContext ctx;
  DtlsMemorySession s(ctx);
  s.handshake();
  EXPECT_EQ(s.protocol(), "DTLSv1.2");
  EXPECT_EQ(s.cipher(), "ECDHE-ECDSA-AES128-GCM-SHA256");
  std::vector<std::uint8_t> out(256);
  for (std::uint64_t seq = 0; seq < 20; ++seq) {
    const auto msg = payload(seq);
    ASSERT_TRUE(s.publisher_write(msg));
    ASSERT_EQ(s.to_subscriber().size(), 1u) << "one record, one datagram";
    // On the wire: DTLS header (13) + explicit nonce (8) + ciphertext + tag (16).
    EXPECT_EQ(s.to_subscriber().front().size(), 13u + 8u + msg.size() + 16u);
    EXPECT_NE(std::vector<std::uint8_t>(s.to_subscriber().front().end() - 16 - 64,
                                        s.to_subscriber().front().end() - 16),
              msg)
        << "payload must not travel in clear";
    auto n = s.subscriber_read(out);
    ASSERT_TRUE(n.has_value());
    ASSERT_EQ(*n, msg.size());
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*n)), msg);
  }
}

TEST(DtlsMemorySession, TamperedRecordIsRejectedAndNextOneStillDecrypts) {
  DtlsContext ctx;
  DtlsMemorySession s(ctx);
  s.handshake();
  std::vector<std::uint8_t> out(256);
  // Byte 20: last byte of the explicit nonce (record header is 13 bytes,
  // nonce 8); byte 40: inside the ciphertext.
  for (std::size_t pos : {std::size_t{20}, std::size_t{40}}) {
    ASSERT_TRUE(s.publisher_write(payload(pos)));
    auto& dgram = s.to_subscriber().front();
    dgram[pos] ^= 0x01;
    EXPECT_FALSE(s.subscriber_read(out).has_value()) << "OpenSSL accepted a tampered record (byte " << pos << ")";
    EXPECT_TRUE(s.to_subscriber().empty()) << "the tampered datagram was consumed and discarded";
  }
  {
    ASSERT_TRUE(s.publisher_write(payload(99)));
    auto& dgram = s.to_subscriber().front();
    dgram.back() ^= 0x80;  // last byte of the GCM tag
    EXPECT_FALSE(s.subscriber_read(out).has_value());
  }
  const auto good = payload(100);
  ASSERT_TRUE(s.publisher_write(good));
  auto n = s.subscriber_read(out);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*n)), good);
}

FanoutOptions small(std::size_t iterations) {
  FanoutOptions o;
  o.iterations = iterations;
  o.warmup = 2;
  return o;
}

TEST(RunFanout, MemoryDtlsDeliversEveryMessageToEverySubscriber) {
  const FanoutRow r = run_fanout(FanoutVariant::kDtlsFanout, FanoutTransport::kMemory, 5, small(12));
  EXPECT_EQ(r.expected, 5u * 14u);
  EXPECT_EQ(r.delivered, r.expected);
  EXPECT_DOUBLE_EQ(r.crypto_ops_per_msg, 5.0);
  EXPECT_EQ(r.latency.count, 12u);
  EXPECT_GT(r.handshake_ms_total, 0);
  EXPECT_EQ(r.protocol, "DTLSv1.2");
}

TEST(RunFanout, MemoryGroupSecocProtectsOncePerMessage) {
  const FanoutRow r = run_fanout(FanoutVariant::kGroupSecoc, FanoutTransport::kMemory, 6, small(10));
  EXPECT_EQ(r.delivered, 6u * 12u);
  EXPECT_DOUBLE_EQ(r.crypto_ops_per_msg, 1.0);
  const FanoutRow u = run_fanout(FanoutVariant::kUnsecuredMulticast, FanoutTransport::kMemory, 6, small(10));
  EXPECT_EQ(u.delivered, u.expected);
  EXPECT_DOUBLE_EQ(u.crypto_ops_per_msg, 0.0);
}

TEST(RunFanout, MemoryRowsCarryBothTimingModels) {
  // Per message the parallel-ECU figure (max over receivers of send time +
  // own processing) cannot exceed the serial one (publish, then every
  // receiver in turn), so neither can any order statistic.
  for (FanoutVariant v : {FanoutVariant::kDtlsFanout, FanoutVariant::kGroupSecoc, FanoutVariant::kUnsecuredMulticast}) {
    const FanoutRow r = run_fanout(v, FanoutTransport::kMemory, 4, small(10));
    EXPECT_EQ(r.timing_model, "parallel-ecus") << to_string(v);
    ASSERT_EQ(r.latency_serial.count, r.latency.count) << to_string(v);
    EXPECT_GT(r.latency.min, 0) << to_string(v);
    EXPECT_LE(r.latency.min, r.latency_serial.min) << to_string(v);
    EXPECT_LE(r.latency.mean, r.latency_serial.mean) << to_string(v);
    EXPECT_LE(r.latency.p99, r.latency_serial.p99) << to_string(v);
    EXPECT_LE(r.latency.max, r.latency_serial.max) << to_string(v);
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["timing_model"], "parallel-ecus");
    ASSERT_TRUE(j["serial_one_thread"].is_object());
    EXPECT_EQ(j["serial_one_thread"]["timing_model"], "serial-one-thread");
    EXPECT_EQ(j["serial_one_thread"]["completed"].get<std::size_t>(), 10u);
  }
}

TEST(RunFanout, LoopbackDtlsAndGroupDeliverIntact) {
  for (FanoutVariant v : {FanoutVariant::kDtlsFanout, FanoutVariant::kGroupSecoc, FanoutVariant::kUnsecuredMulticast}) {
    const FanoutRow r = run_fanout(v, FanoutTransport::kLoopback, 3, small(8));
    EXPECT_EQ(r.delivered, 3u * 10u) << to_string(v);
    EXPECT_EQ(r.latency.count, 8u);
    EXPECT_EQ(r.timing_model, "real-threads");
    EXPECT_EQ(r.latency_serial.count, 0u);
    EXPECT_GT(r.latency.max, 0) << to_string(v);
    EXPECT_LE(r.latency.p50, r.latency.max);
  }
}

TEST(RunFanoutTable, RowsHaveTheHarnessLayout) {
  FanoutOptions o = small(6);
  o.group_sizes = {2, 3};
  o.transports = {FanoutTransport::kMemory};
  std::size_t progress = 0;
  const auto rows = run_fanout_table(o, [&](const FanoutRow&) { ++progress; });
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(progress, 6u);
  for (const auto& r : rows) {
    const nlohmann::json j = to_json(r);
    for (const char* k : {"name", "topology", "iterations", "mean_us", "p50_us", "p95_us", "p99_us", "max_us",
                          "cpu_pct", "rss_kib", "baseline_p99_us", "ratio_p99", "n", "crypto_ops_per_msg"})
      EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["topology"], "memory");
    EXPECT_GT(j["baseline_p99_us"].get<double>(), 0);
    EXPECT_NEAR(j["ratio_p99"].get<double>(), j["p99_us"].get<double>() / j["baseline_p99_us"].get<double>(), 1e-9);
    if (j["name"] == "dtls-fanout") {
      EXPECT_EQ(j["crypto_ops_per_msg"].get<double>(), j["n"].get<double>());
      EXPECT_TRUE(j.contains("handshake_ms_total"));
      EXPECT_GT(j["group_p99_us"].get<double>(), 0);
    }
  }
  EXPECT_EQ(to_json(rows[0])["name"], "multicast-unsecured");
  EXPECT_EQ(to_json(rows[1])["name"], "group-secoc");
  EXPECT_EQ(to_json(rows[2])["name"], "dtls-fanout");
  EXPECT_EQ(rows[3].n, 3u);
  EXPECT_EQ(fanout_json(rows).size(), rows.size());
  // The same rows in the scenario harness's layout (bench scenarios).
  const ScenarioResult dtls = to_scenario_result(rows[2]);
  EXPECT_EQ(dtls.name, "dtls-fanout-n2");
  EXPECT_EQ(dtls.series, "dtls-fanout");
  EXPECT_EQ(dtls.topology, "memory");
  EXPECT_EQ(dtls.security, "dtls");
  EXPECT_EQ(dtls.delivery, "unicast");
  EXPECT_EQ(dtls.timing_model, "parallel-ecus");
  EXPECT_DOUBLE_EQ(dtls.one_way.p99, rows[2].latency.p99);
  ASSERT_TRUE(dtls.establishment_ms.has_value());
  EXPECT_DOUBLE_EQ(*dtls.establishment_ms, rows[2].handshake_ms_total);
  EXPECT_EQ(dtls.timeouts, 0u);
  EXPECT_EQ(to_scenario_result(rows[1]).key_distribution, "group-psk");
  // A memory row that did not name its model is the parallel-ECU figure.
  FanoutRow unnamed = rows[0];
  unnamed.timing_model.clear();
  EXPECT_EQ(to_scenario_result(unnamed).timing_model, "parallel-ecus");
  // The terminal writer: one line per row, the DTLS one with its handshakes.
  std::ostringstream text;
  write_fanout_row(text, rows[2]);
  write_fanout_negotiated(text, rows);
  EXPECT_EQ(text.str().rfind("memory      2  dtls-fanout", 0), 0u) << text.str();
  EXPECT_NE(text.str().find("handshakes"), std::string::npos);
  EXPECT_NE(text.str().find("DTLS negotiated: DTLSv1.2"), std::string::npos);
}

}  // namespace
}  // namespace layersec::harness
