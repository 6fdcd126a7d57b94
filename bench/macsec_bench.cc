// MACsec SecY micro-benchmarks: protect and validate of one frame at 64, 512
// and 1500 octets (DA..payload, no FCS) for each Cipher Suite, beside a bare
// OpenSSL AES-GCM loop over the same buffers that reuses one context and
// sets only the IV per frame. Names: macsec/<suite>/<op>/<ours|baseline>/<bytes>.
//
// protect  ours:     SecY::protect(frame, out): SecTAG, copy of the MSDU, GCM
//                    in place, ICV, counters.
//          baseline: the same AES-GCM on the same key size: IV, AAD = DA SA
//                    SecTAG (28 octets), MSDU encrypted from `frame` into
//                    `out`, tag written after it.
// validate ours:     memcpy of the secure frame into a work buffer (validate
//                    decrypts in place, so the input is restored each time),
//                    then SecY::validate(work).
//          baseline: the same memcpy, then AES-GCM decryption in place with
//                    the same AAD and the tag check.
// Frames use confidentiality with an explicit SCI (the Linux default). The
// SecY refuses a PN it has accepted already (replay_window.h), so validate
// runs through a pool of kPool frames protected in PN order and puts in a
// fresh receive SA (outside the timed batches) each time the pool is used up.
//
// Timing: the machine these run on is shared, so wall-clock time mostly
// measures who else is running. Every case (ours and baseline alike) times
// batches of kBatch frames with the thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID) and reports CPU time per frame through Google
// Benchmark's manual time; one benchmark iteration is one batch, and the
// counter "frames_per_iteration" (= kBatch) lets readers (`layersec bench
// macsec`) turn the iteration time into time per frame.
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <time.h>

#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include "bare_gcm_tag.h"
#include "layersec/macsec/secy.h"

namespace {

using layersec::ByteSpan;
using layersec::MutableByteSpan;
namespace macsec = layersec::macsec;

constexpr std::int64_t kSizes[] = {64, 512, 1500};
constexpr int kBatch = 64;

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Runs `frame_op` kBatch times per benchmark iteration and reports the
// iteration's CPU time. frame_op returns false to abort with an error.
template <class F>
void timed_batches(benchmark::State& state, F&& frame_op) {
  for (auto _ : state) {
    const std::int64_t t0 = thread_cpu_ns();
    for (int i = 0; i < kBatch; ++i) {
      if (!frame_op()) {
        state.SkipWithError("frame operation failed");
        return;
      }
    }
    const std::int64_t t1 = thread_cpu_ns();
    state.SetIterationTime(static_cast<double>(t1 - t0) / 1e9);
  }
  state.SetBytesProcessed(state.iterations() * kBatch * state.range(0));
  // Readers divide the per-iteration time by this to get time per frame.
  state.counters["frames_per_iteration"] = kBatch;
}
constexpr std::array<std::uint8_t, 32> kSak = {
    0xE3, 0xC0, 0x8A, 0x8F, 0x06, 0xC6, 0xE3, 0xAD, 0x95, 0xA7, 0x05, 0x57, 0xB2, 0x3F, 0x75, 0x48,
    0x3C, 0xE3, 0x30, 0x21, 0xA9, 0xC7, 0x2B, 0x70, 0x25, 0x66, 0x62, 0x04, 0xC6, 0x9C, 0x0B, 0x72};
constexpr macsec::Sci kSci{0x12153524C0895E81ULL};

std::vector<std::uint8_t> frame_of(std::size_t n) {
  std::vector<std::uint8_t> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<std::uint8_t>(i * 13 + 5);
  f[12] = 0x08;
  f[13] = 0x00;
  return f;
}

macsec::SaKeys keys_for(macsec::CipherSuite s) {
  macsec::SaKeys k;
  k.sak = ByteSpan(kSak.data(), macsec::sak_size(s));
  k.ssci = 0x7A30C118;
  for (std::size_t i = 0; i < macsec::kSaltSize; ++i) k.salt[i] = static_cast<std::uint8_t>(i);
  return k;
}

macsec::SecY make_tx(macsec::CipherSuite s) {
  macsec::SecYConfig c;
  c.suite = s;
  c.sci = kSci;
  macsec::SecY y(c);
  if (!y.install_tx_sa(0, keys_for(s)).ok() || !y.set_encoding_sa(0).ok()) std::abort();
  return y;
}

macsec::SecY make_rx(macsec::CipherSuite s) {
  macsec::SecYConfig c;
  c.suite = s;
  c.sci = macsec::Sci{0x0200000000000001ULL};
  macsec::SecY y(c);
  if (!y.add_rx_sc(kSci).ok() || !y.install_rx_sa(kSci, 0, keys_for(s)).ok()) std::abort();
  return y;
}

// A bare AES-GCM context keyed once.
struct BareGcm {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  BareGcm(std::size_t key_len, int enc) {
    const EVP_CIPHER* c = key_len == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
    EVP_CipherInit_ex(ctx, c, nullptr, kSak.data(), nullptr, enc);
  }
  ~BareGcm() { EVP_CIPHER_CTX_free(ctx); }
  BareGcm(const BareGcm&) = delete;
  BareGcm& operator=(const BareGcm&) = delete;
};

void bm_protect_ours(benchmark::State& state, macsec::CipherSuite s) {
  auto tx = make_tx(s);
  const auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  std::vector<std::uint8_t> out(frame.size() + 64);
  timed_batches(state, [&] {
    auto n = tx.protect(frame, out);
    benchmark::DoNotOptimize(out.data());
    return n.ok();
  });
}

void bm_protect_bare(benchmark::State& state, macsec::CipherSuite s) {
  BareGcm g(macsec::sak_size(s), 1);
  const auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  std::vector<std::uint8_t> out(frame.size() + 64);
  std::memcpy(out.data(), frame.data(), 12);
  std::array<std::uint8_t, 16> sectag = {0x88, 0xE5, 0x2C, 0, 0, 0, 0, 1};
  std::memcpy(out.data() + 12, sectag.data(), sectag.size());
  std::array<std::uint8_t, 12> iv{};
  std::uint32_t pn = 1;
  const std::size_t msdu = frame.size() - 12;
  timed_batches(state, [&] {
    int outl = 0;
    layersec::store_be32(iv.data() + 8, pn++);
    EVP_CipherInit_ex(g.ctx, nullptr, nullptr, nullptr, iv.data(), 1);
    EVP_CipherUpdate(g.ctx, nullptr, &outl, out.data(), 28);
    EVP_CipherUpdate(g.ctx, out.data() + 28, &outl, frame.data() + 12, static_cast<int>(msdu));
    EVP_CipherFinal_ex(g.ctx, out.data() + 28 + msdu, &outl);
    layersec::benchrun::gcm_get_tag(g.ctx, out.data() + 28 + msdu, 16);
    benchmark::DoNotOptimize(out.data());
    return true;
  });
}

void bm_validate_ours(benchmark::State& state, macsec::CipherSuite s) {
  constexpr int kPool = 2 * kBatch;  // 2 batches: 192 KiB at 1500 octets
  auto tx = make_tx(s);
  const auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  std::vector<std::vector<std::uint8_t>> pool(kPool);
  for (auto& secure : pool) {
    secure.resize(frame.size() + 64);
    auto n = tx.protect(frame, secure);
    if (!n) {
      state.SkipWithError("protect failed");
      return;
    }
    secure.resize(*n);
  }
  std::optional<macsec::SecY> rx;
  rx.emplace(make_rx(s));
  int next = 0;
  std::vector<std::uint8_t> work(pool[0].size());
  for (auto _ : state) {
    if (next == kPool) {  // every PN of the pool used: a fresh receive SA, not timed
      rx.emplace(make_rx(s));
      next = 0;
    }
    const std::int64_t t0 = thread_cpu_ns();
    for (int i = 0; i < kBatch; ++i) {
      const auto& secure = pool[static_cast<std::size_t>(next++)];
      std::memcpy(work.data(), secure.data(), secure.size());
      auto r = rx->validate(work);
      if (!r || !r->verified()) {
        state.SkipWithError("frame operation failed");
        return;
      }
      benchmark::DoNotOptimize(r->frame.data());
    }
    const std::int64_t t1 = thread_cpu_ns();
    state.SetIterationTime(static_cast<double>(t1 - t0) / 1e9);
  }
  state.SetBytesProcessed(state.iterations() * kBatch * state.range(0));
  state.counters["frames_per_iteration"] = kBatch;
}

void bm_validate_bare(benchmark::State& state, macsec::CipherSuite s) {
  BareGcm enc(macsec::sak_size(s), 1);
  BareGcm dec(macsec::sak_size(s), 0);
  const auto frame = frame_of(static_cast<std::size_t>(state.range(0)));
  const std::size_t msdu = frame.size() - 12;
  std::vector<std::uint8_t> secure(28 + msdu + 16);
  std::memcpy(secure.data(), frame.data(), 12);
  const std::array<std::uint8_t, 16> sectag = {0x88, 0xE5, 0x2C, 0, 0, 0, 0, 1};
  std::memcpy(secure.data() + 12, sectag.data(), sectag.size());
  std::array<std::uint8_t, 12> iv{};
  iv[11] = 1;
  int outl = 0;
  EVP_CipherInit_ex(enc.ctx, nullptr, nullptr, nullptr, iv.data(), 1);
  EVP_CipherUpdate(enc.ctx, nullptr, &outl, secure.data(), 28);
  EVP_CipherUpdate(enc.ctx, secure.data() + 28, &outl, frame.data() + 12, static_cast<int>(msdu));
  EVP_CipherFinal_ex(enc.ctx, secure.data() + 28 + msdu, &outl);
  layersec::benchrun::gcm_get_tag(enc.ctx, secure.data() + 28 + msdu, 16);
  std::vector<std::uint8_t> work(secure.size());
  timed_batches(state, [&] {
    std::memcpy(work.data(), secure.data(), secure.size());
    EVP_CipherInit_ex(dec.ctx, nullptr, nullptr, nullptr, iv.data(), 0);
    EVP_CipherUpdate(dec.ctx, nullptr, &outl, work.data(), 28);
    EVP_CipherUpdate(dec.ctx, work.data() + 28, &outl, work.data() + 28, static_cast<int>(msdu));
    layersec::benchrun::gcm_set_tag(dec.ctx, work.data() + 28 + msdu, 16);
    const bool ok = EVP_CipherFinal_ex(dec.ctx, work.data() + 28 + msdu, &outl) == 1;
    benchmark::DoNotOptimize(work.data());
    return ok;
  });
}

std::string suite_slug(macsec::CipherSuite s) {
  std::string n(macsec::to_string(s));
  for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return n;  // "gcm-aes-128", "gcm-aes-xpn-256", ...
}

template <class F>
void reg(const std::string& name, F f) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), f);
  b->UseManualTime();
  for (auto s : kSizes) b->Arg(s);
}

const int registered = [] {
  for (auto s : {macsec::CipherSuite::kGcmAes128, macsec::CipherSuite::kGcmAes256,
                 macsec::CipherSuite::kGcmAesXpn128, macsec::CipherSuite::kGcmAesXpn256}) {
    const std::string base = "macsec/" + suite_slug(s);
    reg(base + "/protect/ours", [s](benchmark::State& st) { bm_protect_ours(st, s); });
    reg(base + "/protect/baseline", [s](benchmark::State& st) { bm_protect_bare(st, s); });
    reg(base + "/validate/ours", [s](benchmark::State& st) { bm_validate_ours(st, s); });
    reg(base + "/validate/baseline", [s](benchmark::State& st) { bm_validate_bare(st, s); });
  }
  return 0;
}();

}  // namespace
