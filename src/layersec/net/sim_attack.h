// Ready-made attacker policies for the simulated switch (SwitchHook).
//
// Each policy applies to the frames its FrameFilter matches (all frames by
// default) and counts what it did. Policies that make random choices own a
// SimRng seeded by the caller, so adding one does not perturb the random
// stream of the simulator or of other policies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "layersec/net/sim.h"

namespace layersec::net {

// Selects the frames a policy acts on.
using FrameFilter = std::function<bool(ByteSpan frame, PortId ingress)>;
FrameFilter match_all();
FrameFilter match_ether_type(std::uint16_t ether_type);  // after any VLAN tags
FrameFilter match_udp_dst_port(std::uint16_t port);      // valid IPv4/UDP frames only
FrameFilter match_ingress(PortId port);

// Recomputes the IPv4 header checksum and (when IPv4/UDP with a consistent
// length) the UDP checksum of a frame in place, so a modification survives the
// receiver's checksum checks and only end-to-end protection can catch it.
// Returns false when the frame is not IPv4 or is too malformed to fix.
bool refresh_checksums(MutableByteSpan frame);

// Observe: keeps a copy of every matching frame (passive eavesdropper).
class RecordingHook final : public SwitchHook {
 public:
  struct Record {
    TimePoint time;
    PortId ingress = 0;
    std::vector<std::uint8_t> frame;
  };
  explicit RecordingHook(FrameFilter filter = match_all()) : filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] const std::vector<Record>& records() const { return records_; }
  void clear() { records_.clear(); }

 private:
  FrameFilter filter_;
  std::vector<Record> records_;
};

// Drops the n-th, 2n-th, ... matching frame.
class DropEveryNthHook final : public SwitchHook {
 public:
  explicit DropEveryNthHook(std::uint64_t n, FrameFilter filter = match_all()) : n_(n), filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

 private:
  std::uint64_t n_;
  FrameFilter filter_;
  std::uint64_t seen_ = 0;
  std::uint64_t dropped_ = 0;
};

// Drops each matching frame independently with probability p.
class RandomLossHook final : public SwitchHook {
 public:
  RandomLossHook(double probability, std::uint64_t seed, FrameFilter filter = match_all())
      : p_(probability), rng_(seed), filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

 private:
  double p_;
  SimRng rng_;
  FrameFilter filter_;
  std::uint64_t dropped_ = 0;
};

// Delays matching frames by `delay` plus a uniform jitter in [0, jitter];
// jitter larger than the frame spacing reorders frames.
class DelayHook final : public SwitchHook {
 public:
  DelayHook(Duration delay, Duration jitter, std::uint64_t seed, FrameFilter filter = match_all())
      : delay_(delay), jitter_(jitter), rng_(seed), filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] std::uint64_t delayed() const { return delayed_; }

 private:
  Duration delay_;
  Duration jitter_;
  SimRng rng_;
  FrameFilter filter_;
  std::uint64_t delayed_ = 0;
};

// Reorder: holds back every n-th matching frame for `hold`, so frames sent
// after it overtake it.
class ReorderHook final : public SwitchHook {
 public:
  ReorderHook(std::uint64_t n, Duration hold, FrameFilter filter = match_all())
      : n_(n), hold_(hold), filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] std::uint64_t held() const { return held_; }

 private:
  std::uint64_t n_;
  Duration hold_;
  FrameFilter filter_;
  std::uint64_t seen_ = 0;
  std::uint64_t held_ = 0;
};

// Forwards `copies` extra copies of every n-th matching frame.
class DuplicateHook final : public SwitchHook {
 public:
  DuplicateHook(std::uint64_t n, unsigned copies, FrameFilter filter = match_all())
      : n_(n), copies_(copies), filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] std::uint64_t duplicated() const { return duplicated_; }

 private:
  std::uint64_t n_;
  unsigned copies_;
  FrameFilter filter_;
  std::uint64_t seen_ = 0;
  std::uint64_t duplicated_ = 0;
};

// Replay: records matching frames as they pass (unchanged) and injects them
// again, either automatically `auto_delay` after each original (when set) or
// all at once on replay_recorded().
class ReplayHook final : public SwitchHook {
 public:
  explicit ReplayHook(FrameFilter filter = match_all(), std::optional<Duration> auto_delay = std::nullopt)
      : filter_(std::move(filter)), auto_delay_(auto_delay) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  // Injects every recorded frame on its original ingress port, the first after
  // `delay` and each next one `spacing` later. Returns how many.
  std::size_t replay_recorded(SwitchControl& control, Duration delay = Duration::zero(),
                              Duration spacing = Duration::zero());
  [[nodiscard]] std::size_t recorded() const { return recorded_.size(); }
  [[nodiscard]] std::uint64_t replayed() const { return replayed_; }

 private:
  FrameFilter filter_;
  std::optional<Duration> auto_delay_;
  std::vector<std::pair<PortId, std::vector<std::uint8_t>>> recorded_;
  std::uint64_t replayed_ = 0;
};

// Tamper: flips `bits` random bits at byte offsets >= min_offset in matching
// frames, each frame with probability p. With `refresh` the IPv4/UDP checksums
// are recomputed afterwards (see refresh_checksums).
class BitFlipHook final : public SwitchHook {
 public:
  struct Options {
    double probability = 1.0;
    std::size_t min_offset = 0;  // e.g. 42 to hit only UDP payload of an untagged frame
    unsigned bits = 1;
    bool refresh = false;
  };
  BitFlipHook(Options options, std::uint64_t seed, FrameFilter filter = match_all())
      : options_(options), rng_(seed), filter_(std::move(filter)) {}
  HookVerdict on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) override;
  [[nodiscard]] std::uint64_t modified() const { return modified_; }

 private:
  Options options_;
  SimRng rng_;
  FrameFilter filter_;
  std::uint64_t modified_ = 0;
};

}  // namespace layersec::net
