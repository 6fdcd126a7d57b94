#include "layersec/someip/secoc_filter.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace layersec::someip {

namespace {
using detail::hex16;

std::uint64_t binding_key(std::uint16_t service, std::uint16_t instance, std::uint16_t id) {
  return (std::uint64_t{service} << 32) | (std::uint64_t{instance} << 16) | id;
}

void check_sd_pdu(const secoc::PduProfile* p, const char* dir, std::uint32_t id, const char* why) {
  const std::string pdu = std::string(dir) + " PDU " + std::to_string(id);
  if (!p) throw std::invalid_argument(std::string("SecOC SD binding: unknown ") + pdu);
  if (!p->freshness.timestamp)
    throw std::invalid_argument("SecOC SD binding: " + pdu + " must use timestamp freshness (" + why + ")");
}
}  // namespace

std::size_t header_aad(const Header& h, std::uint8_t* out) {
  store_be16(out, h.service_id);
  store_be16(out + 2, h.method_id);
  store_be16(out + 4, h.client_id);
  store_be16(out + 6, h.session_id);
  out[8] = h.protocol_version;
  out[9] = h.interface_version;
  out[10] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(h.message_type) & ~kTpFlag);
  out[11] = h.return_code;
  return kHeaderAadSize;
}

std::size_t sd_aad(const Header& h, const IpAddress& source, std::uint8_t* out) {
  std::size_t n = header_aad(h, out);
  out[n++] = static_cast<std::uint8_t>(source.family);
  const std::size_t len = source.family == IpFamily::kV4 ? 4 : 16;
  std::memcpy(out + n, source.bytes.data(), len);
  return n + len;
}

std::uint64_t source_key(const IpAddress& a) {
  std::uint64_t k = static_cast<std::uint64_t>(a.family) << 56;
  for (std::size_t i = 0; i < 16; ++i) k = (k * 1099511628211ULL) ^ a.bytes[i];
  return a.family == IpFamily::kV4 ? (std::uint64_t{4} << 56) | load_be32(a.bytes.data()) : k;
}

SecocFilter::SecocFilter(const RuntimeConfig& config, RuntimeCounters& counters)
    : counters_(counters), cost_clock_(config.cost_clock), sd_enabled_(config.sd_enabled) {
  rx_plain_.resize(config.max_message_size + kSecocOverhead);
}

void SecocFilter::attach(secoc::Engine& engine, SecocBindings bindings, const Clock& freshness) {
  RouteMap tx;
  RouteMap rx;
  std::unordered_set<std::uint16_t> secured;
  for (const auto& b : bindings.messages) {
    const std::string name =
        "SecOC binding " + hex16(b.service_id) + "/" + hex16(b.instance_id) + "/" + hex16(b.method_or_event);
    const std::uint64_t key = binding_key(b.service_id, b.instance_id, b.method_or_event);
    bool header = bindings.header == HeaderAuth::kSomeipHeader;
    for (const auto& po : bindings.payload_only)
      if (po.service_id == b.service_id && po.method_or_event == b.method_or_event &&
          (po.instance_id == 0xFFFF || po.instance_id == b.instance_id))
        header = false;
    if (b.tx_pdu) {
      if (!engine.tx_profile(*b.tx_pdu)) throw std::invalid_argument(name + ": unknown tx PDU " + std::to_string(*b.tx_pdu));
      if (!tx.emplace(key, SecocRoute{*b.tx_pdu, header}).second) throw std::invalid_argument(name + ": tx bound twice");
    }
    if (b.rx_pdu) {
      if (!engine.rx_profile(*b.rx_pdu)) throw std::invalid_argument(name + ": unknown rx PDU " + std::to_string(*b.rx_pdu));
      if (!rx.emplace(key, SecocRoute{*b.rx_pdu, header}).second) throw std::invalid_argument(name + ": rx bound twice");
    }
    if (b.tx_pdu || b.rx_pdu) secured.insert(b.service_id);
  }
  for (const auto& u : bindings.unprotected) {
    const std::uint64_t key = binding_key(u.service_id, u.instance_id, u.method_or_event);
    if (tx.count(key) || rx.count(key))
      throw std::invalid_argument("SecOC: " + hex16(u.service_id) + "/" + hex16(u.method_or_event) +
                                  " is both bound and listed as unprotected");
  }
  if (bindings.sd_tx_pdu)
    check_sd_pdu(engine.tx_profile(*bindings.sd_tx_pdu), "tx", *bindings.sd_tx_pdu,
                 "SD runs before any sync message can reach a peer");
  if (bindings.sd_rx_pdu)
    check_sd_pdu(engine.rx_profile(*bindings.sd_rx_pdu), "rx", *bindings.sd_rx_pdu,
                 "it verifies every peer's SD from the first message, and refuses replays from an earlier run");
  if (bindings.sd_tx_pdu.has_value() != bindings.sd_rx_pdu.has_value())
    throw std::invalid_argument("SecOC SD binding: needs both a tx and an rx PDU");
  if (sd_enabled_ && !bindings.messages.empty() && !bindings.sd_tx_pdu && !bindings.sd_unprotected)
    throw std::invalid_argument(
        "SecOC bindings without SD protection: spoofed or replayed Offer, StopOffer, Subscribe or "
        "Nack messages would control who the secured services talk to; bind SD PDUs "
        "(sd_tx_pdu/sd_rx_pdu) or set sd_unprotected explicitly");
  if (bindings.sd_unprotected && bindings.sd_tx_pdu)
    throw std::invalid_argument("SecOC SD binding: sd_unprotected set together with SD PDUs");
  engine_ = &engine;
  freshness_ = &freshness;
  bindings_ = std::move(bindings);
  tx_ = std::move(tx);
  rx_ = std::move(rx);
  secured_services_ = std::move(secured);
}

std::optional<SecocRoute> SecocFilter::lookup(const RouteMap& m, std::uint16_t service, std::uint16_t instance,
                                              std::uint16_t id) {
  if (m.empty()) return std::nullopt;
  auto it = m.find(binding_key(service, instance, id));
  if (it != m.end()) return it->second;
  it = m.find(binding_key(service, 0xFFFF, id));
  if (it != m.end()) return it->second;
  return std::nullopt;
}

std::optional<SecocRoute> SecocFilter::tx(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const {
  return lookup(tx_, service, instance, id);
}

std::optional<SecocRoute> SecocFilter::rx(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const {
  return lookup(rx_, service, instance, id);
}

bool SecocFilter::secoc_service(std::uint16_t service) const {
  return engine_ != nullptr && secured_services_.count(service) != 0;
}

bool SecocFilter::listed_unprotected(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const {
  for (const auto& u : bindings_.unprotected)
    if (u.service_id == service && u.method_or_event == id && (u.instance_id == 0xFFFF || u.instance_id == instance))
      return true;
  return false;
}

bool SecocFilter::unbound_refused(std::uint16_t service, std::uint16_t instance, std::uint16_t id) const {
  return secoc_service(service) && !listed_unprotected(service, instance, id);
}

bool SecocFilter::is_sync_event(std::uint16_t service, std::uint16_t instance, std::uint16_t event) const {
  return engine_ != nullptr && bindings_.sync_service && *bindings_.sync_service == service &&
         bindings_.sync_instance == instance && bindings_.sync_event == event;
}

Result<std::optional<SecocRoute>, RuntimeError> SecocFilter::outbound(std::uint16_t service, std::uint16_t instance,
                                                                      std::uint16_t id) {
  if (is_sync_event(service, instance, id)) return std::optional<SecocRoute>{};
  auto route = tx(service, instance, id);
  if (!route && unbound_refused(service, instance, id)) {
    ++counters_.secoc_unbound_refused;
    return Err(RuntimeError::kSecoc);
  }
  return route;
}

Result<std::size_t, RuntimeError> SecocFilter::protect(const SecocRoute& route, const Header& h, ByteSpan payload,
                                                       MutableByteSpan out) {
  std::uint8_t aad[kHeaderAadSize];
  secoc::TxInput in;
  if (route.header) in.header = ByteSpan(aad, header_aad(h, aad));
  in.now = freshness_now();
  const TimePoint t0 = cost_clock_ ? cost_clock_->now() : TimePoint{};
  auto r = engine_->protect(route.pdu, payload, out, in);
  if (cost_clock_) counters_.secoc_protect_ns += static_cast<std::uint64_t>((cost_clock_->now() - t0).ns());
  if (!r.ok()) {
    ++counters_.secoc_protect_failed;
    return Err(RuntimeError::kSecoc);
  }
  ++counters_.secoc_protected;
  return *r;
}

void SecocFilter::reject(const SecurityRejection& r) {
  ++counters_.secoc_rejected;
  if (rejection_handler_) rejection_handler_(r);
}

void SecocFilter::reject_unbound(std::uint16_t service, std::uint16_t instance, std::uint16_t id,
                                 const Endpoint& source) {
  ++counters_.secoc_unbound_rejected;
  SecurityRejection rej;
  rej.service_id = service;
  rej.instance_id = instance;
  rej.method_or_event = id;
  rej.unbound = true;
  rej.reason = secoc::Rejection::kUnknownPdu;
  rej.source = source;
  reject(rej);
}

bool SecocFilter::verify(const SecocRoute& route, const MessageView& m, ByteSpan& plain, SecurityRejection& rej) {
  std::uint8_t aad[kHeaderAadSize];
  secoc::RxInput in;
  if (route.header) in.header = ByteSpan(aad, header_aad(m.header, aad));
  in.now = freshness_now();
  const TimePoint t0 = cost_clock_ ? cost_clock_->now() : TimePoint{};
  auto v = engine_->verify(route.pdu, m.payload, rx_plain_, in);
  if (cost_clock_) counters_.secoc_verify_ns += static_cast<std::uint64_t>((cost_clock_->now() - t0).ns());
  if (!v.ok()) {
    rej.reason = v.error();
    rej.unprotected = v.error() == secoc::Rejection::kMalformed;
    reject(rej);
    return false;
  }
  ++counters_.secoc_verified;
  plain = ByteSpan(rx_plain_.data(), *v);
  return true;
}

bool SecocFilter::inbound(const MessageView& m, std::uint16_t instance, const Endpoint& source, ByteSpan& payload) {
  const Header& h = m.header;
  if (auto route = rx(h.service_id, instance, h.method_id)) {
    SecurityRejection rej;
    rej.service_id = h.service_id;
    rej.instance_id = instance;
    rej.method_or_event = h.method_id;
    rej.source = source;
    return verify(*route, m, payload, rej);
  }
  if (unbound_refused(h.service_id, instance, h.method_id)) {
    reject_unbound(h.service_id, instance, h.method_id, source);
    return false;
  }
  return true;
}

bool SecocFilter::on_sync(const MessageView& m, std::uint16_t instance, const Endpoint& source) {
  auto st = engine_->handle_sync(bindings_.sync_rx_channel, m.payload, freshness_now());
  if (!st.ok()) {
    SecurityRejection rej;
    rej.service_id = m.header.service_id;
    rej.instance_id = instance;
    rej.method_or_event = m.header.method_id;
    rej.source = source;
    rej.reason = st.error();
    rej.unprotected = st.error() == secoc::Rejection::kMalformed;
    reject(rej);
    return false;
  }
  if (*st == secoc::SyncOutcome::kDuplicate) ++counters_.secoc_syncs_duplicate;
  else ++counters_.secoc_syncs_accepted;
  return true;
}

std::size_t SecocFilter::sd_max_payload() const {
  return engine_ && bindings_.sd_tx_pdu ? kMaxUdpPayload - kSecocOverhead : kMaxUdpPayload;
}

std::optional<ByteSpan> SecocFilter::protect_sd(ByteSpan message, const IpAddress& local) {
  if (!engine_ || !bindings_.sd_tx_pdu || message.size() < kHeaderSize) return message;
  auto hdr = read_raw_header(message);
  if (!hdr.ok()) {
    ++counters_.secoc_protect_failed;
    return std::nullopt;
  }
  if (sd_tx_buf_.size() < message.size() + kSecocOverhead) sd_tx_buf_.resize(message.size() + kSecocOverhead);
  std::memcpy(sd_tx_buf_.data(), message.data(), kHeaderSize);
  // Header and our source address are authenticated with the SD payload.
  std::uint8_t aad[kSdAadSize];
  secoc::TxInput in;
  in.header = ByteSpan(aad, sd_aad(*hdr, local, aad));
  in.now = freshness_now();
  auto r = engine_->protect(*bindings_.sd_tx_pdu, message.subspan(kHeaderSize),
                            MutableByteSpan(sd_tx_buf_).subspan(kHeaderSize), in);
  if (!r.ok()) {
    ++counters_.secoc_protect_failed;
    return std::nullopt;
  }
  ++counters_.secoc_sd_protected;
  store_be32(sd_tx_buf_.data() + 4, static_cast<std::uint32_t>(kLengthHeaderPart + *r));
  return ByteSpan(sd_tx_buf_.data(), kHeaderSize + *r);
}

std::optional<ByteSpan> SecocFilter::verify_sd(ByteSpan datagram, const Endpoint& source) {
  if (!engine_ || !bindings_.sd_rx_pdu) return datagram;
  SecurityRejection rej;
  rej.sd = true;
  rej.source = source;
  rej.service_id = kSdServiceId;
  rej.method_or_event = kSdMethodId;
  auto m = parse_message(datagram);
  if (!m.ok() || !m->header.is_sd()) {
    rej.unprotected = true;
    rej.reason = secoc::Rejection::kMalformed;
    reject(rej);
    return std::nullopt;
  }
  if (sd_rx_buf_.size() < datagram.size()) sd_rx_buf_.resize(datagram.size());
  // Timestamp freshness (no sync needed), header and source address
  // authenticated, replay state per source address.
  std::uint8_t aad[kSdAadSize];
  secoc::RxInput in;
  in.header = ByteSpan(aad, sd_aad(m->header, source.address, aad));
  in.now = freshness_now();
  in.source = source_key(source.address);
  auto v = engine_->verify(*bindings_.sd_rx_pdu, m->payload, MutableByteSpan(sd_rx_buf_).subspan(kHeaderSize), in);
  if (!v.ok()) {
    rej.reason = v.error();
    rej.unprotected = v.error() == secoc::Rejection::kMalformed;
    reject(rej);
    return std::nullopt;
  }
  ++counters_.secoc_sd_verified;
  std::memcpy(sd_rx_buf_.data(), datagram.data(), kHeaderSize);
  store_be32(sd_rx_buf_.data() + 4, static_cast<std::uint32_t>(kLengthHeaderPart + *v));
  return ByteSpan(sd_rx_buf_.data(), kHeaderSize + *v);
}

}  // namespace layersec::someip
