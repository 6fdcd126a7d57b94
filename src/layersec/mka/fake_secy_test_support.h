// Test double of SecYDriver: records every call (with a sequence number
// shared by all doubles of one test, so calls of different participants can
// be ordered), models the SAs a SecY would hold (by SAK fingerprint, never
// the key), and carries a toy data plane: send() takes the next PN of the
// encoding SA, receive() accepts a frame only if a receive SA of the
// sender's SCI and AN holds the same SAK and the PN is not a replay.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "layersec/mka/keys.h"
#include "layersec/mka/output.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka::testing {

class FakeSecY final : public SecYDriver {
 public:
  struct Call {
    std::uint64_t seq = 0;
    SaActionType type = SaActionType::kInstallRxSa;
    std::uint64_t sci = 0;
    std::uint8_t an = 0;
    std::string fingerprint;
    KeyIdentifier ki{};
    std::uint64_t pn = 0;
    std::uint32_t ssci = 0;
  };
  struct RxSa {
    std::string fingerprint;
    KeyIdentifier ki{};
    std::uint64_t next_pn = 1;
    std::uint32_t ssci = 0;
    Salt salt{};
    ConfidentialityOffset offset = ConfidentialityOffset::kOffset0;
    CipherSuite suite = CipherSuite::kGcmAes128;
  };
  struct TxSa {
    std::string fingerprint;
    KeyIdentifier ki{};
    std::uint64_t next_pn = 1;
    std::uint32_t ssci = 0;
    Salt salt{};
    ConfidentialityOffset offset = ConfidentialityOffset::kOffset0;
  };
  // A data frame of the toy data plane.
  struct Frame {
    std::uint64_t sci = 0;
    std::uint8_t an = 0;
    std::string fingerprint;
    std::uint64_t pn = 0;
  };

  FakeSecY(std::uint64_t own_sci, std::uint64_t* sequence) : own_sci_(own_sci), seq_(sequence) {}

  Status<SecYError> install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m, std::uint64_t lowest_pn) override {
    record(SaActionType::kInstallRxSa, peer_sci, m.an, fingerprint(*m.sak), m.ki, lowest_pn, m.ssci);
    if (fail_install_rx) return fail(fail_install_rx);
    rx[{peer_sci, m.an}] = RxSa{fingerprint(*m.sak), m.ki, lowest_pn, m.ssci, m.salt, m.offset, m.suite};
    return {};
  }
  Status<SecYError> install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) override {
    record(SaActionType::kInstallTxSa, own_sci_, m.an, fingerprint(*m.sak), m.ki, next_pn, m.ssci);
    if (fail_install_tx) return fail(fail_install_tx);
    if (encoding && *encoding == m.an) {
      violations.push_back("install_tx_sa over the encoding SA");
      return Err(SecYError::kRefused);
    }
    tx[m.an] = TxSa{fingerprint(*m.sak), m.ki, next_pn, m.ssci, m.salt, m.offset};
    return {};
  }
  Status<SecYError> enable_tx_sa(std::uint8_t an) override {
    const auto it = tx.find(an);
    record(SaActionType::kEnableTx, own_sci_, an, it == tx.end() ? "" : it->second.fingerprint,
           it == tx.end() ? KeyIdentifier{} : it->second.ki, 0);
    if (fail_enable) return fail(fail_enable);
    if (it == tx.end()) return Err(SecYError::kNoSuchSa);
    encoding = an;
    return {};
  }
  void retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) override {
    record(SaActionType::kRetireRxSa, peer_sci, an, "", {}, 0);
    rx.erase({peer_sci, an});
  }
  void retire_tx_sa(std::uint8_t an) override {
    record(SaActionType::kRetireTxSa, own_sci_, an, "", {}, 0);
    if (encoding && *encoding == an) encoding.reset();
    tx.erase(an);
  }
  void remove_rx_sc(std::uint64_t peer_sci) override {
    record(SaActionType::kRemoveRxSc, peer_sci, 0, "", {}, 0);
    for (auto it = rx.begin(); it != rx.end();) {
      it = it->first.first == peer_sci ? rx.erase(it) : std::next(it);
    }
  }
  std::uint64_t tx_next_pn(std::uint8_t an) const override {
    const auto it = tx.find(an);
    return it == tx.end() ? 0 : it->second.next_pn;
  }
  std::uint64_t rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const override {
    const auto it = rx.find({peer_sci, an});
    return it == rx.end() ? 0 : it->second.next_pn;
  }

  // ---- toy data plane
  // The next frame on the encoding SA (nullopt when not transmitting).
  std::optional<Frame> send() {
    if (!encoding) return std::nullopt;
    TxSa& sa = tx.at(*encoding);
    return Frame{own_sci_, *encoding, sa.fingerprint, sa.next_pn++};
  }
  // True when a receive SA for the frame's SCI/AN holds the same SAK and
  // the PN is new.
  bool receive(const Frame& f) {
    const auto it = rx.find({f.sci, f.an});
    if (it == rx.end() || it->second.fingerprint != f.fingerprint || f.pn < it->second.next_pn) return false;
    it->second.next_pn = f.pn + 1;
    return true;
  }
  // The receive SA for (sci, an), if any.
  const RxSa* rx_sa(std::uint64_t sci, std::uint8_t an) const {
    const auto it = rx.find({sci, an});
    return it == rx.end() ? nullptr : &it->second;
  }
  const TxSa* encoding_sa() const { return encoding ? &tx.at(*encoding) : nullptr; }
  std::set<std::uint64_t> rx_scis() const {
    std::set<std::uint64_t> s;
    for (const auto& [k, v] : rx) s.insert(k.first);
    return s;
  }

  std::vector<Call> calls;
  std::map<std::pair<std::uint64_t, std::uint8_t>, RxSa> rx;
  std::map<std::uint8_t, TxSa> tx;
  std::optional<std::uint8_t> encoding;
  std::vector<std::string> violations;
  // One-shot failure injection.
  std::optional<SecYError> fail_install_rx;
  std::optional<SecYError> fail_install_tx;
  std::optional<SecYError> fail_enable;

 private:
  void record(SaActionType type, std::uint64_t sci, std::uint8_t an, std::string fp, const KeyIdentifier& ki,
              std::uint64_t pn, std::uint32_t ssci = 0) {
    calls.push_back(Call{seq_ != nullptr ? ++*seq_ : calls.size() + 1, type, sci, an, std::move(fp), ki, pn, ssci});
  }
  static Status<SecYError> fail(std::optional<SecYError>& f) {
    const SecYError e = *f;
    f.reset();
    return Err(e);
  }

  std::uint64_t own_sci_;
  std::uint64_t* seq_;
};

// A deterministic RandomSource (splitmix64), optionally starting with
// scripted octets (e.g. a captured MI).
class DeterministicRandom final : public RandomSource {
 public:
  explicit DeterministicRandom(std::uint64_t seed, std::vector<std::uint8_t> script = {})
      : state_(seed), script_(std::move(script)) {}
  bool fill(MutableByteSpan out) override {
    if (fail_next) {
      fail_next = false;
      return false;
    }
    for (auto& b : out) {
      if (pos_ < script_.size()) {
        b = script_[pos_++];
        continue;
      }
      if (have_ == 0) {
        state_ += 0x9E3779B97F4A7C15ULL;
        std::uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        word_ = z ^ (z >> 31);
        have_ = 8;
      }
      b = static_cast<std::uint8_t>(word_ >> (8 * --have_));
    }
    return true;
  }
  bool fail_next = false;

 private:
  std::uint64_t state_;
  std::vector<std::uint8_t> script_;
  std::size_t pos_ = 0;
  std::uint64_t word_ = 0;
  int have_ = 0;
};

}  // namespace layersec::mka::testing
