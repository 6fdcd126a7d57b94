#include "layersec/kex/mode_b.h"

#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "layersec/crypto/kdf.h"

namespace layersec::kex {

namespace {

// Domain-separation labels (ASCII, no terminator); docs/pki.md.
constexpr std::string_view kLabelRequest = "layersec mode-b v1 request";
constexpr std::string_view kLabelDelivery = "layersec mode-b v1 delivery";
constexpr std::string_view kLabelKek = "layersec mode-b v1 kek";
constexpr std::string_view kLabelConfirmKey = "layersec mode-b v1 confirm key";
constexpr std::string_view kLabelConfirm = "layersec mode-b v1 confirm";

constexpr std::size_t kHeaderSize = 8;
constexpr std::size_t kHashSize = 32;
constexpr std::size_t kKekSize = 32;
constexpr std::size_t kConfirmKeySize = 32;

ByteSpan label(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

bool is_rsa_kem(KemScheme s) {
  return s == KemScheme::kRsa2048 || s == KemScheme::kRsa3072 || s == KemScheme::kRsa15360;
}
int rsa_kem_bits(KemScheme s) {
  switch (s) {
    case KemScheme::kRsa2048:
      return 2048;
    case KemScheme::kRsa3072:
      return 3072;
    case KemScheme::kRsa15360:
      return 15360;
    default:
      return 0;
  }
}

std::optional<crypto::MacAlgorithm> mac_from_wire(std::uint8_t id) {
  if (id == 1) return crypto::MacAlgorithm::kHmacSha256;
  if (id == 2) return crypto::MacAlgorithm::kCmacAes256;
  return std::nullopt;
}

bool valid_key_size(std::size_t n) { return n == 16 || n == 24 || n == 32; }

// |now - timestamp| <= skew, without overflow.
bool in_window(std::uint64_t timestamp_ns, TimePoint now, Duration skew) {
  if (timestamp_ns > static_cast<std::uint64_t>(INT64_MAX)) return false;
  const auto ts = static_cast<std::int64_t>(timestamp_ns);
  const std::int64_t diff = now.ns() >= ts ? now.ns() - ts : ts - now.ns();
  return diff >= 0 && diff <= skew.ns();
}

std::int64_t unix_seconds(TimePoint now) { return now.ns() / 1'000'000'000; }

Status<ModeBError> sha256_of(std::span<const ByteSpan> parts, std::uint8_t (&out)[kHashSize]) {
  if (!crypto::sha256(parts, out).ok()) return Err(ModeBError::kBackend);
  return {};
}

void write_header(ByteWriter& w, ModeBMessageType type, std::uint16_t service, std::uint16_t eg,
                  std::uint8_t kem_id, std::uint8_t mac_id) {
  w.u8(kModeBVersion);
  w.u8(static_cast<std::uint8_t>(type));
  w.u16(service);
  w.u16(eg);
  w.u8(kem_id);
  w.u8(mac_id);
}

bool write_u16_prefixed(ByteWriter& w, ByteSpan data) {
  if (data.size() > 0xFFFF) return false;
  return w.u16(static_cast<std::uint16_t>(data.size())) && w.bytes(data);
}

Result<ModeBHeader, ModeBError> read_header(ByteReader& r, ModeBMessageType expected) {
  ModeBHeader h;
  h.version = r.u8();
  const std::uint8_t type = r.u8();
  h.service_id = r.u16();
  h.eventgroup_id = r.u16();
  h.kem_id = r.u8();
  h.mac_id = r.u8();
  if (!r.ok()) return Err(ModeBError::kMalformed);
  if (h.version != kModeBVersion) return Err(ModeBError::kUnsupportedVersion);
  if (type != static_cast<std::uint8_t>(expected)) return Err(ModeBError::kUnexpectedMessage);
  h.type = expected;
  return h;
}

// Confirm key: HKDF-SHA256(salt = TH2, ikm = K || ss, info = label).
Status<ModeBError> derive_confirm_key(ByteSpan th2, ByteSpan key, ByteSpan ss, SecretBytes& out) {
  SecretBytes ikm(key.size() + ss.size());
  std::memcpy(ikm.data(), key.data(), key.size());
  if (!ss.empty()) std::memcpy(ikm.data() + key.size(), ss.data(), ss.size());
  out = SecretBytes(kConfirmKeySize);
  if (!crypto::hkdf_sha256(th2, ikm.span(), label(kLabelConfirmKey), out.mutable_span()).ok()) {
    return Err(ModeBError::kBackend);
  }
  return {};
}

// KEK: HKDF-SHA256(salt = SHA-256(request || delivery through ciphertext), ikm = ss).
Status<ModeBError> derive_kek(ByteSpan request, ByteSpan delivery_prefix, ByteSpan ss,
                              SecretBytes& out) {
  std::uint8_t th1[kHashSize];
  const ByteSpan parts[] = {request, delivery_prefix};
  if (auto s = sha256_of(parts, th1); !s.ok()) return s;
  out = SecretBytes(kKekSize);
  if (!crypto::hkdf_sha256(th1, ss, label(kLabelKek), out.mutable_span()).ok()) {
    return Err(ModeBError::kBackend);
  }
  return {};
}

Result<std::vector<std::uint8_t>, ModeBError> confirm_tag(crypto::MacAlgorithm alg,
                                                          const SecretBytes& ck, ByteSpan th2,
                                                          ByteSpan covered) {
  auto mac = crypto::make_mac(alg, ck.span());
  if (!mac.ok()) return Err(ModeBError::kBackend);
  std::vector<std::uint8_t> tag((*mac)->tag_size());
  const ByteSpan parts[] = {label(kLabelConfirm), th2, covered};
  if (!(*mac)->compute(parts, tag).ok()) return Err(ModeBError::kBackend);
  return tag;
}

std::unique_ptr<Kem> build_kem(KemScheme s) {
  try {
    return make_kem(s);
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

std::string_view to_string(ModeBError e) {
  switch (e) {
    case ModeBError::kMalformed: return "malformed message";
    case ModeBError::kUnsupportedVersion: return "unsupported protocol version";
    case ModeBError::kUnexpectedMessage: return "unexpected message";
    case ModeBError::kWrongTranscript: return "message does not match the handshake";
    case ModeBError::kReplay: return "replayed or foreign nonce";
    case ModeBError::kStale: return "stale message (timestamp or timeout)";
    case ModeBError::kUnsupportedKem: return "KEM or MAC not allowed";
    case ModeBError::kKemKeyMismatch: return "RSA KEM size does not match the certificate key";
    case ModeBError::kCertMalformed: return "malformed certificate";
    case ModeBError::kCertExpired: return "certificate expired";
    case ModeBError::kCertNotYetValid: return "certificate not yet valid";
    case ModeBError::kCertWrongCa: return "certificate not issued by a trusted CA";
    case ModeBError::kCertInvalid: return "certificate invalid for this use";
    case ModeBError::kUnauthorisedService: return "certificate not authorised for the service";
    case ModeBError::kBadSignature: return "bad signature";
    case ModeBError::kKemFailure: return "KEM failure (bad key or ciphertext)";
    case ModeBError::kKeyUnwrapFailed: return "wrapped key failed its integrity check";
    case ModeBError::kBadConfirmation: return "bad key confirmation";
    case ModeBError::kUnknownSession: return "no such pending handshake";
    case ModeBError::kTooManyPending: return "too many pending handshakes";
    case ModeBError::kBadArgument: return "bad argument";
    case ModeBError::kBackend: return "crypto backend failure";
  }
  return "unknown Mode B error";
}

ModeBError from_pki_error(PkiError e) {
  switch (e) {
    case PkiError::kMalformedCertificate:
    case PkiError::kMalformedKey:
      return ModeBError::kCertMalformed;
    case PkiError::kExpired:
      return ModeBError::kCertExpired;
    case PkiError::kNotYetValid:
      return ModeBError::kCertNotYetValid;
    case PkiError::kWrongCa:
      return ModeBError::kCertWrongCa;
    case PkiError::kUnauthorisedService:
      return ModeBError::kUnauthorisedService;
    case PkiError::kBadSignature:
      return ModeBError::kBadSignature;
    case PkiError::kBackend:
      return ModeBError::kBackend;
    default:
      return ModeBError::kCertInvalid;
  }
}

std::uint8_t kem_wire_id(KemScheme s) {
  switch (s) {
    case KemScheme::kMlKem512: return 1;
    case KemScheme::kMlKem768: return 2;
    case KemScheme::kMlKem1024: return 3;
    case KemScheme::kX25519: return 4;
    case KemScheme::kEcdhP256: return 5;
    case KemScheme::kEcdhP521: return 6;
    case KemScheme::kRsa2048: return 7;
    case KemScheme::kRsa3072: return 8;
    case KemScheme::kRsa15360: return 9;
    case KemScheme::kNtruEes613ep1: return 10;
    case KemScheme::kNtruEes1171ep1: return 11;
    case KemScheme::kHybridX25519MlKem768: return 12;
  }
  return 0;
}

std::optional<KemScheme> kem_from_wire_id(std::uint8_t id) {
  for (const KemScheme s : kAllKemSchemes) {
    if (kem_wire_id(s) == id) return s;
  }
  return std::nullopt;
}

std::optional<std::uint8_t> confirm_mac_wire_id(crypto::MacAlgorithm a) {
  if (a == crypto::MacAlgorithm::kHmacSha256) return 1;
  if (a == crypto::MacAlgorithm::kCmacAes256) return 2;
  return std::nullopt;
}

// ---------------------------------------------------------------- parsers

Result<ModeBHeader, ModeBError> parse_mode_b_header(ByteSpan msg) {
  ByteReader r(msg);
  ModeBHeader h;
  h.version = r.u8();
  const std::uint8_t type = r.u8();
  h.service_id = r.u16();
  h.eventgroup_id = r.u16();
  h.kem_id = r.u8();
  h.mac_id = r.u8();
  if (!r.ok()) return Err(ModeBError::kMalformed);
  if (h.version != kModeBVersion) return Err(ModeBError::kUnsupportedVersion);
  if (type < 1 || type > 3) return Err(ModeBError::kUnexpectedMessage);
  h.type = static_cast<ModeBMessageType>(type);
  return h;
}

Result<KeyRequestView, ModeBError> parse_key_request(ByteSpan msg) {
  ByteReader r(msg);
  auto h = read_header(r, ModeBMessageType::kKeyRequest);
  if (!h.ok()) return Err(h.error());
  KeyRequestView v;
  v.header = *h;
  v.timestamp_ns = r.u64();
  v.nonce_s = r.bytes(kModeBNonceSize);
  v.certificate = r.sub_u16_prefixed().rest();
  v.kem_public_key = r.sub_u16_prefixed().rest();
  v.signed_length = r.position();
  v.signature = r.sub_u16_prefixed().rest();
  if (!r.finish() || v.certificate.empty()) return Err(ModeBError::kMalformed);
  return v;
}

Result<KeyDeliveryView, ModeBError> parse_key_delivery(ByteSpan msg) {
  ByteReader r(msg);
  auto h = read_header(r, ModeBMessageType::kKeyDelivery);
  if (!h.ok()) return Err(h.error());
  KeyDeliveryView v;
  v.header = *h;
  v.timestamp_ns = r.u64();
  v.nonce_s = r.bytes(kModeBNonceSize);
  v.nonce_p = r.bytes(kModeBNonceSize);
  v.key_id = r.u32();
  v.certificate = r.sub_u16_prefixed().rest();
  v.ciphertext = r.sub_u16_prefixed().rest();
  v.kek_transcript_length = r.position();
  v.wrapped_key = r.sub_u8_prefixed().rest();
  v.signed_length = r.position();
  v.signature = r.sub_u16_prefixed().rest();
  if (!r.finish() || v.certificate.empty() || v.ciphertext.empty() || v.wrapped_key.empty() ||
      v.signature.empty()) {
    return Err(ModeBError::kMalformed);
  }
  return v;
}

Result<KeyConfirmView, ModeBError> parse_key_confirm(ByteSpan msg) {
  ByteReader r(msg);
  auto h = read_header(r, ModeBMessageType::kKeyConfirm);
  if (!h.ok()) return Err(h.error());
  KeyConfirmView v;
  v.header = *h;
  v.key_id = r.u32();
  v.nonce_p = r.bytes(kModeBNonceSize);
  v.mac_length = r.position();
  v.tag = r.sub_u8_prefixed().rest();
  if (!r.finish() || v.tag.empty()) return Err(ModeBError::kMalformed);
  return v;
}

// ---------------------------------------------------------------- subscriber

Result<std::unique_ptr<ModeBSubscriber>, ModeBError> ModeBSubscriber::create(
    const ModeBConfig& config, const Identity& identity, const TrustStore& trust) {
  if (!identity.certificate.valid() || !identity.key.valid() || !valid_key_size(config.key_size)) {
    return Err(ModeBError::kBadArgument);
  }
  if (!confirm_mac_wire_id(config.confirm_mac)) return Err(ModeBError::kUnsupportedKem);
  std::unique_ptr<ModeBSubscriber> s(new ModeBSubscriber());
  s->config_ = config;
  s->identity_ = &identity;
  s->trust_ = &trust;
  s->kem_ = build_kem(config.kem);
  if (!s->kem_) return Err(ModeBError::kUnsupportedKem);
  s->certificate_der_ = identity.certificate.der();
  if (is_rsa_kem(config.kem)) {
    // The certificate key is the KEM key: parse it once for decapsulation.
    EVP_PKEY* k = identity.key.get();
    if (EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA || EVP_PKEY_get_bits(k) != rsa_kem_bits(config.kem)) {
      return Err(ModeBError::kKemKeyMismatch);
    }
    auto der = identity.key.to_der();
    if (!der.ok()) return Err(ModeBError::kBackend);
    auto loaded = s->kem_->load_private_key(der->span());
    if (!loaded.ok()) return Err(ModeBError::kKemKeyMismatch);
    s->cert_kem_key_ = std::move(loaded).value();
  }
  return s;
}

void ModeBSubscriber::reset() {
  state_ = State::kIdle;
  ephemeral_key_.reset();
  request_.clear();
  secure_zero(nonce_s_, sizeof nonce_s_);
  key_.clear();
  key_id_ = 0;
}

Result<std::vector<std::uint8_t>, ModeBError> ModeBSubscriber::start(std::uint16_t service_id,
                                                                     std::uint16_t eventgroup_id,
                                                                     TimePoint now) {
  reset();
  if (!crypto::random_bytes(nonce_s_).ok()) return Err(ModeBError::kBackend);
  std::vector<std::uint8_t> kem_pk;
  if (!is_rsa_kem(config_.kem)) {
    // A fresh KEM key pair per handshake (forward secrecy for non-RSA KEMs).
    auto kp = kem_->generate();
    if (!kp.ok()) return Err(ModeBError::kKemFailure);
    auto sk = kem_->load_private_key(kp->private_key.span());
    if (!sk.ok()) return Err(ModeBError::kKemFailure);
    ephemeral_key_ = std::move(sk).value();
    kem_pk = std::move(kp->public_key);
  }
  std::vector<std::uint8_t> out(kHeaderSize + 8 + kModeBNonceSize + 6 + certificate_der_.size() +
                                kem_pk.size() + 2 +
                                static_cast<std::size_t>(EVP_PKEY_get_size(identity_->key.get())) + 64);
  ByteWriter w(out);
  write_header(w, ModeBMessageType::kKeyRequest, service_id, eventgroup_id, kem_wire_id(config_.kem),
               *confirm_mac_wire_id(config_.confirm_mac));
  w.u64(static_cast<std::uint64_t>(now.ns()));
  w.bytes(nonce_s_);
  if (!write_u16_prefixed(w, certificate_der_) || !write_u16_prefixed(w, kem_pk)) {
    return Err(ModeBError::kBadArgument);
  }
  if (is_rsa_kem(config_.kem)) {
    w.u16(0);
  } else {
    const ByteSpan parts[] = {label(kLabelRequest), w.written()};
    auto sig = sign(identity_->key, parts);
    if (!sig.ok()) return Err(ModeBError::kBackend);
    if (!write_u16_prefixed(w, *sig)) return Err(ModeBError::kBackend);
  }
  if (!w.ok()) return Err(ModeBError::kBackend);
  out.resize(w.size());
  request_ = out;
  service_id_ = service_id;
  eventgroup_id_ = eventgroup_id;
  deadline_ = now + config_.response_timeout;
  state_ = State::kAwaitingDelivery;
  return out;
}

Result<std::vector<std::uint8_t>, ModeBError> ModeBSubscriber::on_delivery(ByteSpan msg,
                                                                           TimePoint now) {
  if (state_ != State::kAwaitingDelivery) return Err(ModeBError::kUnexpectedMessage);
  if (now > deadline_) return Err(ModeBError::kStale);
  auto parsed = parse_key_delivery(msg);
  if (!parsed.ok()) return Err(parsed.error());
  const KeyDeliveryView& v = *parsed;
  if (v.header.service_id != service_id_ || v.header.eventgroup_id != eventgroup_id_ ||
      v.header.kem_id != kem_wire_id(config_.kem) ||
      v.header.mac_id != *confirm_mac_wire_id(config_.confirm_mac)) {
    return Err(ModeBError::kWrongTranscript);
  }
  if (!crypto::ct_equal(v.nonce_s, nonce_s_)) return Err(ModeBError::kReplay);
  if (!in_window(v.timestamp_ns, now, config_.max_skew)) return Err(ModeBError::kStale);
  if (v.wrapped_key.size() != config_.key_size + 8) return Err(ModeBError::kMalformed);

  // The publisher must be a node of our CA authorised for the service.
  auto cert = Certificate::from_der(v.certificate);
  if (!cert.ok()) return Err(ModeBError::kCertMalformed);
  if (auto s = trust_->verify_for_service(*cert, unix_seconds(now), service_id_); !s.ok()) {
    return Err(from_pki_error(s.error()));
  }
  const ByteSpan signed_parts[] = {label(kLabelDelivery), request_, msg.first(v.signed_length)};
  if (auto s = verify_signature(cert->public_key(), signed_parts, v.signature); !s.ok()) {
    return Err(ModeBError::kBadSignature);
  }

  const std::size_t ct_size = kem_->ciphertext_size();
  if (ct_size != 0 && v.ciphertext.size() != ct_size) return Err(ModeBError::kKemFailure);
  const KemPrivateKey* sk = cert_kem_key_ ? cert_kem_key_.get() : ephemeral_key_.get();
  if (sk == nullptr) return Err(ModeBError::kBadArgument);
  auto ss = kem_->decapsulate(*sk, v.ciphertext);
  if (!ss.ok()) return Err(ModeBError::kKemFailure);

  SecretBytes kek;
  if (auto s = derive_kek(request_, msg.first(v.kek_transcript_length), ss->span(), kek); !s.ok()) {
    return Err(s.error());
  }
  SecretBytes key(config_.key_size);
  if (!crypto::aes_key_unwrap(kek.span(), v.wrapped_key, key.mutable_span()).ok()) {
    return Err(ModeBError::kKeyUnwrapFailed);
  }
  std::uint8_t th2[kHashSize];
  const ByteSpan transcript[] = {request_, msg};
  if (auto s = sha256_of(transcript, th2); !s.ok()) return Err(s.error());
  SecretBytes ck;
  if (auto s = derive_confirm_key(th2, key.span(), ss->span(), ck); !s.ok()) return Err(s.error());

  std::vector<std::uint8_t> out(kHeaderSize + 4 + kModeBNonceSize + 1 + 64);
  ByteWriter w(out);
  write_header(w, ModeBMessageType::kKeyConfirm, service_id_, eventgroup_id_, v.header.kem_id,
               v.header.mac_id);
  w.u32(v.key_id);
  w.bytes(v.nonce_p);
  auto tag = confirm_tag(config_.confirm_mac, ck, th2, w.written());
  if (!tag.ok()) return Err(tag.error());
  w.u8(static_cast<std::uint8_t>(tag->size()));
  w.bytes(*tag);
  if (!w.ok()) return Err(ModeBError::kBackend);
  out.resize(w.size());

  key_ = std::move(key);
  key_id_ = v.key_id;
  ephemeral_key_.reset();
  state_ = State::kEstablished;
  return out;
}

// ---------------------------------------------------------------- publisher

Result<std::unique_ptr<ModeBPublisher>, ModeBError> ModeBPublisher::create(
    const ModeBConfig& config, const Identity& identity, const TrustStore& trust,
    std::vector<KemScheme> allowed_kems) {
  if (!identity.certificate.valid() || !identity.key.valid() || !valid_key_size(config.key_size) ||
      config.max_pending == 0 || config.replay_cache_size == 0) {
    return Err(ModeBError::kBadArgument);
  }
  if (!confirm_mac_wire_id(config.confirm_mac)) return Err(ModeBError::kUnsupportedKem);
  std::unique_ptr<ModeBPublisher> p(new ModeBPublisher());
  p->config_ = config;
  p->identity_ = &identity;
  p->trust_ = &trust;
  p->allowed_ = allowed_kems.empty() ? std::vector<KemScheme>{config.kem} : std::move(allowed_kems);
  for (const KemScheme s : p->allowed_) {
    if (p->kem_for(s) == nullptr) return Err(ModeBError::kUnsupportedKem);
  }
  p->certificate_der_ = identity.certificate.der();
  return p;
}

Kem* ModeBPublisher::kem_for(KemScheme s) {
  for (auto& [scheme, kem] : kems_) {
    if (scheme == s) return kem.get();
  }
  auto kem = build_kem(s);
  if (!kem) return nullptr;
  kems_.emplace_back(s, std::move(kem));
  return kems_.back().second.get();
}

bool ModeBPublisher::nonce_seen(ByteSpan nonce) const {
  return std::any_of(seen_.begin(), seen_.end(), [&](const SeenNonce& n) {
    return std::memcmp(n.nonce, nonce.data(), kModeBNonceSize) == 0;
  });
}

ModeBPublisher::Session* ModeBPublisher::find(std::uint64_t handle) {
  for (auto& s : sessions_) {
    if (s.handle == handle) return &s;
  }
  return nullptr;
}

std::optional<ModeBPublisher::SessionState> ModeBPublisher::session_state(std::uint64_t handle) const {
  for (const auto& s : sessions_) {
    if (s.handle == handle) return s.state;
  }
  return std::nullopt;
}

void ModeBPublisher::expire(TimePoint now) {
  std::erase_if(sessions_, [&](const Session& s) { return now > s.deadline; });
  std::erase_if(seen_, [&](const SeenNonce& n) { return now > n.expires; });
}

Result<AcceptedRequest, ModeBError> ModeBPublisher::on_request(ByteSpan msg, TimePoint now) {
  expire(now);
  auto parsed = parse_key_request(msg);
  if (!parsed.ok()) return Err(parsed.error());
  const KeyRequestView& v = *parsed;
  const auto kem = kem_from_wire_id(v.header.kem_id);
  if (!kem || std::find(allowed_.begin(), allowed_.end(), *kem) == allowed_.end() ||
      !mac_from_wire(v.header.mac_id)) {
    return Err(ModeBError::kUnsupportedKem);
  }
  if (!in_window(v.timestamp_ns, now, config_.max_skew)) return Err(ModeBError::kStale);
  if (nonce_seen(v.nonce_s)) return Err(ModeBError::kReplay);
  if (sessions_.size() >= config_.max_pending || seen_.size() >= config_.replay_cache_size) {
    return Err(ModeBError::kTooManyPending);
  }

  auto cert = Certificate::from_der(v.certificate);
  if (!cert.ok()) return Err(ModeBError::kCertMalformed);
  if (auto s = trust_->verify_for_service(*cert, unix_seconds(now), v.header.service_id); !s.ok()) {
    return Err(from_pki_error(s.error()));
  }
  Kem* k = kem_for(*kem);
  if (k == nullptr) return Err(ModeBError::kUnsupportedKem);
  std::vector<std::uint8_t> kem_pk;
  if (is_rsa_kem(*kem)) {
    // The certificate's RSA key is the KEM key; the request carries neither
    // a KEM key nor a signature.
    if (!v.kem_public_key.empty() || !v.signature.empty()) return Err(ModeBError::kMalformed);
    const PublicKey pub = cert->public_key();
    if (EVP_PKEY_get_base_id(pub.get()) != EVP_PKEY_RSA ||
        EVP_PKEY_get_bits(pub.get()) != rsa_kem_bits(*kem)) {
      return Err(ModeBError::kKemKeyMismatch);
    }
    if ((X509_get_key_usage(cert->get()) & KU_KEY_ENCIPHERMENT) == 0) return Err(ModeBError::kCertInvalid);
    kem_pk = pub.der();
  } else {
    if (v.kem_public_key.empty() || v.signature.empty()) return Err(ModeBError::kMalformed);
    if (k->public_key_size() != 0 && v.kem_public_key.size() != k->public_key_size()) {
      return Err(ModeBError::kKemFailure);
    }
    const ByteSpan parts[] = {label(kLabelRequest), msg.first(v.signed_length)};
    if (auto s = verify_signature(cert->public_key(), parts, v.signature); !s.ok()) {
      return Err(ModeBError::kBadSignature);
    }
    kem_pk.assign(v.kem_public_key.begin(), v.kem_public_key.end());
  }

  // Everything checked: remember the nonce until a replay would be stale anyway.
  SeenNonce seen{};
  std::memcpy(seen.nonce, v.nonce_s.data(), kModeBNonceSize);
  const auto ts = TimePoint::from_ns(static_cast<std::int64_t>(v.timestamp_ns));
  seen.expires = std::max(now, ts) + config_.max_skew;
  seen_.push_back(seen);

  Session s;
  s.handle = next_handle_++;
  s.state = SessionState::kRequestAccepted;
  s.deadline = now + config_.response_timeout;
  s.request.assign(msg.begin(), msg.end());
  s.kem_public_key = std::move(kem_pk);
  s.kem = *kem;
  s.mac_id = v.header.mac_id;
  s.service_id = v.header.service_id;
  s.eventgroup_id = v.header.eventgroup_id;
  std::memcpy(s.nonce_s, v.nonce_s.data(), kModeBNonceSize);
  const CertificateInfo info = cert->info();
  s.subscriber = info.common_name;
  s.fingerprint = info.sha256_fingerprint;
  AcceptedRequest out{s.handle, s.service_id, s.eventgroup_id, s.subscriber, s.fingerprint};
  sessions_.push_back(std::move(s));
  return out;
}

Result<std::vector<std::uint8_t>, ModeBError> ModeBPublisher::deliver(std::uint64_t handle,
                                                                      const SecretBytes& key,
                                                                      std::uint32_t key_id,
                                                                      TimePoint now) {
  expire(now);
  Session* s = find(handle);
  if (s == nullptr) return Err(ModeBError::kUnknownSession);
  if (s->state != SessionState::kRequestAccepted) return Err(ModeBError::kUnexpectedMessage);
  if (key.size() != config_.key_size) return Err(ModeBError::kBadArgument);
  Kem* kem = kem_for(s->kem);
  if (kem == nullptr) return Err(ModeBError::kUnsupportedKem);
  auto enc = kem->encapsulate(s->kem_public_key);
  if (!enc.ok()) return Err(ModeBError::kKemFailure);
  std::uint8_t nonce_p[kModeBNonceSize];
  if (!crypto::random_bytes(nonce_p).ok()) return Err(ModeBError::kBackend);

  std::vector<std::uint8_t> out(kHeaderSize + 8 + 2 * kModeBNonceSize + 4 + 2 +
                                certificate_der_.size() + 2 + enc->ciphertext.size() + 1 +
                                key.size() + 8 + 2 +
                                static_cast<std::size_t>(EVP_PKEY_get_size(identity_->key.get())) + 64);
  ByteWriter w(out);
  write_header(w, ModeBMessageType::kKeyDelivery, s->service_id, s->eventgroup_id,
               kem_wire_id(s->kem), s->mac_id);
  w.u64(static_cast<std::uint64_t>(now.ns()));
  w.bytes(ByteSpan(s->nonce_s));
  w.bytes(ByteSpan(nonce_p));
  w.u32(key_id);
  if (!write_u16_prefixed(w, certificate_der_) || !write_u16_prefixed(w, enc->ciphertext)) {
    return Err(ModeBError::kBadArgument);
  }
  SecretBytes kek;
  if (auto st = derive_kek(s->request, w.written(), enc->shared_secret.span(), kek); !st.ok()) {
    return Err(st.error());
  }
  std::vector<std::uint8_t> wrapped(key.size() + 8);
  if (!crypto::aes_key_wrap(kek.span(), key.span(), wrapped).ok()) return Err(ModeBError::kBackend);
  w.u8(static_cast<std::uint8_t>(wrapped.size()));
  w.bytes(wrapped);
  const ByteSpan signed_parts[] = {label(kLabelDelivery), s->request, w.written()};
  auto sig = sign(identity_->key, signed_parts);
  if (!sig.ok()) return Err(ModeBError::kBackend);
  if (!write_u16_prefixed(w, *sig) || !w.ok()) return Err(ModeBError::kBackend);
  out.resize(w.size());

  std::uint8_t th2[kHashSize];
  const ByteSpan transcript[] = {s->request, out};
  if (auto st = sha256_of(transcript, th2); !st.ok()) return Err(st.error());
  SecretBytes ck;
  if (auto st = derive_confirm_key(th2, key.span(), enc->shared_secret.span(), ck); !st.ok()) {
    return Err(st.error());
  }
  std::memcpy(s->nonce_p, nonce_p, kModeBNonceSize);
  s->delivery = out;
  s->key_id = key_id;
  s->key = key.clone();
  s->confirm_key = std::move(ck);
  s->deadline = now + config_.response_timeout;
  s->state = SessionState::kAwaitingConfirm;
  return out;
}

Result<std::vector<std::uint8_t>, ModeBError> ModeBPublisher::respond(ByteSpan msg, TimePoint now) {
  auto accepted = on_request(msg, now);
  if (!accepted.ok()) return Err(accepted.error());
  const SecretBytes key = crypto::random_key(config_.key_size);
  return deliver(accepted->handle, key, next_key_id_++, now);
}

Result<ActivatedKey, ModeBError> ModeBPublisher::on_confirm(ByteSpan msg, TimePoint now) {
  auto parsed = parse_key_confirm(msg);
  if (!parsed.ok()) return Err(parsed.error());
  const KeyConfirmView& v = *parsed;
  auto it = std::find_if(sessions_.begin(), sessions_.end(), [&](const Session& s) {
    return s.state == SessionState::kAwaitingConfirm &&
           std::memcmp(s.nonce_p, v.nonce_p.data(), kModeBNonceSize) == 0;
  });
  if (it == sessions_.end()) {
    const bool replay = nonce_seen(v.nonce_p);
    expire(now);
    return Err(replay ? ModeBError::kReplay : ModeBError::kUnknownSession);
  }
  if (now > it->deadline) {
    sessions_.erase(it);
    expire(now);
    return Err(ModeBError::kStale);
  }
  if (v.header.service_id != it->service_id || v.header.eventgroup_id != it->eventgroup_id ||
      v.header.kem_id != kem_wire_id(it->kem) || v.header.mac_id != it->mac_id ||
      v.key_id != it->key_id) {
    return Err(ModeBError::kWrongTranscript);
  }
  std::uint8_t th2[kHashSize];
  const ByteSpan transcript[] = {it->request, it->delivery};
  if (auto st = sha256_of(transcript, th2); !st.ok()) return Err(st.error());
  auto expected = confirm_tag(*mac_from_wire(it->mac_id), it->confirm_key, th2,
                              msg.first(v.mac_length));
  if (!expected.ok()) return Err(expected.error());
  if (!crypto::ct_equal(*expected, v.tag)) return Err(ModeBError::kBadConfirmation);

  ActivatedKey out;
  out.service_id = it->service_id;
  out.eventgroup_id = it->eventgroup_id;
  out.key_id = it->key_id;
  out.key = std::move(it->key);
  out.subscriber = it->subscriber;
  out.subscriber_fingerprint = it->fingerprint;
  SeenNonce seen{};
  std::memcpy(seen.nonce, it->nonce_p, kModeBNonceSize);
  seen.expires = now + config_.response_timeout + config_.max_skew;
  sessions_.erase(it);
  expire(now);
  seen_.push_back(seen);
  return out;
}

}  // namespace layersec::kex
