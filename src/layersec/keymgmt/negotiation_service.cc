#include "layersec/keymgmt/negotiation_service.h"

#include <algorithm>

#include "layersec/base/bytes.h"
#include "layersec/crypto/kdf.h"

namespace layersec::keymgmt {
namespace {

KeyMgmtError from_negotiation(kex::NegotiationError e) {
  switch (e) {
    case kex::NegotiationError::kMalformed:
    case kex::NegotiationError::kBadNonce: return KeyMgmtError::kMalformed;
    case kex::NegotiationError::kUnexpectedMessage: return KeyMgmtError::kProtocol;
    case kex::NegotiationError::kSchemeMismatch: return KeyMgmtError::kUnsupportedKem;
    case kex::NegotiationError::kKemFailure: return KeyMgmtError::kKemFailure;
    case kex::NegotiationError::kBadFinished: return KeyMgmtError::kBadConfirmation;
    case kex::NegotiationError::kBackend: return KeyMgmtError::kInternal;
  }
  return KeyMgmtError::kInternal;
}

bool fresh_nonce(std::array<std::uint8_t, kex::kNegotiationNonceSize>& n) { return crypto::random_bytes(n).ok(); }

}  // namespace

NegotiationServer::NegotiationServer(NegotiationServerConfig config, const Clock& clock, KeyHandler on_key)
    : config_(std::move(config)), clock_(clock), on_key_(std::move(on_key)) {}

NegotiationServer::~NegotiationServer() { *alive_ = false; }

Result<std::unique_ptr<NegotiationServer>, KeyMgmtError> NegotiationServer::create(NegotiationServerConfig config,
                                                                                   someip::Runtime& runtime,
                                                                                   const Clock& clock,
                                                                                   KeyHandler on_key) {
  if (config.schemes.empty() || config.max_sessions == 0) return Err(KeyMgmtError::kUnsupportedKem);
  std::unique_ptr<NegotiationServer> s(new NegotiationServer(std::move(config), clock, std::move(on_key)));
  for (auto scheme : s->config_.schemes) {
    auto sc = std::make_unique<Scheme>();
    sc->scheme = scheme;
    try {
      sc->kem = kex::make_kem(scheme);
    } catch (const std::exception&) {
      return Err(KeyMgmtError::kUnsupportedKem);
    }
    auto kp = sc->kem->generate();
    if (!kp.ok()) return Err(KeyMgmtError::kInternal);
    sc->key_pair = std::move(kp).value();
    auto sk = sc->kem->load_private_key(sc->key_pair.private_key.span());
    if (!sk.ok()) return Err(KeyMgmtError::kInternal);
    sc->private_key = std::move(sk).value();
    s->schemes_.push_back(std::move(sc));
  }
  NegotiationServer* self = s.get();
  std::weak_ptr<bool> alive = s->alive_;
  const auto& ids = s->config_.ids;
  auto wrap = [self, alive](void (NegotiationServer::*fn)(const someip::Request&, someip::Reply&)) {
    return [self, alive, fn](const someip::Request& r, someip::Reply& out) {
      if (auto a = alive.lock(); a && *a) {
        (self->*fn)(r, out);
      } else {
        out.code = someip::ReturnCode::kNotReady;
        out.payload.clear();
      }
    };
  };
  if (!runtime.set_method_handler(ids.service_id, ids.instance_id, ids.negotiate_hello_method,
                                  wrap(&NegotiationServer::on_hello))
           .ok() ||
      !runtime.set_method_handler(ids.service_id, ids.instance_id, ids.negotiate_exchange_method,
                                  wrap(&NegotiationServer::on_exchange))
           .ok())
    return Err(KeyMgmtError::kRuntime);
  return s;
}

void NegotiationServer::refuse(someip::Reply& reply, KeyMgmtError e) {
  ++counters_.refused[static_cast<std::size_t>(e)];
  reply.code = to_return_code(e);
  reply.payload.clear();
}

void NegotiationServer::on_hello(const someip::Request& req, someip::Reply& reply) {
  const TimePoint now = clock_.now();
  std::erase_if(sessions_, [&](const Session& s) { return s.expires <= now; });
  // The scheme id is the first body byte of the Hello frame; the responder
  // re-checks the whole frame.
  if (req.payload.size() < kex::kNegotiationFrameHeader + 1) return refuse(reply, KeyMgmtError::kMalformed);
  const std::uint8_t id = req.payload[kex::kNegotiationFrameHeader];
  Scheme* scheme = nullptr;
  for (auto& s : schemes_)
    if (kex::negotiation_scheme_id(s->scheme) == id) scheme = s.get();
  if (!scheme) return refuse(reply, KeyMgmtError::kUnsupportedKem);
  std::array<std::uint8_t, kex::kNegotiationNonceSize> nonce{};
  if (!fresh_nonce(nonce)) return refuse(reply, KeyMgmtError::kInternal);
  auto responder = std::make_unique<kex::NegotiationResponder>(*scheme->kem, scheme->key_pair.public_key,
                                                               *scheme->private_key, nonce);
  auto m2 = responder->on_hello(req.payload);
  if (!m2.ok()) return refuse(reply, from_negotiation(m2.error()));
  // Bounded: the oldest half-open session makes room.
  if (sessions_.size() >= config_.max_sessions) sessions_.erase(sessions_.begin());
  Session s;
  s.id = next_session_++;
  if (next_session_ == 0) next_session_ = 1;
  s.expires = now + config_.session_timeout;
  s.scheme = scheme;
  s.responder = std::move(responder);
  reply.code = someip::ReturnCode::kOk;
  reply.payload.assign(4 + m2->size(), 0);
  store_be32(reply.payload.data(), s.id);
  std::copy(m2->begin(), m2->end(), reply.payload.begin() + 4);
  sessions_.push_back(std::move(s));
  ++counters_.started;
}

void NegotiationServer::on_exchange(const someip::Request& req, someip::Reply& reply) {
  const TimePoint now = clock_.now();
  std::erase_if(sessions_, [&](const Session& s) { return s.expires <= now; });
  if (req.payload.size() < 4) return refuse(reply, KeyMgmtError::kMalformed);
  const std::uint32_t id = load_be32(req.payload.data());
  auto it = std::find_if(sessions_.begin(), sessions_.end(), [&](const Session& s) { return s.id == id; });
  if (it == sessions_.end()) return refuse(reply, KeyMgmtError::kUnknownSession);
  // Used once, whatever the outcome.
  Session s = std::move(*it);
  sessions_.erase(it);
  auto m4 = s.responder->on_key_exchange(req.payload.subspan(4));
  if (!m4.ok()) return refuse(reply, from_negotiation(m4.error()));
  ++counters_.completed;
  if (on_key_) on_key_(req.source, s.scheme->scheme, s.responder->session_key());
  reply.code = someip::ReturnCode::kOk;
  reply.payload = std::move(m4).value();
}

NegotiationClient::NegotiationClient(ServiceIds ids, someip::Runtime& runtime) : ids_(ids), runtime_(runtime) {}

NegotiationClient::~NegotiationClient() { *alive_ = false; }

void NegotiationClient::finish(Result<const SecretBytes*, KeyMgmtError> r) {
  if (r.ok()) {
    ++counters_.completed;
  } else {
    ++counters_.refused[static_cast<std::size_t>(r.error())];
  }
  // The initiator (and the key r points to) lives until the end of this call;
  // `done` may start the next negotiation.
  auto initiator = std::move(initiator_);
  Done done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(r));
}

Status<KeyMgmtError> NegotiationClient::start(kex::KemScheme scheme, Done done) {
  if (initiator_ || !runtime_.available(ids_.service_id, ids_.instance_id)) return Err(KeyMgmtError::kRuntime);
  try {
    if (!kem_ || kem_->scheme() != scheme) kem_ = kex::make_kem(scheme);
  } catch (const std::exception&) {
    return Err(KeyMgmtError::kUnsupportedKem);
  }
  std::array<std::uint8_t, kex::kNegotiationNonceSize> nonce{};
  if (!fresh_nonce(nonce)) return Err(KeyMgmtError::kInternal);
  auto ini = std::make_unique<kex::NegotiationInitiator>(*kem_, nonce);
  auto m1 = ini->start();
  if (!m1.ok()) return Err(from_negotiation(m1.error()));
  std::weak_ptr<bool> alive = alive_;
  auto sent = runtime_.request(ids_.service_id, ids_.instance_id, ids_.negotiate_hello_method, *m1,
                               [this, alive](const someip::ResponseResult& r) {
                                 if (auto a = alive.lock(); a && *a) on_public_key(r);
                               });
  if (!sent.ok()) return Err(KeyMgmtError::kRuntime);
  initiator_ = std::move(ini);
  done_ = std::move(done);
  ++counters_.started;
  return {};
}

void NegotiationClient::on_public_key(const someip::ResponseResult& r) {
  if (!initiator_) return;
  if (r.code != someip::ReturnCode::kOk) return finish(Err(from_return_code(r.code)));
  if (r.payload.size() < 4) return finish(Err(KeyMgmtError::kMalformed));
  const std::uint32_t session = load_be32(r.payload.data());
  auto m3 = initiator_->on_public_key(r.payload.subspan(4));
  if (!m3.ok()) return finish(Err(from_negotiation(m3.error())));
  std::vector<std::uint8_t> req(4 + m3->size());
  store_be32(req.data(), session);
  std::copy(m3->begin(), m3->end(), req.begin() + 4);
  std::weak_ptr<bool> alive = alive_;
  auto sent = runtime_.request(ids_.service_id, ids_.instance_id, ids_.negotiate_exchange_method, req,
                               [this, alive](const someip::ResponseResult& rr) {
                                 if (auto a = alive.lock(); a && *a) on_finished(rr);
                               });
  if (!sent.ok()) return finish(Err(KeyMgmtError::kRuntime));
}

void NegotiationClient::on_finished(const someip::ResponseResult& r) {
  if (!initiator_) return;
  if (r.code != someip::ReturnCode::kOk) return finish(Err(from_return_code(r.code)));
  auto st = initiator_->on_finished(r.payload);
  if (!st.ok()) return finish(Err(from_negotiation(st.error())));
  finish(&initiator_->session_key());
}

}  // namespace layersec::keymgmt
