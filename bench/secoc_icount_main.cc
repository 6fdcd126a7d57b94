// secoc_icount PROFILE ROLE N: runs N SecOC protect+verify operations of a
// 64-byte PDU (ROLE "ours") or N pairs of the bare context-reusing OpenSSL
// MAC computations they need (ROLE "baseline", as bench/secoc_bench.cc's
// baseline), after the same set-up. Meant to run under
// `valgrind --tool=callgrind`: the difference of the instruction counts of
// two runs with different N, divided by the difference of N, is the
// instruction count of one operation, set-up excluded; it does not depend
// on what else runs on the machine (scripts/secoc_callgrind.sh).
// PROFILE: profile1, profile2, profile3, vendor or hmac-sha256.
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

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "goal") == 0) {  // the timed goal check of bench secoc
    layersec::benchrun::print_secoc_goal(layersec::benchrun::run_secoc_goal(argc > 2));
    return 0;
  }
  secoc::PduProfile profile;
  if (argc != 4 || !pick_profile(argv[1], profile) ||
      (std::strcmp(argv[2], "ours") != 0 && std::strcmp(argv[2], "baseline") != 0)) {
    std::fprintf(stderr, "usage: secoc_icount profile1|profile2|profile3|vendor|hmac-sha256 ours|baseline N\n"
                         "       secoc_icount goal [smoke]\n");
    return 2;
  }
  const std::uint64_t n = std::strtoull(argv[3], nullptr, 10);
  std::vector<std::uint8_t> pl(64);
  for (std::size_t i = 0; i < pl.size(); ++i) pl[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const int rc = std::strcmp(argv[2], "ours") == 0 ? run_ours(profile, n, pl) : run_baseline(profile, n, pl);
  if (rc != 0) std::fprintf(stderr, "secoc_icount: an operation failed\n");
  return rc;
}
