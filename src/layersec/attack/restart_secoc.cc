// The SecOC channel of the restart and recovery runners (restart_channel.h):
// a sending and a receiving secoc::Engine (vendor profile: CMAC-AES-256,
// 64-bit MAC) on one PDU, each with its own secoc::FileStateStore (or a
// MemoryStateStore), a 10 ms PDU interval. Counter freshness: FV64 with 16
// bits sent, a sync message (new reset cycle) every second, the receiver's
// reset cycles time-bound (maxAge 1 s); timestamp freshness: the 64-bit
// timestamp FV sent in full, maxAge 1 s. Both receivers reorder-tolerant,
// W = 32.
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "layersec/attack/restart_channel.h"
#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/secured_pdu.h"
#include "layersec/secoc/simulation.h"
#include "layersec/secoc/state_store.h"

namespace layersec::attack::detail {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

TempDir::TempDir() {
  // tmpfs when there is one: the stores' code path (temp file, fsync, rename,
  // fsync of the directory) without a disk's fsync latency.
  std::error_code ec;
  const std::filesystem::path base =
      std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
  std::string tmpl = (base / "layersec-attack-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("restart attack: mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// Simulated wall-clock epoch (Unix ns), as the other runners'.
constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::uint32_t kWindow = 32;

std::string name_of(std::string_view prefix, std::string_view reason) {
  std::string s = std::string(prefix) + std::string(reason);
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

// The engine's start refusal as a counter-style name.
std::string start_refused(secoc::StartError e) {
  switch (e) {
    case secoc::StartError::kStateStore: return "start_refused_state_store";
    case secoc::StartError::kTripExhausted: return "start_refused_trip_exhausted";
    case secoc::StartError::kStateMissing: return "start_refused_state_missing";
    case secoc::StartError::kStateCorrupt: return "start_refused_state_corrupt";
  }
  return "start_refused";
}

SecretBytes seeded_key(std::uint64_t seed, std::size_t n) {
  SecretBytes k(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = static_cast<std::uint8_t>(mix64(seed * 131 + i));
  return k;
}

class SecocChannel final : public Channel {
 public:
  SecocChannel(SecocFreshness f, std::uint64_t seed, std::string dir)
      : freshness_(f), seed_(seed), dir_(std::move(dir)), now_(TimePoint::from_ns(kEpochNs)) {
    secoc::LinkOptions o;
    o.profile = secoc::PduProfile::vendor();
    if (f == SecocFreshness::kTimestamp) o.profile.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
    o.mode = secoc::FreshnessMode::kReorderTolerant;
    o.window = kWindow;
    o.verify_attempts = 2;  // a receiver that lost one sync message resumes at once
    profile_ = o.profile;
    tx_config_ = secoc::link_sender_config(o);
    rx_config_ = secoc::link_receiver_config(o);
    if (f == SecocFreshness::kTimestamp) {
      tx_config_.sync_tx.enabled = false;
      rx_config_.sync_rx.clear();
      rx_config_.rx_pdus[0].has_sync_channel = false;
      rx_config_.rx_pdus[0].max_age = Duration::seconds(1);
    }
    info_.layer = "secoc";
    info_.unit = "FV";
    info_.window = rx_config_.rx_pdus[0].window;
    info_.interval = Duration::milliseconds(10);
    if (f == SecocFreshness::kCounter) {
      info_.configuration = "secoc-vendor-counter";
      info_.sync_period = tx_config_.sync_tx.period;
      info_.description = "SecOC vendor profile, FV64 counter (16 bits sent), sync every 1 s, maxAge 1 s, W=32, 2 verify attempts";
    } else {
      info_.configuration = "secoc-vendor-timestamp";
      info_.description = "SecOC vendor profile, 64-bit timestamp FV, maxAge 1 s, W=32";
    }
    if (!dir_.empty()) {
      tx_path_ = dir_ + "/sender.secoc-state";
      rx_path_ = dir_ + "/receiver.secoc-state";
    }
    sync_buf_.resize(64);
  }

  const ChannelInfo& info() const override { return info_; }

  std::optional<std::string> start_sender(bool first) override {
    auto r = start(tx_config_, tx_path_, tx_mem_, first);
    if (!r.ok()) return start_refused(r.error());
    tx_ = std::move(r).value();
    sync_buf_.resize(tx_->sync_message_size());
    return std::nullopt;
  }
  std::optional<std::string> start_receiver(bool first) override {
    auto r = start(rx_config_, rx_path_, rx_mem_, first);
    if (!r.ok()) return start_refused(r.error());
    rx_ = std::move(r).value();
    return std::nullopt;
  }
  void kill_sender() override {
    tx_.reset();
    tx_file_.reset();
  }
  void kill_receiver() override {
    rx_.reset();
    rx_file_.reset();
  }
  bool sender_up() const override { return tx_ != nullptr; }
  bool receiver_up() const override { return rx_ != nullptr; }
  std::string sender_state_path() const override { return tx_path_; }
  std::string receiver_state_path() const override { return rx_path_; }

  std::vector<Wire> emit() override {
    now_ += info_.interval;
    std::vector<Wire> out;
    if (!tx_) return out;
    auto p = tx_->poll(now_, sync_buf_);
    if (!p.ok()) {
      ++refusals_;
    } else if (p->sync_bytes > 0) {
      Wire w;
      w.control = true;
      w.bytes.assign(sync_buf_.begin(), sync_buf_.begin() + static_cast<std::ptrdiff_t>(p->sync_bytes));
      w.fv = {tx_->trip(), tx_->reset(), 0};
      w.sent = now_;
      out.push_back(std::move(w));
    }
    Wire w;
    w.seq = ++seq_;
    w.sent = now_;
    std::uint8_t payload[8];
    store_be64(payload, w.seq);
    const secoc::FreshnessCounters c = tx_->next_tx_freshness(0);
    w.bytes.resize(profile_.secured_size(sizeof payload));
    secoc::TxInput in;
    in.now = now_;
    auto n = tx_->protect(0, ByteSpan(payload, sizeof payload), w.bytes, in);
    if (!n.ok()) {
      ++refusals_;
      return out;
    }
    w.bytes.resize(*n);
    if (freshness_ == SecocFreshness::kCounter) {
      w.fv = {c.trip, c.reset, c.msg};
    } else {
      auto v = secoc::parse_secured_pdu(profile_, w.bytes);
      w.fv = {v.ok() ? v->truncated_fv : 0, 0, 0};
    }
    out.push_back(std::move(w));
    return out;
  }

  void idle(Duration d) override { now_ += d; }

  Verdict deliver(const Wire& w) override {
    Verdict v;
    if (!rx_) {
      v.reason = "receiver_down";
      return v;
    }
    if (w.control) {
      auto r = rx_->handle_sync(0, w.bytes, now_);
      if (!r.ok()) {
        v.reason = name_of("secoc_sync_rejected_", secoc::to_string(r.error()));
      } else if (*r == secoc::SyncOutcome::kAccepted) {
        v.delivered = true;
      } else {
        v.reason = "secoc_sync_duplicate";
      }
      return v;
    }
    out_.resize(w.bytes.size());
    secoc::RxInput in;
    in.now = now_;
    auto r = rx_->verify(0, w.bytes, out_, in);
    if (!r.ok()) {
      v.reason = name_of("secoc_rejected_", secoc::to_string(r.error()));
      return v;
    }
    v.delivered = true;
    v.seq = *r >= 8 ? load_be64(out_.data()) : 0;
    return v;
  }

  void receiver_restarted() override {
    if (tx_) tx_->request_sync();
  }
  TimePoint now() const override { return now_; }
  std::uint64_t send_refusals() const override { return refusals_; }

 private:
  Result<std::unique_ptr<secoc::Engine>, secoc::StartError> start(const secoc::EngineConfig& cfg,
                                                                  const std::string& path,
                                                                  secoc::MemoryStateStore& mem, bool first) {
    secoc::StateStore* store = &mem;
    std::unique_ptr<secoc::FileStateStore>& file = &mem == &tx_mem_ ? tx_file_ : rx_file_;
    if (!path.empty()) {
      file = std::make_unique<secoc::FileStateStore>(path);
      store = file.get();
    }
    secoc::StartOptions so;
    so.first_start = first;
    so.now = now_;
    auto e = secoc::Engine::start(cfg, *store, so);
    if (!e.ok()) return e;
    secoc::Engine& eng = **e;
    if (!eng.install_key(0, 1, seeded_key(seed_, secoc::key_size(profile_.algorithm)), now_).ok() ||
        !eng.install_key(1, 1, seeded_key(seed_ + 1, 16), now_).ok()) {
      throw std::runtime_error("restart attack: SecOC key installation failed");
    }
    return e;
  }

  SecocFreshness freshness_;
  std::uint64_t seed_;
  std::string dir_;
  std::string tx_path_;
  std::string rx_path_;
  ChannelInfo info_;
  secoc::PduProfile profile_;
  secoc::EngineConfig tx_config_;
  secoc::EngineConfig rx_config_;
  secoc::MemoryStateStore tx_mem_;
  secoc::MemoryStateStore rx_mem_;
  std::unique_ptr<secoc::FileStateStore> tx_file_;
  std::unique_ptr<secoc::FileStateStore> rx_file_;
  std::unique_ptr<secoc::Engine> tx_;
  std::unique_ptr<secoc::Engine> rx_;
  TimePoint now_;
  std::uint64_t seq_ = 0;
  std::uint64_t refusals_ = 0;
  std::vector<std::uint8_t> sync_buf_;
  std::vector<std::uint8_t> out_;
};

}  // namespace

std::unique_ptr<Channel> make_secoc_channel(SecocFreshness f, std::uint64_t seed, const std::string& state_dir) {
  return std::make_unique<SecocChannel>(f, seed, state_dir);
}

}  // namespace layersec::attack::detail
