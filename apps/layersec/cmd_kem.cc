// `layersec kem keygen|encaps|decaps --scheme NAME`: known-answer commands for
// every KEM of kex/kem.h, taking deterministic inputs as hex and printing keys,
// ciphertexts and shared secrets as hex ("name: hex" lines), so any other
// implementation can be checked against ours. These are the only commands
// that print secrets, by design; never use them with production keys.
//
// Hex arguments may be given as @FILE to read the hex from a file.
//
// `layersec kem ct-check --scheme ml-kem-NNN` (hidden) runs ML-KEM keygen,
// encapsulation and decapsulation (valid and implicit-rejection) with d, z, m
// and the secret parts of dk marked undefined for valgrind memcheck; run under
// `valgrind --error-exitcode=1`, any secret-dependent branch or memory index
// fails it (tests/cli/kem_ct_valgrind.sh).
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.h"
#include "layersec/base/hex.h"
#include "layersec/crypto/mlkem.h"
#include "layersec/crypto/mlkem_ct.h"
#include "layersec/kex/kem.h"

#include "runner.h"
namespace layersec::kexbench {  // bench/kex_bench.cc
nlohmann::json run(const std::vector<kex::KemScheme>& schemes, bool smoke, const std::string& rsa15360_pem,
                   std::ostream& log);
void print(const nlohmann::json& rows, std::ostream& out);
}  // namespace layersec::kexbench

namespace layersec::app {
namespace {

struct KemOptions {
  std::string scheme;
  std::string seed;  // keygen seed / encaps seed (hex)
  std::string m;     // ML-KEM alias for the encaps seed
  std::string pk;
  std::string sk;
  std::string sk_pem;
  std::string ct;
  int iterations = 3;
  bool leak_control = false;
};

// Bad arguments or a failed operation: unwinds (so SecretBytes are wiped) to
// main(), which prints "layersec: kem: <msg>" and exits with status 1.
[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error("kem: " + msg); }

std::vector<std::uint8_t> hex_arg(const std::string& name, std::string value) {
  if (!value.empty() && value[0] == '@') {
    std::ifstream f(value.substr(1));
    if (!f) fail("cannot read " + value.substr(1));
    std::stringstream ss;
    ss << f.rdbuf();
    value = ss.str();
  }
  std::string clean;
  for (char c : value)
    if (!std::isspace(static_cast<unsigned char>(c))) clean += c;
  auto bytes = from_hex(clean);
  if (!bytes) fail("--" + name + " is not valid hex");
  return *bytes;
}

std::unique_ptr<kex::Kem> kem_for(const KemOptions& o) {
  auto s = kex::parse_scheme(o.scheme);
  if (!s) {
    std::string names;
    for (auto x : kex::kAllKemSchemes) names += " " + std::string(kex::scheme_name(x));
    fail("unknown scheme '" + o.scheme + "'; one of:" + names);
  }
  return kex::make_kem(*s);
}

void print(const char* name, ByteSpan bytes) { std::cout << name << ": " << to_hex(bytes) << "\n"; }

void keygen(const KemOptions& o) {
  auto kem = kem_for(o);
  auto kp = o.seed.empty() ? kem->generate() : kem->generate_from_seed(hex_arg("seed", o.seed));
  if (!kp) fail(std::string(to_string(kp.error())) + " (seed: " + std::string(kem->seed_help()) + ")");
  std::cout << "scheme: " << kem->name() << "\n";
  print("public_key", kp->public_key);
  print("private_key", kp->private_key.span());
}

void encaps(const KemOptions& o) {
  auto kem = kem_for(o);
  if (o.pk.empty()) fail("--pk is required");
  const std::string seed = !o.m.empty() ? o.m : o.seed;
  auto pk = hex_arg("pk", o.pk);
  auto e = seed.empty() ? kem->encapsulate(pk) : kem->encapsulate_with_seed(pk, hex_arg("seed", seed));
  if (!e) fail(std::string(to_string(e.error())) + " (seed: " + std::string(kem->seed_help()) + ")");
  std::cout << "scheme: " << kem->name() << "\n";
  print("ciphertext", e->ciphertext);
  print("shared_secret", e->shared_secret.span());
}

void decaps(const KemOptions& o) {
  auto kem = kem_for(o);
  if (o.ct.empty()) fail("--ct is required");
  SecretBytes sk;
  if (!o.sk_pem.empty()) {
    const int bits = o.scheme == "rsa-2048" ? 2048 : o.scheme == "rsa-3072" ? 3072 : o.scheme == "rsa-15360" ? 15360 : 0;
    if (bits == 0) fail("--sk-pem is for rsa-* schemes");
    auto der = kex::load_rsa_private_key_pem(o.sk_pem, bits);
    if (!der) fail(std::string(kex::to_string(der.error())));
    sk = std::move(*der);
  } else {
    if (o.sk.empty()) fail("--sk or --sk-pem is required");
    sk = SecretBytes(hex_arg("sk", o.sk));
  }
  auto ss = kem->decapsulate(sk.span(), hex_arg("ct", o.ct));
  if (!ss) fail(std::string(to_string(ss.error())));
  std::cout << "scheme: " << kem->name() << "\n";
  print("shared_secret", ss->span());
}

// See the file comment. Exit status 1 if a result is wrong; valgrind adds its
// own error exit code for secret-dependent behaviour.
void ct_check(const KemOptions& o) {
  crypto::MlKemParameterSet set;
  if (o.scheme == "ml-kem-512") set = crypto::MlKemParameterSet::kMlKem512;
  else if (o.scheme == "ml-kem-768") set = crypto::MlKemParameterSet::kMlKem768;
  else if (o.scheme == "ml-kem-1024") set = crypto::MlKemParameterSet::kMlKem1024;
  else fail("ct-check covers our own code: ml-kem-512, ml-kem-768 or ml-kem-1024");
  const bool vg = crypto::running_on_valgrind();
  std::cout << "ct-check " << o.scheme << ": "
            << (vg ? "under valgrind, secrets (d, z, m, dk_PKE, z in dk) marked undefined"
                   : "NOT under valgrind: marking is a no-op, only the results are checked")
            << "\n";
  if (o.leak_control) {
    // Negative control: a deliberate branch on a secret byte, which memcheck
    // must report ("Conditional jump ... depends on uninitialised value").
    std::vector<std::uint8_t> secret(32, 0x5A);
    crypto::ct_poison(secret.data(), secret.size());
    volatile int sink = 0;
    if (secret[0] & 1) sink = 1;
    std::cout << "ct-check leak control: branched on a secret byte (" << sink << ")\n";
    return;
  }
  crypto::MlKem kem(set);
  const auto& p = kem.params();
  int bad = 0;
  for (int it = 0; it < o.iterations; ++it) {
    std::vector<std::uint8_t> d(32), z(32), m(32), ek(p.encaps_key_size), dk(p.decaps_key_size);
    std::vector<std::uint8_t> c(p.ciphertext_size), k_enc(32), k_dec(32), k_rej(32);
    for (int i = 0; i < 32; ++i) {
      d[i] = static_cast<std::uint8_t>(i * 3 + it);
      z[i] = static_cast<std::uint8_t>(i * 5 + 7 * it);
      m[i] = static_cast<std::uint8_t>(i * 11 + 13 * it);
    }
    crypto::ct_poison(d.data(), 32);
    crypto::ct_poison(z.data(), 32);
    crypto::ct_poison(m.data(), 32);
    if (!kem.keygen_internal(d, z, ek, dk).ok()) fail("keygen failed");
    // ek, and the copy of ek and H(ek) inside dk, are public.
    crypto::ct_declassify(ek.data(), ek.size());
    const std::size_t pke = 384 * static_cast<std::size_t>(p.k);
    crypto::ct_declassify(dk.data() + pke, ek.size() + 32);
    crypto::ct_poison(dk.data(), pke);         // s
    crypto::ct_poison(dk.data() + dk.size() - 32, 32);  // z
    if (!kem.encaps_internal(ek, m, c, k_enc).ok()) fail("encaps failed");
    crypto::ct_declassify(c.data(), c.size());  // the ciphertext is public
    if (!kem.decaps(dk, c, k_dec).ok()) fail("decaps failed");
    c[c.size() / 3] ^= 0x20;  // implicit rejection path
    if (!kem.decaps(dk, c, k_rej).ok()) fail("decaps (rejection) failed");
    // Results are compared only after declassification.
    crypto::ct_declassify(k_enc.data(), 32);
    crypto::ct_declassify(k_dec.data(), 32);
    crypto::ct_declassify(k_rej.data(), 32);
    if (k_enc != k_dec) ++bad;
    if (k_rej == k_enc) ++bad;
  }
  std::cout << "ct-check " << o.scheme << ": " << o.iterations << " keygen/encaps/decaps/rejection rounds, "
            << (bad ? "WRONG RESULTS" : "results correct") << "\n";
  if (bad) set_exit_code(1);
}

struct BenchOptions {
  std::string json_path;
  bool smoke = false;
  std::vector<std::string> schemes;
  std::string rsa15360_pem;
};

void bench_kex(const BenchOptions& o) {
  std::vector<kex::KemScheme> schemes;
  for (const auto& n : o.schemes) {
    auto s = kex::parse_scheme(n);
    if (!s) fail("unknown scheme '" + n + "'");
    schemes.push_back(*s);
  }
  std::string pem = o.rsa15360_pem;
  if (pem.empty()) {
    std::vector<std::string> candidates;
    if (const char* src = std::getenv("LAYERSEC_SOURCE_DIR"); src && *src)
      candidates.push_back(std::string(src) + "/testdata/kex/rsa15360.pem");
#ifdef LAYERSEC_SOURCE_DIR
    candidates.push_back(std::string(LAYERSEC_SOURCE_DIR) + "/testdata/kex/rsa15360.pem");
#endif
    candidates.push_back("testdata/kex/rsa15360.pem");
    for (const auto& c : candidates)
      if (std::ifstream(c).good()) {
        pem = c;
        break;
      }
  }
  std::cout << "layersec bench kex" << (o.smoke ? " (smoke: 3 samples per operation)" : "")
            << ": median microseconds per operation, each call timed on its own\n";
  auto rows = kexbench::run(schemes, o.smoke, o.smoke ? std::string() : pem, std::cout);
  kexbench::print(rows, std::cout);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, rows);
}

const CommandRegistration reg(40, [](CLI::App& root) {
  auto* kem = root.add_subcommand("kem", "KEM known-answer commands (keygen, encaps, decaps; hex in, hex out)");
  kem->require_subcommand(1);
  auto opts = std::make_shared<KemOptions>();
  auto add_scheme = [&](CLI::App* c) {
    c->add_option("--scheme", opts->scheme,
                  "ml-kem-512|ml-kem-768|ml-kem-1024|x25519|ecdh-p256|ecdh-p521|rsa-2048|rsa-3072|rsa-15360|"
                  "ntru-ees613ep1|ntru-ees1171ep1|x25519+ml-kem-768")
        ->required();
  };
  auto* kg = kem->add_subcommand("keygen", "Key pair (random, or from --seed: ML-KEM d||z, DH private key, "
                                           "RSA DER private key, NTRU DRBG seed, hybrid x25519 sk||d||z)");
  add_scheme(kg);
  kg->add_option("--seed", opts->seed, "deterministic input as hex (or @FILE)");
  kg->callback([opts] { keygen(*opts); });

  auto* en = kem->add_subcommand("encaps", "Encapsulate to --pk (random, or from --seed/--m)");
  add_scheme(en);
  en->add_option("--pk", opts->pk, "public key hex (or @FILE)")->required();
  en->add_option("--seed", opts->seed, "deterministic input hex: ML-KEM m; DH skE; RSA secret||OAEP seed; NTRU "
                                       "secret||DRBG seed; hybrid skE||m");
  en->add_option("--m", opts->m, "ML-KEM message m (32 bytes hex), same as --seed");
  en->callback([opts] { encaps(*opts); });

  auto* de = kem->add_subcommand("decaps", "Decapsulate --ct with --sk (or --sk-pem for RSA)");
  add_scheme(de);
  de->add_option("--sk", opts->sk, "private key hex (or @FILE)");
  de->add_option("--sk-pem", opts->sk_pem, "RSA private key PEM file (mode 0600)");
  de->add_option("--ct", opts->ct, "ciphertext hex (or @FILE)")->required();
  de->callback([opts] { decaps(*opts); });

  auto* ct = kem->add_subcommand("ct-check", "constant-time check of ML-KEM under valgrind memcheck");
  ct->group("");  // hidden
  add_scheme(ct);
  ct->add_option("--iterations", opts->iterations, "rounds (default 3)");
  ct->add_flag("--leak-control", opts->leak_control,
               "branch on a marked secret on purpose (valgrind must report it)");
  ct->callback([opts] { ct_check(*opts); });

  auto bopts = std::make_shared<BenchOptions>();
  auto* bk = bench_group(root).add_subcommand(
      "kex", "KEMs: keygen/encaps/decaps medians, 4-step negotiation over TCP loopback, peak RSS per scheme, with the NTRU paper's ratios");
  bk->add_option("--json", bopts->json_path,
                 "write rows {scheme, keygen_us, encaps_us, decaps_us, negotiation_us, peak_rss_kib, ...} to FILE");
  bk->add_flag("--smoke", bopts->smoke, "3 samples per operation, no RSA-15360: proves the benchmark runs");
  bk->add_option("--scheme", bopts->schemes, "only these schemes (repeatable)");
  bk->add_option("--rsa15360-pem", bopts->rsa15360_pem,
                 "pre-generated RSA-15360 private key (PEM, mode 0600); default testdata/kex/rsa15360.pem if present");
  bk->callback([bopts] { bench_kex(*bopts); });
});

}  // namespace
}  // namespace layersec::app
