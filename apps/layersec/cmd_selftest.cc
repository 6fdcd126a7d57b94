// `layersec selftest [--vectors DIR] [--testdata DIR] [--json FILE]`: a
// known-answer self test of every crypto primitive against its published
// vectors (../shared/vectors plus the repository's testdata/crypto), with a
// short throughput measurement per primitive on a 1500-byte message. Exits
// non-zero if any vector fails or a vector file is missing.
//
// Only algorithm and vector names are printed, never keys or tags.
//
// Hidden: `layersec selftest --chaskey-xcheck FILE` reads lines
// "<rounds> <key hex> <message hex> <tag hex>" written by an independent
// implementation (tests/crypto_xcheck/chaskey_ref.py) and checks that
// Chaskey::mac(), the incremental interface and make_mac() all reproduce
// every tag.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/hex.h"
#include "layersec/base/time.h"
#include "layersec/crypto/aead.h"
#include "layersec/crypto/chaskey.h"
#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mac.h"

#ifndef LAYERSEC_SOURCE_DIR
// The integrator adds target_compile_definitions(layersec PRIVATE
// LAYERSEC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"); until then the environment
// variable LAYERSEC_SOURCE_DIR (set by ctest) or --testdata is used.
#define LAYERSEC_SOURCE_DIR "."
#endif

namespace layersec::app {
namespace {

using Bytes = std::vector<std::uint8_t>;
using crypto::CryptoError;
using crypto::MacAlgorithm;
using nlohmann::json;

// Thrown for malformed vector files; ends up as a failed check.
struct VectorFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Bytes hx(const json& j) {
  auto v = from_hex(j.get<std::string>());
  if (!v) throw VectorFileError("bad hex in vector file");
  return std::move(*v);
}
Bytes hx(const std::string& s) {
  auto v = from_hex(s);
  if (!v) throw VectorFileError("bad hex in vector file");
  return std::move(*v);
}

// One line of the report.
struct AlgoReport {
  std::string name;
  int passed = 0;
  int total = 0;
  std::vector<std::string> failures;  // vector names only
  std::vector<std::string> errors;    // missing or malformed files
  double ns_per_op = 0;
  double mb_per_s = 0;  // 0 for primitives measured per operation only
  std::size_t bench_bytes = 0;
  std::string bench_what;

  void check(bool ok, const std::string& vector_name) {
    ++total;
    if (ok) {
      ++passed;
    } else {
      failures.push_back(vector_name);
    }
  }
  [[nodiscard]] bool ok() const { return errors.empty() && total > 0 && passed == total; }
};

class Selftest {
 public:
  Selftest(std::filesystem::path vectors, std::filesystem::path testdata)
      : vectors_(std::move(vectors)), testdata_(std::move(testdata)) {}

  std::vector<AlgoReport> run() {
    std::vector<AlgoReport> out;
    out.push_back(cmac(MacAlgorithm::kCmacAes128, "AES-CMAC-128"));
    out.push_back(cmac(MacAlgorithm::kCmacAes192, "AES-CMAC-192"));
    out.push_back(cmac(MacAlgorithm::kCmacAes256, "AES-CMAC-256"));
    out.push_back(chaskey(8, "Chaskey-8"));
    out.push_back(chaskey(12, "Chaskey-12"));
    out.push_back(hmac());
    out.push_back(blake2s());
    out.push_back(gcm(16, "AES-GCM-128"));
    out.push_back(gcm(32, "AES-GCM-256"));
    out.push_back(gmac());
    out.push_back(hkdf());
    out.push_back(keywrap());
    return out;
  }

 private:
  std::filesystem::path vectors_;
  std::filesystem::path testdata_;

  static json load(const std::filesystem::path& p) {
    std::string text;
    try {
      text = read_regular_file(p.string(), 64 << 20);  // no FIFO hang, bounded
    } catch (const FileError& e) {
      throw VectorFileError(std::string("cannot read ") + e.what());
    }
    try {
      return json::parse(text);
    } catch (const std::exception& e) {
      throw VectorFileError("malformed JSON in " + p.string() + ": " + e.what());
    }
  }

  // Runs `body` with the report; a missing or malformed file becomes an error
  // line instead of ending the whole self test.
  static AlgoReport guarded(const std::string& name, const std::function<void(AlgoReport&)>& body) {
    AlgoReport r;
    r.name = name;
    try {
      body(r);
    } catch (const std::exception& e) {
      r.errors.push_back(e.what());
    }
    return r;
  }

  // Times `op` over ~20 ms (after a short warm-up) and records ns/op.
  static void measure(AlgoReport& r, std::size_t bytes, const std::string& what,
                      const std::function<bool()>& op) {
    MonotonicClock clock;
    for (int i = 0; i < 8; ++i) (void)op();
    const Duration budget = Duration::milliseconds(20);
    std::uint64_t iterations = 0;
    bool all_ok = true;
    const TimePoint start = clock.now();
    TimePoint now = start;
    do {
      for (int i = 0; i < 16; ++i) all_ok &= op();
      iterations += 16;
      now = clock.now();
    } while (now - start < budget);
    if (!all_ok) r.errors.push_back("the timed operation failed");
    r.ns_per_op = static_cast<double>((now - start).ns()) / static_cast<double>(iterations);
    r.bench_bytes = bytes;
    r.bench_what = what;
    if (bytes >= 64) r.mb_per_s = static_cast<double>(bytes) * 1e3 / r.ns_per_op;  // bytes/ns*1e3 = MB/s
  }

  static Bytes bench_message() {
    Bytes m(1500);
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(i * 131 + 7);
    return m;
  }

  static std::unique_ptr<crypto::Mac> make(MacAlgorithm a, const Bytes& key) {
    auto m = crypto::make_mac(a, key);
    if (!m.ok()) return nullptr;
    return std::move(m).value();
  }

  // True if `mac` keyed with `key` gives `tag` (first `bits` bits) over msg,
  // by compute_bits and by verify_bits.
  static bool mac_matches(MacAlgorithm a, const Bytes& key, const Bytes& msg, const Bytes& tag,
                          std::size_t bits) {
    auto mac = make(a, key);
    if (!mac || tag.size() != (bits + 7) / 8) return false;
    const ByteSpan parts[1] = {msg};
    Bytes out(tag.size());
    if (!mac->compute_bits(parts, bits, out).ok()) return false;
    return out == tag && mac->verify_bits(parts, tag, bits);
  }

  static void bench_mac(AlgoReport& r, MacAlgorithm a) {
    auto mac = make(a, Bytes(crypto::mac_key_size(a), 0x5A));
    if (!mac) {
      r.errors.push_back("cannot build a context for the throughput run");
      return;
    }
    const Bytes msg = bench_message();
    Bytes tag(mac->tag_size());
    measure(r, msg.size(), "MAC over 1500 B", [&] { return mac->compute(msg, tag).ok(); });
  }

  static MacAlgorithm cmac_for(std::size_t key_len) {
    return key_len == 16 ? MacAlgorithm::kCmacAes128
           : key_len == 24 ? MacAlgorithm::kCmacAes192
                           : MacAlgorithm::kCmacAes256;
  }

  AlgoReport cmac(MacAlgorithm alg, const std::string& name) {
    return guarded(name, [&](AlgoReport& r) {
      const json j = load(vectors_ / "secoc/cmac_secoc_vectors.json");
      for (const char* set : {"cmac_aes128_rfc4493", "cmac_aes192_sp800_38b", "cmac_aes256_sp800_38b"}) {
        for (const auto& v : j.at(set)) {
          const Bytes key = hx(v.at("key"));
          if (cmac_for(key.size()) != alg) continue;
          r.check(mac_matches(alg, key, hx(v.at("message")), hx(v.at("expected_mac")), 128),
                  v.at("name").get<std::string>());
        }
      }
      if (alg == MacAlgorithm::kCmacAes128) {
        for (const auto& v : j.at("secoc_external")) {
          const Bytes key = hx(v.at("key")), msg = hx(v.at("data_to_authenticator"));
          const std::string n = v.at("name").get<std::string>();
          r.check(mac_matches(alg, key, msg, hx(v.at("full_cmac_openssl")), 128), n);
          r.check(mac_matches(alg, key, msg, hx(v.at("expected_truncated_mac_24bit")), 24), n + " (24 bit)");
        }
        Bytes negative_key;
        for (const auto& v : j.at("secoc_derived")) {
          const Bytes key = hx(v.at("key")), msg = hx(v.at("data_to_authenticator"));
          if (negative_key.empty()) negative_key = key;
          const std::string n = v.at("name").get<std::string>();
          r.check(mac_matches(alg, key, msg, hx(v.at("full_cmac")), 128), n);
          std::string t = v.at("truncated_mac").get<std::string>();
          if (t.size() % 2) t += '0';  // 28-bit MACs are given as 7 hex digits
          const auto bits = v.at("mac_trunc_bits").get<std::size_t>();
          r.check(mac_matches(alg, key, msg, hx(t), bits), n + " (truncated)");
        }
        for (const auto& v : j.at("secoc_negative")) {
          auto mac = make(alg, negative_key);
          const Bytes msg = hx(v.at("data_to_authenticator"));
          const ByteSpan parts[1] = {msg};
          r.check(mac && !mac->verify_bits(parts, hx(v.at("expected_truncated_mac_of_original")), 24),
                  v.at("name").get<std::string>());
        }
        const json m = load(vectors_ / "mka/mka_vectors.json");
        for (const auto& v : m.at("vectors")) {
          const std::string kind = v.at("kind").get<std::string>();
          if (kind.rfind("AES-CMAC", 0) == 0)
            r.check(mac_matches(alg, hx(v.at("inputs").at("key")), hx(v.at("inputs").at("msg")),
                                hx(v.at("expected")), 128),
                    v.at("id").get<std::string>());
          if (!v.contains("mkpdus")) continue;
          const Bytes ick = hx(v.at("inputs").at("derived_ick"));
          for (const auto& p : v.at("mkpdus")) {
            if (!p.value("icv_ok", false)) continue;
            Bytes frame = hx(p.at("mkpdu_hex"));
            const Bytes icv = hx(p.at("icv"));
            if (frame.size() < icv.size()) throw VectorFileError("short MKPDU");
            frame.resize(frame.size() - icv.size());
            r.check(mac_matches(alg, ick, frame, icv, 128),
                    "MKPDU frame " + std::to_string(p.at("frame_no").get<int>()));
          }
        }
      }
      bench_mac(r, alg);
    });
  }

  AlgoReport chaskey(int rounds, const std::string& name) {
    return guarded(name, [&](AlgoReport& r) {
      const json j = load(vectors_ / "chaskey/chaskey_vectors.json");
      for (const auto& s : j.at("sets")) {
        if (s.at("rounds").get<int>() != rounds) continue;
        const Bytes key = hx(s.at("key_hex"));
        auto c = crypto::Chaskey::create(key, rounds);
        auto m = make(rounds == 12 ? MacAlgorithm::kChaskey12 : MacAlgorithm::kChaskey8, key);
        if (!c.ok() || !m) throw VectorFileError("cannot key Chaskey");
        for (const auto& v : s.at("vectors")) {
          const Bytes msg = hx(v.at("message_hex")), tag = hx(v.at("tag_hex"));
          Bytes a(tag.size()), b(tag.size());
          c.value()->mac(msg, a);
          const bool ok = m->compute(msg, b).ok() && a == tag && b == tag;
          r.check(ok, s.at("id").get<std::string>() + " len " + std::to_string(msg.size()));
        }
      }
      auto c = crypto::Chaskey::create(Bytes(16, 0x5A), rounds);
      if (!c.ok()) throw VectorFileError("cannot key Chaskey");
      const Bytes msg = bench_message();
      Bytes tag(16);
      measure(r, msg.size(), "MAC over 1500 B", [&] {
        c.value()->mac(msg, tag);
        return true;
      });
    });
  }

  AlgoReport hmac() {
    return guarded("HMAC-SHA256", [&](AlgoReport& r) {
      const json j = load(testdata_ / "crypto/hmac_sha256_rfc4231.json");
      for (const auto& v : j.at("vectors"))
        r.check(mac_matches(MacAlgorithm::kHmacSha256, hx(v.at("key")), hx(v.at("message")), hx(v.at("tag")),
                            v.at("tag_bits").get<std::size_t>()),
                v.at("name").get<std::string>());
      bench_mac(r, MacAlgorithm::kHmacSha256);
    });
  }

  AlgoReport blake2s() {
    return guarded("BLAKE2s-256", [&](AlgoReport& r) {
      const json j = load(testdata_ / "crypto/blake2s_keyed_kat.json");
      const Bytes key = hx(j.at("key"));
      for (const auto& v : j.at("vectors")) {
        const auto n = v.at("msg_len").get<std::size_t>();
        Bytes msg(n);
        for (std::size_t i = 0; i < n; ++i) msg[i] = static_cast<std::uint8_t>(i);
        r.check(mac_matches(MacAlgorithm::kBlake2s256, key, msg, hx(v.at("tag")), 256),
                "keyed KAT len " + std::to_string(n));
      }
      bench_mac(r, MacAlgorithm::kBlake2s256);
    });
  }

  // One GCM known answer: IV, AAD, plaintext, ciphertext and tag.
  struct GcmCase {
    std::string name;
    Bytes key, iv, aad, plaintext, ciphertext, tag;
    bool integrity_only = false;  // MACsec integrity frame: GMAC of aad
    bool positive = true;
  };

  // 802.1AE-2018 Annex C and supplementary frames as GCM/GMAC cases
  // (§14.5: IV = SCI || PN, or (SSCI || PN64) XOR Salt for XPN).
  std::vector<GcmCase> macsec_cases() {
    std::vector<GcmCase> out;
    const json j = load(vectors_ / "macsec/macsec_vectors.json");
    for (const char* list : {"annex_c", "supplementary", "negative"}) {
      for (const auto& v : j.at(list)) {
        if (!v.contains("protection") || !v.contains("secure_frame_parts")) continue;  // not MACsec frames
        GcmCase c;
        c.name = v.at("id").get<std::string>();
        c.positive = std::string(list) != "negative";
        c.integrity_only = v.at("protection").get<std::string>() == "integrity";
        c.key = hx(v.at("sak"));
        if (v.at("cipher_suite").get<std::string>().find("XPN") != std::string::npos) {
          Bytes sp = hx(v.at("ssci"));
          const Bytes pn = hx(v.at("xpn_pn64")), salt = hx(v.at("salt"));
          sp.insert(sp.end(), pn.begin(), pn.end());
          if (sp.size() != 12 || salt.size() != 12) throw VectorFileError("bad XPN fields");
          c.iv.resize(12);
          for (std::size_t i = 0; i < 12; ++i) c.iv[i] = sp[i] ^ salt[i];
        } else {
          c.iv = hx(v.at("sci"));
          const Bytes pn = hx(v.at("pn_hex"));
          c.iv.insert(c.iv.end(), pn.begin(), pn.end());
        }
        const Bytes frame = hx(v.at("secure_frame"));
        const auto& parts = v.at("secure_frame_parts");
        c.tag = hx(parts.at("icv"));
        const Bytes sd = hx(parts.at("secure_data"));
        if (frame.size() < sd.size() + c.tag.size() + 12) throw VectorFileError("inconsistent MACsec frame");
        const std::size_t header = frame.size() - sd.size() - c.tag.size();
        Bytes clear_tags;
        if (v.contains("clear_tags_before_sectag") && v.at("clear_tags_before_sectag").is_string())
          clear_tags = hx(v.at("clear_tags_before_sectag"));
        if (c.integrity_only) {
          c.aad.assign(frame.begin(), frame.end() - static_cast<long>(c.tag.size()));
        } else {
          c.aad.assign(frame.begin(), frame.begin() + static_cast<long>(header));
          c.ciphertext = sd;
          c.plaintext = hx(v.at("unprotected_frame").at("msdu"));
          if (!clear_tags.empty() && c.plaintext.size() >= clear_tags.size() &&
              std::equal(clear_tags.begin(), clear_tags.end(), c.plaintext.begin()))
            c.plaintext.erase(c.plaintext.begin(), c.plaintext.begin() + static_cast<long>(clear_tags.size()));
        }
        // Clear tags between SA and SecTAG are not covered by the ICV.
        if (c.aad.size() < 12 + clear_tags.size()) throw VectorFileError("inconsistent clear tags");
        c.aad.erase(c.aad.begin() + 12, c.aad.begin() + 12 + static_cast<long>(clear_tags.size()));
        out.push_back(std::move(c));
      }
    }
    return out;
  }

  std::vector<GcmCase> spec_cases() {
    std::vector<GcmCase> out;
    const json j = load(testdata_ / "crypto/gcm_vectors.json");
    for (const auto& v : j.at("vectors"))
      out.push_back({v.at("name").get<std::string>(), hx(v.at("key")), hx(v.at("iv")), hx(v.at("aad")),
                     hx(v.at("plaintext")), hx(v.at("ciphertext")), hx(v.at("tag"))});
    return out;
  }

  static bool gcm_case_ok(const GcmCase& c) {
    auto g = crypto::AesGcm::create(c.key);
    if (!g.ok()) return false;
    auto& gcm = g.value();
    Bytes buf = c.ciphertext;
    const bool opened = gcm.open(c.iv, c.aad, buf, c.tag).ok();
    if (!c.positive) return !opened;
    if (!opened || buf != c.plaintext) return false;
    Bytes tag(crypto::kGcmTagSize);
    if (!gcm.seal(c.iv, c.aad, buf, tag).ok()) return false;
    if (buf != c.ciphertext || tag != c.tag) return false;
    // A flipped tag bit must be refused.
    Bytes bad = c.tag;
    bad[0] ^= 0x01;
    return !gcm.open(c.iv, c.aad, buf, bad).ok();
  }

  AlgoReport gcm(std::size_t key_len, const std::string& name) {
    return guarded(name, [&](AlgoReport& r) {
      for (const auto& c : spec_cases())
        if (c.key.size() == key_len) r.check(gcm_case_ok(c), c.name);
      for (const auto& c : macsec_cases())
        if (!c.integrity_only && c.key.size() == key_len) r.check(gcm_case_ok(c), "802.1AE " + c.name);
      auto g = crypto::AesGcm::create(Bytes(key_len, 0x5A));
      if (!g.ok()) throw VectorFileError("cannot key AES-GCM");
      Bytes buf = bench_message();
      Bytes iv(12, 0), tag(16);
      const Bytes aad(28, 0x11);
      std::uint32_t pn = 0;
      measure(r, buf.size(), "seal 1500 B + 28 B AAD", [&] {
        store_be32(iv.data() + 8, ++pn);  // a fresh IV per message, as MACsec does
        return g.value().seal(iv, aad, buf, tag).ok();
      });
    });
  }

  AlgoReport gmac() {
    return guarded("AES-GMAC", [&](AlgoReport& r) {
      auto check_gmac = [&](const GcmCase& c) {
        auto g = crypto::AesGmac::create(c.key);
        if (!g.ok()) return false;
        const ByteSpan parts[1] = {c.aad};
        Bytes tag(crypto::kGcmTagSize);
        if (!g.value().compute(c.iv, parts, tag).ok()) return false;
        const bool verified = g.value().verify(c.iv, parts, c.tag);
        if (!c.positive) return !verified;
        Bytes bad = c.tag;
        bad[15] ^= 0x80;
        return tag == c.tag && verified && !g.value().verify(c.iv, parts, bad);
      };
      for (const auto& c : spec_cases())
        if (c.plaintext.empty()) r.check(check_gmac(c), c.name);
      for (const auto& c : macsec_cases())
        if (c.integrity_only) r.check(check_gmac(c), "802.1AE " + c.name);
      auto g = crypto::AesGmac::create(Bytes(16, 0x5A));
      if (!g.ok()) throw VectorFileError("cannot key AES-GMAC");
      const Bytes msg = bench_message();
      Bytes iv(12, 0), tag(16);
      std::uint32_t pn = 0;
      measure(r, msg.size(), "GMAC-128 over 1500 B", [&] {
        store_be32(iv.data() + 8, ++pn);
        return g.value().compute(iv, msg, tag).ok();
      });
    });
  }

  AlgoReport hkdf() {
    return guarded("HKDF-SHA256", [&](AlgoReport& r) {
      const json j = load(testdata_ / "crypto/hkdf_rfc5869.json");
      for (const auto& v : j.at("vectors")) {
        const Bytes okm = hx(v.at("okm"));
        Bytes out(okm.size());
        const bool ok = crypto::hkdf_sha256(hx(v.at("salt")), hx(v.at("ikm")), hx(v.at("info")), out).ok();
        r.check(ok && out == okm, v.at("name").get<std::string>());
      }
      const Bytes ikm(32, 0x5A), info(16, 0x01);
      Bytes out(32);
      measure(r, 32, "derive 32 B", [&] { return crypto::hkdf_sha256(ByteSpan{}, ikm, info, out).ok(); });
    });
  }

  AlgoReport keywrap() {
    return guarded("AES key wrap", [&](AlgoReport& r) {
      auto check = [&](const Bytes& kek, const Bytes& plain, const Bytes& wrapped, const std::string& name) {
        Bytes w(plain.size() + 8), u(plain.size());
        bool ok = crypto::aes_key_wrap(kek, plain, w).ok() && w == wrapped &&
                  crypto::aes_key_unwrap(kek, wrapped, u).ok() && u == plain;
        Bytes bad = wrapped;
        bad[bad.size() / 2] ^= 0x01;
        ok = ok && !crypto::aes_key_unwrap(kek, bad, u).ok();
        r.check(ok, name);
      };
      const json j = load(testdata_ / "crypto/keywrap_rfc3394.json");
      for (const auto& v : j.at("vectors"))
        check(hx(v.at("kek")), hx(v.at("key_data")), hx(v.at("wrapped")), v.at("name").get<std::string>());
      const json m = load(vectors_ / "mka/mka_vectors.json");
      for (const auto& v : m.at("vectors")) {
        if (v.at("kind").get<std::string>().rfind("AES Key Wrap", 0) == 0)
          check(hx(v.at("inputs").at("kek")), hx(v.at("inputs").at("plaintext")), hx(v.at("expected")),
                "MKA " + v.at("id").get<std::string>());
        if (!v.contains("mkpdus")) continue;
        const Bytes kek = hx(v.at("inputs").at("derived_kek"));
        for (const auto& p : v.at("mkpdus")) {
          if (!p.contains("distributed_sak")) continue;
          const auto& s = p.at("distributed_sak");
          check(kek, hx(s.at("unwrapped_sak")), hx(s.at("wrapped_sak")),
                "MKPDU frame " + std::to_string(p.at("frame_no").get<int>()) + " SAK");
        }
      }
      const Bytes kek(16, 0x5A), key(16, 0x33);
      Bytes w(24);
      measure(r, 16, "wrap a 16 B key", [&] { return crypto::aes_key_wrap(kek, key, w).ok(); });
    });
  }
};

std::filesystem::path default_testdata_dir() {
  if (const char* e = std::getenv("LAYERSEC_SOURCE_DIR"); e && *e) return std::filesystem::path(e) / "testdata";
  return std::filesystem::path(LAYERSEC_SOURCE_DIR) / "testdata";
}

std::string fixed(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

void print_table(const std::vector<AlgoReport>& reports, std::ostream& os) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %-9s %-6s %10s %12s  %s\n", "algorithm", "vectors", "result", "MB/s",
                "ns/op", "timed operation");
  os << line;
  for (const auto& r : reports) {
    const std::string counts = std::to_string(r.passed) + "/" + std::to_string(r.total);
    std::snprintf(line, sizeof line, "%-14s %-9s %-6s %10s %12s  %s\n", r.name.c_str(), counts.c_str(),
                  r.ok() ? "ok" : "FAIL", r.mb_per_s > 0 ? fixed(r.mb_per_s, 1).c_str() : "-",
                  r.ns_per_op > 0 ? fixed(r.ns_per_op, 0).c_str() : "-", r.bench_what.c_str());
    os << line;
    for (const auto& f : r.failures) os << "    failed: " << f << "\n";
    for (const auto& e : r.errors) os << "    error: " << e << "\n";
  }
}

struct Options {
  std::string vectors;
  std::string testdata;
  std::string json_path;
  std::string chaskey_xcheck;
};

// Hidden cross-check against an independent Chaskey (see file comment).
int run_chaskey_xcheck(const std::string& path) {
  std::istringstream in;
  try {
    in.str(read_regular_file(path, 64 << 20));
  } catch (const FileError& e) {
    std::cerr << "layersec selftest: --chaskey-xcheck: " << e.what() << "\n";
    return 2;
  }
  std::string line;
  int checked = 0, mismatches = 0, lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    int rounds = 0;
    std::string key_hex, msg_hex, tag_hex;
    ls >> rounds >> key_hex >> msg_hex >> tag_hex;
    if (msg_hex == "-") msg_hex.clear();  // empty message
    const auto key = from_hex(key_hex), msg = from_hex(msg_hex), tag = from_hex(tag_hex);
    if (!ls || !key || !msg || !tag || tag->empty() || tag->size() > 16) {
      std::cerr << "line " << lineno << ": malformed\n";
      ++mismatches;
      continue;
    }
    auto c = crypto::Chaskey::create(*key, rounds);
    auto m = crypto::make_mac(rounds == 12 ? MacAlgorithm::kChaskey12 : MacAlgorithm::kChaskey8, *key);
    if (!c.ok() || !m.ok()) {
      std::cerr << "line " << lineno << ": cannot key Chaskey\n";
      ++mismatches;
      continue;
    }
    Bytes a(tag->size()), b(16), d(16);
    c.value()->mac(*msg, a);
    bool ok = m.value()->compute(*msg, b).ok();
    // Incremental in pieces of 1, 2, 3, ... bytes.
    auto& inc = *c.value();
    inc.begin();
    std::size_t pos = 0;
    for (std::size_t piece = 1; pos < msg->size(); ++piece) {
      const std::size_t n = std::min(piece, msg->size() - pos);
      inc.update(ByteSpan(*msg).subspan(pos, n));
      pos += n;
    }
    ok = ok && inc.finish(d).ok();
    ok = ok && a == *tag && std::equal(tag->begin(), tag->end(), b.begin()) &&
         std::equal(tag->begin(), tag->end(), d.begin());
    ++checked;
    if (!ok) {
      ++mismatches;
      std::cerr << "line " << lineno << ": Chaskey-" << rounds << " tag mismatch (message " << msg->size()
                << " bytes)\n";
    }
  }
  std::cout << "chaskey xcheck: " << checked << " cases, " << mismatches << " mismatches\n";
  return (mismatches == 0 && checked > 0) ? 0 : 1;
}

int run(const Options& o) {
  if (!o.chaskey_xcheck.empty()) return run_chaskey_xcheck(o.chaskey_xcheck);
  const std::filesystem::path vectors = o.vectors.empty() ? std::filesystem::path(default_vectors_dir())
                                                          : std::filesystem::path(o.vectors);
  const std::filesystem::path testdata =
      o.testdata.empty() ? default_testdata_dir() : std::filesystem::path(o.testdata);
  Selftest st(vectors, testdata);
  const auto reports = st.run();
  std::cout << "layersec selftest: known-answer tests (vectors " << vectors.string() << ", testdata "
            << testdata.string() << "); throughput over ~20 ms per primitive\n";
  print_table(reports, std::cout);
  bool all_ok = true;
  json rows = json::array();
  for (const auto& r : reports) {
    all_ok = all_ok && r.ok();
    rows.push_back({{"algorithm", r.name},
                    {"passed", r.passed},
                    {"total", r.total},
                    {"ok", r.ok()},
                    {"failures", r.failures},
                    {"errors", r.errors},
                    {"ns_per_op", r.ns_per_op},
                    {"mb_per_s", r.mb_per_s},
                    {"bytes", r.bench_bytes},
                    {"timed_operation", r.bench_what}});
  }
  if (!o.json_path.empty()) {
    try {
      OutputFile out(o.json_path);  // no symlink followed; every write error reported
      out.write(rows.dump(2) + "\n");
      out.close();
    } catch (const FileError& e) {
      std::cerr << "layersec selftest: --json: " << e.what() << "\n";
      return 2;
    }
  }
  std::cout << (all_ok ? "selftest: all vectors passed\n" : "selftest: FAILED\n");
  return all_ok ? 0 : 1;
}

const CommandRegistration reg(90, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = root.add_subcommand("selftest", "Known-answer self test of every crypto primitive, with throughput");
  cmd->add_option("--vectors", opts->vectors, "folder of the shared vectors (default: ../shared/vectors)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--testdata", opts->testdata,
                  "the repository's testdata folder (default: $LAYERSEC_SOURCE_DIR/testdata)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--json", opts->json_path, "also write the results as JSON to FILE")->check(kOutputFile);
  cmd->add_option("--chaskey-xcheck", opts->chaskey_xcheck, "")->group("")->check(kRegularFile);
  cmd->callback([opts] { set_exit_code(run(*opts)); });
});

}  // namespace
}  // namespace layersec::app
