// Per-frame time a link spends on the frames of one traffic class beyond
// what the port model accounts for (the processing term of a latency bound,
// measured in the run it bounds). The link reads its clock and records three
// legs, in ns:
//   egress_in   the frame read from the TAP -> handed to the shaper
//               (classification, tagging, copy; the read itself not counted)
//   egress_out  the shaper model's start of the frame -> the lower send
//               returned (timer wake-up lateness, MACsec protection, the
//               send system call, which on a veth delivers into the peer)
//   ingress     the frame taken from the lower socket's batch -> written to
//               the TAP (MACsec verification, tag check and pop, TAP write)
// Sans-I/O: times in, samples out (at most kMaxSamples per leg; later ones
// are counted in `dropped`, never grown without bound).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace layersec::tsn {

class PassThroughTimes {
 public:
  enum class Leg { kEgressIn = 0, kEgressOut = 1, kIngress = 2 };
  static constexpr std::size_t kLegs = 3;
  static constexpr std::size_t kMaxSamples = 1u << 21;

  explicit PassThroughTimes(int traffic_class) : traffic_class_(traffic_class) {}
  [[nodiscard]] int traffic_class() const { return traffic_class_; }
  // Records `ns` for `leg` when `traffic_class` is the timed one.
  void record(Leg leg, int traffic_class, std::int64_t ns) {
    if (traffic_class != traffic_class_) return;
    auto& v = samples_[static_cast<std::size_t>(leg)];
    if (v.size() >= kMaxSamples) {
      ++dropped_;
      return;
    }
    v.push_back(static_cast<double>(ns < 0 ? 0 : ns) / 1e3);
  }
  // Samples of `leg` in us.
  [[nodiscard]] const std::vector<double>& us(Leg leg) const { return samples_[static_cast<std::size_t>(leg)]; }
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

 private:
  int traffic_class_;
  std::array<std::vector<double>, kLegs> samples_;
  std::uint64_t dropped_ = 0;
};

}  // namespace layersec::tsn
