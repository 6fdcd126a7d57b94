// `layersec bench someip`: SOME/IP request/response and event latency through
// someip::Runtime, unsecured and SecOC-protected in the same run, beside a
// bare UDP ping-pong over the same path (issue 4's benchmark).
//
// One client node and one server node. The server offers two services that
// differ only in their SecOC binding: kPlainService (no binding) and
// kSecuredService (request, response and event each bound to a SecOC PDU with
// the seed paper's vendor profile: CMAC-AES256, 64-bit MAC, 16-bit truncated
// freshness of a 64-bit FV). Both go through the same runtime, transport and
// sockets, so the secured/unsecured ratio isolates SecOC. Keys are random per
// run; receivers are provisioned with the sender's freshness epoch
// (Engine::set_rx_freshness) instead of a sync message, and no sync message is
// sent during the run (the sender stays in one reset cycle).
//
// Rows (closed loop, one message in flight):
//   udp-bare         UDP echo between the same two addresses: the client
//                    sends, the server echoes, RTT on the client's clock;
//   rr-unsecured     Runtime::request() -> method handler echoes the payload
//                    -> response handler; RTT;
//   rr-secoc         the same on the secured service (protect + verify on
//                    both legs);
//   event-unsecured  Runtime::notify() on the server -> event handler on the
//                    client; one way (both on CLOCK_MONOTONIC, same machine);
//   event-secoc      the same on the secured service.
// msgs_per_s = measured messages / wall time spent in that row's measured
// exchanges (rows are interleaved, see SomeipBenchOptions::rounds).
//
// Topologies:
//   sim    both runtimes on net::Simulator + SimTransport, one thread. Latency
//          is REAL wall time (CLOCK_MONOTONIC) of the code path - frame
//          encoding, the simulated switch, parsing, the runtime, SecOC - while
//          the simulator runs the exchange; simulated link delay is not
//          included.
//   netns  two network namespaces joined by a veth pair (net::NetnsTopology),
//          server runtime on a thread that entered the other namespace, each
//          side SocketTransport + net::EventLoop, the kernel's UDP stack in
//          between. Needs root; torn down afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"
#include "layersec/harness/stats.h"
#include "layersec/someip/runtime.h"

namespace layersec::net {
class Segment;
}

namespace layersec::harness {

inline constexpr std::uint16_t kPlainService = 0x5100;
inline constexpr std::uint16_t kSecuredService = 0x5101;
inline constexpr std::uint16_t kBenchInstance = 0x0001;
inline constexpr std::uint16_t kBenchMethod = 0x0001;
inline constexpr std::uint16_t kBenchEvent = 0x8001;
inline constexpr std::uint16_t kBenchEventgroup = 0x0001;
inline constexpr std::uint16_t kPlainPort = 30509;
inline constexpr std::uint16_t kSecuredPort = 30510;
inline constexpr std::uint16_t kClientPort = 30501;
inline constexpr std::uint16_t kEchoPort = 30600;  // udp-bare server
inline constexpr std::uint16_t kEchoClientPort = 30601;

enum class SomeipTopology : std::uint8_t { kSim, kNetns };
[[nodiscard]] const char* to_string(SomeipTopology t);  // "sim", "netns"

// A client/server pair ready to exchange messages (after start()). All
// methods run on the caller's thread; the netns bed runs the server on its
// own thread internally. Each exchange returns the measured latency in
// nanoseconds, or nullopt when no (intact) answer came within the timeout.
class SomeipBed {
 public:
  virtual ~SomeipBed() = default;
  // Runs service discovery until both services are available to the client
  // and the client is subscribed to both eventgroups. Throws
  // std::runtime_error when that does not happen within 5 s.
  virtual void start() = 0;
  virtual std::optional<std::int64_t> udp_round_trip(ByteSpan payload) = 0;
  virtual std::optional<std::int64_t> round_trip(bool secured, ByteSpan payload) = 0;
  virtual std::optional<std::int64_t> event_one_way(bool secured, ByteSpan payload) = 0;
  // Runtime counters (read between exchanges only).
  [[nodiscard]] virtual someip::RuntimeCounters client_counters() const = 0;
  [[nodiscard]] virtual someip::RuntimeCounters server_counters() const = 0;
  // Messages dropped by either side's SecOC layer (rejection callbacks).
  [[nodiscard]] virtual std::uint64_t security_rejections() const = 0;
};

struct SomeipBedOptions {
  std::size_t payload_bytes = 64;
  Duration timeout = Duration::seconds(1);  // per exchange
};

// The simulated pair. segment() lets tests attach attacker hooks.
class SomeipSimBed final : public SomeipBed {
 public:
  explicit SomeipSimBed(SomeipBedOptions options = {});
  ~SomeipSimBed() override;
  void start() override;
  std::optional<std::int64_t> udp_round_trip(ByteSpan payload) override;
  std::optional<std::int64_t> round_trip(bool secured, ByteSpan payload) override;
  std::optional<std::int64_t> event_one_way(bool secured, ByteSpan payload) override;
  [[nodiscard]] someip::RuntimeCounters client_counters() const override;
  [[nodiscard]] someip::RuntimeCounters server_counters() const override;
  [[nodiscard]] std::uint64_t security_rejections() const override;
  net::Segment& segment();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The namespace pair. Throws std::runtime_error when namespaces cannot be
// built (not root, no `ip`): check net::netns_available() first.
class SomeipNetnsBed final : public SomeipBed {
 public:
  explicit SomeipNetnsBed(SomeipBedOptions options = {});
  ~SomeipNetnsBed() override;  // stops the server thread, deletes the namespaces
  void start() override;
  std::optional<std::int64_t> udp_round_trip(ByteSpan payload) override;
  std::optional<std::int64_t> round_trip(bool secured, ByteSpan payload) override;
  std::optional<std::int64_t> event_one_way(bool secured, ByteSpan payload) override;
  [[nodiscard]] someip::RuntimeCounters client_counters() const override;
  [[nodiscard]] someip::RuntimeCounters server_counters() const override;
  [[nodiscard]] std::uint64_t security_rejections() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct SomeipBenchOptions {
  std::vector<SomeipTopology> topologies = {SomeipTopology::kSim};
  std::size_t iterations = 2000;  // measured per row
  std::size_t warmup = 100;       // per row, not measured
  std::size_t payload_bytes = 64;
  Duration timeout = Duration::seconds(1);
  // The rows are measured interleaved: every row's iterations are split into
  // this many blocks and the blocks of the rows alternate (udp-bare block 1,
  // rr-unsecured block 1, ..., udp-bare block 2, ...), so a change of machine
  // load during the run lands on every row, not on one side of a ratio.
  std::size_t rounds = 20;
};

struct SomeipBenchRow {
  std::string name;      // udp-bare, rr-unsecured, rr-secoc, event-unsecured, event-secoc
  std::string topology;  // sim, netns
  std::string measure;   // "round trip" or "one way"
  std::size_t iterations = 0;
  std::size_t payload_bytes = 0;
  Summary latency;       // us
  double msgs_per_s = 0;
  double cpu_pct = 0;    // process CPU over the measured loop, % of one core
  std::uint64_t timeouts = 0;
  // SecOC operations during the measured loop (client + server runtimes).
  std::uint64_t secoc_protected = 0;
  std::uint64_t secoc_verified = 0;
  std::uint64_t secoc_rejected = 0;
  // The row measured in the same run this one is compared with ("" none):
  // rr-unsecured -> udp-bare, rr-secoc -> rr-unsecured,
  // event-secoc -> event-unsecured.
  std::string baseline;
  double baseline_mean_us = 0;
  double baseline_p50_us = 0;
  double baseline_p99_us = 0;
  double ratio_mean = 0;
  double ratio_p50 = 0;
  double ratio_p99 = 0;
};

// The goals, judged on this run's medians and p99s.
struct SomeipGoal {
  std::string topology;
  std::string what;  // "rr-unsecured / udp-bare", "rr-secoc / rr-unsecured"
  double limit = 0;  // 1.3, 1.1
  double ratio_p50 = 0;
  double ratio_p99 = 0;
  bool met_p50 = false;
  bool met_p99 = false;
};

struct SomeipBenchReport {
  std::vector<SomeipBenchRow> rows;
  std::vector<SomeipGoal> goals;
  std::vector<std::string> notes;  // e.g. a topology skipped and why
};

// Measures the five rows on each requested topology (a netns topology that is
// unavailable is skipped with a note). Throws std::runtime_error when a bed
// cannot start, or when more than 1% of a row's exchanges time out.
SomeipBenchReport run_someip_bench(const SomeipBenchOptions& options);

// Measures `names` on a started bed, interleaved in `rounds` blocks (see
// SomeipBenchOptions::rounds); every row first gets o.warmup unmeasured
// exchanges. SecOC counters are attributed per block, so they are exact.
// Throws std::invalid_argument for an unknown row name, std::runtime_error
// when more than 1% of a row's exchanges got no intact answer.
std::vector<SomeipBenchRow> measure_someip_rows(SomeipBed& bed, const std::vector<std::string>& names,
                                               const std::string& topology, const SomeipBenchOptions& options,
                                               std::size_t rounds);
// One row, one block (tests).
SomeipBenchRow measure_someip_row(SomeipBed& bed, const std::string& name, const std::string& topology,
                                  const SomeipBenchOptions& options);

}  // namespace layersec::harness
