// A time-triggered Scheduled-Traffic (ST) stream, sans-I/O: where its frames
// are released in the cycle (phase-locked to the class's window of the gate
// control list, as 802.1Qbv scheduled traffic is: each frame reaches the port
// inside its window), the datagram that carries a sequence number and a send
// time, and the receiver's accounting (one-way latency of every frame, loss
// by sequence, duplicates, reordering, RFC 3550 interarrival jitter as iperf3
// reports it, and refusals by reason). `layersec bench tsn --st-source gen`
// runs it between two namespaces (bench/tsn_st_gen.h); times are passed in.
//
// Release plan: the class's first window in the cycle, [open, open + len).
// Cycle c carries n_c = floor((c+1) B / P) - floor(c B / P) frames, B the
// offered bits per cycle and P the payload bits of one frame, so the long-run
// rate is the offered rate exactly and n_c is floor(B/P) or ceil(B/P). Frame
// k of a cycle is released at open + k * spacing, spacing = max(wire,
// (len - wire) / ceil(B/P)) for wire the frame's time on the wire: the frames
// of one cycle are spread over the window and each is off the wire before the
// next arrives, so none has a frame of its own class ahead of it
// (planned_max_ahead, computed by running the plan through the port's
// arithmetic, not assumed) and the last one still finishes before the window
// closes, with tail_slack_ns to spare for a late arrival.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/tsn/gate_control_list.h"

namespace layersec::tsn {

struct StPlanInputs {
  int traffic_class = 1;
  std::size_t payload_bytes = 1000;     // UDP payload (the datagram below)
  std::size_t frame_bytes = 0;          // frame as queued, without FCS (payload + headers + tag)
  std::size_t expansion_bytes = 0;      // added after the shaper (MACsec)
  std::uint64_t link_bps = 100'000'000;
  std::uint64_t offered_bits_per_cycle = 0;  // payload bits per cycle (offered rate x cycle)
};

struct StPlan {
  std::int64_t cycle_ns = 0;
  std::int64_t window_open_ns = 0;   // offset of the class's first window in the cycle
  std::int64_t window_len_ns = 0;
  std::int64_t wire_ns = 0;          // one frame on the wire (with FCS, preamble, gap, expansion)
  std::int64_t spacing_ns = 0;       // between releases within a cycle
  std::uint64_t max_frames_per_cycle = 0;  // ceil(B / P)
  std::uint64_t offered_bits_per_cycle = 0;
  std::uint64_t payload_bits = 0;
  // Running one cycle's most frames through the port at their planned
  // arrivals (each starts at max(arrival, previous end)): the most frames of
  // the class ahead of an arriving one, and the longest wait for the wire.
  std::uint64_t planned_max_ahead = 0;
  std::int64_t planned_max_wait_ns = 0;
  std::int64_t tail_slack_ns = 0;    // window end - the last frame's planned end
};

enum class StPlanError { kNoWindow, kNoLoad, kDoesNotFit };
[[nodiscard]] const char* to_string(StPlanError e);

// Precondition: validate(gcl, ...) passed. Error when the class has no
// window, nothing is offered, or the cycle's most frames do not fit its
// first window (`why` then names the numbers).
[[nodiscard]] std::optional<StPlan> plan_st_releases(const GateControlList& gcl, const StPlanInputs& in,
                                                     StPlanError* error = nullptr, std::string* why = nullptr);

// Frames in cycle `c` (c >= 0).
[[nodiscard]] std::uint64_t frames_in_cycle(const StPlan& p, std::uint64_t c);
// Frames in cycles 0 .. c-1.
[[nodiscard]] std::uint64_t frames_before_cycle(const StPlan& p, std::uint64_t c);
// Release time of frame k (< frames_in_cycle) of cycle c, on the schedule's
// clock, for a list whose cycle starts at `cycle0_ns` (a cycle boundary).
[[nodiscard]] std::int64_t release_ns(const StPlan& p, std::int64_t cycle0_ns, std::uint64_t c, std::uint64_t k);

// The datagram: magic "TSNG", the run's id, sequence number, send time (ns,
// the sender's clock), then zero padding to the run's payload size.
inline constexpr std::uint32_t kStMagic = 0x54534E47;
inline constexpr std::size_t kStHeaderBytes = 4 + 4 + 8 + 8;
struct StDatagram {
  std::uint32_t run_id = 0;
  std::uint64_t seq = 0;
  std::int64_t send_ns = 0;
};
// Writes the datagram into `out` (its whole size: the payload); false when
// `out` is shorter than the header.
[[nodiscard]] bool encode_st_datagram(const StDatagram& d, MutableByteSpan out);

enum class StRefusal { kSize, kMagic, kRunId, kSeqRange, kPadding, kBadTime };
inline constexpr int kStRefusalCount = 6;
[[nodiscard]] const char* to_string(StRefusal r);

struct StReceiverCounters {
  std::uint64_t received = 0;     // accepted, first copy of its sequence number (= latency samples)
  std::uint64_t duplicates = 0;   // a sequence number seen before: counted, not a sample
  std::uint64_t reordered = 0;    // arrived after a higher sequence number
  std::uint64_t refused[kStRefusalCount] = {};  // not the generator's datagram, by reason
  std::uint64_t highest_seq_plus1 = 0;
};

// The receiver's accounting for one run: datagrams of exactly
// `payload_bytes`, run id `run_id`, sequence numbers below `max_seq`
// (what the sender can send in the run), zero padding, and a send time
// neither negative nor after the arrival (one clock for both ends) are
// accepted; anything else is refused by reason and changes nothing else.
class StReceiver {
 public:
  StReceiver(std::size_t payload_bytes, std::uint32_t run_id, std::uint64_t max_seq);
  // One datagram that arrived at `now_ns`; the refusal, or nullopt when
  // accepted (duplicates are accepted and counted, not sampled).
  std::optional<StRefusal> on_datagram(ByteSpan payload, std::int64_t now_ns);

  [[nodiscard]] const StReceiverCounters& counters() const { return c_; }
  [[nodiscard]] const std::vector<double>& latency_us() const { return latency_us_; }
  // The sequence number of each latency sample (same order).
  [[nodiscard]] const std::vector<std::uint64_t>& sample_seqs() const { return sample_seq_; }
  // RFC 3550 §6.4.1 interarrival jitter over arrival order (iperf3's), ms.
  [[nodiscard]] double jitter_ms() const { return jitter_ns_ / 1e6; }
  // Sequence numbers below `sent` that never arrived.
  [[nodiscard]] std::uint64_t lost(std::uint64_t sent) const;
  [[nodiscard]] std::uint64_t refused_total() const;

 private:
  std::size_t payload_bytes_;
  std::uint32_t run_id_;
  std::uint64_t max_seq_;
  std::vector<bool> seen_;
  StReceiverCounters c_;
  std::vector<double> latency_us_;
  std::vector<std::uint64_t> sample_seq_;
  bool have_transit_ = false;
  std::int64_t last_transit_ns_ = 0;
  double jitter_ns_ = 0;
};

}  // namespace layersec::tsn
