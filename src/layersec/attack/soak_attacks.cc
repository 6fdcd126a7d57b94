// The soak runner (issue 15, second round). See soak_attacks.h.
//
// Three feeds, each the real receiver with its own legitimate sender:
//   SecOC   fault_bed::FaultBed (publisher and subscriber stacks on one
//           simulated switch): per step one legitimate notification, then
//           either its replay injected from the publisher's port or the
//           next notification altered in flight at the switch (one bit of
//           its payload, FV or MAC; checksums fixed); 0.25 ms of
//           simulated time per notification.
//   MACsec  a transmitting and a receiving SecY: per step one legitimate
//           frame, then a replay of one of the last 32 frames, a bit flip
//           after the SecTAG, an unprotected frame or a frame from an SC the
//           receiver does not know.
//   SV      sv::Publisher and sv::Subscriber (4800/2, HMAC-SHA256 over the
//           frame): per step one legitimate frame, then a replay of one of
//           the last 16 frames or a bit flip in the tag.
// The feeds take turns in 50 ms slices of wall-clock time.
#include "layersec/attack/soak_attacks.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/attack/fault_bed.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/sim_attack.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"

namespace layersec::attack {
namespace {

using Clock = std::chrono::steady_clock;
using Frame = std::vector<std::uint8_t>;

constexpr auto kSlice = std::chrono::milliseconds(50);
constexpr int kAfterLoad = 10;

double rss_mib() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(in >> size >> resident)) return 0;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

struct Tally {
  std::uint64_t attacks = 0;
  std::uint64_t accepted = 0;
  std::uint64_t legit_sent = 0;
  std::uint64_t legit_ok = 0;
  std::uint64_t after_sent = 0;
  std::uint64_t after_ok = 0;
  double busy_s = 0;
};

// ---- SecOC ---------------------------------------------------------------------

class SecocFeed {
 public:
  explicit SecocFeed(std::uint64_t seed) : bed_(false, seed), before_(bed_.reasons()) {}
  void step(std::mt19937_64& rng) {
    bed_.tick(Duration::microseconds(250));
    if (rng() % 2 == 0) {
      // Replay the notification just delivered.
      const Frame& f = bed_.last_event_frame();
      if (f.empty()) return;
      bed_.inject(f);
      ++injected_;
      return;
    }
    // Alter the next one in flight: one bit of its last 18 octets, payload
    // (8), truncated FV (2) or MAC (8); checksums fixed.
    const std::uint64_t r = rng();
    bed_.send_target(
        [r](Frame& f) {
          const std::size_t at = f.size() - 1 - static_cast<std::size_t>(r % 18);
          f[at] = static_cast<std::uint8_t>(f[at] ^ (1u << ((r >> 8) % 8)));
          net::refresh_checksums(f);
        },
        Duration::microseconds(250));
  }
  void after_load() {
    bed_.sim().run_for(Duration::milliseconds(20));
    load_sent_ = bed_.legit_sent();
    load_ok_ = bed_.delivered();
    for (int i = 0; i < kAfterLoad; ++i) bed_.tick();  // 10 ms apart, as in normal operation
    bed_.sim().run_for(Duration::milliseconds(20));
  }
  void fill(Tally& t, AttackRow& row) {
    t.attacks = injected_ + bed_.altered();
    t.accepted = bed_.stray();
    t.legit_sent = load_sent_;
    t.legit_ok = load_ok_;
    t.after_sent = bed_.legit_sent() - load_sent_;
    t.after_ok = bed_.delivered() - load_ok_;
    for (const auto& [reason, n] : bed_.reasons()) {
      auto it = before_.find(reason);
      const std::uint64_t d = n - (it == before_.end() ? 0 : it->second);
      if (d > 0) row.rejected[reason] = d;
    }
  }

 private:
  fault_bed::FaultBed bed_;
  std::map<std::string, std::uint64_t> before_;
  std::uint64_t injected_ = 0;
  std::uint64_t load_sent_ = 0;
  std::uint64_t load_ok_ = 0;
};

// ---- MACsec --------------------------------------------------------------------

constexpr std::uint8_t kTxMac[6] = {0x02, 0x4C, 0x53, 0x50, 0x00, 0x01};
constexpr std::uint8_t kRogueMac[6] = {0x02, 0x4C, 0x53, 0x50, 0x00, 0xEE};

macsec::SecYConfig soak_secy(macsec::Sci sci) {
  macsec::SecYConfig y;
  y.sci = sci;
  y.suite = macsec::CipherSuite::kGcmAes128;
  y.replay_protect = true;
  y.replay_window = 8;
  return y;
}

class MacsecFeed {
 public:
  explicit MacsecFeed(std::uint64_t seed)
      : sci_(macsec::Sci::from_parts(kTxMac, 1)),
        rogue_sci_(macsec::Sci::from_parts(kRogueMac, 1)),
        tx_(soak_secy(sci_)),
        rx_(soak_secy(macsec::Sci{0x024C535000020001ULL})),
        rogue_(soak_secy(rogue_sci_)) {
    std::mt19937_64 rng(seed);
    for (auto& b : sak_) b = static_cast<std::uint8_t>(rng());
    for (auto& b : rogue_sak_) b = static_cast<std::uint8_t>(rng());
    macsec::SaKeys k;
    k.sak = ByteSpan(sak_.data(), sak_.size());
    macsec::SaKeys r;
    r.sak = ByteSpan(rogue_sak_.data(), rogue_sak_.size());
    if (!tx_.install_tx_sa(0, k).ok() || !tx_.set_encoding_sa(0).ok() || !rx_.add_rx_sc(sci_).ok() ||
        !rx_.install_rx_sa(sci_, 0, k).ok() || !rogue_.install_tx_sa(0, r).ok() || !rogue_.set_encoding_sa(0).ok()) {
      throw std::runtime_error("soak: MACsec set-up");
    }
    plain_.assign(120, 0x33);
    std::memcpy(plain_.data() + 6, kTxMac, 6);
    store_be16(plain_.data() + 12, 0x0800);
    out_.resize(plain_.size() + macsec::kSecTagSizeWithSci + macsec::kIcvSize);
    before_ = rx_.stats();
  }
  // One legitimate frame; true when delivered. With `flip`, a copy with one
  // bit flipped after the SecTAG is validated first (so it is never late).
  bool legit(std::uint64_t seq, std::mt19937_64* flip = nullptr, Tally* t = nullptr) {
    store_be64(plain_.data() + 20, seq);
    auto n = tx_.protect(plain_, out_);
    if (!n.ok()) return false;
    Frame wire(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(*n));
    if (flip != nullptr && t != nullptr) {
      Frame bad = wire;
      const std::size_t at = 28 + static_cast<std::size_t>((*flip)() % (bad.size() - 28));
      bad[at] = static_cast<std::uint8_t>(bad[at] ^ (1u << ((*flip)() % 8)));
      ++t->attacks;
      if (rx_.validate(bad).ok()) ++t->accepted;
    }
    history_.push_front(wire);
    if (history_.size() > 32) history_.pop_back();
    auto r = rx_.validate(wire);
    return r.ok() && r->frame.size() == plain_.size() &&
           std::memcmp(r->frame.data(), plain_.data(), plain_.size()) == 0;
  }
  void step(std::mt19937_64& rng, Tally& t) {
    const std::uint64_t kind = rng() % 4;
    ++t.legit_sent;
    if (kind == 1) {  // a bit flip after the SecTAG of a fresh frame
      if (legit(t.legit_sent, &rng, &t)) ++t.legit_ok;
      return;
    }
    if (legit(t.legit_sent)) ++t.legit_ok;
    Frame bad;
    if (kind == 0) {
      bad = history_[static_cast<std::size_t>(rng() % history_.size())];
    } else if (kind == 2) {
      bad = plain_;
    } else {
      auto n = rogue_.protect(plain_, out_);
      if (n.ok()) bad.assign(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(*n));
    }
    ++t.attacks;
    if (!bad.empty() && rx_.validate(bad).ok()) ++t.accepted;
  }
  void after_load(Tally& t) {
    for (int i = 0; i < kAfterLoad; ++i) {
      ++t.after_sent;
      if (legit(t.legit_sent + 1000000 + static_cast<std::uint64_t>(i))) ++t.after_ok;
    }
  }
  // The receiver's In* counters that moved, but InPktsOK (legitimate) and
  // the aggregate InPktsNoSA.
  void fill(AttackRow& row) const {
    std::vector<std::uint64_t> b;
    before_.for_each([&](std::string_view, std::uint64_t v) { b.push_back(v); });
    std::size_t i = 0;
    rx_.stats().for_each([&](std::string_view name, std::uint64_t v) {
      if (name.substr(0, 6) == "InPkts" && name != "InPktsOK" && name != "InPktsNoSA" && v > b[i])
        row.rejected[std::string(name)] = v - b[i];
      ++i;
    });
  }

 private:
  macsec::Sci sci_;
  macsec::Sci rogue_sci_;
  std::array<std::uint8_t, 16> sak_{};
  std::array<std::uint8_t, 16> rogue_sak_{};
  macsec::SecY tx_;
  macsec::SecY rx_;
  macsec::SecY rogue_;
  Frame plain_;
  Frame out_;
  std::deque<Frame> history_;
  macsec::SecYStats before_;
};

// ---- SV ------------------------------------------------------------------------

sv::KeyMaterial sv_key(const sv::SecurityConfig& sec, std::uint64_t seed) {
  sv::KeyMaterial k;
  k.key_id = 0x5100;
  const std::size_t n = sv::key_bytes_for(sec.scheme);
  k.key = SecretBytes(n);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; ++i) k.key[i] = static_cast<std::uint8_t>(rng());
  k.time_of_current_key = 1796000000;
  k.time_to_next_key_min = 60;
  return k;
}

class SvFeed {
 public:
  explicit SvFeed(std::uint64_t seed) : rng_(seed) {
    const auto sec = sv::parse_scheme("hmac-sha256");
    const auto profile = sv::find_profile("4800/2");
    if (!sec || !profile) throw std::runtime_error("soak: SV set-up");
    profile_ = *profile;
    sv::StreamConfig stream;
    stream.asdus_per_frame = profile_.asdus_per_frame;
    stream.security = *sec;
    sv::SubscriptionConfig sub;
    sub.asdus_per_frame = profile_.asdus_per_frame;
    sub.smp_cnt_wrap = profile_.smp_cnt_wrap();
    sub.sv_id = stream.sv_id;
    sub.security = *sec;
    sub.timeout = Duration::milliseconds(10);
    pub_.emplace(stream, profile_, TimePoint{}, sv_key(*sec, seed ^ 0x5FULL));
    sub_.add_stream(sub, sv_key(*sec, seed ^ 0x5FULL));
    samples_.resize(profile_.asdus_per_frame * stream.dataset.channel_count());
  }
  bool legit() {
    for (auto& s : samples_) s = sv::Sample{static_cast<std::int32_t>(rng_()), 0};
    now_ = pub_->next_deadline();
    auto f = pub_->build_next(samples_);
    if (!f) return false;
    Frame frame(f->begin(), f->end());
    history_.push_front(frame);
    if (history_.size() > 16) history_.pop_back();
    return sub_.on_frame(frame, now_).ok();
  }
  void step(std::mt19937_64& rng, Tally& t) {
    ++t.legit_sent;
    if (legit()) ++t.legit_ok;
    Frame bad = history_[static_cast<std::size_t>(rng() % history_.size())];
    if (rng() % 2 == 1) {
      bad = history_.front();
      const std::size_t at = bad.size() - 1 - static_cast<std::size_t>(rng() % 32);
      bad[at] = static_cast<std::uint8_t>(bad[at] ^ (1u << (rng() % 8)));
    }
    ++t.attacks;
    auto r = sub_.on_frame(bad, now_);
    if (r.ok()) {
      ++t.accepted;
    } else {
      ++reasons_[std::string(sv::to_string(r.error()))];
    }
  }
  void after_load(Tally& t) {
    for (int i = 0; i < kAfterLoad; ++i) {
      ++t.after_sent;
      if (legit()) ++t.after_ok;
    }
  }
  void fill(AttackRow& row) const {
    for (const auto& [r, n] : reasons_) row.rejected[r] = n;
  }

 private:
  std::mt19937_64 rng_;
  sv::Profile profile_{};
  std::optional<sv::Publisher> pub_;
  sv::Subscriber sub_;
  std::vector<sv::Sample> samples_;
  std::deque<Frame> history_;
  std::map<std::string, std::uint64_t> reasons_;
  TimePoint now_;
};

std::string fmt(const char* f, double a, double b, double c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

AttackRow make_row(const char* configuration, const Tally& t, double rss_start, double rss_max, double rss_end,
                   double seconds, const char* mix) {
  AttackRow row;
  row.layer = "soak";
  row.configuration = configuration;
  row.attack_class = "S.mixed-load";
  row.attempts = t.attacks;
  row.accepted = t.accepted;
  row.legit_delivered = t.legit_ok + t.after_ok;
  row.legit_lost = (t.legit_sent - t.legit_ok) + (t.after_sent - t.after_ok);
  const double busy = t.busy_s > 0 ? t.busy_s : 1e-9;
  row.note = std::string(mix) + "; " +
             fmt("%.0f attack + %.0f legit frames/s over %.1f s busy", static_cast<double>(t.attacks) / busy,
                 static_cast<double>(t.legit_sent) / busy, t.busy_s) +
             " of " + fmt("%.1f s; RSS start/max/end %.1f/%.1f", seconds, rss_start, rss_max) +
             fmt("/%.1f MiB; after the load %.0f/%.0f delivered at once", rss_end, static_cast<double>(t.after_ok),
                 static_cast<double>(t.after_sent));
  return row;
}

double since(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

}  // namespace

std::vector<AttackRow> run_soak(const AttackOptions& options, double seconds) {
  if (!(seconds > 0)) throw std::runtime_error("soak: the duration must be > 0 s");
  std::mt19937_64 rng(options.seed ^ 0x50A4ULL);
  SecocFeed secoc(options.seed);
  MacsecFeed macsec(options.seed);
  SvFeed sv(options.seed);
  Tally ts, tm, tv;

  const double rss_start = rss_mib();
  double rss_max = rss_start;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto next_sample = start + std::chrono::seconds(1);
  auto run_slice = [&](Tally& t, auto&& step) {
    const auto t0 = Clock::now();
    const auto end = std::min(t0 + kSlice, deadline);
    do {
      for (int i = 0; i < 16; ++i) step();
    } while (Clock::now() < end);
    t.busy_s += since(t0);
  };
  while (Clock::now() < deadline) {
    run_slice(ts, [&] { secoc.step(rng); });
    run_slice(tm, [&] { macsec.step(rng, tm); });
    run_slice(tv, [&] { sv.step(rng, tv); });
    if (Clock::now() >= next_sample) {
      rss_max = std::max(rss_max, rss_mib());
      next_sample += std::chrono::seconds(1);
    }
  }
  const double elapsed = since(start);
  secoc.after_load();
  macsec.after_load(tm);
  sv.after_load(tv);
  const double rss_end = rss_mib();
  rss_max = std::max(rss_max, rss_end);

  std::vector<AttackRow> rows;
  AttackRow reasons;
  secoc.fill(ts, reasons);
  AttackRow r0 = make_row("soak-secoc-vendor-counter", ts, rss_start, rss_max, rss_end, elapsed,
                          "per legit notification (0.25-0.5 ms simulated apart) its replay or one altered in flight (payload/FV/MAC bit)");
  r0.rejected = std::move(reasons.rejected);
  rows.push_back(std::move(r0));
  AttackRow r1 = make_row("soak-macsec-gcm-aes-128", tm, rss_start, rss_max, rss_end, elapsed,
                          "per legit frame one replay (of the last 32), bit flip, plain or unknown-SCI frame");
  macsec.fill(r1);
  rows.push_back(std::move(r1));
  AttackRow r2 = make_row("soak-sv-hmac-sha256", tv, rss_start, rss_max, rss_end, elapsed,
                          "per legit frame (4800/2) one replay (of the last 16) or a tag bit flip");
  sv.fill(r2);
  rows.push_back(std::move(r2));
  return rows;
}

}  // namespace layersec::attack
