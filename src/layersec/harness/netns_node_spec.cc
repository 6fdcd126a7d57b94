// The spec codec of a netns scenario node (netns_node_spec.h): JSON in and
// out, field by field, with errors that name the field.
#include "layersec/harness/netns_node_spec.h"

#include <cmath>
#include <limits>
#include <utility>

namespace layersec::harness {

using nlohmann::json;

namespace {

constexpr int kMaxSubscribers = 200;
constexpr std::size_t kMinPayload = 16;  // the traffic driver's payload header (netns_traffic.h)
constexpr std::size_t kMaxPayload = 60000;

// --- JSON reading with named fields ---------------------------------------------

// Reads optional fields of one object; the first error (naming the field) is
// sticky, so a long list of reads is checked once at the end.
class FieldReader {
 public:
  FieldReader(const json& j, std::string prefix) : j_(j), prefix_(std::move(prefix)) {
    if (!j_.is_object()) error_ = (prefix_.empty() ? std::string("spec") : prefix_) + ": expected a JSON object";
  }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] bool ok() const { return error_.empty(); }

  const json* field(const char* name, bool required) {
    if (!ok()) return nullptr;
    auto it = j_.find(name);
    if (it == j_.end() || it->is_null()) {
      if (required) set(name, "missing");
      return nullptr;
    }
    return &*it;
  }
  void string(const char* name, std::string& out, bool required = false) {
    if (const json* v = field(name, required)) {
      if (!v->is_string()) return set(name, "expected a string");
      out = v->get<std::string>();
    }
  }
  void boolean(const char* name, bool& out) {
    if (const json* v = field(name, false)) {
      if (!v->is_boolean()) return set(name, "expected true or false");
      out = v->get<bool>();
    }
  }
  template <class T>
  void integer(const char* name, T& out, std::int64_t lo, std::int64_t hi, bool required = false) {
    if (const json* v = field(name, required)) {
      if (!v->is_number_integer()) return set(name, "expected an integer");
      if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
        return set(name, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      const auto x = v->get<std::int64_t>();
      if (x < lo || x > hi) return set(name, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      out = static_cast<T>(x);
    }
  }
  void unsigned64(const char* name, std::uint64_t& out) {
    if (const json* v = field(name, false)) {
      if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0))
        return set(name, "expected a non-negative integer");
      out = v->get<std::uint64_t>();
    }
  }
  void number(const char* name, double& out, double lo, double hi) {
    if (const json* v = field(name, false)) {
      if (!v->is_number()) return set(name, "expected a number");
      const double x = v->get<double>();
      if (!std::isfinite(x) || x < lo || x > hi) return set(name, "out of range");
      out = x;
    }
  }
  void duration_ns(const char* name, Duration& out, Duration lo) {
    std::int64_t ns = out.ns();
    integer(name, ns, lo.ns(), std::numeric_limits<std::int64_t>::max());
    out = Duration::nanoseconds(ns);
  }
  void ipv4(const char* name, net::Ipv4Address& out, bool required) {
    if (const json* v = field(name, required)) {
      auto a = v->is_string() ? net::Ipv4Address::parse(v->get<std::string>()) : std::nullopt;
      if (!a) return set(name, "expected a dotted-quad IPv4 address");
      out = *a;
    }
  }
  void mac(const char* name, net::MacAddress& out, bool required) {
    if (const json* v = field(name, required)) {
      auto m = v->is_string() ? net::MacAddress::parse(v->get<std::string>()) : std::nullopt;
      if (!m) return set(name, "expected a MAC address aa:bb:cc:dd:ee:ff");
      out = *m;
    }
  }
  void set(const std::string& name, const std::string& what) {
    if (ok()) error_ = prefix_ + name + ": " + what;
  }

 private:
  const json& j_;
  std::string prefix_;
  std::string error_;
};

std::optional<Security> security_from(const std::string& s) {
  if (s == "none") return Security::kNone;
  if (s == "secoc") return Security::kSecoc;
  if (s == "hybrid") return Security::kHybrid;
  return std::nullopt;
}

std::optional<KeyDistribution> keys_from(const std::string& s) {
  if (s == "none") return KeyDistribution::kNone;
  if (s == "psk") return KeyDistribution::kPsk;
  if (s == "rsa-mode-b") return KeyDistribution::kRsaModeB;
  return std::nullopt;  // group-mode-b is a simulated-testbed scenario only
}

}  // namespace

std::string validate_node_spec(const NetnsNodeSpec& s) {
  if (s.role != "publisher" && s.role != "subscriber") return "role: expected \"publisher\" or \"subscriber\"";
  if (s.subscribers < 1 || s.subscribers > kMaxSubscribers) return "subscribers: out of range [1, 200]";
  if (s.role == "subscriber" && (s.index < 0 || s.index >= s.subscribers))
    return "index: must be in [0, subscribers)";
  if (s.payload_bytes < kMinPayload || s.payload_bytes > kMaxPayload) return "payload_bytes: out of range [16, 60000]";
  if (s.mode != "closed-loop" && s.mode != "rate") return "mode: expected \"closed-loop\" or \"rate\"";
  if (s.mode == "rate" && s.rate_hz <= 0) return "rate_hz: must be > 0 in rate mode";
  const bool secured = s.security != Security::kNone;
  if (secured && s.keys == KeyDistribution::kNone) return "keys: security " + to_string(s.security) + " needs keys";
  if (!secured && s.keys != KeyDistribution::kNone) return "keys: must be \"none\" without security";
  if (s.keys == KeyDistribution::kPsk && s.secoc_key_file.empty()) return "secoc_key_file: missing (keys psk)";
  if (s.security == Security::kHybrid && s.macsec_key_file.empty()) return "macsec_key_file: missing (hybrid)";
  if (s.keys == KeyDistribution::kRsaModeB) {
    if (s.ca_cert_file.empty()) return "ca_cert_file: missing (keys rsa-mode-b)";
    if (s.cert_file.empty()) return "cert_file: missing (keys rsa-mode-b)";
    if (s.key_file.empty()) return "key_file: missing (keys rsa-mode-b)";
  }
  if (s.interface.empty()) return "interface: must not be empty";
  return {};
}

std::string to_string(LinkPath p) { return p == LinkPath::kRaw ? "raw" : "kernel"; }

// --- JSON -------------------------------------------------------------------------

json to_json(const NetnsNodeSpec& s) {
  json peers = json::array();
  for (const auto& p : s.peers) peers.push_back({{"name", p.name}, {"ip", p.ip.to_string()}, {"mac", p.mac.to_string()}});
  return {{"role", s.role},
          {"index", s.index},
          {"subscribers", s.subscribers},
          {"path", to_string(s.path)},
          {"security", to_string(s.security)},
          {"keys", to_string(s.keys)},
          {"multicast", s.multicast},
          {"payload_bytes", s.payload_bytes},
          {"interface", s.interface},
          {"ip", s.ip.to_string()},
          {"mac", s.mac.to_string()},
          {"peers", peers},
          {"publisher_ip", s.publisher_ip.to_string()},
          {"secoc_key_file", s.secoc_key_file},
          {"macsec_key_file", s.macsec_key_file},
          {"ca_cert_file", s.ca_cert_file},
          {"cert_file", s.cert_file},
          {"key_file", s.key_file},
          {"mode", s.mode},
          {"iterations", s.iterations},
          {"warmup", s.warmup},
          {"pacing_ns", s.pacing.ns()},
          {"timeout_ns", s.timeout.ns()},
          {"rate_hz", s.rate_hz},
          {"rate_duration_ns", s.rate_duration.ns()},
          {"ready_timeout_ns", s.ready_timeout.ns()},
          {"report_file", s.report_file}};
}

NetnsNodeSpec node_spec_from_json(const json& j) {
  NetnsNodeSpec s;
  FieldReader r(j, "");
  r.string("role", s.role, true);
  r.integer("index", s.index, 0, kMaxSubscribers - 1);
  r.integer("subscribers", s.subscribers, 1, kMaxSubscribers);
  std::string path = to_string(s.path), security = to_string(s.security), keys = to_string(s.keys);
  r.string("path", path);
  if (r.ok() && path != "kernel" && path != "raw") r.set("path", "expected \"kernel\" or \"raw\"");
  s.path = path == "raw" ? LinkPath::kRaw : LinkPath::kKernel;
  r.string("security", security);
  if (auto v = security_from(security)) {
    s.security = *v;
  } else {
    r.set("security", "expected \"none\", \"secoc\" or \"hybrid\"");
  }
  r.string("keys", keys);
  if (auto v = keys_from(keys)) {
    s.keys = *v;
  } else {
    r.set("keys", "expected \"none\", \"psk\" or \"rsa-mode-b\"");
  }
  r.boolean("multicast", s.multicast);
  r.integer("payload_bytes", s.payload_bytes, kMinPayload, kMaxPayload);
  r.string("interface", s.interface);
  r.ipv4("ip", s.ip, true);
  r.mac("mac", s.mac, true);
  if (const json* peers = r.field("peers", false)) {
    if (!peers->is_array()) {
      r.set("peers", "expected an array");
    } else {
      for (std::size_t i = 0; i < peers->size() && r.ok(); ++i) {
        NetnsPeer p;
        FieldReader pr((*peers)[i], "peers[" + std::to_string(i) + "].");
        pr.string("name", p.name, true);
        pr.ipv4("ip", p.ip, true);
        pr.mac("mac", p.mac, true);
        if (!pr.ok()) throw NetnsJsonError(pr.error());
        s.peers.push_back(std::move(p));
      }
    }
  }
  r.ipv4("publisher_ip", s.publisher_ip, true);
  r.string("secoc_key_file", s.secoc_key_file);
  r.string("macsec_key_file", s.macsec_key_file);
  r.string("ca_cert_file", s.ca_cert_file);
  r.string("cert_file", s.cert_file);
  r.string("key_file", s.key_file);
  r.string("mode", s.mode);
  r.integer("iterations", s.iterations, 0, 100'000'000);
  r.integer("warmup", s.warmup, 0, 100'000'000);
  r.duration_ns("pacing_ns", s.pacing, Duration::zero());
  r.duration_ns("timeout_ns", s.timeout, Duration::nanoseconds(1));
  r.number("rate_hz", s.rate_hz, 0, 1e9);
  r.duration_ns("rate_duration_ns", s.rate_duration, Duration::zero());
  r.duration_ns("ready_timeout_ns", s.ready_timeout, Duration::nanoseconds(1));
  r.string("report_file", s.report_file);
  if (!r.ok()) throw NetnsJsonError(r.error());
  if (auto why = validate_node_spec(s); !why.empty()) throw NetnsJsonError(why);
  return s;
}

namespace {

// The report's counters, read and written by name.
struct CounterField {
  const char* name;
  std::uint64_t NetnsNodeReport::*member;
};
constexpr CounterField kReportCounters[] = {
    {"iterations_completed", &NetnsNodeReport::iterations_completed},
    {"timeouts", &NetnsNodeReport::timeouts},
    {"sent", &NetnsNodeReport::sent},
    {"received", &NetnsNodeReport::received},
    {"lost", &NetnsNodeReport::lost},
    {"secoc_protect_ns", &NetnsNodeReport::secoc_protect_ns},
    {"secoc_verify_ns", &NetnsNodeReport::secoc_verify_ns},
    {"secoc_protected", &NetnsNodeReport::secoc_protected},
    {"secoc_verified", &NetnsNodeReport::secoc_verified},
    {"cpu_ns", &NetnsNodeReport::cpu_ns},
    {"wall_ns", &NetnsNodeReport::wall_ns},
    {"rss_kib", &NetnsNodeReport::rss_kib},
    {"security_rejections", &NetnsNodeReport::security_rejections},
    {"ready_probes", &NetnsNodeReport::ready_probes},
};

json optional_ns(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }

void read_optional_ns(FieldReader& f, const char* name, std::optional<std::int64_t>& out) {
  if (const json* v = f.field(name, false)) {
    if (!v->is_number_integer()) return f.set(name, "expected an integer or null");
    out = v->get<std::int64_t>();
  }
}

void read_samples(FieldReader& f, const char* name, std::vector<std::int64_t>& out) {
  if (const json* v = f.field(name, false)) {
    if (!v->is_array()) return f.set(name, "expected an array of integers");
    out.reserve(v->size());
    for (const auto& x : *v) {
      if (!x.is_number_integer()) return f.set(name, "expected an array of integers");
      out.push_back(x.get<std::int64_t>());
    }
  }
}

}  // namespace

json to_json(const NetnsNodeReport& r) {
  json j{{"role", r.role},
         {"index", r.index},
         {"ok", r.ok},
         {"error", r.error},
         {"half_rtt_ns", r.half_rtt_ns},
         {"one_way_ns", r.one_way_ns},
         {"achieved_rate_hz", r.achieved_rate_hz},
         {"establishment_ns", optional_ns(r.establishment_ns)},
         {"ready_ns", optional_ns(r.ready_ns)},
         {"transport", r.transport.is_null() ? json::object() : r.transport}};
  for (const auto& c : kReportCounters) j[c.name] = r.*c.member;
  return j;
}

NetnsNodeReport node_report_from_json(const json& j) {
  NetnsNodeReport r;
  FieldReader f(j, "");
  f.string("role", r.role, true);
  if (f.ok() && r.role != "publisher" && r.role != "subscriber")
    f.set("role", "expected \"publisher\" or \"subscriber\"");
  f.integer("index", r.index, 0, kMaxSubscribers - 1);
  if (const json* v = f.field("ok", true)) {
    if (!v->is_boolean()) {
      f.set("ok", "expected true or false");
    } else {
      r.ok = v->get<bool>();
    }
  }
  f.string("error", r.error);
  read_samples(f, "half_rtt_ns", r.half_rtt_ns);
  read_samples(f, "one_way_ns", r.one_way_ns);
  for (const auto& c : kReportCounters) f.unsigned64(c.name, r.*c.member);
  f.number("achieved_rate_hz", r.achieved_rate_hz, 0, 1e12);
  read_optional_ns(f, "establishment_ns", r.establishment_ns);
  read_optional_ns(f, "ready_ns", r.ready_ns);
  if (const json* v = f.field("transport", false)) {
    if (!v->is_object()) {
      f.set("transport", "expected an object");
    } else {
      r.transport = *v;
    }
  }
  if (!f.ok()) throw NetnsJsonError(f.error());
  return r;
}

}  // namespace layersec::harness
