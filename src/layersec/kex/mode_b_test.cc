#include "layersec/kex/mode_b.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace layersec::kex {
namespace {

constexpr std::int64_t kNowS = 1'780'000'000;
constexpr std::uint16_t kService = 0x1234;
constexpr std::uint16_t kGroup = 0x0001;
const TimePoint kT0 = TimePoint::from_ns(kNowS * 1'000'000'000LL);

Identity must(Result<Identity, PkiError> r) {
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

struct Nodes {
  Identity ca, publisher, sub_rsa, sub_p256, sub_ed, unauthorised, expired, foreign_ca, foreign,
      wrong_service_publisher;
  TrustStore trust;
};

// The same RSA key under another certificate (RSA key generation is the slow
// part of these tests, so the RSA-2048 key is generated once).
Identity reuse_key(const Identity& ca, const PrivateKey& key, IssueOptions o) {
  auto pem = key.to_pem();
  EXPECT_TRUE(pem.ok());
  auto copy = PrivateKey::from_pem(pem->span());
  EXPECT_TRUE(copy.ok());
  auto cert = issue_certificate_for_key(ca, key.public_key(), o);
  EXPECT_TRUE(cert.ok());
  return Identity{std::move(cert).value(), std::move(copy).value()};
}

const Nodes& nodes() {
  static const Nodes* n = [] {
    auto* out = new Nodes;
    const Validity year = Validity::days_from(kNowS, 365);
    out->ca = must(create_ca({"vehicle-ca", CaKind::kVehicle, KeyAlgorithm::kEcdsaP256,
                              Validity::days_from(kNowS, 3650)}));
    out->publisher = must(issue_certificate(out->ca, {"gateway", {kService}, KeyAlgorithm::kEcdsaP256, year}));
    out->sub_rsa = must(issue_certificate(out->ca, {"ecu-rsa", {kService}, KeyAlgorithm::kRsa2048, year}));
    out->sub_p256 = must(issue_certificate(out->ca, {"ecu-p256", {kService}, KeyAlgorithm::kEcdsaP256, year}));
    out->sub_ed = must(issue_certificate(out->ca, {"ecu-ed", {kService, 0x5678}, KeyAlgorithm::kEd25519, year}));
    out->unauthorised = reuse_key(out->ca, out->sub_rsa.key, {"ecu-other", {0x9999}, KeyAlgorithm::kRsa2048, year});
    out->expired = reuse_key(out->ca, out->sub_rsa.key, {"ecu-old", {kService}, KeyAlgorithm::kRsa2048,
                                                         {kNowS - 100 * 86400, kNowS - 86400}});
    out->foreign_ca = must(create_ca({"other-ca", CaKind::kVehicle, KeyAlgorithm::kEd25519,
                                      Validity::days_from(kNowS, 3650)}));
    out->foreign = reuse_key(out->foreign_ca, out->sub_rsa.key, {"intruder", {kService}, KeyAlgorithm::kRsa2048, year});
    out->wrong_service_publisher =
        must(issue_certificate(out->ca, {"rogue-gw", {0x5678}, KeyAlgorithm::kEd25519, year}));
    auto t = TrustStore::create(std::span<const Certificate>(&out->ca.certificate, 1));
    EXPECT_TRUE(t.ok());
    out->trust = std::move(t).value();
    return out;
  }();
  return *n;
}

// Only one test needs an RSA-3072 key; generate it there.
const Identity& sub_rsa3072() {
  static const Identity* id = new Identity(must(issue_certificate(
      nodes().ca, {"ecu-rsa3072", {kService}, KeyAlgorithm::kRsa3072, Validity::days_from(kNowS, 365)})));
  return *id;
}

std::unique_ptr<ModeBSubscriber> subscriber(const Identity& id, ModeBConfig cfg = {}) {
  auto s = ModeBSubscriber::create(cfg, id, nodes().trust);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}
std::unique_ptr<ModeBPublisher> publisher(ModeBConfig cfg = {}, std::vector<KemScheme> allowed = {},
                                          const Identity* id = nullptr) {
  auto p = ModeBPublisher::create(cfg, id ? *id : nodes().publisher, nodes().trust, std::move(allowed));
  EXPECT_TRUE(p.ok());
  return std::move(p).value();
}
std::vector<std::uint8_t> ok(Result<std::vector<std::uint8_t>, ModeBError> r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : to_string(r.error()));
  return r.ok() ? std::move(r).value() : std::vector<std::uint8_t>{};
}
template <class T>
ModeBError err(const Result<T, ModeBError>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? ModeBError::kBackend : r.error();
}
std::vector<std::uint8_t> bytes_of(const SecretBytes& s) { return {s.span().begin(), s.span().end()}; }

// Runs a whole handshake and checks both ends hold the same key.
void full_handshake(const Identity& sub_id, ModeBConfig cfg) {
  auto sub = subscriber(sub_id, cfg);
  auto pub = publisher(cfg);
  const auto req = ok(sub->start(kService, kGroup, kT0));
  EXPECT_EQ(sub->state(), ModeBSubscriber::State::kAwaitingDelivery);
  auto accepted = pub->on_request(req, kT0 + Duration::milliseconds(1));
  ASSERT_TRUE(accepted.ok()) << to_string(accepted.error());
  EXPECT_EQ(accepted->service_id, kService);
  EXPECT_EQ(accepted->subscriber, sub_id.certificate.info().common_name);
  const SecretBytes key(std::vector<std::uint8_t>(cfg.key_size, 0x3C));
  const auto del = ok(pub->deliver(accepted->handle, key, 77, kT0 + Duration::milliseconds(2)));
  EXPECT_EQ(pub->session_state(accepted->handle), ModeBPublisher::SessionState::kAwaitingConfirm);
  const auto conf = ok(sub->on_delivery(del, kT0 + Duration::milliseconds(3)));
  ASSERT_EQ(sub->state(), ModeBSubscriber::State::kEstablished);
  EXPECT_EQ(sub->key_id(), 77u);
  EXPECT_EQ(bytes_of(sub->key()), bytes_of(key));
  auto act = pub->on_confirm(conf, kT0 + Duration::milliseconds(4));
  ASSERT_TRUE(act.ok()) << to_string(act.error());
  EXPECT_EQ(act->key_id, 77u);
  EXPECT_EQ(bytes_of(act->key), bytes_of(key));
  EXPECT_EQ(act->subscriber_fingerprint, sub_id.certificate.info().sha256_fingerprint);
  EXPECT_EQ(pub->pending(), 0u);
}

TEST(ModeBTest, FullHandshakeRsa2048CertificateKeyIsTheKemKey) {
  ModeBConfig cfg;  // defaults: rsa-2048, HMAC-SHA256, 32-byte key
  full_handshake(nodes().sub_rsa, cfg);
}

TEST(ModeBTest, FullHandshakeRsa3072AndCmacConfirmation) {
  ModeBConfig cfg;
  cfg.kem = KemScheme::kRsa3072;
  cfg.confirm_mac = crypto::MacAlgorithm::kCmacAes256;
  cfg.key_size = 16;
  full_handshake(sub_rsa3072(), cfg);
}

TEST(ModeBTest, FullHandshakeWithEveryOtherKem) {
  for (const KemScheme s : {KemScheme::kX25519, KemScheme::kEcdhP256, KemScheme::kEcdhP521,
                            KemScheme::kMlKem512, KemScheme::kMlKem768, KemScheme::kMlKem1024,
                            KemScheme::kHybridX25519MlKem768, KemScheme::kNtruEes613ep1}) {
    SCOPED_TRACE(std::string(scheme_name(s)));
    ModeBConfig cfg;
    cfg.kem = s;
    full_handshake(nodes().sub_p256, cfg);
    full_handshake(nodes().sub_ed, cfg);
  }
}

TEST(ModeBTest, RespondGeneratesFreshKeysAndIds) {
  auto pub = publisher();
  std::vector<std::vector<std::uint8_t>> keys;
  for (int i = 0; i < 2; ++i) {
    auto sub = subscriber(nodes().sub_rsa);
    const auto req = ok(sub->start(kService, kGroup, kT0));
    const auto del = ok(pub->respond(req, kT0));
    const auto conf = ok(sub->on_delivery(del, kT0));
    auto act = pub->on_confirm(conf, kT0);
    ASSERT_TRUE(act.ok());
    EXPECT_EQ(act->key_id, static_cast<std::uint32_t>(i + 1));
    EXPECT_EQ(bytes_of(act->key), bytes_of(sub->key()));
    keys.push_back(bytes_of(act->key));
  }
  EXPECT_NE(keys[0], keys[1]);
}

TEST(ModeBTest, RsaKemMustMatchTheCertificateKey) {
  ModeBConfig cfg;
  cfg.kem = KemScheme::kRsa3072;
  EXPECT_EQ(err(ModeBSubscriber::create(cfg, nodes().sub_rsa, nodes().trust)), ModeBError::kKemKeyMismatch);
  EXPECT_EQ(err(ModeBSubscriber::create({}, nodes().sub_p256, nodes().trust)), ModeBError::kKemKeyMismatch);
  // A publisher expecting rsa-3072 refuses a request claiming rsa-3072 from a 2048-bit certificate.
  auto sub = subscriber(nodes().sub_rsa);
  auto req = ok(sub->start(kService, kGroup, kT0));
  req[6] = kem_wire_id(KemScheme::kRsa3072);
  auto pub = publisher(cfg);
  EXPECT_EQ(err(pub->on_request(req, kT0)), ModeBError::kKemKeyMismatch);
}

// ------------------------------------------------------------ request checks

TEST(ModeBTest, ReplayedRequestIsRejected) {
  auto sub = subscriber(nodes().sub_rsa);
  auto pub = publisher();
  const auto req = ok(sub->start(kService, kGroup, kT0));
  ASSERT_TRUE(pub->on_request(req, kT0).ok());
  EXPECT_EQ(err(pub->on_request(req, kT0 + Duration::milliseconds(500))), ModeBError::kReplay);
  // Once the timestamp is out of the window the replay is stale instead.
  EXPECT_EQ(err(pub->on_request(req, kT0 + Duration::seconds(3))), ModeBError::kStale);
  EXPECT_EQ(pub->pending(), 1u);  // the first request is still pending (5 s timeout)
}

TEST(ModeBTest, StaleAndFutureRequestsAreRejected) {
  auto sub = subscriber(nodes().sub_rsa);
  auto pub = publisher();
  const auto req = ok(sub->start(kService, kGroup, kT0));
  EXPECT_EQ(err(pub->on_request(req, kT0 + Duration::milliseconds(2001))), ModeBError::kStale);
  EXPECT_EQ(err(pub->on_request(req, kT0 - Duration::milliseconds(2001))), ModeBError::kStale);
  EXPECT_EQ(pub->pending(), 0u);
  // Within the window it is accepted (the stale attempts left no trace).
  EXPECT_TRUE(pub->on_request(req, kT0 + Duration::milliseconds(1999)).ok());
}

TEST(ModeBTest, CertificateProblemsAreTypedAndReleaseNothing) {
  auto pub = publisher();
  auto check = [&](const Identity& id, ModeBError expected) {
    auto sub = subscriber(id);
    const auto req = ok(sub->start(kService, kGroup, kT0));
    EXPECT_EQ(err(pub->respond(req, kT0)), expected);
    EXPECT_EQ(pub->pending(), 0u);
  };
  check(nodes().unauthorised, ModeBError::kUnauthorisedService);
  check(nodes().expired, ModeBError::kCertExpired);
  check(nodes().foreign, ModeBError::kCertWrongCa);
  // Authorised for 0x5678 too, but not for a third service.
  ModeBConfig cfg;
  cfg.kem = KemScheme::kX25519;
  auto sub = subscriber(nodes().sub_ed, cfg);
  auto pub2 = publisher(cfg);
  EXPECT_EQ(err(pub2->on_request(ok(sub->start(0x4444, kGroup, kT0)), kT0)),
            ModeBError::kUnauthorisedService);
}

TEST(ModeBTest, KemPolicyAndVersionAndType) {
  ModeBConfig cfg;
  cfg.kem = KemScheme::kX25519;
  auto sub = subscriber(nodes().sub_p256, cfg);
  auto pub = publisher();  // only rsa-2048 allowed
  auto req = ok(sub->start(kService, kGroup, kT0));
  EXPECT_EQ(err(pub->on_request(req, kT0)), ModeBError::kUnsupportedKem);
  auto pub_any = publisher({}, {KemScheme::kRsa2048, KemScheme::kX25519});
  auto v2 = req;
  v2[0] = 2;
  EXPECT_EQ(err(pub_any->on_request(v2, kT0)), ModeBError::kUnsupportedVersion);
  auto confirm_type = req;
  confirm_type[1] = 3;
  EXPECT_EQ(err(pub_any->on_request(confirm_type, kT0)), ModeBError::kUnexpectedMessage);
  auto bad_mac = req;
  bad_mac[7] = 9;
  EXPECT_EQ(err(pub_any->on_request(bad_mac, kT0)), ModeBError::kUnsupportedKem);
  EXPECT_TRUE(pub_any->on_request(req, kT0).ok());
}

TEST(ModeBTest, MalformedRequests) {
  auto sub = subscriber(nodes().sub_rsa);
  auto pub = publisher();
  const auto req = ok(sub->start(kService, kGroup, kT0));
  for (std::size_t n = 0; n < req.size(); n += 7) {
    const auto e = err(pub->on_request(ByteSpan(req).first(n), kT0));
    EXPECT_EQ(e, ModeBError::kMalformed) << n;
  }
  auto trailing = req;
  trailing.push_back(0);
  EXPECT_EQ(err(pub->on_request(trailing, kT0)), ModeBError::kMalformed);
  EXPECT_EQ(pub->pending(), 0u);
}

TEST(ModeBTest, EveryByteOfASignedRequestIsProtected) {
  ModeBConfig cfg;
  cfg.kem = KemScheme::kX25519;
  auto sub = subscriber(nodes().sub_ed, cfg);
  auto pub = publisher(cfg);
  const auto req = ok(sub->start(kService, kGroup, kT0));
  for (std::size_t i = 0; i < req.size(); ++i) {
    auto t = req;
    t[i] ^= 0x01;
    auto r = pub->on_request(t, kT0);
    ASSERT_FALSE(r.ok()) << "byte " << i;
  }
  EXPECT_EQ(pub->pending(), 0u);
  EXPECT_TRUE(pub->on_request(req, kT0).ok());
}

TEST(ModeBTest, TamperedUnsignedRsaRequestIsCaughtByTheTranscript) {
  // RSA requests are unsigned (as in the paper); a changed nonce or time is
  // accepted by the publisher but the subscriber then rejects the delivery.
  auto sub = subscriber(nodes().sub_rsa);
  auto pub = publisher();
  const auto req = ok(sub->start(kService, kGroup, kT0));
  auto t = req;
  t[20] ^= 0x80;  // inside nonce_S
  const auto del = ok(pub->respond(t, kT0));
  EXPECT_EQ(err(sub->on_delivery(del, kT0)), ModeBError::kReplay);
  auto t2 = req;
  t2[15] ^= 0x01;  // timestamp, 1 ns off
  const auto del2 = ok(pub->respond(t2, kT0));
  EXPECT_EQ(err(sub->on_delivery(del2, kT0)), ModeBError::kBadSignature);
  EXPECT_EQ(sub->state(), ModeBSubscriber::State::kAwaitingDelivery);
}

TEST(ModeBTest, TooManyPending) {
  ModeBConfig cfg;
  cfg.max_pending = 2;
  auto pub = publisher(cfg);
  for (int i = 0; i < 2; ++i) {
    auto sub = subscriber(nodes().sub_rsa);
    EXPECT_TRUE(pub->on_request(ok(sub->start(kService, kGroup, kT0)), kT0).ok());
  }
  auto sub = subscriber(nodes().sub_rsa);
  const auto req = ok(sub->start(kService, kGroup, kT0));
  EXPECT_EQ(err(pub->on_request(req, kT0)), ModeBError::kTooManyPending);
  // Pending handshakes expire after the response timeout.
  const TimePoint later = kT0 + Duration::seconds(5) + Duration::nanoseconds(1);
  EXPECT_EQ(err(pub->on_request(req, later)), ModeBError::kStale);
  EXPECT_EQ(pub->pending(), 0u);
  auto sub2 = subscriber(nodes().sub_rsa);
  EXPECT_TRUE(pub->on_request(ok(sub2->start(kService, kGroup, later)), later).ok());
}

// ------------------------------------------------------------ delivery checks

struct Pair {
  std::unique_ptr<ModeBSubscriber> sub;
  std::unique_ptr<ModeBPublisher> pub;
  std::vector<std::uint8_t> req, del;
};
Pair delivered(ModeBConfig cfg = {}, const Identity* sub_id = nullptr, const Identity* pub_id = nullptr) {
  Pair p;
  p.sub = subscriber(sub_id ? *sub_id : nodes().sub_rsa, cfg);
  p.pub = publisher(cfg, {}, pub_id);
  p.req = ok(p.sub->start(kService, kGroup, kT0));
  p.del = ok(p.pub->respond(p.req, kT0));
  return p;
}

TEST(ModeBTest, EveryByteOfTheDeliveryIsProtected) {
  Pair p = delivered();
  for (std::size_t i = 0; i < p.del.size(); ++i) {
    auto t = p.del;
    t[i] ^= 0x04;
    auto r = p.sub->on_delivery(t, kT0);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    ASSERT_EQ(p.sub->state(), ModeBSubscriber::State::kAwaitingDelivery);
  }
  // Field-specific reasons.
  auto service = p.del;
  service[3] ^= 1;
  EXPECT_EQ(err(p.sub->on_delivery(service, kT0)), ModeBError::kWrongTranscript);
  auto nonce = p.del;
  nonce[20] ^= 1;
  EXPECT_EQ(err(p.sub->on_delivery(nonce, kT0)), ModeBError::kReplay);
  auto key_id = p.del;
  key_id[83] ^= 1;
  EXPECT_EQ(err(p.sub->on_delivery(key_id, kT0)), ModeBError::kBadSignature);
  auto sig = p.del;
  sig.back() ^= 1;
  EXPECT_EQ(err(p.sub->on_delivery(sig, kT0)), ModeBError::kBadSignature);
  // The genuine delivery still completes.
  EXPECT_TRUE(p.sub->on_delivery(p.del, kT0).ok());
}

TEST(ModeBTest, DeliveryFromAnEarlierHandshakeIsAReplay) {
  Pair first = delivered();
  auto conf = ok(first.sub->on_delivery(first.del, kT0));
  ASSERT_TRUE(first.pub->on_confirm(conf, kT0).ok());
  // Replayed to the established subscriber: not expected any more.
  EXPECT_EQ(err(first.sub->on_delivery(first.del, kT0)), ModeBError::kUnexpectedMessage);
  // Replayed into a new handshake: carries the old nonce_S.
  ok(first.sub->start(kService, kGroup, kT0 + Duration::seconds(1)));
  EXPECT_EQ(err(first.sub->on_delivery(first.del, kT0 + Duration::seconds(1))), ModeBError::kReplay);
  EXPECT_EQ(first.sub->state(), ModeBSubscriber::State::kAwaitingDelivery);
}

TEST(ModeBTest, StaleDelivery) {
  Pair p = delivered();
  // After the subscriber's response timeout.
  EXPECT_EQ(err(p.sub->on_delivery(p.del, kT0 + Duration::seconds(6))), ModeBError::kStale);
  // Timestamp outside the window although the wait has not ended.
  ModeBConfig cfg;
  cfg.response_timeout = Duration::seconds(60);
  Pair q = delivered(cfg);
  EXPECT_EQ(err(q.sub->on_delivery(q.del, kT0 + Duration::seconds(3))), ModeBError::kStale);
  EXPECT_TRUE(q.sub->on_delivery(q.del, kT0 + Duration::seconds(1)).ok());
}

TEST(ModeBTest, PublisherMustBeTrustedAndAuthorised) {
  Pair rogue = delivered({}, nullptr, &nodes().wrong_service_publisher);
  EXPECT_EQ(err(rogue.sub->on_delivery(rogue.del, kT0)), ModeBError::kUnauthorisedService);
  Pair foreign = delivered({}, nullptr, &nodes().foreign);
  EXPECT_EQ(err(foreign.sub->on_delivery(foreign.del, kT0)), ModeBError::kCertWrongCa);
}

TEST(ModeBTest, DeliverChecksItsArguments) {
  auto sub = subscriber(nodes().sub_rsa);
  auto pub = publisher();
  auto acc = pub->on_request(ok(sub->start(kService, kGroup, kT0)), kT0);
  ASSERT_TRUE(acc.ok());
  const SecretBytes short_key(std::vector<std::uint8_t>(16, 1));
  EXPECT_EQ(err(pub->deliver(acc->handle, short_key, 1, kT0)), ModeBError::kBadArgument);
  const SecretBytes key(std::vector<std::uint8_t>(32, 1));
  EXPECT_EQ(err(pub->deliver(acc->handle + 1, key, 1, kT0)), ModeBError::kUnknownSession);
  ok(pub->deliver(acc->handle, key, 1, kT0));
  EXPECT_EQ(err(pub->deliver(acc->handle, key, 1, kT0)), ModeBError::kUnexpectedMessage);
}

// A publisher that signs what it sends but gets the KEM part wrong: the
// subscriber's KEM and key-unwrap checks are what stop it.
std::vector<std::uint8_t> resigned_delivery(const KeyDeliveryView& v, ByteSpan ct, ByteSpan wrapped,
                                            ByteSpan request, const PrivateKey& key) {
  std::vector<std::uint8_t> out(4096);
  ByteWriter w(out);
  w.u8(v.header.version);
  w.u8(2);
  w.u16(v.header.service_id);
  w.u16(v.header.eventgroup_id);
  w.u8(v.header.kem_id);
  w.u8(v.header.mac_id);
  w.u64(v.timestamp_ns);
  w.bytes(v.nonce_s);
  w.bytes(v.nonce_p);
  w.u32(v.key_id);
  w.u16(static_cast<std::uint16_t>(v.certificate.size()));
  w.bytes(v.certificate);
  w.u16(static_cast<std::uint16_t>(ct.size()));
  w.bytes(ct);
  w.u8(static_cast<std::uint8_t>(wrapped.size()));
  w.bytes(wrapped);
  const std::string label = "layersec mode-b v1 delivery";
  const ByteSpan parts[] = {ByteSpan(reinterpret_cast<const std::uint8_t*>(label.data()), label.size()),
                            request, w.written()};
  auto sig = sign(key, parts);
  EXPECT_TRUE(sig.ok());
  w.u16(static_cast<std::uint16_t>(sig->size()));
  w.bytes(*sig);
  EXPECT_TRUE(w.ok());
  out.resize(w.size());
  return out;
}

TEST(ModeBTest, WrongLengthOrBogusCiphertextAndBadWrapReleaseNoKey) {
  Pair p = delivered();
  auto v = parse_key_delivery(p.del);
  ASSERT_TRUE(v.ok());
  const Identity& pub_id = nodes().publisher;
  // Sanity: re-signing the unchanged fields reproduces an acceptable delivery.
  {
    Pair q = delivered();
    auto vq = parse_key_delivery(q.del);
    ASSERT_TRUE(vq.ok());
    const auto same = resigned_delivery(*vq, vq->ciphertext, vq->wrapped_key, q.req, pub_id.key);
    EXPECT_TRUE(q.sub->on_delivery(same, kT0).ok());
  }
  const auto short_ct = resigned_delivery(*v, v->ciphertext.first(v->ciphertext.size() - 1),
                                          v->wrapped_key, p.req, pub_id.key);
  EXPECT_EQ(err(p.sub->on_delivery(short_ct, kT0)), ModeBError::kKemFailure);
  std::vector<std::uint8_t> long_ct(v->ciphertext.begin(), v->ciphertext.end());
  long_ct.push_back(0);
  EXPECT_EQ(err(p.sub->on_delivery(resigned_delivery(*v, long_ct, v->wrapped_key, p.req, pub_id.key), kT0)),
            ModeBError::kKemFailure);
  std::vector<std::uint8_t> bogus(v->ciphertext.size(), 0x42);
  EXPECT_EQ(err(p.sub->on_delivery(resigned_delivery(*v, bogus, v->wrapped_key, p.req, pub_id.key), kT0)),
            ModeBError::kKemFailure);
  std::vector<std::uint8_t> wrap(v->wrapped_key.begin(), v->wrapped_key.end());
  wrap[5] ^= 1;
  EXPECT_EQ(err(p.sub->on_delivery(resigned_delivery(*v, v->ciphertext, wrap, p.req, pub_id.key), kT0)),
            ModeBError::kKeyUnwrapFailed);
  std::vector<std::uint8_t> short_wrap(v->wrapped_key.begin(), v->wrapped_key.end() - 8);
  EXPECT_EQ(err(p.sub->on_delivery(resigned_delivery(*v, v->ciphertext, short_wrap, p.req, pub_id.key), kT0)),
            ModeBError::kMalformed);
  EXPECT_EQ(p.sub->state(), ModeBSubscriber::State::kAwaitingDelivery);
  EXPECT_TRUE(p.sub->key().empty());
  // An ML-KEM delivery with a wrong-length ciphertext.
  ModeBConfig cfg;
  cfg.kem = KemScheme::kMlKem768;
  Pair m = delivered(cfg, &nodes().sub_p256);
  auto vm = parse_key_delivery(m.del);
  ASSERT_TRUE(vm.ok());
  EXPECT_EQ(vm->ciphertext.size(), 1088u);
  EXPECT_EQ(err(m.sub->on_delivery(resigned_delivery(*vm, vm->ciphertext.first(1000), vm->wrapped_key,
                                                     m.req, pub_id.key), kT0)),
            ModeBError::kKemFailure);
  // ML-KEM's implicit rejection turns a bogus ciphertext into a wrong key: the unwrap catches it.
  std::vector<std::uint8_t> flipped(vm->ciphertext.begin(), vm->ciphertext.end());
  flipped[100] ^= 1;
  EXPECT_EQ(err(m.sub->on_delivery(resigned_delivery(*vm, flipped, vm->wrapped_key, m.req, pub_id.key), kT0)),
            ModeBError::kKeyUnwrapFailed);
  EXPECT_TRUE(m.sub->on_delivery(m.del, kT0).ok());
}

// ------------------------------------------------------------ confirmation checks

TEST(ModeBTest, KeyIsActivatedOnlyByAValidConfirmation) {
  Pair p = delivered();
  const auto conf = ok(p.sub->on_delivery(p.del, kT0));
  for (std::size_t i = 0; i < conf.size(); ++i) {
    auto t = conf;
    t[i] ^= 0x10;
    auto r = p.pub->on_confirm(t, kT0);
    ASSERT_FALSE(r.ok()) << "byte " << i;
  }
  auto tag = conf;
  tag.back() ^= 1;
  EXPECT_EQ(err(p.pub->on_confirm(tag, kT0)), ModeBError::kBadConfirmation);
  auto key_id = conf;
  key_id[11] ^= 1;
  EXPECT_EQ(err(p.pub->on_confirm(key_id, kT0)), ModeBError::kWrongTranscript);
  auto nonce = conf;
  nonce[20] ^= 1;
  EXPECT_EQ(err(p.pub->on_confirm(nonce, kT0)), ModeBError::kUnknownSession);
  EXPECT_EQ(err(p.pub->on_confirm(ByteSpan(conf).first(conf.size() - 1), kT0)), ModeBError::kMalformed);
  EXPECT_EQ(p.pub->pending(), 1u);
  auto act = p.pub->on_confirm(conf, kT0);
  ASSERT_TRUE(act.ok());
  // A replayed confirmation activates nothing.
  EXPECT_EQ(err(p.pub->on_confirm(conf, kT0 + Duration::seconds(1))), ModeBError::kReplay);
}

TEST(ModeBTest, LateConfirmationIsStale) {
  Pair p = delivered();
  const auto conf = ok(p.sub->on_delivery(p.del, kT0));
  EXPECT_EQ(err(p.pub->on_confirm(conf, kT0 + Duration::seconds(6))), ModeBError::kStale);
  EXPECT_EQ(p.pub->pending(), 0u);
  EXPECT_EQ(err(p.pub->on_confirm(conf, kT0 + Duration::seconds(6))), ModeBError::kUnknownSession);
}

TEST(ModeBTest, ConfirmationFromAnotherHandshakeIsRejected) {
  // Two subscribers, one publisher: swapping confirmations fails.
  auto pub = publisher();
  auto a = subscriber(nodes().sub_rsa);
  auto c = subscriber(nodes().sub_rsa);
  const auto da = ok(pub->respond(ok(a->start(kService, kGroup, kT0)), kT0));
  const auto dc = ok(pub->respond(ok(c->start(kService, kGroup, kT0)), kT0));
  auto ca = ok(a->on_delivery(da, kT0));
  auto cc = ok(c->on_delivery(dc, kT0));
  // Graft c's tag onto a's confirmation.
  auto mixed = ca;
  std::copy(cc.end() - 32, cc.end(), mixed.end() - 32);
  EXPECT_EQ(err(pub->on_confirm(mixed, kT0)), ModeBError::kBadConfirmation);
  EXPECT_TRUE(pub->on_confirm(ca, kT0).ok());
  EXPECT_TRUE(pub->on_confirm(cc, kT0).ok());
}

TEST(ModeBTest, ParsersRejectWrongTypesAndTrailingBytes) {
  Pair p = delivered();
  EXPECT_EQ(err(parse_key_request(p.del)), ModeBError::kUnexpectedMessage);
  EXPECT_EQ(err(parse_key_delivery(p.req)), ModeBError::kUnexpectedMessage);
  auto h = parse_mode_b_header(p.del);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->type, ModeBMessageType::kKeyDelivery);
  auto d = parse_key_delivery(p.del);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ciphertext.size(), 256u);
  EXPECT_EQ(d->wrapped_key.size(), 40u);
  auto trailing = p.del;
  trailing.push_back(1);
  EXPECT_EQ(err(parse_key_delivery(trailing)), ModeBError::kMalformed);
  EXPECT_EQ(err(parse_mode_b_header({})), ModeBError::kMalformed);
}

}  // namespace
}  // namespace layersec::kex
