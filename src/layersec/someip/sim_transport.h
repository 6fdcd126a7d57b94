// SimTransport: the runtime's Transport on the simulated segment. UDP ports
// and multicast groups are the net::SimHost's; the clock is the simulator's
// and wake-ups are simulator events (SimAlarm, usable on its own).
// Single-threaded like the simulator.
//
// One SimHost port can carry both unicast traffic (bind) and one or more
// multicast groups on the same port number (join): datagrams are dispatched
// by their destination address. The destructor releases every port and group
// and cancels the pending wake-up, so a new transport (a restarted node) can
// use the same host.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/someip/runtime.h"  // callers construct a Runtime on the adapter
#include "layersec/someip/transport.h"

namespace layersec::someip {

// The simulator's clock, and one simulator event that wake_at() replaces.
// No callback runs after destruction.
class SimAlarm final : public Clock, public Alarm {
 public:
  // `sim` is not owned and must outlive the alarm.
  explicit SimAlarm(net::Simulator& sim) : sim_(sim) {}
  ~SimAlarm() override;
  SimAlarm(const SimAlarm&) = delete;
  SimAlarm& operator=(const SimAlarm&) = delete;

  [[nodiscard]] TimePoint now() const override;
  void wake_at(TimePoint at, Callback cb) override;

 private:
  net::Simulator& sim_;
  std::optional<net::EventId> timer_;
  std::shared_ptr<Callback> timer_cb_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class SimTransport final : public Transport {
 public:
  // Neither is owned; both must outlive the transport.
  SimTransport(net::Simulator& sim, net::SimHost& host);
  ~SimTransport() override;
  SimTransport(const SimTransport&) = delete;
  SimTransport& operator=(const SimTransport&) = delete;

  [[nodiscard]] IpAddress local_address() const override;
  Status<TransportError> bind(std::uint16_t port, Handler handler) override;
  Status<TransportError> join(const Endpoint& group, Handler handler) override;
  void leave(const Endpoint& group) override;
  void unbind(std::uint16_t port) override;
  Status<TransportError> send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) override;
  [[nodiscard]] TimePoint now() const override { return alarm_.now(); }
  void wake_at(TimePoint at, TimerCallback cb) override { alarm_.wake_at(at, std::move(cb)); }

  [[nodiscard]] net::SimHost& host() { return host_; }

 private:
  struct Port {
    std::shared_ptr<Handler> unicast;
    std::map<net::Ipv4Address, std::shared_ptr<Handler>> groups;
    bool host_bound = false;
  };
  Status<TransportError> ensure_host_bound(std::uint16_t port, Port& p);
  void release_if_unused(std::uint16_t port);
  void on_udp(std::uint16_t port, const net::UdpDatagram& d);

  net::SimHost& host_;
  SimAlarm alarm_;
  std::map<std::uint16_t, Port> ports_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace layersec::someip
