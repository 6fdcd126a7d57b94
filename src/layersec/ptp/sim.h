// A deterministic discrete-event simulator for gPTP time-aware systems
// (core: simulated nanoseconds, no clock, no sockets).
//
// Every node runs one TimeAwareSystem over its own free-running oscillator:
//   local(t) = start_ns + t · (1 + ppm·10⁻⁶)          (t: simulated time)
// or, with a frequency that changes linearly (a temperature ramp, ppm_per_s
// != 0: the error is ppm at ppm_at_ns and changes by ppm_per_s each second),
//   local(t) = start_ns + t + 10⁻⁶·(ppm·t + ½·ppm_per_s·10⁻⁹·t·(t − 2·ppm_at_ns))
// and every RX/TX timestamp it is given is local(t) plus Gaussian noise of
// `noise_ns` standard deviation (a seeded generator, so runs repeat exactly).
// Links are full duplex; a → b takes delay_ns + asymmetry_ns/2 and b → a
// delay_ns − asymmetry_ns/2 (a constant asymmetry is invisible to the
// peer-delay mechanism and shows up as an offset of asymmetry/2 per hop).
// Messages cross links as bytes through the codec (encode_message ->
// TimeAwareSystem::receive(bytes)); an event message's TX timestamp is
// reported the moment it leaves. inject() puts arbitrary bytes on a port at
// a given time (a spoofer on the link).
//
// With record_clocks(true) the simulator keeps, per node, every change of
// its layersec clock (the servo's frequency updates and steps) with the
// simulated time it took effect, so that a node's synchronised time can be
// evaluated at any simulated instant afterwards (synced_at): what a
// time-aware shaper on that node reads (harness/zonal_clock.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include "layersec/ptp/time_aware_system.h"

namespace layersec::ptp {

struct SimClock {
  double ppm = 0;            // frequency error of the oscillator
  std::int64_t start_ns = 0; // local time at simulated time 0
  double noise_ns = 0;       // timestamp noise (standard deviation)
  std::int64_t tx_latency_ns = 0;  // every frame leaves this long after it is produced
                                   // (a relay's residence time; the TX timestamp is taken then)
  double ppm_per_s = 0;            // change of the frequency error per second (0: constant)
  std::int64_t ppm_at_ns = 0;      // the simulated time at which the error is `ppm`
};

// A node's layersec clock from simulated time `from_ns` on.
struct ClockChange {
  std::int64_t from_ns = 0;
  SyncedClock clock;
};

struct SimLink {
  std::int64_t delay_ns = 500;
  std::int64_t asymmetry_ns = 0;
};

class Simulator {
 public:
  explicit Simulator(std::uint64_t seed = 1) : rng_(seed) {}
  // Adds a node; returns its index. Throws ConfigError as TimeAwareSystem does.
  std::size_t add_node(const SystemConfig& config, const SimClock& clock);
  // Joins node a's port pa to node b's port pb (each port at most once).
  void connect(std::size_t a, std::size_t pa, std::size_t b, std::size_t pb, const SimLink& link);
  // Delivers `message` (PTP message bytes) to node/port at simulated time at_ns.
  void inject(std::size_t node, std::size_t port, std::vector<std::uint8_t> message, std::int64_t at_ns);
  // Runs every event up to and including simulated time t_ns.
  void run_until(std::int64_t t_ns);

  [[nodiscard]] std::int64_t now() const { return now_; }
  [[nodiscard]] const TimeAwareSystem& node(std::size_t i) const { return *nodes_.at(i).system; }
  // node's layersec clock minus reference's, at the current simulated time (ns).
  [[nodiscard]] double offset_between(std::size_t node, std::size_t reference) const;
  // Frames carried over links so far.
  [[nodiscard]] std::uint64_t frames() const { return frames_; }

  // Starts (or stops) recording clock changes; on start each node's history
  // begins with its clock as it is now.
  void record_clocks(bool on);
  // The node's clock changes in strictly increasing time order (empty unless
  // recorded).
  [[nodiscard]] const std::vector<ClockChange>& clock_history(std::size_t node) const {
    return nodes_.at(node).history;
  }
  // The node's free-running oscillator at simulated time t_ns (the local time
  // line its timestamps and its SyncedClock are on; without noise).
  [[nodiscard]] std::int64_t oscillator(std::size_t node, std::int64_t t_ns) const { return local(nodes_.at(node), t_ns); }

 private:
  struct Node {
    std::unique_ptr<TimeAwareSystem> system;
    SimClock clock;
    struct Peer {
      bool connected = false;
      std::size_t node = 0, port = 0;
      std::int64_t delay_ns = 0;
    };
    std::vector<Peer> peers;
    std::vector<ClockChange> history;
  };
  struct Delivery {
    std::int64_t at = 0;
    std::uint64_t order = 0;
    std::size_t node = 0, port = 0;
    std::vector<std::uint8_t> bytes;
    bool send = false;  // leaves node/port now (else: arrives at node/port)
    bool event = false;
    MessageType type = MessageType::kSync;
    std::uint16_t seq = 0;
    bool operator>(const Delivery& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  std::int64_t local(const Node& n, std::int64_t t) const;
  std::int64_t global_at_or_after(const Node& n, TimePoint local) const;
  std::int64_t stamp(const Node& n, std::int64_t t);
  void drain(std::size_t index);
  void note_clock(std::size_t index);
  void transmit(std::size_t index, std::size_t port, const std::vector<std::uint8_t>& bytes, bool event,
                MessageType type, std::uint16_t seq);
  double gaussian();

  std::vector<Node> nodes_;
  std::priority_queue<Delivery, std::vector<Delivery>, std::greater<>> queue_;
  std::int64_t now_ = 0;
  std::uint64_t order_ = 0;
  std::uint64_t rng_;
  std::uint64_t frames_ = 0;
  bool recording_ = false;
};

}  // namespace layersec::ptp
