#include "layersec/harness/modeb_handshake_bench.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"

namespace layersec::harness {
namespace {

double cpu_us() { return static_cast<double>(thread_cpu_ns()) / 1e3; }
double wall_us() { return static_cast<double>(monotonic_ns()) / 1e3; }

double ratio(const ModeBHandshakeTiming& t) { return t.baseline.p50 > 0 ? t.cpu.p50 / t.baseline.p50 : 0.0; }

// The bare KEM operations of one handshake; false if one failed.
bool bare_kem_round(kex::Kem& bare, bool rsa, ByteSpan rsa_pk, const kex::KemPrivateKey* rsa_sk) {
  if (rsa) {
    auto enc = bare.encapsulate(rsa_pk);
    auto dec = enc.ok() ? bare.decapsulate(*rsa_sk, enc->ciphertext)
                        : Result<SecretBytes, kex::KemError>(Err(enc.error()));
    return dec.ok();
  }
  auto kp = bare.generate();
  auto sk = kp.ok() ? bare.load_private_key(kp->private_key.span())
                    : Result<std::unique_ptr<kex::KemPrivateKey>, kex::KemError>(Err(kp.error()));
  auto enc = sk.ok() ? bare.encapsulate(kp->public_key) : Result<kex::Encapsulation, kex::KemError>(Err(sk.error()));
  auto dec = enc.ok() ? bare.decapsulate(**sk, enc->ciphertext)
                      : Result<SecretBytes, kex::KemError>(Err(enc.error()));
  return dec.ok();
}

}  // namespace

std::optional<ModeBHandshakeTiming> time_mode_b_handshakes(kex::KemScheme scheme, std::string kem_name,
                                                          int iterations, std::int64_t now_s, std::string* why) {
  const auto fail = [why](std::string m) {
    *why = std::move(m);
    return std::nullopt;
  };
  ModeBHandshakeTiming t;
  t.kem = std::move(kem_name);
  t.iterations = iterations;
  t.rsa = scheme == kex::KemScheme::kRsa2048 || scheme == kex::KemScheme::kRsa3072;
  auto ca = kex::create_ca({"bench-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                            kex::Validity::days_from(now_s, 1)});
  if (!ca.ok()) return fail("CA creation failed");
  const kex::KeyAlgorithm sub_alg =
      !t.rsa ? kex::KeyAlgorithm::kEcdsaP256
             : (scheme == kex::KemScheme::kRsa2048 ? kex::KeyAlgorithm::kRsa2048 : kex::KeyAlgorithm::kRsa3072);
  auto pub_id = kex::issue_certificate(*ca, {"publisher", {0x1234}, kex::KeyAlgorithm::kEcdsaP256,
                                             kex::Validity::days_from(now_s, 1)});
  auto sub_id = kex::issue_certificate(*ca, {"subscriber", {0x1234}, sub_alg, kex::Validity::days_from(now_s, 1)});
  if (!pub_id.ok() || !sub_id.ok()) return fail("certificate issuing failed");
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca->certificate, 1));
  if (!trust.ok()) return fail("trust store failed");
  kex::ModeBConfig cfg;
  cfg.kem = scheme;
  cfg.max_pending = 4;
  cfg.replay_cache_size = 2 * (static_cast<std::size_t>(iterations) + 5) + 16;  // nonce_S and nonce_P per handshake
  auto pub = kex::ModeBPublisher::create(cfg, *pub_id, *trust);
  auto sub = kex::ModeBSubscriber::create(cfg, *sub_id, *trust);
  if (!pub.ok() || !sub.ok()) return fail("Mode B setup failed");

  // Baseline: a fresh key pair for non-RSA KEMs, encapsulation and
  // decapsulation, without certificates, signatures, HKDF or framing.
  std::unique_ptr<kex::Kem> bare;
  try {
    bare = kex::make_kem(scheme);
  } catch (const std::exception& e) {
    return fail(std::string("KEM unavailable: ") + e.what());
  }
  std::vector<std::uint8_t> rsa_pk;
  std::unique_ptr<kex::KemPrivateKey> rsa_sk;
  if (t.rsa) {
    auto der = sub_id->key.to_der();
    if (!der.ok()) return fail("key export failed");
    auto loaded = bare->load_private_key(der->span());
    if (!loaded.ok()) return fail("KEM key load failed");
    rsa_sk = std::move(loaded).value();
    rsa_pk = sub_id->certificate.public_key().der();
  }
  std::vector<double> total, cpu, baseline;
  std::array<std::vector<double>, kModeBSteps.size()> steps;
  const TimePoint base = TimePoint::from_ns(now_s * 1'000'000'000LL);
  for (int i = 0; i < iterations + 5; ++i) {  // 5 warm-up rounds
    const TimePoint now = base + Duration::microseconds(i);  // protocol time, injected
    const double c0 = cpu_us();
    const double t0 = wall_us();
    auto req = (*sub)->start(0x1234, 1, now);
    const double t1 = wall_us();
    auto del = req.ok() ? (*pub)->respond(*req, now) : Result<std::vector<std::uint8_t>, kex::ModeBError>(Err(req.error()));
    const double t2 = wall_us();
    auto conf = del.ok() ? (*sub)->on_delivery(*del, now) : Result<std::vector<std::uint8_t>, kex::ModeBError>(Err(del.error()));
    const double t3 = wall_us();
    auto act = conf.ok() ? (*pub)->on_confirm(*conf, now) : Result<kex::ActivatedKey, kex::ModeBError>(Err(conf.error()));
    const double t4 = wall_us();
    const double c4 = cpu_us();
    if (!act.ok()) return fail("handshake failed: " + std::string(kex::to_string(act.error())));
    const double b0 = cpu_us();
    const bool bare_ok = bare_kem_round(*bare, t.rsa, rsa_pk, rsa_sk.get());
    const double b1 = cpu_us();
    if (!bare_ok) return fail("bare KEM baseline failed");
    if (i < 5) continue;
    baseline.push_back(b1 - b0);
    t.bytes_on_wire = req->size() + del->size() + conf->size();
    steps[0].push_back(t1 - t0);
    steps[1].push_back(t2 - t1);
    steps[2].push_back(t3 - t2);
    steps[3].push_back(t4 - t3);
    total.push_back(t4 - t0);
    cpu.push_back(c4 - c0);
  }
  t.wall = summarize(total);
  t.cpu = summarize(cpu);
  t.baseline = summarize(baseline);
  for (std::size_t k = 0; k < steps.size(); ++k) t.steps[k] = summarize(steps[k]);
  return t;
}

std::string format_mode_b_timing(const ModeBHandshakeTiming& t) {
  std::string out;
  char line[256];
  auto add = [&](int n) { out.append(line, static_cast<std::size_t>(n > 0 ? std::min<int>(n, sizeof line - 1) : 0)); };
  add(std::snprintf(line, sizeof line, "Mode B handshake, kem %s, %d iterations, in process (no transmission)\n",
                    t.kem.c_str(), t.iterations));
  add(std::snprintf(line, sizeof line, "  total wall us: mean %.1f p50 %.1f p95 %.1f p99 %.1f max %.1f\n", t.wall.mean,
                    t.wall.p50, t.wall.p95, t.wall.p99, t.wall.max));
  add(std::snprintf(line, sizeof line, "  total CPU us:  mean %.1f p50 %.1f p95 %.1f p99 %.1f max %.1f\n", t.cpu.mean,
                    t.cpu.p50, t.cpu.p95, t.cpu.p99, t.cpu.max));
  add(std::snprintf(line, sizeof line,
                    "  baseline, bare KEM %s in the same run, CPU us: p50 %.1f (handshake / baseline = %.2f)\n",
                    t.rsa ? "encaps+decaps" : "keygen+encaps+decaps", t.baseline.p50, ratio(t)));
  for (std::size_t k = 0; k < kModeBSteps.size(); ++k) {
    const std::string name(kModeBSteps[k]);
    add(std::snprintf(line, sizeof line, "  %-32s wall p50 %.1f us\n", name.c_str(), t.steps[k].p50));
  }
  add(std::snprintf(line, sizeof line, "  bytes on the wire (3 messages): %zu\n", t.bytes_on_wire));
  return out;
}

nlohmann::json mode_b_timing_json(const ModeBHandshakeTiming& t) {
  nlohmann::json steps = nlohmann::json::object();
  for (std::size_t k = 0; k < kModeBSteps.size(); ++k)
    steps[std::string(kModeBSteps[k])] = {{"mean_us", t.steps[k].mean}, {"p50_us", t.steps[k].p50}};
  return {{"kem", t.kem},          {"iterations", t.iterations},
          {"mean_us", t.wall.mean}, {"p50_us", t.wall.p50},
          {"p95_us", t.wall.p95},   {"p99_us", t.wall.p99},
          {"max_us", t.wall.max},   {"cpu_mean_us", t.cpu.mean},
          {"cpu_p50_us", t.cpu.p50}, {"cpu_p99_us", t.cpu.p99},
          {"baseline_bare_kem_cpu_p50_us", t.baseline.p50},
          {"ratio", ratio(t)},
          {"bytes", t.bytes_on_wire},
          {"steps", steps}};
}

}  // namespace layersec::harness
