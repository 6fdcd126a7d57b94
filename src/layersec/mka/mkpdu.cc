// MKPDU codec (IEEE 802.1X-2020 §11.11, §11.12); see mkpdu.h for the rules.
#include "layersec/mka/mkpdu.h"

#include <algorithm>

namespace layersec::mka {
namespace {

constexpr std::size_t kFrameHeaderSize = kEthernetHeaderSize + kEapolHeaderSize;
constexpr std::size_t kSakUseBodySize = 40;
constexpr std::size_t kPeerEntrySize = kMiSize + 4;
constexpr std::size_t kXpnBodySize = 8;
constexpr std::size_t kWrap128 = 24;  // RFC 3394 wrap of a 128-bit key
constexpr std::size_t kWrap256 = 40;
constexpr std::size_t kCipherSuiteEntrySize = 10;
constexpr std::size_t kMaxTlvValue = 0x1FF;
constexpr std::size_t kMaxEapolBody = 0xFFFF;

constexpr std::size_t padded(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

bool is_known_type(std::uint8_t t) { return (t >= 1 && t <= 8) || t == 255; }

MemberId read_mi(ByteReader& r) {
  MemberId mi{};
  r.copy_to(mi);
  return mi;
}

std::vector<std::uint8_t> to_vector(ByteSpan b) { return {b.begin(), b.end()}; }

// The 4-octet header of a parameter set other than the basic one.
struct SetHeader {
  std::uint8_t type = 0;
  std::uint8_t octet2 = 0;     // type-specific
  std::uint8_t octet3_hi = 0;  // type-specific high nibble of octet 3
  std::size_t body_length = 0;
};

// --- decoding of the individual set bodies (body reader holds exactly the body) ---

using SetStatus = Status<MkpduError>;

SetStatus decode_peer_list(const SetHeader& h, ByteReader body, PeerList& out) {
  if (h.body_length % kPeerEntrySize != 0) return Err(MkpduError::kBadPeerListLength);
  out.key_server_ssci = h.type == static_cast<std::uint8_t>(ParameterSetType::kLivePeerList) ? h.octet2 : 0;
  out.peers.reserve(h.body_length / kPeerEntrySize);
  while (!body.empty()) {
    PeerEntry e;
    e.mi = read_mi(body);
    e.mn = body.u32();
    out.peers.push_back(e);
  }
  return {};
}

SakUseKey read_sak_use_key(ByteReader& r) {
  SakUseKey k;
  k.key_server_mi = read_mi(r);
  k.kn = r.u32();
  k.lowest_acceptable_pn = r.u32();
  return k;
}

SetStatus decode_sak_use(const SetHeader& h, ByteReader body, SakUse& out) {
  if (h.body_length != 0 && h.body_length != kSakUseBodySize) return Err(MkpduError::kBadSakUseLength);
  out.latest_an = static_cast<std::uint8_t>(h.octet2 >> 6);
  out.latest_tx = (h.octet2 & 0x20) != 0;
  out.latest_rx = (h.octet2 & 0x10) != 0;
  out.old_an = static_cast<std::uint8_t>((h.octet2 >> 2) & 0x03);
  out.old_tx = (h.octet2 & 0x02) != 0;
  out.old_rx = (h.octet2 & 0x01) != 0;
  out.plain_tx = (h.octet3_hi & 0x8) != 0;
  out.plain_rx = (h.octet3_hi & 0x4) != 0;
  out.delay_protect = (h.octet3_hi & 0x1) != 0;  // 0x2 (X) is reserved
  out.has_keys = h.body_length != 0;
  if (out.has_keys) {
    out.latest = read_sak_use_key(body);
    out.old = read_sak_use_key(body);
  }
  return {};
}

SetStatus decode_distributed_sak(const SetHeader& h, ByteReader body, DistributedSak& out) {
  out.distributed_an = static_cast<std::uint8_t>(h.octet2 >> 6);
  out.confidentiality_offset = static_cast<std::uint8_t>((h.octet2 >> 4) & 0x03);
  switch (h.body_length) {
    case 0:
      out.has_key = false;
      return {};
    case 4 + kWrap128:
      out.kn = body.u32();
      out.wrapped_sak = to_vector(body.bytes(kWrap128));
      return {};
    case 4 + 8 + kWrap128:
    case 4 + 8 + kWrap256: {
      out.kn = body.u32();
      const std::uint64_t suite = body.u64();
      const std::size_t wrap = h.body_length - 12;
      const std::size_t sak_len = sak_length_of(suite);
      if (sak_len != 0 && sak_len + 8 != wrap) return Err(MkpduError::kCipherSuiteKeyMismatch);
      out.cipher_suite = suite;
      out.wrapped_sak = to_vector(body.bytes(wrap));
      return {};
    }
    default:
      return Err(MkpduError::kBadDistributedSakLength);
  }
}

SetStatus decode_distributed_cak(const SetHeader& h, ByteReader body, DistributedCak& out) {
  if (h.body_length <= kWrap128 || h.body_length > kWrap128 + kMaxCknSize) {
    return Err(MkpduError::kBadDistributedCakLength);
  }
  out.wrapped_cak = to_vector(body.bytes(kWrap128));
  out.ckn = to_vector(body.rest());
  return {};
}

bool valid_cipher_suites_value(std::size_t n) { return n % kCipherSuiteEntrySize == 0; }

SetStatus decode_announcement(ByteReader body, Announcement& out) {
  while (!body.empty()) {
    std::uint16_t th = 0;
    if (!body.read_u16(th)) return Err(MkpduError::kBadAnnouncementTlv);
    AnnouncementTlv tlv;
    tlv.type = static_cast<std::uint8_t>(th >> 9);
    const std::size_t len = th & kMaxTlvValue;
    const ByteSpan value = body.bytes(len);
    if (!body.ok()) return Err(MkpduError::kBadAnnouncementTlv);
    if (tlv.type == kTlvMacsecCipherSuites && !valid_cipher_suites_value(len)) {
      return Err(MkpduError::kBadAnnouncementTlv);
    }
    tlv.value = to_vector(value);
    out.tlvs.push_back(std::move(tlv));
  }
  return {};
}

SetStatus decode_xpn(const SetHeader& h, ByteReader body, XpnParameterSet& out) {
  if (h.body_length != kXpnBodySize) return Err(MkpduError::kBadXpnLength);
  out.suspension_time = h.octet2;
  out.latest_lowest_acceptable_pn_high = body.u32();
  out.old_lowest_acceptable_pn_high = body.u32();
  return {};
}

SetStatus decode_known(const SetHeader& h, ByteReader body, Mkpdu& m) {
  switch (static_cast<ParameterSetType>(h.type)) {
    case ParameterSetType::kLivePeerList:
      return decode_peer_list(h, body, m.live_peers.emplace());
    case ParameterSetType::kPotentialPeerList:
      return decode_peer_list(h, body, m.potential_peers.emplace());
    case ParameterSetType::kSakUse:
      return decode_sak_use(h, body, m.sak_use.emplace());
    case ParameterSetType::kDistributedSak:
      return decode_distributed_sak(h, body, m.distributed_sak.emplace());
    case ParameterSetType::kDistributedCak:
      return decode_distributed_cak(h, body, m.distributed_cak.emplace());
    case ParameterSetType::kKmd:
      m.kmd = to_vector(body.rest());
      return {};
    case ParameterSetType::kAnnouncement:
      return decode_announcement(body, m.announcement.emplace());
    case ParameterSetType::kXpn:
      return decode_xpn(h, body, m.xpn.emplace());
    case ParameterSetType::kIcvIndicator:
      break;  // handled by the caller
  }
  return Err(MkpduError::kBadIcvIndicator);
}

bool present(const Mkpdu& m, std::uint8_t type) {
  switch (static_cast<ParameterSetType>(type)) {
    case ParameterSetType::kLivePeerList: return m.live_peers.has_value();
    case ParameterSetType::kPotentialPeerList: return m.potential_peers.has_value();
    case ParameterSetType::kSakUse: return m.sak_use.has_value();
    case ParameterSetType::kDistributedSak: return m.distributed_sak.has_value();
    case ParameterSetType::kDistributedCak: return m.distributed_cak.has_value();
    case ParameterSetType::kKmd: return m.kmd.has_value();
    case ParameterSetType::kAnnouncement: return m.announcement.has_value();
    case ParameterSetType::kXpn: return m.xpn.has_value();
    case ParameterSetType::kIcvIndicator: return m.icv_indicator;
  }
  return false;
}

bool padding_is_zero(ByteSpan p) {
  return std::all_of(p.begin(), p.end(), [](std::uint8_t b) { return b == 0; });
}

// Checks that a set of `body_length` octets starting at `pos` (header
// included) fits the EAPOL body and leaves the 16-octet ICV.
Status<MkpduError> check_extent(std::size_t pos, std::size_t body_length, std::size_t eapol_body,
                                MkpduError too_long) {
  const std::size_t end = pos + kParameterSetHeaderSize + padded(body_length);
  if (end > eapol_body) return Err(too_long);
  if (end > eapol_body - kIcvSize) return Err(MkpduError::kMissingIcv);
  return {};
}

Result<std::size_t, MkpduError> decode_basic(ByteReader& body, std::size_t eapol_body, BasicParameterSet& b) {
  b.mka_version = body.u8();
  b.key_server_priority = body.u8();
  const std::uint16_t w = body.u16();
  const std::size_t len = w & 0x0FFF;
  b.key_server = (w & 0x8000) != 0;
  b.macsec_desired = (w & 0x4000) != 0;
  b.macsec_capability = static_cast<MacsecCapability>((w >> 12) & 0x03);
  if (b.mka_version == 0) return Err(MkpduError::kBadMkaVersion);
  if (len < kBasicFixedBodySize) return Err(MkpduError::kBadBasicSetLength);
  if (auto s = check_extent(0, len, eapol_body, MkpduError::kBadBasicSetLength); !s) return Err(s.error());
  const std::size_t ckn_len = len - kBasicFixedBodySize;
  if (ckn_len == 0 || ckn_len > kMaxCknSize) return Err(MkpduError::kBadCknLength);
  b.sci = body.u64();
  b.actor_mi = read_mi(body);
  b.actor_mn = body.u32();
  if (body.u32() != kAlgorithmAgility) return Err(MkpduError::kWrongAlgorithmAgility);
  b.ckn = to_vector(body.bytes(ckn_len));
  if (!padding_is_zero(body.bytes(padded(len) - len))) return Err(MkpduError::kBadPadding);
  return kParameterSetHeaderSize + padded(len);
}

}  // namespace

std::optional<macsec::CipherSuite> cipher_suite_from_id(std::uint64_t cipher_suite) {
  if (cipher_suite == kCipherSuiteGcmAes128Legacy) return macsec::CipherSuite::kGcmAes128;
  for (auto s : {macsec::CipherSuite::kGcmAes128, macsec::CipherSuite::kGcmAes256, macsec::CipherSuite::kGcmAesXpn128,
                 macsec::CipherSuite::kGcmAesXpn256}) {
    if (macsec::cipher_suite_id(s) == cipher_suite) return s;
  }
  return std::nullopt;
}

std::size_t sak_length_of(std::uint64_t cipher_suite) {
  const auto s = cipher_suite_from_id(cipher_suite);
  return s ? macsec::sak_size(*s) : 0;
}

std::vector<CipherSuiteEntry> announced_cipher_suites(const Announcement& a) {
  std::vector<CipherSuiteEntry> out;
  for (const auto& tlv : a.tlvs) {
    if (tlv.type != kTlvMacsecCipherSuites || !valid_cipher_suites_value(tlv.value.size())) continue;
    ByteReader r(tlv.value);
    while (!r.empty()) {
      CipherSuiteEntry e;
      e.implementation_capability = static_cast<MacsecCapability>(r.u16() & 0x03);
      e.cipher_suite = r.u64();
      out.push_back(e);
    }
  }
  return out;
}

AnnouncementTlv cipher_suites_tlv(std::span<const CipherSuiteEntry> entries) {
  AnnouncementTlv tlv;
  tlv.type = kTlvMacsecCipherSuites;
  tlv.value.resize(entries.size() * kCipherSuiteEntrySize);
  ByteWriter w(tlv.value);
  for (const auto& e : entries) {
    w.u16(static_cast<std::uint16_t>(static_cast<std::uint8_t>(e.implementation_capability) & 0x03));
    w.u64(e.cipher_suite);
  }
  return tlv;
}

std::string_view to_string(MkpduError e) {
  switch (e) {
    case MkpduError::kShortFrame: return "frame shorter than the Ethernet and EAPOL headers";
    case MkpduError::kIndividualDestination: return "destination address is an individual address";
    case MkpduError::kDestinationNotAllowed: return "destination group address not accepted";
    case MkpduError::kWrongEtherType: return "EtherType is not 0x888E (EAPOL)";
    case MkpduError::kBadEapolVersion: return "EAPOL protocol version not 1..3";
    case MkpduError::kNotMka: return "EAPOL packet type is not 5 (EAPOL-MKA)";
    case MkpduError::kBodyLengthMismatch: return "EAPOL body length runs past the frame";
    case MkpduError::kTrailingBytes: return "octets after the EAPOL body";
    case MkpduError::kBadMkpduLength: return "MKPDU shorter than 32 octets or not a multiple of 4";
    case MkpduError::kBadMkaVersion: return "MKA version 0";
    case MkpduError::kBadBasicSetLength: return "basic parameter set length bad";
    case MkpduError::kBadCknLength: return "CKN length not 1..32";
    case MkpduError::kWrongAlgorithmAgility: return "algorithm agility not 00-80-C2-01";
    case MkpduError::kBadSetLength: return "parameter set runs past the MKPDU";
    case MkpduError::kBadPadding: return "non-zero padding octet";
    case MkpduError::kDuplicateSet: return "parameter set type appears twice";
    case MkpduError::kBadPeerListLength: return "peer list length not a multiple of 16";
    case MkpduError::kBadSakUseLength: return "SAK use body length not 0 or 40";
    case MkpduError::kBadDistributedSakLength: return "distributed SAK body length not 0, 28, 36 or 52";
    case MkpduError::kCipherSuiteKeyMismatch: return "cipher suite does not match the wrapped SAK length";
    case MkpduError::kBadDistributedCakLength: return "distributed CAK body length not 25..56";
    case MkpduError::kBadAnnouncementTlv: return "announcement TLV malformed";
    case MkpduError::kBadXpnLength: return "XPN body length not 8";
    case MkpduError::kBadIcvIndicator: return "ICV indicator length not 16 or not before the ICV";
    case MkpduError::kMissingIcv: return "no room for the 16-octet ICV";
    case MkpduError::kBadField: return "field value out of range";
    case MkpduError::kSetTooLong: return "parameter set or MKPDU too long";
    case MkpduError::kBufferTooSmall: return "output buffer too small";
    case MkpduError::kIcvComputation: return "ICV computation failed";
  }
  return "unknown MKPDU error";
}

Result<DecodedMkpdu, MkpduError> decode_mkpdu(ByteSpan frame, const DecodeOptions& options) {
  if (frame.size() < kFrameHeaderSize) return Err(MkpduError::kShortFrame);
  ByteReader r(frame);
  DecodedMkpdu out;
  Mkpdu& m = out.mkpdu;
  r.copy_to(m.destination);
  r.copy_to(m.source);
  if ((m.destination[0] & 0x01) == 0) return Err(MkpduError::kIndividualDestination);
  const auto allowed = options.allowed_destinations;
  const bool da_ok = allowed.empty() ? m.destination == kPaeGroupAddress
                                     : std::find(allowed.begin(), allowed.end(), m.destination) != allowed.end();
  if (!da_ok) return Err(MkpduError::kDestinationNotAllowed);
  if (r.u16() != kEapolEtherType) return Err(MkpduError::kWrongEtherType);
  m.eapol_version = r.u8();
  if (m.eapol_version < 1 || m.eapol_version > 3) return Err(MkpduError::kBadEapolVersion);
  if (r.u8() != kEapolPacketTypeMka) return Err(MkpduError::kNotMka);
  const std::size_t eapol_body = r.u16();
  if (eapol_body > r.remaining()) return Err(MkpduError::kBodyLengthMismatch);
  if (eapol_body < r.remaining()) return Err(MkpduError::kTrailingBytes);
  if (eapol_body < kMinMkpduSize || eapol_body % 4 != 0) return Err(MkpduError::kBadMkpduLength);

  ByteReader body = r.sub(eapol_body);
  auto basic = decode_basic(body, eapol_body, m.basic);
  if (!basic) return Err(basic.error());
  std::size_t pos = *basic;
  const std::size_t sets_end = eapol_body - kIcvSize;
  while (pos < sets_end) {
    SetHeader h;
    h.type = body.u8();
    h.octet2 = body.u8();
    const std::uint16_t w = body.u16();
    h.octet3_hi = static_cast<std::uint8_t>(w >> 12);
    h.body_length = w & 0x0FFF;
    if (h.type == static_cast<std::uint8_t>(ParameterSetType::kIcvIndicator)) {
      // Its body is the ICV itself: 16 octets that end the MKPDU.
      if (h.body_length != kIcvSize || pos + kParameterSetHeaderSize != sets_end) {
        return Err(MkpduError::kBadIcvIndicator);
      }
      m.icv_indicator = true;
      pos += kParameterSetHeaderSize;
      break;
    }
    if (auto s = check_extent(pos, h.body_length, eapol_body, MkpduError::kBadSetLength); !s) return Err(s.error());
    ByteReader set_body = body.sub(h.body_length);
    if (!padding_is_zero(body.bytes(padded(h.body_length) - h.body_length))) return Err(MkpduError::kBadPadding);
    if (is_known_type(h.type)) {
      if (present(m, h.type)) return Err(MkpduError::kDuplicateSet);
      if (auto s = decode_known(h, set_body, m); !s) return Err(s.error());
    } else {
      m.unknown_sets.push_back(UnknownParameterSet{h.type, to_vector(set_body.rest())});
    }
    pos += kParameterSetHeaderSize + padded(h.body_length);
  }
  body.copy_to(out.icv);
  if (!body.finish()) return Err(MkpduError::kMissingIcv);  // unreachable: every extent was checked
  out.icv_covered = frame.first(kFrameHeaderSize + sets_end);
  return out;
}

bool verify_mkpdu_icv(const DecodedMkpdu& d, const SecretBytes& ick) { return verify_icv(ick, d.icv_covered, d.icv); }

// ------------------------------------------------------------------ encoding

namespace {

bool all_zero(const SakUseKey& k) { return k == SakUseKey{}; }

// Body length of each present known set, in the order written; validates
// every field the decoder would refuse.
struct SetPlan {
  std::uint8_t type = 0;
  std::size_t body_length = 0;
};

Status<MkpduError> validate(const Mkpdu& m) {
  if ((m.destination[0] & 0x01) == 0) return Err(MkpduError::kIndividualDestination);
  if (m.eapol_version < 1 || m.eapol_version > 3) return Err(MkpduError::kBadEapolVersion);
  const auto& b = m.basic;
  if (b.mka_version == 0) return Err(MkpduError::kBadMkaVersion);
  if (b.ckn.empty() || b.ckn.size() > kMaxCknSize) return Err(MkpduError::kBadCknLength);
  if (static_cast<std::uint8_t>(b.macsec_capability) > 3) return Err(MkpduError::kBadField);
  if (m.live_peers && m.live_peers->peers.size() * kPeerEntrySize > kMaxSetBodySize) return Err(MkpduError::kSetTooLong);
  if (m.potential_peers) {
    if (m.potential_peers->key_server_ssci != 0) return Err(MkpduError::kBadField);
    if (m.potential_peers->peers.size() * kPeerEntrySize > kMaxSetBodySize) return Err(MkpduError::kSetTooLong);
  }
  if (const auto& u = m.sak_use) {
    if (u->latest_an > 3 || u->old_an > 3) return Err(MkpduError::kBadField);
    if (!u->has_keys && (!all_zero(u->latest) || !all_zero(u->old))) return Err(MkpduError::kBadField);
  }
  if (const auto& d = m.distributed_sak) {
    if (d->distributed_an > 3 || d->confidentiality_offset > 3) return Err(MkpduError::kBadField);
    if (!d->has_key) {
      if (d->kn != 0 || d->cipher_suite || !d->wrapped_sak.empty()) return Err(MkpduError::kBadField);
    } else if (!d->cipher_suite) {
      if (d->wrapped_sak.size() != kWrap128) return Err(MkpduError::kBadDistributedSakLength);
    } else {
      const std::size_t wrap = d->wrapped_sak.size();
      if (wrap != kWrap128 && wrap != kWrap256) return Err(MkpduError::kBadDistributedSakLength);
      const std::size_t sak_len = sak_length_of(*d->cipher_suite);
      if (sak_len != 0 && sak_len + 8 != wrap) return Err(MkpduError::kCipherSuiteKeyMismatch);
    }
  }
  if (const auto& c = m.distributed_cak) {
    if (c->wrapped_cak.size() != kWrap128 || c->ckn.empty() || c->ckn.size() > kMaxCknSize) {
      return Err(MkpduError::kBadDistributedCakLength);
    }
  }
  if (m.kmd && m.kmd->size() > kMaxSetBodySize) return Err(MkpduError::kSetTooLong);
  if (const auto& a = m.announcement) {
    std::size_t total = 0;
    for (const auto& t : a->tlvs) {
      if (t.type > 127 || t.value.size() > kMaxTlvValue) return Err(MkpduError::kBadField);
      if (t.type == kTlvMacsecCipherSuites && !valid_cipher_suites_value(t.value.size())) {
        return Err(MkpduError::kBadAnnouncementTlv);
      }
      total += 2 + t.value.size();
    }
    if (total > kMaxSetBodySize) return Err(MkpduError::kSetTooLong);
  }
  for (const auto& u : m.unknown_sets) {
    if (is_known_type(u.type)) return Err(MkpduError::kBadField);
    if (u.body.size() > kMaxSetBodySize) return Err(MkpduError::kSetTooLong);
  }
  return {};
}

std::size_t announcement_body(const Announcement& a) {
  std::size_t n = 0;
  for (const auto& t : a.tlvs) n += 2 + t.value.size();
  return n;
}

std::size_t distributed_sak_body(const DistributedSak& d) {
  if (!d.has_key) return 0;
  return 4 + (d.cipher_suite ? 8 : 0) + d.wrapped_sak.size();
}

// Parameter sets after the basic one (without the ICV indicator), in order.
std::vector<SetPlan> plan(const Mkpdu& m) {
  std::vector<SetPlan> p;
  auto add = [&p](ParameterSetType t, std::size_t n) { p.push_back({static_cast<std::uint8_t>(t), n}); };
  if (m.live_peers) add(ParameterSetType::kLivePeerList, m.live_peers->peers.size() * kPeerEntrySize);
  if (m.potential_peers) add(ParameterSetType::kPotentialPeerList, m.potential_peers->peers.size() * kPeerEntrySize);
  if (m.sak_use) add(ParameterSetType::kSakUse, m.sak_use->has_keys ? kSakUseBodySize : 0);
  if (m.distributed_sak) add(ParameterSetType::kDistributedSak, distributed_sak_body(*m.distributed_sak));
  if (m.distributed_cak) add(ParameterSetType::kDistributedCak, kWrap128 + m.distributed_cak->ckn.size());
  if (m.kmd) add(ParameterSetType::kKmd, m.kmd->size());
  if (m.announcement) add(ParameterSetType::kAnnouncement, announcement_body(*m.announcement));
  if (m.xpn) add(ParameterSetType::kXpn, kXpnBodySize);
  for (const auto& u : m.unknown_sets) p.push_back({u.type, u.body.size()});
  return p;
}

std::size_t eapol_body_size(const Mkpdu& m) {
  std::size_t n = kParameterSetHeaderSize + padded(kBasicFixedBodySize + m.basic.ckn.size());
  for (const auto& s : plan(m)) n += kParameterSetHeaderSize + padded(s.body_length);
  if (m.icv_indicator) n += kParameterSetHeaderSize;
  return n + kIcvSize;
}

void write_header(ByteWriter& w, std::uint8_t type, std::uint8_t octet2, std::uint8_t octet3_hi, std::size_t len) {
  w.u8(type);
  w.u8(octet2);
  w.u16(static_cast<std::uint16_t>((octet3_hi << 12) | (len & 0x0FFF)));
}

void write_sak_use_key(ByteWriter& w, const SakUseKey& k) {
  w.bytes(k.key_server_mi);
  w.u32(k.kn);
  w.u32(k.lowest_acceptable_pn);
}

void write_body(ByteWriter& w, const Mkpdu& m, const SetPlan& s, const UnknownParameterSet* unknown) {
  if (unknown != nullptr) {
    write_header(w, s.type, 0, 0, s.body_length);
    w.bytes(unknown->body);
    return;
  }
  switch (static_cast<ParameterSetType>(s.type)) {
    case ParameterSetType::kLivePeerList:
    case ParameterSetType::kPotentialPeerList: {
      const PeerList& l = s.type == 1 ? *m.live_peers : *m.potential_peers;
      write_header(w, s.type, l.key_server_ssci, 0, s.body_length);
      for (const auto& e : l.peers) {
        w.bytes(e.mi);
        w.u32(e.mn);
      }
      break;
    }
    case ParameterSetType::kSakUse: {
      const SakUse& u = *m.sak_use;
      const auto o2 = static_cast<std::uint8_t>((u.latest_an << 6) | (u.latest_tx ? 0x20 : 0) | (u.latest_rx ? 0x10 : 0) |
                                                (u.old_an << 2) | (u.old_tx ? 0x02 : 0) | (u.old_rx ? 0x01 : 0));
      const auto o3 = static_cast<std::uint8_t>((u.plain_tx ? 0x8 : 0) | (u.plain_rx ? 0x4 : 0) | (u.delay_protect ? 0x1 : 0));
      write_header(w, s.type, o2, o3, s.body_length);
      if (u.has_keys) {
        write_sak_use_key(w, u.latest);
        write_sak_use_key(w, u.old);
      }
      break;
    }
    case ParameterSetType::kDistributedSak: {
      const DistributedSak& d = *m.distributed_sak;
      write_header(w, s.type, static_cast<std::uint8_t>((d.distributed_an << 6) | (d.confidentiality_offset << 4)), 0,
                   s.body_length);
      if (d.has_key) {
        w.u32(d.kn);
        if (d.cipher_suite) w.u64(*d.cipher_suite);
        w.bytes(d.wrapped_sak);
      }
      break;
    }
    case ParameterSetType::kDistributedCak:
      write_header(w, s.type, 0, 0, s.body_length);
      w.bytes(m.distributed_cak->wrapped_cak);
      w.bytes(m.distributed_cak->ckn);
      break;
    case ParameterSetType::kKmd:
      write_header(w, s.type, 0, 0, s.body_length);
      w.bytes(*m.kmd);
      break;
    case ParameterSetType::kAnnouncement:
      write_header(w, s.type, 0, 0, s.body_length);
      for (const auto& t : m.announcement->tlvs) {
        w.u16(static_cast<std::uint16_t>((t.type << 9) | t.value.size()));
        w.bytes(t.value);
      }
      break;
    case ParameterSetType::kXpn:
      write_header(w, s.type, m.xpn->suspension_time, 0, s.body_length);
      w.u32(m.xpn->latest_lowest_acceptable_pn_high);
      w.u32(m.xpn->old_lowest_acceptable_pn_high);
      break;
    case ParameterSetType::kIcvIndicator:
      break;  // written by the caller
  }
}

// Writes everything but the ICV; returns the covered length.
Result<std::size_t, MkpduError> write_covered(const Mkpdu& m, MutableByteSpan out) {
  if (auto s = validate(m); !s) return Err(s.error());
  const std::size_t body = eapol_body_size(m);
  if (body > kMaxEapolBody) return Err(MkpduError::kSetTooLong);
  if (out.size() < kFrameHeaderSize + body) return Err(MkpduError::kBufferTooSmall);
  ByteWriter w(out);
  w.bytes(m.destination);
  w.bytes(m.source);
  w.u16(kEapolEtherType);
  w.u8(m.eapol_version);
  w.u8(kEapolPacketTypeMka);
  w.u16(static_cast<std::uint16_t>(body));
  const auto& b = m.basic;
  const std::size_t basic_len = kBasicFixedBodySize + b.ckn.size();
  w.u8(b.mka_version);
  w.u8(b.key_server_priority);
  const auto flags = static_cast<std::uint8_t>((b.key_server ? 0x8 : 0) | (b.macsec_desired ? 0x4 : 0) |
                                               static_cast<std::uint8_t>(b.macsec_capability));
  w.u16(static_cast<std::uint16_t>((flags << 12) | basic_len));
  w.u64(b.sci);
  w.bytes(b.actor_mi);
  w.u32(b.actor_mn);
  w.u32(kAlgorithmAgility);
  w.bytes(b.ckn);
  w.fill(0, padded(basic_len) - basic_len);
  std::size_t next_unknown = 0;
  for (const auto& s : plan(m)) {
    const UnknownParameterSet* u = is_known_type(s.type) ? nullptr : &m.unknown_sets[next_unknown++];
    write_body(w, m, s, u);
    w.fill(0, padded(s.body_length) - s.body_length);
  }
  if (m.icv_indicator) write_header(w, static_cast<std::uint8_t>(ParameterSetType::kIcvIndicator), 0, 0, kIcvSize);
  if (!w.ok() || w.size() != kFrameHeaderSize + body - kIcvSize) return Err(MkpduError::kBufferTooSmall);
  return w.size();
}

}  // namespace

std::size_t encoded_size(const Mkpdu& m) { return kFrameHeaderSize + eapol_body_size(m); }

Result<std::size_t, MkpduError> encode_mkpdu_with_icv(const Mkpdu& m, const Icv& icv, MutableByteSpan out) {
  auto covered = write_covered(m, out);
  if (!covered) return Err(covered.error());
  std::copy(icv.begin(), icv.end(), out.begin() + static_cast<std::ptrdiff_t>(*covered));
  return *covered + kIcvSize;
}

Result<std::size_t, MkpduError> encode_mkpdu(const Mkpdu& m, const SecretBytes& ick, MutableByteSpan out) {
  auto covered = write_covered(m, out);
  if (!covered) return Err(covered.error());
  auto icv = compute_icv(ick, ByteSpan(out.data(), *covered));
  if (!icv) return Err(MkpduError::kIcvComputation);
  std::copy(icv->begin(), icv->end(), out.begin() + static_cast<std::ptrdiff_t>(*covered));
  return *covered + kIcvSize;
}

Result<std::vector<std::uint8_t>, MkpduError> encode_mkpdu(const Mkpdu& m, const SecretBytes& ick) {
  std::vector<std::uint8_t> out(encoded_size(m));
  auto n = encode_mkpdu(m, ick, out);
  if (!n) return Err(n.error());
  out.resize(*n);
  return out;
}

}  // namespace layersec::mka
