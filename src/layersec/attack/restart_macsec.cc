// The MACsec channel of the restart and recovery runners (restart_channel.h):
// a transmitting and a receiving macsec::SecY (confidentiality, explicit SCI,
// validateFrames Strict, replay protection with replayWindow 32) on one static
// SAK, each with its own macsec::FilePnStore (the PN state file of `layersec
// macsec up`, reserve block 65536, tick_pn_state() every simulated second),
// or no PN store at all; one frame every millisecond.
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "layersec/attack/restart_channel.h"
#include "layersec/attack/secy_counter_moved.h"
#include "layersec/base/bytes.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/pn_state_file.h"
#include "layersec/macsec/sectag.h"
#include "layersec/macsec/secy.h"

namespace layersec::attack::detail {
namespace {

using macsec::Sci;
using macsec::SecY;
using macsec::SecYStats;

constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::uint32_t kReplayWindow = 32;
constexpr std::uint64_t kReserveBlock = 65536;  // `layersec macsec up`'s default
constexpr std::uint64_t kTickEvery = 1000;      // frames: one simulated second
constexpr std::uint8_t kTxMac[6] = {0x02, 0x4C, 0x53, 0x00, 0x01, 0x01};
constexpr std::uint8_t kRxMac[6] = {0x02, 0x4C, 0x53, 0x00, 0x01, 0x02};
constexpr Sci kTxSci = Sci::from_parts(kTxMac, 1);
constexpr Sci kRxSci = Sci::from_parts(kRxMac, 1);
constexpr std::size_t kPlainSize = 14 + 8 + 40;  // Ethernet header, seq, padding

std::string pn_file_refused(macsec::PnFileError e) {
  switch (e) {
    case macsec::PnFileError::kMissing: return "pn_state_refused_missing";
    case macsec::PnFileError::kSymlink: return "pn_state_refused_symlink";
    case macsec::PnFileError::kCorrupt: return "pn_state_refused_corrupt";
    case macsec::PnFileError::kInsecure: return "pn_state_refused_insecure";
    case macsec::PnFileError::kIo: return "pn_state_refused_io";
  }
  return "pn_state_refused";
}

std::string sa_refused(macsec::SaError e) {
  switch (e) {
    case macsec::SaError::kPnStateMissing: return "sa_refused_pn_state_missing";
    case macsec::SaError::kPnStateUsedUp: return "sa_refused_pn_state_used_up";
    case macsec::SaError::kPnStore: return "sa_refused_pn_store";
    default: return "sa_refused_" + std::to_string(static_cast<int>(e));
  }
}

class MacsecChannel final : public Channel {
 public:
  MacsecChannel(MacsecSuite s, std::uint64_t seed, std::string dir)
      : suite_(s == MacsecSuite::kGcmAes128 ? macsec::CipherSuite::kGcmAes128 : macsec::CipherSuite::kGcmAesXpn128),
        dir_(std::move(dir)),
        now_(TimePoint::from_ns(kEpochNs)) {
    std::mt19937_64 rng(mix64(seed) ^ 0x4D41435345ULL);
    sak_.resize(macsec::sak_size(suite_));
    for (auto& b : sak_) b = static_cast<std::uint8_t>(rng());
    ssci_ = static_cast<macsec::Ssci>(rng()) | 1u;
    for (auto& b : salt_) b = static_cast<std::uint8_t>(rng());
    // XPN starts just below 2^32 so a run crosses the 32-bit PN boundary.
    first_pn_ = macsec::is_xpn(suite_) ? 0xFFFFFFFFULL - 64 : 1;
    info_.layer = "macsec";
    info_.configuration = macsec::is_xpn(suite_) ? "macsec-gcm-aes-xpn-128" : "macsec-gcm-aes-128";
    info_.unit = "PN";
    info_.window = kReplayWindow;
    info_.interval = Duration::milliseconds(1);
    info_.description = std::string(macsec::is_xpn(suite_) ? "GCM-AES-XPN-128" : "GCM-AES-128") +
                        ", static SAK, replayWindow=32";
    if (!dir_.empty()) {
      tx_path_ = dir_ + "/sender.pn-state";
      rx_path_ = dir_ + "/receiver.pn-state";
    }
  }

  const ChannelInfo& info() const override { return info_; }

  std::optional<std::string> start_sender(bool first) override {
    auto err = open_store(tx_path_, tx_store_, first);
    if (err) return err;
    SecY y(config(kTxSci));
    if (tx_store_) y.set_pn_store(&*tx_store_, kReserveBlock);
    const auto start = first ? macsec::PnStart::kNewKey : macsec::PnStart::kResume;
    auto st = y.install_tx_sa(0, keys(), first_pn_, start);
    if (!st.ok()) {
      tx_store_.reset();
      return sa_refused(st.error());
    }
    if (!y.set_encoding_sa(0).ok()) throw std::runtime_error("restart attack: MACsec encoding SA");
    tx_.emplace(std::move(y));
    return std::nullopt;
  }

  std::optional<std::string> start_receiver(bool first) override {
    auto err = open_store(rx_path_, rx_store_, first);
    if (err) return err;
    SecY y(config(kRxSci));
    if (rx_store_) y.set_pn_store(&*rx_store_, kReserveBlock);
    const auto start = first ? macsec::PnStart::kNewKey : macsec::PnStart::kResume;
    if (!y.add_rx_sc(kTxSci).ok()) throw std::runtime_error("restart attack: MACsec receive SC");
    auto st = y.install_rx_sa(kTxSci, 0, keys(), first_pn_, start);
    if (!st.ok()) {
      rx_store_.reset();
      return sa_refused(st.error());
    }
    rx_.emplace(std::move(y));
    return std::nullopt;
  }

  void kill_sender() override {
    tx_.reset();
    tx_store_.reset();
  }
  void kill_receiver() override {
    rx_.reset();
    rx_store_.reset();
  }
  bool sender_up() const override { return tx_.has_value(); }
  bool receiver_up() const override { return rx_.has_value(); }
  std::string sender_state_path() const override { return tx_path_; }
  std::string receiver_state_path() const override { return rx_path_; }

  std::vector<Wire> emit() override {
    now_ += info_.interval;
    std::vector<Wire> out;
    if (!tx_) return out;
    if (++frames_ % kTickEvery == 0) {
      // Upkeep as `layersec macsec up` does every second; a failed save is a refusal.
      if (!tx_->tick_pn_state().ok()) ++refusals_;
      if (rx_ && !rx_->tick_pn_state().ok()) ++refusals_;
    }
    Wire w;
    w.seq = ++seq_;
    w.sent = now_;
    std::vector<std::uint8_t> plain(kPlainSize, 0);
    std::memcpy(plain.data(), kRxMac, 6);
    std::memcpy(plain.data() + 6, kTxMac, 6);
    store_be16(plain.data() + 12, 0x88B5);  // IEEE 802 local experimental EtherType
    store_be64(plain.data() + 14, w.seq);
    w.fv = {tx_->tx_sa_status(0).next_pn, 0, 0};
    w.bytes.resize(kPlainSize + macsec::kSecTagSizeWithSci + macsec::kIcvSize);
    auto n = tx_->protect(plain, w.bytes);
    if (!n.ok()) {
      ++refusals_;
      return out;
    }
    w.bytes.resize(*n);
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
    buf_ = w.bytes;
    const SecYStats before = rx_->stats();
    auto r = rx_->validate(buf_);
    if (!r.ok()) {
      v.reason = counter_moved(before, rx_->stats());
      return v;
    }
    v.delivered = true;
    v.seq = r->frame.size() >= 22 ? load_be64(r->frame.data() + 14) : 0;
    return v;
  }

  TimePoint now() const override { return now_; }
  std::uint64_t send_refusals() const override { return refusals_; }

 private:
  [[nodiscard]] macsec::SaKeys keys() const {
    macsec::SaKeys k;
    k.sak = sak_;
    k.ssci = ssci_;
    k.salt = salt_;
    return k;
  }
  [[nodiscard]] macsec::SecYConfig config(Sci sci) const {
    macsec::SecYConfig y;
    y.sci = sci;
    y.suite = suite_;
    y.confidentiality = true;
    y.include_sci = true;
    y.validate_frames = macsec::ValidateFrames::kStrict;
    y.replay_protect = true;
    y.replay_window = kReplayWindow;
    return y;
  }
  // Opens (first: creates) the PN state file; nothing without a state dir.
  std::optional<std::string> open_store(const std::string& path, std::optional<macsec::FilePnStore>& store,
                                        bool first) {
    store.reset();
    if (path.empty()) return std::nullopt;
    auto s = first ? macsec::FilePnStore::create(path) : macsec::FilePnStore::open(path);
    if (!s.ok()) return pn_file_refused(s.error());
    store.emplace(std::move(s).value());
    return std::nullopt;
  }

  macsec::CipherSuite suite_;
  std::string dir_;
  std::string tx_path_;
  std::string rx_path_;
  ChannelInfo info_;
  std::vector<std::uint8_t> sak_;
  macsec::Ssci ssci_ = 0;
  macsec::Salt salt_{};
  std::uint64_t first_pn_ = 1;
  // Declared before the SecYs: a SecY is destroyed before its store.
  std::optional<macsec::FilePnStore> tx_store_;
  std::optional<macsec::FilePnStore> rx_store_;
  std::optional<SecY> tx_;
  std::optional<SecY> rx_;
  TimePoint now_;
  std::uint64_t seq_ = 0;
  std::uint64_t frames_ = 0;
  std::uint64_t refusals_ = 0;
  std::vector<std::uint8_t> buf_;
};

}  // namespace

std::unique_ptr<Channel> make_macsec_channel(MacsecSuite s, std::uint64_t seed, const std::string& state_dir) {
  return std::make_unique<MacsecChannel>(s, seed, state_dir);
}

}  // namespace layersec::attack::detail
