// DTLS unicast fan-out baseline (the seed paper's §6.5, Table 21) beside the
// group-keyed equivalent, measured in the same run over the same transport.
//
// One publisher, N subscribers. Three variants per N:
//   multicast-unsecured  one datagram per message reaching every subscriber
//                        (loopback: one IPv4 multicast sendto; memory: one
//                        buffer every subscriber reads) - the baseline;
//   group-secoc          one SecOC protect (vendor profile: CMAC-AES256,
//                        64-bit MAC, 16-bit truncated freshness) + the same
//                        single send; every subscriber verifies with its own
//                        secoc::Engine;
//   dtls-fanout          one DTLS 1.2 session per subscriber (OpenSSL,
//                        ECDHE-ECDSA-AES128-GCM-SHA256, a throwaway P-256
//                        self-signed certificate generated in memory), all
//                        handshakes done before measurement; per message one
//                        SSL_write (one record encryption, one sendto) per
//                        session, in a loop on the publisher's thread.
//
// Debian 12 ships no DTLS 1.3 implementation (OpenSSL 3.0 has none), so
// DTLS 1.2 with the AES-128-GCM suite stands in for the paper's DTLS 1.3
// TLS_AES_128_GCM_SHA256: the per-record work (one AES-GCM seal) is the same.
//
// Transports:
//   loopback  real UDP sockets on 127.0.0.1; each subscriber is a thread with
//             its own socket (blocking, 100 ms receive timeout to notice stop);
//   memory    everything on one thread, datagrams carried by in-process queues
//             (a custom datagram BIO for DTLS, so record boundaries are kept);
//             no kernel, deterministic apart from the CPU itself.
//
// Closed loop, one message in flight: a message is sent only after every
// subscriber has received (and decrypted / verified) the previous one.
// Latency = time the last subscriber finished receiving minus the time the
// publisher started sending (one monotonic clock).
//
// Timing models (FanoutRow::timing_model, docs/harness.md):
//   loopback  "real-threads": the subscribers really run in parallel on
//             their threads (on as many cores as the host gives them);
//   memory    "parallel-ecus": the publisher's and every subscriber's work is
//             timed piece by piece on the one thread and placed on one CPU
//             per node: the publisher's sends are serial on its CPU (for
//             DTLS its per-session encrypt + send times accumulate), each
//             subscriber starts when its datagram has been sent, so latency
//             = max over subscribers i of (publisher time when i's datagram
//             was sent + i's receive processing). The serial one-thread
//             figure (publish, then all N receive paths one after the other)
//             is kept as FanoutRow::latency_serial. The clock reads that time
//             the pieces (one per DTLS send, one per receiver) are in both.
// Every delivered payload is compared byte for byte with what was sent; a
// message that does not reach every subscriber intact within the receive
// timeout aborts the run with std::runtime_error (no figure is produced).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"
#include "layersec/harness/stats.h"

namespace layersec::harness {

// Deterministic test payload of message `seq`: seq as 8 big-endian bytes,
// then a pattern depending on seq and position (so a stale or reordered
// message does not compare equal).
void fill_payload(std::uint64_t seq, MutableByteSpan out);

// --- DTLS building blocks (also used by the tests) ---------------------------

// Server and client SSL_CTX for DTLS 1.2 only, cipher list restricted to
// ECDHE-ECDSA-AES128-GCM-SHA256, sharing a P-256 self-signed certificate
// generated in memory at construction. The client trusts exactly that
// certificate (SSL_VERIFY_PEER). Throws std::runtime_error when OpenSSL
// refuses any step.
class DtlsContext {
 public:
  DtlsContext();
  ~DtlsContext();
  DtlsContext(const DtlsContext&) = delete;
  DtlsContext& operator=(const DtlsContext&) = delete;
  struct Impl;
  [[nodiscard]] Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One publisher/subscriber DTLS session pair joined by two in-process datagram
// queues (one std::vector per datagram, boundaries kept). The publisher is the
// DTLS server, the subscriber the client.
class DtlsMemorySession {
 public:
  using Queue = std::deque<std::vector<std::uint8_t>>;
  explicit DtlsMemorySession(DtlsContext& ctx);
  ~DtlsMemorySession();
  DtlsMemorySession(const DtlsMemorySession&) = delete;
  DtlsMemorySession& operator=(const DtlsMemorySession&) = delete;

  // Drives both ends until the handshake completes; throws std::runtime_error
  // (with OpenSSL's error text) when it fails or does not finish.
  void handshake();
  // Publisher: one SSL_write = one record = one datagram on to_subscriber().
  // False when OpenSSL refused.
  [[nodiscard]] bool publisher_write(ByteSpan payload);
  // Subscriber: reads one application record into `out`. nullopt when no
  // record could be delivered (queue empty, or OpenSSL discarded the
  // datagram - RFC 6347 §4.1.2.7 drops records that fail authentication).
  [[nodiscard]] std::optional<std::size_t> subscriber_read(MutableByteSpan out);
  // Datagrams in flight publisher -> subscriber (tests may alter them).
  [[nodiscard]] Queue& to_subscriber() { return to_sub_; }
  [[nodiscard]] std::string cipher() const;    // negotiated, e.g. "ECDHE-ECDSA-AES128-GCM-SHA256"
  [[nodiscard]] std::string protocol() const;  // e.g. "DTLSv1.2"

 private:
  struct Impl;
  Queue to_sub_;
  Queue to_pub_;
  std::unique_ptr<Impl> impl_;
};

// --- the benchmark -------------------------------------------------------------

enum class FanoutTransport : std::uint8_t { kMemory, kLoopback };
enum class FanoutVariant : std::uint8_t { kUnsecuredMulticast, kGroupSecoc, kDtlsFanout };
[[nodiscard]] const char* to_string(FanoutTransport t);  // "memory", "loopback"
[[nodiscard]] const char* to_string(FanoutVariant v);    // row names

struct FanoutOptions {
  std::vector<std::size_t> group_sizes = {2, 4, 8, 16, 32, 64};
  std::vector<FanoutTransport> transports = {FanoutTransport::kMemory, FanoutTransport::kLoopback};
  std::size_t iterations = 200;  // measured messages per variant and N
  std::size_t warmup = 20;       // sent and checked, not measured
  std::size_t payload_bytes = 64;  // the paper's fixed SOME/IP payload
  Duration receive_timeout = Duration::seconds(2);  // per message, loopback
};

// One measured variant at one N over one transport.
struct FanoutRow {
  FanoutVariant variant = FanoutVariant::kUnsecuredMulticast;
  FanoutTransport transport = FanoutTransport::kMemory;
  std::size_t n = 0;
  std::size_t iterations = 0;
  std::size_t payload_bytes = 0;
  std::string timing_model;              // of `latency`: "parallel-ecus" (memory) or "real-threads" (loopback)
  Summary latency;                       // to the last receiver, us (stats.h: interpolated percentiles)
  Summary latency_serial;                // memory only: "serial-one-thread" figure of the same messages (else count 0)
  double publisher_cpu_us_per_msg = 0;   // thread CPU of the publish step
  double crypto_ops_per_msg = 0;         // publisher record encryptions / MACs, counted
  double cpu_pct = 0;                    // process CPU over the measured window, % of one core
  std::uint64_t rss_kib = 0;             // peak RSS during the row (process-wide if the reset was refused)
  std::uint64_t delivered = 0;           // (subscriber, message) pairs received intact
  std::uint64_t expected = 0;            // n * (warmup + iterations)
  // DTLS only: establishing all N sessions before measurement.
  double handshake_ms_total = 0;
  double handshake_ms_per_session = 0;
  std::string cipher;
  std::string protocol;
  // Filled by run_fanout_table: the multicast-unsecured row of the same N and
  // transport, and (dtls-fanout rows) the group-secoc row.
  double baseline_p99_us = 0;
  double ratio_p99 = 0;
  double group_p99_us = 0;
  double ratio_p99_vs_group = 0;
};

// Measures one variant; throws std::runtime_error on a setup failure or an
// undelivered / corrupted message.
FanoutRow run_fanout(FanoutVariant variant, FanoutTransport transport, std::size_t n,
                     const FanoutOptions& options);

// Every transport x N x variant (unsecured, group, DTLS interleaved per N),
// with the baseline and ratio fields filled. `progress` (optional) is called
// after each row.
std::vector<FanoutRow> run_fanout_table(const FanoutOptions& options,
                                        const std::function<void(const FanoutRow&)>& progress = {});

}  // namespace layersec::harness
