// SOME/IP-SD message codec (Open SOME/IP Specification feat_req_someipsd_26..
// 152, 262, 333, 619, 723, 1085; AUTOSAR PRS_SOMEIPServiceDiscoveryProtocol §4.1).
//
// An SD message is a SOME/IP NOTIFICATION with Message ID 0xFFFF8100 whose
// payload is
//
//   Flags(8) Reserved(24) | len(entries)(32) entries[16 each] | len(options)(32) options
//
// Entries reference options through two runs: options [index1, index1+#opt1)
// and [index2, index2+#opt2). parse_sd_payload() validates the whole payload
// (array lengths, every option's length and layout, every referenced option
// exists, no trailing bytes) before handing out a view; entries and options are
// then decoded on demand from the caller's buffer without allocation.
//
// Policy choices (documented in docs/someip.md):
// - Unknown option types are skipped (their Length frames them) and surface as
//   SdOption with type() not one of OptionType; consumers ignore them. A known
//   option type with a wrong Length or a bad field (e.g. a multicast option that
//   is not UDP) rejects the whole message.
// - Unknown entry types are kept (decoded with the service-entry layout) and
//   ignored by the state machines.
// - An option run that references a missing option rejects the whole message
//   (kOptionIndexOutOfRange); a run with #opt = 0 ignores its index.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/someip/address.h"
#include "layersec/someip/message.h"

namespace layersec::someip {

// SD header flags (feat_req_someipsd_40/100/1187).
inline constexpr std::uint8_t kSdFlagReboot = 0x80;
inline constexpr std::uint8_t kSdFlagUnicast = 0x40;
inline constexpr std::uint8_t kSdFlagExplicitInitialData = 0x20;

inline constexpr std::uint32_t kTtlInfinite = 0xFFFFFF;  // feat_req_someipsd_253
inline constexpr std::size_t kEntrySize = 16;
// Options beyond this count cannot be referenced by 8-bit indexes with 4-bit
// counts anyway (255 + 15); messages with more are rejected.
inline constexpr std::size_t kMaxOptions = 270;
// SD payload header: flags+reserved, and the two array length fields.
inline constexpr std::size_t kSdFixedSize = 12;

enum class EntryType : std::uint8_t {
  kFindService = 0x00,
  kOfferService = 0x01,           // TTL 0: StopOfferService
  kSubscribeEventgroup = 0x06,    // TTL 0: StopSubscribeEventgroup
  kSubscribeEventgroupAck = 0x07, // TTL 0: SubscribeEventgroupNack
};

// The meaning of an entry after the TTL rule is applied.
enum class EntryKind : std::uint8_t {
  kFindService,
  kOfferService,
  kStopOfferService,
  kSubscribeEventgroup,
  kStopSubscribeEventgroup,
  kSubscribeEventgroupAck,
  kSubscribeEventgroupNack,
  kUnknown,
};
[[nodiscard]] std::string_view to_string(EntryKind k);

enum class OptionType : std::uint8_t {
  kConfiguration = 0x01,
  kLoadBalancing = 0x02,
  kIpv4Endpoint = 0x04,
  kIpv6Endpoint = 0x06,
  kIpv4Multicast = 0x14,
  kIpv6Multicast = 0x16,
  kIpv4SdEndpoint = 0x24,
  kIpv6SdEndpoint = 0x26,
};
[[nodiscard]] bool is_known_option_type(std::uint8_t t);
[[nodiscard]] bool is_endpoint_option_type(std::uint8_t t);
[[nodiscard]] std::string_view option_type_name(std::uint8_t t);

// One 16-byte entry (feat_req_someipsd_47 service layout, _109 eventgroup
// layout). For service entries (and unknown types) the last 32 bits are
// minor_version; for eventgroup entries they are reserved(8), I-flag(1),
// reserved(3), counter(4), eventgroup id(16). Reserved bits are not kept.
struct SdEntry {
  std::uint8_t type = 0;
  std::uint8_t index1 = 0;
  std::uint8_t index2 = 0;
  std::uint8_t num_options1 = 0;  // 4 bits
  std::uint8_t num_options2 = 0;  // 4 bits
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0;
  std::uint8_t major_version = 0;
  std::uint32_t ttl = 0;  // 24 bits, seconds
  std::uint32_t minor_version = 0;
  bool initial_data_requested = false;
  std::uint8_t counter = 0;  // 4 bits
  std::uint16_t eventgroup_id = 0;

  [[nodiscard]] bool is_eventgroup_entry() const { return type == 0x06 || type == 0x07; }
  [[nodiscard]] bool is_service_entry() const { return type == 0x00 || type == 0x01; }
  [[nodiscard]] EntryKind kind() const;
  bool operator==(const SdEntry&) const = default;

  static SdEntry find_service(std::uint16_t service, std::uint16_t instance, std::uint8_t major,
                              std::uint32_t minor, std::uint32_t ttl);
  static SdEntry offer_service(std::uint16_t service, std::uint16_t instance, std::uint8_t major,
                               std::uint32_t minor, std::uint32_t ttl);  // ttl 0 = StopOffer
  static SdEntry subscribe(std::uint16_t service, std::uint16_t instance, std::uint8_t major,
                           std::uint16_t eventgroup, std::uint32_t ttl,
                           std::uint8_t counter = 0);  // ttl 0 = StopSubscribe
  static SdEntry subscribe_ack(std::uint16_t service, std::uint16_t instance, std::uint8_t major,
                               std::uint16_t eventgroup, std::uint32_t ttl,
                               std::uint8_t counter = 0);  // ttl 0 = Nack
};

// One option. For endpoint types `endpoint` holds address, protocol and port;
// load balancing uses priority/weight; configuration and unknown types keep
// their bytes after the reserved byte in `data` (a view into the message or,
// when building, into caller-owned storage).
struct SdOption {
  std::uint8_t type = 0;
  Endpoint endpoint;
  std::uint16_t priority = 0;
  std::uint16_t weight = 0;
  ByteSpan data;

  static SdOption ipv4_endpoint(IpAddress a, L4Proto p, std::uint16_t port);
  static SdOption ipv6_endpoint(IpAddress a, L4Proto p, std::uint16_t port);
  static SdOption ipv4_multicast(IpAddress a, std::uint16_t port);
  static SdOption ipv6_multicast(IpAddress a, std::uint16_t port);
  static SdOption ipv4_sd_endpoint(IpAddress a, std::uint16_t port = kSdPort);
  static SdOption ipv6_sd_endpoint(IpAddress a, std::uint16_t port = kSdPort);
  static SdOption load_balancing(std::uint16_t priority, std::uint16_t weight);
  // `strings` is an encoded DNS-TXT list (see encode_config_strings).
  static SdOption configuration(ByteSpan strings);

  // Bytes this option takes on the wire.
  [[nodiscard]] std::size_t wire_size() const;
  bool operator==(const SdOption& o) const;
};

// Encodes name=value strings as the configuration option's DNS-TXT list: a
// length byte per string, then a terminating zero (feat_req_someipsd_149).
// Returns false if a string is empty, longer than 255 bytes or the output
// does not fit.
[[nodiscard]] bool encode_config_strings(std::span<const std::string_view> items, std::vector<std::uint8_t>& out);
// Walks a validated configuration list; calls f(string_view) per item.
template <class F>
void for_each_config_string(ByteSpan list, F&& f) {
  ByteReader r(list);
  while (r.remaining() > 0) {
    const std::uint8_t n = r.u8();
    if (n == 0) break;
    auto s = r.bytes(n);
    if (!r.ok()) break;
    f(std::string_view(reinterpret_cast<const char*>(s.data()), s.size()));
  }
}

enum class SdError : std::uint8_t {
  kNotSdHeader,             // Message ID, type, return code or versions are not SD's
  kTruncated,               // shorter than the fixed SD fields
  kEntriesLengthInvalid,    // entries length not a multiple of 16 or past the end
  kOptionsLengthInvalid,    // options length past the end
  kTrailingBytes,           // bytes after the options array
  kOptionTruncated,         // an option's Length runs past the options array
  kOptionLengthInvalid,     // a known option type with the wrong Length
  kOptionFieldInvalid,      // bad L4 protocol, multicast not UDP, ...
  kConfigStringInvalid,     // configuration strings not a terminated list
  kTooManyOptions,          // more than kMaxOptions
  kOptionIndexOutOfRange,   // an entry references a missing option
};
[[nodiscard]] std::string_view to_string(SdError e);

// A validated SD payload. Views point into the caller's buffer, which must
// outlive this object.
class SdMessageView {
 public:
  [[nodiscard]] std::uint8_t flags() const { return flags_; }
  [[nodiscard]] bool reboot() const { return (flags_ & kSdFlagReboot) != 0; }
  [[nodiscard]] bool unicast() const { return (flags_ & kSdFlagUnicast) != 0; }
  [[nodiscard]] std::size_t entry_count() const { return entries_.size() / kEntrySize; }
  [[nodiscard]] std::size_t option_count() const { return option_count_; }
  // Precondition: i < entry_count() / option_count().
  [[nodiscard]] SdEntry entry(std::size_t i) const;
  [[nodiscard]] SdOption option(std::size_t i) const;

 private:
  friend Result<SdMessageView, SdError> parse_sd_payload(ByteSpan payload);
  std::uint8_t flags_ = 0;
  ByteSpan entries_;
  ByteSpan options_;
  std::size_t option_count_ = 0;
  std::array<std::uint32_t, kMaxOptions> option_offsets_{};
};

// Validates and views an SD payload (everything after the SOME/IP header).
[[nodiscard]] Result<SdMessageView, SdError> parse_sd_payload(ByteSpan payload);
// Checks the SOME/IP header is an SD header (feat_req_someipsd_26: Message ID
// 0xFFFF8100, NOTIFICATION, E_OK, protocol 1, interface 1), then parses.
[[nodiscard]] Result<SdMessageView, SdError> parse_sd_message(const MessageView& m);

[[nodiscard]] bool write_entry(ByteWriter& w, const SdEntry& e);
[[nodiscard]] bool write_option(ByteWriter& w, const SdOption& o);
// Writes an SD payload from entries whose index/#opt fields are already set
// and the options array as given (the inverse of parse_sd_payload).
[[nodiscard]] bool write_sd_payload(ByteWriter& w, std::uint8_t flags, std::span<const SdEntry> entries,
                      std::span<const SdOption> options);

// Collects entries with their option runs and lays out the options array:
// a run identical to one already present (same options, contiguous) is
// reused, so entries that share endpoints share options (feat_req_someipsd_836
// packing). Owns copies of entries and options; option `data` views must stay
// valid until write().
class SdMessageBuilder {
 public:
  // Appends an entry; sets its index/#opt fields. False (nothing added) when a
  // run has more than 15 options or an index would exceed 255.
  [[nodiscard]] bool add(SdEntry e, std::span<const SdOption> run1 = {}, std::span<const SdOption> run2 = {});
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] std::size_t entry_count() const { return entries_.size(); }
  [[nodiscard]] const std::vector<SdEntry>& entries() const { return entries_; }
  [[nodiscard]] const std::vector<SdOption>& options() const { return options_; }
  // SD payload size (without the 16-byte SOME/IP header).
  [[nodiscard]] std::size_t payload_size() const;
  // Writes the SD payload.
  [[nodiscard]] bool write_payload(ByteWriter& w, std::uint8_t flags) const;
  // Writes a whole SD message: SOME/IP header (client id 0 unless given,
  // session id, NOTIFICATION, interface 1) and payload.
  [[nodiscard]] bool write_message(ByteWriter& w, std::uint16_t session_id, std::uint8_t flags,
                     std::uint16_t client_id = 0) const;
  void clear() {
    entries_.clear();
    options_.clear();
  }

 private:
  // Returns the index where `run` starts (appending it if needed), or -1.
  int place_run(std::span<const SdOption> run);
  std::vector<SdEntry> entries_;
  std::vector<SdOption> options_;
};

// Header used for SD messages (feat_req_someipsd_26).
[[nodiscard]] Header sd_header(std::uint16_t session_id, std::uint16_t client_id = 0);

}  // namespace layersec::someip
