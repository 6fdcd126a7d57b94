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
//       times complete in-process Mode B handshakes (harness/modeb_handshake_bench.h)
//       per handshake and per step (no transmission; one core)
//
// Exit status: 0 success, 1 refused / failed verification, 2 usage errors.
// Key files are written with mode 0600 and loaded only after the 0600 check
// (base/keyfile.h); keys are never printed. The helpers are keymgmt/pki_cli.h.
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/keyfile.h"
#include "layersec/harness/modeb_handshake_bench.h"
#include "layersec/keymgmt/pki_cli.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"

namespace layersec::app {
namespace {

using namespace layersec::keymgmt;

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "layersec keys: " << msg << "\n";
  std::exit(2);
}

int refuse(const std::string& msg) {
  std::cerr << "layersec keys: " << msg << "\n";
  return 1;
}

std::int64_t wall_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

// Runs one subcommand; an argument error (keymgmt::PkiUsageError) exits 2.
template <class F>
void run(F&& f) {
  try {
    set_exit_code(f());
  } catch (const PkiUsageError& e) {
    usage_error(e.what());
  }
}

// ------------------------------------------------------------------ ca

struct CaArgs {
  std::string out, name, kind = "vehicle", alg = "p256";
  int days = 3650;
};

int run_ca(const CaArgs& a) {
  kex::CaOptions o;
  o.name = a.name;
  o.kind = parse_ca_kind(a.kind);
  o.algorithm = parse_ca_algorithm(a.alg);
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
  o.services = parse_service_ids(a.services);
  o.algorithm = *alg;
  o.validity = issue_validity(a.not_before, a.not_after, a.days, wall_now());
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
  std::cout << "issued '" << a.name << "' (" << id->certificate.info().key_algorithm << ") for services "
            << service_list(id->certificate.info().services) << "\ncertificate:  " << a.out << "/" << a.name << ".pem\n"
            << "private key:  " << a.out << "/" << a.name << ".key (mode 0600)\n";
  return 0;
}

// ------------------------------------------------------------------ show / verify
int run_show(const std::string& cert_path) {
  std::string why;
  auto cert = load_cert("--cert", cert_path, &why);
  if (!cert) return refuse(why);
  std::cout << format_certificate_info(cert->info());
  return 0;
}

int run_verify(const VerifyRequest& a, std::int64_t at) {
  std::string message;
  if (!verify_node(a, at != 0 ? at : wall_now(), &message)) return refuse(message);
  std::cout << message << "\n";
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
  if (*scheme == kex::KemScheme::kRsa15360) {
    usage_error("rsa-15360 keys take minutes to generate; not offered here");
  }
  std::string why;
  auto t = harness::time_mode_b_handshakes(*scheme, a.kem, a.iterations, wall_now(), &why);
  if (!t) return refuse(why);
  std::fputs(harness::format_mode_b_timing(*t).c_str(), stdout);
  if (!a.json.empty()) {
    try {
      OutputFile f(a.json);  // no symlink followed; every write error reported
      f.write(harness::mode_b_timing_json(*t).dump(2) + "\n");
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

int run_establish(const EstablishArgs& a) {
  const auto scheme = kex::parse_scheme(a.kem);
  if (!scheme) usage_error("unknown --kem " + a.kem);
  const std::uint16_t service = parse_service_id(a.service);
  std::string why;
  auto trust = load_trust(a.ca, &why);
  if (!trust) return refuse(why);
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
  c->callback([ca] { run([&] { return run_ca(*ca); }); });

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
  i->callback([is] { run([&] { return run_issue(*is); }); });

  auto show = std::make_shared<std::string>();
  auto* s = keys->add_subcommand("show", "Print a certificate's subject, validity and services");
  s->add_option("--cert", *show, "certificate (PEM)")->required();
  s->callback([show] { run([&] { return run_show(*show); }); });

  auto va = std::make_shared<VerifyRequest>();
  auto va_at = std::make_shared<std::int64_t>(0);
  auto* v = keys->add_subcommand("verify", "Check a certificate against a CA (and a service)");
  v->add_option("--ca", va->ca, "CA directory or CA certificate")->required();
  v->add_option("--cert", va->cert, "node certificate (PEM)")->required();
  v->add_option("--service", va->service, "service id the node must be authorised for");
  v->add_option("--key", va->key, "also load this key file (0600 check) and match it");
  v->add_option("--at", *va_at, "verify at this time (Unix seconds) instead of now")
      ->check(whole_in(1, kex::kMaxCertificateTime));
  v->callback([va, va_at] { run([&] { return run_verify(*va, *va_at); }); });

  auto hs = std::make_shared<HandshakeArgs>();
  auto* h = keys->add_subcommand("handshake", "Time complete in-process Mode B handshakes");
  h->add_option("--kem", hs->kem, "rsa-2048 (default), rsa-3072, x25519, ecdh-p256, ml-kem-768, ...");
  h->add_option("--iterations", hs->iterations, "handshakes to time (default 200)")->check(whole_in(1, 1'000'000));
  h->add_option("--json", hs->json, "write the figures to FILE")->check(kOutputFile);
  h->callback([hs] { run([&] { return run_handshake(*hs); }); });

  auto es = std::make_shared<EstablishArgs>();
  auto* e = keys->add_subcommand("establish", "One Mode B handshake between provisioned identities");
  e->add_option("--ca", es->ca, "CA directory or CA certificate")->required();
  e->add_option("--publisher", es->publisher, "publisher identity DIR/NAME (NAME.pem, NAME.key)")->required();
  e->add_option("--subscriber", es->subscriber, "subscriber identity DIR/NAME")->required();
  e->add_option("--service", es->service, "service id")->required();
  e->add_option("--eventgroup", es->eventgroup, "eventgroup id (default 1)")->check(whole_in(0, 0xFFFF));
  e->add_option("--kem", es->kem, "rsa-2048 (default; the subscriber's certificate key), x25519, ...");
  e->callback([es] { run([&] { return run_establish(*es); }); });
});

}  // namespace
}  // namespace layersec::app
