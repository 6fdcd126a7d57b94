#include "layersec/tsn/first_hop_stage.h"

#include <utility>

namespace layersec::tsn {

FirstHopStage::FirstHopStage(FirstHopSettings settings, const Clock& clock, net::EventLoop& loop)
    : settings_(std::move(settings)),
      clock_(clock),
      path_(settings_.streams, settings_.schedule.traffic_classes(), settings_.default_pcp) {
  own_timer_ = std::make_unique<LoopShaperTimer>(loop, clock_, [this] { driver_->service(); });
  build(*own_timer_);
}

FirstHopStage::FirstHopStage(FirstHopSettings settings, const Clock& clock, ShaperTimer& timer)
    : settings_(std::move(settings)),
      clock_(clock),
      path_(settings_.streams, settings_.schedule.traffic_classes(), settings_.default_pcp) {
  build(timer);
}

FirstHopStage::~FirstHopStage() {
  if (own_timer_) own_timer_->disarm();
}

void FirstHopStage::build(ShaperTimer& timer) {
  PortConfig pc;
  pc.link_bps = settings_.port_bps;
  pc.num_classes = settings_.schedule.num_tc;
  pc.max_sdu = settings_.schedule.max_sdu;
  pc.queue_limit_frames = settings_.queue_limit_frames;
  pc.expansion_bytes = settings_.expansion_bytes;
  pc.length_aware = true;
  GateSchedule gs;
  gs.set_admin(settings_.schedule.gcl, clock_.now_ns());
  DriverOptions opt;
  opt.late_tolerance_ns = settings_.late_tolerance_ns;
  driver_ = std::make_unique<ShaperDriver>(
      EgressPort(pc, std::move(gs)), clock_, timer,
      [this](ByteSpan frame, int) {
        if (!transmit_) {
          ++unconnected_drops_;
          return false;
        }
        return transmit_(frame);
      },
      opt);
  buf_.reserve(net::kEthernetMaxFrameSize + 64);
}

void FirstHopStage::connect(Transmit transmit) { transmit_ = std::move(transmit); }

bool FirstHopStage::outbound(ByteSpan plain) {
  buf_.assign(plain.begin(), plain.end());
  auto c = path_.egress(buf_);
  if (!c) return false;
  if (driver_->submit(ByteSpan(buf_.data(), buf_.size()), c->traffic_class) != EnqueueResult::kQueued) {
    ++shaper_refused_;
    return false;
  }
  return true;
}

std::optional<MutableByteSpan> FirstHopStage::inbound(MutableByteSpan plain) {
  auto r = path_.ingress(plain);
  if (!r) return std::nullopt;
  return *r;
}

}  // namespace layersec::tsn
