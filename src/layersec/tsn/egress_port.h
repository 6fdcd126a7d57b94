// One egress port with 802.1Qbv transmission selection (802.1Q-2018
// §8.6.8): one FIFO queue per traffic class, strict priority among the
// classes whose gate is open, and a frame starts only if its transmission
// completes before its gate closes (a length-aware guard band at the port's
// speed, counting the bytes MACsec adds after the shaper). Sans-I/O: frames
// and times in, the frame to put on the wire now (with its end time) or the
// next instant worth asking again out. The caller owns the clock and the
// wire (the simulator, or a link's event loop).
//
// A frame longer than the class's MaxSDU is dropped at enqueue
// (max_sdu_exceeded); a frame whose wire time exceeds the longest window the
// class ever gets can never be sent and is dropped (never_fits) rather than
// block its queue for ever; a full queue drops the arriving frame
// (queue_full). `held` counts frames that had to wait for a gate (closed, or
// too little of the window left); with the guard band switched off
// (length_aware = false, for contrast) a frame still on the wire when its
// gate closes counts as a transmission overrun (802.1Q §12.29.1.1.1
// TransmissionOverrun).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "layersec/tsn/gate_control_list.h"
#include "layersec/tsn/traffic_class.h"

namespace layersec::tsn {

struct PortConfig {
  std::uint64_t link_bps = 1'000'000'000;
  int num_classes = kMaxTrafficClasses;
  std::array<std::uint32_t, kMaxTrafficClasses> max_sdu{};  // 0: no limit (bytes of frame without FCS)
  std::size_t queue_limit_frames = 1024;                    // per class
  std::size_t expansion_bytes = 0;  // added after the shaper (MACsec SecTAG + ICV: 32, with a 16-byte ICV and SCI)
  bool length_aware = true;         // the guard band; off only to show what it prevents
};

struct ClassCounters {
  std::uint64_t enqueued = 0;
  std::uint64_t transmitted = 0;
  std::uint64_t transmitted_bytes = 0;
  std::uint64_t held = 0;
  std::uint64_t dropped_queue_full = 0;
  std::uint64_t dropped_max_sdu = 0;
  std::uint64_t dropped_never_fits = 0;
  std::uint64_t transmission_overruns = 0;
};

enum class EnqueueResult { kQueued, kQueueFull, kMaxSduExceeded, kNeverFits, kBadClass };
[[nodiscard]] const char* to_string(EnqueueResult r);

struct Transmission {
  std::vector<std::uint8_t> frame;
  int traffic_class = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;  // the wire is busy until then (frame + preamble + IFG)
  std::uint64_t tag = 0;    // the caller's id for the frame (e.g. a sequence number)
};

class EgressPort {
 public:
  EgressPort(PortConfig config, GateSchedule schedule);

  EnqueueResult enqueue(std::vector<std::uint8_t> frame, int traffic_class, std::int64_t now_ns, std::uint64_t tag = 0);

  // The frame to start at now_ns, if the wire is idle and a frame may start.
  std::optional<Transmission> dequeue(std::int64_t now_ns);

  // The earliest instant >= now_ns at which dequeue() may return a frame: the
  // end of the current transmission, a gate opening, or a new window; kNever
  // with every queue empty.
  [[nodiscard]] std::int64_t next_event(std::int64_t now_ns) const;

  // Installs a new gate control list (pending until its change time) and
  // returns its change time. The list is validated against the port (its
  // classes and speed); an invalid one throws std::invalid_argument naming
  // the entry, and the running schedule stays.
  std::int64_t set_schedule(const GateControlList& gcl, std::int64_t now_ns);

  // The port's clock was stepped: the frame on the wire is taken as finished
  // (a backward step would otherwise keep the wire busy for the step's
  // length). Queues and the gate schedule are kept.
  void clock_stepped() { busy_until_ = INT64_MIN; }

  [[nodiscard]] std::int64_t wire_time(std::size_t frame_bytes) const;
  [[nodiscard]] const GateSchedule& gates() const { return gates_; }
  [[nodiscard]] const ClassCounters& counters(int traffic_class) const {
    return counters_[static_cast<std::size_t>(traffic_class)];
  }
  [[nodiscard]] std::size_t queued(int traffic_class) const { return queues_[static_cast<std::size_t>(traffic_class)].size(); }
  [[nodiscard]] const PortConfig& config() const { return config_; }
  // The tags of queued frames dequeue() dropped since the last call (a new
  // schedule made them unsendable), so that a caller can forget what it
  // kept for them.
  [[nodiscard]] std::vector<std::uint64_t> take_dropped_tags() { return std::exchange(dropped_tags_, {}); }

 private:
  struct Queued {
    std::vector<std::uint8_t> frame;
    std::uint64_t tag = 0;
    bool counted_held = false;
  };
  // Whether the head of class c may start at t (gate open, and it finishes
  // before the gate closes when length_aware).
  [[nodiscard]] bool may_start(int c, std::int64_t t) const;

  PortConfig config_;
  GateSchedule gates_;
  std::array<std::deque<Queued>, kMaxTrafficClasses> queues_;
  std::array<ClassCounters, kMaxTrafficClasses> counters_{};
  std::int64_t busy_until_ = INT64_MIN;
  std::vector<std::uint64_t> dropped_tags_;
};

}  // namespace layersec::tsn
