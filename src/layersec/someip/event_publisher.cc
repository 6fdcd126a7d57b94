#include "layersec/someip/event_publisher.h"

#include <algorithm>

namespace layersec::someip {

bool EventPublisher::Event::in_group(std::uint16_t eventgroup) const {
  return std::find(cfg.eventgroups.begin(), cfg.eventgroups.end(), eventgroup) != cfg.eventgroups.end();
}

EventPublisher::EventPublisher(const std::vector<ServiceConfig>& services) {
  for (const auto& s : services) {
    std::vector<Event> evs;
    for (const auto& ec : s.events) evs.push_back(Event{ec, {}, false, {}});
    events_.push_back(std::move(evs));
  }
}

EventPublisher::Event* EventPublisher::find(std::size_t service, std::uint16_t event) {
  for (auto& e : events_[service])
    if (e.cfg.event_id == event) return &e;
  return nullptr;
}

void EventPublisher::store(Event& e, ByteSpan value) {
  e.value.assign(value.begin(), value.end());
  e.has_value = true;
}

void EventPublisher::destinations(const ServiceConfig& s, const EventConfig& e,
                                  const std::vector<SdSubscription>& subs, std::vector<Endpoint>& out) {
  out.clear();
  for (auto gid : e.eventgroups) {
    const EventgroupConfig* g = find_eventgroup(s, gid);
    const std::size_t threshold = g ? std::max<std::size_t>(g->multicast_threshold, 1) : 1;
    if (g && g->multicast && threshold == 1) {
      // Multicast from the first subscriber on: one datagram to the group,
      // whatever N is (no per-subscriber work on this path).
      if (std::any_of(subs.begin(), subs.end(),
                      [gid](const SdSubscription& sub) { return sub.eventgroup_id == gid && sub.udp; }))
        out.push_back(*g->multicast);
      continue;
    }
    const std::size_t before = out.size();
    for (const auto& sub : subs)
      if (sub.eventgroup_id == gid && sub.udp) out.push_back(*sub.udp);
    // Distinct subscriber endpoints of this group: sort + unique, so a large
    // group costs O(N log N) per event, not O(N^2).
    const auto first = out.begin() + static_cast<std::ptrdiff_t>(before);
    std::sort(first, out.end());
    out.erase(std::unique(first, out.end()), out.end());
    const std::size_t n = out.size() - before;
    if (g && g->multicast && n > 0 && n >= threshold) {
      out.resize(before);
      out.push_back(*g->multicast);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

std::size_t EventPublisher::subscriber_count(const std::vector<SdSubscription>& subs, std::uint16_t eventgroup) {
  std::vector<Endpoint> seen;
  for (const auto& sub : subs) {
    if (sub.eventgroup_id != eventgroup) continue;
    const Endpoint key = sub.udp ? *sub.udp : sub.peer;
    if (std::find(seen.begin(), seen.end(), key) == seen.end()) seen.push_back(key);
  }
  return seen.size();
}

bool EventPublisher::has_multicast(const ServiceConfig& s, const EventConfig& e) {
  for (auto gid : e.eventgroups)
    if (const EventgroupConfig* g = find_eventgroup(s, gid); g && g->multicast) return true;
  return false;
}

}  // namespace layersec::someip
