// Security tests: every scheme signs and verifies end to end through the
// Publisher and Subscriber, tags cover what security.h says (recomputed here
// from the frame with the crypto primitives directly), tampering, replay,
// unknown keys and key rollover are dropped and counted.
#include "layersec/sv/security.h"

#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <vector>

#include "layersec/sv/publisher.h"
#include "layersec/sv/stream.h"
#include "layersec/sv/subscriber.h"

namespace layersec::sv {
namespace {

KeyMaterial make_key(std::uint32_t id, std::size_t size, std::uint8_t seed) {
  KeyMaterial k;
  k.key_id = id;
  k.key = SecretBytes(size);
  for (std::size_t i = 0; i < size; ++i) k.key[i] = static_cast<std::uint8_t>(seed + 7 * i);
  k.time_of_current_key = 1796000000;
  k.time_to_next_key_min = 60;
  return k;
}

struct Setup {
  StreamConfig stream;
  SubscriptionConfig sub;
  Profile profile;
};

Setup setup(const std::string& scheme, const Profile& profile) {
  Setup s{StreamConfig{}, SubscriptionConfig{}, profile};
  s.stream.asdus_per_frame = profile.asdus_per_frame;
  auto sc = parse_scheme(scheme);
  EXPECT_TRUE(sc.has_value()) << scheme;
  s.stream.security = sc.value_or(SecurityConfig{});
  s.stream.security.sender_id = 0x4000;
  s.sub.asdus_per_frame = profile.asdus_per_frame;
  s.sub.smp_cnt_wrap = profile.smp_cnt_wrap();
  s.sub.sv_id = s.stream.sv_id;
  s.sub.security = s.stream.security;
  return s;
}

std::vector<Sample> samples_for(std::size_t asdus, std::int32_t base) {
  std::vector<Sample> v(asdus * 8);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = Sample{base + static_cast<std::int32_t>(i), 0};
  return v;
}

const Profile kP4000 = *find_profile("4000/1");
const Profile kP12800 = *find_profile("12800/8");
const char* const kSchemes[] = {"hmac-sha256-80", "hmac-sha256-128", "hmac-sha256",   "aes-gmac-64",
                                "aes-gmac-128",   "blake2s",         "chaskey12-full", "chaskey12-selective"};

TEST(SvSecurity, SchemeNamesAndTagLengths) {
  EXPECT_EQ(tag_bytes_for(*parse_scheme("hmac-sha256-80")), 10u);
  EXPECT_EQ(tag_bytes_for(*parse_scheme("hmac-sha256-128")), 16u);
  EXPECT_EQ(tag_bytes_for(*parse_scheme("hmac-sha256-256")), 32u);
  EXPECT_EQ(tag_bytes_for(*parse_scheme("aes-gmac-64")), 8u);
  EXPECT_EQ(tag_bytes_for(*parse_scheme("aes-gmac-128")), 16u);
  EXPECT_EQ(tag_bytes_for(*parse_scheme("chaskey12-selective")), 16u);
  EXPECT_FALSE(parse_scheme("hmac-sha256-96").has_value());  // not a 62351-6 length
  EXPECT_FALSE(parse_scheme("aes-gmac-96").has_value());
  EXPECT_FALSE(parse_scheme("chaskey12-full-256").has_value());
  EXPECT_FALSE(parse_scheme("rot13").has_value());
  EXPECT_EQ(scheme_name(*parse_scheme("aes-gmac")), "aes-gmac-128");
  EXPECT_EQ(scheme_name(*parse_scheme("hmac-sha256-256")), "hmac-sha256");
  EXPECT_EQ(scheme_name(*parse_scheme("chaskey12-selective")), "chaskey12-selective");
  // Extension sizes: header 2 + keyId 6 + times 6+4 + algorithm 3 + freshness 14 + tag 2+n.
  EXPECT_EQ(extension_size(*parse_scheme("hmac-sha256")), 2u + 6 + 6 + 4 + 3 + 14 + 2 + 32);
  EXPECT_EQ(extension_size(*parse_scheme("aes-gmac-128")), 2u + 6 + 6 + 4 + 3 + 14 + 2 + 16);
  EXPECT_EQ(extension_size(*parse_scheme("chaskey12-selective")), 2u + 6 + 6 + 4 + 3 + 14 + 2 + 16);
}

TEST(SvSecurity, EverySchemeRoundTripsAndDetectsTampering) {
  for (const char* name : kSchemes) {
    for (const Profile& profile : {kP4000, kP12800}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(profile.name));
      auto s = setup(name, profile);
      const std::size_t key_size = key_bytes_for(s.stream.security.scheme);
      Publisher pub(s.stream, profile, TimePoint{}, make_key(7, key_size, 1));
      Subscriber sub;
      const auto id = sub.add_stream(s.sub, make_key(7, key_size, 1));
      for (int k = 0; k < 5; ++k) {
        auto frame = pub.build_next(samples_for(profile.asdus_per_frame, k * 100));
        ASSERT_TRUE(frame.ok());
        std::vector<std::uint8_t> bytes(frame->begin(), frame->end());
        auto f = decode_frame(bytes);
        ASSERT_TRUE(f.ok());
        const auto ext = parse_extension(f->extension);
        ASSERT_TRUE(ext.ok());
        EXPECT_EQ(ext->key_id, 7u);
        EXPECT_EQ(ext->time_of_current_key, 1796000000u);
        EXPECT_EQ(ext->time_to_next_key_min, 60);
        EXPECT_EQ(ext->tag.size(), tag_bytes_for(s.stream.security));

        // Tamper with a byte the tag covers: smpCnt's low byte for every
        // scheme (the selective scheme covers it too), then a sample value.
        const std::size_t covered[] = {f->asdus[0].smp_cnt_offset + 1, f->asdus[0].seq_data_offset + 3};
        for (std::size_t off : covered) {
          auto bad = bytes;
          bad[off] ^= 0x01;
          auto r = sub.on_frame(bad, TimePoint{});
          ASSERT_FALSE(r.ok());
          EXPECT_EQ(r.error(), DropReason::kSecurity);
        }
        auto bad_tag = bytes;
        bad_tag[f->savpdu_end + ext->tag_offset] ^= 0x80;
        EXPECT_FALSE(sub.on_frame(bad_tag, TimePoint{}).ok());

        auto ok = sub.on_frame(bytes, TimePoint{});
        ASSERT_TRUE(ok.ok()) << to_string(ok.error());
        // The same frame again is a replay.
        auto again = sub.on_frame(bytes, TimePoint{});
        ASSERT_FALSE(again.ok());
      }
      const auto& c = sub.counters(id);
      EXPECT_EQ(c.delivered, 5u);
      EXPECT_EQ(c.bad_tag, 15u);
      EXPECT_EQ(c.replays, 5u);
    }
  }
}

// Recomputes the tag of a frame from its bytes with OpenSSL/Chaskey directly,
// following the coverage written down in security.h.
std::vector<std::uint8_t> independent_tag(Scheme scheme, ByteSpan frame, const Frame& f, const Extension& e,
                                          ByteSpan key) {
  const std::size_t begin = f.ethertype_offset;
  const std::size_t end = f.savpdu_end + e.tag_offset;
  const ByteSpan covered = frame.subspan(begin, end - begin);
  std::vector<std::uint8_t> tag(64);
  if (scheme == Scheme::kHmacSha256) {
    std::size_t len = 0;
    EXPECT_NE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(), covered.data(),
                        covered.size(), tag.data(), tag.size(), &len),
              nullptr);
  } else if (scheme == Scheme::kAesGmac) {
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    int outl = 0;
    EVP_EncryptInit_ex(ctx, key.size() == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm(), nullptr, nullptr, nullptr);
    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(e.freshness.size()), nullptr);
    EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), e.freshness.data());
    EVP_EncryptUpdate(ctx, nullptr, &outl, covered.data(), static_cast<int>(covered.size()));
    EVP_EncryptFinal_ex(ctx, tag.data(), &outl);
    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data());
    EVP_CIPHER_CTX_free(ctx);
  } else if (scheme == Scheme::kChaskey12Selective) {
    // senderId ‖ frameCounter, then the paper's smpCnt ‖ seqData per ASDU.
    std::vector<std::uint8_t> msg(e.freshness.begin(), e.freshness.end());
    for (std::size_t i = 0; i < f.no_asdu; ++i) {
      msg.push_back(frame[f.asdus[i].smp_cnt_offset]);
      msg.push_back(frame[f.asdus[i].smp_cnt_offset + 1]);
      msg.insert(msg.end(), f.asdus[i].seq_data.begin(), f.asdus[i].seq_data.end());
    }
    auto ch = crypto::Chaskey::create(key, 12);
    EXPECT_TRUE(ch.ok());
    (*ch)->mac(msg, MutableByteSpan(tag.data(), 16));
  } else if (scheme == Scheme::kChaskey12Full) {
    auto ch = crypto::Chaskey::create(key, 12);
    EXPECT_TRUE(ch.ok());
    (*ch)->mac(covered, MutableByteSpan(tag.data(), 16));
  }
  tag.resize(e.tag.size());
  return tag;
}

TEST(SvSecurity, TagsCoverTheDocumentedBytes) {
  for (const char* name : {"hmac-sha256-80", "hmac-sha256", "aes-gmac-64", "aes-gmac-128", "chaskey12-full",
                           "chaskey12-selective"}) {
    SCOPED_TRACE(name);
    auto s = setup(name, kP12800);
    const std::size_t key_size = key_bytes_for(s.stream.security.scheme);
    auto key = make_key(3, key_size, 9);
    std::vector<std::uint8_t> raw(key.key.span().begin(), key.key.span().end());
    Publisher pub(s.stream, kP12800, TimePoint{}, std::move(key));
    for (int k = 0; k < 3; ++k) {
      auto frame = pub.build_next(samples_for(8, k));
      ASSERT_TRUE(frame.ok());
      auto f = decode_frame(*frame);
      ASSERT_TRUE(f.ok());
      auto e = parse_extension(f->extension);
      ASSERT_TRUE(e.ok());
      const auto expected = independent_tag(s.stream.security.scheme, *frame, *f, *e, raw);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), e->tag.begin()));
      // Every scheme: senderId ‖ frameCounter, the counter one per frame.
      ASSERT_EQ(e->freshness.size(), kFreshnessBytes);
      EXPECT_EQ(e->sender_id, 0x4000u);
      EXPECT_EQ(load_be32(e->freshness.data()), 0x4000u);
      EXPECT_EQ(e->counter, static_cast<std::uint64_t>(k));
      EXPECT_EQ(load_be64(e->freshness.data() + 4), static_cast<std::uint64_t>(k));
      // Tampering with the counter breaks the tag under every scheme.
      std::vector<std::uint8_t> bad(frame->begin(), frame->end());
      bad[f->savpdu_end + static_cast<std::size_t>(e->freshness.data() - f->extension.data()) + 11] ^= 0x01;
      auto bf = decode_frame(bad);
      ASSERT_TRUE(bf.ok());
      auto be = parse_extension(bf->extension);
      ASSERT_TRUE(be.ok());
      const auto recomputed = independent_tag(s.stream.security.scheme, bad, *bf, *be, raw);
      EXPECT_FALSE(std::equal(recomputed.begin(), recomputed.end(), e->tag.begin()));
    }
  }
}

TEST(SvSecurity, SelectiveSchemeChecksInvariantsAfterTheMac) {
  auto s = setup("chaskey12-selective", kP4000);
  Publisher pub(s.stream, kP4000, TimePoint{}, make_key(1, 16, 5));
  Subscriber sub;
  const auto id = sub.add_stream(s.sub, make_key(1, 16, 5));
  auto first = pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(sub.on_frame(*first, TimePoint{}).ok());
  // confRev is not covered by the tag: the MAC verifies, the cache catches it.
  auto next = pub.build_next(samples_for(1, 1));
  ASSERT_TRUE(next.ok());
  std::vector<std::uint8_t> bytes(next->begin(), next->end());
  auto f = decode_frame(bytes);
  ASSERT_TRUE(f.ok());
  const std::size_t conf_rev_value = f->asdus[0].smp_cnt_offset + 2 + 2;  // after smpCnt TLV: 0x83 04
  ASSERT_EQ(bytes[conf_rev_value - 2], tag::kConfRev);
  auto tampered = bytes;
  tampered[conf_rev_value + 3] ^= 0x02;
  auto r = sub.on_frame(tampered, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kInvariantMismatch);
  EXPECT_EQ(sub.counters(id).invariant_mismatch, 1u);
  EXPECT_EQ(sub.counters(id).bad_tag, 0u);
  // A changed svID (same length) is caught the same way.
  tampered = bytes;
  tampered[f->asdus[0].smp_cnt_offset - 2 - 1] ^= 0x01;  // last svID character
  r = sub.on_frame(tampered, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kInvariantMismatch);
  // The untouched frame is still accepted (nothing above changed state).
  EXPECT_TRUE(sub.on_frame(bytes, TimePoint{}).ok());
}

// An attacker flips the Simulate bit and recomputes the (keyless) header CRC.
std::vector<std::uint8_t> flip_simulate(ByteSpan frame) {
  std::vector<std::uint8_t> b(frame.begin(), frame.end());
  auto f = decode_frame(b);
  EXPECT_TRUE(f.ok());
  const std::size_t h = f->header_offset();
  b[h + 4] ^= 0x80;
  store_be16(&b[h + 6], header_crc16(ByteSpan(b).subspan(f->ethertype_offset, 8)));
  EXPECT_TRUE(decode_frame(b).ok());
  return b;
}

TEST(SvSecurity, SimulateBitIsAuthenticatedOnlyByFullFrameSchemes) {
  for (const char* name : {"hmac-sha256-80", "aes-gmac-64", "chaskey12-full"}) {
    auto s = setup(name, kP4000);
    const std::size_t ks = key_bytes_for(s.stream.security.scheme);
    Publisher pub(s.stream, kP4000, TimePoint{}, make_key(1, ks, 4));
    auto cfg = s.sub;
    cfg.accept_simulated = true;
    Subscriber sub;
    sub.add_stream(cfg, make_key(1, ks, 4));
    auto f = pub.build_next(samples_for(1, 0));
    ASSERT_TRUE(f.ok());
    auto r = sub.on_frame(flip_simulate(*f), TimePoint{});
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error(), DropReason::kSecurity) << name;
  }
  // The paper's selective scheme does not cover Reserved1: the forged flag
  // passes the MAC (documented weakness, docs/sv.md).
  auto s = setup("chaskey12-selective", kP4000);
  Publisher pub(s.stream, kP4000, TimePoint{}, make_key(1, 16, 4));
  auto cfg = s.sub;
  cfg.accept_simulated = true;
  Subscriber sub;
  sub.add_stream(cfg, make_key(1, 16, 4));
  auto f = pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(f.ok());
  auto r = sub.on_frame(flip_simulate(*f), TimePoint{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->frame->simulate());
}

TEST(SvSecurity, FullFrameSchemesDoNotCoverTheEthernetHeader) {
  auto s = setup("hmac-sha256", kP4000);
  Publisher pub(s.stream, kP4000, TimePoint{}, make_key(1, 32, 5));
  Subscriber sub;
  sub.add_stream(s.sub, make_key(1, 32, 5));
  auto frame = pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(frame.ok());
  std::vector<std::uint8_t> bytes(frame->begin(), frame->end());
  bytes[14] ^= 0x20;  // 802.1Q PCP rewritten by a bridge
  bytes[6] ^= 0x01;   // source address
  EXPECT_TRUE(sub.on_frame(bytes, TimePoint{}).ok());
}

TEST(SvSecurity, WrongKeyUnknownKeyAndWrongAlgorithmAreDropped) {
  auto s = setup("hmac-sha256-128", kP4000);
  Publisher pub(s.stream, kP4000, TimePoint{}, make_key(9, 32, 1));
  Subscriber sub;
  auto wrong_key_cfg = s.sub;
  const auto a = sub.add_stream(wrong_key_cfg, make_key(9, 32, 2));  // same id, other bytes
  auto f1 = pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(f1.ok());
  EXPECT_FALSE(sub.on_frame(*f1, TimePoint{}).ok());
  EXPECT_EQ(sub.counters(a).bad_tag, 1u);

  Subscriber sub2;
  const auto b = sub2.add_stream(s.sub, make_key(10, 32, 1));  // other key id
  EXPECT_FALSE(sub2.on_frame(*f1, TimePoint{}).ok());
  EXPECT_EQ(sub2.counters(b).unknown_key, 1u);

  Subscriber sub3;
  auto other_alg = s.sub;
  other_alg.security = *parse_scheme("hmac-sha256-80");
  const auto c = sub3.add_stream(other_alg, make_key(9, 32, 1));
  EXPECT_FALSE(sub3.on_frame(*f1, TimePoint{}).ok());
  EXPECT_EQ(sub3.counters(c).bad_extension, 1u);

  // An unsecured frame on a secured subscription.
  StreamConfig plain = s.stream;
  plain.security = SecurityConfig{};
  Publisher plain_pub(plain, kP4000, TimePoint{});
  auto f2 = plain_pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(f2.ok());
  Subscriber sub4;
  const auto d = sub4.add_stream(s.sub, make_key(9, 32, 1));
  EXPECT_FALSE(sub4.on_frame(*f2, TimePoint{}).ok());
  EXPECT_EQ(sub4.counters(d).bad_extension, 1u);

  // A secured frame on an unsecured subscription is not delivered either.
  Subscriber sub5;
  auto plain_sub = s.sub;
  plain_sub.security = SecurityConfig{};
  const auto e = sub5.add_stream(plain_sub);
  auto r = sub5.on_frame(*f1, TimePoint{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), DropReason::kUnexpectedExtension);
  EXPECT_EQ(sub5.counters(e).unexpected_extension, 1u);
}

TEST(SvSecurity, FrameCounterIsReplayProtectionForEveryScheme) {
  for (const char* name : kSchemes) {
    SCOPED_TRACE(name);
    auto s = setup(name, kP4000);
    const std::size_t ks = key_bytes_for(s.stream.security.scheme);
    Publisher pub(s.stream, kP4000, TimePoint{}, make_key(2, ks, 3));
    std::vector<std::vector<std::uint8_t>> frames;
    for (int k = 0; k < 4; ++k) {
      auto f = pub.build_next(samples_for(1, k));
      ASSERT_TRUE(f.ok());
      frames.emplace_back(f->begin(), f->end());
    }
    EXPECT_EQ(pub.signer()->next_counter(), 4u);
    Subscriber sub;
    const auto id = sub.add_stream(s.sub, make_key(2, ks, 3));
    EXPECT_TRUE(sub.on_frame(frames[3], TimePoint{}).ok());
    auto r = sub.on_frame(frames[1], TimePoint{});  // older counter, valid tag
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), DropReason::kSecurity);
    EXPECT_EQ(sub.counters(id).replayed_counter, 1u);
    EXPECT_EQ(sub.counters(id).replays, 1u);
  }
}

TEST(SvSecurity, SignerCounterNeverGoesBackAcrossKeys) {
  auto s = setup("hmac-sha256", kP4000);
  auto k1 = make_key(1, 32, 1);
  k1.initial_counter = 1000;
  auto signer = std::move(FrameSigner::create(s.stream.security, std::move(k1))).value();
  EXPECT_EQ(signer.next_counter(), 1000u);
  auto k2 = make_key(2, 32, 2);
  k2.initial_counter = 5;  // lower: ignored, the run's sequence continues
  ASSERT_TRUE(signer.rekey(std::move(k2)).ok());
  EXPECT_EQ(signer.next_counter(), 1000u);
  auto k3 = make_key(3, 32, 3);
  k3.initial_counter = 7000;  // higher: the sequence jumps forward
  ASSERT_TRUE(signer.rekey(std::move(k3)).ok());
  EXPECT_EQ(signer.next_counter(), 7000u);
  // The last counter value is refused rather than wrapped.
  auto k4 = make_key(4, 32, 4);
  k4.initial_counter = UINT64_MAX;
  ASSERT_TRUE(signer.rekey(std::move(k4)).ok());
  FrameTemplate t(s.stream);
  ASSERT_TRUE(signer.write_extension(t.mutable_bytes().subspan(t.regions().extension_offset, signer.layout().size)));
  auto st = signer.sign(t.mutable_bytes(), t.regions());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SecurityError::kCounterExhausted);
}

TEST(SvSecurity, AnnouncedKeysAreKeptUntilALaterOneIsUsed) {
  auto s = setup("chaskey12-selective", kP4000);
  Publisher pub(s.stream, kP4000, TimePoint{}, make_key(1, 16, 1));
  Subscriber sub;
  const auto id = sub.add_stream(s.sub, make_key(1, 16, 1));
  auto first = pub.build_next(samples_for(1, 0));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(sub.on_frame(*first, TimePoint{}).ok());
  // Key 2 (a scheduled rekey) and key 3 (a removal in key 2's lead) are
  // announced back to back; the publisher uses key 2 first: accepted (a
  // single announcement slot would have forgotten key 2).
  ASSERT_TRUE(sub.set_next_key(id, make_key(2, 16, 2)).ok());
  ASSERT_TRUE(sub.set_next_key(id, make_key(3, 16, 3)).ok());
  EXPECT_FALSE(sub.set_next_key(id, make_key(1, 16, 1)).ok());  // the current key
  pub.schedule_rekey(make_key(2, 16, 2), kP4000.deadline(TimePoint{}, 2));
  pub.schedule_rekey(make_key(3, 16, 3), kP4000.deadline(TimePoint{}, 4));
  EXPECT_EQ(pub.scheduled_keys(), 2u);
  std::vector<std::vector<std::uint8_t>> frames;
  for (int k = 1; k < 6; ++k) {
    auto f = pub.build_next(samples_for(1, k));
    ASSERT_TRUE(f.ok());
    frames.emplace_back(f->begin(), f->end());
  }
  EXPECT_EQ(pub.counters().rekeys, 2u);
  for (const auto& f : frames) EXPECT_TRUE(sub.on_frame(f, TimePoint{}).ok());
  EXPECT_EQ(sub.counters(id).key_changes, 2u);
  EXPECT_EQ(sub.counters(id).unknown_key, 0u);
  EXPECT_EQ(sub.counters(id).delivered, 6u);
}

TEST(SvSecurity, KeyRolloverStartsANewEpoch) {
  auto s = setup("chaskey12-full", kP4000);
  Publisher pub(s.stream, kP4000, TimePoint{}, make_key(1, 16, 1));
  Subscriber sub;
  const auto id = sub.add_stream(s.sub, make_key(1, 16, 1));
  const TimePoint change = kP4000.deadline(TimePoint{}, 3);
  pub.schedule_rekey(make_key(2, 16, 2), change);
  std::vector<std::vector<std::uint8_t>> frames;
  for (int k = 0; k < 6; ++k) {
    auto f = pub.build_next(samples_for(1, k));
    ASSERT_TRUE(f.ok());
    frames.emplace_back(f->begin(), f->end());
    auto d = decode_frame(frames.back());
    ASSERT_TRUE(d.ok());
    auto e = parse_extension(d->extension);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->key_id, k < 3 ? 1u : 2u);
  }
  EXPECT_EQ(pub.counters().rekeys, 1u);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(sub.on_frame(frames[static_cast<std::size_t>(k)], TimePoint{}).ok());
  // Frames under key 2 before the subscriber heard of it: unknown key.
  EXPECT_FALSE(sub.on_frame(frames[3], TimePoint{}).ok());
  EXPECT_EQ(sub.counters(id).unknown_key, 1u);
  ASSERT_TRUE(sub.set_next_key(id, make_key(2, 16, 2)).ok());
  EXPECT_TRUE(sub.on_frame(frames[3], TimePoint{}).ok());
  EXPECT_EQ(sub.counters(id).key_changes, 1u);
  EXPECT_TRUE(sub.on_frame(frames[4], TimePoint{}).ok());
  // The old key's epoch is over: its frames are no longer accepted.
  EXPECT_FALSE(sub.on_frame(frames[2], TimePoint{}).ok());
  EXPECT_EQ(sub.counters(id).unknown_key, 2u);
}

TEST(SvSecurity, BadConfigurationsAreRefusedAtStartUp) {
  auto s = setup("hmac-sha256", kP4000);
  EXPECT_THROW(Publisher(s.stream, kP4000, TimePoint{}, make_key(1, 16, 1)), std::invalid_argument);  // short key
  EXPECT_THROW(Publisher(s.stream, kP4000, TimePoint{}), std::invalid_argument);  // no key
  Subscriber sub;
  EXPECT_THROW(sub.add_stream(s.sub), std::invalid_argument);
  auto g = setup("aes-gmac-128", kP4000);
  EXPECT_NO_THROW(Publisher(g.stream, kP4000, TimePoint{}, make_key(1, 32, 1)));  // AES-256 key
  EXPECT_THROW(Publisher(g.stream, kP4000, TimePoint{}, make_key(1, 24, 1)), std::invalid_argument);
}

TEST(SvSecurity, ExtensionParserRejectsMalformedExtensions) {
  auto s = setup("aes-gmac-128", kP4000);
  FrameSigner signer = std::move(FrameSigner::create(s.stream.security, make_key(1, 16, 1))).value();
  std::vector<std::uint8_t> ext(signer.layout().size);
  ASSERT_TRUE(signer.write_extension(ext));
  ASSERT_TRUE(parse_extension(ext).ok());
  for (std::size_t i = 0; i < ext.size(); ++i) {
    if (i == signer.layout().key_id || (i > signer.layout().key_id && i < signer.layout().key_id + 4)) continue;
    if (i >= signer.layout().time_of_current_key && i < signer.layout().time_of_current_key + 4) continue;
    if (i >= signer.layout().time_to_next_key && i < signer.layout().time_to_next_key + 2) continue;
    if (i == signer.layout().algorithm) continue;
    if (i >= signer.layout().freshness && i < signer.layout().freshness + 12) continue;
    if (i >= signer.layout().tag) continue;
    auto bad = ext;
    bad[i] ^= 0x01;  // every structural byte (tags and lengths)
    EXPECT_FALSE(parse_extension(bad).ok()) << i;
  }
  for (std::size_t n = 0; n < ext.size(); ++n) {
    EXPECT_FALSE(parse_extension(ByteSpan(ext.data(), n)).ok()) << n;
  }
  // The freshness field is mandatory for every scheme: the layout of the
  // previous version (GMAC-only IV, absent for the other schemes) is refused.
  auto h = setup("hmac-sha256", kP4000);
  FrameSigner hs = std::move(FrameSigner::create(h.stream.security, make_key(1, 32, 1))).value();
  std::vector<std::uint8_t> hext(hs.layout().size);
  ASSERT_TRUE(hs.write_extension(hext));
  ASSERT_TRUE(parse_extension(hext).ok());
  std::vector<std::uint8_t> old(hext.begin(), hext.begin() + static_cast<std::ptrdiff_t>(hs.layout().freshness - 2));
  old.insert(old.end(), hext.begin() + static_cast<std::ptrdiff_t>(hs.layout().tag - 2), hext.end());
  old[1] = static_cast<std::uint8_t>(old.size() - 2);
  EXPECT_FALSE(parse_extension(old).ok());
  // Parse -> encode gives the bytes back.
  auto parsed = parse_extension(hext);
  ASSERT_TRUE(parsed.ok());
  std::vector<std::uint8_t> again(hext.size());
  ASSERT_TRUE(encode_extension(*parsed, again));
  EXPECT_EQ(again, hext);
}

}  // namespace
}  // namespace layersec::sv
