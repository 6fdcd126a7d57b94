// A deterministic discrete-event simulator for gPTP time-aware systems
// (core: simulated nanoseconds, no clock, no sockets).
//
// Every node runs one TimeAwareSystem over its own free-running oscillator:
//   local(t) = start_ns + t · (1 + ppm·10⁻⁶)          (t: simulated time)
// and every RX/TX timestamp it is given is local(t) plus Gaussian noise of
// `noise_ns` standard deviation (a seeded generator, so runs repeat exactly).
// Links are full duplex; a → b takes delay_ns + asymmetry_ns/2 and b → a
// delay_ns − asymmetry_ns/2 (a constant asymmetry is invisible to the
// peer-delay mechanism and shows up as an offset of asymmetry/2 per hop).
// Messages cross links as bytes through the codec (encode_message ->
// TimeAwareSystem::receive(bytes)); an event message's TX timestamp is
// reported the moment it leaves. inject() puts arbitrary bytes on a port at
// a given time (a spoofer on the link).
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
  void transmit(std::size_t index, std::size_t port, const std::vector<std::uint8_t>& bytes, bool event,
                MessageType type, std::uint16_t seq);
  double gaussian();

  std::vector<Node> nodes_;
  std::priority_queue<Delivery, std::vector<Delivery>, std::greater<>> queue_;
  std::int64_t now_ = 0;
  std::uint64_t order_ = 0;
  std::uint64_t rng_;
  std::uint64_t frames_ = 0;
};

}  // namespace layersec::ptp
