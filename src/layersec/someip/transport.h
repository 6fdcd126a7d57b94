// What a SOME/IP runtime needs from its environment, as three small
// interfaces so each provider implements only what it has:
//
//   Clock        (base/time.h) the runtime's time: SD phases, request
//                deadlines, TP reassembly timeouts, sync scheduling;
//   Alarm        one replaceable wake-up;
//   PacketWriter datagram I/O on one unicast address: UDP ports, multicast
//                membership, send; received datagrams go to the handler of
//                the port or group they arrived on.
//
// RuntimeIo holds one of each for a Runtime. Transport bundles all three for
// the adapters that have all three on one object: SimTransport (the
// simulator's clock and events, a net::SimHost's ports), SocketTransport and
// RawTransport (an net::EventLoop's clock and timers through LoopAlarm, UDP
// sockets or an AF_PACKET socket). A fuzzer or a unit test can instead pair a
// ManualClock, a hand-driven Alarm and a PacketWriter that records what is
// sent (fake_io_test_support.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/someip/address.h"

namespace layersec::someip {

enum class TransportError : std::uint8_t {
  kPortInUse,    // bind on a port already bound here
  kNotBound,     // send from a port not bound
  kTooLarge,     // datagram larger than the transport carries
  kUnreachable,  // no route / no address resolution
  kSystem,       // the OS refused (see the adapter's message)
};
[[nodiscard]] std::string_view to_string(TransportError e);

// One pending wake-up.
class Alarm {
 public:
  using Callback = std::function<void()>;
  virtual ~Alarm() = default;
  // Calls `cb` once at (or soon after) `at`, replacing any earlier request.
  // TimePoint::max() cancels. The callback runs on the provider's thread.
  virtual void wake_at(TimePoint at, Callback cb) = 0;
};

// Datagram I/O on the node's unicast address.
class PacketWriter {
 public:
  struct Datagram {
    ByteSpan payload;      // valid only during the handler call
    Endpoint source;
    Endpoint destination;  // our unicast endpoint, or the group for multicast
    bool multicast = false;
  };
  using Handler = std::function<void(const Datagram&)>;

  virtual ~PacketWriter() = default;
  [[nodiscard]] virtual IpAddress local_address() const = 0;
  // Receives every datagram sent to `port` on the unicast address.
  virtual Status<TransportError> bind(std::uint16_t port, Handler handler) = 0;
  // Receives datagrams sent to group.address:group.port (binding that port
  // for the group if needed).
  virtual Status<TransportError> join(const Endpoint& group, Handler handler) = 0;
  virtual void leave(const Endpoint& group) = 0;
  // Releases a port bound with bind() (its handler is dropped), so a new
  // runtime can bind it again on the same writer (node restart). The
  // default does nothing: such a writer cannot host a restarted runtime.
  virtual void unbind(std::uint16_t port) { (void)port; }
  virtual Status<TransportError> send(std::uint16_t from_port, const Endpoint& to, ByteSpan payload) = 0;
};

// An adapter that is clock, alarm and packet writer at once.
class Transport : public Clock, public Alarm, public PacketWriter {
 public:
  using TimerCallback = Alarm::Callback;
};

// The three parts a Runtime runs on. None is owned; all must outlive the
// runtime, and every callback must come on one thread.
struct RuntimeIo {
  PacketWriter& packets;
  const Clock& clock;
  Alarm& alarm;
  RuntimeIo(PacketWriter& p, const Clock& c, Alarm& a) : packets(p), clock(c), alarm(a) {}
  // All three from one adapter.
  explicit RuntimeIo(Transport& t) : packets(t), clock(t), alarm(t) {}
};

}  // namespace layersec::someip
