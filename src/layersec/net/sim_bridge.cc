#include "layersec/net/sim_bridge.h"

#include <cstddef>
#include <utility>

namespace layersec::net {

namespace {
// The far end of the wire: the frame has already been serialised on the
// trunk's one real link direction, so this end adds nothing.
LinkConfig ideal_link() {
  LinkConfig l;
  l.latency = Duration::zero();
  l.bandwidth_bps = 0;
  l.queue_frames = std::size_t{1} << 20;
  return l;
}
}  // namespace

SegmentTrunk::SegmentTrunk(Segment& a, Segment& b, LinkConfig link) : a_(a), b_(b) {
  port_a_ = a_.add_port(link, &end_a_);
  port_b_ = b_.add_port(ideal_link(), &end_b_);
}

SegmentTrunk::~SegmentTrunk() {
  a_.set_receiver(port_a_, nullptr);
  b_.set_receiver(port_b_, nullptr);
}

void SegmentTrunk::End::on_frame(ByteSpan frame) {
  if (at_a_) {
    // A put it on the wire (port_a's downlink): it enters B now.
    if (trunk_.b_.sender(trunk_.port_b_).send_frame(frame)) {
      ++trunk_.stats_.forwarded_a_to_b;
    } else {
      ++trunk_.stats_.dropped_a_to_b;
    }
  } else {
    // B handed it to the wire: serialised as port_a's uplink, then into A.
    if (trunk_.a_.sender(trunk_.port_a_).send_frame(frame)) {
      ++trunk_.stats_.forwarded_b_to_a;
    } else {
      ++trunk_.stats_.dropped_b_to_a;
    }
  }
}

void SegmentTrunk::set_shaper(TrunkDirection d, ShaperConfig config) {
  a_.set_shaper(port_a_, d == TrunkDirection::kAToB ? LinkSide::kDownlink : LinkSide::kUplink, std::move(config));
}

const tsn::EgressPort* SegmentTrunk::shaper(TrunkDirection d) const {
  return a_.shaper(port_a_, d == TrunkDirection::kAToB ? LinkSide::kDownlink : LinkSide::kUplink);
}

}  // namespace layersec::net
