// Test support for the runtime's parts and for a runtime without a network:
// an Alarm driven by hand and a PacketWriter that records what is bound,
// joined and sent and delivers datagrams on request. With a ManualClock they
// make a RuntimeIo (transport.h). Header-only, test code only.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "layersec/someip/transport.h"

namespace layersec::someip::testing_support {

// One pending wake-up, run by fire_due().
class ManualAlarm final : public Alarm {
 public:
  void wake_at(TimePoint at, Callback cb) override {
    at_ = at;
    cb_ = at == TimePoint::max() ? Callback{} : std::move(cb);
  }
  [[nodiscard]] TimePoint at() const { return at_; }
  // Runs the wake-up if it is due at `now` (once). True when it ran.
  bool fire_due(TimePoint now) {
    if (at_ == TimePoint::max() || now < at_ || !cb_) return false;
    Callback cb = std::move(cb_);
    at_ = TimePoint::max();
    cb();
    return true;
  }

 private:
  TimePoint at_ = TimePoint::max();
  Callback cb_;
};

// A datagram a RecordingWriter was asked to send.
struct SentDatagram {
  std::uint16_t from_port = 0;
  Endpoint to;
  std::vector<std::uint8_t> bytes;
};

class RecordingWriter final : public PacketWriter {
 public:
  explicit RecordingWriter(IpAddress local) : local_(local) {}

  [[nodiscard]] IpAddress local_address() const override { return local_; }
  Status<TransportError> bind(std::uint16_t port, Handler handler) override {
    if (ports_.count(port) != 0) return Err(TransportError::kPortInUse);
    ports_[port] = std::move(handler);
    return {};
  }
  Status<TransportError> join(const Endpoint& group, Handler handler) override {
    if (fail_joins) return Err(TransportError::kSystem);
    groups_[group] = std::move(handler);
    return {};
  }
  void leave(const Endpoint& group) override {
    groups_.erase(group);
    left.push_back(group);
  }
  void unbind(std::uint16_t port) override { ports_.erase(port); }
  Status<TransportError> send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) override {
    if (ports_.count(from_port) == 0 && !send_unbound) return Err(TransportError::kNotBound);
    if (fail_sends) return Err(TransportError::kUnreachable);
    sent.push_back(SentDatagram{from_port, to, std::vector<std::uint8_t>(payload.begin(), payload.end())});
    return {};
  }

  [[nodiscard]] bool bound(std::uint16_t port) const { return ports_.count(port) != 0; }
  [[nodiscard]] bool joined(const Endpoint& group) const { return groups_.count(group) != 0; }
  [[nodiscard]] std::size_t joined_count() const { return groups_.size(); }
  // Hands `payload` from `source` to the handler of unicast `port`. False
  // when nothing is bound there.
  bool deliver(std::uint16_t port, const Endpoint& source, ByteSpan payload) {
    auto it = ports_.find(port);
    if (it == ports_.end() || !it->second) return false;
    Datagram d{payload, source, Endpoint{local_, port, L4Proto::kUdp}, false};
    Handler h = it->second;  // the handler may unbind its own port
    h(d);
    return true;
  }
  // Hands `payload` from `source` to the handler of joined `group`.
  bool deliver_multicast(const Endpoint& group, const Endpoint& source, ByteSpan payload) {
    auto it = groups_.find(group);
    if (it == groups_.end() || !it->second) return false;
    Datagram d{payload, source, group, true};
    Handler h = it->second;
    h(d);
    return true;
  }

  std::vector<SentDatagram> sent;
  std::vector<Endpoint> left;
  bool fail_sends = false;
  bool fail_joins = false;
  bool send_unbound = false;  // accept sends from ports not bound (parts tested alone)

 private:
  IpAddress local_;
  std::map<std::uint16_t, Handler> ports_;
  std::map<Endpoint, Handler> groups_;
};

}  // namespace layersec::someip::testing_support
