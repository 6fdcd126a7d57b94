#include "layersec/kex/negotiation.h"

#include <cstring>
#include <string_view>

#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mac.h"

namespace layersec::kex {

std::string_view to_string(NegotiationError e) {
  switch (e) {
    case NegotiationError::kMalformed: return "malformed negotiation message";
    case NegotiationError::kUnexpectedMessage: return "unexpected negotiation message";
    case NegotiationError::kSchemeMismatch: return "peer asked for another KEM scheme";
    case NegotiationError::kKemFailure: return "KEM operation failed";
    case NegotiationError::kBadFinished: return "Finished MAC does not verify";
    case NegotiationError::kBadNonce: return "nonce must be 32 bytes";
    case NegotiationError::kBackend: return "crypto backend failure";
  }
  return "unknown negotiation error";
}

std::size_t negotiation_frame_size(ByteSpan header) {
  if (header.size() < kNegotiationFrameHeader) return 0;
  return kNegotiationFrameHeader + load_be32(header.data() + 1);
}

std::uint8_t negotiation_scheme_id(KemScheme s) {
  std::uint8_t id = 1;
  for (KemScheme x : kAllKemSchemes) {
    if (x == s) return id;
    ++id;
  }
  return 0;
}

namespace {

constexpr std::string_view kKeyLabel = "layersec negotiation v1";
constexpr std::string_view kFinishedLabel = "layersec negotiation finished";

// type || u32 length || body
std::vector<std::uint8_t> frame(NegotiationMessage type, std::initializer_list<ByteSpan> parts) {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.size();
  std::vector<std::uint8_t> out(kNegotiationFrameHeader + n);
  out[0] = static_cast<std::uint8_t>(type);
  store_be32(out.data() + 1, static_cast<std::uint32_t>(n));
  std::size_t pos = kNegotiationFrameHeader;
  for (const auto& p : parts) {
    if (!p.empty()) std::memcpy(out.data() + pos, p.data(), p.size());
    pos += p.size();
  }
  return out;
}

// Parses a whole frame of the expected type and returns a reader over its body.
bool open_frame(ByteSpan bytes, NegotiationMessage expected, ByteReader& body, NegotiationError& err) {
  ByteReader r(bytes);
  const std::uint8_t type = r.u8();
  ByteReader b = r.sub_u32_prefixed();
  if (!r.finish()) {
    err = NegotiationError::kMalformed;
    return false;
  }
  if (type != static_cast<std::uint8_t>(expected)) {
    err = NegotiationError::kUnexpectedMessage;
    return false;
  }
  body = b;
  return true;
}

void append(std::vector<std::uint8_t>& t, ByteSpan b) { t.insert(t.end(), b.begin(), b.end()); }

// Session key and Finished tag from the shared secret and transcript 1-3.
bool derive(ByteSpan shared, ByteSpan nonce_i, ByteSpan nonce_r, ByteSpan transcript, SecretBytes& key,
            std::array<std::uint8_t, 32>& finished) {
  std::array<std::uint8_t, 32> th{};
  const ByteSpan tparts[] = {transcript};
  if (!crypto::sha256(tparts, th).ok()) return false;
  std::array<std::uint8_t, 64> salt{};
  std::memcpy(salt.data(), nonce_i.data(), 32);
  std::memcpy(salt.data() + 32, nonce_r.data(), 32);
  std::vector<std::uint8_t> info(kKeyLabel.begin(), kKeyLabel.end());
  info.resize(kKeyLabel.size() + th.size());
  std::memcpy(info.data() + kKeyLabel.size(), th.data(), th.size());
  key = SecretBytes(32);
  if (!crypto::hkdf_sha256(salt, shared, info, key.mutable_span()).ok()) return false;
  auto mac = crypto::make_mac(crypto::MacAlgorithm::kHmacSha256, key.span());
  if (!mac) return false;
  const ByteSpan label(reinterpret_cast<const std::uint8_t*>(kFinishedLabel.data()), kFinishedLabel.size());
  const ByteSpan fparts[] = {label, ByteSpan(th)};
  return (*mac)->compute(fparts, finished).ok();
}

}  // namespace

NegotiationInitiator::NegotiationInitiator(Kem& kem, ByteSpan nonce) : kem_(kem) {
  nonce_ok_ = nonce.size() == kNegotiationNonceSize;
  if (nonce_ok_) std::memcpy(nonce_.data(), nonce.data(), nonce.size());
}

Result<std::vector<std::uint8_t>, NegotiationError> NegotiationInitiator::start() {
  if (state_ != State::kIdle) return Err(NegotiationError::kUnexpectedMessage);
  if (!nonce_ok_) {
    state_ = State::kFailed;
    return Err(NegotiationError::kBadNonce);
  }
  const std::uint8_t id = negotiation_scheme_id(kem_.scheme());
  auto out = frame(NegotiationMessage::kHello, {ByteSpan(&id, 1), ByteSpan(nonce_)});
  transcript_ = out;
  state_ = State::kAwaitPublicKey;
  return out;
}

Result<std::vector<std::uint8_t>, NegotiationError> NegotiationInitiator::on_public_key(ByteSpan bytes) {
  if (state_ != State::kAwaitPublicKey) return Err(NegotiationError::kUnexpectedMessage);
  auto fail = [&](NegotiationError e) {
    state_ = State::kFailed;
    return Err(e);
  };
  ByteReader body;
  NegotiationError err{};
  if (!open_frame(bytes, NegotiationMessage::kPublicKey, body, err)) return fail(err);
  if (!body.copy_to(peer_nonce_)) return fail(NegotiationError::kMalformed);
  ByteReader pk = body.sub_u32_prefixed();
  if (!body.finish()) return fail(NegotiationError::kMalformed);
  auto enc = kem_.encapsulate(pk.rest());
  if (!enc) return fail(NegotiationError::kKemFailure);
  const std::uint32_t ct_len = static_cast<std::uint32_t>(enc->ciphertext.size());
  std::uint8_t len[4];
  store_be32(len, ct_len);
  auto out = frame(NegotiationMessage::kKeyExchange, {ByteSpan(len, 4), ByteSpan(enc->ciphertext)});
  append(transcript_, bytes);
  append(transcript_, out);
  std::array<std::uint8_t, 32> finished{};
  if (!derive(enc->shared_secret.span(), nonce_, peer_nonce_, transcript_, key_, finished))
    return fail(NegotiationError::kBackend);
  // Keep the expected Finished tag in the transcript buffer's place.
  transcript_.assign(finished.begin(), finished.end());
  state_ = State::kAwaitFinished;
  return out;
}

Status<NegotiationError> NegotiationInitiator::on_finished(ByteSpan bytes) {
  if (state_ != State::kAwaitFinished) return Err(NegotiationError::kUnexpectedMessage);
  ByteReader body;
  NegotiationError err{};
  if (!open_frame(bytes, NegotiationMessage::kFinished, body, err)) {
    state_ = State::kFailed;
    key_.clear();
    return Err(err);
  }
  const ByteSpan tag = body.rest();
  if (tag.size() != 32 || !crypto::ct_equal(tag, transcript_)) {
    state_ = State::kFailed;
    key_.clear();
    return Err(NegotiationError::kBadFinished);
  }
  state_ = State::kDone;
  return {};
}

NegotiationResponder::NegotiationResponder(Kem& kem, ByteSpan public_key, const KemPrivateKey& private_key,
                                           ByteSpan nonce)
    : kem_(kem), public_key_(public_key), private_key_(private_key) {
  nonce_ok_ = nonce.size() == kNegotiationNonceSize;
  if (nonce_ok_) std::memcpy(nonce_.data(), nonce.data(), nonce.size());
}

Result<std::vector<std::uint8_t>, NegotiationError> NegotiationResponder::on_hello(ByteSpan bytes) {
  if (state_ != State::kAwaitHello) return Err(NegotiationError::kUnexpectedMessage);
  auto fail = [&](NegotiationError e) {
    state_ = State::kFailed;
    return Err(e);
  };
  if (!nonce_ok_) return fail(NegotiationError::kBadNonce);
  ByteReader body;
  NegotiationError err{};
  if (!open_frame(bytes, NegotiationMessage::kHello, body, err)) return fail(err);
  const std::uint8_t id = body.u8();
  if (!body.copy_to(peer_nonce_) || !body.finish()) return fail(NegotiationError::kMalformed);
  if (id != negotiation_scheme_id(kem_.scheme())) return fail(NegotiationError::kSchemeMismatch);
  std::uint8_t len[4];
  store_be32(len, static_cast<std::uint32_t>(public_key_.size()));
  auto out = frame(NegotiationMessage::kPublicKey, {ByteSpan(nonce_), ByteSpan(len, 4), public_key_});
  transcript_.assign(bytes.begin(), bytes.end());
  append(transcript_, out);
  state_ = State::kAwaitKeyExchange;
  return out;
}

Result<std::vector<std::uint8_t>, NegotiationError> NegotiationResponder::on_key_exchange(ByteSpan bytes) {
  if (state_ != State::kAwaitKeyExchange) return Err(NegotiationError::kUnexpectedMessage);
  auto fail = [&](NegotiationError e) {
    state_ = State::kFailed;
    return Err(e);
  };
  ByteReader body;
  NegotiationError err{};
  if (!open_frame(bytes, NegotiationMessage::kKeyExchange, body, err)) return fail(err);
  ByteReader ct = body.sub_u32_prefixed();
  if (!body.finish()) return fail(NegotiationError::kMalformed);
  auto ss = kem_.decapsulate(private_key_, ct.rest());
  if (!ss) return fail(NegotiationError::kKemFailure);
  append(transcript_, bytes);
  std::array<std::uint8_t, 32> finished{};
  if (!derive(ss->span(), peer_nonce_, nonce_, transcript_, key_, finished)) return fail(NegotiationError::kBackend);
  transcript_.clear();
  state_ = State::kDone;
  return frame(NegotiationMessage::kFinished, {ByteSpan(finished)});
}

}  // namespace layersec::kex
