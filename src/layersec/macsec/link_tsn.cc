#include "layersec/macsec/link_tsn.h"

#include <cstring>

#include "layersec/net/frame.h"
#include "layersec/tsn/frame_tagger.h"

namespace layersec::macsec {

TsnFramePath::TsnFramePath(const LinkTsnConfig& config)
    : config_(config), classes_(config.schedule.traffic_classes()) {}

std::optional<int> TsnFramePath::egress(std::vector<std::uint8_t>& frame) {
  auto c = tsn::classify_egress(frame, classes_, &config_.streams, config_.default_pcp);
  if (!c) {
    ++stats_.tx_classify_errors;
    return std::nullopt;
  }
  ++stats_.tx_classified;
  if (c->tagged_here) ++stats_.tx_tagged;
  return c->traffic_class;
}

std::optional<MutableByteSpan> TsnFramePath::ingress(MutableByteSpan plain) {
  auto eth = net::parse_ethernet(ByteSpan(plain.data(), plain.size()));
  if (!eth) {
    ++stats_.rx_malformed;
    return std::nullopt;
  }
  if (eth->header.tag_count == 0) {
    ++stats_.rx_untagged;
    return plain;
  }
  const auto& tag = eth->header.tags[0];
  if (eth->header.tag_count != 1 || tag.tpid != net::kEtherTypeCTag || !known_tag(tag.vid, tag.pcp)) {
    ++stats_.rx_unknown_tag;
    return std::nullopt;
  }
  std::memmove(plain.data() + 4, plain.data(), 12);
  ++stats_.rx_tag_popped;
  return MutableByteSpan(plain.data() + 4, plain.size() - 4);
}

bool TsnFramePath::known_tag(std::uint16_t vid, std::uint8_t pcp) const {
  return config_.tags.count({vid, pcp}) != 0;
}

tsn::PortConfig TsnFramePath::port_config() const {
  tsn::PortConfig pc;
  pc.link_bps = config_.port_bps;
  pc.num_classes = config_.schedule.num_tc;
  pc.max_sdu = config_.schedule.max_sdu;
  pc.queue_limit_frames = config_.queue_limit_frames;
  pc.expansion_bytes = 0;
  pc.length_aware = true;
  return pc;
}

tsn::GateSchedule TsnFramePath::gate_schedule(std::int64_t now_ns) const {
  tsn::GateSchedule s;
  s.set_admin(config_.schedule.gcl, now_ns);
  return s;
}

nlohmann::json to_json(const TsnLinkStats& s) {
  return nlohmann::json{{"tx_classified", s.tx_classified},   {"tx_tagged", s.tx_tagged},
                        {"tx_classify_errors", s.tx_classify_errors}, {"tx_shaper_refused", s.tx_shaper_refused},
                        {"rx_tag_popped", s.rx_tag_popped},   {"rx_untagged", s.rx_untagged},
                        {"rx_unknown_tag", s.rx_unknown_tag}, {"rx_malformed", s.rx_malformed}};
}

nlohmann::json shaper_json(const tsn::ShaperDriver& d) {
  const auto& k = d.counters();
  nlohmann::json classes = nlohmann::json::array();
  for (int c = 0; c < d.port().config().num_classes; ++c) {
    const auto& cc = d.port().counters(c);
    classes.push_back({{"class", c},
                       {"enqueued", cc.enqueued},
                       {"transmitted", cc.transmitted},
                       {"transmitted_bytes", cc.transmitted_bytes},
                       {"held", cc.held},
                       {"dropped_queue_full", cc.dropped_queue_full},
                       {"dropped_max_sdu", cc.dropped_max_sdu},
                       {"dropped_never_fits", cc.dropped_never_fits},
                       {"transmission_overruns", cc.transmission_overruns},
                       {"queued", d.port().queued(c)}});
  }
  return nlohmann::json{{"driver",
                         {{"submitted", k.submitted},
                          {"refused", k.refused},
                          {"sent", k.sent},
                          {"send_errors", k.send_errors},
                          {"late_starts", k.late_starts},
                          {"max_lateness_ns", k.max_lateness_ns},
                          {"resyncs", k.resyncs},
                          {"services", k.services},
                          {"clock_steps", k.clock_steps}}},
                        {"classes", std::move(classes)}};
}

int TsnFramePath::class_of_tagged(ByteSpan frame) const {
  if (frame.size() < 16) return -1;
  const std::uint16_t tpid = load_be16(frame.data() + 12);
  if (tpid != net::kEtherTypeCTag && tpid != net::kEtherTypeSTag) return -1;
  return classes_.traffic_class(static_cast<std::uint8_t>(frame[14] >> 5));
}

}  // namespace layersec::macsec
