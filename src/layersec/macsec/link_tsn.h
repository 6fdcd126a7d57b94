// The TSN part of a MACsec link's frame path (used by TapLink when the link
// runs with `--tsn`), kept apart from the sockets so it is tested without
// root:
//
//   egress   controlled-port frame -> stream identification and C-tag at this
//            first hop (tsn::classify_egress) -> traffic class for the
//            shaper. The caller then protects the tagged frame: in clear-tag
//            layout the SecY keeps the tag in front of the SecTAG (a bridge
//            reads PCP/VID), in standard layout it is inside the Secure Data.
//   ingress  verified plain frame -> the first-hop tag is checked and popped
//            before the frame goes to the TAP (applications have no VLAN
//            interfaces). A tag whose (VID, PCP) no rule of this link sets is
//            dropped and counted (rx_unknown_tag): nothing is delivered with
//            a tag the configuration does not know, and nothing the peer did
//            not tag is delivered as if it had been. Untagged frames (the
//            default class: ARP and anything no rule matches) pass unchanged.
//
// In clear-tag layout without clear_tags_in_icv the tag is not authenticated:
// an on-path device can change PCP and VID (which a bridge must be able to
// do). The (VID, PCP) check above bounds what it can change them to.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/macsec/link_tsn_config.h"
#include "layersec/tsn/egress_port.h"
#include "layersec/tsn/shaper_driver.h"
#include "layersec/tsn/traffic_class.h"

namespace layersec::macsec {

struct TsnLinkStats {
  std::uint64_t tx_classified = 0;       // controlled-port frames given a class
  std::uint64_t tx_tagged = 0;           // ... of which a stream rule tagged here
  std::uint64_t tx_classify_errors = 0;  // not an Ethernet frame the tagger accepts (too short, third tag): dropped
  std::uint64_t tx_shaper_refused = 0;   // the shaper refused the secure frame (per reason in the shaper's class counters)
  std::uint64_t rx_tag_popped = 0;       // verified frames whose first-hop tag was removed
  std::uint64_t rx_untagged = 0;         // verified frames without a tag (default class): delivered as is
  std::uint64_t rx_unknown_tag = 0;      // a tag with a (VID, PCP) no rule sets: dropped
  std::uint64_t rx_malformed = 0;        // verified but not a parsable Ethernet frame: dropped
};

class TsnFramePath {
 public:
  explicit TsnFramePath(const LinkTsnConfig& config);

  // Classifies and tags `frame` in place; the traffic class, or nullopt
  // (counted) when the frame cannot be classified.
  std::optional<int> egress(std::vector<std::uint8_t>& frame);
  // Checks and pops the outer tag of a verified frame (in place: the
  // addresses move up by 4 octets); the frame to deliver, or nullopt
  // (counted).
  std::optional<MutableByteSpan> ingress(MutableByteSpan plain);

  // The traffic class of a frame's outer 802.1Q/802.1ad tag by its PCP, or
  // -1 when the frame carries none (no change to the frame or the counters).
  [[nodiscard]] int class_of_tagged(ByteSpan frame) const;
  void count_shaper_refused() { ++stats_.tx_shaper_refused; }
  [[nodiscard]] const TsnLinkStats& stats() const { return stats_; }
  // The emulated port for the shaper (speed, classes, queue limit, MaxSDU of
  // the schedule; expansion 0 because the shaper sees the secure frame).
  [[nodiscard]] tsn::PortConfig port_config() const;
  // The schedule installed at `now_ns` on the shaper's clock.
  [[nodiscard]] tsn::GateSchedule gate_schedule(std::int64_t now_ns) const;
  [[nodiscard]] const LinkTsnConfig& config() const { return config_; }

 private:
  [[nodiscard]] bool known_tag(std::uint16_t vid, std::uint8_t pcp) const;
  LinkTsnConfig config_;
  tsn::TrafficClassMap classes_;
  TsnLinkStats stats_;
};

// {"tx_classified", ... (TsnLinkStats names)}.
nlohmann::json to_json(const TsnLinkStats& s);
// The shaper's counters: {"driver": {...}, "classes": [{"class", "enqueued",
// "transmitted", "transmitted_bytes", "held", "dropped_queue_full",
// "dropped_max_sdu", "dropped_never_fits", "transmission_overruns"}]}.
nlohmann::json shaper_json(const tsn::ShaperDriver& d);

}  // namespace layersec::macsec
