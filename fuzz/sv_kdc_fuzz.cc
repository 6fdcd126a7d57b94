// Fuzz target for the SV KDC messages (src/layersec/sv/kdc.h): AuthRequest,
// AuthResponse and KeyDistribution. Parsers must never crash, read out of
// bounds or accept trailing bytes; whatever parses must re-encode to the
// input byte for byte. The input is also fed to a live KDC and IED client
// (ML-KEM-512 to keep each input cheap): arbitrary bytes must be rejected with
// a typed error and must not establish a session or install a key.
// fuzz-iterations: 20000
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "layersec/sv/kdc.h"

using namespace layersec;
using namespace layersec::sv::kdc;

namespace {

const TimePoint kNow = TimePoint::from_ns(1'800'000'000LL * 1'000'000'000LL);

struct Parties {
  std::unique_ptr<Kdc> kdc;
  std::unique_ptr<IedClient> ied;
};

Parties& parties() {
  static Parties p = [] {
    Parties q;
    KdcConfig cfg;
    cfg.kem = kex::KemScheme::kMlKem512;
    auto k = Kdc::create(cfg);
    if (!k) std::abort();
    q.kdc = std::move(k).value();
    auto a = q.kdc->register_ied("MU01");
    if (!a) std::abort();
    auto c = IedClient::create("MU01", cfg.kem, std::move(a).value(),
                               std::vector<std::uint8_t>(q.kdc->public_key().begin(), q.kdc->public_key().end()));
    if (!c) std::abort();
    q.ied = std::move(c).value();
    return q;
  }();
  return p;
}

template <class M>
void check_round_trip(const M& m, const std::uint8_t* data, std::size_t size) {
  const auto again = encode(m);
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  (void)peek_type(in).ok();
  if (auto r = parse_auth_request(in); r.ok()) {
    if (r->signed_length + kTagSize != size) std::abort();
    check_round_trip(r.value(), data, size);
  }
  if (auto r = parse_auth_response(in); r.ok()) {
    if (r->signed_length + kTagSize != size) std::abort();
    check_round_trip(r.value(), data, size);
  }
  if (auto r = parse_key_distribution(in); r.ok()) {
    if (r->aad_length + r->wrapped_key.size() + r->aead_tag.size() != size) std::abort();
    check_round_trip(r.value(), data, size);
  }
  // Stateful: nothing forged from these bytes may be accepted (no party here
  // ever produced a genuine message, so every input is a forgery).
  Parties& p = parties();
  const auto sessions = p.kdc->counters().sessions;
  if (p.kdc->on_auth_request(in, kNow).ok() || p.kdc->counters().sessions != sessions) std::abort();
  if (p.ied->on_auth_response(in, kNow).ok() || p.ied->has_session()) std::abort();
  if (p.ied->on_key_distribution(in, kNow).ok()) std::abort();
  return 0;
}
