// Fuzz target for the SecOC engine. Input byte 0 selects a case, the rest is
// the data. Properties checked besides "no crash":
//  - verify() on arbitrary bytes, for several profiles and both freshness
//    modes: a rejected input leaves the receiver's freshness state and accept
//    counters unchanged, and the rejection is counted exactly once;
//  - parse -> serialize round trip: a Secured I-PDU that parses re-encodes to
//    the very same bytes (the encoding is canonical: zero padding enforced);
//  - protect -> verify round trip on the fuzz-derived payload delivers it;
//  - the persisted-state text parser: parse -> serialize -> parse is stable.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"

using namespace layersec;
using namespace layersec::secoc;

namespace {

void check(bool cond) {
  if (!cond) std::abort();
}

constexpr int kCases = 7;

LinkOptions case_options(int c) {
  LinkOptions o;
  switch (c) {
    case 0: o.profile = PduProfile::profile1(); break;
    case 1: o.profile = PduProfile::profile2(); break;
    case 2:
      o.profile = PduProfile::profile3();
      o.window = 4;
      o.verify_attempts = 2;
      break;
    case 3: o.profile = PduProfile::vendor(); break;
    case 4:
      o.profile = PduProfile::vendor();
      o.mode = FreshnessMode::kReorderTolerant;
      o.verify_attempts = 2;
      break;
    case 5:
      o.profile = PduProfile::vendor();
      o.profile.kind = ProfileKind::kCustom;
      o.profile.algorithm = AuthAlgorithm::kHmacSha256;
      o.profile.auth_info_tx_length = 77;
      o.profile.freshness = FreshnessLayout{16, 16, 32, 0, 11};
      o.profile.auth_pdu_header_length = 2;
      o.profile.secured_area_offset = 1;
      break;
    default: o.profile = PduProfile::aead_gcm(); break;
  }
  return o;
}

SimulatedLink& link_for(int c) {
  static std::unique_ptr<SimulatedLink> links[kCases];
  static unsigned sends[kCases];
  if (!links[c]) links[c] = std::make_unique<SimulatedLink>(case_options(c));
  if (++sends[c] % 512 == 0) links[c]->advance(Duration::seconds(1));  // new reset cycle
  return *links[c];
}

void fuzz_engine(int c, ByteSpan data) {
  SimulatedLink& link = link_for(c);
  Engine& rx = link.receiver();
  const PduProfile& prof = *rx.rx_profile(0);

  // 1. Arbitrary bytes into verify().
  const RxFreshnessState before = rx.rx_freshness(0);
  const VerifyCounters counters = rx.counters();
  std::vector<std::uint8_t> out(data.size() + 1);
  RxInput at;
  at.now = link.now();
  auto v = rx.verify(0, data, out, at);
  if (!v.ok()) {
    const RxFreshnessState after = rx.rx_freshness(0);
    check(after.synchronised == before.synchronised && after.last == before.last);
    check(rx.counters().accepted == counters.accepted);
    const auto i = static_cast<std::size_t>(v.error());
    check(rx.counters().rejected[i] == counters.rejected[i] + 1);
  }

  // 2. parse -> serialize.
  auto parsed = parse_secured_pdu(prof, data);
  if (parsed.ok()) {
    std::vector<std::uint8_t> again(prof.secured_size(parsed->authentic.size()));
    auto w = write_secured_pdu(prof, parsed->authentic, parsed->truncated_fv,
                               ByteSpan(parsed->tag.data(), parsed->tag.size()), again);
    check(w.ok() && *w == data.size());
    check(std::memcmp(again.data(), data.data(), data.size()) == 0);
  }

  // 3. protect -> verify on the fuzz-derived payload.
  const std::size_t n = std::min<std::size_t>(data.size(), 1400);
  const ByteSpan payload = data.first(n);
  std::vector<std::uint8_t> wire(link.sender().tx_profile(0)->secured_size(n));
  auto p = link.sender().protect(0, payload, wire);
  if (n < prof.secured_area_offset) {
    check(!p.ok() && p.error() == ProtectError::kSecuredAreaOutside);
    return;
  }
  check(p.ok() && *p == wire.size());
  std::vector<std::uint8_t> got;
  auto r = link.receive(wire, got);
  check(r.ok() && *r == n);
  check(n == 0 || std::memcmp(got.data(), payload.data(), n) == 0);
  // The same Secured I-PDU a second time is refused (Profile 2 has no FV).
  auto dup = link.receive(wire, got);
  check(prof.freshness.has_freshness() ? !dup.ok() : dup.ok());
}

void fuzz_state(ByteSpan data) {
  const std::string text(reinterpret_cast<const char*>(data.data()), data.size());
  auto s = parse_state(text);
  if (!s.ok()) return;
  auto again = parse_state(serialize_state(*s));
  check(again.ok() && *again == *s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const ByteSpan rest(data + 1, size - 1);
  const int sel = data[0] % (kCases + 1);
  if (sel == kCases) {
    fuzz_state(rest);
  } else {
    fuzz_engine(sel, rest);
  }
  return 0;
}
