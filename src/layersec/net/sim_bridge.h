// A point-to-point link between two simulated switches (a trunk), so several
// Segments form a multi-hop network (a zonal chain or ring).
//
// A Segment is one switch whose ports each have a link to an endpoint. A
// trunk joins switch A and switch B with one physical full-duplex link: a
// port on A carries the link (its bandwidth, latency and queue), and a port
// on B with an ideal link (no serialisation, no latency) is the other end of
// the same wire. Frames cross as follows, each serialised exactly once:
//
//   A -> B: A's egress on port_a (LinkSide::kDownlink of port_a: A's egress
//           port, where its shaper goes), the link's serialisation and
//           latency, then straight into B through port_b.
//   B -> A: B's egress on port_b (instantaneous), then the link's
//           serialisation and latency as port_a's uplink (LinkSide::kUplink
//           of port_a: B's egress port onto this wire, where B's shaper
//           goes), then into A.
//
// Port processors (a switch-side MACsec SecY per port, hop by hop) belong to
// the Segments: install them on port_a of A and port_b of B as on any port.
// The trunk only carries frames; it owns no protocol state. A frame the far
// switch's port refuses (queue full) is dropped and counted here.
#pragma once

#include <cstdint>

#include "layersec/net/sim.h"

namespace layersec::net {

enum class TrunkDirection : std::uint8_t {
  kAToB,  // leaves switch A (A's egress onto the trunk)
  kBToA,  // leaves switch B
};

struct TrunkStats {
  std::uint64_t forwarded_a_to_b = 0;
  std::uint64_t forwarded_b_to_a = 0;
  std::uint64_t dropped_a_to_b = 0;  // B's end refused the frame (its uplink queue)
  std::uint64_t dropped_b_to_a = 0;  // A's end refused it (port_a's uplink queue or shaper queue full)
};

class SegmentTrunk {
 public:
  // Adds port_a to `a` with `link` and port_b to `b` with an ideal link.
  // Both segments must outlive the trunk; it must be destroyed (or the
  // segments' receivers cleared) before frames can arrive after it is gone.
  SegmentTrunk(Segment& a, Segment& b, LinkConfig link);
  SegmentTrunk(const SegmentTrunk&) = delete;
  SegmentTrunk& operator=(const SegmentTrunk&) = delete;
  ~SegmentTrunk();

  [[nodiscard]] PortId port_a() const { return port_a_; }
  [[nodiscard]] PortId port_b() const { return port_b_; }
  [[nodiscard]] Segment& segment_a() { return a_; }
  [[nodiscard]] Segment& segment_b() { return b_; }

  // Shapes the egress onto the trunk in direction `d` (see the header
  // comment for which link direction that is). Throws as Segment::set_shaper.
  void set_shaper(TrunkDirection d, ShaperConfig config);
  [[nodiscard]] const tsn::EgressPort* shaper(TrunkDirection d) const;
  [[nodiscard]] const TrunkStats& stats() const { return stats_; }

 private:
  class End final : public FrameReceiver {
   public:
    End(SegmentTrunk& t, bool at_a) : trunk_(t), at_a_(at_a) {}
    void on_frame(ByteSpan frame) override;

   private:
    SegmentTrunk& trunk_;
    bool at_a_;
  };

  Segment& a_;
  Segment& b_;
  End end_a_{*this, true};   // receives what A sends onto the trunk
  End end_b_{*this, false};  // receives what B sends onto the trunk
  PortId port_a_ = 0;
  PortId port_b_ = 0;
  TrunkStats stats_;
};

}  // namespace layersec::net
