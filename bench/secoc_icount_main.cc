// secoc_icount PROFILE ROLE N: runs N SecOC protect+verify operations of a
// 64-byte PDU (ROLE "ours") or N pairs of the bare context-reusing OpenSSL
// MAC computations they need (ROLE "baseline", as bench/secoc_bench.cc's
// baseline), or N pairs of the engine's own MAC (ROLE "own", crypto::make_mac:
// CbcCmac, cheaper than EVP_MAC), after the same set-up. Meant to run under
// `valgrind --tool=callgrind`: the difference of the instruction counts of
// two runs with different N, divided by the difference of N, is the
// instruction count of one operation, set-up excluded; it does not depend
// on what else runs on the machine (scripts/secoc_callgrind.sh).
// PROFILE: profile1, profile2, profile3, vendor or hmac-sha256. ROLE "floor"
// (vendor only) is a hand-written protect+verify of the vendor profile with
// the same two crypto::Mac computations and nothing else (no profile
// generality, no result types, no candidate or key-rollover logic): what the
// MAC path alone costs, for the note in docs/secoc.md.
// `secoc_icount goal [smoke]` runs the timed goal check of `layersec bench
// secoc` alone (secoc_goal.h).
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bare_mac.h"
#include "layersec/base/bytes.h"
#include "layersec/crypto/mac.h"
#include "layersec/secoc/simulation.h"
#include "secoc_goal.h"

namespace {

namespace secoc = layersec::secoc;

bool pick_profile(const std::string& name, secoc::PduProfile& out) {
  if (name == "profile1") out = secoc::PduProfile::profile1();
  else if (name == "profile2") out = secoc::PduProfile::profile2();
  else if (name == "profile3") out = secoc::PduProfile::profile3();
  else if (name == "vendor") out = secoc::PduProfile::vendor();
  else if (name == "hmac-sha256") {
    out = secoc::PduProfile::vendor();
    out.kind = secoc::ProfileKind::kCustom;
    out.algorithm = secoc::AuthAlgorithm::kHmacSha256;
    out.auth_info_tx_length = 128;
  } else {
    return false;
  }
  return true;
}

int run_ours(const secoc::PduProfile& profile, std::uint64_t n, const std::vector<std::uint8_t>& pl) {
  secoc::LinkOptions o;
  o.profile = profile;
  secoc::SimulatedLink link(o);
  std::vector<std::uint8_t> wire(profile.secured_size(pl.size())), out(wire.size());
  secoc::RxInput at;
  at.now = link.now();
  for (std::uint64_t i = 0; i < n; ++i) {
    auto r = link.sender().protect(0, pl, wire);
    if (!r.ok()) return 1;
    auto v = link.receiver().verify(0, layersec::ByteSpan(wire.data(), *r), out, at);
    if (!v.ok()) return 1;
  }
  return 0;
}

int run_baseline(const secoc::PduProfile& profile, std::uint64_t n, const std::vector<std::uint8_t>& pl) {
  layersec::benchrun::BareMac mac(profile.algorithm, secoc::test_key(profile.algorithm, 1));
  const auto dta = layersec::benchrun::bare_dta(profile, pl);
  std::array<std::uint8_t, 32> tag{};
  for (std::uint64_t i = 0; i < n; ++i) {
    mac.run(dta, tag.data());
    mac.run(dta, tag.data());
  }
  return 0;
}

// N pairs of the engine's own MAC (crypto::make_mac: CbcCmac for CMAC) over
// the same DataToAuthenticator: what protect+verify costs without the
// engine around its MAC.
int run_own(const secoc::PduProfile& profile, std::uint64_t n, const std::vector<std::uint8_t>& pl) {
  namespace crypto = layersec::crypto;
  const auto key = secoc::test_key(profile.algorithm, 1);
  auto mac = crypto::make_mac(secoc::mac_algorithm(profile.algorithm), layersec::ByteSpan(key.data(), key.size()));
  if (!mac.ok()) return 1;
  const auto dta = layersec::benchrun::bare_dta(profile, pl);
  std::array<std::uint8_t, 32> tag{};
  const layersec::MutableByteSpan out(tag.data(), (*mac)->tag_size());
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!(*mac)->compute(layersec::ByteSpan(dta), out).ok()) return 1;
    if (!(*mac)->compute(layersec::ByteSpan(dta), out).ok()) return 1;
  }
  return 0;
}

// Protect + verify of the vendor layout by hand: FV64 = trip 3 | reset 1 |
// msg, 16 FV bits and 64 MAC bits sent, DataId 0x0100.
int run_floor(std::uint64_t n, const std::vector<std::uint8_t>& pl) {
  const auto key = secoc::test_key(secoc::AuthAlgorithm::kCmacAes256, 1);
  auto txm = layersec::crypto::make_mac(layersec::crypto::MacAlgorithm::kCmacAes256, layersec::ByteSpan(key.data(), key.size()));
  auto rxm = layersec::crypto::make_mac(layersec::crypto::MacAlgorithm::kCmacAes256, layersec::ByteSpan(key.data(), key.size()));
  if (!txm.ok() || !rxm.ok()) return 1;
  const std::size_t m = pl.size();
  std::vector<std::uint8_t> wire(m + 10), out(m);
  std::uint64_t msg = 0, rx_last = 0;
  const std::uint64_t epoch = (std::uint64_t{3} << 48) | (std::uint64_t{1} << 32);
  std::array<std::uint8_t, 512> dta{};
  std::array<std::uint8_t, 32> tag{};
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t fv = epoch | ++msg;
    std::memcpy(wire.data(), pl.data(), m);
    layersec::store_be16(dta.data(), 0x0100);
    std::memcpy(dta.data() + 2, wire.data(), m);
    layersec::store_be64(dta.data() + 2 + m, fv);
    if (!(*txm)->compute(layersec::ByteSpan(dta.data(), m + 10), tag).ok()) return 1;
    layersec::store_be16(wire.data() + m, static_cast<std::uint16_t>(fv));
    std::memcpy(wire.data() + m + 2, tag.data(), 8);
    std::uint64_t cand = (rx_last & ~std::uint64_t{0xFFFF}) | layersec::load_be16(wire.data() + m);
    if (cand <= rx_last) cand += 0x10000;
    if (cand - rx_last >= 32) return 1;
    std::memcpy(dta.data() + 2, wire.data(), m);
    layersec::store_be64(dta.data() + 2 + m, epoch | cand);
    if (!(*rxm)->compute(layersec::ByteSpan(dta.data(), m + 10), tag).ok()) return 1;
    if (!layersec::crypto::ct_equal(layersec::ByteSpan(tag.data(), 8), layersec::ByteSpan(wire.data() + m + 2, 8)))
      return 1;
    std::memcpy(out.data(), wire.data(), m);
    rx_last = cand;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "goal") == 0) {  // the timed goal check of bench secoc
    layersec::benchrun::print_secoc_goal(layersec::benchrun::run_secoc_goal(argc > 2));
    return 0;
  }
  secoc::PduProfile profile;
  if (argc != 4 || !pick_profile(argv[1], profile) ||
      (std::strcmp(argv[2], "ours") != 0 && std::strcmp(argv[2], "baseline") != 0 &&
       std::strcmp(argv[2], "own") != 0 &&
       !(std::strcmp(argv[2], "floor") == 0 && std::strcmp(argv[1], "vendor") == 0))) {
    std::fprintf(stderr, "usage: secoc_icount profile1|profile2|profile3|vendor|hmac-sha256 ours|baseline|own N\n"
                         "       secoc_icount vendor floor N\n"
                         "       secoc_icount goal [smoke]\n");
    return 2;
  }
  const std::uint64_t n = std::strtoull(argv[3], nullptr, 10);
  std::vector<std::uint8_t> pl(64);
  for (std::size_t i = 0; i < pl.size(); ++i) pl[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const int rc = std::strcmp(argv[2], "ours") == 0    ? run_ours(profile, n, pl)
                 : std::strcmp(argv[2], "floor") == 0 ? run_floor(n, pl)
                 : std::strcmp(argv[2], "own") == 0   ? run_own(profile, n, pl)
                                                      : run_baseline(profile, n, pl);
  if (rc != 0) std::fprintf(stderr, "secoc_icount: an operation failed\n");
  return rc;
}
