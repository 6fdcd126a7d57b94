// The PN state of a SecY's SAs shared by the worker threads of `layersec
// macsec up --workers N` (secy.h SharedPnState): each worker has its own
// SecY (its own cipher contexts and counters) built from the same
// configuration, and all of them take transmit PNs from and check received
// PNs against this one object.
//
//   transmit SA  one counter per SA behind a mutex: every PN is handed out
//                once, in increasing order (so each thread's PNs increase
//                too), persisted (a block at a time, as SecY::protect does)
//                before it is returned; the last PN exhausts the SA and
//                new_sa_needed() follows the SecY's rule.
//   receive SA   one ReplayWindow (with its duplicate bitmap) per SA behind
//                a mutex: the check before the ICV is a hint, the re-check
//                and the update after the ICV verified are one step under
//                the lock, so a frame replayed to several threads at once
//                is accepted exactly once and the lowest acceptable PN only
//                rises. Frames the workers finish out of wire order are
//                accepted while within replayWindow (docs/macsec_link.md,
//                "Workers").
//
// The PnStore (not thread-safe itself) is only used under one store mutex,
// taken inside an SA's mutex (lock order: SA, then store). tick() and
// persist() do what SecY::tick_pn_state / persist_pn_state do for a single
// SecY; with this object attached those are no-ops. The set of SAs is fixed
// when the object is built (no SA changes at run time with workers).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "layersec/macsec/secy.h"

namespace layersec::macsec {

class WorkerPnState final : public SharedPnState {
 public:
  // Takes over the PN state of every SA installed in `primary` (built with
  // `store` attached, or without a store when `store` is nullptr): transmit
  // next PN and exhaustion, receive next / lowest acceptable PN, the
  // persisted highest PNs and record keys. `store` is not owned and must
  // outlive this object.
  WorkerPnState(const SecY& primary, PnStore* store, std::uint64_t reserve_block);
  ~WorkerPnState() override;
  WorkerPnState(const WorkerPnState&) = delete;
  WorkerPnState& operator=(const WorkerPnState&) = delete;

  Result<std::uint64_t, ProtectError> take_tx_pn(std::uint8_t an) override;
  std::optional<std::uint64_t> recover_rx_pn(Sci sci, std::uint8_t an, std::uint32_t pn_field) override;
  bool rx_replayed(Sci sci, std::uint8_t an, std::uint64_t pn) override;
  Result<bool, ReceiveDrop> accept_rx_pn(Sci sci, std::uint8_t an, std::uint64_t pn) override;

  // SecY::tick_pn_state and persist_pn_state for the shared SAs (any thread;
  // persist() at exit after the workers stopped saves the exact values).
  [[nodiscard]] Status<SaError> tick();
  [[nodiscard]] Status<SaError> persist();

  // What the SecY's status calls say for the shared SAs (stats and enabled
  // are not kept here: the caller fills them from the workers' SecYs).
  [[nodiscard]] TxSaStatus tx_sa_status(std::uint8_t an) const;
  [[nodiscard]] RxSaStatus rx_sa_status(Sci sci, std::uint8_t an) const;
  // SecY::new_sa_needed with `encoding_an` the SecYs' encoding SA.
  [[nodiscard]] bool new_sa_needed(std::uint8_t encoding_an) const;
  [[nodiscard]] std::size_t saves() const;

 private:
  struct Persisted {
    bool on = false;  // a PnStore record exists for this SA
    PnKey key{};
    std::uint64_t highest = 0;
    std::uint64_t next_block = 1;
    std::uint64_t tick_exact = 0;
  };
  struct TxState {
    mutable std::mutex mu;
    bool enabled = true;
    bool exhausted = false;
    std::uint64_t next_pn = 1;
    Persisted persisted;
  };
  struct RxState {
    explicit RxState(ReplayWindow w) : window(std::move(w)) {}
    mutable std::mutex mu;
    ReplayWindow window;
    Persisted persisted;
  };
  struct RxSc {
    Sci sci;
    std::array<std::unique_ptr<RxState>, 4> sas;
  };
  RxState* find_rx(Sci sci, std::uint8_t an) const;
  // Saves a block of PNs from `pn` on (SecY::reserve_pn); false on failure.
  bool reserve(Persisted& p, std::uint8_t an, std::uint64_t pn);
  // Saves `exact` when `fn` says so, under the store mutex.
  bool save(const Persisted& p, std::uint8_t an, std::uint64_t value);
  template <typename Fn>
  bool for_each_persisted(Fn&& fn);

  std::uint64_t last_pn_ = 0;
  std::uint64_t rekey_threshold_ = 0;
  bool replay_protect_ = true;
  std::uint64_t block_ = 1;
  PnStore* store_ = nullptr;
  mutable std::mutex store_mu_;
  std::size_t saves_ = 0;  // under store_mu_
  std::array<std::unique_ptr<TxState>, 4> tx_;
  std::vector<RxSc> rx_;  // sorted by SCI, fixed after construction
};

}  // namespace layersec::macsec
