// EventPublisher: the server side's events. It keeps each offered event's
// state (a field's stored value, the event's session counter) and works out
// where one notification goes from the eventgroups' current subscriptions:
// every distinct subscriber UDP endpoint of each eventgroup the event belongs
// to, or once the eventgroup's multicast endpoint when it has one and at
// least multicast_threshold subscribers (0 and 1: from the first
// subscriber on). Sans-I/O: the runtime serialises, protects and sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/someip/address.h"
#include "layersec/someip/request_table.h"
#include "layersec/someip/runtime_config.h"
#include "layersec/someip/sd_server.h"

namespace layersec::someip {

class EventPublisher {
 public:
  struct Event {
    EventConfig cfg;
    std::vector<std::uint8_t> value;  // fields: the stored value
    bool has_value = false;
    SessionCounter session;           // session ids of its notifications
    [[nodiscard]] bool in_group(std::uint16_t eventgroup) const;
  };

  // One entry per offered service, in configuration order.
  explicit EventPublisher(const std::vector<ServiceConfig>& services);

  // The events of offered service number `service` (configuration order).
  [[nodiscard]] std::vector<Event>& events(std::size_t service) { return events_[service]; }
  // Event `event` of offered service number `service`, or null.
  [[nodiscard]] Event* find(std::size_t service, std::uint16_t event);
  // Stores a field's value (the initial event of every later subscriber).
  static void store(Event& e, ByteSpan value);

  // Destinations of one notification of event `e` of service `s`, given the
  // service's subscriptions, written to `out` (cleared first; its storage is
  // reused, so a steady state allocates nothing). Sorted, each once.
  static void destinations(const ServiceConfig& s, const EventConfig& e, const std::vector<SdSubscription>& subs,
                           std::vector<Endpoint>& out);
  // Distinct subscribers of `eventgroup` (by UDP endpoint, else SD endpoint).
  [[nodiscard]] static std::size_t subscriber_count(const std::vector<SdSubscription>& subs,
                                                    std::uint16_t eventgroup);
  // True when an eventgroup of `e` has a multicast endpoint.
  [[nodiscard]] static bool has_multicast(const ServiceConfig& s, const EventConfig& e);

 private:
  std::vector<std::vector<Event>> events_;
};

}  // namespace layersec::someip
