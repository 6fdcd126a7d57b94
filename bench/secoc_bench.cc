// SecOC engine micro-benchmarks: protect, verify and protect+verify per
// profile at 8, 64, 256 and 1400 bytes, each beside a baseline measured in the
// same run: the bare context-reusing OpenSSL computation(s) the operation
// needs over the same DataToAuthenticator (one MAC for protect or verify,
// two for protect+verify; AES-GCM seal / open for the AEAD profile), written
// directly against EVP_MAC / EVP_CIPHER with EVP_MAC_init(ctx, NULL, 0, NULL)
// per message as in crypto/mac.cc.
// Names: secoc/<profile>/<op>/<ours|baseline>/<bytes>.
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include "bare_gcm_tag.h"
#include "bare_mac.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"

namespace {

using layersec::ByteSpan;
using layersec::MutableByteSpan;
using layersec::TimePoint;
namespace secoc = layersec::secoc;

constexpr std::int64_t kSizes[] = {8, 64, 256, 1400};
constexpr std::size_t kRing = 64;  // distinct PDUs cycled through by verify

enum class Op { kProtect, kVerify, kProtectVerify };
const char* op_name(Op op) {
  return op == Op::kProtect ? "protect" : op == Op::kVerify ? "verify" : "protect+verify";
}

struct NamedProfile {
  const char* name;
  secoc::PduProfile profile;
};

std::vector<NamedProfile> profiles() {
  secoc::PduProfile hmac = secoc::PduProfile::vendor();
  hmac.kind = secoc::ProfileKind::kCustom;
  hmac.algorithm = secoc::AuthAlgorithm::kHmacSha256;
  hmac.auth_info_tx_length = 128;
  return {{"profile1", secoc::PduProfile::profile1()},
          {"profile2", secoc::PduProfile::profile2()},
          {"profile3", secoc::PduProfile::profile3()},
          {"vendor", secoc::PduProfile::vendor()},
          {"hmac-sha256", hmac},
          {"aead-gcm", secoc::PduProfile::aead_gcm()}};
}

std::vector<std::uint8_t> payload(std::size_t n) {
  std::vector<std::uint8_t> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return m;
}

// --- ours -------------------------------------------------------------------

void bm_ours(benchmark::State& state, secoc::PduProfile profile, Op op) {
  secoc::LinkOptions o;
  o.profile = profile;
  secoc::SimulatedLink link(o);  // sender + receiver, keys installed, synchronised
  secoc::Engine& tx = link.sender();
  secoc::Engine& rx = link.receiver();
  const auto pl = payload(static_cast<std::size_t>(state.range(0)));
  const std::size_t wire_size = profile.secured_size(pl.size());
  std::vector<std::uint8_t> wire(wire_size), out(wire_size);
  secoc::RxInput at;  // counter freshness is time-bound: verify at the link's time
  at.now = link.now();
  if (op == Op::kProtect) {
    for (auto _ : state) {
      auto r = tx.protect(0, pl, wire);
      if (!r.ok()) {
        state.SkipWithError("protect failed");
        break;
      }
      benchmark::DoNotOptimize(wire.data());
    }
  } else if (op == Op::kProtectVerify) {
    for (auto _ : state) {
      auto r = tx.protect(0, pl, wire);
      if (!r.ok()) {
        state.SkipWithError("protect failed");
        break;
      }
      auto v = rx.verify(0, ByteSpan(wire.data(), *r), out, at);
      if (!v.ok()) {
        state.SkipWithError("verify failed");
        break;
      }
      benchmark::DoNotOptimize(out.data());
    }
  } else {
    // A ring of valid PDUs; the receiver is rewound once per lap (O(1)).
    const secoc::FreshnessCounters base = rx.rx_freshness(0).last;
    std::vector<std::vector<std::uint8_t>> ring(kRing, std::vector<std::uint8_t>(wire_size));
    for (auto& w : ring) {
      auto r = tx.protect(0, pl, w);
      if (!r.ok()) throw std::runtime_error("protect failed");
    }
    std::size_t i = 0;
    for (auto _ : state) {
      if (i == kRing) {
        i = 0;
        if (profile.freshness.has_freshness() && !rx.set_rx_freshness(0, base, link.now())) {
          state.SkipWithError("rewind failed");
          break;
        }
      }
      auto v = rx.verify(0, ring[i++], out, at);
      if (!v.ok()) {
        state.SkipWithError("verify failed");
        break;
      }
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

// --- baseline: bare OpenSSL over the same DataToAuthenticator ----------------

struct BareGcm {
  EVP_CIPHER_CTX* enc = EVP_CIPHER_CTX_new();
  EVP_CIPHER_CTX* dec = EVP_CIPHER_CTX_new();
  explicit BareGcm(const layersec::SecretBytes& key) {
    const EVP_CIPHER* c = key.size() == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
    if (EVP_EncryptInit_ex(enc, c, nullptr, key.data(), nullptr) != 1 ||
        EVP_DecryptInit_ex(dec, c, nullptr, key.data(), nullptr) != 1)
      throw std::runtime_error("EVP_CipherInit");
  }
  ~BareGcm() {
    EVP_CIPHER_CTX_free(enc);
    EVP_CIPHER_CTX_free(dec);
  }
  BareGcm(const BareGcm&) = delete;
  BareGcm& operator=(const BareGcm&) = delete;
  void seal(const std::uint8_t* iv, ByteSpan aad, std::vector<std::uint8_t>& data, std::uint8_t* tag) {
    int outl = 0;
    EVP_EncryptInit_ex(enc, nullptr, nullptr, nullptr, iv);
    EVP_EncryptUpdate(enc, nullptr, &outl, aad.data(), static_cast<int>(aad.size()));
    EVP_EncryptUpdate(enc, data.data(), &outl, data.data(), static_cast<int>(data.size()));
    EVP_EncryptFinal_ex(enc, data.data() + outl, &outl);
    layersec::benchrun::gcm_get_tag(enc, tag, 16);
  }
  bool open(const std::uint8_t* iv, ByteSpan aad, std::vector<std::uint8_t>& data, std::uint8_t* tag) {
    int outl = 0;
    EVP_DecryptInit_ex(dec, nullptr, nullptr, nullptr, iv);
    EVP_DecryptUpdate(dec, nullptr, &outl, aad.data(), static_cast<int>(aad.size()));
    EVP_DecryptUpdate(dec, data.data(), &outl, data.data(), static_cast<int>(data.size()));
    layersec::benchrun::gcm_set_tag(dec, tag, 16);
    return EVP_DecryptFinal_ex(dec, data.data() + outl, &outl) == 1;
  }
};

void bm_baseline(benchmark::State& state, secoc::PduProfile profile, Op op) {
  const auto pl = payload(static_cast<std::size_t>(state.range(0)));
  const auto key = secoc::test_key(profile.algorithm, 1);
  const int computations = op == Op::kProtectVerify ? 2 : 1;
  std::array<std::uint8_t, 32> tag{};
  if (secoc::is_aead(profile.algorithm)) {
    BareGcm gcm(key);
    std::array<std::uint8_t, 12> iv{0x01, 0x00, 0x00, 0x07};
    std::array<std::uint8_t, 10> aad{0x01, 0x00};  // DataId || FV
    std::vector<std::uint8_t> data = pl;
    for (auto _ : state) {
      gcm.seal(iv.data(), aad, data, tag.data());
      if (computations == 2 && !gcm.open(iv.data(), aad, data, tag.data())) {
        state.SkipWithError("open failed");
        break;
      }
      benchmark::DoNotOptimize(tag.data());
    }
  } else {
    layersec::benchrun::BareMac mac(profile.algorithm, key);
    const auto dta = layersec::benchrun::bare_dta(profile, pl);
    for (auto _ : state) {
      for (int k = 0; k < computations; ++k) mac.run(dta, tag.data());
      benchmark::DoNotOptimize(tag.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

const bool kRegistered = [] {
  for (const auto& np : profiles()) {
    for (Op op : {Op::kProtect, Op::kVerify, Op::kProtectVerify}) {
      // Google Benchmark appends "/<bytes>" from Arg().
      const std::string stem = std::string("secoc/") + np.name + "/" + op_name(op) + "/";
      auto* ours = benchmark::RegisterBenchmark((stem + "ours").c_str(), bm_ours, np.profile, op);
      auto* base =
          benchmark::RegisterBenchmark((stem + "baseline").c_str(), bm_baseline, np.profile, op);
      for (std::int64_t bytes : kSizes) {
        ours->Arg(bytes);
        base->Arg(bytes);
      }
    }
  }
  return true;
}();

}  // namespace
