// SecocFilter: the SecOC binding of a runtime, a filter between the
// runtime's message logic and its transport (as net::LinkFilter sits under
// RawTransport). It decides per SOME/IP message id what is protected with
// which PDU, what is refused, and what passes in clear, and runs the engine's
// protect and verify calls with the right authenticated data:
//
//   send:    outbound(id) -> route | in clear | refused;  protect(route, ...)
//   receive: inbound(message) -> verified payload | rejected (counted,
//            reported through the rejection handler, never delivered)
//   SD:      protect_sd / verify_sd of whole SD datagrams, with the sender's
//            address authenticated and replay state per source address
//   sync:    on_sync hands a received sync message to the engine
//
// Fail closed: a service with any binding at this node is a SecOC service;
// an id of it without a binding is neither sent nor accepted unless listed in
// SecocBindings::unprotected. Until attach() the filter is inactive: nothing
// is bound or refused and SD passes in clear.
//
// Time: every engine call runs on the freshness clock given to attach(); the
// runtime's optional cost clock (RuntimeConfig::cost_clock) times message
// protect/verify calls. The filter reads no other clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/message.h"
#include "layersec/someip/runtime_config.h"
#include "layersec/someip/runtime_types.h"

namespace layersec::someip {

// Room for the SecOC header, truncated freshness value and authenticator
// (at most 4 + 8 + 32 bytes with every profile the engine accepts).
inline constexpr std::size_t kSecocOverhead = 128;

// The SOME/IP header as SecOC extra authenticated data: every field but the
// length (which the Secured I-PDU changes), the message type without the TP
// flag (segments and the reassembled message authenticate alike).
inline constexpr std::size_t kHeaderAadSize = 12;
std::size_t header_aad(const Header& h, std::uint8_t* out);
// SD adds the datagram's source address (family byte, 4 or 16 bytes), so a
// relabelled source fails the MAC.
inline constexpr std::size_t kSdAadSize = kHeaderAadSize + 1 + 16;
std::size_t sd_aad(const Header& h, const IpAddress& source, std::uint8_t* out);
// The engine's replay-state key of an SD source address.
[[nodiscard]] std::uint64_t source_key(const IpAddress& a);

// A bound message id: its SecOC PDU and whether the header is authenticated.
struct SecocRoute {
  std::uint32_t pdu = 0;
  bool header = true;
};

class SecocFilter {
 public:
  // Inactive. `counters` (the runtime's) is not owned and must outlive the
  // filter; `config` is copied for its limits and the cost clock.
  SecocFilter(const RuntimeConfig& config, RuntimeCounters& counters);
  SecocFilter(const SecocFilter&) = delete;
  SecocFilter& operator=(const SecocFilter&) = delete;

  // Checks `bindings` against `engine` and activates the filter. Throws
  // std::invalid_argument for a binding to an unknown PDU, an id bound twice
  // or bound and unprotected, SD PDUs without timestamp freshness or without
  // a partner, or message bindings without SD protection and without
  // sd_unprotected. `engine` and `freshness` are not owned.
  void attach(secoc::Engine& engine, SecocBindings bindings, const Clock& freshness);
  // Where rejections are reported (after they are counted).
  void on_rejection(RejectionHandler handler) { rejection_handler_ = std::move(handler); }

  [[nodiscard]] bool active() const { return engine_ != nullptr; }
  [[nodiscard]] secoc::Engine* engine() const { return engine_; }
  [[nodiscard]] const SecocBindings& bindings() const { return bindings_; }
  // The clock every engine call runs on, and its time (only when active()).
  [[nodiscard]] const Clock& freshness_clock() const { return *freshness_; }
  [[nodiscard]] TimePoint freshness_now() const { return freshness_->now(); }

  // --- message ids -------------------------------------------------------
  // Bindings of (service, instance, id): the exact instance, then 0xFFFF.
  [[nodiscard]] std::optional<SecocRoute> tx(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const;
  [[nodiscard]] std::optional<SecocRoute> rx(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const;
  // A service with any binding at this node.
  [[nodiscard]] bool secoc_service(std::uint16_t service) const;
  // A message of (service, instance, id) without a binding must be refused:
  // the service uses SecOC and the id is not listed as unprotected.
  [[nodiscard]] bool unbound_refused(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const;
  // The configured sync event (sent and received in clear: the sync message
  // carries its own MAC).
  [[nodiscard]] bool is_sync_event(std::uint16_t service, std::uint16_t instance, std::uint16_t event) const;

  // --- send ----------------------------------------------------------------
  // How to send (service, instance, id): with a route, in clear (nullopt),
  // or refused (kSecoc, counted as secoc_unbound_refused).
  [[nodiscard]] Result<std::optional<SecocRoute>, RuntimeError> outbound(std::uint16_t service,
                                                                          std::uint16_t instance,
                                                                          std::uint16_t id);
  // Protects `payload` of the message with header `h` into `out` (the
  // Secured I-PDU); returns its size. Fails with kSecoc (counted as
  // secoc_protect_failed). Precondition: active().
  [[nodiscard]] Result<std::size_t, RuntimeError> protect(const SecocRoute& route, const Header& h, ByteSpan payload,
                                                          MutableByteSpan out);

  // --- receive -------------------------------------------------------------
  // Admits the received message `m` of `instance` from `source`. Bound ids
  // are verified: `payload` becomes the Authentic I-PDU (in a filter-owned
  // buffer, valid until the next inbound()). Unbound ids of SecOC services
  // are rejected. Other messages pass with `payload` unchanged. False: the
  // message was rejected (counted, reported) and must be dropped.
  [[nodiscard]] bool inbound(const MessageView& m, std::uint16_t instance, const Endpoint& source, ByteSpan& payload);
  // Counts and reports a SecOC service's message id received without a
  // binding (SecurityRejection::unbound).
  void reject_unbound(std::uint16_t service, std::uint16_t instance, std::uint16_t id, const Endpoint& source);
  // A notification of the sync event: handed to the engine's sync channel.
  // True when accepted or a duplicate of the accepted cycle (counted); false
  // when rejected (counted, reported). Precondition: active().
  bool on_sync(const MessageView& m, std::uint16_t instance, const Endpoint& source);

  // --- SD --------------------------------------------------------------------
  // SD payload bytes per datagram that leave room for the SecOC trailer.
  [[nodiscard]] std::size_t sd_max_payload() const;
  // The datagram to send for SD message `message` from `local`: protected
  // into a filter-owned buffer (valid until the next call) when SD is
  // protected, else `message` itself; nullopt when protection failed
  // (counted as secoc_protect_failed: send nothing).
  [[nodiscard]] std::optional<ByteSpan> protect_sd(ByteSpan message, const IpAddress& local);
  // The plain SD message of a received SD datagram from `source`: verified
  // into a filter-owned buffer when SD is protected, else the datagram
  // itself; nullopt when rejected (counted, reported).
  [[nodiscard]] std::optional<ByteSpan> verify_sd(ByteSpan datagram, const Endpoint& source);

 private:
  using RouteMap = std::unordered_map<std::uint64_t, SecocRoute>;
  [[nodiscard]] static std::optional<SecocRoute> lookup(const RouteMap& m, std::uint16_t service,
                                                        std::uint16_t instance, std::uint16_t id);
  [[nodiscard]] bool listed_unprotected(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const;
  void reject(const SecurityRejection& r);
  bool verify(const SecocRoute& route, const MessageView& m, ByteSpan& plain, SecurityRejection& rej);

  RuntimeCounters& counters_;
  const Clock* cost_clock_;
  bool sd_enabled_;
  secoc::Engine* engine_ = nullptr;
  const Clock* freshness_ = nullptr;
  SecocBindings bindings_;
  RouteMap tx_;
  RouteMap rx_;
  std::unordered_set<std::uint16_t> secured_services_;
  RejectionHandler rejection_handler_;
  std::vector<std::uint8_t> rx_plain_;
  std::vector<std::uint8_t> sd_tx_buf_;
  std::vector<std::uint8_t> sd_rx_buf_;
};

}  // namespace layersec::someip
