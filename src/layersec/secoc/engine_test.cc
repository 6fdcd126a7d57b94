// Engine tests: vectors through verify(), vendor-profile vectors from a bare
// OpenSSL CMAC, Algorithm 1 and bitmap edge cases, typed rejections, key
// rollover, group keys, the AEAD profile and counter exhaustion.
#include "layersec/secoc/engine.h"

#include <sys/stat.h>

#include <cstdio>

#include <openssl/evp.h>
#include <openssl/params.h>

#include <gtest/gtest.h>

#include "layersec/secoc/simulation.h"
#include "support/vectors.h"

namespace layersec::secoc {
namespace {

using layersec::testing::hex;

std::vector<std::uint8_t> bytes_of(std::initializer_list<int> l) {
  std::vector<std::uint8_t> v;
  for (int x : l) v.push_back(static_cast<std::uint8_t>(x));
  return v;
}

std::uint64_t be_number(const std::vector<std::uint8_t>& b) {
  std::uint64_t v = 0;
  for (auto x : b) v = (v << 8) | x;
  return v;
}

// Input for a verify at time t (every counter-freshness PDU here is time-bound).
RxInput at(TimePoint t) {
  RxInput in;
  in.now = t;
  return in;
}

// A receiver-only engine for one PDU with the given profile and a CMAC-128 key.
struct VectorReceiver {
  MemoryStateStore store;
  std::unique_ptr<Engine> engine;
  VectorReceiver(const PduProfile& p, const std::vector<std::uint8_t>& key, std::uint16_t data_id) {
    LinkOptions o;
    o.profile = p;
    o.pdu_data_id = data_id;
    EngineConfig c = link_receiver_config(o);
    auto e = Engine::start(c, store);
    EXPECT_TRUE(e.ok());
    engine = std::move(e).value();
    EXPECT_TRUE(engine->install_key(0, 1, SecretBytes(key), TimePoint{}).ok());
  }
};

TEST(EngineVectors, DerivedVectorsVerifyThroughTheEngine) {
  const auto j = layersec::testing::load_vector_json("secoc/cmac_secoc_vectors.json");
  int checked = 0;
  for (const auto& v : j["secoc_derived"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    if (v["freshness_trunc_bits"].get<int>() == 4) continue;  // Profile 3: FV not a JASPAR value; codec-tested
    PduProfile p = v["freshness_value_length_bits"].get<int>() == 0 ? PduProfile::profile2()
                                                                    : PduProfile::profile1();
    p.auth_pdu_header_length = static_cast<std::uint8_t>(v["secured_pdu_header_bytes"].get<int>());
    const std::uint16_t data_id = static_cast<std::uint16_t>(be_number(hex(v["data_id"])));
    VectorReceiver rx(p, hex(v["key"]), data_id);
    const std::uint64_t fv = be_number(hex(v["freshness_value_full"]));
    if (p.freshness.has_freshness()) {
      // FV64 = Trip16 | Reset16 | Msg32; make the vector's FV the next one.
      ASSERT_TRUE(rx.engine->set_rx_freshness(0, {fv >> 48, (fv >> 32) & 0xFFFF, (fv & 0xFFFFFFFF) - 1},
                                              TimePoint{}));
    }
    const auto secured = hex(v["secured_pdu"]);
    std::vector<std::uint8_t> out(secured.size());
    auto r = rx.engine->verify(0, secured, out, at(TimePoint{}));
    ASSERT_TRUE(r.ok()) << to_string(r.error());
    out.resize(*r);
    EXPECT_EQ(out, hex(v["authentic_pdu"]));
    if (p.freshness.has_freshness()) {
      EXPECT_EQ(rx.engine->rx_freshness(0).last.msg, fv & 0xFFFFFFFF);
      // The same PDU again is a replay.
      auto again = rx.engine->verify(0, secured, out, at(TimePoint{}));
      ASSERT_FALSE(again.ok());
      EXPECT_EQ(again.error(), Rejection::kReplay);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(EngineVectors, NegativeVectorIsAMacMismatchAndLeavesStateUnchanged) {
  const auto j = layersec::testing::load_vector_json("secoc/cmac_secoc_vectors.json");
  const auto& v = j["secoc_derived"][0];
  VectorReceiver rx(PduProfile::profile1(), hex(v["key"]), 0x0100);
  ASSERT_TRUE(rx.engine->set_rx_freshness(0, {0, 0, 0x101}, TimePoint{}));
  auto secured = hex(v["secured_pdu"]);
  secured[0] ^= 0x01;  // the negative case: bit 0 of the first PDU byte flipped
  std::vector<std::uint8_t> out(secured.size());
  const auto before = rx.engine->rx_freshness(0);
  auto r = rx.engine->verify(0, secured, out, at(TimePoint{}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), Rejection::kMacMismatch);
  EXPECT_EQ(rx.engine->rx_freshness(0).last, before.last);
  EXPECT_EQ(rx.engine->counters().rejected_for(Rejection::kMacMismatch), 1u);
  secured[0] ^= 0x01;
  ASSERT_TRUE(rx.engine->verify(0, secured, out, at(TimePoint{})).ok());
}

// CMAC-AES-256 straight from OpenSSL EVP_MAC over a hand-built input.
std::vector<std::uint8_t> bare_cmac256(const SecretBytes& key, const std::vector<std::uint8_t>& msg) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "CMAC", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  char cipher[] = "AES-256-CBC";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("cipher", cipher, 0), OSSL_PARAM_END};
  std::vector<std::uint8_t> tag(16);
  std::size_t len = 0;
  EXPECT_EQ(EVP_MAC_init(ctx, key.data(), key.size(), params), 1);
  EXPECT_EQ(EVP_MAC_update(ctx, msg.data(), msg.size()), 1);
  EXPECT_EQ(EVP_MAC_final(ctx, tag.data(), &len, tag.size()), 1);
  EXPECT_EQ(len, 16u);
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return tag;
}

TEST(EngineVectors, VendorProfileMatchesBareOpenSslCmac) {
  LinkOptions o;  // vendor profile: CMAC-AES256, 64-bit MAC, FV64 with 16 bits sent
  o.pdu_data_id = 0x1234;
  SimulatedLink link(o);
  const SecretBytes key = test_key(AuthAlgorithm::kCmacAes256, 1);
  for (std::size_t size : {0u, 1u, 8u, 64u, 256u, 1400u}) {
    SCOPED_TRACE(size);
    std::vector<std::uint8_t> payload(size);
    for (std::size_t i = 0; i < size; ++i) payload[i] = static_cast<std::uint8_t>(i * 13 + 1);
    const FreshnessCounters c = link.sender().next_tx_freshness(0);
    const std::uint64_t fv = (c.trip << 48) | (c.reset << 32) | c.msg;
    // DataToAuthenticator = DataId(BE) || Authentic I-PDU || FV64(BE).
    std::vector<std::uint8_t> dta = {0x12, 0x34};
    dta.insert(dta.end(), payload.begin(), payload.end());
    for (int i = 7; i >= 0; --i) dta.push_back(static_cast<std::uint8_t>(fv >> (8 * i)));
    const auto full = bare_cmac256(key, dta);
    std::vector<std::uint8_t> want = payload;
    want.push_back(static_cast<std::uint8_t>(fv >> 8));  // 16 LSBs of the FV
    want.push_back(static_cast<std::uint8_t>(fv));
    want.insert(want.end(), full.begin(), full.begin() + 8);  // 64 MSBs of the MAC
    const auto wire = link.send(payload);
    EXPECT_EQ(wire, want);
    std::vector<std::uint8_t> out;
    auto r = link.receive(wire, out);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*r)), payload);
  }
}

// --- Algorithm 1 through the engine --------------------------------------

struct StrictFixture : ::testing::Test {
  LinkOptions opts() {
    LinkOptions o;
    o.window = 32;
    return o;
  }
};

TEST_F(StrictFixture, LossesUpToWMinus2AreTransparentWMinus1AndWAreNot) {
  const std::uint8_t pl[4] = {1, 2, 3, 4};
  std::vector<std::uint8_t> out;
  for (std::uint32_t lost : {0u, 30u, 31u, 32u}) {
    SCOPED_TRACE(lost);
    SimulatedLink link(opts());
    ASSERT_TRUE(link.receive(link.send(pl), out).ok());
    for (std::uint32_t i = 0; i < lost; ++i) (void)link.send(pl);
    auto r = link.receive(link.send(pl), out);
    // Algorithm 1 line 2 accepts a gap (lost + 1) strictly below W.
    if (lost + 1 < 32) {
      EXPECT_TRUE(r.ok());
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error(), Rejection::kOutOfWindow);
      // Every later PDU of this reset cycle is rejected too ...
      auto r2 = link.receive(link.send(pl), out);
      ASSERT_FALSE(r2.ok());
      EXPECT_EQ(r2.error(), Rejection::kOutOfWindow);
      // ... until the next sync message starts a new cycle.
      link.advance(Duration::seconds(1));
      EXPECT_TRUE(link.receive(link.send(pl), out).ok());
    }
  }
}

TEST_F(StrictFixture, ReplayAndReorderAreRejected) {
  SimulatedLink link(opts());
  const std::uint8_t pl[3] = {9, 9, 9};
  std::vector<std::uint8_t> out;
  const auto a = link.send(pl);
  const auto b = link.send(pl);
  ASSERT_TRUE(link.receive(b, out).ok());
  auto late = link.receive(a, out);  // reordered: treated as loss
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error(), Rejection::kReplay);
  auto replay = link.receive(b, out);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error(), Rejection::kReplay);
  EXPECT_EQ(link.receiver().counters().rejected_for(Rejection::kReplay), 2u);
  EXPECT_EQ(link.receiver().counters().accepted, 1u);
}

TEST(EngineStrict, CounterWrapOfTheTransmittedBits) {
  LinkOptions o;
  o.profile = PduProfile::profile1();  // 8 FV bits on the wire: wraps every 256
  o.window = 32;
  SimulatedLink link(o);
  const std::uint8_t pl[2] = {1, 2};
  std::vector<std::uint8_t> out;
  for (int i = 1; i <= 250; ++i) ASSERT_TRUE(link.receive(link.send(pl), out).ok()) << i;
  // Lose 10 around the 256 boundary (msg 251..260), then 261 must be accepted.
  for (int i = 0; i < 10; ++i) (void)link.send(pl);
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  EXPECT_EQ(link.receiver().rx_freshness(0).last.msg, 261u);
  for (int i = 262; i <= 800; ++i) ASSERT_TRUE(link.receive(link.send(pl), out).ok()) << i;
}

// --- reorder-tolerant bitmap -----------------------------------------------

TEST(EngineBitmap, LateAcceptedOnceDuplicatesAndStaleRejected) {
  LinkOptions o;
  o.mode = FreshnessMode::kReorderTolerant;
  o.window = 32;
  SimulatedLink link(o);
  const std::uint8_t pl[1] = {7};
  std::vector<std::uint8_t> out;
  std::vector<std::vector<std::uint8_t>> sent;
  for (int i = 0; i < 40; ++i) sent.push_back(link.send(pl));  // msg 1..40
  ASSERT_TRUE(link.receive(sent[9], out).ok());    // msg 10 first
  ASSERT_TRUE(link.receive(sent[4], out).ok());    // late msg 5, within W: accepted
  auto dup = link.receive(sent[4], out);           // again: duplicate
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error(), Rejection::kReplay);
  ASSERT_TRUE(link.receive(sent[39], out).ok());   // msg 40 (gap 30 < W)
  EXPECT_EQ(link.receiver().rx_freshness(0).last.msg, 40u);
  ASSERT_TRUE(link.receive(sent[8], out).ok());    // msg 9: 40 - 9 = 31 < W
  auto stale = link.receive(sent[7], out);         // msg 8: 40 - 8 = 32 = W
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error(), Rejection::kOutOfWindow);
  // Forward jump of W or more is rejected as in strict mode.
  for (int i = 0; i < 31; ++i) (void)link.send(pl);  // msg 41..71
  auto far = link.receive(link.send(pl), out);       // msg 72: 72 - 40 = 32
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error(), Rejection::kOutOfWindow);
}

// --- typed rejections ------------------------------------------------------

TEST(EngineRejections, TypedAndCountedAndStateUnchanged) {
  SimulatedLink link(LinkOptions{});
  const std::uint8_t pl[16] = {};
  std::vector<std::uint8_t> out(64);
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  const auto before = link.receiver().rx_freshness(0);
  auto wire = link.send(pl);
  // Unknown PDU id.
  auto u = link.receiver().verify(5, wire, out);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error(), Rejection::kUnknownPdu);
  // Short.
  auto s = link.receiver().verify(0, ByteSpan(wire.data(), 9), out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), Rejection::kMalformed);
  // MAC mismatch (flip a MAC bit).
  auto bad = wire;
  bad.back() ^= 0x80;
  auto m = link.receiver().verify(0, bad, out, at(link.now()));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error(), Rejection::kMacMismatch);
  // Output buffer too small.
  std::vector<std::uint8_t> tiny(3);
  auto t = link.receiver().verify(0, wire, tiny, at(link.now()));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), Rejection::kBufferTooSmall);
  // Without the time, a time-bound PDU is stale (fail closed).
  auto notime = link.receiver().verify(0, wire, out);
  ASSERT_FALSE(notime.ok());
  EXPECT_EQ(notime.error(), Rejection::kStale);
  EXPECT_EQ(link.receiver().rx_freshness(0).last, before.last);
  ASSERT_TRUE(link.receiver().verify(0, wire, out, at(link.now())).ok());
  const auto& c = link.receiver().counters();
  EXPECT_EQ(c.rejected_for(Rejection::kUnknownPdu), 1u);
  EXPECT_EQ(c.rejected_for(Rejection::kMalformed), 1u);
  EXPECT_EQ(c.rejected_for(Rejection::kMacMismatch), 1u);
  EXPECT_EQ(c.accepted, 2u);
  EXPECT_EQ(link.receiver().pdu_counters(0).rejected_for(Rejection::kMacMismatch), 1u);
}

TEST(EngineRejections, KeyUnknownAndNotSynchronised) {
  LinkOptions o;
  MemoryStateStore s1, s2;
  auto tx = Engine::start(link_sender_config(o), s1);
  auto rx = Engine::start(link_receiver_config(o), s2);
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(rx.ok());
  std::vector<std::uint8_t> buf(64), out(64);
  const std::uint8_t pl[4] = {};
  auto p = (*tx)->protect(0, pl, buf);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), ProtectError::kKeyUnknown);
  ASSERT_TRUE((*tx)->install_key(0, 1, test_key(o.profile.algorithm, 1), TimePoint{}).ok());
  auto p2 = (*tx)->protect(0, pl, buf);
  ASSERT_TRUE(p2.ok());
  auto v = (*rx)->verify(0, ByteSpan(buf.data(), *p2), out);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error(), Rejection::kKeyUnknown);
  ASSERT_TRUE((*rx)->install_key(0, 1, test_key(o.profile.algorithm, 1), TimePoint{}).ok());
  auto v2 = (*rx)->verify(0, ByteSpan(buf.data(), *p2), out);  // no sync yet
  ASSERT_FALSE(v2.ok());
  EXPECT_EQ(v2.error(), Rejection::kOutOfWindow);
  EXPECT_EQ((*rx)->counters().rejected_for(Rejection::kKeyUnknown), 1u);
  auto up = (*tx)->protect(3, pl, buf);
  ASSERT_FALSE(up.ok());
  EXPECT_EQ(up.error(), ProtectError::kUnknownPdu);
}

// --- sync, lost sync, JASPAR ---------------------------------------------

TEST(EngineSync, ReplayedSyncRejectedAndLostSyncRecoveredWithSecondCandidate) {
  LinkOptions o;
  o.verify_attempts = 2;
  SimulatedLink link(o);
  const std::uint8_t pl[2] = {5, 6};
  std::vector<std::uint8_t> out;
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  // The next sync message is lost: the sender's reset cycle moves on.
  EXPECT_EQ(link.advance(Duration::seconds(1), /*deliver_sync=*/false), 1);
  const auto r = link.receive(link.send(pl), out);
  ASSERT_TRUE(r.ok());  // candidate 2: next reset cycle, MsgCnt 1
  EXPECT_EQ(link.receiver().counters().accepted_next_cycle, 1u);
  EXPECT_EQ(link.receiver().rx_freshness(0).last.reset, 2u);
}

TEST(EngineSync, ConfiguredAttemptsBoundHowManyLostSyncsAreRecovered) {
  const std::uint8_t pl[2] = {5, 6};
  std::vector<std::uint8_t> out;
  // Three sync messages lost in a row: the sender is three reset cycles on.
  for (std::uint8_t attempts : {1, 2, 3, 4}) {
    LinkOptions o;
    o.verify_attempts = attempts;
    SimulatedLink link(o);
    ASSERT_TRUE(link.receive(link.send(pl), out).ok());
    for (int k = 0; k < 3; ++k) link.advance(Duration::seconds(1), /*deliver_sync=*/false);
    const auto r = link.receive(link.send(pl), out);
    if (attempts >= 4) {
      ASSERT_TRUE(r.ok()) << unsigned{attempts};
      EXPECT_EQ(link.receiver().rx_freshness(0).last.reset, 4u);
      EXPECT_EQ(link.receiver().counters().accepted_next_cycle, 1u);
    } else {
      ASSERT_FALSE(r.ok()) << unsigned{attempts};
      EXPECT_EQ(link.receiver().rx_freshness(0).last.reset, 1u);  // state unchanged
    }
  }
}

TEST(EngineSync, SyncMessageReplayIsRejected) {
  LinkOptions o;
  MemoryStateStore s1, s2;
  auto tx = std::move(Engine::start(link_sender_config(o), s1)).value();
  auto rx = std::move(Engine::start(link_receiver_config(o), s2)).value();
  for (Engine* e : {tx.get(), rx.get()})
    ASSERT_TRUE(e->install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), TimePoint{}).ok());
  std::vector<std::uint8_t> sync(tx->sync_message_size());
  auto p = tx->poll(TimePoint{}, sync);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->sync_bytes, sync.size());
  EXPECT_EQ(p->next_deadline, TimePoint{} + Duration::seconds(1));
  auto first = rx->handle_sync(0, sync, TimePoint{});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, SyncOutcome::kAccepted);
  // A resend of the accepted cycle changes nothing and is not an attack.
  auto again = rx->handle_sync(0, sync, TimePoint{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, SyncOutcome::kDuplicate);
  auto bad = sync;
  bad[1] ^= 1;
  auto forged = rx->handle_sync(0, bad, TimePoint{});
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.error(), Rejection::kMacMismatch);
  // The cycle just before the accepted one is an authentic late copy (a
  // unicast copy overtaken by the next multicast sync): no change, not a
  // rejection. Two or more cycles back is a replay.
  std::vector<std::uint8_t> old_sync = sync;
  ASSERT_TRUE(tx->poll(TimePoint{} + Duration::seconds(1), sync).ok());
  ASSERT_TRUE(rx->handle_sync(0, sync, TimePoint{} + Duration::seconds(1)).ok());
  auto late = rx->handle_sync(0, old_sync, TimePoint{} + Duration::seconds(1));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(*late, SyncOutcome::kDuplicate);
  ASSERT_TRUE(tx->poll(TimePoint{} + Duration::seconds(2), sync).ok());
  ASSERT_TRUE(rx->handle_sync(0, sync, TimePoint{} + Duration::seconds(2)).ok());
  auto older = rx->handle_sync(0, old_sync, TimePoint{} + Duration::seconds(1));
  ASSERT_FALSE(older.ok());
  EXPECT_EQ(older.error(), Rejection::kReplay);
  auto unknown = rx->handle_sync(4, sync, TimePoint{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(), Rejection::kUnknownPdu);
  // The receiver persisted the accepted (trip, reset) floor.
  ASSERT_EQ(s2.state().rx.size(), 1u);
  EXPECT_EQ(s2.state().rx[0].trip, tx->trip());
  EXPECT_EQ(s2.state().rx[0].reset, 3u);
  // A restarted receiver refuses the older sync message, and the resend of
  // the persisted cycle does not synchronise it (its message counters were
  // not persisted: PDUs of that cycle recorded before the restart must not
  // become acceptable again). It waits for a newer cycle.
  auto rx2 = std::move(Engine::start(link_receiver_config(o), s2)).value();
  ASSERT_TRUE(rx2->install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), TimePoint{}).ok());
  auto old = rx2->handle_sync(0, old_sync, TimePoint{} + Duration::seconds(1));
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error(), Rejection::kReplay);
  auto same = rx2->handle_sync(0, sync, TimePoint{} + Duration::seconds(2));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, SyncOutcome::kDuplicate);
  EXPECT_FALSE(rx2->rx_freshness(0).synchronised);
}

TEST(EngineJaspar, Profile3RoundTripResetFlagAndLostSync) {
  LinkOptions o;
  o.profile = PduProfile::profile3();
  o.window = 4;  // 2 MsgCntLower bits on the wire
  o.verify_attempts = 2;
  SimulatedLink link(o);
  const std::uint8_t pl[4] = {0xa1, 0xa2, 0xa3, 0xa4};
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 50; ++i) {
    auto w = link.send(pl);
    ASSERT_EQ(w.size(), 8u);  // 4 + (4 + 28 bits)
    ASSERT_TRUE(link.receive(w, out).ok()) << i;
  }
  // Two losses (gap 3 < W=4) are tolerated; three are not.
  (void)link.send(pl);
  (void)link.send(pl);
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  for (int i = 0; i < 3; ++i) (void)link.send(pl);
  ASSERT_FALSE(link.receive(link.send(pl), out).ok());
  // Lost sync: the ResetFlag of the next cycle selects candidate 2.
  link.advance(Duration::seconds(1), false);
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  EXPECT_EQ(link.receiver().counters().accepted_next_cycle, 1u);
}

// --- keys -------------------------------------------------------------------

TEST(EngineKeys, RolloverAcceptsOldAndNewKeys) {
  SimulatedLink link(LinkOptions{});
  const std::uint8_t pl[8] = {};
  std::vector<std::uint8_t> out;
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  // Receiver learns key 2 first; the sender still uses key 1.
  ASSERT_TRUE(link.receiver().install_key(0, 2, test_key(AuthAlgorithm::kCmacAes256, 2), link.now()).ok());
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  EXPECT_EQ(link.receiver().counters().accepted_previous_key, 1u);
  const std::string d = link.receiver().describe();
  EXPECT_NE(d.find("current id 2, previous id 1 (rollover)"), std::string::npos) << d;
  // Sender switches.
  ASSERT_TRUE(link.sender().install_key(0, 2, test_key(AuthAlgorithm::kCmacAes256, 2), link.now()).ok());
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  EXPECT_EQ(link.receiver().counters().accepted_previous_key, 1u);
}

TEST(EngineKeys, ExpiryAndRetireAndDuplicateId) {
  LinkOptions o;
  MemoryStateStore s;
  auto e = std::move(Engine::start(link_receiver_config(o), s)).value();
  ASSERT_TRUE(e->install_key(0, 1, test_key(AuthAlgorithm::kCmacAes256, 1), TimePoint{}).ok());
  auto dup = e->install_key(0, 1, test_key(AuthAlgorithm::kCmacAes256, 1), TimePoint{});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error(), KeyError::kDuplicateKeyId);
  auto bad = e->install_key(0, 3, test_key(AuthAlgorithm::kCmacAes128, 3), TimePoint{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), KeyError::kBadLength);
  ASSERT_TRUE(e->install_key(0, 2, test_key(AuthAlgorithm::kCmacAes256, 2), TimePoint{}).ok());
  std::vector<std::uint8_t> sync;
  auto p = e->poll(TimePoint{} + Duration::seconds(10), sync);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->next_deadline, TimePoint{} + Duration::seconds(60));  // previous key expiry
  ASSERT_TRUE(e->poll(TimePoint{} + Duration::seconds(60), sync).ok());
  EXPECT_FALSE(e->retire_key(0, 1));  // expired
  EXPECT_TRUE(e->retire_key(0, 2));
}

TEST(EngineKeys, OldKeyRejectedAfterRolloverWindow) {
  LinkOptions o;
  SimulatedLink link(o);
  const std::uint8_t pl[8] = {};
  std::vector<std::uint8_t> out;
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
  ASSERT_TRUE(link.receiver().install_key(0, 2, test_key(AuthAlgorithm::kCmacAes256, 2), link.now()).ok());
  std::vector<std::uint8_t> sync;
  ASSERT_TRUE(link.receiver().poll(link.now() + Duration::seconds(61), sync).ok());
  auto r = link.receive(link.send(pl), out);  // sender still on key 1
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), Rejection::kMacMismatch);
}

TEST(EngineKeys, GroupKeyServesTwoReceivers) {
  LinkOptions o;
  SimulatedLink a(o);
  MemoryStateStore s;
  auto second = std::move(Engine::start(link_receiver_config(o), s)).value();
  ASSERT_TRUE(second->install_key(0, 1, test_key(o.profile.algorithm, 1), TimePoint{}).ok());
  ASSERT_TRUE(second->set_rx_freshness(0, {a.sender().trip(), a.sender().reset(), 0}, a.now()));
  const std::uint8_t pl[5] = {1, 2, 3, 4, 5};
  const auto wire = a.send(pl);
  std::vector<std::uint8_t> out(32), out2(32);
  EXPECT_TRUE(a.receive(wire, out).ok());
  EXPECT_TRUE(second->verify(0, wire, out2, at(a.now())).ok());
}

TEST(EngineKeys, KeyFileMustBe0600) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/secoc_key_test.hex";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("000102030405060708090a0b0c0d0e0f\n", f);
    std::fclose(f);
  }
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto r = load_key_file(path, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), KeyError::kFileMode);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  auto ok = load_key_file(path, 16);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[15], 0x0f);
  auto wrong = load_key_file(path, 32);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error(), KeyError::kFileFormat);
  std::remove(path.c_str());
}

// --- AEAD (non-standard) ---------------------------------------------------

TEST(EngineAead, SealsPayloadAndAuthenticates) {
  LinkOptions o;
  o.profile = PduProfile::aead_gcm();
  SimulatedLink link(o);
  const auto pl = bytes_of({'s', 'e', 'c', 'r', 'e', 't', '!', '!'});
  const auto wire = link.send(pl);
  ASSERT_EQ(wire.size(), 8u + 2 + 16);
  EXPECT_NE(std::vector<std::uint8_t>(wire.begin(), wire.begin() + 8), pl);  // encrypted
  const auto wire2 = link.send(pl);
  EXPECT_NE(std::vector<std::uint8_t>(wire.begin(), wire.begin() + 8),
            std::vector<std::uint8_t>(wire2.begin(), wire2.begin() + 8));  // fresh nonce
  std::vector<std::uint8_t> out;
  auto r = link.receive(wire, out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + 8), pl);
  auto tampered = wire2;
  tampered[0] ^= 1;
  auto t = link.receive(tampered, out);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), Rejection::kMacMismatch);
  EXPECT_TRUE(link.receive(wire2, out).ok());
  EXPECT_NE(PduProfile::aead_gcm().describe().find("NON-STANDARD"), std::string::npos);
}

// --- exhaustion ------------------------------------------------------------

TEST(EngineExhaustion, MessageCounterNeverWrapsAndResetCycleRecovers) {
  LinkOptions o;
  o.profile = PduProfile::vendor();
  o.profile.kind = ProfileKind::kCustom;
  o.profile.freshness = FreshnessLayout{16, 16, 8, 0, 4};  // 8-bit MsgCnt
  o.window = 8;
  SimulatedLink link(o);
  const std::uint8_t pl[1] = {0};
  std::vector<std::uint8_t> out(32);
  for (int i = 1; i <= 255; ++i) ASSERT_TRUE(link.receive(link.send(pl), out).ok()) << i;
  std::vector<std::uint8_t> buf(64);
  auto r = link.sender().protect(0, pl, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), ProtectError::kFreshnessExhausted);
  link.advance(Duration::seconds(1));  // new reset cycle via sync
  ASSERT_TRUE(link.receive(link.send(pl), out).ok());
}

TEST(EngineExhaustion, ResetCounterExhaustionBumpsPersistedTripThenTripExhaustionNeedsRekey) {
  LinkOptions o;
  EngineConfig c = link_sender_config(o);
  c.trip_bits = 2;
  c.reset_bits = 2;
  for (auto& p : c.tx_pdus) p.profile.freshness = FreshnessLayout{2, 2, 32, 0, 16};
  MemoryStateStore s;
  auto e = std::move(Engine::start(c, s)).value();
  EXPECT_EQ(e->trip(), 1u);
  ASSERT_TRUE(e->install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), TimePoint{}).ok());
  std::vector<std::uint8_t> sync(e->sync_message_size());
  TimePoint t{};
  ASSERT_TRUE(e->poll(t, sync).ok());
  for (int i = 0; i < 2; ++i) {
    t += Duration::seconds(1);
    ASSERT_TRUE(e->poll(t, sync).ok());
  }
  EXPECT_EQ(e->reset(), 3u);
  t += Duration::seconds(1);
  ASSERT_TRUE(e->poll(t, sync).ok());
  EXPECT_EQ(e->trip(), 2u);
  EXPECT_EQ(e->reset(), 1u);
  EXPECT_EQ(s.state().tx_trip, 2u);
  for (int i = 0; i < 3; ++i) {
    t += Duration::seconds(1);
    ASSERT_TRUE(e->poll(t, sync).ok());
  }
  EXPECT_EQ(e->trip(), 3u);
  for (int i = 0; i < 2; ++i) {
    t += Duration::seconds(1);
    ASSERT_TRUE(e->poll(t, sync).ok());
  }
  t += Duration::seconds(1);
  auto last = e->poll(t, sync);
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.error(), ProtectError::kFreshnessExhausted);
  EXPECT_TRUE(e->needs_rekey());
  // A restart cannot help either: the persisted trip counter is at its maximum.
  auto again = Engine::start(c, s);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), StartError::kTripExhausted);
}

}  // namespace
}  // namespace layersec::secoc
