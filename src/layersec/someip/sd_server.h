// SOME/IP-SD server state machine for one service instance (Open SOME/IP
// Specification feat_req_someipsd_63..83, 262, 333, 619; AUTOSAR
// PRS_SOMEIPServiceDiscoveryProtocol §4.2.1 "Server Service State Machine").
//
// States:
//   kDown         not offered. start() -> kInitialWait.
//   kInitialWait  waiting a random delay in [INITIAL_DELAY_MIN, _MAX] (random
//                 source injected); then the first multicast OfferService and
//                 -> kRepetition (or -> kMain when REPETITIONS_MAX = 0).
//                 Finds are ignored, Subscribes are Nacked (not offered yet).
//   kRepetition   offers after 2^0, 2^1, ... * REPETITIONS_BASE_DELAY, up to
//                 REPETITIONS_MAX offers; after the last one a further wait of
//                 2^REPETITIONS_MAX * BASE, then -> kMain (feat_req_someipsd_77's
//                 worked example). Finds get a unicast offer.
//   kMain         a multicast offer on entry and then every CYCLIC_OFFER_DELAY.
//                 A Find with the unicast flag is answered by unicast if the
//                 last multicast offer is younger than CYCLIC_OFFER_DELAY / 2,
//                 otherwise by multicast (feat_req_someipsd_423 ff.).
//   any -> kDown  stop(): a StopOfferService (TTL 0) if an offer went out, all
//                 subscriptions dropped (kUnsubscribed events).
//
// Subscriptions (feat_req_someipsd_333, 619): SubscribeEventgroup for a known
// eventgroup of an offered (kRepetition/kMain) instance is Acked by unicast to
// the subscriber's SD endpoint with the TTL and counter copied and the
// eventgroup's multicast option if configured; renewal refreshes the expiry;
// TTL expiry removes it (kSubscriptionExpired). Unknown eventgroup, not
// offered, no subscriber endpoint, or subscriber table full -> Nack (TTL 0).
// StopSubscribeEventgroup removes it (kUnsubscribed). Answers to entries
// received by multicast are delayed by REQUEST_RESPONSE_DELAY when configured.
//
// Binding to the sender (ours, not the specification's; docs/someip.md): a
// Subscribe whose unicast endpoint options name another address than the
// datagram's source is Nacked (it would reflect our events to a third host),
// as is one from a source the eventgroup's allowed_subscribers does not list;
// a StopSubscribe removes only a subscription made from the same SD endpoint
// with the same endpoints and counter, and is ignored when it names another
// host's endpoint. Every refusal is counted by SdDropReason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/someip/sd_types.h"

namespace layersec::someip {

struct SdServerConfig {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 1;
  std::uint8_t major_version = 1;
  std::uint32_t minor_version = 0;
  SdTiming timing;
  // Where the service accepts requests and sends events from (feat_req_someipsd_758).
  std::optional<Endpoint> udp_endpoint;
  std::optional<Endpoint> tcp_endpoint;
  struct Eventgroup {
    std::uint16_t id = 0;
    std::optional<Endpoint> multicast;  // sent in the Ack when set
    // Source addresses allowed to subscribe; empty = any. Others get a Nack.
    std::vector<IpAddress> allowed_subscribers{};
  };
  std::vector<Eventgroup> eventgroups;
  std::size_t max_subscribers = 64;
  std::size_t max_pending_answers = 32;
};

struct SdSubscription {
  std::uint16_t eventgroup_id = 0;
  Endpoint peer;                // subscriber's SD endpoint
  std::optional<Endpoint> udp;  // where UDP events go
  std::optional<Endpoint> tcp;
  std::uint8_t counter = 0;
  TimePoint expiry;
};

class SdServer {
 public:
  enum class State : std::uint8_t {
    kDown,         // not offered; no timers
    kInitialWait,  // random initial delay running; finds ignored, subscribes nacked
    kRepetition,   // doubling-delay offers (or the final 2^MAX wait)
    kMain,         // cyclic offers
  };

  SdServer(SdServerConfig config, RandomSource& random);

  void start(TimePoint now);
  void stop(TimePoint now, SdOutput& out);
  void on_timer(TimePoint now, SdOutput& out);
  // True if `e` (Find / Subscribe / StopSubscribe) addresses this instance.
  [[nodiscard]] bool matches(const SdEntry& e) const;
  // Handles a Find, Subscribe or StopSubscribe entry that matches().
  void on_entry(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts, SdOutput& out);
  // The peer at `peer` rebooted: its subscriptions are dropped.
  void on_peer_reboot(const Endpoint& peer, SdOutput& out);

  [[nodiscard]] TimePoint next_deadline() const;
  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] const SdServerConfig& config() const { return config_; }
  [[nodiscard]] const std::vector<SdSubscription>& subscriptions() const { return subs_; }
  [[nodiscard]] std::uint64_t offers_sent() const { return offers_sent_; }
  // Entries this server dropped or Nacked, by reason.
  [[nodiscard]] const SdDropCounters& drops() const { return drops_; }

 private:
  struct PendingAnswer {
    TimePoint due;
    SdOutgoing send;
  };
  [[nodiscard]] SdOutgoing offer(bool multicast, const Endpoint& to, std::uint32_t ttl) const;
  void send_multicast_offer(TimePoint now, SdOutput& out);
  void answer(const SdRxContext& rx, SdOutgoing send, SdOutput& out);
  void on_find(const SdRxContext& rx, SdOutput& out);
  void on_subscribe(const SdRxContext& rx, const SdEntry& e, const SdEntryOptions& opts,
                    SdOutput& out);
  [[nodiscard]] const SdServerConfig::Eventgroup* eventgroup(std::uint16_t id) const;
  [[nodiscard]] SdEvent event(SdEventKind k, const SdSubscription& s) const;
  // Why a Subscribe for `g` from `rx` cannot be accepted, if it cannot.
  [[nodiscard]] std::optional<SdDropReason> refusal(const SdRxContext& rx, const SdEntryOptions& opts,
                                                    const SdServerConfig::Eventgroup* g, bool known) const;
  void drop(SdDropReason r, SdOutput& out);

  SdServerConfig config_;
  RandomSource* random_;
  State state_ = State::kDown;
  TimePoint deadline_ = TimePoint::max();
  std::uint32_t repetitions_sent_ = 0;
  bool offered_ = false;          // an offer went out since start()
  bool repetition_done_ = false;  // the final 2^max wait is running
  TimePoint last_multicast_offer_;
  std::uint64_t offers_sent_ = 0;
  std::vector<SdSubscription> subs_;
  std::vector<PendingAnswer> pending_;
  SdDropCounters drops_;
};

}  // namespace layersec::someip
