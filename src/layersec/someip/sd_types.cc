#include "layersec/someip/sd_types.h"

#include <algorithm>

namespace layersec::someip {

Duration SeededRandom::uniform(Duration lo, Duration hi) {
  if (hi <= lo) return lo;
  state_ += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const auto span = static_cast<std::uint64_t>((hi - lo).ns()) + 1;
  return lo + Duration::nanoseconds(static_cast<std::int64_t>(z % span));
}

std::string_view to_string(SdEventKind k) {
  switch (k) {
    case SdEventKind::kServiceAvailable: return "service-available";
    case SdEventKind::kServiceUnavailable: return "service-unavailable";
    case SdEventKind::kSubscriptionAcked: return "subscription-acked";
    case SdEventKind::kSubscriptionNacked: return "subscription-nacked";
    case SdEventKind::kSubscribed: return "subscribed";
    case SdEventKind::kUnsubscribed: return "unsubscribed";
    case SdEventKind::kSubscriptionExpired: return "subscription-expired";
    case SdEventKind::kPeerRebooted: return "peer-rebooted";
  }
  return "unknown";
}

std::string_view to_string(SdDropReason r) {
  switch (r) {
    case SdDropReason::kOfferEndpointNotSource: return "offer-endpoint-not-source";
    case SdDropReason::kOfferServerNotAllowed: return "offer-server-not-allowed";
    case SdDropReason::kOfferBoundElsewhere: return "offer-bound-elsewhere";
    case SdDropReason::kStopOfferNotFromOfferer: return "stop-offer-not-from-offerer";
    case SdDropReason::kStopOfferEndpointNotSource: return "stop-offer-endpoint-not-source";
    case SdDropReason::kAckNotFromServer: return "ack-not-from-server";
    case SdDropReason::kSubscribeEndpointNotSource: return "subscribe-endpoint-not-source";
    case SdDropReason::kSubscriberNotAllowed: return "subscriber-not-allowed";
    case SdDropReason::kSubscribeNotOffered: return "subscribe-not-offered";
    case SdDropReason::kSubscribeUnknownEventgroup: return "subscribe-unknown-eventgroup";
    case SdDropReason::kSubscribeNoEndpoint: return "subscribe-no-endpoint";
    case SdDropReason::kSubscribeTableFull: return "subscribe-table-full";
    case SdDropReason::kStopSubscribeEndpointNotSource: return "stop-subscribe-endpoint-not-source";
    case SdDropReason::kStopSubscribeUnknown: return "stop-subscribe-unknown";
    case SdDropReason::kCount: break;
  }
  return "unknown";
}

std::uint64_t SdDropCounters::total() const {
  std::uint64_t n = 0;
  for (auto v : by_reason) n += v;
  return n;
}

SdDropCounters& SdDropCounters::operator+=(const SdDropCounters& o) {
  for (std::size_t i = 0; i < by_reason.size(); ++i) by_reason[i] += o.by_reason[i];
  return *this;
}

bool endpoints_name_source(const SdEntryOptions& opts, const IpAddress& source) {
  for (const auto& o : opts.all()) {
    if (o.type != 0x04 && o.type != 0x06) continue;  // unicast endpoint options only
    if (!(o.endpoint.address == source)) return false;
  }
  return true;
}

bool address_allowed(std::span<const IpAddress> allowed, const IpAddress& a) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), a) != allowed.end();
}

std::optional<Endpoint> SdEntryOptions::endpoint(L4Proto proto) const {
  for (std::size_t i = 0; i < count; ++i) {
    const auto& o = items[i];
    if ((o.type == 0x04 || o.type == 0x06) && o.endpoint.proto == proto) return o.endpoint;
  }
  return std::nullopt;
}

std::optional<Endpoint> SdEntryOptions::multicast() const {
  for (std::size_t i = 0; i < count; ++i) {
    const auto& o = items[i];
    if (o.type == 0x14 || o.type == 0x16) return o.endpoint;
  }
  return std::nullopt;
}

void resolve_options(const SdMessageView& m, const SdEntry& e, SdEntryOptions& out) {
  out.count = 0;
  auto run = [&](std::uint8_t index, std::uint8_t n) {
    for (std::uint8_t k = 0; k < n && out.count < SdEntryOptions::kMax; ++k) {
      const std::size_t i = std::size_t{index} + k;
      if (i < m.option_count()) out.items[out.count++] = m.option(i);
    }
  };
  run(e.index1, e.num_options1);
  run(e.index2, e.num_options2);
}

SdOption endpoint_option(const Endpoint& ep) {
  return ep.address.family == IpFamily::kV6 ? SdOption::ipv6_endpoint(ep.address, ep.proto, ep.port)
                                            : SdOption::ipv4_endpoint(ep.address, ep.proto, ep.port);
}

SdOption multicast_option(const Endpoint& ep) {
  return ep.address.family == IpFamily::kV6 ? SdOption::ipv6_multicast(ep.address, ep.port)
                                            : SdOption::ipv4_multicast(ep.address, ep.port);
}

TimePoint ttl_expiry(TimePoint now, std::uint32_t ttl) {
  if (ttl >= kTtlInfinite) return TimePoint::max();
  return now + Duration::seconds(ttl);
}

}  // namespace layersec::someip
