// The scenario testbed: one SOME/IP publisher and N subscribers as real
// nodes (someip::Runtime over SimTransport over net::SimHost) on the
// simulated Ethernet segment, with the security layers of a scenario:
//
//   none    SOME/IP only (the paper's Scenario 1)
//   secoc   SecOC on every event and answer (vendor profile: CMAC-AES-256,
//           64-bit MAC, 64-bit FV of which 16 bits travel; Scenario 2)
//   hybrid  SecOC + MACsec GCM-AES-128 on every link, hop by hop: a SecY at
//           each host (net::FrameShim) and one per switch port
//           (macsec::MacsecPortProcessor) (Scenario 3)
//
// Keys: psk (provisioned before start), rsa-mode-b (a fresh session key per
// run delivered to every subscriber by a kex Mode B handshake, RSA-2048 OAEP
// with X.509 certificates, carried as SOME/IP requests on the segment), or
// group-mode-b (kex::GroupKeyManager: every subscriber joins the group, then
// the group key is delivered by Mode B). One CMAC key group covers the event
// and the answers (each with its own DataId and freshness), as in the paper;
// a group key authenticates the group, not the member.
//
// The closed loop (run_iteration): the publisher notifies one event (unicast
// to one subscriber, or once to the eventgroup's multicast group); every
// subscriber answers with a fire-and-forget request on its own method; the
// iteration ends when the publisher has dispatched the last answer. The
// simulator is driven step by step on this thread, and each iteration yields
// two figures from the same run (simulated link delays cost no real time and
// are in neither):
//
//   serial-one-thread  the elapsed CLOCK_MONOTONIC time between the notify()
//                      call and the last answer's dispatch: the real time the
//                      whole code path took (serialise, SecOC, MACsec, frame,
//                      switch, parse, verify, dispatch, both directions) with
//                      every node's work done one after the other, as if the
//                      whole network shared one CPU;
//   parallel-ecus      the same measured work placed on one CPU per node and
//                      per switch port engine (net::Simulator CPU
//                      attribution): latency is the causal critical path, so
//                      receivers that would run on separate ECUs overlap.
//
// The parallel figure is never larger than the serial one (each is built from
// the same real-time measurements; see Simulator). SecOC time is measured
// where the runtimes call the engines (RuntimeConfig::cost_clock), summed over
// nodes per iteration.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/kex/pki.h"
#include "layersec/net/sim.h"

namespace layersec::harness {

enum class Security : std::uint8_t { kNone, kSecoc, kHybrid };
enum class KeyDistribution : std::uint8_t { kNone, kPsk, kRsaModeB, kGroupModeB };
[[nodiscard]] std::string to_string(Security s);
[[nodiscard]] std::string to_string(KeyDistribution k);

// Certificates for the RSA scenarios, made once per run (RSA key generation is
// provisioning, not part of any measured figure). Subscribers beyond the
// first share one RSA-2048 key pair under their own certificates.
class Credentials {
 public:
  // Throws std::runtime_error if OpenSSL fails.
  static std::shared_ptr<const Credentials> create(int max_subscribers, std::uint16_t service);
  [[nodiscard]] const kex::Identity& publisher() const { return publisher_; }
  [[nodiscard]] const kex::Identity& subscriber(int i) const;
  [[nodiscard]] const kex::TrustStore& trust() const { return trust_; }
  [[nodiscard]] int max_subscribers() const { return static_cast<int>(subscribers_.size()); }

 private:
  kex::Identity ca_;
  kex::Identity publisher_;
  std::vector<kex::Identity> subscribers_;
  kex::TrustStore trust_;
};

struct TestbedOptions {
  Security security = Security::kNone;
  KeyDistribution keys = KeyDistribution::kNone;
  int subscribers = 1;
  bool multicast = false;          // eventgroup with a multicast address
  std::size_t payload_bytes = 64;
  std::uint64_t seed = 1;
  net::LinkConfig link{};          // every host's link to the switch
  double background_mbps = 0;      // best-effort UDP load to every subscriber (0 = none)
  std::size_t background_datagram = 1400;
};

// One closed-loop iteration; the latency fields are set when completed.
struct IterationSample {
  bool completed = false;
  // serial-one-thread: real time on the measuring thread.
  std::int64_t round_trip_ns = 0;  // notify() call -> last answer dispatched
  std::int64_t one_way_ns = 0;     // notify() call -> last subscriber's event callback
  // parallel-ecus: model time along the critical path (<= the serial figures).
  std::int64_t model_round_trip_ns = 0;  // notify() start -> latest answer dispatch
  std::int64_t model_one_way_ns = 0;     // notify() start -> latest event callback
  // SecOC protect + verify time inside the runtimes during the iteration,
  // summed over every node, and the number of those calls (1 + 3N when
  // secured: the event, then per subscriber verify + answer, and the answer's
  // verify at the publisher).
  std::int64_t secoc_ns = 0;
  std::uint64_t secoc_ops = 0;
};

class Testbed {
 public:
  // Builds the segment, hosts, MACsec, engines and runtimes. `credentials`
  // is required for the Mode B key distributions. Throws std::runtime_error
  // or std::invalid_argument on a configuration error.
  Testbed(TestbedOptions options, std::shared_ptr<const Credentials> credentials);
  ~Testbed();
  Testbed(const Testbed&) = delete;
  Testbed& operator=(const Testbed&) = delete;

  // Starts every runtime, waits (simulated time) for service discovery and
  // every subscription, then establishes the keys. Throws std::runtime_error
  // with the reason when the testbed does not come up.
  void start();
  // Wall time of the key establishment in start() (Mode B only), ns.
  [[nodiscard]] std::optional<std::int64_t> establishment_ns() const { return establishment_ns_; }

  // Advances simulated time by `d` (pacing between iterations; SD and other
  // timers run here, outside any measured window).
  void idle(Duration d);
  // One closed-loop iteration with `payload` (payload_bytes, first bytes
  // carry the sequence number). Not completed within `timeout` of simulated
  // time: completed = false. Starts a model window (every simulated CPU idle,
  // as after the pacing gap) and runs notify() on the publisher's CPU.
  IterationSample run_iteration(std::uint32_t sequence, Duration timeout = Duration::seconds(1));

  // Security drops so far: SecOC rejections at every runtime plus MACsec
  // frames dropped by any SecY (expected 0 in a clean run).
  [[nodiscard]] std::uint64_t security_rejections() const;
  // Notifications delivered to subscriber applications so far.
  [[nodiscard]] std::uint64_t notifications_delivered() const;
  [[nodiscard]] std::uint64_t frames_on_wire() const;
  [[nodiscard]] net::Segment& segment();
  [[nodiscard]] net::Simulator& simulator();
  [[nodiscard]] const TestbedOptions& options() const { return options_; }
  // The UDP port unicast events are sent to (every subscriber's), for attack filters.
  [[nodiscard]] static std::uint16_t subscriber_port();
  // The publisher's switch port (frames it sends enter the switch here).
  [[nodiscard]] net::PortId publisher_port() const;

  struct Impl;

 private:
  void establish_keys();

  TestbedOptions options_;
  std::shared_ptr<const Credentials> credentials_;
  std::unique_ptr<Impl> impl_;
  std::optional<std::int64_t> establishment_ns_;
};

}  // namespace layersec::harness
