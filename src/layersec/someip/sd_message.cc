#include "layersec/someip/sd_message.h"

#include <algorithm>

namespace layersec::someip {

std::string_view to_string(EntryKind k) {
  switch (k) {
    case EntryKind::kFindService: return "FindService";
    case EntryKind::kOfferService: return "OfferService";
    case EntryKind::kStopOfferService: return "StopOfferService";
    case EntryKind::kSubscribeEventgroup: return "SubscribeEventgroup";
    case EntryKind::kStopSubscribeEventgroup: return "StopSubscribeEventgroup";
    case EntryKind::kSubscribeEventgroupAck: return "SubscribeEventgroupAck";
    case EntryKind::kSubscribeEventgroupNack: return "SubscribeEventgroupNack";
    case EntryKind::kUnknown: return "Unknown";
  }
  return "Unknown";
}

bool is_known_option_type(std::uint8_t t) {
  switch (t) {
    case 0x01: case 0x02: case 0x04: case 0x06: case 0x14: case 0x16: case 0x24: case 0x26:
      return true;
    default:
      return false;
  }
}

bool is_endpoint_option_type(std::uint8_t t) {
  switch (t) {
    case 0x04: case 0x06: case 0x14: case 0x16: case 0x24: case 0x26:
      return true;
    default:
      return false;
  }
}

std::string_view option_type_name(std::uint8_t t) {
  switch (t) {
    case 0x01: return "configuration";
    case 0x02: return "load-balancing";
    case 0x04: return "ipv4-endpoint";
    case 0x06: return "ipv6-endpoint";
    case 0x14: return "ipv4-multicast";
    case 0x16: return "ipv6-multicast";
    case 0x24: return "ipv4-sd-endpoint";
    case 0x26: return "ipv6-sd-endpoint";
    default: return "unknown";
  }
}

std::string_view to_string(SdError e) {
  switch (e) {
    case SdError::kNotSdHeader: return "not-sd-header";
    case SdError::kTruncated: return "truncated";
    case SdError::kEntriesLengthInvalid: return "entries-length-invalid";
    case SdError::kOptionsLengthInvalid: return "options-length-invalid";
    case SdError::kTrailingBytes: return "trailing-bytes";
    case SdError::kOptionTruncated: return "option-truncated";
    case SdError::kOptionLengthInvalid: return "option-length-invalid";
    case SdError::kOptionFieldInvalid: return "option-field-invalid";
    case SdError::kConfigStringInvalid: return "config-string-invalid";
    case SdError::kTooManyOptions: return "too-many-options";
    case SdError::kOptionIndexOutOfRange: return "option-index-out-of-range";
  }
  return "unknown";
}

// ---- entries -------------------------------------------------------------

EntryKind SdEntry::kind() const {
  switch (type) {
    case 0x00: return EntryKind::kFindService;
    case 0x01: return ttl == 0 ? EntryKind::kStopOfferService : EntryKind::kOfferService;
    case 0x06:
      return ttl == 0 ? EntryKind::kStopSubscribeEventgroup : EntryKind::kSubscribeEventgroup;
    case 0x07:
      return ttl == 0 ? EntryKind::kSubscribeEventgroupNack : EntryKind::kSubscribeEventgroupAck;
    default: return EntryKind::kUnknown;
  }
}

namespace {
SdEntry service_entry(std::uint8_t type, std::uint16_t service, std::uint16_t instance,
                      std::uint8_t major, std::uint32_t minor, std::uint32_t ttl) {
  SdEntry e;
  e.type = type;
  e.service_id = service;
  e.instance_id = instance;
  e.major_version = major;
  e.minor_version = minor;
  e.ttl = ttl & kTtlInfinite;
  return e;
}
SdEntry eventgroup_entry(std::uint8_t type, std::uint16_t service, std::uint16_t instance,
                         std::uint8_t major, std::uint16_t eventgroup, std::uint32_t ttl,
                         std::uint8_t counter) {
  SdEntry e;
  e.type = type;
  e.service_id = service;
  e.instance_id = instance;
  e.major_version = major;
  e.eventgroup_id = eventgroup;
  e.ttl = ttl & kTtlInfinite;
  e.counter = counter & 0x0F;
  return e;
}
}  // namespace

SdEntry SdEntry::find_service(std::uint16_t s, std::uint16_t i, std::uint8_t maj, std::uint32_t min,
                              std::uint32_t ttl) {
  return service_entry(0x00, s, i, maj, min, ttl);
}
SdEntry SdEntry::offer_service(std::uint16_t s, std::uint16_t i, std::uint8_t maj,
                               std::uint32_t min, std::uint32_t ttl) {
  return service_entry(0x01, s, i, maj, min, ttl);
}
SdEntry SdEntry::subscribe(std::uint16_t s, std::uint16_t i, std::uint8_t maj, std::uint16_t eg,
                           std::uint32_t ttl, std::uint8_t counter) {
  return eventgroup_entry(0x06, s, i, maj, eg, ttl, counter);
}
SdEntry SdEntry::subscribe_ack(std::uint16_t s, std::uint16_t i, std::uint8_t maj, std::uint16_t eg,
                               std::uint32_t ttl, std::uint8_t counter) {
  return eventgroup_entry(0x07, s, i, maj, eg, ttl, counter);
}

namespace {
SdEntry read_entry(ByteReader& r) {
  SdEntry e;
  e.type = r.u8();
  e.index1 = r.u8();
  e.index2 = r.u8();
  const std::uint8_t nums = r.u8();
  e.num_options1 = nums >> 4;
  e.num_options2 = nums & 0x0F;
  e.service_id = r.u16();
  e.instance_id = r.u16();
  e.major_version = r.u8();
  e.ttl = r.u24();
  if (e.is_eventgroup_entry()) {
    r.u8();  // reserved (feat_req_someipsd_109), ignored on receive
    const std::uint8_t b = r.u8();
    e.initial_data_requested = (b & 0x80) != 0;
    e.counter = b & 0x0F;
    e.eventgroup_id = r.u16();
  } else {
    e.minor_version = r.u32();
  }
  return e;
}
}  // namespace

bool write_entry(ByteWriter& w, const SdEntry& e) {
  if (e.num_options1 > 15 || e.num_options2 > 15 || e.ttl > kTtlInfinite) return false;
  bool ok = w.u8(e.type) && w.u8(e.index1) && w.u8(e.index2) &&
            w.u8(static_cast<std::uint8_t>((e.num_options1 << 4) | e.num_options2)) &&
            w.u16(e.service_id) && w.u16(e.instance_id) && w.u8(e.major_version) && w.u24(e.ttl);
  if (e.is_eventgroup_entry()) {
    ok = ok && w.u8(0) &&
         w.u8(static_cast<std::uint8_t>((e.initial_data_requested ? 0x80 : 0) | (e.counter & 0x0F))) &&
         w.u16(e.eventgroup_id);
  } else {
    ok = ok && w.u32(e.minor_version);
  }
  return ok;
}

// ---- options -------------------------------------------------------------

namespace {
SdOption endpoint_option(std::uint8_t type, IpAddress a, L4Proto p, std::uint16_t port) {
  SdOption o;
  o.type = type;
  o.endpoint.address = a;
  o.endpoint.proto = p;
  o.endpoint.port = port;
  return o;
}
}  // namespace

SdOption SdOption::ipv4_endpoint(IpAddress a, L4Proto p, std::uint16_t port) {
  return endpoint_option(0x04, a, p, port);
}
SdOption SdOption::ipv6_endpoint(IpAddress a, L4Proto p, std::uint16_t port) {
  return endpoint_option(0x06, a, p, port);
}
SdOption SdOption::ipv4_multicast(IpAddress a, std::uint16_t port) {
  return endpoint_option(0x14, a, L4Proto::kUdp, port);
}
SdOption SdOption::ipv6_multicast(IpAddress a, std::uint16_t port) {
  return endpoint_option(0x16, a, L4Proto::kUdp, port);
}
SdOption SdOption::ipv4_sd_endpoint(IpAddress a, std::uint16_t port) {
  return endpoint_option(0x24, a, L4Proto::kUdp, port);
}
SdOption SdOption::ipv6_sd_endpoint(IpAddress a, std::uint16_t port) {
  return endpoint_option(0x26, a, L4Proto::kUdp, port);
}
SdOption SdOption::load_balancing(std::uint16_t priority, std::uint16_t weight) {
  SdOption o;
  o.type = 0x02;
  o.priority = priority;
  o.weight = weight;
  return o;
}
SdOption SdOption::configuration(ByteSpan strings) {
  SdOption o;
  o.type = 0x01;
  o.data = strings;
  return o;
}

std::size_t SdOption::wire_size() const {
  switch (type) {
    case 0x02: return 3 + 5;
    case 0x04: case 0x14: case 0x24: return 3 + 9;
    case 0x06: case 0x16: case 0x26: return 3 + 21;
    default: return 3 + 1 + data.size();
  }
}

bool SdOption::operator==(const SdOption& o) const {
  if (type != o.type) return false;
  if (is_endpoint_option_type(type)) return endpoint == o.endpoint;
  if (type == 0x02) return priority == o.priority && weight == o.weight;
  return std::equal(data.begin(), data.end(), o.data.begin(), o.data.end());
}

bool encode_config_strings(std::span<const std::string_view> items, std::vector<std::uint8_t>& out) {
  out.clear();
  for (auto s : items) {
    if (s.empty() || s.size() > 255 || s.front() == '=') return false;
    out.push_back(static_cast<std::uint8_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  out.push_back(0);
  return out.size() <= 0xFFFE;
}

namespace {
// feat_req_someipsd_149/152: length-prefixed strings, a zero length ends the
// list, and nothing may follow the terminator. A string may not start with '='
// (empty key).
bool valid_config_strings(ByteSpan list) {
  ByteReader r(list);
  while (true) {
    const std::uint8_t n = r.u8();
    if (!r.ok()) return false;  // missing terminator
    if (n == 0) return r.remaining() == 0;
    auto s = r.bytes(n);
    if (!r.ok() || s[0] == '=') return false;
  }
}

bool valid_proto(std::uint8_t p) { return p == 0x06 || p == 0x11; }

// Decodes one option at r; the caller has already checked it is complete.
Result<SdOption, SdError> read_option(ByteReader& r) {
  const std::uint16_t len = r.u16();
  const std::uint8_t type = r.u8();
  if (!r.ok()) return Err(SdError::kOptionTruncated);
  ByteReader body = r.sub(len);
  if (!r.ok()) return Err(SdError::kOptionTruncated);
  if (len < 1) return Err(SdError::kOptionLengthInvalid);  // the reserved byte is counted
  body.u8();  // reserved / discardable flag: ignored on receive
  SdOption o;
  o.type = type;
  switch (type) {
    case 0x04: case 0x14: case 0x24:
    case 0x06: case 0x16: case 0x26: {
      const bool v6 = (type & 0x0F) == 0x06;
      if (len != (v6 ? 0x15 : 0x09)) return Err(SdError::kOptionLengthInvalid);
      o.endpoint.address.family = v6 ? IpFamily::kV6 : IpFamily::kV4;
      if (!body.copy_to(MutableByteSpan(o.endpoint.address.bytes.data(), v6 ? 16 : 4)))
        return Err(SdError::kOptionTruncated);
      body.u8();  // reserved
      const std::uint8_t proto = body.u8();
      o.endpoint.port = body.u16();
      if (!valid_proto(proto)) return Err(SdError::kOptionFieldInvalid);
      o.endpoint.proto = static_cast<L4Proto>(proto);
      // Multicast and SD endpoint options are UDP only (feat_req_someipsd_723/1085).
      if ((type & 0xF0) != 0x00 && proto != 0x11) return Err(SdError::kOptionFieldInvalid);
      break;
    }
    case 0x02:
      if (len != 0x05) return Err(SdError::kOptionLengthInvalid);
      o.priority = body.u16();
      o.weight = body.u16();
      break;
    case 0x01:
      o.data = body.rest();
      body.skip(o.data.size());
      if (!valid_config_strings(o.data)) return Err(SdError::kConfigStringInvalid);
      break;
    default:
      // Unknown option type: skipped as a whole, kept as raw bytes.
      o.data = body.rest();
      body.skip(o.data.size());
      break;
  }
  if (!body.finish()) return Err(SdError::kOptionLengthInvalid);
  return o;
}
}  // namespace

bool write_option(ByteWriter& w, const SdOption& o) {
  // Length excludes the Length and Type fields but counts the reserved byte
  // (feat_req_someipsd_133).
  const std::size_t len = o.wire_size() - 3;
  if (len > 0xFFFF) return false;
  bool ok = w.u16(static_cast<std::uint16_t>(len)) && w.u8(o.type) && w.u8(0);
  if (is_endpoint_option_type(o.type)) {
    const bool v6 = (o.type & 0x0F) == 0x06;
    if (v6 != (o.endpoint.address.family == IpFamily::kV6)) return false;
    ok = ok && w.bytes(ByteSpan(o.endpoint.address.bytes.data(), v6 ? 16 : 4)) && w.u8(0) &&
         w.u8(static_cast<std::uint8_t>(o.endpoint.proto)) && w.u16(o.endpoint.port);
  } else if (o.type == 0x02) {
    ok = ok && w.u16(o.priority) && w.u16(o.weight);
  } else {
    ok = ok && w.bytes(o.data);
  }
  return ok;
}

// ---- message -------------------------------------------------------------

SdEntry SdMessageView::entry(std::size_t i) const {
  ByteReader r(entries_.subspan(i * kEntrySize, kEntrySize));
  return read_entry(r);
}

SdOption SdMessageView::option(std::size_t i) const {
  ByteReader r(options_.subspan(option_offsets_[i]));
  auto o = read_option(r);
  if (!o) return SdOption{};  // unreachable: validated in parse_sd_payload
  return *o;
}

Result<SdMessageView, SdError> parse_sd_payload(ByteSpan payload) {
  ByteReader r(payload);
  SdMessageView v;
  v.flags_ = r.u8();
  r.u24();  // reserved
  const std::uint32_t entries_len = r.u32();
  if (!r.ok()) return Err(SdError::kTruncated);
  if (entries_len % kEntrySize != 0 || entries_len > r.remaining())
    return Err(SdError::kEntriesLengthInvalid);
  v.entries_ = r.bytes(entries_len);
  const std::uint32_t options_len = r.u32();
  if (!r.ok()) return Err(SdError::kTruncated);
  if (options_len > r.remaining()) return Err(SdError::kOptionsLengthInvalid);
  v.options_ = r.bytes(options_len);
  if (!r.finish()) return Err(SdError::kTrailingBytes);

  ByteReader orr(v.options_);
  while (orr.remaining() > 0) {
    if (v.option_count_ == kMaxOptions) return Err(SdError::kTooManyOptions);
    v.option_offsets_[v.option_count_++] = static_cast<std::uint32_t>(orr.position());
    auto o = read_option(orr);
    if (!o) return Err(o.error());
  }
  for (std::size_t i = 0; i < v.entry_count(); ++i) {
    const SdEntry e = v.entry(i);
    if (e.num_options1 > 0 && std::size_t{e.index1} + e.num_options1 > v.option_count_)
      return Err(SdError::kOptionIndexOutOfRange);
    if (e.num_options2 > 0 && std::size_t{e.index2} + e.num_options2 > v.option_count_)
      return Err(SdError::kOptionIndexOutOfRange);
  }
  return v;
}

Result<SdMessageView, SdError> parse_sd_message(const MessageView& m) {
  const Header& h = m.header;
  if (!h.is_sd() || h.message_type != MessageType::kNotification || h.return_code != 0 ||
      h.protocol_version != kProtocolVersion || h.interface_version != 0x01)
    return Err(SdError::kNotSdHeader);
  return parse_sd_payload(m.payload);
}

Header sd_header(std::uint16_t session_id, std::uint16_t client_id) {
  Header h;
  h.service_id = kSdServiceId;
  h.method_id = kSdMethodId;
  h.client_id = client_id;
  h.session_id = session_id;
  h.protocol_version = kProtocolVersion;
  h.interface_version = 0x01;
  h.message_type = MessageType::kNotification;
  h.return_code = 0;
  return h;
}

// ---- builder -------------------------------------------------------------

int SdMessageBuilder::place_run(std::span<const SdOption> run) {
  if (run.empty()) return 0;
  if (run.size() > 15) return -1;
  for (std::size_t start = 0; start + run.size() <= options_.size(); ++start) {
    if (std::equal(run.begin(), run.end(), options_.begin() + static_cast<long>(start)))
      return start <= 255 ? static_cast<int>(start) : -1;
  }
  const std::size_t start = options_.size();
  if (start > 255) return -1;
  options_.insert(options_.end(), run.begin(), run.end());
  return static_cast<int>(start);
}

bool SdMessageBuilder::add(SdEntry e, std::span<const SdOption> run1,
                           std::span<const SdOption> run2) {
  const std::size_t saved = options_.size();
  const int i1 = place_run(run1);
  const int i2 = i1 < 0 ? -1 : place_run(run2);
  if (i1 < 0 || i2 < 0) {
    options_.resize(saved);
    return false;
  }
  e.index1 = static_cast<std::uint8_t>(i1);
  e.num_options1 = static_cast<std::uint8_t>(run1.size());
  e.index2 = static_cast<std::uint8_t>(i2);
  e.num_options2 = static_cast<std::uint8_t>(run2.size());
  entries_.push_back(e);
  return true;
}

std::size_t SdMessageBuilder::payload_size() const {
  std::size_t n = kSdFixedSize + entries_.size() * kEntrySize;
  for (const auto& o : options_) n += o.wire_size();
  return n;
}

bool write_sd_payload(ByteWriter& w, std::uint8_t flags, std::span<const SdEntry> entries,
                      std::span<const SdOption> options) {
  bool ok = w.u8(flags) && w.u24(0);
  const auto em = w.begin_length(4);
  for (const auto& e : entries) ok = ok && write_entry(w, e);
  ok = ok && w.end_length(em);
  const auto om = w.begin_length(4);
  for (const auto& o : options) ok = ok && write_option(w, o);
  return ok && w.end_length(om);
}

bool SdMessageBuilder::write_payload(ByteWriter& w, std::uint8_t flags) const {
  return write_sd_payload(w, flags, entries_, options_);
}

bool SdMessageBuilder::write_message(ByteWriter& w, std::uint16_t session_id, std::uint8_t flags,
                                     std::uint16_t client_id) const {
  return write_header(w, sd_header(session_id, client_id), payload_size()) &&
         write_payload(w, flags);
}

}  // namespace layersec::someip
