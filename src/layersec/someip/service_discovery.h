// ServiceDiscovery: the sans-I/O SOME/IP-SD driver of one node. It owns the
// SdEndpoint (session ids, peer reboot detection), the server machines (one
// per offered instance) and the client machines (one per required instance).
//
//   on_datagram(now, bytes, source, via_multicast) -> parse, validate, detect
//       reboots (feat_req_someipsd_764), dispatch entries in order (_1170 ff.)
//   on_timer(now)                                 -> phase timers, TTLs
//   next_deadline()                               -> when to call on_timer
//
// Output is SdActions: SD datagrams to send (to the multicast group or a
// unicast peer; entries for one destination produced by one call are packed
// into as few messages as fit in max_payload, feat_req_someipsd_836) and
// events. A runtime drives it from sockets or the simulated segment.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/someip/sd_client.h"
#include "layersec/someip/sd_endpoint.h"
#include "layersec/someip/sd_message.h"
#include "layersec/someip/sd_server.h"
#include "layersec/someip/sd_types.h"

namespace layersec::someip {

struct SdConfig {
  Endpoint local;            // our SD endpoint (unicast address, port 30490)
  Endpoint multicast_group;  // e.g. 224.224.224.245:30490
  std::size_t max_payload = kMaxUdpPayload;  // SD payload bytes per datagram
  std::size_t max_peers = 256;
};

struct SdDatagram {
  Endpoint destination;
  bool multicast = false;
  std::vector<std::uint8_t> bytes;
};

struct SdActions {
  std::vector<SdDatagram> datagrams;
  std::vector<SdEvent> events;
  void clear() {
    datagrams.clear();
    events.clear();
  }
};

inline constexpr std::size_t kSdErrorCount = static_cast<std::size_t>(SdError::kOptionIndexOutOfRange) + 1;

// Every datagram received is counted once as own, rejected or accepted;
// every entry of an accepted datagram is handed to the machines, counted as
// unknown_entries or counted as unmatched_entries.
struct SdCounters {
  std::uint64_t received = 0;
  std::uint64_t rejected = 0;   // not SOME/IP or not valid SD (dropped): not_someip + sum(invalid_sd)
  std::uint64_t own = 0;        // our own multicast looped back
  std::uint64_t reboots = 0;
  std::uint64_t sent = 0;
  std::uint64_t not_someip = 0;                            // rejected: the SOME/IP header does not parse
  std::array<std::uint64_t, kSdErrorCount> invalid_sd{};   // rejected: not a valid SD message, by SdError
  std::uint64_t unknown_entries = 0;    // entries of an unknown type (ignored)
  std::uint64_t unmatched_entries = 0;  // entries no server or client of ours matches (ignored)
  std::uint64_t unsent_entries = 0;     // entries to send that could not be encoded (dropped)
  std::uint64_t unsent_datagrams = 0;   // datagrams that could not be written (dropped)
  // Valid entries the machines refused (sender binding, allowlists, Nacks),
  // by reason (sd_types.h); summed over every server and client.
  SdDropCounters dropped;
};

class ServiceDiscovery {
 public:
  ServiceDiscovery(SdConfig config, RandomSource& random);

  // References stay valid for the object's lifetime.
  SdServer& add_server(SdServerConfig c);
  SdClient& add_client(SdClientConfig c);

  void start_offer(TimePoint now, SdServer& s) { s.start(now); }
  void stop_offer(TimePoint now, SdServer& s, SdActions& out);
  void request(TimePoint now, SdClient& c, SdActions& out);
  void release(TimePoint now, SdClient& c, SdActions& out);

  void on_datagram(TimePoint now, ByteSpan datagram, const Endpoint& source, bool via_multicast,
                   SdActions& out);
  void on_timer(TimePoint now, SdActions& out);
  [[nodiscard]] TimePoint next_deadline() const;
  [[nodiscard]] const SdCounters& counters() const { return counters_; }
  [[nodiscard]] SdEndpoint& endpoint() { return endpoint_; }

 private:
  // Packs the pending sends into datagrams and moves the events.
  void flush(SdActions& out);

  SdConfig config_;
  RandomSource* random_;
  SdEndpoint endpoint_;
  std::deque<SdServer> servers_;
  std::deque<SdClient> clients_;
  SdOutput pending_;
  SdCounters counters_;
};

}  // namespace layersec::someip
