// The 4-step negotiation as sans-I/O objects: full runs for several KEMs and
// the failure paths (tampering, wrong order, wrong scheme, trailing bytes).
#include "layersec/kex/negotiation.h"

#include <gtest/gtest.h>

#include <vector>

namespace layersec::kex {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Pair {
  std::unique_ptr<Kem> kem;
  KemKeyPair kp;
  std::unique_ptr<KemPrivateKey> key;
};

Pair make_pair(KemScheme s) {
  Pair p;
  p.kem = make_kem(s);
  auto kp = p.kem->generate();
  if (!kp.ok()) std::abort();
  p.kp = std::move(kp).value();
  auto key = p.kem->load_private_key(p.kp.private_key.span());
  if (!key.ok()) std::abort();
  p.key = std::move(key).value();
  return p;
}

const Bytes kNonceI(32, 0xA1);
const Bytes kNonceR(32, 0xB2);

class NegotiationAllKems : public ::testing::TestWithParam<KemScheme> {};

TEST_P(NegotiationAllKems, FourStepsAgreeOnAKey) {
  Pair p = make_pair(GetParam());
  NegotiationInitiator ini(*p.kem, kNonceI);
  NegotiationResponder res(*p.kem, p.kp.public_key, *p.key, kNonceR);
  auto m1 = ini.start();
  ASSERT_TRUE(m1.ok());
  auto m2 = res.on_hello(*m1);
  ASSERT_TRUE(m2.ok());
  auto m3 = ini.on_public_key(*m2);
  ASSERT_TRUE(m3.ok());
  EXPECT_EQ(ini.state(), NegotiationInitiator::State::kAwaitFinished);
  EXPECT_TRUE(ini.session_key().empty());  // not released before Finished
  auto m4 = res.on_key_exchange(*m3);
  ASSERT_TRUE(m4.ok());
  ASSERT_TRUE(ini.on_finished(*m4).ok());
  ASSERT_EQ(ini.state(), NegotiationInitiator::State::kDone);
  ASSERT_EQ(res.state(), NegotiationResponder::State::kDone);
  ASSERT_EQ(ini.session_key().size(), 32u);
  EXPECT_TRUE(std::equal(ini.session_key().span().begin(), ini.session_key().span().end(),
                         res.session_key().span().begin(), res.session_key().span().end()));
}

INSTANTIATE_TEST_SUITE_P(Kex, NegotiationAllKems,
                         ::testing::Values(KemScheme::kMlKem768, KemScheme::kX25519, KemScheme::kEcdhP256,
                                           KemScheme::kRsa2048, KemScheme::kNtruEes613ep1,
                                           KemScheme::kHybridX25519MlKem768),
                         [](const auto& info) {
                           std::string n(scheme_name(info.param));
                           for (auto& c : n)
                             if (c == '-' || c == '+') c = '_';
                           return n;
                         });

TEST(Negotiation, TamperedCiphertextFailsAtFinished) {
  Pair p = make_pair(KemScheme::kMlKem768);
  NegotiationInitiator ini(*p.kem, kNonceI);
  NegotiationResponder res(*p.kem, p.kp.public_key, *p.key, kNonceR);
  auto m1 = ini.start();
  ASSERT_TRUE(m1.ok());
  auto m2 = res.on_hello(*m1);
  ASSERT_TRUE(m2.ok());
  auto m3 = ini.on_public_key(*m2);
  ASSERT_TRUE(m3.ok());
  Bytes bad = *m3;
  bad[20] ^= 0x01;  // inside the ciphertext: ML-KEM implicit rejection
  auto m4 = res.on_key_exchange(bad);
  ASSERT_TRUE(m4.ok());
  auto st = ini.on_finished(*m4);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), NegotiationError::kBadFinished);
  EXPECT_EQ(ini.state(), NegotiationInitiator::State::kFailed);
  EXPECT_TRUE(ini.session_key().empty());
}

TEST(Negotiation, TamperedFinishedIsRejected) {
  Pair p = make_pair(KemScheme::kX25519);
  NegotiationInitiator ini(*p.kem, kNonceI);
  NegotiationResponder res(*p.kem, p.kp.public_key, *p.key, kNonceR);
  auto m1 = ini.start();
  ASSERT_TRUE(m1.ok());
  auto m2 = res.on_hello(*m1);
  ASSERT_TRUE(m2.ok());
  auto m3 = ini.on_public_key(*m2);
  ASSERT_TRUE(m3.ok());
  auto m4 = res.on_key_exchange(*m3);
  ASSERT_TRUE(m4.ok());
  Bytes bad = *m4;
  bad.back() ^= 0x80;
  auto st = ini.on_finished(bad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), NegotiationError::kBadFinished);
  EXPECT_TRUE(ini.session_key().empty());
}

TEST(Negotiation, MalformedAndOutOfOrder) {
  Pair p = make_pair(KemScheme::kX25519);
  NegotiationResponder res(*p.kem, p.kp.public_key, *p.key, kNonceR);
  NegotiationInitiator ini(*p.kem, kNonceI);
  auto m1 = ini.start();
  ASSERT_TRUE(m1.ok());
  // A second start() is out of order.
  auto again = ini.start();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), NegotiationError::kUnexpectedMessage);
  // Trailing byte after the frame.
  Bytes trailing = *m1;
  trailing.push_back(0);
  {
    NegotiationResponder r2(*p.kem, p.kp.public_key, *p.key, kNonceR);
    auto out = r2.on_hello(trailing);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error(), NegotiationError::kMalformed);
    EXPECT_EQ(r2.state(), NegotiationResponder::State::kFailed);
  }
  // A KeyExchange before Hello.
  {
    NegotiationResponder r3(*p.kem, p.kp.public_key, *p.key, kNonceR);
    auto out = r3.on_key_exchange(*m1);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error(), NegotiationError::kUnexpectedMessage);
  }
  // A Hello for another scheme.
  {
    Pair other = make_pair(KemScheme::kMlKem512);
    NegotiationInitiator i2(*other.kem, kNonceI);
    auto h = i2.start();
    ASSERT_TRUE(h.ok());
    NegotiationResponder r4(*p.kem, p.kp.public_key, *p.key, kNonceR);
    auto out = r4.on_hello(*h);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error(), NegotiationError::kSchemeMismatch);
  }
  // A ciphertext of the wrong length.
  {
    NegotiationResponder r5(*p.kem, p.kp.public_key, *p.key, kNonceR);
    auto m2 = r5.on_hello(*m1);
    ASSERT_TRUE(m2.ok());
    const Bytes short_kx = {3, 0, 0, 0, 8, 0, 0, 0, 4, 1, 2, 3, 4};
    auto out = r5.on_key_exchange(short_kx);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error(), NegotiationError::kKemFailure);
  }
  // A nonce of the wrong size.
  NegotiationInitiator bad_nonce(*p.kem, Bytes(31, 1));
  auto s = bad_nonce.start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), NegotiationError::kBadNonce);
  EXPECT_EQ(negotiation_frame_size(*m1), m1->size());
  EXPECT_EQ(negotiation_frame_size(ByteSpan(*m1).first(4)), 0u);
}

}  // namespace
}  // namespace layersec::kex
