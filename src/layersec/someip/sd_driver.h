// SdDriver: the glue between a runtime and its ServiceDiscovery. It builds
// the SD machines from the runtime configuration (one SdServer per offered
// instance, one SdClient per required instance), runs each SD step (start,
// a received SD message, a timer, stop), and turns the step's SdActions into
// effects:
//
//   datagrams      -> Delegate::send_sd (the runtime protects and sends them)
//   available/lost -> Delegate::on_availability, once per change; a lost
//                     service's multicast groups are left and its FindService
//                     phases restart, so a node that comes back is found even
//                     if its first offers are missed
//   Ack + group    -> joins the eventgroup's multicast group (once per group)
//   new subscriber -> Delegate::on_subscribed (initial events, sync cycles)
//
// It owns the required services' client-side state (port, joined groups,
// what was reported) and answers the runtime's questions about it. Time comes
// in with each call; the only I/O is multicast membership on the
// PacketWriter, whose handlers the delegate provides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"
#include "layersec/someip/runtime_config.h"
#include "layersec/someip/runtime_types.h"
#include "layersec/someip/service_discovery.h"
#include "layersec/someip/transport.h"

namespace layersec::someip {

class SdDriver {
 public:
  // What the driver needs from the runtime.
  class Delegate {
   public:
    virtual ~Delegate() = default;
    // Sends one SD datagram from the SD port.
    virtual void send_sd(const SdDatagram& d) = 0;
    // A required service came up (true) or went away (false).
    virtual void on_availability(std::uint16_t service, std::uint16_t instance, bool available) = 0;
    // A new subscriber (ev.udp set) of an eventgroup of offered service
    // number `service` (configuration order).
    virtual void on_subscribed(std::size_t service, const SdEvent& ev) = 0;
    // A step's events are handled; lost services are searched for next.
    virtual void on_step_done(TimePoint now) = 0;
    // The receive handler for datagrams of a multicast group on `port`.
    virtual PacketWriter::Handler group_handler(std::uint16_t port) = 0;
    // False once a handler stopped the runtime: the step ends.
    [[nodiscard]] virtual bool running() const = 0;
  };

  // A required service and its client-side state.
  struct Required {
    ClientConfig cfg;
    std::uint16_t port = 0;        // local port of its responses and unicast events
    SdClient* sd = nullptr;        // set by build()
    std::vector<Endpoint> groups;  // multicast groups joined from Acks
    bool reported_available = false;
  };

  // None is owned; all must outlive the driver.
  SdDriver(const RuntimeConfig& config, PacketWriter& io, RandomSource& random, RuntimeCounters& counters,
           Delegate& delegate);
  SdDriver(const SdDriver&) = delete;
  SdDriver& operator=(const SdDriver&) = delete;

  // Builds ServiceDiscovery and its machines (once; the endpoints use the
  // writer's local address), packing SD datagrams to `max_payload`.
  void build(std::size_t max_payload);
  [[nodiscard]] bool built() const { return sd_ != nullptr; }

  // Offers every service and requests every required one (when SD is enabled).
  void start(TimePoint now);
  // StopOffer for every offer, StopSubscribe for every subscription.
  void stop(TimePoint now);
  // A verified SD message from `source`.
  void on_datagram(TimePoint now, ByteSpan message, const Endpoint& source, bool multicast);
  void on_timer(TimePoint now);
  // When on_timer() is due (TimePoint::max() before build()).
  [[nodiscard]] TimePoint next_deadline() const;
  // Leaves every multicast group joined for required services.
  void leave_all_groups();

  // Subscriptions of offered service number `service` (empty before build()).
  [[nodiscard]] const std::vector<SdSubscription>& subscriptions(std::size_t service) const;
  [[nodiscard]] const std::vector<Required>& required() const { return required_; }
  // A required service (service, instance; 0xFFFF any) that is available,
  // preferring the first; `configured` tells whether any matched at all.
  [[nodiscard]] const Required* find_available(std::uint16_t service, std::uint16_t instance, bool& configured) const;
  // The available required `service` whose offer's UDP endpoint is `source`.
  [[nodiscard]] const Required* offered_from(std::uint16_t service, const Endpoint& source) const;
  // Null before build().
  [[nodiscard]] const SdCounters* counters() const { return sd_ ? &sd_->counters() : nullptr; }

 private:
  void process(TimePoint now, SdActions& acts);
  void handle_event(const SdEvent& ev, std::vector<Required*>& lost);
  void join_group(Required& r, const Endpoint& group);
  void leave_groups(Required& r);

  const RuntimeConfig& cfg_;
  PacketWriter& io_;
  RandomSource& random_;
  RuntimeCounters& counters_;
  Delegate& delegate_;
  std::unique_ptr<ServiceDiscovery> sd_;
  std::vector<SdServer*> servers_;  // per offered service, set by build()
  std::vector<Required> required_;
};

}  // namespace layersec::someip
