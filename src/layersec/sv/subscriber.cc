#include "layersec/sv/subscriber.h"

#include <cstring>
#include <stdexcept>
#include <utility>

#include "layersec/sv/profiles.h"

namespace layersec::sv {

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::kMalformed: return "malformed";
    case DropReason::kUnknownAppId: return "unknown-appid";
    case DropReason::kWrongNoAsdu: return "wrong-noasdu";
    case DropReason::kWrongDataset: return "wrong-dataset";
    case DropReason::kUnexpectedExtension: return "unexpected-extension";
    case DropReason::kSecurity: return "security";
    case DropReason::kBadSmpCnt: return "bad-smpcnt";
    case DropReason::kDuplicate: return "duplicate";
    case DropReason::kStale: return "stale";
    case DropReason::kInvariantMismatch: return "invariant-mismatch";
    case DropReason::kWrongSvId: return "wrong-svid";
    case DropReason::kConfRevMismatch: return "confrev-mismatch";
    case DropReason::kSimulated: return "simulated";
    case DropReason::kFloorNotPersisted: return "floor-not-persisted";
  }
  return "unknown";
}

std::size_t Subscriber::add_stream(const SubscriptionConfig& config, std::optional<KeyMaterial> key) {
  if (floor_store_ != nullptr) throw std::logic_error("sv: add every stream before set_floor_store");
  for (const auto& s : streams_) {
    if (s.config.appid == config.appid) throw std::invalid_argument("sv: APPID already subscribed");
  }
  if (config.asdus_per_frame == 0 || config.asdus_per_frame > kMaxAsdus) {
    throw std::invalid_argument("sv: asdus_per_frame out of range");
  }
  if (config.smp_cnt_wrap > kMaxSmpCntWrap || config.smp_cnt_wrap < config.asdus_per_frame) {
    throw std::invalid_argument("sv: smp_cnt_wrap " + std::to_string(config.smp_cnt_wrap) + " outside " +
                                std::to_string(config.asdus_per_frame) + ".." + std::to_string(kMaxSmpCntWrap));
  }
  Stream s;
  s.config = config;
  s.window = SmpCntWindow(config.smp_cnt_wrap);
  s.conf_rev = config.conf_rev;
  s.floor_key = FloorKey{config.appid, config.sv_id};
  if (config.security.scheme != Scheme::kNone) {
    if (!key) throw std::invalid_argument("sv: a secured subscription needs a key");
    auto v = FrameVerifier::create(config.security, std::move(*key));
    if (!v) throw std::invalid_argument("sv: security configuration: " + std::string(to_string(v.error())));
    s.verifier.emplace(std::move(v).value());
  } else if (key) {
    throw std::invalid_argument("sv: a key was given for an unsecured subscription");
  }
  streams_.push_back(std::move(s));
  return streams_.size() - 1;
}

Status<SecurityError> Subscriber::set_next_key(std::size_t stream, KeyMaterial key) {
  auto& s = streams_.at(stream);
  if (!s.verifier) return Err(SecurityError::kBadConfig);
  return s.verifier->set_next_key(std::move(key));
}

Status<FloorError> Subscriber::set_floor_store(FloorStore* store, std::uint64_t reserve, FloorStart start) {
  if (store == nullptr || floor_store_ != nullptr) throw std::logic_error("sv: set_floor_store needs a store, once");
  if (reserve == 0 || reserve > kMaxFloorReserve) return Err(FloorError::kBadReserve);
  // Load every record first, so that an error leaves nothing attached.
  std::vector<std::optional<std::uint64_t>> found(streams_.size());
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (!streams_[i].verifier) continue;
    auto r = store->load(streams_[i].floor_key);
    if (!r) return Err(r.error() == FloorStoreError::kCorrupt ? FloorError::kCorrupt : FloorError::kStore);
    if (!*r && start != FloorStart::kFirstStart) return Err(FloorError::kMissing);
    found[i] = *r;
  }
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (!streams_[i].verifier || found[i]) continue;
    // First start: the record exists from now on, so the next start resumes.
    if (!store->save(streams_[i].floor_key, 0)) return Err(FloorError::kStore);
    found[i] = 0;
  }
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (!streams_[i].verifier) continue;
    streams_[i].resume = found[i];
    streams_[i].verifier->raise_counter_floor(*found[i]);
  }
  floor_store_ = store;
  floor_reserve_ = reserve;
  return {};
}

Status<FloorStoreError> Subscriber::persist_floors() {
  if (floor_store_ == nullptr) return {};
  bool ok = true;
  for (auto& s : streams_) {
    if (!s.verifier || !s.resume) continue;
    const auto floor = s.verifier->counter_floor();
    if (!floor) continue;
    const std::uint64_t exact = floor_reservation(*floor, 1);
    // The exact value only ever tightens the reservation: exact <= resume.
    if (exact >= *s.resume) continue;
    if (floor_store_->save(s.floor_key, exact)) {
      s.resume = exact;
    } else {
      ok = false;
    }
  }
  if (!ok) return Err(FloorStoreError::kIo);
  return {};
}

std::uint64_t Subscriber::malformed_total() const {
  std::uint64_t n = 0;
  for (auto v : malformed_) n += v;
  return n;
}

Result<Delivery, DropReason> Subscriber::drop(Stream& s, DropReason r) {
  auto& c = s.counters;
  switch (r) {
    case DropReason::kWrongNoAsdu: ++c.wrong_no_asdu; break;
    case DropReason::kWrongDataset: ++c.wrong_dataset; break;
    case DropReason::kUnexpectedExtension: ++c.unexpected_extension; break;
    case DropReason::kBadSmpCnt: ++c.bad_smp_cnt; break;
    case DropReason::kDuplicate: ++c.duplicates; break;
    case DropReason::kStale: ++c.stale; break;
    case DropReason::kInvariantMismatch: ++c.invariant_mismatch; break;
    case DropReason::kWrongSvId: ++c.wrong_sv_id; break;
    case DropReason::kConfRevMismatch: ++c.conf_rev_changes; break;
    case DropReason::kSimulated: ++c.simulated; break;
    case DropReason::kFloorNotPersisted: ++c.floor_not_persisted; break;
    default: break;
  }
  return Err(r);
}

Result<Delivery, DropReason> Subscriber::on_frame(ByteSpan bytes, TimePoint now) {
  // 1. Parse and validate the whole frame.
  auto decoded = decode_frame(bytes);
  if (!decoded) {
    ++malformed_[static_cast<std::size_t>(decoded.error())];
    return Err(DropReason::kMalformed);
  }
  last_ = std::move(decoded).value();
  const Frame& f = last_;

  // 2. Which stream.
  Stream* sp = nullptr;
  std::size_t index = 0;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].config.appid == f.appid) {
      sp = &streams_[i];
      index = i;
      break;
    }
  }
  if (sp == nullptr) {
    ++unknown_appid_;
    return Err(DropReason::kUnknownAppId);
  }
  Stream& s = *sp;
  ++s.counters.received;

  // 3. Structure the subscription relies on (also bounds the MAC regions).
  if (f.no_asdu != s.config.asdus_per_frame) return drop(s, DropReason::kWrongNoAsdu);
  for (std::size_t i = 0; i < f.no_asdu; ++i) {
    if (f.asdus[i].seq_data.size() != s.config.seq_data_size) return drop(s, DropReason::kWrongDataset);
  }

  // 4. Authentication (no state change yet).
  VerifiedFrame verified;
  if (s.verifier) {
    auto v = s.verifier->verify(bytes, f);
    if (!v) {
      switch (v.error()) {
        case SecurityError::kBadTag: ++s.counters.bad_tag; break;
        case SecurityError::kUnknownKey: ++s.counters.unknown_key; break;
        case SecurityError::kReplayedCounter:
          ++s.counters.replayed_counter;
          ++s.counters.replays;
          break;
        default: ++s.counters.bad_extension; break;
      }
      return Err(DropReason::kSecurity);
    }
    verified = *v;
  } else if (!f.extension.empty()) {
    return drop(s, DropReason::kUnexpectedExtension);
  }

  // 5. smpCnt: in range, consecutive within the frame, fresh across frames.
  // A new key epoch starts a new replay window.
  const std::uint32_t wrap = s.window.wrap();
  for (std::size_t i = 0; i < f.no_asdu; ++i) {
    if (f.asdus[i].smp_cnt >= wrap) return drop(s, DropReason::kBadSmpCnt);
    if (i > 0 && f.asdus[i].smp_cnt != (f.asdus[i - 1].smp_cnt + 1) % wrap) return drop(s, DropReason::kBadSmpCnt);
  }
  SmpCntWindow::Check chk{SmpCntWindow::Verdict::kFirst, 0};
  if (!verified.next_key) chk = s.window.check(f.asdus[0].smp_cnt, f.asdus[f.no_asdu - 1].smp_cnt);
  bool resync = false;
  if (!chk.accepted()) {
    // Secured: the frame counter (step 4) is the replay defence, and this
    // frame's is above every one accepted, so it is newer than the last
    // delivered frame whatever its smpCnt says (a restarted publisher starts
    // its smpCnt anywhere). Supervision follows it.
    if (!s.verifier) return drop(s, chk.verdict == SmpCntWindow::Verdict::kDuplicate ? DropReason::kDuplicate
                                                                                       : DropReason::kStale);
    resync = true;
    chk = {SmpCntWindow::Verdict::kFirst, 0};
  }

  // 6. Invariant fields.
  const Asdu& a0 = f.asdus[0];
  const bool selective = s.config.security.scheme == Scheme::kChaskey12Selective;
  for (std::size_t i = 1; i < f.no_asdu; ++i) {
    const Asdu& a = f.asdus[i];
    if (a.conf_rev != a0.conf_rev || a.smp_synch != a0.smp_synch || a.sv_id.size() != a0.sv_id.size() ||
        std::memcmp(a.sv_id.data(), a0.sv_id.data(), a.sv_id.size()) != 0) {
      return drop(s, selective ? DropReason::kInvariantMismatch : DropReason::kWrongSvId);
    }
  }
  const bool sv_id_ok = a0.sv_id_string() == s.config.sv_id;
  if (selective) {
    // Paper §III.B: compared with the cached copy only after the MAC verified.
    const Invariants& c = s.cache;
    if (!sv_id_ok) return drop(s, DropReason::kInvariantMismatch);
    if (c.valid && (c.no_asdu != f.no_asdu || c.conf_rev != a0.conf_rev || c.smp_synch != a0.smp_synch ||
                    c.sv_id_len != a0.sv_id.size() ||
                    std::memcmp(c.sv_id.data(), a0.sv_id.data(), c.sv_id_len) != 0)) {
      return drop(s, DropReason::kInvariantMismatch);
    }
    if (s.conf_rev && *s.conf_rev != a0.conf_rev) return drop(s, DropReason::kInvariantMismatch);
  } else {
    if (!sv_id_ok) return drop(s, DropReason::kWrongSvId);
    if (s.conf_rev && *s.conf_rev != a0.conf_rev) return drop(s, DropReason::kConfRevMismatch);
  }

  // 7. Simulated frames.
  if (f.simulate() && !s.config.accept_simulated) return drop(s, DropReason::kSimulated);

  // 8. The persisted floor (floor_store.h): a counter at or above the
  // resume point needs a new reservation before it is accepted, so a
  // restarted subscriber never accepts it again. No state changed yet.
  if (floor_store_ != nullptr && s.resume && verified.counter >= *s.resume) {
    const std::uint64_t next = floor_reservation(verified.counter, floor_reserve_);
    if (!floor_store_->save(s.floor_key, next)) return drop(s, DropReason::kFloorNotPersisted);
    s.resume = next;
    ++s.counters.floor_saves;
  }

  // 9. Accepted: now (and only now) change state.
  if (s.verifier) {
    if (verified.next_key) {
      ++s.counters.key_changes;
      s.window.reset();
    }
    s.verifier->commit(verified);
  }
  if (selective && !s.cache.valid) {
    s.cache.valid = true;
    s.cache.sv_id_len = a0.sv_id.size();
    std::memcpy(s.cache.sv_id.data(), a0.sv_id.data(), a0.sv_id.size());
    s.cache.no_asdu = f.no_asdu;
    s.cache.conf_rev = a0.conf_rev;
    s.cache.smp_synch = a0.smp_synch;
  }
  if (!s.conf_rev) s.conf_rev = a0.conf_rev;
  if (resync) ++s.counters.smp_cnt_resyncs;
  if (chk.verdict == SmpCntWindow::Verdict::kGap) {
    ++s.counters.gaps;
    s.counters.missing_samples += chk.missing;
  }
  s.window.accept(f.asdus[f.no_asdu - 1].smp_cnt);
  s.active = true;
  s.timed_out = false;
  s.last_rx = now;
  ++s.counters.delivered;
  return Delivery{index, &last_, chk.missing};
}

std::size_t Subscriber::poll(TimePoint now) {
  std::size_t n = 0;
  for (auto& s : streams_) {
    if (s.active && !s.timed_out && now - s.last_rx > s.config.timeout) {
      s.timed_out = true;
      ++s.counters.timeouts;
      // An unsecured stream that went silent may come back from a restarted
      // publisher at any smpCnt: supervision starts afresh. A secured stream
      // keeps its frame-counter floor (a recording played during or after
      // the outage stays refused); its smpCnt resynchronises on the first
      // fresh frame.
      if (!s.verifier) s.window.reset();
      ++n;
    }
  }
  return n;
}

TimePoint Subscriber::next_timeout() const {
  TimePoint t = TimePoint::max();
  for (const auto& s : streams_) {
    if (s.active && !s.timed_out) {
      const TimePoint d = s.last_rx + s.config.timeout;
      if (d < t) t = d;
    }
  }
  return t;
}

}  // namespace layersec::sv
