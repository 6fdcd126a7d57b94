// SV key distribution centre: message codec, KDC and IED client (kdc.h).
#include "layersec/sv/kdc.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "layersec/crypto/aead.h"
#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mac.h"
#include "layersec/crypto/mlkem.h"

namespace layersec::sv::kdc {
namespace {

constexpr std::uint8_t kMagic[4] = {'S', 'V', 'K', 'D'};
constexpr std::size_t kHeaderSize = 7;
constexpr std::string_view kLabelIdentity = "layersec-sv-kdc v1 identity";
constexpr std::string_view kLabelRequest = "layersec-sv-kdc v1 request";
constexpr std::string_view kLabelSession = "layersec-sv-kdc v1 session";
constexpr std::string_view kLabelWrap = "layersec-sv-kdc v1 wrap";

ByteSpan as_bytes(std::string_view s) { return ByteSpan(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }
std::string_view as_string(ByteSpan b) { return std::string_view(reinterpret_cast<const char*>(b.data()), b.size()); }

std::optional<crypto::MlKemParameterSet> mlkem_set(kex::KemScheme s) {
  switch (s) {
    case kex::KemScheme::kMlKem512: return crypto::MlKemParameterSet::kMlKem512;
    case kex::KemScheme::kMlKem768: return crypto::MlKemParameterSet::kMlKem768;
    case kex::KemScheme::kMlKem1024: return crypto::MlKemParameterSet::kMlKem1024;
    default: return std::nullopt;
  }
}
std::size_t ek_size(kex::KemScheme s) { return crypto::mlkem_params(*mlkem_set(s)).encaps_key_size; }
std::size_t ct_size(kex::KemScheme s) { return crypto::mlkem_params(*mlkem_set(s)).ciphertext_size; }

bool hmac(ByteSpan key, std::span<const ByteSpan> parts, MutableByteSpan out) {
  auto m = crypto::make_mac(crypto::MacAlgorithm::kHmacSha256, key);
  if (!m) return false;
  return m.value()->compute(parts, out).ok();
}

bool sha256(std::span<const ByteSpan> parts, MutableByteSpan out) { return crypto::sha256(parts, out).ok(); }

// HKDF-SHA256 over concatenated IKM and info parts; the concatenation lives
// in zeroizing buffers.
bool hkdf(ByteSpan salt, std::span<const ByteSpan> ikm_parts, std::span<const ByteSpan> info_parts,
          MutableByteSpan out) {
  std::size_t n = 0, m = 0;
  for (auto p : ikm_parts) n += p.size();
  for (auto p : info_parts) m += p.size();
  SecretBytes ikm(n);
  SecretBytes info(m);
  std::size_t o = 0;
  for (auto p : ikm_parts) {
    if (!p.empty()) std::memcpy(ikm.data() + o, p.data(), p.size());
    o += p.size();
  }
  o = 0;
  for (auto p : info_parts) {
    if (!p.empty()) std::memcpy(info.data() + o, p.data(), p.size());
    o += p.size();
  }
  return crypto::hkdf_sha256(salt, ikm.span(), info.span(), out).ok();
}

void write_header(ByteWriter& w, MessageType t, kex::KemScheme kem) {
  w.bytes(ByteSpan(kMagic, 4));
  w.u8(kVersion);
  w.u8(static_cast<std::uint8_t>(t));
  w.u8(wire_of_kem(kem));
}

Status<KdcError> read_header(ByteReader& r, MessageType want, kex::KemScheme& kem) {
  const ByteSpan magic = r.bytes(4);
  const std::uint8_t version = r.u8();
  const std::uint8_t type = r.u8();
  const std::uint8_t set = r.u8();
  if (!r.ok() || !std::equal(magic.begin(), magic.end(), kMagic) || version != kVersion) {
    return Err(KdcError::kMalformed);
  }
  if (type != static_cast<std::uint8_t>(want)) return Err(KdcError::kWrongType);
  auto k = kem_of_wire(set);
  if (!k) return Err(KdcError::kMalformed);
  kem = *k;
  return {};
}

// u8-length-prefixed string of 1..max bytes.
bool read_name(ByteReader& r, std::size_t max, ByteSpan& out) {
  const std::uint8_t n = r.u8();
  if (!r.ok() || n == 0 || n > max) return false;
  out = r.bytes(n);
  return r.ok();
}
// u16-length-prefixed bytes of exactly `size`.
bool read_exact16(ByteReader& r, std::size_t size, ByteSpan& out) {
  const std::uint16_t n = r.u16();
  if (!r.ok() || n != size) return false;
  out = r.bytes(n);
  return r.ok();
}

template <class F>
std::vector<std::uint8_t> build(std::size_t size, F&& f) {
  std::vector<std::uint8_t> out(size);
  ByteWriter w(out);
  f(w);
  out.resize(w.ok() ? w.size() : 0);
  return out;
}

SecurityConfig security_of(Scheme scheme, std::uint16_t tag_bits, std::uint16_t appid) {
  SecurityConfig c;
  c.scheme = scheme;
  c.tag_bits = tag_bits;
  c.sender_id = appid;
  return c;
}

std::uint32_t seconds_of(TimePoint t) {
  const std::int64_t s = t.ns() / 1'000'000'000;
  return s < 0 ? 0 : static_cast<std::uint32_t>(std::min<std::int64_t>(s, UINT32_MAX));
}

}  // namespace

std::string_view to_string(Role r) { return r == Role::kPublisher ? "publisher" : "subscriber"; }

std::string_view to_string(KdcError e) {
  switch (e) {
    case KdcError::kMalformed: return "malformed";
    case KdcError::kWrongType: return "wrong-type";
    case KdcError::kWrongKem: return "wrong-kem";
    case KdcError::kUnknownIed: return "unknown-ied";
    case KdcError::kStale: return "stale";
    case KdcError::kReplay: return "replay";
    case KdcError::kBadTag: return "bad-tag";
    case KdcError::kWrongRecipient: return "wrong-recipient";
    case KdcError::kWrongSession: return "wrong-session";
    case KdcError::kNoSession: return "no-session";
    case KdcError::kNoPendingRequest: return "no-pending-request";
    case KdcError::kUnknownStream: return "unknown-stream";
    case KdcError::kNotMember: return "not-member";
    case KdcError::kAlreadyMember: return "already-member";
    case KdcError::kBadConfig: return "bad-config";
    case KdcError::kExhausted: return "exhausted";
    case KdcError::kCrypto: return "crypto";
  }
  return "unknown";
}

std::optional<kex::KemScheme> kem_of_wire(std::uint8_t v) {
  switch (v) {
    case 1: return kex::KemScheme::kMlKem512;
    case 2: return kex::KemScheme::kMlKem768;
    case 3: return kex::KemScheme::kMlKem1024;
    default: return std::nullopt;
  }
}

std::uint8_t wire_of_kem(kex::KemScheme s) {
  switch (s) {
    case kex::KemScheme::kMlKem512: return 1;
    case kex::KemScheme::kMlKem768: return 2;
    case kex::KemScheme::kMlKem1024: return 3;
    default: return 0;
  }
}

// ---- codec ------------------------------------------------------------------

Result<MessageType, KdcError> peek_type(ByteSpan msg) {
  ByteReader r(msg);
  const ByteSpan magic = r.bytes(4);
  const std::uint8_t version = r.u8();
  const std::uint8_t type = r.u8();
  if (!r.ok() || !std::equal(magic.begin(), magic.end(), kMagic) || version != kVersion || type < 1 || type > 3) {
    return Err(KdcError::kMalformed);
  }
  return static_cast<MessageType>(type);
}

Result<AuthRequest, KdcError> parse_auth_request(ByteSpan msg) {
  ByteReader r(msg);
  AuthRequest m;
  if (auto h = read_header(r, MessageType::kAuthRequest, m.kem); !h) return Err(h.error());
  if (!read_name(r, kMaxIdSize, m.id)) return Err(KdcError::kMalformed);
  m.timestamp_ns = r.u64();
  m.nonce = r.bytes(kNonceSize);
  if (!r.ok() || !read_exact16(r, ek_size(m.kem), m.encaps_key) || !read_exact16(r, ct_size(m.kem), m.kem_ciphertext)) {
    return Err(KdcError::kMalformed);
  }
  m.signed_length = r.position();
  m.tag = r.bytes(kTagSize);
  if (!r.finish()) return Err(KdcError::kMalformed);
  return m;
}

Result<AuthResponse, KdcError> parse_auth_response(ByteSpan msg) {
  ByteReader r(msg);
  AuthResponse m;
  if (auto h = read_header(r, MessageType::kAuthResponse, m.kem); !h) return Err(h.error());
  if (!read_name(r, kMaxIdSize, m.id)) return Err(KdcError::kMalformed);
  m.session_id = r.u32();
  m.nonce_ied = r.bytes(kNonceSize);
  m.nonce_kdc = r.bytes(kNonceSize);
  m.signed_length = r.position();
  m.tag = r.bytes(kTagSize);
  if (!r.finish() || m.session_id == 0) return Err(KdcError::kMalformed);
  return m;
}

Result<KeyDistribution, KdcError> parse_key_distribution(ByteSpan msg) {
  ByteReader r(msg);
  KeyDistribution m;
  if (auto h = read_header(r, MessageType::kKeyDistribution, m.kem); !h) return Err(h.error());
  if (!read_name(r, kMaxIdSize, m.recipient)) return Err(KdcError::kMalformed);
  m.session_id = r.u32();
  m.sequence = r.u64();
  const std::uint8_t role = r.u8();
  m.appid = r.u16();
  if (!r.ok() || (role != 1 && role != 2) || m.session_id == 0 || m.sequence == 0) return Err(KdcError::kMalformed);
  m.role = static_cast<Role>(role);
  if (!read_name(r, kMaxSvIdSize, m.sv_id)) return Err(KdcError::kMalformed);
  m.key_id = r.u32();
  const std::uint8_t scheme = r.u8();
  m.tag_bits = r.u16();
  m.valid_from_ns = r.u64();
  m.next_change_ns = r.u64();
  m.nonce = r.bytes(kNonceSize);
  if (!r.ok() || m.key_id == 0 || scheme < static_cast<std::uint8_t>(Scheme::kHmacSha256) ||
      scheme > static_cast<std::uint8_t>(Scheme::kChaskey12Selective)) {
    return Err(KdcError::kMalformed);
  }
  m.scheme = static_cast<Scheme>(scheme);
  if (tag_bytes_for(security_of(m.scheme, m.tag_bits, 0)) == 0) return Err(KdcError::kMalformed);
  if (m.next_change_ns != 0 && m.next_change_ns <= m.valid_from_ns) return Err(KdcError::kMalformed);
  if (!read_exact16(r, ct_size(m.kem), m.kem_ciphertext)) return Err(KdcError::kMalformed);
  const std::uint8_t key_len = r.u8();
  if (!r.ok() || key_len != key_bytes_for(m.scheme)) return Err(KdcError::kMalformed);
  m.aad_length = r.position();
  m.wrapped_key = r.bytes(key_len);
  m.aead_tag = r.bytes(kAeadTagSize);
  if (!r.finish()) return Err(KdcError::kMalformed);
  return m;
}

std::vector<std::uint8_t> encode(const AuthRequest& m) {
  const std::size_t n = kHeaderSize + 1 + m.id.size() + 8 + m.nonce.size() + 2 + m.encaps_key.size() + 2 +
                        m.kem_ciphertext.size() + m.tag.size();
  return build(n, [&](ByteWriter& w) {
    write_header(w, MessageType::kAuthRequest, m.kem);
    w.u8(static_cast<std::uint8_t>(m.id.size()));
    w.bytes(m.id);
    w.u64(m.timestamp_ns);
    w.bytes(m.nonce);
    w.u16(static_cast<std::uint16_t>(m.encaps_key.size()));
    w.bytes(m.encaps_key);
    w.u16(static_cast<std::uint16_t>(m.kem_ciphertext.size()));
    w.bytes(m.kem_ciphertext);
    w.bytes(m.tag);
  });
}

std::vector<std::uint8_t> encode(const AuthResponse& m) {
  const std::size_t n = kHeaderSize + 1 + m.id.size() + 4 + m.nonce_ied.size() + m.nonce_kdc.size() + m.tag.size();
  return build(n, [&](ByteWriter& w) {
    write_header(w, MessageType::kAuthResponse, m.kem);
    w.u8(static_cast<std::uint8_t>(m.id.size()));
    w.bytes(m.id);
    w.u32(m.session_id);
    w.bytes(m.nonce_ied);
    w.bytes(m.nonce_kdc);
    w.bytes(m.tag);
  });
}

std::vector<std::uint8_t> encode(const KeyDistribution& m) {
  const std::size_t n = kHeaderSize + 1 + m.recipient.size() + 4 + 8 + 1 + 2 + 1 + m.sv_id.size() + 4 + 1 + 2 + 8 +
                        8 + m.nonce.size() + 2 + m.kem_ciphertext.size() + 1 + m.wrapped_key.size() +
                        m.aead_tag.size();
  return build(n, [&](ByteWriter& w) {
    write_header(w, MessageType::kKeyDistribution, m.kem);
    w.u8(static_cast<std::uint8_t>(m.recipient.size()));
    w.bytes(m.recipient);
    w.u32(m.session_id);
    w.u64(m.sequence);
    w.u8(static_cast<std::uint8_t>(m.role));
    w.u16(m.appid);
    w.u8(static_cast<std::uint8_t>(m.sv_id.size()));
    w.bytes(m.sv_id);
    w.u32(m.key_id);
    w.u8(static_cast<std::uint8_t>(m.scheme));
    w.u16(m.tag_bits);
    w.u64(m.valid_from_ns);
    w.u64(m.next_change_ns);
    w.bytes(m.nonce);
    w.u16(static_cast<std::uint16_t>(m.kem_ciphertext.size()));
    w.bytes(m.kem_ciphertext);
    w.u8(static_cast<std::uint8_t>(m.wrapped_key.size()));
    w.bytes(m.wrapped_key);
    w.bytes(m.aead_tag);
  });
}

// ---- key derivations shared by both sides ----------------------------------

namespace {

// K_req = HKDF(salt N_I, ss ‖ A_ID, label ‖ len ‖ ID)
bool request_key(ByteSpan nonce, ByteSpan ss, ByteSpan identity_value, ByteSpan id, MutableByteSpan out) {
  const std::uint8_t len = static_cast<std::uint8_t>(id.size());
  const ByteSpan ikm[] = {ss, identity_value};
  const ByteSpan info[] = {as_bytes(kLabelRequest), ByteSpan(&len, 1), id};
  return hkdf(nonce, ikm, info, out);
}

// SK = HKDF(salt N_I ‖ N_K, ss ‖ A_ID, label ‖ len ‖ ID ‖ SHA-256(request))
bool session_key(ByteSpan nonce_i, ByteSpan nonce_k, ByteSpan ss, ByteSpan identity_value, ByteSpan id,
                 ByteSpan request_hash, MutableByteSpan out) {
  std::array<std::uint8_t, 2 * kNonceSize> salt{};
  std::copy(nonce_i.begin(), nonce_i.end(), salt.begin());
  std::copy(nonce_k.begin(), nonce_k.end(), salt.begin() + kNonceSize);
  const std::uint8_t len = static_cast<std::uint8_t>(id.size());
  const ByteSpan ikm[] = {ss, identity_value};
  const ByteSpan info[] = {as_bytes(kLabelSession), ByteSpan(&len, 1), id, request_hash};
  return hkdf(salt, ikm, info, out);
}

// KEK (32) ‖ IV (12) = HKDF(salt N_D, ss_D ‖ SK, label ‖ SHA-256(AAD))
bool wrap_key(ByteSpan nonce, ByteSpan ss, ByteSpan sk, ByteSpan aad, MutableByteSpan out) {
  std::array<std::uint8_t, 32> h{};
  const ByteSpan parts[] = {aad};
  if (!sha256(parts, h)) return false;
  const ByteSpan ikm[] = {ss, sk};
  const ByteSpan info[] = {as_bytes(kLabelWrap), h};
  return hkdf(nonce, ikm, info, out);
}

}  // namespace

InitialKeys initial_keys(std::vector<GroupKeyUpdate> updates, TimePoint now) {
  InitialKeys k;
  for (auto& u : updates) {
    auto& slot = u.valid_from <= now ? k.current : k.next;
    if (!slot || slot->key.key_id < u.key.key_id) slot = std::move(u);
  }
  if (!k.current && k.next) std::swap(k.current, k.next);
  return k;
}

// ---- KDC --------------------------------------------------------------------

using detail::KeySlot;

struct Kdc::Session {
  std::string id;
  std::uint32_t session_id = 0;
  SecretBytes key;                       // SK
  std::vector<std::uint8_t> encaps_key;  // ek_I
  std::uint64_t sequence = 0;
};

struct detail::KeySlot {
  std::uint32_t key_id = 0;
  SecretBytes key;
  TimePoint valid_from;
  TimePoint next_change = TimePoint::max();
};

struct Kdc::Stream {
  StreamGroupConfig config;
  std::map<std::string, Role, std::less<>> members;
  KeySlot current;
  std::optional<KeySlot> previous;  // still in use until current.valid_from
  // The previous key is held by a member removed since (the rekey that made
  // `current` was a removal): it is never handed to a publisher again.
  bool previous_revoked = false;
};

Kdc::~Kdc() = default;

KdcError Kdc::reject(KdcError e) {
  ++counters_.rejected[static_cast<std::size_t>(e)];
  return e;
}

Result<std::unique_ptr<Kdc>, KdcError> Kdc::create(const KdcConfig& config) {
  if (!mlkem_set(config.kem)) return Err(KdcError::kBadConfig);
  auto kem = kex::make_kem(config.kem);
  auto keys = kem->generate();
  if (!keys) return Err(KdcError::kCrypto);
  return create(config, std::move(keys).value(), crypto::random_key(32));
}

Result<std::unique_ptr<Kdc>, KdcError> Kdc::create(const KdcConfig& config, kex::KemKeyPair keys,
                                                   SecretBytes master_secret) {
  if (!mlkem_set(config.kem) || master_secret.size() < 32 || config.key_lifetime <= Duration::zero() ||
      config.key_change_lead < Duration::zero() || config.key_change_lead >= config.key_lifetime) {
    return Err(KdcError::kBadConfig);
  }
  std::unique_ptr<Kdc> k(new Kdc());
  k->config_ = config;
  k->kem_ = kex::make_kem(config.kem);
  if (keys.public_key.size() != k->kem_->public_key_size()) return Err(KdcError::kBadConfig);
  auto priv = k->kem_->load_private_key(keys.private_key.span());
  if (!priv) return Err(KdcError::kBadConfig);
  k->private_key_ = std::move(priv).value();
  k->keys_ = std::move(keys);
  k->master_secret_ = std::move(master_secret);
  return k;
}

Result<SecretBytes, KdcError> Kdc::identity_value(std::string_view id) const {
  if (id.empty() || id.size() > kMaxIdSize) return Err(KdcError::kBadConfig);
  const std::uint8_t len = static_cast<std::uint8_t>(id.size());
  const ByteSpan parts[] = {as_bytes(kLabelIdentity), ByteSpan(&len, 1), as_bytes(id)};
  SecretBytes a(32);
  if (!hmac(master_secret_.span(), parts, a.mutable_span())) return Err(KdcError::kCrypto);
  return a;
}

Result<SecretBytes, KdcError> Kdc::register_ied(std::string_view id) {
  auto a = identity_value(id);
  if (!a) return Err(a.error());
  registered_.try_emplace(std::string(id), 0);
  return a;
}

void Kdc::deregister_ied(std::string_view id) {
  if (auto it = registered_.find(id); it != registered_.end()) registered_.erase(it);
  if (auto it = sessions_.find(id); it != sessions_.end()) sessions_.erase(it);
}

bool Kdc::has_session(std::string_view id) const { return sessions_.find(id) != sessions_.end(); }

std::uint32_t Kdc::current_key_id(std::size_t stream) const {
  return stream < streams_.size() ? streams_[stream]->current.key_id : 0;
}

Result<std::size_t, KdcError> Kdc::add_stream(const StreamGroupConfig& config, TimePoint now) {
  if (config.security.scheme == Scheme::kNone || tag_bytes_for(config.security) == 0 || config.sv_id.empty() ||
      config.sv_id.size() > kMaxSvIdSize || config.security.tag_bits > 0xFFFF) {
    return Err(KdcError::kBadConfig);
  }
  for (const auto& s : streams_) {
    if (s->config.appid == config.appid && s->config.sv_id == config.sv_id) return Err(KdcError::kBadConfig);
  }
  auto st = std::make_unique<Stream>();
  st->config = config;
  if (registered_.find(config.publisher) == registered_.end()) return Err(KdcError::kUnknownIed);
  st->members.emplace(config.publisher, Role::kPublisher);
  for (const auto& s : config.subscribers) {
    if (registered_.find(s) == registered_.end()) return Err(KdcError::kUnknownIed);
    if (!st->members.emplace(s, Role::kSubscriber).second) return Err(KdcError::kAlreadyMember);
  }
  st->current.key_id = 1;
  st->current.key = crypto::random_key(key_bytes_for(config.security.scheme));
  st->current.valid_from = now;
  st->current.next_change = now + config_.key_lifetime;
  streams_.push_back(std::move(st));
  return streams_.size() - 1;
}

namespace {

// Builds one sealed KeyDistribution for `slot` to a session.
Result<std::vector<std::uint8_t>, KdcError> seal_distribution(kex::Kem& kem, const std::string& recipient,
                                                              std::uint32_t session_id, std::uint64_t sequence,
                                                              ByteSpan session_key, ByteSpan encaps_key,
                                                              const StreamGroupConfig& cfg, Role role,
                                                              const KeySlot& slot) {
  auto enc = kem.encapsulate(encaps_key);
  if (!enc) return Err(KdcError::kCrypto);
  std::array<std::uint8_t, kNonceSize> nonce{};
  if (!crypto::random_bytes(nonce).ok()) return Err(KdcError::kCrypto);
  std::vector<std::uint8_t> zeros(slot.key.size() + kAeadTagSize, 0);
  KeyDistribution m;
  m.kem = kem.scheme();
  m.recipient = as_bytes(recipient);
  m.session_id = session_id;
  m.sequence = sequence;
  m.role = role;
  m.appid = cfg.appid;
  m.sv_id = as_bytes(cfg.sv_id);
  m.key_id = slot.key_id;
  m.scheme = cfg.security.scheme;
  m.tag_bits = static_cast<std::uint16_t>(cfg.security.tag_bits);
  m.valid_from_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(slot.valid_from.ns(), 0));
  m.next_change_ns = slot.next_change == TimePoint::max() ? 0 : static_cast<std::uint64_t>(slot.next_change.ns());
  m.nonce = nonce;
  m.kem_ciphertext = enc->ciphertext;
  m.wrapped_key = ByteSpan(zeros.data(), slot.key.size());
  m.aead_tag = ByteSpan(zeros.data() + slot.key.size(), kAeadTagSize);
  std::vector<std::uint8_t> out = encode(m);
  if (out.empty()) return Err(KdcError::kMalformed);
  const std::size_t aad_len = out.size() - slot.key.size() - kAeadTagSize;
  const ByteSpan aad(out.data(), aad_len);
  SecretBytes kek_iv(44);
  if (!wrap_key(nonce, enc->shared_secret.span(), session_key, aad, kek_iv.mutable_span())) {
    return Err(KdcError::kCrypto);
  }
  auto gcm = crypto::AesGcm::create(kek_iv.span().first(32));
  if (!gcm) return Err(KdcError::kCrypto);
  MutableByteSpan data(out.data() + aad_len, slot.key.size());
  std::memcpy(data.data(), slot.key.data(), slot.key.size());
  if (!gcm->seal(kek_iv.span().subspan(32, 12), aad, data, MutableByteSpan(out.data() + aad_len + slot.key.size(),
                                                                           kAeadTagSize))
           .ok()) {
    secure_zero(out.data(), out.size());
    return Err(KdcError::kCrypto);
  }
  return out;
}

}  // namespace

// Seals `slot` for every authenticated member. Nothing changes unless every
// message was built (a backend failure leaves sequences and keys as they were).
Result<std::vector<Outgoing>, KdcError> Kdc::distribute_all(Stream& st, const KeySlot& slot) {
  std::vector<Outgoing> out;
  std::vector<Session*> sent_to;
  for (const auto& [id, role] : st.members) {
    auto it = sessions_.find(id);
    if (it == sessions_.end()) continue;  // gets the key when it authenticates
    Session& s = *it->second;
    if (s.sequence == UINT64_MAX) return Err(KdcError::kExhausted);
    auto msg = seal_distribution(*kem_, id, s.session_id, s.sequence + 1, s.key.span(), s.encaps_key, st.config,
                                 role, slot);
    if (!msg) return Err(msg.error());
    out.push_back(Outgoing{id, std::move(msg).value()});
    sent_to.push_back(&s);
  }
  for (Session* s : sent_to) ++s->sequence;
  counters_.distributions += out.size();
  return out;
}

Result<std::vector<Outgoing>, KdcError> Kdc::new_key(Stream& st, TimePoint valid_from, bool revokes_current) {
  if (st.current.key_id == UINT32_MAX) return Err(KdcError::kExhausted);
  KeySlot next;
  next.key_id = st.current.key_id + 1;
  next.key = crypto::random_key(key_bytes_for(st.config.security.scheme));
  next.valid_from = valid_from;
  next.next_change = valid_from + config_.key_lifetime;
  auto out = distribute_all(st, next);
  if (!out) return out;
  // Commit: the current key now ends where its successor starts.
  st.current.next_change = valid_from;
  st.previous = std::move(st.current);
  st.current = std::move(next);
  // Whether the key that just became `previous` is held by a member this
  // rekey removed. (A later rekey inside the lead makes the removal's key
  // `previous`, which the removed member never had; the revoked key then
  // stays in use only at a running publisher until its scheduled switch,
  // Publisher keeps every scheduled key.)
  st.previous_revoked = revokes_current;
  ++counters_.rekeys;
  return out;
}

Result<std::vector<Outgoing>, KdcError> Kdc::rekey(std::size_t stream, TimePoint now) {
  if (stream >= streams_.size()) return Err(reject(KdcError::kUnknownStream));
  return new_key(*streams_[stream], now + config_.key_change_lead, false);
}

Result<std::vector<Outgoing>, KdcError> Kdc::add_member(std::size_t stream, std::string_view id, Role role,
                                                        TimePoint now) {
  if (stream >= streams_.size()) return Err(reject(KdcError::kUnknownStream));
  if (registered_.find(id) == registered_.end()) return Err(reject(KdcError::kUnknownIed));
  Stream& st = *streams_[stream];
  if (role == Role::kPublisher) return Err(reject(KdcError::kBadConfig));  // one publisher per stream
  if (!st.members.emplace(std::string(id), role).second) return Err(reject(KdcError::kAlreadyMember));
  return new_key(st, now + config_.key_change_lead, false);
}

Result<std::vector<Outgoing>, KdcError> Kdc::remove_member(std::size_t stream, std::string_view id, TimePoint now) {
  if (stream >= streams_.size()) return Err(reject(KdcError::kUnknownStream));
  Stream& st = *streams_[stream];
  auto it = st.members.find(id);
  if (it == st.members.end()) return Err(reject(KdcError::kNotMember));
  if (it->second == Role::kPublisher) return Err(reject(KdcError::kBadConfig));
  st.members.erase(it);
  return new_key(st, now + config_.key_change_lead, true);
}

TimePoint Kdc::next_deadline() const {
  TimePoint t = TimePoint::max();
  for (const auto& s : streams_) {
    if (s->current.next_change != TimePoint::max()) t = std::min(t, s->current.next_change - config_.key_change_lead);
  }
  return t;
}

std::vector<Outgoing> Kdc::poll(TimePoint now) {
  std::vector<Outgoing> out;
  for (auto& s : streams_) {
    if (s->current.next_change == TimePoint::max() || now < s->current.next_change - config_.key_change_lead) continue;
    auto msgs = new_key(*s, s->current.next_change, false);
    if (!msgs) {
      reject(msgs.error());
      continue;
    }
    for (auto& m : *msgs) out.push_back(std::move(m));
  }
  return out;
}

Result<Kdc::AuthResult, KdcError> Kdc::on_auth_request(ByteSpan msg, TimePoint now) {
  ++counters_.requests;
  auto parsed = parse_auth_request(msg);
  if (!parsed) return Err(reject(parsed.error()));
  const AuthRequest& m = parsed.value();
  if (m.kem != config_.kem) return Err(reject(KdcError::kWrongKem));
  const std::string_view id = as_string(m.id);
  auto reg = registered_.find(id);
  if (reg == registered_.end()) return Err(reject(KdcError::kUnknownIed));
  const std::int64_t t = static_cast<std::int64_t>(std::min<std::uint64_t>(m.timestamp_ns, INT64_MAX));
  const std::int64_t skew = config_.max_clock_skew.ns();
  if (t < now.ns() - skew || t > now.ns() + skew) return Err(reject(KdcError::kStale));
  if (m.timestamp_ns <= reg->second) return Err(reject(KdcError::kReplay));
  crypto::MlKem check(*mlkem_set(config_.kem));
  if (!check.check_encaps_key(m.encaps_key).ok()) return Err(reject(KdcError::kMalformed));

  auto ss = kem_->decapsulate(*private_key_, m.kem_ciphertext);
  if (!ss) return Err(reject(KdcError::kCrypto));
  auto a = identity_value(id);
  if (!a) return Err(reject(a.error()));
  SecretBytes k_req(32);
  if (!request_key(m.nonce, ss->span(), a->span(), m.id, k_req.mutable_span())) return Err(reject(KdcError::kCrypto));
  auto mac = crypto::make_mac(crypto::MacAlgorithm::kHmacSha256, k_req.span());
  if (!mac) return Err(reject(KdcError::kCrypto));
  const ByteSpan signed_part[] = {msg.first(m.signed_length)};
  if (!mac.value()->verify_bits(signed_part, m.tag, 8 * kTagSize)) return Err(reject(KdcError::kBadTag));

  // Authenticated: derive SK and confirm.
  std::array<std::uint8_t, 32> req_hash{};
  const ByteSpan whole[] = {msg};
  std::array<std::uint8_t, kNonceSize> nonce_k{};
  if (!sha256(whole, req_hash) || !crypto::random_bytes(nonce_k).ok()) return Err(reject(KdcError::kCrypto));
  auto session = std::make_unique<Session>();
  session->id = std::string(id);
  session->key = SecretBytes(32);
  if (!session_key(m.nonce, nonce_k, ss->span(), a->span(), m.id, req_hash, session->key.mutable_span())) {
    return Err(reject(KdcError::kCrypto));
  }
  if (next_session_id_ == 0) return Err(reject(KdcError::kExhausted));
  session->session_id = next_session_id_;
  session->encaps_key.assign(m.encaps_key.begin(), m.encaps_key.end());

  std::array<std::uint8_t, kTagSize> zero_tag{};
  AuthResponse r;
  r.kem = config_.kem;
  r.id = m.id;
  r.session_id = session->session_id;
  r.nonce_ied = m.nonce;
  r.nonce_kdc = nonce_k;
  r.tag = zero_tag;
  AuthResult result;
  result.response = encode(r);
  const std::size_t signed_len = result.response.size() - kTagSize;
  auto confirm = crypto::make_mac(crypto::MacAlgorithm::kHmacSha256, session->key.span());
  if (!confirm) return Err(reject(KdcError::kCrypto));
  if (!confirm.value()
           ->compute(ByteSpan(result.response.data(), signed_len),
                     MutableByteSpan(result.response.data() + signed_len, kTagSize))
           .ok()) {
    return Err(reject(KdcError::kCrypto));
  }

  // Current keys of the IED's streams, and the predecessor while still in
  // use (a subscriber needs it to verify a running publisher until the
  // switch). A publisher is not given a predecessor revoked by a removal:
  // it starts with the new key at once (every member that stays already
  // holds it as the announced next key), so nothing it sends is readable or
  // forgeable by the member that left.
  Session& s = *session;
  for (auto& st : streams_) {
    auto mem = st->members.find(id);
    if (mem == st->members.end()) continue;
    std::vector<const KeySlot*> slots;
    const bool revoked_for_this = st->previous_revoked && mem->second == Role::kPublisher;
    if (st->previous && st->current.valid_from > now && !revoked_for_this) slots.push_back(&*st->previous);
    slots.push_back(&st->current);
    for (const KeySlot* slot : slots) {
      auto d = seal_distribution(*kem_, s.id, s.session_id, s.sequence + 1, s.key.span(), s.encaps_key, st->config,
                                 mem->second, *slot);
      if (!d) return Err(reject(d.error()));
      ++s.sequence;
      result.distributions.push_back(Outgoing{s.id, std::move(d).value()});
    }
  }
  // Commit.
  reg->second = m.timestamp_ns;
  ++next_session_id_;
  sessions_[std::string(id)] = std::move(session);
  ++counters_.sessions;
  counters_.distributions += result.distributions.size();
  return result;
}

// ---- IED --------------------------------------------------------------------

IedClient::~IedClient() = default;

KdcError IedClient::reject(KdcError e) {
  ++counters_.rejected[static_cast<std::size_t>(e)];
  return e;
}

Result<std::unique_ptr<IedClient>, KdcError> IedClient::create(std::string id, kex::KemScheme kem,
                                                               SecretBytes identity_value,
                                                               std::vector<std::uint8_t> kdc_public_key) {
  if (!mlkem_set(kem) || id.empty() || id.size() > kMaxIdSize || identity_value.size() != 32 ||
      kdc_public_key.size() != ek_size(kem)) {
    return Err(KdcError::kBadConfig);
  }
  std::unique_ptr<IedClient> c(new IedClient());
  c->id_ = std::move(id);
  c->kem_ = kex::make_kem(kem);
  c->identity_value_ = std::move(identity_value);
  c->kdc_public_key_ = std::move(kdc_public_key);
  auto keys = c->kem_->generate();
  if (!keys) return Err(KdcError::kCrypto);
  c->own_keys_ = std::move(keys).value();
  auto priv = c->kem_->load_private_key(c->own_keys_.private_key.span());
  if (!priv) return Err(KdcError::kCrypto);
  c->own_private_ = std::move(priv).value();
  return c;
}

Result<std::vector<std::uint8_t>, KdcError> IedClient::start(TimePoint now) {
  auto enc = kem_->encapsulate(kdc_public_key_);
  if (!enc) return Err(reject(KdcError::kCrypto));
  std::array<std::uint8_t, kNonceSize> nonce{};
  if (!crypto::random_bytes(nonce).ok()) return Err(reject(KdcError::kCrypto));
  std::array<std::uint8_t, kTagSize> zero_tag{};
  AuthRequest m;
  m.kem = kem_->scheme();
  m.id = as_bytes(id_);
  m.timestamp_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(now.ns(), 0));
  m.nonce = nonce;
  m.encaps_key = own_keys_.public_key;
  m.kem_ciphertext = enc->ciphertext;
  m.tag = zero_tag;
  std::vector<std::uint8_t> out = encode(m);
  if (out.empty()) return Err(reject(KdcError::kMalformed));
  const std::size_t signed_len = out.size() - kTagSize;
  SecretBytes k_req(32);
  if (!request_key(nonce, enc->shared_secret.span(), identity_value_.span(), m.id, k_req.mutable_span())) {
    return Err(reject(KdcError::kCrypto));
  }
  const ByteSpan signed_part[] = {ByteSpan(out.data(), signed_len)};
  if (!hmac(k_req.span(), signed_part, MutableByteSpan(out.data() + signed_len, kTagSize))) {
    return Err(reject(KdcError::kCrypto));
  }
  const ByteSpan whole[] = {ByteSpan(out)};
  if (!sha256(whole, pending_hash_)) return Err(reject(KdcError::kCrypto));
  pending_nonce_ = nonce;
  pending_ss_ = std::move(enc->shared_secret);
  pending_ = true;
  return out;
}

Status<KdcError> IedClient::on_auth_response(ByteSpan msg, TimePoint now) {
  (void)now;
  auto parsed = parse_auth_response(msg);
  if (!parsed) return Err(reject(parsed.error()));
  const AuthResponse& m = parsed.value();
  if (m.kem != kem_->scheme()) return Err(reject(KdcError::kWrongKem));
  if (as_string(m.id) != id_) return Err(reject(KdcError::kWrongRecipient));
  if (!pending_ || !crypto::ct_equal(m.nonce_ied, pending_nonce_)) return Err(reject(KdcError::kNoPendingRequest));
  SecretBytes sk(32);
  if (!session_key(m.nonce_ied, m.nonce_kdc, pending_ss_.span(), identity_value_.span(), m.id, pending_hash_,
                   sk.mutable_span())) {
    return Err(reject(KdcError::kCrypto));
  }
  auto mac = crypto::make_mac(crypto::MacAlgorithm::kHmacSha256, sk.span());
  if (!mac) return Err(reject(KdcError::kCrypto));
  const ByteSpan signed_part[] = {msg.first(m.signed_length)};
  if (!mac.value()->verify_bits(signed_part, m.tag, 8 * kTagSize)) return Err(reject(KdcError::kBadTag));
  session_key_ = std::move(sk);
  session_id_ = m.session_id;
  last_sequence_ = 0;
  pending_ = false;
  pending_ss_.clear();
  ++counters_.sessions;
  return {};
}

Result<GroupKeyUpdate, KdcError> IedClient::on_key_distribution(ByteSpan msg, TimePoint now) {
  auto parsed = parse_key_distribution(msg);
  if (!parsed) return Err(reject(parsed.error()));
  const KeyDistribution& m = parsed.value();
  if (m.kem != kem_->scheme()) return Err(reject(KdcError::kWrongKem));
  if (as_string(m.recipient) != id_) return Err(reject(KdcError::kWrongRecipient));
  if (!has_session()) return Err(reject(KdcError::kNoSession));
  if (m.session_id != session_id_) return Err(reject(KdcError::kWrongSession));
  if (m.sequence <= last_sequence_) return Err(reject(KdcError::kReplay));
  if (m.next_change_ns != 0 && static_cast<std::int64_t>(std::min<std::uint64_t>(m.next_change_ns, INT64_MAX)) <=
                                   now.ns()) {
    return Err(reject(KdcError::kStale));
  }
  const auto stream_key = std::make_pair(m.appid, std::string(as_string(m.sv_id)));
  // Within a session keys only move forward. A new session starts with the
  // KDC's predecessor (if still in use) and current key, so an older key id
  // is accepted there; messages of an old session fail the session check.
  auto last = last_key_id_.find(stream_key);
  if (last != last_key_id_.end() && last->second.second == session_id_ && m.key_id < last->second.first) {
    return Err(reject(KdcError::kReplay));
  }

  auto ss = kem_->decapsulate(*own_private_, m.kem_ciphertext);
  if (!ss) return Err(reject(KdcError::kCrypto));
  const ByteSpan aad = msg.first(m.aad_length);
  SecretBytes kek_iv(44);
  if (!wrap_key(m.nonce, ss->span(), session_key_.span(), aad, kek_iv.mutable_span())) {
    return Err(reject(KdcError::kCrypto));
  }
  auto gcm = crypto::AesGcm::create(kek_iv.span().first(32));
  if (!gcm) return Err(reject(KdcError::kCrypto));
  SecretBytes key(m.wrapped_key);
  if (!gcm->open(kek_iv.span().subspan(32, 12), aad, key.mutable_span(), m.aead_tag).ok()) {
    return Err(reject(KdcError::kBadTag));
  }
  // Authenticated. A key id equal to the installed one is a re-delivery in a
  // later sequence (after re-authentication): accepted, not a rollback.
  GroupKeyUpdate u;
  u.role = m.role;
  u.appid = m.appid;
  u.sv_id = std::string(as_string(m.sv_id));
  u.security = security_of(m.scheme, m.tag_bits, m.appid);
  u.valid_from = TimePoint::from_ns(static_cast<std::int64_t>(std::min<std::uint64_t>(m.valid_from_ns, INT64_MAX)));
  u.next_change = m.next_change_ns == 0
                      ? TimePoint::max()
                      : TimePoint::from_ns(static_cast<std::int64_t>(std::min<std::uint64_t>(m.next_change_ns, INT64_MAX)));
  u.key.key_id = m.key_id;
  u.key.key = std::move(key);
  u.key.time_of_current_key = seconds_of(u.valid_from);
  if (u.next_change == TimePoint::max()) {
    u.key.time_to_next_key_min = 0xFFFF;
  } else {
    const std::int64_t minutes = (u.next_change - u.valid_from).ns() / 60'000'000'000;
    u.key.time_to_next_key_min = static_cast<std::uint16_t>(std::clamp<std::int64_t>(minutes, 0, 0xFFFE));
  }
  last_sequence_ = m.sequence;
  last_key_id_[stream_key] = {m.key_id, session_id_};
  ++counters_.keys_installed;
  return u;
}

}  // namespace layersec::sv::kdc
