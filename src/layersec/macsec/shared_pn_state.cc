#include "layersec/macsec/shared_pn_state.h"

#include <algorithm>

namespace layersec::macsec {

WorkerPnState::WorkerPnState(const SecY& primary, PnStore* store, std::uint64_t reserve_block)
    : block_(reserve_block == 0 ? 1 : reserve_block), store_(primary.has_pn_store() ? store : nullptr) {
  const SecYConfig& c = primary.config();
  last_pn_ = max_pn(c.suite);
  rekey_threshold_ = c.pn_rekey_threshold != 0 ? c.pn_rekey_threshold : last_pn_ - last_pn_ / 4;
  replay_protect_ = c.replay_protect;
  for (std::uint8_t an = 0; an < 4; ++an) {
    const TxSaStatus st = primary.tx_sa_status(an);
    if (!st.installed) continue;
    auto t = std::make_unique<TxState>();
    t->enabled = st.enabled;
    t->exhausted = st.exhausted;
    t->next_pn = st.next_pn;
    if (store_ != nullptr) {
      t->persisted.on = true;
      t->persisted.key = st.pn_key;
      t->persisted.highest = st.pn_persisted;
      t->persisted.tick_exact = st.exhausted ? last_pn_ : st.next_pn - 1;
    }
    tx_[an] = std::move(t);
  }
  for (Sci sci : primary.rx_scis()) {  // ascending
    RxSc sc;
    sc.sci = sci;
    for (std::uint8_t an = 0; an < 4; ++an) {
      const RxSaStatus st = primary.rx_sa_status(sci, an);
      if (!st.installed) continue;
      // A fresh window at the SA's lowest acceptable PN; the workers start
      // before any frame, so nothing above it was accepted yet.
      auto r = std::make_unique<RxState>(ReplayWindow(is_xpn(c.suite), st.lowest_pn, c.replay_window));
      if (store_ != nullptr) {
        r->persisted.on = true;
        r->persisted.key = st.pn_key;
        r->persisted.highest = st.pn_persisted;
        r->persisted.tick_exact = st.next_pn - 1;
      }
      sc.sas[an] = std::move(r);
    }
    rx_.push_back(std::move(sc));
  }
}

WorkerPnState::~WorkerPnState() = default;

WorkerPnState::RxState* WorkerPnState::find_rx(Sci sci, std::uint8_t an) const {
  if (an > 3) return nullptr;
  auto it = std::lower_bound(rx_.begin(), rx_.end(), sci, [](const RxSc& sc, Sci s) { return sc.sci < s; });
  if (it == rx_.end() || it->sci != sci) return nullptr;
  return it->sas[an].get();
}

bool WorkerPnState::save(const Persisted& p, std::uint8_t an, std::uint64_t value) {
  std::lock_guard store_lock(store_mu_);
  if (!store_->save(p.key, an, value)) return false;
  ++saves_;
  return true;
}

bool WorkerPnState::reserve(Persisted& p, std::uint8_t an, std::uint64_t pn) {
  // As SecY::reserve_pn: one block from `pn` on, never past the last PN;
  // blocks double up to the configured size.
  const std::uint64_t block = std::min(p.next_block, block_);
  const std::uint64_t highest = block - 1 > last_pn_ - pn ? last_pn_ : pn + (block - 1);
  if (!save(p, an, highest)) return false;
  p.highest = highest;
  p.next_block = block > block_ / 2 ? block_ : 2 * block;
  return true;
}

Result<std::uint64_t, ProtectError> WorkerPnState::take_tx_pn(std::uint8_t an) {
  TxState* sa = an < 4 ? tx_[an].get() : nullptr;
  if (sa == nullptr) return Err(ProtectError::kNoTransmitSa);
  std::lock_guard lock(sa->mu);
  if (!sa->enabled) return Err(ProtectError::kNoTransmitSa);
  if (sa->exhausted) return Err(ProtectError::kPnExhausted);
  const std::uint64_t pn = sa->next_pn;
  // Persisted before it is handed out: no thread sends a PN above the record.
  if (sa->persisted.on && pn > sa->persisted.highest && !reserve(sa->persisted, an, pn)) {
    return Err(ProtectError::kPnNotPersisted);
  }
  if (pn >= last_pn_) {
    sa->exhausted = true;
  } else {
    sa->next_pn = pn + 1;
  }
  return pn;
}

std::optional<std::uint64_t> WorkerPnState::recover_rx_pn(Sci sci, std::uint8_t an, std::uint32_t pn_field) {
  RxState* sa = find_rx(sci, an);
  if (sa == nullptr) return std::nullopt;
  std::lock_guard lock(sa->mu);
  return sa->window.recover(pn_field);
}

bool WorkerPnState::rx_replayed(Sci sci, std::uint8_t an, std::uint64_t pn) {
  RxState* sa = find_rx(sci, an);
  if (sa == nullptr) return true;
  std::lock_guard lock(sa->mu);
  return sa->window.is_late(pn) || sa->window.seen(pn);
}

Result<bool, ReceiveDrop> WorkerPnState::accept_rx_pn(Sci sci, std::uint8_t an, std::uint64_t pn) {
  RxState* sa = find_rx(sci, an);
  if (sa == nullptr) return Err(ReceiveDrop::kNotUsingSa);
  std::lock_guard lock(sa->mu);
  // Another thread may have accepted this PN (or moved the window past it)
  // since the check before the ICV: decided here, once.
  const bool late = sa->window.is_late(pn);
  if (replay_protect_ && (late || sa->window.seen(pn))) return Err(ReceiveDrop::kLate);
  if (sa->persisted.on && pn > sa->persisted.highest && !reserve(sa->persisted, an, pn)) {
    return Err(ReceiveDrop::kPnNotPersisted);
  }
  sa->window.accept(pn);
  return late;
}

template <typename Fn>
bool WorkerPnState::for_each_persisted(Fn&& fn) {
  bool ok = true;
  for (std::uint8_t an = 0; an < 4; ++an) {
    TxState* sa = tx_[an].get();
    if (sa == nullptr || !sa->persisted.on) continue;
    std::lock_guard lock(sa->mu);
    ok = fn(sa->persisted, an, sa->exhausted ? last_pn_ : sa->next_pn - 1) && ok;
  }
  for (RxSc& sc : rx_) {
    for (std::uint8_t an = 0; an < 4; ++an) {
      RxState* sa = sc.sas[an].get();
      if (sa == nullptr || !sa->persisted.on) continue;
      std::lock_guard lock(sa->mu);
      ok = fn(sa->persisted, an, sa->window.exhausted() ? last_pn_ : sa->window.next_pn() - 1) && ok;
    }
  }
  return ok;
}

Status<SaError> WorkerPnState::tick() {
  if (store_ == nullptr) return {};
  // Under each SA's lock: `exact` covers every PN handed out or accepted so
  // far, and none is handed out or accepted while the record is lowered.
  const bool ok = for_each_persisted([&](Persisted& p, std::uint8_t an, std::uint64_t exact) {
    const std::uint64_t used = exact > p.tick_exact ? exact - p.tick_exact : 0;
    p.tick_exact = exact;
    p.next_block = std::clamp<std::uint64_t>(used, 1, block_);
    if (p.highest <= exact || p.highest - exact <= used) return true;
    if (!save(p, an, exact)) return false;
    p.highest = exact;
    return true;
  });
  if (!ok) return Err(SaError::kPnStore);
  return {};
}

Status<SaError> WorkerPnState::persist() {
  if (store_ == nullptr) return {};
  const bool ok = for_each_persisted([&](Persisted& p, std::uint8_t an, std::uint64_t exact) {
    if (exact >= p.highest) return true;
    if (!save(p, an, exact)) return false;
    p.highest = exact;
    p.next_block = 1;
    return true;
  });
  if (!ok) return Err(SaError::kPnStore);
  return {};
}

TxSaStatus WorkerPnState::tx_sa_status(std::uint8_t an) const {
  TxSaStatus s;
  const TxState* sa = an < 4 ? tx_[an].get() : nullptr;
  if (sa == nullptr) return s;
  std::lock_guard lock(sa->mu);
  s.installed = true;
  s.enabled = sa->enabled;
  s.exhausted = sa->exhausted;
  s.next_pn = sa->next_pn;
  s.pn_persisted = sa->persisted.highest;
  s.pn_key = sa->persisted.key;
  return s;
}

RxSaStatus WorkerPnState::rx_sa_status(Sci sci, std::uint8_t an) const {
  RxSaStatus s;
  const RxState* sa = find_rx(sci, an);
  if (sa == nullptr) return s;
  std::lock_guard lock(sa->mu);
  s.installed = true;
  s.enabled = true;
  s.next_pn = sa->window.next_pn();
  s.lowest_pn = sa->window.lowest_pn();
  s.pn_persisted = sa->persisted.highest;
  s.pn_key = sa->persisted.key;
  return s;
}

bool WorkerPnState::new_sa_needed(std::uint8_t encoding_an) const {
  const TxState* sa = encoding_an < 4 ? tx_[encoding_an].get() : nullptr;
  if (sa == nullptr) return true;
  std::lock_guard lock(sa->mu);
  if (!sa->enabled) return true;
  return sa->exhausted || sa->next_pn >= rekey_threshold_;
}

std::size_t WorkerPnState::saves() const {
  std::lock_guard lock(store_mu_);
  return saves_;
}

}  // namespace layersec::macsec
