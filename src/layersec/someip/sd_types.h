// Shared vocabulary of the SOME/IP-SD state machines (sd_server.h,
// sd_client.h, sd_endpoint.h, service_discovery.h): timing parameters, the
// injected random source, what a machine asks to send and the events it
// reports. Machines append to an SdOutput; they never send or read clocks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/someip/address.h"
#include "layersec/someip/sd_message.h"

namespace layersec::someip {

// SD timing (feat_req_someipsd_63..81, 83). Defaults are vsomeip's
// (implementation/service_discovery/include/defines.hpp).
struct SdTiming {
  Duration initial_delay_min = Duration::milliseconds(0);
  Duration initial_delay_max = Duration::milliseconds(3000);
  Duration repetitions_base_delay = Duration::milliseconds(10);
  std::uint32_t repetitions_max = 3;
  Duration cyclic_offer_delay = Duration::milliseconds(1000);
  // Delay of answers to entries received by multicast (feat_req_someipsd_83).
  // Default 0: answer at once, as vsomeip does in practice.
  Duration request_response_delay_min = Duration::milliseconds(0);
  Duration request_response_delay_max = Duration::milliseconds(0);
  std::uint32_t ttl = kTtlInfinite;  // seconds, for offers, finds and subscribes
};

// Uniform random durations, injected so tests and simulations are
// deterministic.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // A duration uniformly drawn from [lo, hi] (lo when hi <= lo).
  [[nodiscard]] virtual Duration uniform(Duration lo, Duration hi) = 0;
};

// SplitMix64-based source with a fixed seed (deterministic, not secret).
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(std::uint64_t seed) : state_(seed) {}
  [[nodiscard]] Duration uniform(Duration lo, Duration hi) override;

 private:
  std::uint64_t state_;
};

// An entry a machine wants sent: to the SD multicast group, or by unicast to
// a peer's SD endpoint. Entries for the same destination produced in one
// call are packed into one SD message by ServiceDiscovery.
struct SdOutgoing {
  bool multicast = true;
  Endpoint destination;  // unicast only
  SdEntry entry;
  std::vector<SdOption> run1;
  std::vector<SdOption> run2;
};

enum class SdEventKind : std::uint8_t {
  // client side
  kServiceAvailable,    // first offer seen (endpoint = service endpoint)
  kServiceUnavailable,  // StopOffer, TTL expiry or peer reboot
  kSubscriptionAcked,   // multicast set if the Ack carried a multicast option
  kSubscriptionNacked,
  // server side
  kSubscribed,            // a new subscriber (endpoint = where events go)
  kUnsubscribed,          // StopSubscribe, server stop or subscriber reboot
  kSubscriptionExpired,   // TTL ran out without renewal
  // endpoint
  kPeerRebooted,          // feat_req_someipsd_764
};
[[nodiscard]] std::string_view to_string(SdEventKind k);

struct SdEvent {
  SdEventKind kind = SdEventKind::kServiceAvailable;
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0;
  std::uint8_t major_version = 0;
  std::uint32_t minor_version = 0;
  std::uint16_t eventgroup_id = 0;
  Endpoint peer;                     // the peer's SD endpoint
  std::optional<Endpoint> udp;       // service / subscriber UDP endpoint
  std::optional<Endpoint> tcp;       // service / subscriber TCP endpoint
  std::optional<Endpoint> multicast; // eventgroup multicast (Ack)
};

// Why a machine ignored (or Nacked) an entry instead of acting on it. Every
// such entry leaves the machine's state as it was; the reason is counted in
// the machine's drops() and in the SdOutput of the call (ServiceDiscovery
// adds those to SdCounters::dropped). The binding rules (docs/someip.md,
// "Binding entries to their sender") are ours: the SD specification does not
// require an endpoint to belong to the host that names it, but a client or
// server that trusts a named endpoint lets any host redirect or reflect it.
enum class SdDropReason : std::uint8_t {
  // client side: Offer / StopOffer / Ack / Nack
  kOfferEndpointNotSource,      // an Offer names a unicast endpoint that is not the datagram's source address
  kOfferServerNotAllowed,       // an Offer from a host not in SdClientConfig::allowed_servers
  kOfferBoundElsewhere,         // an Offer while bound to another instance or SD peer (ignored)
  kStopOfferNotFromOfferer,     // a StopOffer of the bound instance from another SD peer than its offerer
  kStopOfferEndpointNotSource,  // a StopOffer names a unicast endpoint that is not its source address
  kAckNotFromServer,            // an Ack or Nack from another SD peer than the server subscribed to
  // server side: Subscribe (answered by a Nack) / StopSubscribe (ignored)
  kSubscribeEndpointNotSource,      // names another host's endpoint (reflection): Nack
  kSubscriberNotAllowed,            // source not in the eventgroup's allowed_subscribers: Nack
  kSubscribeNotOffered,             // the instance is not offered (yet): Nack
  kSubscribeUnknownEventgroup,      // Nack
  kSubscribeNoEndpoint,             // no endpoint we can serve and no multicast: Nack
  kSubscribeTableFull,              // max_subscribers reached: Nack
  kStopSubscribeEndpointNotSource,  // a StopSubscribe naming another host's endpoint
  kStopSubscribeUnknown,            // a StopSubscribe matching no subscription of its sender
  kCount,
};
[[nodiscard]] std::string_view to_string(SdDropReason r);

// Drops by reason.
struct SdDropCounters {
  std::array<std::uint64_t, static_cast<std::size_t>(SdDropReason::kCount)> by_reason{};
  void add(SdDropReason r) { ++by_reason[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint64_t operator[](SdDropReason r) const { return by_reason[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint64_t total() const;
  SdDropCounters& operator+=(const SdDropCounters& o);
};

struct SdOutput {
  std::vector<SdOutgoing> sends;
  std::vector<SdEvent> events;
  SdDropCounters drops;  // entries dropped during the calls that filled this output
  void clear() {
    sends.clear();
    events.clear();
    drops = SdDropCounters{};
  }
};

// Context of one received SD message, handed to the machines per entry.
struct SdRxContext {
  TimePoint now;
  Endpoint source;        // the sender's SD endpoint (UDP source address/port)
  bool via_multicast = false;
  bool unicast_flag = false;  // the message's unicast flag
};

// The options an entry references (both runs), resolved from the message.
struct SdEntryOptions {
  static constexpr std::size_t kMax = 30;
  SdOption items[kMax];
  std::size_t count = 0;
  [[nodiscard]] std::span<const SdOption> all() const { return {items, count}; }
  // First endpoint option of the given type class (0x04/0x06 endpoint,
  // 0x14/0x16 multicast) with the given protocol.
  [[nodiscard]] std::optional<Endpoint> endpoint(L4Proto proto) const;
  [[nodiscard]] std::optional<Endpoint> multicast() const;
};
// Resolves entry e's runs from a validated message.
void resolve_options(const SdMessageView& m, const SdEntry& e, SdEntryOptions& out);

// True when every unicast endpoint option (IPv4/IPv6 endpoint, types 0x04 and
// 0x06) among `opts` names `source`, the address the datagram came from. An
// endpoint of the other address family never does. Multicast and SD endpoint
// options are not looked at (the machines never send to what they name).
[[nodiscard]] bool endpoints_name_source(const SdEntryOptions& opts, const IpAddress& source);
// True when `allowed` is empty (anyone) or lists `a`.
[[nodiscard]] bool address_allowed(std::span<const IpAddress> allowed, const IpAddress& a);

// Endpoint option for a service endpoint of either address family.
[[nodiscard]] SdOption endpoint_option(const Endpoint& ep);
[[nodiscard]] SdOption multicast_option(const Endpoint& ep);

// Expiry for a TTL in seconds (kTtlInfinite = never).
[[nodiscard]] TimePoint ttl_expiry(TimePoint now, std::uint32_t ttl);

}  // namespace layersec::someip
