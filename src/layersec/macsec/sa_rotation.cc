#include "layersec/macsec/sa_rotation.h"

#include <algorithm>

#include "layersec/crypto/kdf.h"

namespace layersec::macsec {
namespace {

[[noreturn]] void refuse(const std::string& pointer, const std::string& what) {
  throw LinkConfigError((pointer.empty() ? std::string("/") : pointer) + ": " + what);
}

// The settings a running SecY cannot change (they shape every frame or the
// SAK size); the JSON member named for the message.
void check_fixed(const SecYConfig& a, const SecYConfig& b, const std::optional<net::MacAddress>& mac_a,
                 const std::optional<net::MacAddress>& mac_b, Sci sci_a, Sci sci_b) {
  const char* what = nullptr;
  if (a.suite != b.suite) what = "cipher_suite";
  else if (sci_a != sci_b) what = "sci";
  else if (mac_a != mac_b) what = "mac";
  else if (a.confidentiality != b.confidentiality) what = "confidentiality";
  else if (a.confidentiality_offset != b.confidentiality_offset) what = "confidentiality_offset";
  else if (a.include_sci != b.include_sci) what = "include_sci";
  else if (a.use_es != b.use_es) what = "use_es";
  else if (a.vlan_mode != b.vlan_mode) what = "vlan_mode";
  else if (a.clear_tags_in_icv != b.clear_tags_in_icv) what = "clear_tags_in_icv";
  else if (a.max_frame_size != b.max_frame_size) what = "max_frame_size";
  if (what != nullptr) refuse(std::string("/") + what, "cannot change while the link runs (restart it)");
}

// With a PnStore, a new SA's key needs a PN record unless the SA says
// "new_key" (checked before anything changes, so a refusal is clean).
void check_pn_record(const SecY& secy, PnDirection direction, Sci sci, const SaConfig& sa,
                     const std::string& state_file) {
  if (!secy.has_pn_store()) return;
  auto record = secy.pn_record(direction, sci, sa.keys());
  if (!record) refuse(sa.pointer + "/key_file", "the PN state store failed: " + std::string(to_string(record.error())));
  if (!*record && !sa.new_key) {
    refuse(sa.pointer + "/key_file",
           "no PN state for key id " + key_id(sa.sak) + (state_file.empty() ? "" : " in " + state_file) +
               ": a key used before would repeat PNs; if it has never been used, mark the SA \"new_key\": true");
  }
  if (*record && **record >= max_pn(secy.config().suite)) {
    refuse(sa.pointer + "/key_file", "the PN state says every PN of key id " + key_id(sa.sak) + " is used");
  }
}

}  // namespace

std::string_view to_string(RotationAction::Kind k) {
  using K = RotationAction::Kind;
  switch (k) {
    case K::kRxScAdded: return "rx_sc_added";
    case K::kRxScRemoved: return "rx_sc_removed";
    case K::kRxSaInstalled: return "rx_sa_installed";
    case K::kRxSaLowestPnRaised: return "rx_sa_lowest_pn_raised";
    case K::kRxSaRetireScheduled: return "rx_sa_retire_scheduled";
    case K::kRxSaRetired: return "rx_sa_retired";
    case K::kRxSaRetiredTimeout: return "rx_sa_retired_timeout";
    case K::kTxSaInstalled: return "tx_sa_installed";
    case K::kTxSaRemoved: return "tx_sa_removed";
    case K::kEncodingSaSwitched: return "encoding_sa_switched";
    case K::kSettingChanged: return "setting_changed";
  }
  return "unknown";
}

SaRotation::Fingerprint SaRotation::fingerprint(const SaConfig& sa) {
  Fingerprint fp{};
  const std::uint8_t ssci[4] = {static_cast<std::uint8_t>(sa.ssci >> 24), static_cast<std::uint8_t>(sa.ssci >> 16),
                                static_cast<std::uint8_t>(sa.ssci >> 8), static_cast<std::uint8_t>(sa.ssci)};
  const ByteSpan parts[3] = {sa.sak.span(), ByteSpan(ssci, 4), ByteSpan(sa.salt.data(), sa.salt.size())};
  if (!crypto::sha256(parts, MutableByteSpan(fp.data(), fp.size())).ok()) {
    throw LinkConfigError(sa.pointer + ": SHA-256 failed");
  }
  return fp;
}

SaRotation::SaRotation(const LinkConfig& current, Sci sci)
    : settings_(current.secy),
      pn_state_file_(current.pn_state_file),
      pn_reserve_block_(current.pn_reserve_block),
      lower_link_(current.lower_link),
      mac_(current.mac),
      sci_(sci),
      retire_delay_(Duration::milliseconds(current.rx_retire_delay_ms)),
      retire_timeout_(Duration::milliseconds(current.rx_retire_timeout_ms)) {
  for (const auto& sa : current.tx_sas) {
    tx_keys_[sa.an] = fingerprint(sa);
    tx_used_.insert(*tx_keys_[sa.an]);
  }
  for (const auto& sc : current.rx_scs) {
    for (const auto& sa : sc.sas) rx_keys_.push_back({RxKey{sc.sci.value, sa.an}, fingerprint(sa)});
  }
}

std::vector<RotationAction> SaRotation::apply(SecY& secy, const LinkConfig& next, Sci next_sci, TimePoint now) {
  using K = RotationAction::Kind;
  // ---- plan and check: nothing below throws after the first change ----
  check_fixed(settings_, next.secy, mac_, next.mac, sci_, next_sci);
  if (next.pn_state_file != pn_state_file_) refuse("/pn_state_file", "cannot change while the link runs (restart it)");
  if (next.pn_reserve_block != pn_reserve_block_)
    refuse("/pn_reserve_block", "cannot change while the link runs (restart it)");
  if (next.lower_link != lower_link_) refuse("/lower_link", "cannot change while the link runs (restart it)");

  const std::uint8_t current_encoding = secy.encoding_an();
  const TxSaStatus encoding = secy.tx_sa_status(current_encoding);
  struct TxInstall {
    const SaConfig* sa;
    Fingerprint fp;
  };
  std::vector<TxInstall> tx_install;
  std::array<bool, 4> tx_listed{};
  for (const auto& sa : next.tx_sas) {
    tx_listed[sa.an] = true;
    const Fingerprint fp = fingerprint(sa);
    if (tx_keys_[sa.an] && *tx_keys_[sa.an] == fp && secy.tx_sa_status(sa.an).installed) continue;  // unchanged
    if (sa.an == current_encoding && encoding.installed && !encoding.exhausted) {
      refuse(sa.pointer + "/key_file",
             "the encoding SA (AN " + std::to_string(sa.an) +
                 ") cannot be rekeyed in place; install the new key at another AN and switch tx.encoding_an");
    }
    if (tx_used_.count(fp) != 0) {
      refuse(sa.pointer + "/key_file",
             "this key was already used for transmission by this link; installing it again would repeat PNs "
             "(nonces) under it");
    }
    for (const auto& other : tx_install) {
      if (other.fp == fp) refuse(sa.pointer + "/key_file", "the same key is listed for two transmit SAs");
    }
    check_pn_record(secy, PnDirection::kTransmit, sci_, sa, pn_state_file_);
    tx_install.push_back({&sa, fp});
  }

  struct RxInstall {
    Sci sci;
    const SaConfig* sa;
    Fingerprint fp;
  };
  std::vector<Sci> rx_add_sc;
  std::vector<RxInstall> rx_install;
  std::vector<std::pair<Sci, const SaConfig*>> rx_raise;
  const std::vector<Sci> running_scs = secy.rx_scis();
  for (const auto& sc : next.rx_scs) {
    const bool exists = std::find(running_scs.begin(), running_scs.end(), sc.sci) != running_scs.end();
    if (!exists) rx_add_sc.push_back(sc.sci);
    for (const auto& sa : sc.sas) {
      const Fingerprint fp = fingerprint(sa);
      auto it = std::find_if(rx_keys_.begin(), rx_keys_.end(),
                             [&](const auto& e) { return e.first == RxKey{sc.sci.value, sa.an}; });
      const RxSaStatus st = secy.rx_sa_status(sc.sci, sa.an);
      if (exists && st.installed && it != rx_keys_.end() && it->second == fp) {
        if (sa.pn > st.lowest_pn) rx_raise.emplace_back(sc.sci, &sa);
        continue;
      }
      check_pn_record(secy, PnDirection::kReceive, sc.sci, sa, pn_state_file_);
      rx_install.push_back({sc.sci, &sa, fp});
    }
  }
  std::vector<Sci> rx_remove_sc;
  for (Sci s : running_scs) {
    const bool listed = std::any_of(next.rx_scs.begin(), next.rx_scs.end(),
                                    [&](const RxScConfig& c) { return c.sci == s; });
    if (!listed) rx_remove_sc.push_back(s);
  }

  // ---- apply ----
  std::vector<RotationAction> actions;
  auto must = [](Status<SaError> st, const std::string& pointer, const char* what) {
    // Only a failing OpenSSL context build can get here (everything else was
    // checked above); the message says how far the update got.
    if (!st) refuse(pointer, std::string(what) + ": " + std::string(to_string(st.error())) + " (update partly applied)");
  };
  // 1. receive side first, so the new SAs are ready before anyone sends on them.
  for (Sci s : rx_add_sc) {
    must(secy.add_rx_sc(s), "/rx", "cannot add receive SC");
    actions.push_back({K::kRxScAdded, s, 0, 0, {}});
  }
  for (const auto& in : rx_install) {
    must(secy.install_rx_sa(in.sci, in.sa->an, in.sa->keys(), in.sa->pn,
                            in.sa->new_key ? PnStart::kNewKey : PnStart::kResume),
         in.sa->pointer, "cannot install receive SA");
    auto it = std::find_if(rx_keys_.begin(), rx_keys_.end(),
                           [&](const auto& e) { return e.first == RxKey{in.sci.value, in.sa->an}; });
    if (it != rx_keys_.end()) {
      it->second = in.fp;
    } else {
      rx_keys_.push_back({RxKey{in.sci.value, in.sa->an}, in.fp});
    }
    // A re-installed SA is no longer waiting for retirement.
    std::erase_if(pending_, [&](const Pending& p) { return p.sci == in.sci && p.an == in.sa->an; });
    actions.push_back({K::kRxSaInstalled, in.sci, in.sa->an, in.sa->pn, key_id(in.sa->sak)});
  }
  for (const auto& [s, sa] : rx_raise) {
    must(secy.raise_rx_sa_lowest_pn(s, sa->an, sa->pn), sa->pointer, "cannot raise the lowest acceptable PN");
    actions.push_back({K::kRxSaLowestPnRaised, s, sa->an, sa->pn, {}});
  }
  for (const auto& sc : next.rx_scs) {
    for (const auto& sa : sc.sas) {
      // Listed again: cancel a pending retirement.
      std::erase_if(pending_, [&](const Pending& p) { return p.sci == sc.sci && p.an == sa.an; });
    }
  }
  // 2. transmit SAs.
  for (const auto& in : tx_install) {
    must(secy.install_tx_sa(in.sa->an, in.sa->keys(), in.sa->pn,
                            in.sa->new_key ? PnStart::kNewKey : PnStart::kResume),
         in.sa->pointer, "cannot install transmit SA");
    tx_keys_[in.sa->an] = in.fp;
    tx_used_.insert(in.fp);
    actions.push_back({K::kTxSaInstalled, sci_, in.sa->an, in.sa->pn, key_id(in.sa->sak)});
  }
  // 3. the switch: the next protect() uses the new SA.
  if (next.encoding_an != current_encoding || !encoding.installed) {
    must(secy.set_encoding_sa(next.encoding_an), "/tx/encoding_an", "cannot switch the encoding SA");
    actions.push_back({K::kEncodingSaSwitched, sci_, next.encoding_an, secy.tx_sa_status(next.encoding_an).next_pn,
                       "from AN " + std::to_string(current_encoding)});
  }
  // 4. transmit SAs no longer listed.
  for (std::uint8_t an = 0; an < 4; ++an) {
    if (tx_listed[an] || !secy.tx_sa_status(an).installed || an == secy.encoding_an()) continue;
    must(secy.remove_tx_sa(an), "/tx/sas", "cannot remove transmit SA");
    tx_keys_[an].reset();
    actions.push_back({K::kTxSaRemoved, sci_, an, 0, {}});
  }
  // 5. receive SCs no longer listed go at once; receive SAs are retired later.
  for (Sci s : rx_remove_sc) {
    must(secy.remove_rx_sc(s), "/rx", "cannot remove receive SC");
    std::erase_if(rx_keys_, [&](const auto& e) { return e.first.sci == s.value; });
    std::erase_if(pending_, [&](const Pending& p) { return p.sci == s; });
    actions.push_back({K::kRxScRemoved, s, 0, 0, {}});
  }
  for (const auto& sc : next.rx_scs) {
    for (std::uint8_t an = 0; an < 4; ++an) {
      const bool listed =
          std::any_of(sc.sas.begin(), sc.sas.end(), [&](const SaConfig& sa) { return sa.an == an; });
      if (listed || !secy.rx_sa_status(sc.sci, an).installed) continue;
      const bool already = std::any_of(pending_.begin(), pending_.end(),
                                       [&](const Pending& p) { return p.sci == sc.sci && p.an == an; });
      if (already) continue;
      Pending p{sc.sci, an, now, {}, std::nullopt};
      for (std::uint8_t o = 0; o < 4; ++o) p.verified_at_request[o] = secy.rx_sa_status(sc.sci, o).verified_frames;
      pending_.push_back(p);
      actions.push_back({K::kRxSaRetireScheduled, sc.sci, an, 0, {}});
    }
  }
  // 6. run-time settings.
  if (next.secy.validate_frames != secy.config().validate_frames) {
    secy.set_validate_frames(next.secy.validate_frames);
    actions.push_back({K::kSettingChanged, {}, 0, 0,
                       "validate_frames " + std::string(to_string(next.secy.validate_frames))});
  }
  if (next.secy.replay_protect != secy.config().replay_protect ||
      next.secy.replay_window != secy.config().replay_window) {
    secy.set_replay_protect(next.secy.replay_protect, next.secy.replay_window);
    actions.push_back({K::kSettingChanged, {}, 0, 0,
                       "replay_protect " + std::string(next.secy.replay_protect ? "on" : "off") + " window " +
                           std::to_string(next.secy.replay_window)});
  }
  settings_ = next.secy;
  retire_delay_ = Duration::milliseconds(next.rx_retire_delay_ms);
  retire_timeout_ = Duration::milliseconds(next.rx_retire_timeout_ms);
  return actions;
}

std::vector<RotationAction> SaRotation::poll(SecY& secy, TimePoint now) {
  using K = RotationAction::Kind;
  std::vector<RotationAction> actions;
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = *it;
    if (!secy.rx_sa_status(p.sci, p.an).installed) {  // removed some other way
      it = pending_.erase(it);
      continue;
    }
    if (!p.newer_seen) {
      for (std::uint8_t o = 0; o < 4; ++o) {
        if (o == p.an) continue;
        const RxSaStatus st = secy.rx_sa_status(p.sci, o);
        if (st.installed && st.verified_frames > p.verified_at_request[o]) p.newer_seen = now;
      }
    }
    std::optional<K> why;
    if (p.newer_seen && now - *p.newer_seen >= retire_delay_) {
      why = K::kRxSaRetired;
    } else if (retire_timeout_ > Duration{} && now - p.requested >= retire_timeout_) {
      why = K::kRxSaRetiredTimeout;
    }
    if (!why) {
      ++it;
      continue;
    }
    secy.remove_rx_sa(p.sci, p.an).ignore();  // installed was checked above
    std::erase_if(rx_keys_, [&](const auto& e) { return e.first == RxKey{p.sci.value, p.an}; });
    actions.push_back({*why, p.sci, p.an, 0, {}});
    it = pending_.erase(it);
  }
  return actions;
}

}  // namespace layersec::macsec
