#include "layersec/mka/participant.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "layersec/mka/keys.h"

namespace layersec::mka {
namespace {

MacAddress mac_of(std::uint64_t sci) {
  MacAddress m{};
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(sci >> (56 - 8 * i));
  return m;
}

// The MN next to `mi` in either peer list of `m`, if it lists it.
std::optional<std::uint32_t> listed_mn(const Mkpdu& m, const MemberId& mi) {
  for (const auto* list : {&m.live_peers, &m.potential_peers}) {
    if (!*list) continue;
    for (const auto& e : (*list)->peers) {
      if (e.mi == mi) return e.mn;
    }
  }
  return std::nullopt;
}

KeyIdentifier ki_of(const SakUseKey& k) { return KeyIdentifier{k.key_server_mi, k.kn}; }

// Whether a peer's SAK Use says it receives (transmit false) or transmits
// (transmit true) with `ki`, in either slot (wpa_supplicant reports the SAK
// in use in the old-key slot once it retired the one before).
bool uses(const SakUse& su, bool transmit, const KeyIdentifier& ki) {
  if (!su.has_keys) return false;
  const bool latest = transmit ? su.latest_tx : su.latest_rx;
  const bool old = transmit ? su.old_tx : su.old_rx;
  return (latest && ki_of(su.latest) == ki) || (old && ki_of(su.old) == ki);
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("mka participant: ") + what);
}

}  // namespace

std::string_view to_string(ParticipantState s) {
  switch (s) {
    case ParticipantState::kIdle: return "idle";
    case ParticipantState::kSearching: return "searching";
    case ParticipantState::kLive: return "live";
  }
  return "?";
}

Participant::Participant(ParticipantConfig config, SecretBytes cak, SecYDriver& secy, RandomSource& rng)
    : config_(std::move(config)),
      cak_(std::move(cak)),
      secy_(secy),
      rng_(rng),
      key_server_(KeyServerConfig{config_.cipher_suite, config_.confidentiality_offset, config_.rekey_interval,
                                  config_.pn_rekey_threshold}),
      sak_(secy, config_.cipher_suite, config_.sci) {
  require(config_.sci != 0, "sci must not be 0");
  require(!config_.ckn.empty() && config_.ckn.size() <= kMaxCknSize, "ckn must be 1..32 octets");
  require(cak_.size() == 16 || cak_.size() == 32, "cak must be 16 or 32 octets");
  require(config_.mka_version >= 1 && config_.mka_version <= 3, "mka_version must be 1..3");
  require(config_.hello_time > Duration::zero(), "hello_time must be positive");
  require(config_.bounded_hellos == 0 || config_.bounded_hello_time > Duration::zero(),
          "bounded_hello_time must be positive");
  require(config_.life_time > config_.hello_time, "life_time must exceed hello_time");
  require(config_.transmit_delay > Duration::zero() && config_.retire_time > Duration::zero(),
          "transmit_delay and retire_time must be positive");
  require(config_.retire_grace >= Duration::zero(), "retire_grace must not be negative");
  require(config_.max_peers >= 1, "max_peers must be at least 1");
  auto ick = derive_ick(cak_, config_.ckn);
  auto kek = derive_kek(cak_, config_.ckn);
  const bool derived = ick.ok();
  require(kek.ok() && derived, "ICK/KEK derivation failed");
  ick_ = std::move(*ick);
  kek_ = std::move(*kek);
  if (!rng_.fill(mi_)) throw std::runtime_error("mka participant: random source failed (no MI)");
}

// ---------------------------------------------------------------- entry points

Output Participant::start(TimePoint now) {
  Output out;
  if (state_ != ParticipantState::kIdle) return out;
  state_ = ParticipantState::kSearching;
  bounded_left_ = config_.bounded_hellos;
  immediate_left_ = config_.max_immediate_mkpdus;
  deadline_floor_ = now;
  send_mkpdu(now, out, false);
  return out;
}

Output Participant::stop(TimePoint now) {
  Output out;
  if (state_ == ParticipantState::kIdle) return out;
  for (const auto& p : peers_) {
    if (!p.live) continue;
    Event e = make_event(EventType::kPeerLost, now, p.sci, p.mi);
    e.loss = PeerLossReason::kStopped;
    out.events.push_back(std::move(e));
  }
  std::vector<std::uint64_t> scis = live_scis();
  for (const std::uint64_t sci : scis) sak_.remove_peer(sci, out);
  sak_.clear(now, out);
  peers_.clear();
  key_server_.stand_down();
  key_server_.reset_numbering();
  elected_ = {};
  held_sak_.reset();
  newest_received_.reset();
  all_tx_since_.reset();
  pn_reported_.reset();
  state_ = ParticipantState::kIdle;
  new_mi(now, out);  // the next start() is a new member
  return out;
}

Output Participant::on_timer(TimePoint now) {
  Output out;
  if (state_ == ParticipantState::kIdle) return out;
  advance(now, out);
  if (now >= next_hello_) {
    send_mkpdu(now, out, false);
  } else if (new_info_ && immediate_left_ > 0) {
    send_mkpdu(now, out, true);
  }
  update_state();
  deadline_floor_ = std::max(deadline_floor_, now);
  return out;
}

Output Participant::on_tx_pn(std::uint64_t next_pn, TimePoint now) {
  Output out;
  if (state_ == ParticipantState::kIdle) return out;
  advance(now, out);
  const InstalledSak* tx = sak_.transmitting();
  if (tx != nullptr && next_pn >= key_server_.pn_threshold() && !(pn_reported_ && *pn_reported_ == tx->ki)) {
    pn_reported_ = tx->ki;
    key_server_.on_pn(next_pn);  // ignored unless we are the key server
    new_info_ = true;            // our SAK Use now tells the key server
    step(now, out);
  }
  if (new_info_ && immediate_left_ > 0) send_mkpdu(now, out, true);
  update_state();
  return out;
}

std::optional<Output> Participant::rekey_now(TimePoint now) {
  if (state_ == ParticipantState::kIdle || !key_server_.elected()) return std::nullopt;
  Output out;
  advance(now, out);
  key_server_.request_rekey(RekeyReason::kOperator);  // ignored if advance() made us stand down
  step(now, out);
  if (new_info_ && immediate_left_ > 0) send_mkpdu(now, out, true);
  update_state();
  return out;
}

Output Participant::drop(Output out, DropReason r) {
  ++stats_.drops[static_cast<std::size_t>(r)];
  out.dropped = r;
  return out;
}

Output Participant::on_mkpdu(ByteSpan frame, TimePoint now) {
  Output out;
  ++stats_.mkpdus_received;
  if (state_ == ParticipantState::kIdle) return drop(std::move(out), DropReason::kNotStarted);
  advance(now, out);

  // ---- parse and authenticate
  auto decoded = decode_mkpdu(frame);
  if (!decoded) {
    ++stats_.malformed[static_cast<std::size_t>(decoded.error())];
    return drop(std::move(out), DropReason::kMalformed);
  }
  const Mkpdu& m = decoded->mkpdu;
  const BasicParameterSet& b = m.basic;
  if (b.ckn != config_.ckn) return drop(std::move(out), DropReason::kUnknownCkn);
  if (!verify_mkpdu_icv(*decoded, ick_)) return drop(std::move(out), DropReason::kBadIcv);

  // ---- who sent it, and is it fresh
  if (b.actor_mi == mi_) {
    if (b.sci == config_.sci) return drop(std::move(out), DropReason::kOwnMi);
    new_mi(now, out);  // §9.4.2: another member drew our MI
    return drop(std::move(out), DropReason::kMiConflict);
  }
  if (b.sci == config_.sci) return drop(std::move(out), DropReason::kOwnSci);
  if (std::find(superseded_.begin(), superseded_.end(), b.actor_mi) != superseded_.end()) {
    return drop(std::move(out), DropReason::kSupersededMi);
  }
  const Peer* known = find_peer(b.actor_mi);
  if (known != nullptr) {
    if (b.actor_mn == known->mn) return drop(std::move(out), DropReason::kReplayedMn);
    if (b.actor_mn < known->mn) return drop(std::move(out), DropReason::kStaleMn);
    if (b.sci != known->sci) return drop(std::move(out), DropReason::kPeerSciChanged);
  } else if (peers_.size() >= config_.max_peers) {
    return drop(std::move(out), DropReason::kPeerTableFull);
  }
  const std::optional<std::uint32_t> listed = listed_mn(m, mi_);
  if (listed && *listed > mn_) {
    new_mi(now, out);  // it heard our MI from someone else
    return drop(std::move(out), DropReason::kMiConflict);
  }
  const bool lists_me = listed && mn_recent(*listed, now);
  const bool will_be_live = (known != nullptr && known->live) || lists_me;

  // ---- the SAK Use set must name real keys
  if (m.sak_use && m.sak_use->has_keys) {
    const SakUse& su = *m.sak_use;
    for (const auto& [flags, key] : {std::pair{su.latest_tx || su.latest_rx, su.latest},
                                     std::pair{su.old_tx || su.old_rx, su.old}}) {
      if (!flags) continue;
      if (key.kn == 0) return drop(std::move(out), DropReason::kUnknownKeyNumber);
      // Only the key server knows which KNs exist under its MI.
      if (key_server_.elected() && key.key_server_mi == mi_ && key.kn > key_server_.last_kn()) {
        return drop(std::move(out), DropReason::kUnknownKeyNumber);
      }
    }
  }

  // ---- a Distributed SAK must come from the key server and unwrap
  std::optional<AcceptedSak> accepted;
  if (m.distributed_sak) {
    const DistributedSak& ds = *m.distributed_sak;
    if (!ds.has_key) return drop(std::move(out), DropReason::kMacsecNotAdvised);
    const Election e = elect(&b.actor_mi, &b, will_be_live);
    if (!e.any || e.self || e.mi != b.actor_mi) return drop(std::move(out), DropReason::kNotKeyServer);
    const auto suite = ds.cipher_suite ? cipher_suite_from_id(*ds.cipher_suite) : CipherSuite::kGcmAes128;
    if (!suite || *suite != config_.cipher_suite) return drop(std::move(out), DropReason::kCipherSuiteMismatch);
    if (ds.kn == 0) return drop(std::move(out), DropReason::kUnknownKeyNumber);
    const KeyIdentifier ki{b.actor_mi, ds.kn};
    const bool duplicate = sak_.holds(ki) || (held_sak_ && held_sak_->ki == ki);
    if (!duplicate) {
      if (newest_received_ && newest_received_->mi == ki.mi && ki.kn <= newest_received_->kn) {
        return drop(std::move(out), DropReason::kStaleKeyNumber);
      }
      if (const InstalledSak* tx = sak_.transmitting(); tx != nullptr && tx->an == ds.distributed_an) {
        return drop(std::move(out), DropReason::kAnInUse);
      }
      auto sak = unwrap_key(kek_, ds.wrapped_sak);
      if (!sak || sak->size() != sak_size(config_.cipher_suite)) {
        return drop(std::move(out), DropReason::kUnwrapFailed);
      }
      accepted = AcceptedSak{std::move(*sak), ki, ds.distributed_an,
                             static_cast<ConfidentialityOffset>(ds.confidentiality_offset & 0x03), {}};
      if (is_xpn(config_.cipher_suite)) {
        // The SSCIs follow the key server's member list, the same for every
        // member; without all of its SCIs we wait for the next copy.
        if (auto members = xpn_members(m)) {
          accepted->member_scis = std::move(*members);
        } else {
          ++stats_.xpn_saks_deferred;
          accepted.reset();
        }
      }
    }
  }

  // ---- act
  ++stats_.mkpdus_accepted;
  stats_.unknown_parameter_sets += m.unknown_sets.size();
  if (known == nullptr) {
    Peer p;
    p.mi = b.actor_mi;
    p.sci = b.sci;
    peers_.push_back(p);
    out.events.push_back(make_event(EventType::kPeerPotential, now, b.sci, b.actor_mi));
    new_info_ = true;
  }
  {
    Peer& p = *find_peer(b.actor_mi);
    p.mn = b.actor_mn;
    p.priority = b.key_server_priority;
    p.key_server_flag = b.key_server;
    // A potential peer stays while it sends; a live one only while it lists us.
    if (!p.live || lists_me) p.expires = now + config_.life_time;
  }
  if (lists_me && !find_peer(b.actor_mi)->live) make_live(b.actor_mi, now, out);
  if (Peer& p = *find_peer(b.actor_mi); p.live && m.sak_use) {
    p.sak_use = m.sak_use;
    p.xpn = m.xpn;
    note_peer_pns(p);
  }
  run_election(now, out);
  if (accepted) apply_sak(std::move(*accepted), now, out);
  step(now, out);
  update_state();
  if (new_info_ && immediate_left_ > 0) send_mkpdu(now, out, true);
  return out;
}

TimePoint Participant::next_deadline() const {
  if (state_ == ParticipantState::kIdle) return TimePoint::max();
  TimePoint t = next_hello_;
  auto consider = [&](TimePoint d) {
    if (d > deadline_floor_ && d < t) t = d;  // a deadline already handled is not one again
  };
  for (const auto& p : peers_) consider(p.expires);
  consider(key_server_.next_deadline());
  if (sak_.state() == SakState::kReceiving && key_server_.elected()) {
    consider(sak_.receiving_since() + config_.transmit_delay);
  }
  if (sak_.state() == SakState::kTransmitting) {
    consider(sak_.transmitting_since() + config_.retire_time);
    if (all_tx_since_) consider(*all_tx_since_ + config_.retire_grace);
  }
  return t;
}

// ---------------------------------------------------------------- observers

std::vector<PeerInfo> Participant::peers() const {
  std::vector<PeerInfo> v;
  v.reserve(peers_.size());
  for (const auto& p : peers_) v.push_back(PeerInfo{p.mi, p.mn, p.sci, p.priority, p.live, p.expires});
  return v;
}

std::size_t Participant::live_peer_count() const {
  return static_cast<std::size_t>(std::count_if(peers_.begin(), peers_.end(), [](const Peer& p) { return p.live; }));
}

std::optional<std::uint64_t> Participant::key_server_sci() const {
  if (!elected_.any) return std::nullopt;
  return elected_.sci;
}

Mkpdu Participant::preview_mkpdu() const { return build_mkpdu(mn_ + 1); }

// ---------------------------------------------------------------- peers and time

Participant::Peer* Participant::find_peer(const MemberId& mi) {
  auto it = std::find_if(peers_.begin(), peers_.end(), [&](const Peer& p) { return p.mi == mi; });
  return it == peers_.end() ? nullptr : &*it;
}

std::vector<std::uint64_t> Participant::live_scis() const {
  std::vector<std::uint64_t> v;
  for (const auto& p : peers_) {
    if (p.live && std::find(v.begin(), v.end(), p.sci) == v.end()) v.push_back(p.sci);
  }
  return v;
}

bool Participant::sci_live(std::uint64_t sci) const {
  return std::any_of(peers_.begin(), peers_.end(), [&](const Peer& p) { return p.live && p.sci == sci; });
}

bool Participant::mn_recent(std::uint32_t mn, TimePoint now) const {
  return std::any_of(sent_.begin(), sent_.end(), [&](const auto& s) {
    return s.first == mn && s.second + config_.life_time >= now;
  });
}

void Participant::advance(TimePoint now, Output& out) {
  expire_peers(now, out);
  step(now, out);
  update_state();
}

void Participant::expire_peers(TimePoint now, Output& out) {
  for (std::size_t i = 0; i < peers_.size();) {
    if (now < peers_[i].expires) {
      ++i;
      continue;
    }
    if (peers_[i].live) {
      lose_peer(i, PeerLossReason::kLifeTimeExpired, now, out);
    } else {
      ++stats_.potential_peers_expired;
      peers_.erase(peers_.begin() + static_cast<std::ptrdiff_t>(i));
      new_info_ = true;
    }
  }
}

void Participant::lose_peer(std::size_t index, PeerLossReason why, TimePoint now, Output& out) {
  const Peer p = peers_[index];
  peers_.erase(peers_.begin() + static_cast<std::ptrdiff_t>(index));
  ++stats_.peers_lost;
  Event e = make_event(EventType::kPeerLost, now, p.sci, p.mi);
  e.loss = why;
  out.events.push_back(std::move(e));
  // Exclusion first: its frames are not accepted from here on.
  if (!sci_live(p.sci)) sak_.remove_peer(p.sci, out);
  key_server_.request_rekey(RekeyReason::kMemberLeft);
  new_info_ = true;
  if (live_peer_count() == 0) {
    // The CA is gone: nobody left to protect frames for.
    sak_.clear(now, out);
    held_sak_.reset();
    all_tx_since_.reset();
    bounded_left_ = config_.bounded_hellos;
    if (bounded_left_ > 0) next_hello_ = std::min(next_hello_, now + config_.bounded_hello_time);
  }
  run_election(now, out);
}

void Participant::make_live(const MemberId& mi, TimePoint now, Output& out) {
  Peer* p = find_peer(mi);
  p->live = true;
  p->expires = now + config_.life_time;
  const std::uint64_t sci = p->sci;
  ++stats_.peers_live;
  out.events.push_back(make_event(EventType::kPeerLive, now, sci, mi));
  // The same SCI under an older MI: that member restarted. Its old MI goes
  // now (the receive SC stays: the SCI is live again).
  for (std::size_t i = 0; i < peers_.size();) {
    if (peers_[i].live && peers_[i].sci == sci && peers_[i].mi != mi) {
      superseded_.push_back(peers_[i].mi);
      if (superseded_.size() > 2 * config_.max_peers) superseded_.pop_front();
      lose_peer(i, PeerLossReason::kSuperseded, now, out);
    } else {
      ++i;
    }
  }
  sak_.add_peer(sci, now, out);
  key_server_.request_rekey(RekeyReason::kMemberJoined);
  new_info_ = true;
}

void Participant::note_peer_pns(const Peer& p) {
  // While a new SAK is on its way the old one's PN is moot.
  if (!key_server_.elected() || !p.sak_use || !p.sak_use->has_keys || sak_.state() == SakState::kReceiving) return;
  const InstalledSak* tx = sak_.transmitting();
  if (tx == nullptr) return;
  const SakUse& su = *p.sak_use;
  const auto full = [&](std::uint32_t low, bool latest) {
    const std::uint32_t high =
        p.xpn ? (latest ? p.xpn->latest_lowest_acceptable_pn_high : p.xpn->old_lowest_acceptable_pn_high) : 0;
    return (std::uint64_t{high} << 32) | low;
  };
  if (ki_of(su.latest) == tx->ki) key_server_.on_pn(full(su.latest.lowest_acceptable_pn, true));
  if (ki_of(su.old) == tx->ki) key_server_.on_pn(full(su.old.lowest_acceptable_pn, false));
}

bool Participant::all_live_peers(bool transmit, const KeyIdentifier& ki, const std::vector<MemberId>* only) const {
  bool any = false;
  for (const auto& p : peers_) {
    if (!p.live) continue;
    if (only != nullptr && std::find(only->begin(), only->end(), p.mi) == only->end()) continue;
    any = true;
    if (!p.sak_use || !uses(*p.sak_use, transmit, ki)) return false;
  }
  return any;
}

void Participant::update_state() {
  if (state_ == ParticipantState::kIdle) return;
  state_ = live_peer_count() > 0 ? ParticipantState::kLive : ParticipantState::kSearching;
}

void Participant::new_mi(TimePoint now, Output& out) {
  MemberId fresh{};
  if (!rng_.fill(fresh)) {
    out.events.push_back(make_event(EventType::kRandomFailure, now));
    return;
  }
  mi_ = fresh;
  mn_ = 0;
  sent_.clear();
  key_server_.reset_numbering();
  ++stats_.mi_changes;
  out.events.push_back(make_event(EventType::kMiChanged, now, config_.sci, mi_));
  new_info_ = true;
}

// ---------------------------------------------------------------- election and keys

Participant::Election Participant::elect(const MemberId* sender, const BasicParameterSet* basic,
                                         bool sender_live) const {
  std::vector<KeyServerCandidate> cands;
  std::vector<const MemberId*> who;  // nullptr: ourselves
  cands.push_back(KeyServerCandidate{config_.key_server_priority, config_.sci});
  who.push_back(nullptr);
  bool any_live = false;
  bool sender_seen = false;
  auto consider = [&](bool live, bool flag, std::uint8_t prio, std::uint64_t sci, const MemberId* mi) {
    if (!live) return;
    any_live = true;
    if (flag) {
      cands.push_back(KeyServerCandidate{prio, sci});
      who.push_back(mi);
    }
  };
  for (const auto& p : peers_) {
    if (sender != nullptr && p.mi == *sender) {
      sender_seen = true;
      consider(sender_live, basic->key_server, basic->key_server_priority, basic->sci, &p.mi);
    } else if (sender != nullptr && sender_live && p.sci == basic->sci) {
      continue;  // the sender going live supersedes it (make_live)
    } else {
      consider(p.live, p.key_server_flag, p.priority, p.sci, &p.mi);
    }
  }
  if (sender != nullptr && !sender_seen) {
    consider(sender_live, basic->key_server, basic->key_server_priority, basic->sci, sender);
  }
  Election e;
  if (!any_live) return e;
  const auto win = elect_key_server(cands);
  if (!win) return e;
  e.any = true;
  e.sci = cands[*win].sci;
  e.self = who[*win] == nullptr;
  e.mi = e.self ? mi_ : *who[*win];
  return e;
}

void Participant::run_election(TimePoint now, Output& out) {
  const Election e = elect(nullptr, nullptr, false);
  if (e.any == elected_.any && e.self == elected_.self && e.sci == elected_.sci && e.mi == elected_.mi) return;
  elected_ = e;
  new_info_ = true;
  out.events.push_back(make_event(e.any ? EventType::kKeyServerElected : EventType::kKeyServerNone, now, e.sci, e.mi));
  if (e.self) {
    key_server_.elect();
  } else {
    key_server_.stand_down();
  }
}

void Participant::step(TimePoint now, Output& out) {
  // Each pass makes at most one transition; a handful covers a retire
  // followed by the rekey that waited for it.
  for (int i = 0; i < 6 && step_once(now, out); ++i) {
  }
}

bool Participant::step_once(TimePoint now, Output& out) {
  if (live_peer_count() == 0) return false;
  key_server_.on_time(now);
  const SakState st = sak_.state();
  if (key_server_.elected()) {
    if ((st == SakState::kNoSak || st == SakState::kInUse) && key_server_.pending() && !held_sak_ &&
        now >= rekey_blocked_until_) {
      return start_rekey(now, out);
    }
    if (st == SakState::kReceiving) {
      const InstalledSak* l = sak_.latest();
      const std::vector<MemberId>* only = l->ki.mi == mi_ ? xpn_distribution_members() : nullptr;
      if (all_live_peers(false, l->ki, only) || now >= sak_.receiving_since() + config_.transmit_delay) {
        if (!sak_.transmit(now, out)) {
          ++stats_.secy_errors;
          return false;
        }
        key_server_.distribution_done();
        all_tx_since_.reset();
        new_info_ = true;
        return true;
      }
    }
  } else if (elected_.any && st == SakState::kReceiving) {
    const Peer* ks = nullptr;
    for (const auto& p : peers_) {
      if (p.live && p.mi == elected_.mi) ks = &p;
    }
    if (ks != nullptr && ks->sak_use && uses(*ks->sak_use, true, sak_.latest()->ki)) {
      if (!sak_.transmit(now, out)) {
        ++stats_.secy_errors;
        return false;
      }
      all_tx_since_.reset();
      new_info_ = true;
      return true;
    }
  }
  if (st == SakState::kTransmitting) {
    const InstalledSak* l = sak_.latest();
    bool retire = now >= sak_.transmitting_since() + config_.retire_time;
    if (!retire) {
      const std::vector<MemberId>* only =
          key_server_.elected() && l->ki.mi == mi_ ? xpn_distribution_members() : nullptr;
      if (all_live_peers(true, l->ki, only)) {
        if (!all_tx_since_) all_tx_since_ = now;
        retire = now >= *all_tx_since_ + config_.retire_grace;
      } else {
        all_tx_since_.reset();
      }
    }
    if (retire) {
      sak_.retire(now, out);
      all_tx_since_.reset();
      pn_reported_.reset();
      new_info_ = true;
      if (held_sak_) {
        AcceptedSak s = std::move(*held_sak_);
        held_sak_.reset();
        apply_sak(std::move(s), now, out);
      }
      return true;
    }
  }
  return false;
}

// The AN for a new SAK: the one after the AN in use, skipping every AN a
// key of ours or of a live peer (its SAK Use) still occupies, so a new key
// server never lands on the SA the CA transmits with.
std::uint8_t Participant::choose_an() const {
  std::array<bool, 4> used{};
  std::optional<std::uint8_t> base;
  for (const InstalledSak* k : {sak_.old(), sak_.latest()}) {
    if (k == nullptr) continue;
    used[k->an & 0x03] = true;
    base = k->an;
  }
  for (const auto& p : peers_) {
    if (!p.live || !p.sak_use || !p.sak_use->has_keys) continue;
    const SakUse& su = *p.sak_use;
    if (su.old_tx || su.old_rx) {
      used[su.old_an & 0x03] = true;
      if (!base) base = su.old_an;
    }
    if (su.latest_tx || su.latest_rx) {
      used[su.latest_an & 0x03] = true;
      if (!base || su.latest_tx) base = su.latest_an;
    }
  }
  const std::uint8_t start = base ? static_cast<std::uint8_t>((*base + 1) & 0x03) : 0;
  for (std::uint8_t i = 0; i < 4; ++i) {
    const auto an = static_cast<std::uint8_t>((start + i) & 0x03);
    if (!used[an]) return an;
  }
  return start;
}

bool Participant::start_rekey(TimePoint now, Output& out) {
  const std::uint8_t an = choose_an();
  std::vector<MemberId> mis;
  for (const auto& p : peers_) {
    if (p.live) mis.push_back(p.mi);
  }
  auto g = key_server_.generate(cak_, kek_, mi_, mis, an, rng_, now);
  if (!g) {
    if (g.error() == KeyServerError::kKnExhausted) {
      new_mi(now, out);
    } else {
      out.events.push_back(make_event(EventType::kRandomFailure, now));
    }
    rekey_blocked_until_ = next_hello_;  // try again with the next hello, not in a loop
    return false;
  }
  ++stats_.saks_generated;
  ++stats_.rekeys[static_cast<std::size_t>(g->reason)];
  Event e = make_event(EventType::kSakGenerated, now, config_.sci);
  e.ki = g->ki;
  e.an = g->an;
  e.sak_fingerprint = fingerprint(g->sak);
  e.rekey = g->reason;
  out.events.push_back(std::move(e));
  const RekeyReason reason = g->reason;
  if (!sak_.receive(std::move(g->sak), g->ki, g->an, config_.confidentiality_offset, live_scis(), {}, now, out)) {
    ++stats_.secy_errors;
    key_server_.abandon(reason);
    rekey_blocked_until_ = next_hello_;
    return false;
  }
  ++stats_.saks_installed;
  all_tx_since_.reset();
  new_info_ = true;
  return true;
}

void Participant::apply_sak(AcceptedSak s, TimePoint now, Output& out) {
  if (sak_.state() == SakState::kTransmitting) {
    newest_received_ = s.ki;
    held_sak_ = std::move(s);  // RETIRE first (Figure 12-2), then this one
    return;
  }
  const KeyIdentifier ki = s.ki;
  if (!sak_.receive(std::move(s.sak), ki, s.an, s.offset, live_scis(), s.member_scis, now, out)) {
    ++stats_.secy_errors;  // the key server repeats the Distributed SAK: tried again then
    return;
  }
  newest_received_ = ki;
  ++stats_.saks_received;
  ++stats_.saks_installed;
  all_tx_since_.reset();
  new_info_ = true;
}

std::optional<std::vector<std::uint64_t>> Participant::xpn_members(const Mkpdu& m) {
  std::vector<std::uint64_t> scis{m.basic.sci};
  bool self = false;
  if (m.live_peers) {
    for (const auto& e : m.live_peers->peers) {
      if (e.mi == mi_) {
        self = true;
        scis.push_back(config_.sci);
      } else if (const Peer* p = find_peer(e.mi); p != nullptr) {
        scis.push_back(p->sci);
      } else {
        return std::nullopt;
      }
    }
  }
  if (!self) return std::nullopt;
  return scis;
}

const std::vector<MemberId>* Participant::xpn_distribution_members() const {
  if (!is_xpn(config_.cipher_suite) || !key_server_.elected()) return nullptr;
  return &key_server_.members();
}

// ---------------------------------------------------------------- MKPDUs out

std::uint64_t Participant::lowest_acceptable_pn(const InstalledSak* k) const {
  if (k == nullptr) return 1;
  const std::uint64_t next = secy_.tx_next_pn(k->an);
  return next > 1 ? next - 1 : 1;  // as hostap: the last PN sent, at least 1
}

Mkpdu Participant::build_mkpdu(std::uint32_t mn) const {
  Mkpdu m;
  m.source = mac_of(config_.sci);
  BasicParameterSet& b = m.basic;
  b.mka_version = config_.mka_version;
  b.key_server_priority = config_.key_server_priority;
  // §11.11.1: set unless we decided that another member is (or will be) key server.
  b.key_server = elected_.any ? elected_.self : config_.key_server_priority != kNeverKeyServer;
  b.macsec_desired = true;
  b.macsec_capability = config_.macsec_capability;
  b.sci = config_.sci;
  b.actor_mi = mi_;
  b.actor_mn = mn;
  b.ckn = config_.ckn;
  PeerList live;
  PeerList potential;
  for (const auto& p : peers_) (p.live ? live : potential).peers.push_back(PeerEntry{p.mi, p.mn});
  const InstalledSak* latest = sak_.latest();
  const InstalledSak* old = sak_.old();
  if (!live.peers.empty()) {
    if (is_xpn(config_.cipher_suite) && key_server_.elected()) {
      if (const InstalledSak* k = latest != nullptr ? latest : old; k != nullptr) {
        live.key_server_ssci = static_cast<std::uint8_t>(ssci_of(config_.sci, k->member_scis));
      }
    }
    m.live_peers = std::move(live);
  }
  if (!potential.peers.empty()) m.potential_peers = std::move(potential);
  if (latest != nullptr || old != nullptr) {
    SakUse su;
    su.has_keys = true;
    const std::uint64_t llpn = lowest_acceptable_pn(latest);
    const std::uint64_t olpn = lowest_acceptable_pn(old);
    const auto slot = [](const InstalledSak* k, std::uint8_t& an, bool& tx, bool& rx, SakUseKey& key) {
      if (k == nullptr) return;
      an = k->an;
      tx = k->tx;
      rx = k->rx;
      key.key_server_mi = k->ki.mi;
      key.kn = k->ki.kn;
    };
    slot(latest, su.latest_an, su.latest_tx, su.latest_rx, su.latest);
    slot(old, su.old_an, su.old_tx, su.old_rx, su.old);
    su.latest.lowest_acceptable_pn = static_cast<std::uint32_t>(llpn);
    su.old.lowest_acceptable_pn = static_cast<std::uint32_t>(olpn);
    m.sak_use = su;
    if (is_xpn(config_.cipher_suite)) {
      XpnParameterSet x;
      x.latest_lowest_acceptable_pn_high = static_cast<std::uint32_t>(llpn >> 32);
      x.old_lowest_acceptable_pn_high = static_cast<std::uint32_t>(olpn >> 32);
      m.xpn = x;
    }
  }
  if (const DistributedSak* ds = key_server_.distributing()) {
    // XPN: only while our live list is the SAK's member list, so that every
    // member derives the same SSCIs from the MKPDU that brings the SAK.
    bool same = true;
    if (const auto* members = xpn_distribution_members()) {
      const std::size_t live_count = m.live_peers ? m.live_peers->peers.size() : 0;
      same = live_count == members->size();
      for (const auto& mi : *members) {
        same = same && m.live_peers &&
               std::any_of(m.live_peers->peers.begin(), m.live_peers->peers.end(),
                           [&](const PeerEntry& e) { return e.mi == mi; });
      }
    }
    if (same) m.distributed_sak = *ds;
  }
  return m;
}

void Participant::send_mkpdu(TimePoint now, Output& out, bool immediate) {
  if (mn_ == UINT32_MAX) new_mi(now, out);  // an MN never repeats under one MI
  const std::uint32_t mn = mn_ + 1;
  auto frame = encode_mkpdu(build_mkpdu(mn), ick_);
  if (frame) {
    mn_ = mn;
    sent_.emplace_back(mn, now);
    while (!sent_.empty() && (sent_.front().second + config_.life_time < now || sent_.size() > 1024)) {
      sent_.pop_front();
    }
    out.frames.push_back(std::move(*frame));
    ++stats_.mkpdus_sent;
  } else {
    ++stats_.encode_failures;
  }
  if (immediate) {
    ++stats_.immediate_mkpdus_sent;
    if (immediate_left_ > 0) --immediate_left_;
  } else {
    if (bounded_left_ > 0) {
      --bounded_left_;
      next_hello_ = now + config_.bounded_hello_time;
    } else {
      next_hello_ = now + config_.hello_time;
    }
    immediate_left_ = config_.max_immediate_mkpdus;
  }
  new_info_ = false;
}

}  // namespace layersec::mka
