// `layersec kem keygen|encaps|decaps --scheme NAME`: known-answer commands for
// every KEM of kex/kem.h, taking deterministic inputs as hex and printing
// public keys and ciphertexts as hex ("name: hex" lines), so any other
// implementation can be checked against ours.
//
// Secrets (private keys, shared secrets) are printed only with
// --print-secrets, which says so on stderr; otherwise a secret is shown by
// its id (the first 8 bytes of its SHA-256, "private_key_id: ..."), and
// `keygen --sk-out FILE` writes the private key as a 0600 hex key file
// (base/keyfile.h). Never use --print-secrets with production keys.
//
// Hex arguments may be given as @FILE. Secret inputs (--sk, --seed) are then
// read through base/keyfile.h (0600 or 0400, owned by us, no symlink, safe
// directories, hex with whitespace and # comments); public inputs (--pk,
// --ct) through base/file.h (regular files only, at most 1 MiB), so a FIFO
// or /dev/zero is refused instead of blocking or exhausting memory.
//
// `layersec kem ct-check --scheme ml-kem-NNN` (hidden) runs ML-KEM keygen,
// encapsulation and decapsulation (valid and implicit-rejection) with d, z, m
// and the secret parts of dk marked undefined for valgrind memcheck; run under
// `valgrind --error-exitcode=1`, any secret-dependent branch or memory index
// fails it (tests/cli/kem_ct_valgrind.sh); the rounds are kex/mlkem_ct_check.h.
//
// A refused --pk is explained by kex/kem_check.h, which names the check that
// failed (length, FIPS 203 §7.2 modulus, X25519 low order).
// `layersec bench kex` is registered by cmd_bench_kex.cc.
#include <sys/stat.h>

#include <cctype>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mlkem_ct.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/kem_check.h"
#include "layersec/kex/mlkem_ct_check.h"

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
  std::string sk_out;
  bool print_secrets = false;
  int iterations = 3;
  bool leak_control = false;
};

// Largest public hex input read from @FILE (an RSA-15360 DER key is ~2 KiB,
// an NTRU-1171 key ~1.6 KiB; 1 MiB leaves room and bounds /dev/zero-like input).
constexpr std::size_t kMaxPublicHexFile = 1 << 20;

// Bad arguments or a failed operation: unwinds (so SecretBytes are wiped) to
// main(), which prints "layersec: kem: <msg>" and exits with status 1.
[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error("kem: " + msg); }

// A public hex argument: inline hex or @FILE (a regular file of hex text).
std::vector<std::uint8_t> hex_arg(const std::string& name, std::string value) {
  if (!value.empty() && value[0] == '@') {
    try {
      value = read_regular_file(value.substr(1), kMaxPublicHexFile);
    } catch (const FileError& e) {
      fail("--" + name + ": " + e.what());
    }
  }
  std::string clean;
  for (char c : value)
    if (!std::isspace(static_cast<unsigned char>(c))) clean += c;
  auto bytes = from_hex(clean);
  if (!bytes) fail("--" + name + " is not valid hex (" + std::to_string(clean.size()) + " characters)");
  return *bytes;
}

// A secret hex argument: inline hex (known-answer tests), or @FILE read as a
// key file through base/keyfile.h (its checks and its hex format).
SecretBytes secret_arg(const std::string& name, const std::string& value) {
  if (!value.empty() && value[0] == '@') {
    std::string detail;
    auto key = load_key_file(value.substr(1), {KeyFileFormat::kHex, 0}, &detail);
    if (!key) fail("--" + name + ": " + key_file_message(value.substr(1), key.error(), detail));
    return std::move(key).value();
  }
  return SecretBytes(hex_arg(name, value));
}

// The id printed instead of a secret: the first 8 bytes of its SHA-256.
std::string secret_id(ByteSpan secret) {
  std::uint8_t digest[32];
  const ByteSpan parts[1] = {secret};
  if (!crypto::sha256(parts, digest).ok()) fail("SHA-256 failed");
  return to_hex(ByteSpan(digest, 8));
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

// A secret: its id always, the secret itself only with --print-secrets.
void print_secret(const KemOptions& o, const std::string& name, ByteSpan secret) {
  std::cout << name << "_id: " << secret_id(secret) << "\n";
  if (o.print_secrets) std::cout << name << ": " << to_hex(secret) << "\n";
}

void warn_if_printing(const KemOptions& o) {
  if (o.print_secrets)
    std::cerr << "layersec kem: --print-secrets: private keys and shared secrets are printed in clear; "
                 "never use this with production keys\n";
}

void keygen(const KemOptions& o) {
  auto kem = kem_for(o);
  warn_if_printing(o);
  if (!o.sk_out.empty()) {  // refuse before the (possibly slow) key generation
    struct stat st {};
    if (::lstat(o.sk_out.c_str(), &st) == 0) fail("--sk-out: " + o.sk_out + " exists (refusing to overwrite a key)");
  }
  auto kp = o.seed.empty() ? kem->generate() : kem->generate_from_seed(secret_arg("seed", o.seed).span());
  if (!kp) {
    if (o.seed.empty()) fail(std::string(to_string(kp.error())));
    fail("--seed: " + std::string(to_string(kp.error())) + " (" + std::string(kem->seed_help()) + ")");
  }
  std::cout << "scheme: " << kem->name() << "\n";
  print("public_key", kp->public_key);
  print_secret(o, "private_key", kp->private_key.span());
  if (!o.sk_out.empty()) {
    std::string detail;
    auto w = write_key_file_hex(o.sk_out, kp->private_key.span(), /*overwrite=*/false, &detail);
    if (!w) fail("--sk-out: " + key_file_message(o.sk_out, w.error(), detail));
    std::cout << "private_key_file: " << o.sk_out << " (mode 0600, hex)\n";
  }
}

void encaps(const KemOptions& o) {
  auto kem = kem_for(o);
  if (o.pk.empty()) fail("--pk is required");
  const std::string seed = !o.m.empty() ? o.m : o.seed;
  warn_if_printing(o);
  auto pk = hex_arg("pk", o.pk);
  auto e = seed.empty() ? kem->encapsulate(pk)
                        : kem->encapsulate_with_seed(pk, secret_arg(o.m.empty() ? "seed" : "m", seed).span());
  if (!e) {
    if (e.error() == kex::KemError::kBadPublicKey)
      fail("--pk " + kex::describe(kem->scheme(), kex::check_public_key(kem->scheme(), pk)));
    fail(std::string(to_string(e.error())) + " (" + std::string(kem->seed_help()) + ")");
  }
  std::cout << "scheme: " << kem->name() << "\n";
  print("ciphertext", e->ciphertext);
  print_secret(o, "shared_secret", e->shared_secret.span());
}

void decaps(const KemOptions& o) {
  auto kem = kem_for(o);
  if (o.ct.empty()) fail("--ct is required");
  warn_if_printing(o);
  SecretBytes sk;
  if (!o.sk_pem.empty()) {
    const int bits = o.scheme == "rsa-2048" ? 2048 : o.scheme == "rsa-3072" ? 3072 : o.scheme == "rsa-15360" ? 15360 : 0;
    if (bits == 0) fail("--sk-pem is for rsa-* schemes");
    auto der = kex::load_rsa_private_key_pem(o.sk_pem, bits);
    if (!der) fail("--sk-pem: " + o.sk_pem + ": " + std::string(kex::to_string(der.error())));
    sk = std::move(*der);
  } else {
    if (o.sk.empty()) fail("--sk or --sk-pem is required");
    sk = secret_arg("sk", o.sk);
  }
  const auto ct = hex_arg("ct", o.ct);
  auto ss = kem->decapsulate(sk.span(), ct);
  if (!ss) {
    std::string why = std::string(to_string(ss.error()));
    if (ss.error() == kex::KemError::kBadCiphertextLength)
      why = "--ct has " + std::to_string(ct.size()) + " bytes; " + std::string(kex::scheme_name(kem->scheme())) +
            " ciphertexts have " + std::to_string(kem->ciphertext_size()) + " (" + why + ")";
    else if (ss.error() == kex::KemError::kBadPrivateKey)
      why = "--sk" + std::string(o.sk_pem.empty() ? "" : "-pem") + ": " + why +
            (o.scheme.rfind("ml-kem-", 0) == 0 ? " (FIPS 203 §7.3: wrong length, or H(ek) in the key does not match)" : "");
    fail(why);
  }
  std::cout << "scheme: " << kem->name() << "\n";
  print_secret(o, "shared_secret", ss->span());
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
  if (o.leak_control) {  // memcheck must report this branch
    std::cout << "ct-check leak control: branched on a secret byte (" << kex::mlkem_ct_leak_control() << ")\n";
    return;
  }
  auto r = kex::run_mlkem_ct_check(set, o.iterations);
  if (!r) fail(std::string(kex::to_string(r.error())) + " failed");
  std::cout << "ct-check " << o.scheme << ": " << r->rounds << " keygen/encaps/decaps/rejection rounds, "
            << (r->wrong_results ? "WRONG RESULTS" : "results correct") << "\n";
  if (r->wrong_results) set_exit_code(1);
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
  auto add_print = [&](CLI::App* c) {
    c->add_flag("--print-secrets", opts->print_secrets,
                "also print private keys / shared secrets in clear (test vectors only; says so on stderr)");
  };
  auto* kg = kem->add_subcommand("keygen", "Key pair (random, or from --seed: ML-KEM d||z, DH private key, "
                                           "RSA DER private key, NTRU DRBG seed, hybrid x25519 sk||d||z)");
  add_scheme(kg);
  add_print(kg);
  kg->add_option("--seed", opts->seed, "deterministic input as hex (or @FILE: a 0600 hex key file)");
  kg->add_option("--sk-out", opts->sk_out, "write the private key to FILE (hex, mode 0600; never overwrites)");
  kg->callback([opts] { keygen(*opts); });

  auto* en = kem->add_subcommand("encaps", "Encapsulate to --pk (random, or from --seed/--m)");
  add_scheme(en);
  add_print(en);
  en->add_option("--pk", opts->pk, "public key hex (or @FILE)")->required();
  en->add_option("--seed", opts->seed, "deterministic input hex: ML-KEM m; DH skE; RSA secret||OAEP seed; NTRU "
                                       "secret||DRBG seed; hybrid skE||m");
  en->add_option("--m", opts->m, "ML-KEM message m (32 bytes hex), same as --seed");
  en->callback([opts] { encaps(*opts); });

  auto* de = kem->add_subcommand("decaps", "Decapsulate --ct with --sk (or --sk-pem for RSA)");
  add_scheme(de);
  add_print(de);
  de->add_option("--sk", opts->sk, "private key hex (or @FILE: a 0600 hex key file, e.g. from keygen --sk-out)");
  de->add_option("--sk-pem", opts->sk_pem, "RSA private key PEM file (mode 0600)");
  de->add_option("--ct", opts->ct, "ciphertext hex (or @FILE)")->required();
  de->callback([opts] { decaps(*opts); });

  auto* ct = kem->add_subcommand("ct-check", "constant-time check of ML-KEM under valgrind memcheck");
  ct->group("");  // hidden
  add_scheme(ct);
  ct->add_option("--iterations", opts->iterations, "rounds (default 3)")->check(whole_in(1, 1000));
  ct->add_flag("--leak-control", opts->leak_control,
               "branch on a marked secret on purpose (valgrind must report it)");
  ct->callback([opts] { ct_check(*opts); });
});

}  // namespace
}  // namespace layersec::app
