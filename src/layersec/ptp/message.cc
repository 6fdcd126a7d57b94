#include "layersec/ptp/message.h"

#include <algorithm>
#include <cstring>

namespace layersec::ptp {
namespace {

constexpr std::uint16_t kTlvOrganizationExtension = 0x0003;
constexpr std::uint16_t kTlvPathTrace = 0x0008;
constexpr std::array<std::uint8_t, 3> kOrgId8021 = {0x00, 0x80, 0xC2};
constexpr std::uint32_t kSubtypeFollowUpInfo = 1;
constexpr std::uint32_t kSubtypeIntervalRequest = 2;
constexpr std::uint16_t kFollowUpTlvLength = 28;
constexpr std::uint16_t kIntervalTlvLength = 12;
constexpr std::size_t kMinFrame = 60;

bool read_timestamp(ByteReader& r, Timestamp& t) {
  t.seconds = r.u48();
  t.nanoseconds = r.u32();
  return r.ok();
}

bool valid(const Timestamp& t) { return t.nanoseconds < 1'000'000'000U && t.seconds < kMaxTimestampSeconds; }

void read_port(ByteReader& r, PortIdentity& p) {
  p.clock_identity = r.u64();
  p.port_number = r.u16();
}

void write_timestamp(ByteWriter& w, const Timestamp& t) {
  w.u48(t.seconds);
  w.u32(t.nanoseconds);
}

void write_port(ByteWriter& w, const PortIdentity& p) {
  w.u64(p.clock_identity);
  w.u16(p.port_number);
}

// Reads an organization extension TLV header (type, length, OUI, subtype) and
// returns the value reader after the subtype, or a failed reader.
bool read_org_tlv(ByteReader& r, std::uint32_t subtype, std::uint16_t length, ByteReader& value) {
  if (r.u16() != kTlvOrganizationExtension || !r.ok()) return false;
  if (r.u16() != length || !r.ok()) return false;
  ByteReader v = r.sub(length);
  std::array<std::uint8_t, 3> oui{};
  if (!v.copy_to(oui) || oui != kOrgId8021) return false;
  if (v.u24() != subtype || !v.ok()) return false;
  value = v;
  return true;
}

std::size_t expected_length(const Message& m) {
  switch (m.header.type) {
    case MessageType::kSync: return kHeaderSize + 10;
    case MessageType::kFollowUp: return kHeaderSize + 10 + 4 + kFollowUpTlvLength;
    case MessageType::kPdelayReq:
    case MessageType::kPdelayResp:
    case MessageType::kPdelayRespFollowUp: return kHeaderSize + 20;
    case MessageType::kAnnounce:
      return kHeaderSize + 30 + (m.announce.has_path_trace ? 4 + 8 * std::size_t{m.announce.path_trace_count} : 0);
    case MessageType::kSignaling: return kHeaderSize + 10 + (m.has_interval_request ? 4 + kIntervalTlvLength : 0);
  }
  return 0;
}

bool known_type(std::uint8_t t) {
  switch (static_cast<MessageType>(t)) {
    case MessageType::kSync:
    case MessageType::kPdelayReq:
    case MessageType::kPdelayResp:
    case MessageType::kFollowUp:
    case MessageType::kPdelayRespFollowUp:
    case MessageType::kAnnounce:
    case MessageType::kSignaling: return true;
  }
  return false;
}

}  // namespace

const char* to_string(MessageType t) {
  switch (t) {
    case MessageType::kSync: return "Sync";
    case MessageType::kPdelayReq: return "Pdelay_Req";
    case MessageType::kPdelayResp: return "Pdelay_Resp";
    case MessageType::kFollowUp: return "Follow_Up";
    case MessageType::kPdelayRespFollowUp: return "Pdelay_Resp_Follow_Up";
    case MessageType::kAnnounce: return "Announce";
    case MessageType::kSignaling: return "Signaling";
  }
  return "?";
}

const char* to_string(ParseError e) {
  switch (e) {
    case ParseError::kTruncated: return "truncated";
    case ParseError::kTransportSpecific: return "transport_specific";
    case ParseError::kVersion: return "version";
    case ParseError::kLength: return "message_length";
    case ParseError::kUnknownType: return "message_type";
    case ParseError::kTimestamp: return "timestamp";
    case ParseError::kTlv: return "tlv";
    case ParseError::kTrailingBytes: return "trailing_bytes";
    case ParseError::kEtherType: return "ether_type";
  }
  return "?";
}

std::uint64_t clock_identity_from_mac(const std::array<std::uint8_t, 6>& mac) {
  const std::uint8_t b[8] = {mac[0], mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]};
  return load_be64(b);
}

std::int64_t to_ns(const Timestamp& t) {
  return static_cast<std::int64_t>(t.seconds) * 1'000'000'000 + static_cast<std::int64_t>(t.nanoseconds);
}

Timestamp from_ns(std::int64_t ns) {
  Timestamp t;
  t.seconds = static_cast<std::uint64_t>(ns / 1'000'000'000);
  t.nanoseconds = static_cast<std::uint32_t>(ns % 1'000'000'000);
  return t;
}

Result<Message, ParseError> parse_message(ByteSpan data) {
  if (data.size() < kHeaderSize) return Err(ParseError::kTruncated);
  ByteReader r(data);
  Message m;
  Header& h = m.header;
  const std::uint8_t b0 = r.u8();
  h.major_sdo_id = static_cast<std::uint8_t>(b0 >> 4);
  const std::uint8_t type = b0 & 0x0F;
  const std::uint8_t b1 = r.u8();
  h.minor_version = static_cast<std::uint8_t>(b1 >> 4);
  h.version = b1 & 0x0F;
  h.message_length = r.u16();
  h.domain = r.u8();
  h.minor_sdo_id = r.u8();
  h.flags = r.u16();
  h.correction = static_cast<std::int64_t>(r.u64());
  h.type_specific = r.u32();
  read_port(r, h.source);
  h.sequence_id = r.u16();
  h.control = r.u8();
  h.log_interval = static_cast<std::int8_t>(r.u8());
  if (!r.ok()) return Err(ParseError::kTruncated);
  if (h.major_sdo_id != kMajorSdoIdGptp) return Err(ParseError::kTransportSpecific);
  if (h.version != kVersionPtp || h.minor_version > 1) return Err(ParseError::kVersion);
  if (!known_type(type)) return Err(ParseError::kUnknownType);
  h.type = static_cast<MessageType>(type);
  if (h.message_length < kHeaderSize) return Err(ParseError::kLength);
  if (data.size() < h.message_length) return Err(ParseError::kTruncated);
  if (data.size() > h.message_length) return Err(ParseError::kTrailingBytes);

  switch (h.type) {
    case MessageType::kSync:
    case MessageType::kPdelayReq: {
      // Two-step Sync and Pdelay_Req carry reserved octets (10 and 20); their
      // values are ignored on receipt (§11.4.3, §11.4.5) and re-encoded as zero.
      const std::size_t n = h.type == MessageType::kSync ? 10 : 20;
      if (!r.copy_to(MutableByteSpan(m.reserved.data(), n))) return Err(ParseError::kLength);
      break;
    }
    case MessageType::kFollowUp: {
      if (!read_timestamp(r, m.timestamp)) return Err(ParseError::kLength);
      if (!valid(m.timestamp)) return Err(ParseError::kTimestamp);
      ByteReader v;
      if (!read_org_tlv(r, kSubtypeFollowUpInfo, kFollowUpTlvLength, v)) return Err(ParseError::kTlv);
      m.follow_up.cumulative_scaled_rate_offset = static_cast<std::int32_t>(v.u32());
      m.follow_up.gm_time_base_indicator = v.u16();
      v.copy_to(m.follow_up.last_gm_phase_change);
      m.follow_up.scaled_last_gm_freq_change = static_cast<std::int32_t>(v.u32());
      if (!v.finish()) return Err(ParseError::kTlv);
      break;
    }
    case MessageType::kPdelayResp:
    case MessageType::kPdelayRespFollowUp: {
      if (!read_timestamp(r, m.timestamp)) return Err(ParseError::kLength);
      read_port(r, m.port);
      if (!r.ok()) return Err(ParseError::kLength);
      if (!valid(m.timestamp)) return Err(ParseError::kTimestamp);
      break;
    }
    case MessageType::kAnnounce: {
      AnnounceBody& a = m.announce;
      // originTimestamp and one octet are reserved in gPTP (§10.6.3).
      if (!r.copy_to(MutableByteSpan(m.reserved.data(), 10))) return Err(ParseError::kLength);
      a.current_utc_offset = static_cast<std::int16_t>(r.u16());
      m.reserved[10] = r.u8();
      a.priority1 = r.u8();
      a.quality.clock_class = r.u8();
      a.quality.clock_accuracy = r.u8();
      a.quality.offset_scaled_log_variance = r.u16();
      a.priority2 = r.u8();
      a.grandmaster_identity = r.u64();
      a.steps_removed = r.u16();
      a.time_source = r.u8();
      if (!r.ok()) return Err(ParseError::kLength);
      if (!r.empty()) {
        if (r.u16() != kTlvPathTrace || !r.ok()) return Err(ParseError::kTlv);
        const std::uint16_t len = r.u16();
        if (!r.ok() || len % 8 != 0 || len / 8 > kMaxPathTrace || r.remaining() < len) return Err(ParseError::kTlv);
        a.has_path_trace = true;
        a.path_trace_count = static_cast<std::uint8_t>(len / 8);
        for (std::size_t i = 0; i < a.path_trace_count; ++i) a.path_trace[i] = r.u64();
      }
      break;
    }
    case MessageType::kSignaling: {
      read_port(r, m.port);
      if (!r.ok()) return Err(ParseError::kLength);
      if (!r.empty()) {
        ByteReader v;
        if (!read_org_tlv(r, kSubtypeIntervalRequest, kIntervalTlvLength, v)) return Err(ParseError::kTlv);
        m.has_interval_request = true;
        m.interval.link_delay_interval = static_cast<std::int8_t>(v.u8());
        m.interval.time_sync_interval = static_cast<std::int8_t>(v.u8());
        m.interval.announce_interval = static_cast<std::int8_t>(v.u8());
        m.interval.flags = v.u8();
        v.copy_to(MutableByteSpan(m.reserved.data(), 2));  // reserved
        if (!v.finish()) return Err(ParseError::kTlv);
      }
      break;
    }
  }
  if (!r.ok()) return Err(ParseError::kLength);
  if (!r.finish()) return Err(ParseError::kTrailingBytes);
  return m;
}

std::size_t encode_message(const Message& m, MutableByteSpan out) {
  const Header& h = m.header;
  if (m.header.type == MessageType::kAnnounce && m.announce.path_trace_count > kMaxPathTrace) return 0;
  if (!known_type(static_cast<std::uint8_t>(h.type)) || h.major_sdo_id > 15 || h.minor_version > 15 || h.version > 15) {
    return 0;
  }
  const std::size_t length = expected_length(m);
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>((h.major_sdo_id << 4) | static_cast<std::uint8_t>(h.type)));
  w.u8(static_cast<std::uint8_t>((h.minor_version << 4) | h.version));
  w.u16(static_cast<std::uint16_t>(length));
  w.u8(h.domain);
  w.u8(h.minor_sdo_id);
  w.u16(h.flags);
  w.u64(static_cast<std::uint64_t>(h.correction));
  w.u32(h.type_specific);
  write_port(w, h.source);
  w.u16(h.sequence_id);
  w.u8(h.control);
  w.u8(static_cast<std::uint8_t>(h.log_interval));
  if (m.timestamp.seconds >= (std::uint64_t{1} << 48)) return 0;
  switch (h.type) {
    case MessageType::kSync: w.bytes(ByteSpan(m.reserved.data(), 10)); break;
    case MessageType::kPdelayReq: w.bytes(ByteSpan(m.reserved.data(), 20)); break;
    case MessageType::kFollowUp:
      write_timestamp(w, m.timestamp);
      w.u16(kTlvOrganizationExtension);
      w.u16(kFollowUpTlvLength);
      w.bytes(kOrgId8021);
      w.u24(kSubtypeFollowUpInfo);
      w.u32(static_cast<std::uint32_t>(m.follow_up.cumulative_scaled_rate_offset));
      w.u16(m.follow_up.gm_time_base_indicator);
      w.bytes(m.follow_up.last_gm_phase_change);
      w.u32(static_cast<std::uint32_t>(m.follow_up.scaled_last_gm_freq_change));
      break;
    case MessageType::kPdelayResp:
    case MessageType::kPdelayRespFollowUp:
      write_timestamp(w, m.timestamp);
      write_port(w, m.port);
      break;
    case MessageType::kAnnounce: {
      const AnnounceBody& a = m.announce;
      w.bytes(ByteSpan(m.reserved.data(), 10));
      w.u16(static_cast<std::uint16_t>(a.current_utc_offset));
      w.u8(m.reserved[10]);
      w.u8(a.priority1);
      w.u8(a.quality.clock_class);
      w.u8(a.quality.clock_accuracy);
      w.u16(a.quality.offset_scaled_log_variance);
      w.u8(a.priority2);
      w.u64(a.grandmaster_identity);
      w.u16(a.steps_removed);
      w.u8(a.time_source);
      if (a.has_path_trace) {
        w.u16(kTlvPathTrace);
        w.u16(static_cast<std::uint16_t>(8 * a.path_trace_count));
        for (std::size_t i = 0; i < a.path_trace_count; ++i) w.u64(a.path_trace[i]);
      }
      break;
    }
    case MessageType::kSignaling:
      write_port(w, m.port);
      if (m.has_interval_request) {
        w.u16(kTlvOrganizationExtension);
        w.u16(kIntervalTlvLength);
        w.bytes(kOrgId8021);
        w.u24(kSubtypeIntervalRequest);
        w.u8(static_cast<std::uint8_t>(m.interval.link_delay_interval));
        w.u8(static_cast<std::uint8_t>(m.interval.time_sync_interval));
        w.u8(static_cast<std::uint8_t>(m.interval.announce_interval));
        w.u8(m.interval.flags);
        w.bytes(ByteSpan(m.reserved.data(), 2));
      }
      break;
  }
  if (!w.ok() || w.size() != length) return 0;
  return w.size();
}

std::size_t encode_frame(const Message& m, const std::array<std::uint8_t, 6>& src, MutableByteSpan out) {
  if (out.size() < 14) return 0;
  ByteWriter w(out);
  w.bytes(kPdelayMulticast);
  w.bytes(src);
  w.u16(kEtherType);
  const std::size_t n = encode_message(m, out.subspan(14));
  return n == 0 ? 0 : 14 + n;
}

Result<ParsedFrame, ParseError> parse_frame(ByteSpan frame) {
  ByteReader r(frame);
  ParsedFrame f;
  r.copy_to(f.dst);
  r.copy_to(f.src);
  const std::uint16_t type = r.u16();
  if (!r.ok()) return Err(ParseError::kTruncated);
  if (type != kEtherType) return Err(ParseError::kEtherType);
  ByteSpan body = r.rest();
  if (body.size() < kHeaderSize) return Err(ParseError::kTruncated);
  const std::size_t length = load_be16(body.data() + 2);
  if (length < body.size()) {
    // Only the Ethernet pad may follow the message.
    if (frame.size() > kMinFrame) return Err(ParseError::kTrailingBytes);
    for (std::size_t i = length; i < body.size(); ++i) {
      if (body[i] != 0) return Err(ParseError::kTrailingBytes);
    }
    body = body.first(length);
  }
  auto m = parse_message(body);
  if (!m) return Err(m.error());
  f.message = *m;
  return f;
}

}  // namespace layersec::ptp
