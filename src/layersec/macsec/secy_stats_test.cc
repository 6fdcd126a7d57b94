// Per-SC and per-SA statistics of the SecY (IEEE8021-SECY-MIB secyRxSCStats,
// secyRxSAStats, secyTxSCStats, secyTxSAStats; 802.1AE-2018 10.7.9, 10.7.18,
// 10.7.22): exact counts for mixed traffic from two transmitters, AN
// rotation, a late frame, an ICV failure, SAs not in use, and the
// validateFrames Check/Disabled paths. The SecY-level counters must stay the
// sums of the per-SC ones (plus what never reached an SC).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "layersec/macsec/secy.h"

namespace layersec::macsec {
namespace {

const std::uint8_t kMacA[6] = {0x02, 0x00, 0x00, 0x00, 0x0A, 0x01};
const std::uint8_t kMacB[6] = {0x02, 0x00, 0x00, 0x00, 0x0B, 0x01};
const std::uint8_t kMacR[6] = {0x02, 0x00, 0x00, 0x00, 0x0C, 0x01};
const Sci kSciA = Sci::from_parts(kMacA, 1);
const Sci kSciB = Sci::from_parts(kMacB, 1);
const Sci kSciR = Sci::from_parts(kMacR, 1);

std::vector<std::uint8_t> key(std::uint8_t seed) {
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed * 29 + i * 3 + 1);
  return k;
}

SaKeys keys_of(const std::vector<std::uint8_t>& k) { return SaKeys{ByteSpan(k.data(), k.size())}; }

std::vector<std::uint8_t> frame_from(const std::uint8_t* src, std::size_t payload) {
  std::vector<std::uint8_t> f(kMacR, kMacR + 6);
  f.insert(f.end(), src, src + 6);
  f.push_back(0x08);
  f.push_back(0x00);
  for (std::size_t i = 0; i < payload; ++i) f.push_back(static_cast<std::uint8_t>(i + 3));
  return f;
}

std::vector<std::uint8_t> protect(SecY& y, const std::vector<std::uint8_t>& plain) {
  std::vector<std::uint8_t> out(plain.size() + 32);
  auto n = y.protect(plain, out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? *n : 0);
  return out;
}

// validate() works in place: give it a copy so the caller may replay the frame.
Result<Received, ReceiveDrop> feed(SecY& y, std::vector<std::uint8_t> wire) {
  static std::vector<std::uint8_t> buf;
  buf = std::move(wire);
  return y.validate(MutableByteSpan(buf.data(), buf.size()));
}

SecY transmitter(const Sci& sci, bool confidentiality = true) {
  SecYConfig c;
  c.sci = sci;
  c.confidentiality = confidentiality;
  return SecY(c);
}

TEST(SecYStats, PerScAndPerSaCountsForMixedTraffic) {
  SecY a = transmitter(kSciA);
  SecY b = transmitter(kSciB);
  SecYConfig rc;
  rc.sci = kSciR;
  SecY r(rc);
  const auto ka0 = key(1), ka1 = key(2), kb0 = key(3);
  ASSERT_TRUE(a.install_tx_sa(0, keys_of(ka0)).ok());
  ASSERT_TRUE(a.install_tx_sa(1, keys_of(ka1)).ok());
  ASSERT_TRUE(a.set_encoding_sa(0).ok());
  ASSERT_TRUE(b.install_tx_sa(0, keys_of(kb0)).ok());
  ASSERT_TRUE(b.set_encoding_sa(0).ok());
  ASSERT_TRUE(r.add_rx_sc(kSciA).ok());
  ASSERT_TRUE(r.add_rx_sc(kSciB).ok());
  ASSERT_TRUE(r.install_rx_sa(kSciA, 0, keys_of(ka0)).ok());
  ASSERT_TRUE(r.install_rx_sa(kSciA, 1, keys_of(ka1)).ok());
  ASSERT_TRUE(r.install_rx_sa(kSciB, 0, keys_of(kb0)).ok());

  // A: 3 frames on AN 0 (100 octets of User Data each: EtherType + 98).
  std::vector<std::vector<std::uint8_t>> a_an0;
  for (int i = 0; i < 3; ++i) a_an0.push_back(protect(a, frame_from(kMacA, 98)));
  for (const auto& f : a_an0) ASSERT_TRUE(feed(r, f).ok());
  // B: 2 frames, the second with a flipped ciphertext octet (InPktsNotValid).
  auto b1 = protect(b, frame_from(kMacB, 48));
  auto b2 = protect(b, frame_from(kMacB, 48));
  b2[30] ^= 0x40;
  ASSERT_TRUE(feed(r, b1).ok());
  auto bad = feed(r, b2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), ReceiveDrop::kNotValid);
  // A rotates to AN 1: 4 frames.
  ASSERT_TRUE(a.set_encoding_sa(1).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(feed(r, protect(a, frame_from(kMacA, 98))).ok());
  // The first AN 0 frame of A replayed: PN 1 < lowest acceptable PN 4 (replayWindow 0).
  auto late = feed(r, a_an0[0]);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error(), ReceiveDrop::kLate);
  // B switches to AN 2, which the receiver has not installed: InPktsNotUsingSA (SC only).
  const auto kb2 = key(4);
  ASSERT_TRUE(b.install_tx_sa(2, keys_of(kb2)).ok());
  ASSERT_TRUE(b.set_encoding_sa(2).ok());
  auto nosa = feed(r, protect(b, frame_from(kMacB, 48)));
  ASSERT_FALSE(nosa.ok());
  EXPECT_EQ(nosa.error(), ReceiveDrop::kNotUsingSa);
  // A's AN 0 receive SA disabled, then a frame for it: NotUsingSA on SC and SA.
  ASSERT_TRUE(a.set_encoding_sa(0).ok());
  ASSERT_TRUE(r.enable_rx_sa(kSciA, 0, false).ok());
  auto disabled = feed(r, protect(a, frame_from(kMacA, 98)));
  ASSERT_FALSE(disabled.ok());
  EXPECT_EQ(disabled.error(), ReceiveDrop::kNotUsingSa);

  const auto sc_a = r.rx_sc_stats(kSciA);
  const auto sc_b = r.rx_sc_stats(kSciB);
  ASSERT_TRUE(sc_a.has_value());
  ASSERT_TRUE(sc_b.has_value());
  RxScStats want_a;
  want_a.InPktsOK = 7;
  want_a.InPktsLate = 1;
  want_a.InPktsNotUsingSA = 1;
  want_a.InOctetsDecrypted = 7 * 100;
  EXPECT_EQ(*sc_a, want_a);
  RxScStats want_b;
  want_b.InPktsOK = 1;
  want_b.InPktsNotValid = 1;
  want_b.InPktsNotUsingSA = 1;
  want_b.InOctetsDecrypted = 50;
  EXPECT_EQ(*sc_b, want_b);

  RxSaStats want_a0;
  want_a0.InPktsOK = 3;
  want_a0.InPktsNotUsingSA = 1;
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).stats, want_a0);
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).verified_frames, 3u);
  RxSaStats want_a1;
  want_a1.InPktsOK = 4;
  EXPECT_EQ(r.rx_sa_status(kSciA, 1).stats, want_a1);
  RxSaStats want_b0;
  want_b0.InPktsOK = 1;
  want_b0.InPktsNotValid = 1;
  EXPECT_EQ(r.rx_sa_status(kSciB, 0).stats, want_b0);
  EXPECT_FALSE(r.rx_sa_status(kSciB, 2).installed);
  EXPECT_EQ(r.rx_sa_status(kSciB, 2).stats, RxSaStats{});

  // The SecY-level counters are the sums.
  const SecYStats& s = r.stats();
  EXPECT_EQ(s.InPktsOK, 8u);
  EXPECT_EQ(s.InPktsLate, 1u);
  EXPECT_EQ(s.InPktsNotValid, 1u);
  EXPECT_EQ(s.InPktsNotUsingSA, 2u);
  EXPECT_EQ(s.InOctetsDecrypted, 750u);
  EXPECT_EQ(r.rx_scis(), (std::vector<Sci>{std::min(kSciA, kSciB), std::max(kSciA, kSciB)}));

  // Transmit side: per SC and per SA (A sent 3 + 4 + 1, on AN 0, 1, 0).
  TxScStats want_tx;
  want_tx.OutPktsEncrypted = 8;
  want_tx.OutOctetsEncrypted = 8 * 100;
  EXPECT_EQ(a.tx_sc_stats(), want_tx);
  EXPECT_EQ(a.tx_sa_status(0).stats.OutPktsEncrypted, 4u);
  EXPECT_EQ(a.tx_sa_status(1).stats.OutPktsEncrypted, 4u);
  EXPECT_EQ(a.tx_sa_status(1).stats.OutPktsProtected, 0u);
  EXPECT_EQ(a.tx_sa_status(2).stats, TxSaStats{});
  EXPECT_EQ(b.tx_sa_status(0).stats.OutPktsEncrypted, 2u);
  EXPECT_EQ(b.tx_sa_status(2).stats.OutPktsEncrypted, 1u);
  EXPECT_EQ(b.tx_sc_stats().OutPktsEncrypted, 3u);
}

// Integrity-only frames under validateFrames Check and Disabled: Invalid,
// Unchecked and UnusedSA per SC and per SA; Delayed with replayProtect off.
TEST(SecYStats, CheckDisabledAndDelayedAreCountedPerScAndSa) {
  SecY a = transmitter(kSciA, /*confidentiality=*/false);
  SecYConfig rc;
  rc.sci = kSciR;
  rc.validate_frames = ValidateFrames::kCheck;
  rc.replay_protect = false;
  SecY r(rc);
  const auto k0 = key(7), k1 = key(8);
  ASSERT_TRUE(a.install_tx_sa(0, keys_of(k0)).ok());
  ASSERT_TRUE(a.install_tx_sa(1, keys_of(k1)).ok());
  ASSERT_TRUE(a.set_encoding_sa(0).ok());
  ASSERT_TRUE(r.add_rx_sc(kSciA).ok());
  ASSERT_TRUE(r.install_rx_sa(kSciA, 0, keys_of(k0)).ok());
  ASSERT_TRUE(r.install_rx_sa(kSciA, 1, keys_of(k1)).ok());
  ASSERT_TRUE(r.enable_rx_sa(kSciA, 1, false).ok());

  auto f1 = protect(a, frame_from(kMacA, 60));
  auto f2 = protect(a, frame_from(kMacA, 60));
  ASSERT_TRUE(feed(r, f2).ok());  // PN 2: OK
  auto delayed = feed(r, f1);     // PN 1 < lowest 2, replayProtect off: Delayed
  ASSERT_TRUE(delayed.ok());
  EXPECT_EQ(delayed->disposition, Disposition::kDelayed);
  auto f3 = protect(a, frame_from(kMacA, 60));
  f3[40] ^= 1;  // integrity only, Check: delivered as Invalid
  auto invalid = feed(r, f3);
  ASSERT_TRUE(invalid.ok());
  EXPECT_EQ(invalid->disposition, Disposition::kInvalid);
  r.set_validate_frames(ValidateFrames::kDisabled);
  auto unchecked = feed(r, protect(a, frame_from(kMacA, 60)));
  ASSERT_TRUE(unchecked.ok());
  EXPECT_EQ(unchecked->disposition, Disposition::kUnchecked);
  ASSERT_TRUE(a.set_encoding_sa(1).ok());
  auto unused = feed(r, protect(a, frame_from(kMacA, 60)));  // SA 1 disabled, C clear
  ASSERT_TRUE(unused.ok());
  EXPECT_EQ(unused->disposition, Disposition::kUnusedSa);

  RxScStats want;
  want.InPktsOK = 1;
  want.InPktsDelayed = 1;
  want.InPktsInvalid = 1;
  want.InPktsUnchecked = 1;
  want.InPktsUnusedSA = 1;
  want.InOctetsValidated = 2 * 62;
  EXPECT_EQ(*r.rx_sc_stats(kSciA), want);
  RxSaStats sa0;
  sa0.InPktsOK = 1;  // the delayed frame is an SC counter only
  sa0.InPktsInvalid = 1;
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).stats, sa0);
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).verified_frames, 2u);
  RxSaStats sa1;
  sa1.InPktsUnusedSA = 1;
  EXPECT_EQ(r.rx_sa_status(kSciA, 1).stats, sa1);
  EXPECT_EQ(r.stats().InPktsNoSA, 1u);
  EXPECT_EQ(a.tx_sc_stats().OutPktsProtected, 5u);
  EXPECT_EQ(a.tx_sc_stats().OutOctetsProtected, 5u * 62);
  EXPECT_EQ(a.tx_sa_status(0).stats.OutPktsProtected, 4u);
  EXPECT_EQ(a.tx_sa_status(1).stats.OutPktsProtected, 1u);
}

TEST(SecYStats, CountersStartAtZeroAndGoWithTheirScOrSa) {
  SecY a = transmitter(kSciA);
  SecYConfig rc;
  rc.sci = kSciR;
  SecY r(rc);
  const auto k = key(9);
  ASSERT_TRUE(a.install_tx_sa(0, keys_of(k)).ok());
  ASSERT_TRUE(a.set_encoding_sa(0).ok());
  ASSERT_TRUE(r.add_rx_sc(kSciA).ok());
  EXPECT_EQ(*r.rx_sc_stats(kSciA), RxScStats{});
  EXPECT_FALSE(r.rx_sc_stats(kSciB).has_value());
  ASSERT_TRUE(r.install_rx_sa(kSciA, 0, keys_of(k)).ok());
  ASSERT_TRUE(feed(r, protect(a, frame_from(kMacA, 20))).ok());
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).stats.InPktsOK, 1u);
  // Re-installing the SA (a new key epoch at the same AN) starts it at zero.
  ASSERT_TRUE(r.install_rx_sa(kSciA, 0, keys_of(k), 2).ok());
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).stats, RxSaStats{});
  EXPECT_EQ(r.rx_sc_stats(kSciA)->InPktsOK, 1u);
  ASSERT_TRUE(r.remove_rx_sc(kSciA).ok());
  EXPECT_FALSE(r.rx_sc_stats(kSciA).has_value());
  EXPECT_EQ(r.stats().InPktsOK, 1u);  // the SecY sum keeps counting
  EXPECT_TRUE(r.rx_scis().empty());
}

TEST(SecYStats, RaisingTheLowestAcceptablePn) {
  SecY a = transmitter(kSciA);
  SecYConfig rc;
  rc.sci = kSciR;
  SecY r(rc);
  const auto k = key(5);
  ASSERT_TRUE(a.install_tx_sa(0, keys_of(k)).ok());
  ASSERT_TRUE(a.set_encoding_sa(0).ok());
  ASSERT_TRUE(r.add_rx_sc(kSciA).ok());
  ASSERT_TRUE(r.install_rx_sa(kSciA, 0, keys_of(k)).ok());
  auto f1 = protect(a, frame_from(kMacA, 20));
  auto f2 = protect(a, frame_from(kMacA, 20));
  auto f3 = protect(a, frame_from(kMacA, 20));
  ASSERT_TRUE(r.raise_rx_sa_lowest_pn(kSciA, 0, 3).ok());
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).lowest_pn, 3u);
  auto st = r.raise_rx_sa_lowest_pn(kSciA, 0, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), SaError::kPnBackwards);
  EXPECT_EQ(r.rx_sa_status(kSciA, 0).lowest_pn, 3u);
  EXPECT_TRUE(r.raise_rx_sa_lowest_pn(kSciA, 0, 3).ok());
  EXPECT_EQ(r.raise_rx_sa_lowest_pn(kSciA, 0, 0).error(), SaError::kBadPn);
  EXPECT_EQ(r.raise_rx_sa_lowest_pn(kSciA, 0, 0x100000000ULL).error(), SaError::kBadPn);
  EXPECT_EQ(r.raise_rx_sa_lowest_pn(kSciA, 1, 5).error(), SaError::kNoSuchSa);
  EXPECT_EQ(r.raise_rx_sa_lowest_pn(kSciB, 0, 5).error(), SaError::kNoSuchSc);
  EXPECT_EQ(r.raise_rx_sa_lowest_pn(kSciA, 4, 5).error(), SaError::kBadAn);
  EXPECT_EQ(feed(r, f1).error(), ReceiveDrop::kLate);
  EXPECT_EQ(feed(r, f2).error(), ReceiveDrop::kLate);
  ASSERT_TRUE(feed(r, f3).ok());
  EXPECT_EQ(r.rx_sc_stats(kSciA)->InPktsLate, 2u);
  EXPECT_EQ(r.rx_sc_stats(kSciA)->InPktsOK, 1u);
}

}  // namespace
}  // namespace layersec::macsec
