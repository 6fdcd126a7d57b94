#include "layersec/tsn/stream_id.h"

namespace layersec::tsn {

namespace {
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kUdp = 17;

template <class T>
bool field_ok(const std::optional<T>& want, const T& have) {
  return !want || *want == have;
}
}  // namespace

bool StreamIdentifier::add(const StreamRule& r, std::string* why) {
  auto fail = [why](std::string m) {
    if (why) *why = std::move(m);
    return false;
  };
  const std::string name = "stream rule " + std::to_string(rules_.size()) + " (handle " + std::to_string(r.handle) + ")";
  if (r.set_vid > 4094) return fail(name + ": vid " + std::to_string(r.set_vid) + " is not in 0..4094");
  if (r.set_pcp > 7) return fail(name + ": pcp " + std::to_string(r.set_pcp) + " is not in 0..7");
  if (r.vid && *r.vid > 4094) return fail(name + ": match vid " + std::to_string(*r.vid) + " is not in 0..4094");
  if (r.vid && r.untagged_only) return fail(name + ": match vid and untagged_only together");
  if (r.kind == StreamMatch::kNull) {
    if (!r.dst_mac) return fail(name + ": null stream identification needs a destination MAC");
    if (r.src_ip || r.dst_ip || r.dscp || r.protocol || r.src_port || r.dst_port) {
      return fail(name + ": null stream identification matches only destination MAC and VLAN");
    }
  } else {
    if (r.dscp && *r.dscp > 63) return fail(name + ": dscp " + std::to_string(*r.dscp) + " is not in 0..63");
    if ((r.src_port || r.dst_port) && r.protocol && *r.protocol != kUdp && *r.protocol != kTcp) {
      return fail(name + ": ports are matched only for UDP (17) and TCP (6)");
    }
  }
  rules_.push_back(r);
  return true;
}

const StreamRule* StreamIdentifier::match(const StreamKey& k) const {
  for (const auto& r : rules_) {
    if (r.dst_mac && *r.dst_mac != k.dst_mac) continue;
    if (r.untagged_only && k.vid) continue;
    if (r.vid && (!k.vid || *r.vid != *k.vid)) continue;
    if (r.kind == StreamMatch::kIp) {
      if (!k.ipv4) continue;
      if (!field_ok(r.src_ip, k.src_ip) || !field_ok(r.dst_ip, k.dst_ip) || !field_ok(r.dscp, k.dscp) ||
          !field_ok(r.protocol, k.protocol)) {
        continue;
      }
      if ((r.src_port || r.dst_port) && !k.has_ports) continue;
      if (!field_ok(r.src_port, k.src_port) || !field_ok(r.dst_port, k.dst_port)) continue;
    }
    return &r;
  }
  return nullptr;
}

}  // namespace layersec::tsn
