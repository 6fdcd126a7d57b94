// Key-establishment benchmark behind `layersec bench kex` (apps/layersec/cmd_kem.cc):
// per KEM scheme, the median of many keygen / encapsulate / decapsulate calls
// (each call timed on its own with the monotonic clock) and the peak RSS
// while the scheme ran (VmHWM after resetting it through /proc/self/clear_refs).
//
// The NTRU paper's comparisons are reported as ratios measured in the same run
// (128-bit: NTRU EES613EP1 vs ECDH P-256 vs RSA-3072; 256-bit: NTRU
// EES1171EP1 vs ECDH P-521 vs RSA-15360), with ML-KEM, X25519 and the hybrid
// beside them. ML-KEM rows also carry the cost of the bare FIPS 203 functions
// (crypto::MlKem, no allocation) next to the kex::Kem interface figure.
//
// negotiation_us: the NTRU paper's 4-step negotiation (kex/negotiation.h) over
// one TCP connection on 127.0.0.1 (TCP_NODELAY), initiator and responder in two
// threads with their own KEM objects; up to 1000 negotiations as in the paper
// (fewer for slow RSA, bounded by a time budget), each timed on the initiator
// from Hello to verified Finished; the median is reported, with the mean and the
// paper's eq. (10) figure total / (n * 2) beside it. The responder's key pair is
// long-term (generated before), as the certificate key in TLS-RSA.
//
// RSA-15360 keys are never generated here (minutes): the row appears only when
// a pre-generated PEM key is given, and says so.
#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mlkem.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/negotiation.h"

namespace layersec::kexbench {
namespace {

using Clock = std::chrono::steady_clock;

long proc_status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  }
  return 0;
}

// Resets the peak-RSS high-water mark (Linux >= 4.0); false if unsupported.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  return static_cast<bool>(f);
}

struct Budget {
  int min_samples;
  int max_samples;
  double seconds;
};

double thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Median {
  double wall_us = 0;  // monotonic clock
  double cpu_us = 0;   // this thread's CPU time (robust against preemption on a shared machine)
  int samples = 0;
};

// Medians of individually timed calls. `op` returns false on failure (which
// aborts the benchmark with an exception).
Median measure(const Budget& b, const std::function<bool()>& op) {
  std::vector<double> wall, cpu;
  const auto start = Clock::now();
  while (static_cast<int>(wall.size()) < b.max_samples) {
    const double c0 = thread_cpu_us();
    const auto t0 = Clock::now();
    if (!op()) throw std::runtime_error("benchmark operation failed");
    const auto t1 = Clock::now();
    const double c1 = thread_cpu_us();
    wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    cpu.push_back(c1 - c0);
    if (static_cast<int>(wall.size()) >= b.min_samples &&
        std::chrono::duration<double>(t1 - start).count() > b.seconds)
      break;
  }
  Median m;
  m.samples = static_cast<int>(wall.size());
  m.wall_us = median_of(wall);
  m.cpu_us = median_of(cpu);
  return m;
}

// Stores name_us (wall), name_cpu_us and name_samples in the row.
void put(nlohmann::json& row, const std::string& name, const Median& m) {
  row[name + "_us"] = m.wall_us;
  row[name + "_cpu_us"] = m.cpu_us;
  row[name + "_samples"] = m.samples;
}

struct SchemeBudget {
  Budget keygen, encaps, decaps;
};

SchemeBudget budget_for(kex::KemScheme s, bool smoke) {
  if (smoke) return {{1, 3, 0}, {1, 3, 0}, {1, 3, 0}};
  switch (s) {
    case kex::KemScheme::kRsa2048: return {{5, 41, 3.0}, {11, 2001, 0.5}, {11, 501, 1.0}};
    case kex::KemScheme::kRsa3072: return {{3, 11, 6.0}, {11, 2001, 0.5}, {11, 301, 1.5}};
    case kex::KemScheme::kRsa15360: return {{0, 0, 0}, {11, 501, 1.0}, {3, 11, 5.0}};
    default: return {{11, 5001, 0.6}, {11, 5001, 0.6}, {11, 5001, 0.6}};
  }
}

std::string ntru_set(kex::KemScheme s) {
  switch (s) {
    case kex::KemScheme::kNtruEes613ep1: return "EES613EP1";
    case kex::KemScheme::kNtruEes1171ep1: return "EES1171EP1";
    default: return "";
  }
}

// --- loopback driver for the 4-step negotiation -----------------------------

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

void write_all(int fd, const std::vector<std::uint8_t>& b) {
  std::size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::send(fd, b.data() + done, b.size() - done, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("loopback send failed");
    done += static_cast<std::size_t>(n);
  }
}

void read_exact(int fd, std::uint8_t* p, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::recv(fd, p + done, n - done, 0);
    if (r <= 0) throw std::runtime_error("loopback recv failed");
    done += static_cast<std::size_t>(r);
  }
}

std::vector<std::uint8_t> read_frame(int fd) {
  std::vector<std::uint8_t> f(kex::kNegotiationFrameHeader);
  read_exact(fd, f.data(), f.size());
  const std::size_t total = kex::negotiation_frame_size(f);
  if (total > (1u << 20)) throw std::runtime_error("oversized negotiation frame");
  f.resize(total);
  read_exact(fd, f.data() + kex::kNegotiationFrameHeader, total - kex::kNegotiationFrameHeader);
  return f;
}

std::array<std::uint8_t, 32> nonce() {
  std::array<std::uint8_t, 32> n{};
  if (!crypto::random_bytes(n).ok()) throw std::runtime_error("RNG failure");
  return n;
}

struct NegotiationFigures {
  double median_us = 0;
  double mean_us = 0;
  double paper_eq10_us = 0;  // total / (n * 2)
  int count = 0;
};

NegotiationFigures loopback_negotiations(kex::KemScheme s, const kex::KemKeyPair& kp, const Budget& b) {
  Fd listener(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (listener.get() < 0 || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listener.get(), 1) != 0 || ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("loopback listen failed");
  Fd client(::socket(AF_INET, SOCK_STREAM, 0));
  if (client.get() < 0 || ::connect(client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw std::runtime_error("loopback connect failed");
  Fd server(::accept(listener.get(), nullptr, nullptr));
  if (server.get() < 0) throw std::runtime_error("loopback accept failed");
  const int one = 1;
  ::setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(server.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  // Responder thread: its own KEM object and loaded key.
  std::string responder_error;
  std::thread responder([&] {
    try {
      auto kem = kex::make_kem(s);
      auto key = kem->load_private_key(kp.private_key.span());
      if (!key) throw std::runtime_error("responder key does not load");
      for (;;) {
        std::vector<std::uint8_t> hello;
        try {
          hello = read_frame(server.get());
        } catch (const std::exception&) {
          return;  // initiator closed: done
        }
        const auto nr = nonce();
        kex::NegotiationResponder res(*kem, kp.public_key, **key, nr);
        auto m2 = res.on_hello(hello);
        if (!m2) throw std::runtime_error(std::string(kex::to_string(m2.error())));
        write_all(server.get(), *m2);
        auto m4 = res.on_key_exchange(read_frame(server.get()));
        if (!m4) throw std::runtime_error(std::string(kex::to_string(m4.error())));
        write_all(server.get(), *m4);
      }
    } catch (const std::exception& e) {
      responder_error = e.what();
      ::shutdown(server.get(), SHUT_RDWR);
    }
  });

  auto kem = kex::make_kem(s);
  std::vector<double> samples;
  double total = 0;
  const auto start = Clock::now();
  try {
    while (static_cast<int>(samples.size()) < b.max_samples) {
      const auto ni = nonce();
      const auto t0 = Clock::now();
      kex::NegotiationInitiator ini(*kem, ni);
      auto m1 = ini.start();
      if (!m1) throw std::runtime_error("start failed");
      write_all(client.get(), *m1);
      auto m3 = ini.on_public_key(read_frame(client.get()));
      if (!m3) throw std::runtime_error(std::string(kex::to_string(m3.error())));
      write_all(client.get(), *m3);
      if (!ini.on_finished(read_frame(client.get())).ok()) throw std::runtime_error("Finished did not verify");
      const auto t1 = Clock::now();
      const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
      samples.push_back(us);
      total += us;
      if (static_cast<int>(samples.size()) >= b.min_samples &&
          std::chrono::duration<double>(t1 - start).count() > b.seconds)
        break;
    }
  } catch (const std::exception& e) {
    ::shutdown(client.get(), SHUT_RDWR);
    responder.join();
    throw std::runtime_error(std::string("negotiation: ") + e.what() +
                             (responder_error.empty() ? "" : " / responder: " + responder_error));
  }
  ::shutdown(client.get(), SHUT_RDWR);
  responder.join();
  if (!responder_error.empty()) throw std::runtime_error("negotiation responder: " + responder_error);
  NegotiationFigures f;
  f.count = static_cast<int>(samples.size());
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  f.median_us = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  f.mean_us = total / static_cast<double>(n);
  f.paper_eq10_us = total / (static_cast<double>(n) * 2);
  return f;
}

Budget negotiation_budget(kex::KemScheme s, bool smoke) {
  if (smoke) return {1, 3, 0};
  switch (s) {
    case kex::KemScheme::kRsa15360: return {3, 1000, 8.0};
    case kex::KemScheme::kRsa3072:
    case kex::KemScheme::kRsa2048: return {20, 1000, 4.0};
    default: return {50, 1000, 4.0};
  }
}

// The bare FIPS 203 functions on caller-owned buffers.
void add_core_mlkem(kex::KemScheme s, const Budget& b, nlohmann::json& row) {
  const auto set = s == kex::KemScheme::kMlKem512    ? crypto::MlKemParameterSet::kMlKem512
                   : s == kex::KemScheme::kMlKem1024 ? crypto::MlKemParameterSet::kMlKem1024
                                                     : crypto::MlKemParameterSet::kMlKem768;
  crypto::MlKem kem(set);
  const auto& p = kem.params();
  std::vector<std::uint8_t> d(32, 1), z(32, 2), m(32, 3), ek(p.encaps_key_size), dk(p.decaps_key_size),
      c(p.ciphertext_size), k(32);
  put(row, "core_keygen", measure(b, [&] {
    ++d[0];
    return kem.keygen_internal(d, z, ek, dk).ok();
  }));
  put(row, "core_encaps", measure(b, [&] {
    ++m[0];
    return kem.encaps_internal(ek, m, c, k).ok();
  }));
  // With the §7.3 input checks (incl. the dk hash check) on every call.
  put(row, "core_decaps", measure(b, [&] { return kem.decaps(dk, c, k).ok(); }));
}

}  // namespace

// Runs the benchmark for `schemes` (all when empty) and returns the JSON rows.
// `rsa15360_pem`: a pre-generated RSA-15360 key (PEM, mode 0600), or empty.
nlohmann::json run(const std::vector<kex::KemScheme>& schemes_in, bool smoke, const std::string& rsa15360_pem,
                   std::ostream& log) {
  std::vector<kex::KemScheme> schemes = schemes_in;
  if (schemes.empty()) schemes.assign(std::begin(kex::kAllKemSchemes), std::end(kex::kAllKemSchemes));
  nlohmann::json rows = nlohmann::json::array();
  for (kex::KemScheme s : schemes) {
    auto kem = kex::make_kem(s);
    const SchemeBudget b = budget_for(s, smoke);
    nlohmann::json row;
    row["scheme"] = std::string(kex::scheme_name(s));
    if (!ntru_set(s).empty()) row["set"] = ntru_set(s);
    row["security_bits"] = kex::security_bits(s);
    const long rss_before = proc_status_kib("VmRSS");
    const bool peak_reset = reset_peak_rss();

    kex::KemKeyPair kp;
    if (s == kex::KemScheme::kRsa15360) {
      if (rsa15360_pem.empty()) {
        log << "  rsa-15360: skipped (no pre-generated key given; generating one takes minutes)\n";
        continue;
      }
      auto der = kex::load_rsa_private_key_pem(rsa15360_pem, 15360);
      if (!der) {
        log << "  rsa-15360: skipped (" << kex::to_string(der.error()) << ": " << rsa15360_pem
            << "; a checked-out key needs chmod 600)\n";
        continue;
      }
      auto loaded = kem->generate_from_seed(der->span());
      if (!loaded) throw std::runtime_error("rsa-15360 key unusable");
      kp = std::move(*loaded);
      row["keygen_us"] = nullptr;
      row["keygen_note"] = "not measured: pre-generated key loaded from " + rsa15360_pem;
    } else {
      put(row, "keygen", measure(b.keygen, [&] {
        auto r = kem->generate();
        if (!r) return false;
        kp = std::move(*r);
        return true;
      }));
    }
    kex::Encapsulation last;
    put(row, "encaps", measure(b.encaps, [&] {
      auto r = kem->encapsulate(kp.public_key);
      if (!r) return false;
      last = std::move(*r);
      return true;
    }));
    auto key = kem->load_private_key(kp.private_key.span());
    if (!key) throw std::runtime_error("private key does not load");
    bool same = true;
    put(row, "decaps", measure(b.decaps, [&] {
      auto r = kem->decapsulate(**key, last.ciphertext);
      if (!r) return false;
      same = same && std::equal(r->span().begin(), r->span().end(), last.shared_secret.span().begin(),
                                last.shared_secret.span().end());
      return true;
    }));
    if (!same) throw std::runtime_error(std::string(kex::scheme_name(s)) + ": decapsulated secret differs");
    if (s == kex::KemScheme::kMlKem512 || s == kex::KemScheme::kMlKem768 || s == kex::KemScheme::kMlKem1024)
      add_core_mlkem(s, b.encaps, row);
    const NegotiationFigures nf = loopback_negotiations(s, kp, negotiation_budget(s, smoke));
    row["negotiation_us"] = nf.median_us;
    row["negotiation_mean_us"] = nf.mean_us;
    row["negotiation_paper_eq10_us"] = nf.paper_eq10_us;
    row["negotiations"] = nf.count;
    row["public_key_bytes"] = kp.public_key.size();
    row["ciphertext_bytes"] = last.ciphertext.size();
    row["peak_rss_kib"] = proc_status_kib("VmHWM");
    row["rss_before_kib"] = rss_before;
    row["peak_rss_is_per_scheme"] = peak_reset;
    log << "  " << std::left << std::setw(18) << row["scheme"].get<std::string>() << " done\n";
    rows.push_back(row);
  }
  return rows;
}

// Prints the table and the paper's ratios (from rows of the same run).
void print(const nlohmann::json& rows, std::ostream& out) {
  auto num = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; };
  out << std::fixed << std::setprecision(1);
  out << std::left << std::setw(20) << "scheme" << std::right << std::setw(12) << "keygen_us" << std::setw(12)
      << "encaps_us" << std::setw(12) << "decaps_us" << std::setw(12) << "enc+dec_us" << std::setw(12)
      << "negot_us" << std::setw(10) << "pk_B"
      << std::setw(10) << "ct_B" << std::setw(12) << "peak_KiB" << "\n";
  std::map<std::string, double> total, negot;
  for (const auto& r : rows) {
    const std::string name = r["scheme"];
    const double t = num(r["encaps_us"]) + num(r["decaps_us"]);
    total[name] = t;
    negot[name] = num(r["negotiation_us"]);
    out << std::left << std::setw(20) << name << std::right << std::setw(12);
    if (r["keygen_us"].is_number()) out << num(r["keygen_us"]);
    else out << "(loaded)";
    out << std::setw(12) << num(r["encaps_us"]) << std::setw(12) << num(r["decaps_us"]) << std::setw(12) << t
        << std::setw(12) << num(r["negotiation_us"]) << std::setw(10) << r["public_key_bytes"].get<std::size_t>() << std::setw(10)
        << r["ciphertext_bytes"].get<std::size_t>() << std::setw(12) << r["peak_rss_kib"].get<long>() << "\n";
    if (r.contains("encaps_cpu_us"))
      out << std::left << std::setw(20) << "  (thread CPU time)" << std::right << std::setw(12)
          << num(r.value("keygen_cpu_us", nlohmann::json())) << std::setw(12) << num(r["encaps_cpu_us"])
          << std::setw(12) << num(r["decaps_cpu_us"]) << "\n";
    if (r.contains("core_keygen_us"))
      out << std::left << std::setw(20) << ("  (FIPS 203 core)") << std::right << std::setw(12)
          << num(r["core_keygen_us"]) << std::setw(12) << num(r["core_encaps_us"]) << std::setw(12)
          << num(r["core_decaps_us"]) << "   (CPU " << num(r["core_keygen_cpu_us"]) << " / "
          << num(r["core_encaps_cpu_us"]) << " / " << num(r["core_decaps_cpu_us"]) << ")\n";
  }
  auto ratio_line = [&](const std::string& level, const std::string& ntru, const std::vector<std::string>& others) {
    if (!total.count(ntru) || total[ntru] <= 0) return;
    out << level << " (encaps+decaps relative to " << ntru << ", same run):";
    for (const auto& o : others)
      if (total.count(o)) out << "  " << o << " " << std::setprecision(2) << total[o] / total[ntru] << "x";
    out << std::setprecision(1) << "\n";
    if (negot[ntru] <= 0) return;
    out << level << " (whole negotiation over loopback relative to " << ntru << "):";
    for (const auto& o : others)
      if (negot.count(o)) out << "  " << o << " " << std::setprecision(2) << negot[o] / negot[ntru] << "x";
    out << std::setprecision(1) << "\n";
  };
  ratio_line("128-bit", "ntru-ees613ep1", {"ecdh-p256", "rsa-3072", "x25519", "ml-kem-512", "ml-kem-768",
                                            "x25519+ml-kem-768"});
  ratio_line("256-bit", "ntru-ees1171ep1", {"ecdh-p521", "rsa-15360", "ml-kem-1024"});
  out << "ML-KEM-768 goal: within 1.5x of ~24/25/27 us (keygen/encaps/decaps) of an optimised portable C "
         "implementation on this machine class (external figure, not measured in this run).\n"
         "negot_us: median of the 4-step negotiation over TCP loopback (Hello, PublicKey, KeyExchange, Finished),\n"
         "including transmission; the paper's eq. (10) figure total/(n*2) is in the JSON as "
         "negotiation_paper_eq10_us.\n";
}

}  // namespace layersec::kexbench
