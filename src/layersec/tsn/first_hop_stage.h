// The TSN first hop of the raw SOME/IP path as a net::FrameStage: frames the
// node built are classified and tagged (FirstHopPath, first_hop.h), queued
// in the time-aware shaper (ShaperDriver on a tsn::Clock: CLOCK_TAI in
// `layersec node`) and handed to the transport's transmit (LinkFilter, i.e.
// the MACsec SecY when there is one, then the socket) when their gate and
// the emulated port speed allow, so a SecY numbers frames in wire order.
// Received frames have their tag checked and popped (FirstHopPath::ingress).
//
// The guard band counts `expansion_bytes` (the SecTAG + ICV the filter adds
// after the shaper: 32 with MACsec, 0 without). Not thread-safe: one loop.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "layersec/net/event_loop.h"
#include "layersec/net/frame_stage.h"
#include "layersec/tsn/first_hop.h"
#include "layersec/tsn/shaper_driver.h"
#include "layersec/tsn/taprio.h"

namespace layersec::tsn {

struct FirstHopSettings {
  std::uint64_t port_bps = 1'000'000'000;  // emulated port speed
  TaprioSchedule schedule;                  // classes, PCP map, gate control list, MaxSDU
  StreamIdentifier streams;
  std::uint8_t default_pcp = 0;
  std::size_t queue_limit_frames = 256;  // per class
  std::int64_t late_tolerance_ns = 50'000;
  std::size_t expansion_bytes = 0;  // added after the shaper (MACsec: 32)
};

class FirstHopStage final : public net::FrameStage {
 public:
  // On `loop`, with its own LoopShaperTimer. `clock` is not owned.
  FirstHopStage(FirstHopSettings settings, const Clock& clock, net::EventLoop& loop);
  // With the caller's timer (tests): the caller calls service() when it fires.
  FirstHopStage(FirstHopSettings settings, const Clock& clock, ShaperTimer& timer);
  ~FirstHopStage() override;
  FirstHopStage(const FirstHopStage&) = delete;
  FirstHopStage& operator=(const FirstHopStage&) = delete;

  void connect(Transmit transmit) override;
  bool outbound(ByteSpan plain) override;
  std::optional<MutableByteSpan> inbound(MutableByteSpan plain) override;
  [[nodiscard]] std::size_t overhead() const override { return net::kVlanTagSize; }

  void service() { driver_->service(); }
  [[nodiscard]] const FirstHopPath& path() const { return path_; }
  [[nodiscard]] const ShaperDriver& shaper() const { return *driver_; }
  // Frames refused by the shaper at enqueue (per reason in its class counters).
  [[nodiscard]] std::uint64_t shaper_refused() const { return shaper_refused_; }
  // Frames the shaper released while no transport was connected.
  [[nodiscard]] std::uint64_t unconnected_drops() const { return unconnected_drops_; }
  [[nodiscard]] const FirstHopSettings& settings() const { return settings_; }

 private:
  void build(ShaperTimer& timer);
  FirstHopSettings settings_;
  const Clock& clock_;
  FirstHopPath path_;
  std::unique_ptr<LoopShaperTimer> own_timer_;
  std::unique_ptr<ShaperDriver> driver_;
  Transmit transmit_;
  std::vector<std::uint8_t> buf_;
  std::uint64_t shaper_refused_ = 0;
  std::uint64_t unconnected_drops_ = 0;
};

}  // namespace layersec::tsn
