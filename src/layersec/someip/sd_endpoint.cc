#include "layersec/someip/sd_endpoint.h"

#include <algorithm>

#include "layersec/someip/sd_message.h"

namespace layersec::someip {

SdSessionCounter::Stamp SdSessionCounter::take() {
  const Stamp s{next_, reboot_};
  if (next_ == 0xFFFF) {
    next_ = 1;        // never 0 (feat_req_someipsd_774/775)
    reboot_ = false;  // the reboot flag ends when the session id wraps (_41)
  } else {
    ++next_;
  }
  return s;
}

namespace {
std::uint8_t flags_for(const SdSessionCounter::Stamp& s) {
  return static_cast<std::uint8_t>(kSdFlagUnicast | (s.reboot ? kSdFlagReboot : 0));
}

template <class T>
T& find_or_add(std::vector<T>& v, const Endpoint& peer, std::size_t max, std::uint64_t tick) {
  for (auto& p : v) {
    if (p.peer == peer) {
      p.last_use = tick;
      return p;
    }
  }
  if (v.size() >= max && !v.empty()) {
    auto lru = std::min_element(v.begin(), v.end(),
                                [](const T& a, const T& b) { return a.last_use < b.last_use; });
    *lru = T{};
    lru->peer = peer;
    lru->last_use = tick;
    return *lru;
  }
  v.push_back(T{});
  v.back().peer = peer;
  v.back().last_use = tick;
  return v.back();
}
}  // namespace

SdEndpoint::TxStamp SdEndpoint::next_multicast() {
  const auto s = multicast_.take();
  return TxStamp{s.session_id, flags_for(s)};
}

SdEndpoint::TxStamp SdEndpoint::next_unicast(const Endpoint& peer) {
  auto& p = find_or_add(tx_, peer, max_peers_, ++tick_);
  const auto s = p.counter.take();
  return TxStamp{s.session_id, flags_for(s)};
}

bool SdEndpoint::observe(const Endpoint& peer, bool via_multicast, std::uint16_t session_id,
                         bool reboot) {
  auto& p = find_or_add(rx_, peer, max_peers_, ++tick_);
  RxRelation& r = via_multicast ? p.multicast : p.unicast;
  bool rebooted = false;
  if (r.seen) {
    // feat_req_someipsd_764
    if (!r.reboot && reboot) rebooted = true;
    if (r.reboot && reboot && r.session >= session_id) rebooted = true;
  }
  r.seen = true;
  r.session = session_id;
  r.reboot = reboot;
  if (rebooted) {
    // The other relation's history belongs to the peer's previous life.
    RxRelation& other = via_multicast ? p.unicast : p.multicast;
    other = RxRelation{};
  }
  return rebooted;
}

}  // namespace layersec::someip
