// `layersec keys`: provisioning of a vehicle or substation PKI (kex/pki.h).
//
//   layersec keys ca --out DIR --name NAME [--kind vehicle|substation] [--alg p256|ed25519] [--days N]
//       DIR/ca.pem (0644) and DIR/ca.key (0600)
//   layersec keys issue --ca DIR --out DIR --name ECU --services 0x1234,0x5678
//                       [--alg rsa2048|rsa3072|p256|ed25519] [--days N]
//                       [--not-before UNIX --not-after UNIX] [--key FILE]
//       OUT/ECU.pem (0644) and OUT/ECU.key (0600); the CA key must be 0600
//   layersec keys show --cert FILE
//       subject, issuer, serial, validity, key algorithm and usage, services,
//       fingerprint (never a key)
//   layersec keys verify --ca DIR|FILE --cert FILE [--service 0x1234] [--key FILE] [--at UNIX]
//       exit 0 and "OK" if the chain, validity, purpose (and service, and the
//       key file's 0600 mode and match) hold; exit 1 with the reason otherwise
//   layersec keys establish --ca DIR --publisher DIR/NAME --subscriber DIR/NAME --service 0x1234
//                           [--eventgroup N] [--kem rsa-2048]
//       one Mode B handshake between identities loaded from files (0600 check);
//       prints message sizes and the key id, never the key
//   layersec keys handshake [--kem rsa-2048] [--iterations N] [--json FILE]
//       runs complete in-process Mode B handshakes (kex/mode_b.h) between a
//       freshly provisioned publisher and subscriber and reports the time per
//       handshake and per step (no transmission; one core)
//
// Exit status: 0 success, 1 refused / failed verification, 2 usage errors.
// Key files are written with mode 0600 and loaded only after the 0600 check
// (base/keyfile.h); keys are never printed.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/keyfile.h"
#include "layersec/base/time.h"
#include "layersec/harness/stats.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"

namespace layersec::app {
namespace {

using kex::PkiError;

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "layersec keys: " << msg << "\n";
  std::exit(2);
}

int refuse(const std::string& msg) {
  std::cerr << "layersec keys: " << msg << "\n";
  return 1;
}

// `key_path`, when given, is re-checked for the detail of a key file refusal
// (which directory is unsafe, the mode found); nothing is read from it.
std::string pki_message(PkiError e, ::layersec::KeyFileError detail, const std::string& what,
                        const std::string& key_path = {}) {
  std::string m = what + ": " + std::string(kex::to_string(e));
  if (e == PkiError::kKeyFile) {
    m += " (" + std::string(to_string(detail));
    std::string why;
    if (!key_path.empty() && !check_key_file(key_path, &why).ok() && !why.empty()) m += ": " + why;
    m += ")";
  }
  return m;
}

// A certificate file, or the refusal naming the option, the path and why.
std::optional<kex::Certificate> load_cert(const std::string& option, const std::string& path, std::string* why) {
  std::string detail;
  auto c = kex::Certificate::load(path, &detail);
  if (c.ok()) return std::move(c).value();
  *why = option + ": " + (detail.empty() ? path + ": " + std::string(kex::to_string(c.error())) : detail);
  return std::nullopt;
}

// --name is the subject CN and the file stem: a CN X.509 can carry (RFC 5280
// ub-common-name, 64 characters) and a plain file name.
void check_name(const std::string& name) {
  if (const std::string why = kex::check_common_name(name); !why.empty()) usage_error("--name " + why);
  if (name.find('/') != std::string::npos || name == "." || name == "..")
    usage_error("--name '" + name + "' is also the file stem: no '/', not '.' or '..'");
}

// Validity of N days from now, refused (naming --days) past 9999-12-31T23:59:59Z.
kex::Validity days_validity(std::int64_t now, int days) {
  const kex::Validity v = kex::Validity::days_from(now, days);
  if (v.not_after > kex::kMaxCertificateTime)
    usage_error("--days " + std::to_string(days) + " ends after 9999-12-31T23:59:59Z, the latest time X.509 "
                "can encode (RFC 5280 4.1.2.5); at most " +
                std::to_string((kex::kMaxCertificateTime - now) / 86400) + " days from now");
  return v;
}

// CPU time of this thread in microseconds: on a shared, loaded machine the
// wall-clock figures include waiting for a core; CPU time does not.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::int64_t wall_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

std::string iso_time(std::int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string service_hex(std::uint16_t s) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", s);
  return buf;
}

std::uint16_t parse_service(const std::string& text) {
  std::size_t pos = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(text, &pos, 0);  // 0x.. hex, or decimal
  } catch (const std::exception&) {
    usage_error("bad service id '" + text + "'");
  }
  if (pos != text.size() || v > 0xFFFF) usage_error("bad service id '" + text + "' (0..0xffff)");
  return static_cast<std::uint16_t>(v);
}

std::vector<std::uint16_t> parse_services(const std::string& list) {
  std::vector<std::uint16_t> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(parse_service(item));
  }
  if (out.empty()) usage_error("--services needs at least one service id");
  return out;
}

void ensure_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) usage_error(dir + " is not a directory");
    return;
  }
  // mkdir -p with mode 0700 for every directory created.
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos < dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) usage_error("cannot create " + prefix);
  }
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) usage_error("cannot create " + dir);
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void print_info(const kex::CertificateInfo& info) {
  std::cout << "subject:      " << info.subject << "\n"
            << "issuer:       " << info.issuer << "\n"
            << "serial:       " << info.serial_hex << "\n"
            << "not before:   " << iso_time(info.not_before) << "\n"
            << "not after:    " << iso_time(info.not_after) << "\n"
            << "ca:           " << (info.is_ca ? "yes" : "no") << "\n"
            << "key:          " << info.key_algorithm << "\n"
            << "key usage:    ";
  for (std::size_t i = 0; i < info.key_usage.size(); ++i) {
    std::cout << (i ? "," : "") << info.key_usage[i];
  }
  std::cout << "\nservices:     ";
  if (!info.has_service_extension) {
    std::cout << "(none)";
  } else {
    for (std::size_t i = 0; i < info.services.size(); ++i) {
      std::cout << (i ? "," : "") << service_hex(info.services[i]);
    }
  }
  std::cout << "\nsha256:       " << info.sha256_fingerprint << "\n";
}

// ------------------------------------------------------------------ ca

struct CaArgs {
  std::string out, name, kind = "vehicle", alg = "p256";
  int days = 3650;
};

int run_ca(const CaArgs& a) {
  kex::CaOptions o;
  o.name = a.name;
  if (a.kind == "vehicle") {
    o.kind = kex::CaKind::kVehicle;
  } else if (a.kind == "substation") {
    o.kind = kex::CaKind::kSubstation;
  } else {
    usage_error("--kind must be vehicle or substation");
  }
  const auto alg = kex::key_algorithm_from_string(a.alg);
  if (!alg || (*alg != kex::KeyAlgorithm::kEcdsaP256 && *alg != kex::KeyAlgorithm::kEd25519)) {
    usage_error("--alg must be p256 or ed25519 for a CA");
  }
  o.algorithm = *alg;
  check_name(a.name);
  o.validity = days_validity(wall_now(), a.days);
  ensure_dir(a.out);
  auto ca = kex::create_ca(o);
  if (!ca.ok()) return refuse("cannot create CA: " + std::string(kex::to_string(ca.error())));
  ::layersec::KeyFileError detail{};
  if (auto s = kex::save_ca(a.out, *ca, &detail); !s.ok()) {
    return refuse(pki_message(s.error(), detail, "cannot write " + a.out + "/ca.key|ca.pem"));
  }
  std::cout << "created " << a.kind << " CA '" << a.name << "' (" << a.alg << ")\n"
            << "certificate:  " << a.out << "/ca.pem\n"
            << "private key:  " << a.out << "/ca.key (mode 0600)\n"
            << "sha256:       " << ca->certificate.info().sha256_fingerprint << "\n";
  return 0;
}

// ------------------------------------------------------------------ issue

struct IssueArgs {
  std::string ca, out, name, services, alg = "rsa2048", key;
  int days = 365;
  std::int64_t not_before = 0, not_after = 0;
};

int run_issue(const IssueArgs& a) {
  const auto alg = kex::key_algorithm_from_string(a.alg);
  if (!alg) usage_error("--alg must be rsa2048, rsa3072, rsa4096, p256 or ed25519");
  kex::IssueOptions o;
  o.name = a.name;
  o.services = parse_services(a.services);
  o.algorithm = *alg;
  if ((a.not_before != 0) != (a.not_after != 0)) usage_error("give both --not-before and --not-after");
  if (a.not_before != 0) {
    if (a.not_after <= a.not_before) usage_error("--not-after must be later than --not-before");
    o.validity = {a.not_before, a.not_after};
  } else {
    o.validity = days_validity(wall_now(), a.days);
  }
  check_name(o.name);
  ::layersec::KeyFileError detail{};
  auto ca = kex::load_ca(a.ca, &detail);
  if (!ca.ok()) return refuse(pki_message(ca.error(), detail, "--ca: cannot load CA from " + a.ca, a.ca + "/ca.key"));
  ensure_dir(a.out);
  std::optional<kex::Identity> id;
  if (!a.key.empty()) {
    // Certify an existing key (e.g. a pre-generated RSA-15360 key); it is
    // loaded through the 0600 check and stored beside the certificate.
    auto key = kex::PrivateKey::load(a.key, &detail);
    if (!key.ok()) return refuse(pki_message(key.error(), detail, "--key: " + a.key, a.key));
    auto cert = kex::issue_certificate_for_key(*ca, key->public_key(), o);
    if (!cert.ok()) return refuse("cannot issue: " + std::string(kex::to_string(cert.error())));
    id.emplace(kex::Identity{std::move(cert).value(), std::move(key).value()});
  } else {
    auto issued = kex::issue_certificate(*ca, o);
    if (!issued.ok()) return refuse("cannot issue: " + std::string(kex::to_string(issued.error())));
    id.emplace(std::move(issued).value());
  }
  if (auto s = kex::save_identity(a.out, a.name, *id, &detail); !s.ok()) {
    return refuse(pki_message(s.error(), detail, "cannot write " + a.out + "/" + a.name + ".key|.pem"));
  }
  std::cout << "issued '" << a.name << "' (" << id->certificate.info().key_algorithm << ") for services ";
  for (std::size_t i = 0; i < id->certificate.info().services.size(); ++i) {
    std::cout << (i ? "," : "") << service_hex(id->certificate.info().services[i]);
  }
  std::cout << "\ncertificate:  " << a.out << "/" << a.name << ".pem\n"
            << "private key:  " << a.out << "/" << a.name << ".key (mode 0600)\n";
  return 0;
}

// ------------------------------------------------------------------ show / verify

int run_show(const std::string& cert_path) {
  std::string why;
  auto cert = load_cert("--cert", cert_path, &why);
  if (!cert) return refuse(why);
  print_info(cert->info());
  return 0;
}

struct VerifyArgs {
  std::string ca, cert, service, key;
  std::int64_t at = 0;
};

int run_verify(const VerifyArgs& a) {
  const std::string anchor = is_dir(a.ca) ? a.ca + "/ca.pem" : a.ca;
  std::string why;
  auto ca = load_cert("--ca", anchor, &why);
  if (!ca) return refuse(why);
  auto cert = load_cert("--cert", a.cert, &why);
  if (!cert) return refuse(why);
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca.value(), 1));
  if (!trust.ok()) return refuse(anchor + ": " + std::string(kex::to_string(trust.error())));
  const std::int64_t now = a.at != 0 ? a.at : wall_now();
  std::string detail;
  if (auto s = trust->verify(*cert, now, &detail); !s.ok()) {
    return refuse(a.cert + ": " + std::string(kex::to_string(s.error())) +
                  (detail.empty() ? "" : " (" + detail + ")"));
  }
  if (!a.service.empty()) {
    const std::uint16_t service = parse_service(a.service);
    if (auto s = kex::check_service_authorised(*cert, service); !s.ok()) {
      return refuse(a.cert + ": " + std::string(kex::to_string(s.error())) + " " + service_hex(service));
    }
  }
  if (!a.key.empty()) {
    ::layersec::KeyFileError kd{};
    auto key = kex::PrivateKey::load(a.key, &kd);
    if (!key.ok()) return refuse(pki_message(key.error(), kd, "--key: " + a.key, a.key));
    if (key->public_key().der() != cert->public_key().der()) {
      return refuse(a.key + ": key does not belong to " + a.cert);
    }
  }
  std::cout << "OK " << cert->info().common_name
            << (a.service.empty() ? "" : " authorised for " + service_hex(parse_service(a.service)))
            << "\n";
  return 0;
}

// ------------------------------------------------------------------ handshake timing

struct HandshakeArgs {
  std::string kem = "rsa-2048";
  int iterations = 200;
  std::string json;
};

int run_handshake(const HandshakeArgs& a) {
  const auto scheme = kex::parse_scheme(a.kem);
  if (!scheme) usage_error("unknown --kem " + a.kem);
  if (a.iterations <= 0) usage_error("--iterations must be positive");
  const bool rsa = *scheme == kex::KemScheme::kRsa2048 || *scheme == kex::KemScheme::kRsa3072;
  if (*scheme == kex::KemScheme::kRsa15360) {
    usage_error("rsa-15360 keys take minutes to generate; not offered here");
  }
  const std::int64_t now_s = wall_now();
  auto ca = kex::create_ca({"bench-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                            kex::Validity::days_from(now_s, 1)});
  if (!ca.ok()) return refuse("CA creation failed");
  const kex::KeyAlgorithm sub_alg =
      !rsa ? kex::KeyAlgorithm::kEcdsaP256
           : (*scheme == kex::KemScheme::kRsa2048 ? kex::KeyAlgorithm::kRsa2048 : kex::KeyAlgorithm::kRsa3072);
  auto pub_id = kex::issue_certificate(*ca, {"publisher", {0x1234}, kex::KeyAlgorithm::kEcdsaP256,
                                             kex::Validity::days_from(now_s, 1)});
  auto sub_id = kex::issue_certificate(*ca, {"subscriber", {0x1234}, sub_alg, kex::Validity::days_from(now_s, 1)});
  if (!pub_id.ok() || !sub_id.ok()) return refuse("certificate issuing failed");
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca->certificate, 1));
  if (!trust.ok()) return refuse("trust store failed");
  kex::ModeBConfig cfg;
  cfg.kem = *scheme;
  cfg.max_pending = 4;
  cfg.replay_cache_size = 2 * (static_cast<std::size_t>(a.iterations) + 5) + 16;  // nonce_S and nonce_P per handshake
  auto pub = kex::ModeBPublisher::create(cfg, *pub_id, *trust);
  auto sub = kex::ModeBSubscriber::create(cfg, *sub_id, *trust);
  if (!pub.ok() || !sub.ok()) return refuse("Mode B setup failed");

  // Baseline, measured in the same loop: the bare KEM operations a handshake
  // contains (a fresh key pair for non-RSA KEMs, encapsulation,
  // decapsulation), without certificates, signatures, HKDF or framing.
  std::unique_ptr<kex::Kem> bare;
  try {
    bare = kex::make_kem(*scheme);
  } catch (const std::exception& e) {
    return refuse(std::string("KEM unavailable: ") + e.what());
  }
  std::vector<std::uint8_t> rsa_pk;
  std::unique_ptr<kex::KemPrivateKey> rsa_sk;
  if (rsa) {
    auto der = sub_id->key.to_der();
    if (!der.ok()) return refuse("key export failed");
    auto loaded = bare->load_private_key(der->span());
    if (!loaded.ok()) return refuse("KEM key load failed");
    rsa_sk = std::move(loaded).value();
    rsa_pk = sub_id->certificate.public_key().der();
  }
  MonotonicClock clock;
  std::vector<double> total, cpu, baseline, t_request, t_publisher, t_subscriber, t_confirm;
  std::size_t bytes_on_wire = 0;
  const TimePoint base = TimePoint::from_ns(now_s * 1'000'000'000LL);
  for (int i = 0; i < a.iterations + 5; ++i) {  // 5 warm-up rounds
    const TimePoint now = base + Duration::microseconds(i);  // protocol time, injected
    const double c0 = thread_cpu_us();
    const TimePoint t0 = clock.now();
    auto req = (*sub)->start(0x1234, 1, now);
    const TimePoint t1 = clock.now();
    auto del = req.ok() ? (*pub)->respond(*req, now) : Result<std::vector<std::uint8_t>, kex::ModeBError>(Err(req.error()));
    const TimePoint t2 = clock.now();
    auto conf = del.ok() ? (*sub)->on_delivery(*del, now) : Result<std::vector<std::uint8_t>, kex::ModeBError>(Err(del.error()));
    const TimePoint t3 = clock.now();
    auto act = conf.ok() ? (*pub)->on_confirm(*conf, now) : Result<kex::ActivatedKey, kex::ModeBError>(Err(conf.error()));
    const TimePoint t4 = clock.now();
    const double c4 = thread_cpu_us();
    if (!act.ok()) return refuse("handshake failed: " + std::string(kex::to_string(act.error())));
    const double b0 = thread_cpu_us();
    bool bare_ok = true;
    if (rsa) {
      auto enc = bare->encapsulate(rsa_pk);
      auto dec = enc.ok() ? bare->decapsulate(*rsa_sk, enc->ciphertext)
                          : Result<SecretBytes, kex::KemError>(Err(enc.error()));
      bare_ok = dec.ok();
    } else {
      auto kp = bare->generate();
      auto sk = kp.ok() ? bare->load_private_key(kp->private_key.span())
                        : Result<std::unique_ptr<kex::KemPrivateKey>, kex::KemError>(Err(kp.error()));
      auto enc = sk.ok() ? bare->encapsulate(kp->public_key)
                         : Result<kex::Encapsulation, kex::KemError>(Err(sk.error()));
      auto dec = enc.ok() ? bare->decapsulate(**sk, enc->ciphertext)
                          : Result<SecretBytes, kex::KemError>(Err(enc.error()));
      bare_ok = dec.ok();
    }
    const double b1 = thread_cpu_us();
    if (!bare_ok) return refuse("bare KEM baseline failed");
    if (i < 5) continue;
    baseline.push_back(b1 - b0);
    bytes_on_wire = req->size() + del->size() + conf->size();
    t_request.push_back((t1 - t0).us());
    t_publisher.push_back((t2 - t1).us());
    t_subscriber.push_back((t3 - t2).us());
    t_confirm.push_back((t4 - t3).us());
    total.push_back((t4 - t0).us());
    cpu.push_back(c4 - c0);
  }
  // harness/stats.h: mean, linearly interpolated percentiles, max.
  const harness::Summary s = harness::summarize(total);
  const harness::Summary c = harness::summarize(cpu);
  const harness::Summary b = harness::summarize(baseline);
  std::printf("Mode B handshake, kem %s, %d iterations, in process (no transmission)\n", a.kem.c_str(),
              a.iterations);
  std::printf("  total wall us: mean %.1f p50 %.1f p95 %.1f p99 %.1f max %.1f\n", s.mean, s.p50,
              s.p95, s.p99, s.max);
  std::printf("  total CPU us:  mean %.1f p50 %.1f p95 %.1f p99 %.1f max %.1f\n", c.mean, c.p50,
              c.p95, c.p99, c.max);
  std::printf("  baseline, bare KEM %s in the same run, CPU us: p50 %.1f (handshake / baseline = %.2f)\n",
              rsa ? "encaps+decaps" : "keygen+encaps+decaps", b.p50, b.p50 > 0 ? c.p50 / b.p50 : 0.0);
  const char* names[] = {"subscriber request", "publisher validate+encaps+sign",
                         "subscriber verify+decaps", "publisher confirm"};
  const std::vector<double>* parts[] = {&t_request, &t_publisher, &t_subscriber, &t_confirm};
  nlohmann::json steps = nlohmann::json::object();
  for (int k = 0; k < 4; ++k) {
    const harness::Summary p = harness::summarize(*parts[k]);
    std::printf("  %-32s wall p50 %.1f us\n", names[k], p.p50);
    steps[names[k]] = {{"mean_us", p.mean}, {"p50_us", p.p50}};
  }
  std::printf("  bytes on the wire (3 messages): %zu\n", bytes_on_wire);
  if (!a.json.empty()) {
    nlohmann::json j = {{"kem", a.kem},          {"iterations", a.iterations},
                        {"mean_us", s.mean},     {"p50_us", s.p50},
                        {"p95_us", s.p95},       {"p99_us", s.p99},
                        {"max_us", s.max},       {"cpu_mean_us", c.mean},
                        {"cpu_p50_us", c.p50},   {"cpu_p99_us", c.p99},
                        {"baseline_bare_kem_cpu_p50_us", b.p50},
                        {"ratio", b.p50 > 0 ? c.p50 / b.p50 : 0.0},
                        {"bytes", bytes_on_wire},
                        {"steps", steps}};
    try {
      OutputFile f(a.json);  // no symlink followed; every write error reported
      f.write(j.dump(2) + "\n");
      f.close();
    } catch (const FileError& e) {
      return refuse(std::string("--json: ") + e.what());
    }
  }
  return 0;
}

// ------------------------------------------------------------------ establish

struct EstablishArgs {
  std::string ca, publisher, subscriber, service, kem = "rsa-2048";
  std::uint16_t eventgroup = 1;
};

// "DIR/NAME" -> (DIR, NAME) for load_identity.
std::pair<std::string, std::string> split_stem(const std::string& stem) {
  const auto slash = stem.rfind('/');
  if (slash == std::string::npos) return {".", stem};
  return {stem.substr(0, slash), stem.substr(slash + 1)};
}

int run_establish(const EstablishArgs& a) {
  const auto scheme = kex::parse_scheme(a.kem);
  if (!scheme) usage_error("unknown --kem " + a.kem);
  const std::uint16_t service = parse_service(a.service);
  const std::string anchor = is_dir(a.ca) ? a.ca + "/ca.pem" : a.ca;
  std::string why;
  auto ca = load_cert("--ca", anchor, &why);
  if (!ca) return refuse(why);
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca.value(), 1));
  if (!trust.ok()) return refuse(anchor + ": " + std::string(kex::to_string(trust.error())));
  ::layersec::KeyFileError detail{};
  const auto [pdir, pname] = split_stem(a.publisher);
  auto pub_id = kex::load_identity(pdir, pname, &detail);
  if (!pub_id.ok()) return refuse(pki_message(pub_id.error(), detail, "--publisher " + a.publisher, a.publisher + ".key"));
  const auto [sdir, sname] = split_stem(a.subscriber);
  auto sub_id = kex::load_identity(sdir, sname, &detail);
  if (!sub_id.ok()) return refuse(pki_message(sub_id.error(), detail, "--subscriber " + a.subscriber, a.subscriber + ".key"));

  kex::ModeBConfig cfg;
  cfg.kem = *scheme;
  auto pub = kex::ModeBPublisher::create(cfg, *pub_id, *trust);
  if (!pub.ok()) return refuse("publisher: " + std::string(kex::to_string(pub.error())));
  auto sub = kex::ModeBSubscriber::create(cfg, *sub_id, *trust);
  if (!sub.ok()) return refuse("subscriber: " + std::string(kex::to_string(sub.error())));
  // Protocol time: the wall clock in ns (the nodes' shared time base).
  const TimePoint now = TimePoint::from_ns(wall_now() * 1'000'000'000LL);
  auto req = (*sub)->start(service, a.eventgroup, now);
  if (!req.ok()) return refuse("KeyRequest: " + std::string(kex::to_string(req.error())));
  std::cout << "KeyRequest   " << req->size() << " bytes  subscriber -> publisher\n";
  auto del = (*pub)->respond(*req, now);
  if (!del.ok()) return refuse("publisher refused the KeyRequest: " + std::string(kex::to_string(del.error())));
  std::cout << "KeyDelivery  " << del->size() << " bytes  publisher -> subscriber\n";
  auto conf = (*sub)->on_delivery(*del, now);
  if (!conf.ok()) return refuse("subscriber refused the KeyDelivery: " + std::string(kex::to_string(conf.error())));
  std::cout << "KeyConfirm   " << conf->size() << " bytes  subscriber -> publisher\n";
  auto act = (*pub)->on_confirm(*conf, now);
  if (!act.ok()) return refuse("publisher refused the KeyConfirm: " + std::string(kex::to_string(act.error())));
  std::cout << "established: service " << service_hex(act->service_id) << " eventgroup " << act->eventgroup_id
            << " key id " << act->key_id << " (" << act->key.size() * 8 << "-bit key, not printed) for '"
            << act->subscriber << "', kem " << a.kem << "\n";
  return 0;
}

const CommandRegistration reg(60, [](CLI::App& root) {
  auto* keys = root.add_subcommand("keys", "Provision and check the vehicle / substation PKI");
  keys->require_subcommand(1);

  auto ca = std::make_shared<CaArgs>();
  auto* c = keys->add_subcommand("ca", "Create a CA: DIR/ca.pem and DIR/ca.key (0600)");
  c->add_option("--out", ca->out, "output directory")->required()->check(kOutputDir);
  c->add_option("--name", ca->name, "CA common name")->required();
  c->add_option("--kind", ca->kind, "vehicle (ECUs) or substation (IEDs)");
  c->add_option("--alg", ca->alg, "p256 (default) or ed25519");
  c->add_option("--days", ca->days, "validity in days (default 3650; ends by 9999-12-31)")
      ->check(whole_in(1, 3'000'000));
  c->callback([ca] { set_exit_code(run_ca(*ca)); });

  auto is = std::make_shared<IssueArgs>();
  auto* i = keys->add_subcommand("issue", "Issue an ECU/IED certificate with its authorised services");
  i->add_option("--ca", is->ca, "CA directory (ca.pem, ca.key)")->required();
  i->add_option("--out", is->out, "output directory")->required()->check(kOutputDir);
  i->add_option("--name", is->name, "node name (CN, file stem)")->required();
  i->add_option("--services", is->services, "authorised service ids, e.g. 0x1234,0x5678")->required();
  i->add_option("--alg", is->alg, "node key: rsa2048 (default; Mode B RSA-OAEP), rsa3072, p256, ed25519");
  i->add_option("--key", is->key, "certify this existing private key (PEM, mode 0600) instead of generating one");
  i->add_option("--days", is->days, "validity in days (default 365; ends by 9999-12-31)")
      ->check(whole_in(1, 3'000'000));
  i->add_option("--not-before", is->not_before, "explicit validity start (Unix seconds)")
      ->check(whole_in(1, kex::kMaxCertificateTime - 1));
  i->add_option("--not-after", is->not_after, "explicit validity end (Unix seconds, at most 253402300799)")
      ->check(whole_in(1, kex::kMaxCertificateTime));
  i->callback([is] { set_exit_code(run_issue(*is)); });

  auto show = std::make_shared<std::string>();
  auto* s = keys->add_subcommand("show", "Print a certificate's subject, validity and services");
  s->add_option("--cert", *show, "certificate (PEM)")->required();
  s->callback([show] { set_exit_code(run_show(*show)); });

  auto va = std::make_shared<VerifyArgs>();
  auto* v = keys->add_subcommand("verify", "Check a certificate against a CA (and a service)");
  v->add_option("--ca", va->ca, "CA directory or CA certificate")->required();
  v->add_option("--cert", va->cert, "node certificate (PEM)")->required();
  v->add_option("--service", va->service, "service id the node must be authorised for");
  v->add_option("--key", va->key, "also load this key file (0600 check) and match it");
  v->add_option("--at", va->at, "verify at this time (Unix seconds) instead of now")
      ->check(whole_in(1, kex::kMaxCertificateTime));
  v->callback([va] { set_exit_code(run_verify(*va)); });

  auto hs = std::make_shared<HandshakeArgs>();
  auto* h = keys->add_subcommand("handshake", "Time complete in-process Mode B handshakes");
  h->add_option("--kem", hs->kem, "rsa-2048 (default), rsa-3072, x25519, ecdh-p256, ml-kem-768, ...");
  h->add_option("--iterations", hs->iterations, "handshakes to time (default 200)")->check(whole_in(1, 1'000'000));
  h->add_option("--json", hs->json, "write the figures to FILE")->check(kOutputFile);
  h->callback([hs] { set_exit_code(run_handshake(*hs)); });

  auto es = std::make_shared<EstablishArgs>();
  auto* e = keys->add_subcommand("establish", "One Mode B handshake between provisioned identities");
  e->add_option("--ca", es->ca, "CA directory or CA certificate")->required();
  e->add_option("--publisher", es->publisher, "publisher identity DIR/NAME (NAME.pem, NAME.key)")->required();
  e->add_option("--subscriber", es->subscriber, "subscriber identity DIR/NAME")->required();
  e->add_option("--service", es->service, "service id")->required();
  e->add_option("--eventgroup", es->eventgroup, "eventgroup id (default 1)")->check(whole_in(0, 0xFFFF));
  e->add_option("--kem", es->kem, "rsa-2048 (default; the subscriber's certificate key), x25519, ...");
  e->callback([es] { set_exit_code(run_establish(*es)); });
});

}  // namespace
}  // namespace layersec::app
