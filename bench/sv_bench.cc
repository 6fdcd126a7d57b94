// SV micro-benchmarks: per-frame publisher work (patch + sign) and subscriber
// work (decode + verify + supervise) for each of the paper's profiles and
// each authentication scheme, beside the unsecured stream measured in the
// same run. Names: sv/<publish|verify>/<profile>/<scheme>/<ours|baseline>/<bytes>, bytes
// being the unsecured frame size of the profile
// ("baseline" is the same profile without authentication).
// `layersec bench sv --micro` runs them; `layersec bench sv` is the
// percentile harness (apps/layersec/cmd_sv.cc).
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "layersec/crypto/kdf.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"

namespace {

using namespace layersec;
using namespace layersec::sv;

struct Fixture {
  std::unique_ptr<Publisher> pub;
  Subscriber sub;
  std::vector<Sample> samples;
};

std::unique_ptr<Fixture> make_fixture(const Profile& p, const std::string& scheme) {
  auto fx = std::make_unique<Fixture>();
  StreamConfig c;
  c.sv_id = "TESTMU0101";
  c.asdus_per_frame = p.asdus_per_frame;
  c.security = parse_scheme(scheme).value_or(SecurityConfig{});
  SubscriptionConfig sc;
  sc.sv_id = c.sv_id;
  sc.asdus_per_frame = p.asdus_per_frame;
  sc.smp_cnt_wrap = p.smp_cnt_wrap();
  sc.security = c.security;
  sc.timeout = Duration::seconds(3600);
  if (c.security.scheme == Scheme::kNone) {
    fx->pub = std::make_unique<Publisher>(c, p, TimePoint{});
    fx->sub.add_stream(sc);
  } else {
    SecretBytes key = crypto::random_key(key_bytes_for(c.security.scheme));
    KeyMaterial a;
    a.key_id = 1;
    a.key = key.clone();
    KeyMaterial b;
    b.key_id = 1;
    b.key = std::move(key);
    fx->pub = std::make_unique<Publisher>(c, p, TimePoint{}, std::move(a));
    fx->sub.add_stream(sc, std::move(b));
  }
  fx->samples.assign(p.asdus_per_frame * 8, Sample{1000, 0});
  return fx;
}

void bm_publish(benchmark::State& state, Profile p, std::string scheme) {
  auto fx = make_fixture(p, scheme);
  std::int32_t v = 0;
  for (auto _ : state) {
    fx->samples[0].value = ++v;
    auto f = fx->pub->build_next(fx->samples);
    if (!f) {
      state.SkipWithError("publisher failed");
      break;
    }
    benchmark::DoNotOptimize(f->data());
  }
}

void bm_verify(benchmark::State& state, Profile p, std::string scheme) {
  auto fx = make_fixture(p, scheme);
  std::vector<std::uint8_t> frame;
  for (auto _ : state) {
    state.PauseTiming();
    auto f = fx->pub->build_next(fx->samples);
    if (!f) {
      state.SkipWithError("publisher failed");
      break;
    }
    frame.assign(f->begin(), f->end());
    state.ResumeTiming();
    auto d = fx->sub.on_frame(frame, TimePoint{});
    if (!d) {
      state.SkipWithError("subscriber dropped a frame");
      break;
    }
    benchmark::DoNotOptimize(d->frame);
  }
}

const bool registered = [] {
  for (const auto& p : paper_profiles()) {
    StreamConfig c;
    c.sv_id = "TESTMU0101";
    c.asdus_per_frame = p.asdus_per_frame;
    const std::string bytes = std::to_string(FrameTemplate(c).size());
    const std::string prof = std::to_string(p.sample_rate_hz) + "x" + std::to_string(p.asdus_per_frame);
    for (const char* s : {"hmac-sha256", "aes-gmac-128", "blake2s", "chaskey12-full", "chaskey12-selective"}) {
      benchmark::RegisterBenchmark(("sv/publish/" + prof + "/" + s + "/ours/" + bytes).c_str(), bm_publish, p,
                                   std::string(s));
      benchmark::RegisterBenchmark(("sv/publish/" + prof + "/" + s + "/baseline/" + bytes).c_str(), bm_publish, p,
                                   std::string("none"));
      benchmark::RegisterBenchmark(("sv/verify/" + prof + "/" + s + "/ours/" + bytes).c_str(), bm_verify, p,
                                   std::string(s));
      benchmark::RegisterBenchmark(("sv/verify/" + prof + "/" + s + "/baseline/" + bytes).c_str(), bm_verify, p,
                                   std::string("none"));
    }
  }
  return true;
}();

}  // namespace
