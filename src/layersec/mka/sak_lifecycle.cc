#include "layersec/mka/sak_lifecycle.h"

#include <algorithm>

#include "layersec/mka/keys.h"

namespace layersec::mka {

std::string_view to_string(SakState s) {
  switch (s) {
    case SakState::kNoSak: return "no_sak";
    case SakState::kReceiving: return "receiving";
    case SakState::kTransmitting: return "transmitting";
    case SakState::kInUse: return "in_use";
  }
  return "?";
}

SakLifecycle::SakLifecycle(SecYDriver& secy, CipherSuite suite, std::uint64_t own_sci)
    : secy_(secy), suite_(suite), own_sci_(own_sci) {}

const InstalledSak* SakLifecycle::transmitting() const {
  if (latest_ && latest_->tx) return &*latest_;
  if (old_ && old_->tx) return &*old_;
  return nullptr;
}

bool SakLifecycle::holds(const KeyIdentifier& ki) const {
  return (latest_ && latest_->ki == ki) || (old_ && old_->ki == ki);
}

SaMaterial SakLifecycle::material(const InstalledSak& k, std::uint32_t ssci) const {
  SaMaterial m;
  m.sak = &k.sak;
  m.suite = suite_;
  m.ki = k.ki;
  m.an = k.an;
  m.offset = k.offset;
  if (is_xpn(suite_)) {
    m.ssci = ssci;
    m.salt = xpn_salt(k.ki);
  }
  return m;
}

// XPN: the peer's position among the SAK's members; 0 (no receive SA) for
// an SCI that is not one of them: it cannot hold this SAK consistently.
std::uint32_t SakLifecycle::peer_ssci(const InstalledSak& k, std::uint64_t sci) const {
  return ssci_of(sci, k.member_scis);
}

void SakLifecycle::record(Output& out, SaActionType type, std::uint64_t sci, const InstalledSak* k,
                          std::uint64_t pn, const Status<SecYError>* status) {
  SaAction a;
  a.type = type;
  a.sci = sci;
  if (k != nullptr) {
    a.an = k->an;
    a.ki = k->ki;
  }
  a.pn = pn;
  if (status != nullptr && !status->ok()) {
    a.ok = false;
    a.error = status->error();
  }
  out.sa_actions.push_back(a);
}

void SakLifecycle::secy_error(Output& out, SecYError error, std::uint8_t an, const KeyIdentifier& ki,
                              std::uint64_t sci, TimePoint now) {
  Event e = make_event(EventType::kSecYError, now, sci);
  e.an = an;
  e.ki = ki;
  e.error = error;
  out.events.push_back(std::move(e));
}

void SakLifecycle::sak_event(Output& out, EventType type, const InstalledSak& k, TimePoint now) {
  Event e = make_event(type, now, own_sci_);
  e.ki = k.ki;
  e.an = k.an;
  e.sak_fingerprint = k.fingerprint;
  out.events.push_back(std::move(e));
}

bool SakLifecycle::install_rx(InstalledSak& k, std::uint64_t sci, TimePoint now, Output& out) {
  if (is_xpn(suite_) && peer_ssci(k, sci) == 0) return true;  // not a holder of this SAK
  std::uint64_t lowest = 1;
  auto it = std::find_if(resume_.begin(), resume_.end(),
                         [&](const ResumePoint& r) { return r.sci == sci && r.ki == k.ki; });
  if (it != resume_.end()) lowest = std::max<std::uint64_t>(1, it->next_pn);
  const SaMaterial m = material(k, peer_ssci(k, sci));
  const Status<SecYError> st = secy_.install_rx_sa(sci, m, lowest);
  record(out, SaActionType::kInstallRxSa, sci, &k, lowest, &st);
  if (!st.ok()) {
    secy_error(out, st.error(), k.an, k.ki, sci, now);
    return false;
  }
  if (it != resume_.end()) resume_.erase(it);
  k.rx_scis.push_back(sci);
  return true;
}

void SakLifecycle::retire_key(InstalledSak& k, bool remove_tx, TimePoint now, Output& out) {
  for (const std::uint64_t sci : k.rx_scis) {
    secy_.retire_rx_sa(sci, k.an);
    record(out, SaActionType::kRetireRxSa, sci, &k, 0, nullptr);
  }
  k.rx_scis.clear();
  if (remove_tx) {
    secy_.retire_tx_sa(k.an);
    record(out, SaActionType::kRetireTxSa, own_sci_, &k, 0, nullptr);
  }
  std::erase_if(resume_, [&](const ResumePoint& r) { return r.ki == k.ki; });
  sak_event(out, EventType::kSakRetired, k, now);
}

bool SakLifecycle::receive(SecretBytes sak, const KeyIdentifier& ki, std::uint8_t an, ConfidentialityOffset offset,
                           std::span<const std::uint64_t> peer_scis, std::span<const std::uint64_t> member_scis,
                           TimePoint now, Output& out) {
  if (state_ == SakState::kTransmitting || an > 3 || sak.size() != sak_size(suite_)) return false;
  if (is_xpn(suite_) && !member_scis.empty() && ssci_of(own_sci_, member_scis) == 0) return false;
  if (old_ && old_->an == an) return false;  // the AN of the SAK in use: never overwritten
  if (state_ == SakState::kReceiving && latest_) {
    // ABANDON (Figure 12-2): nobody transmits with the latest SAK yet.
    retire_key(*latest_, true, now, out);
    latest_.reset();
    state_ = old_ ? SakState::kInUse : SakState::kNoSak;
  }
  InstalledSak k;
  k.fingerprint = fingerprint(sak);
  k.sak = std::move(sak);
  k.ki = ki;
  k.an = an;
  k.offset = offset;
  k.installed_at = now;
  if (!member_scis.empty()) {
    k.member_scis.assign(member_scis.begin(), member_scis.end());
  } else {
    k.member_scis.reserve(peer_scis.size() + 1);
    k.member_scis.push_back(own_sci_);
    k.member_scis.insert(k.member_scis.end(), peer_scis.begin(), peer_scis.end());
  }

  // Receive SAs first (make before break), then our transmit SA, unused.
  bool ok = true;
  for (const std::uint64_t sci : peer_scis) {
    if (!install_rx(k, sci, now, out)) {
      ok = false;
      break;
    }
  }
  if (ok) {
    const SaMaterial m = material(k, ssci_of(own_sci_, k.member_scis));
    const Status<SecYError> st = secy_.install_tx_sa(m, 1);
    record(out, SaActionType::kInstallTxSa, own_sci_, &k, 1, &st);
    if (!st.ok()) {
      secy_error(out, st.error(), an, ki, own_sci_, now);
      ok = false;
    }
  }
  if (!ok) {
    for (const std::uint64_t sci : k.rx_scis) {
      secy_.retire_rx_sa(sci, an);
      record(out, SaActionType::kRetireRxSa, sci, &k, 0, nullptr);
    }
    return false;
  }
  k.rx = true;
  latest_ = std::move(k);
  state_ = SakState::kReceiving;
  receiving_since_ = now;
  sak_event(out, EventType::kSakInstalled, *latest_, now);
  return true;
}

bool SakLifecycle::transmit(TimePoint now, Output& out) {
  if (state_ != SakState::kReceiving || !latest_) return false;
  const Status<SecYError> st = secy_.enable_tx_sa(latest_->an);
  record(out, SaActionType::kEnableTx, own_sci_, &*latest_, secy_.tx_next_pn(latest_->an), &st);
  if (!st.ok()) {
    secy_error(out, st.error(), latest_->an, latest_->ki, own_sci_, now);
    return false;
  }
  latest_->tx = true;
  if (old_) old_->tx = false;
  state_ = SakState::kTransmitting;
  transmitting_since_ = now;
  sak_event(out, EventType::kSakTransmitting, *latest_, now);
  return true;
}

void SakLifecycle::retire(TimePoint now, Output& out) {
  if (state_ != SakState::kTransmitting || !latest_) return;
  if (old_) retire_key(*old_, true, now, out);
  old_ = std::move(latest_);
  latest_.reset();
  state_ = SakState::kInUse;
}

void SakLifecycle::add_peer(std::uint64_t sci, TimePoint now, Output& out) {
  for (auto* k : {latest_ ? &*latest_ : nullptr, old_ ? &*old_ : nullptr}) {
    if (k == nullptr || !k->rx) continue;
    if (std::find(k->rx_scis.begin(), k->rx_scis.end(), sci) != k->rx_scis.end()) continue;
    (void)install_rx(*k, sci, now, out);  // a failure is reported as an event; the peer's frames are then dropped
  }
}

void SakLifecycle::remove_peer(std::uint64_t sci, Output& out) {
  for (auto* k : {latest_ ? &*latest_ : nullptr, old_ ? &*old_ : nullptr}) {
    if (k == nullptr) continue;
    auto it = std::find(k->rx_scis.begin(), k->rx_scis.end(), sci);
    if (it == k->rx_scis.end()) continue;
    const std::uint64_t next = secy_.rx_next_pn(sci, k->an);
    if (next > 1) resume_.push_back(ResumePoint{sci, k->ki, next});
    k->rx_scis.erase(it);
  }
  secy_.remove_rx_sc(sci);
  record(out, SaActionType::kRemoveRxSc, sci, nullptr, 0, nullptr);
}

void SakLifecycle::clear(TimePoint now, Output& out) {
  if (latest_) retire_key(*latest_, true, now, out);
  if (old_) retire_key(*old_, true, now, out);
  latest_.reset();
  old_.reset();
  resume_.clear();
  state_ = SakState::kNoSak;
}

}  // namespace layersec::mka
