// SOME/IP-SD client state machine for one required service instance (Open
// SOME/IP Specification feat_req_someipsd_63..77, 262, 333, 619, 764, 866,
// 867; AUTOSAR PRS_SOMEIPServiceDiscoveryProtocol §4.2.2 "Client Service
// State Machine").
//
// Find phases (the client's "requested" lifecycle):
//   kDown         not requested. request() -> kInitialWait (or straight to
//                 kMain when an offer is already known).
//   kInitialWait  random delay in [INITIAL_DELAY_MIN, _MAX], then a multicast
//                 FindService -> kRepetition (or kMain if REPETITIONS_MAX = 0).
//   kRepetition   finds after 2^0, 2^1, ... * BASE, at most REPETITIONS_MAX.
//   kMain         no more finds (feat_req_someipsd_866: finds are never
//                 cyclic); an offer ends the find phases at once (_867).
//   release()     StopSubscribe for every eventgroup subscribed -> kDown.
//
// Offer tracking runs in every phase: the first matching OfferService makes
// the service available (kServiceAvailable, with its endpoints); it stays
// available until a StopOfferService, the offer's TTL running out, or the
// offering peer's reboot (kServiceUnavailable). A configured instance 0xFFFF
// binds to the first instance offered until that one goes away.
//
// Eventgroups: while requested and available, every received offer triggers a
// SubscribeEventgroup by unicast to the offering SD endpoint (initial
// subscription and renewal alike, as vsomeip does); Ack -> kSubscriptionAcked
// (once per subscription, carrying the multicast option if any), Nack ->
// kSubscriptionNacked. unsubscribe() sends StopSubscribeEventgroup.
//
// Binding to the sender (ours, not the specification's; docs/someip.md):
// - an Offer is accepted only when every unicast endpoint option it carries
//   names the datagram's source address, and (when allowed_servers is set)
//   only from a listed address;
// - while bound, Offers of another instance or SD peer are ignored;
// - a StopOffer acts only when it comes from the SD peer of the current offer
//   and names no other host's endpoint;
// - an Ack or Nack acts only when it comes from the server subscribed to.
// Every other case is a drop counted by SdDropReason, with no state change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/someip/sd_types.h"

namespace layersec::someip {

struct SdClientConfig {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0xFFFF;    // 0xFFFF: any instance
  std::uint8_t major_version = 0xFF;     // 0xFF: any
  std::uint32_t minor_version = 0xFFFFFFFF;  // 0xFFFFFFFF: any
  SdTiming timing;
  // Where this client receives events (sent in SubscribeEventgroup).
  std::optional<Endpoint> udp_endpoint;
  std::optional<Endpoint> tcp_endpoint;
  std::vector<std::uint16_t> eventgroups;  // subscribed while requested
  // Source addresses whose Offers are accepted; empty = any. Pinning the
  // servers is what keeps a host that offers first from capturing the client
  // when SD is not protected.
  std::vector<IpAddress> allowed_servers{};
};

struct SdOfferInfo {
  std::uint16_t instance_id = 0;
  std::uint8_t major_version = 0;
  std::uint32_t minor_version = 0;
  Endpoint peer;  // offering SD endpoint
  std::optional<Endpoint> udp;
  std::optional<Endpoint> tcp;
  TimePoint expiry;
};

class SdClient {
 public:
  enum class State : std::uint8_t {
    kDown,         // not requested; offers are still tracked
    kInitialWait,  // random initial delay before the first find
    kRepetition,   // doubling-delay finds, at most REPETITIONS_MAX
    kMain,         // finds over (offer seen or repetitions done)
  };
  enum class SubscriptionState : std::uint8_t {
    kNotSubscribed,  // nothing sent (or Nacked, or the service went away)
    kPending,        // Subscribe sent, no Ack yet
    kAcked,          // Ack received; renewed on every offer
  };

  SdClient(SdClientConfig config, RandomSource& random);

  void request(TimePoint now, SdOutput& out);
  void release(TimePoint now, SdOutput& out);
  // Adds / removes an eventgroup at run time.
  void subscribe(TimePoint now, std::uint16_t eventgroup, SdOutput& out);
  void unsubscribe(TimePoint now, std::uint16_t eventgroup, SdOutput& out);

  void on_timer(TimePoint now, SdOutput& out);
  // True if `e` (Offer, StopOffer, Ack, Nack) concerns this client.
  [[nodiscard]] bool matches(const SdEntry& e) const;
  void on_entry(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts, SdOutput& out);
  void on_peer_reboot(const Endpoint& peer, SdOutput& out);

  [[nodiscard]] TimePoint next_deadline() const;
  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] bool available() const { return offer_.has_value(); }
  [[nodiscard]] const std::optional<SdOfferInfo>& offer() const { return offer_; }
  [[nodiscard]] SubscriptionState subscription_state(std::uint16_t eventgroup) const;
  [[nodiscard]] const SdClientConfig& config() const { return config_; }
  [[nodiscard]] std::uint64_t finds_sent() const { return finds_sent_; }
  // Entries this client dropped, by reason.
  [[nodiscard]] const SdDropCounters& drops() const { return drops_; }

 private:
  struct Group {
    std::uint16_t id = 0;
    SubscriptionState state = SubscriptionState::kNotSubscribed;
  };
  void send_find(SdOutput& out);
  void send_subscribe(const Group& g, std::uint32_t ttl, SdOutput& out);
  void lose_service(SdOutput& out);
  void on_offer(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts, SdOutput& out);
  void drop(SdDropReason r, SdOutput& out);
  [[nodiscard]] SdEvent event(SdEventKind k) const;

  SdClientConfig config_;
  RandomSource* random_;
  State state_ = State::kDown;
  TimePoint deadline_ = TimePoint::max();
  std::uint32_t repetitions_sent_ = 0;
  std::optional<SdOfferInfo> offer_;
  std::vector<Group> groups_;
  std::uint64_t finds_sent_ = 0;
  SdDropCounters drops_;
};

}  // namespace layersec::someip
