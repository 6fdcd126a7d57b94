#include "layersec/keymgmt/pki_cli.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace layersec::keymgmt {

std::uint16_t parse_service_id(const std::string& text) {
  std::size_t pos = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(text, &pos, 0);  // 0x.. hex, or decimal
  } catch (const std::exception&) {
    throw PkiUsageError("bad service id '" + text + "'");
  }
  if (pos != text.size() || v > 0xFFFF) throw PkiUsageError("bad service id '" + text + "' (0..0xffff)");
  return static_cast<std::uint16_t>(v);
}

std::vector<std::uint16_t> parse_service_ids(const std::string& list) {
  std::vector<std::uint16_t> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(parse_service_id(item));
  }
  if (out.empty()) throw PkiUsageError("--services needs at least one service id");
  return out;
}

void check_name(const std::string& name) {
  if (const std::string why = kex::check_common_name(name); !why.empty()) throw PkiUsageError("--name " + why);
  if (name.find('/') != std::string::npos || name == "." || name == "..")
    throw PkiUsageError("--name '" + name + "' is also the file stem: no '/', not '.' or '..'");
}

kex::Validity days_validity(std::int64_t now, int days) {
  const kex::Validity v = kex::Validity::days_from(now, days);
  if (v.not_after > kex::kMaxCertificateTime)
    throw PkiUsageError("--days " + std::to_string(days) +
                        " ends after 9999-12-31T23:59:59Z, the latest time X.509 "
                        "can encode (RFC 5280 4.1.2.5); at most " +
                        std::to_string((kex::kMaxCertificateTime - now) / 86400) + " days from now");
  return v;
}

kex::CaKind parse_ca_kind(const std::string& kind) {
  if (kind == "vehicle") return kex::CaKind::kVehicle;
  if (kind == "substation") return kex::CaKind::kSubstation;
  throw PkiUsageError("--kind must be vehicle or substation");
}

kex::KeyAlgorithm parse_ca_algorithm(const std::string& name) {
  const auto alg = kex::key_algorithm_from_string(name);
  if (!alg || (*alg != kex::KeyAlgorithm::kEcdsaP256 && *alg != kex::KeyAlgorithm::kEd25519)) {
    throw PkiUsageError("--alg must be p256 or ed25519 for a CA");
  }
  return *alg;
}

kex::Validity issue_validity(std::int64_t not_before, std::int64_t not_after, int days, std::int64_t now) {
  if ((not_before != 0) != (not_after != 0)) throw PkiUsageError("give both --not-before and --not-after");
  if (not_before == 0) return days_validity(now, days);
  if (not_after <= not_before) throw PkiUsageError("--not-after must be later than --not-before");
  return {not_before, not_after};
}

void ensure_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw PkiUsageError(dir + " is not a directory");
    return;
  }
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos < dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) throw PkiUsageError("cannot create " + prefix);
  }
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw PkiUsageError("cannot create " + dir);
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::pair<std::string, std::string> split_stem(const std::string& stem) {
  const auto slash = stem.rfind('/');
  if (slash == std::string::npos) return {".", stem};
  return {stem.substr(0, slash), stem.substr(slash + 1)};
}

std::string pki_message(kex::PkiError e, KeyFileError detail, const std::string& what, const std::string& key_path) {
  std::string m = what + ": " + std::string(kex::to_string(e));
  if (e == kex::PkiError::kKeyFile) {
    m += " (" + std::string(to_string(detail));
    std::string why;
    if (!key_path.empty() && !check_key_file(key_path, &why).ok() && !why.empty()) m += ": " + why;
    m += ")";
  }
  return m;
}

std::optional<kex::Certificate> load_cert(const std::string& option, const std::string& path, std::string* why) {
  std::string detail;
  auto c = kex::Certificate::load(path, &detail);
  if (c.ok()) return std::move(c).value();
  *why = option + ": " + (detail.empty() ? path + ": " + std::string(kex::to_string(c.error())) : detail);
  return std::nullopt;
}

std::optional<kex::TrustStore> load_trust(const std::string& ca_arg, std::string* why) {
  const std::string anchor = is_dir(ca_arg) ? ca_arg + "/ca.pem" : ca_arg;
  auto ca = load_cert("--ca", anchor, why);
  if (!ca) return std::nullopt;
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca.value(), 1));
  if (!trust.ok()) {
    *why = anchor + ": " + std::string(kex::to_string(trust.error()));
    return std::nullopt;
  }
  return std::move(trust).value();
}

bool verify_node(const VerifyRequest& a, std::int64_t now, std::string* message) {
  std::string& why = *message;
  const auto refuse = [&](std::string m) {
    why = std::move(m);
    return false;
  };
  const std::string anchor = is_dir(a.ca) ? a.ca + "/ca.pem" : a.ca;
  auto ca = load_cert("--ca", anchor, &why);
  if (!ca) return false;
  auto cert = load_cert("--cert", a.cert, &why);
  if (!cert) return false;
  auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&ca.value(), 1));
  if (!trust.ok()) return refuse(anchor + ": " + std::string(kex::to_string(trust.error())));
  std::string detail;
  if (auto s = trust->verify(*cert, now, &detail); !s.ok()) {
    return refuse(a.cert + ": " + std::string(kex::to_string(s.error())) + (detail.empty() ? "" : " (" + detail + ")"));
  }
  std::string ok = "OK " + cert->info().common_name;
  if (!a.service.empty()) {
    const std::uint16_t service = parse_service_id(a.service);
    if (auto s = kex::check_service_authorised(*cert, service); !s.ok()) {
      return refuse(a.cert + ": " + std::string(kex::to_string(s.error())) + " " + service_hex(service));
    }
    ok += " authorised for " + service_hex(service);
  }
  if (!a.key.empty()) {
    KeyFileError kd{};
    auto key = kex::PrivateKey::load(a.key, &kd);
    if (!key.ok()) return refuse(pki_message(key.error(), kd, "--key: " + a.key, a.key));
    if (key->public_key().der() != cert->public_key().der()) {
      return refuse(a.key + ": key does not belong to " + a.cert);
    }
  }
  why = std::move(ok);
  return true;
}

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

std::string service_list(const std::vector<std::uint16_t>& services) {
  std::string out;
  for (std::size_t i = 0; i < services.size(); ++i) out += (i ? "," : "") + service_hex(services[i]);
  return out;
}

std::string format_certificate_info(const kex::CertificateInfo& info) {
  std::ostringstream o;
  o << "subject:      " << info.subject << "\n"
    << "issuer:       " << info.issuer << "\n"
    << "serial:       " << info.serial_hex << "\n"
    << "not before:   " << iso_time(info.not_before) << "\n"
    << "not after:    " << iso_time(info.not_after) << "\n"
    << "ca:           " << (info.is_ca ? "yes" : "no") << "\n"
    << "key:          " << info.key_algorithm << "\n"
    << "key usage:    ";
  for (std::size_t i = 0; i < info.key_usage.size(); ++i) o << (i ? "," : "") << info.key_usage[i];
  o << "\nservices:     " << (info.has_service_extension ? service_list(info.services) : "(none)");
  o << "\nsha256:       " << info.sha256_fingerprint << "\n";
  return o.str();
}

}  // namespace layersec::keymgmt
