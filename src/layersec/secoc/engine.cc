#include "layersec/secoc/engine.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace layersec::secoc {

std::string_view to_string(Rejection r) {
  switch (r) {
    case Rejection::kMalformed: return "malformed";
    case Rejection::kUnknownPdu: return "unknown-pdu";
    case Rejection::kMacMismatch: return "mac-mismatch";
    case Rejection::kReplay: return "replay";
    case Rejection::kOutOfWindow: return "out-of-window";
    case Rejection::kKeyUnknown: return "key-unknown";
    case Rejection::kBufferTooSmall: return "buffer-too-small";
    case Rejection::kStateStore: return "state-store";
    case Rejection::kStale: return "stale";
  }
  return "unknown";
}

std::string_view to_string(ProtectError e) {
  switch (e) {
    case ProtectError::kUnknownPdu: return "unknown-pdu";
    case ProtectError::kKeyUnknown: return "key-unknown";
    case ProtectError::kBufferTooSmall: return "buffer-too-small";
    case ProtectError::kPayloadTooLong: return "payload-too-long";
    case ProtectError::kSecuredAreaOutside: return "secured-area-outside";
    case ProtectError::kFreshnessExhausted: return "freshness-exhausted";
    case ProtectError::kCrypto: return "crypto";
    case ProtectError::kStateStore: return "state-store";
    case ProtectError::kNoTime: return "no-time";
  }
  return "unknown";
}

std::string_view to_string(StartError e) {
  switch (e) {
    case StartError::kStateStore: return "state file could not be read or written";
    case StartError::kTripExhausted: return "trip counter exhausted: a new key is required";
    case StartError::kStateMissing:
      return "state file missing: the trip counter would restart and reuse freshness values "
             "(first provisioning needs the explicit first-start setting)";
    case StartError::kStateCorrupt: return "state file corrupt (refusing to guess a trip counter)";
  }
  return "unknown";
}

struct Engine::TxPdu {
  bool present = false;
  std::uint16_t data_id = 0;
  PduProfile profile;
  WireLayout wire;  // profile's byte layout, for pack_auth_info
  std::uint32_t key_group = 0;
  std::uint64_t msg = 0;  // last MsgCnt used in the current reset cycle (timestamp: last FV)
};

// Replay state of one authenticated sender of a timestamp-freshness PDU.
struct Engine::SourceState {
  bool used = false;
  std::uint64_t source = 0;
  std::uint64_t highest = 0;  // highest FV accepted
  std::uint64_t floor = 0;    // FVs at or below are refused (evicted from `recent`)
  std::vector<std::uint64_t> recent;  // reorder-tolerant: accepted FVs above floor (ring)
  std::size_t next = 0;
  TimePoint last_used;
};

struct Engine::RxPdu {
  bool present = false;
  std::uint16_t data_id = 0;
  PduProfile profile;
  WireLayout wire;  // profile's byte layout, for parse_secured_pdu
  std::uint32_t key_group = 0;
  FreshnessMode mode = FreshnessMode::kStrict;
  std::uint32_t window = kDefaultWindow;
  std::uint8_t attempts = 1;
  std::uint32_t channel = 0;
  bool has_channel = false;
  std::uint16_t sender_id = 0;
  TruncatedCounter counter;
  RxFreshnessState st;
  ReplayWindow bitmap;
  std::optional<TimePoint> cycle_start;  // start of st.last's reset cycle (sender's clock)
  // The reset cycle before st.last's, for late PDUs (item: reordered behind
  // the next cycle's first PDU or sync).
  struct Previous {
    bool valid = false;
    FreshnessCounters last;
    ReplayWindow bitmap;
    std::optional<TimePoint> cycle_start;
  } prev;
  // Timestamp freshness.
  Duration max_age = kDefaultMaxAge;
  std::vector<SourceState> sources;
  std::uint64_t evicted_floor = 0;  // a source without state starts here
  VerifyCounters counters;
};

struct Engine::SyncChannel {
  bool present = false;
  std::uint16_t data_id = 0;
  std::uint32_t key_group = 0;
  PduProfile profile;
  Duration period = Duration::seconds(1);
  Duration max_age = kDefaultMaxAge;  // zero: no time bound
  bool have = false;  // a (trip, reset) was accepted (or restored)
  std::uint64_t trip = 0;
  std::uint64_t reset = 0;
  std::optional<TimePoint> cycle_start;  // timestamp of the accepted sync
  bool have_prev = false;  // the cycle accepted before (trip, reset), this run
  std::uint64_t prev_trip = 0;
  std::uint64_t prev_reset = 0;
};

namespace {

constexpr std::uint64_t mask_bits(unsigned bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

PduProfile sync_profile(AuthAlgorithm alg, std::uint16_t mac_bits) {
  PduProfile p;
  p.kind = ProfileKind::kCustom;
  p.algorithm = alg;
  p.auth_info_tx_length = mac_bits;
  p.freshness = FreshnessLayout{};
  return p;
}

// TripCnt || ResetCnt bytes of the sync payload; an 8-byte timestamp follows.
std::size_t sync_counter_bytes(const EngineConfig& c) {
  return (std::size_t{c.trip_bits} + c.reset_bits + 7) / 8;
}
constexpr std::size_t kSyncTimestampBytes = 8;
std::size_t sync_payload_size(const EngineConfig& c) {
  return sync_counter_bytes(c) + kSyncTimestampBytes;
}

// Microseconds of the freshness clock (0 before its origin).
std::uint64_t to_us(TimePoint t) { return t.ns() <= 0 ? 0 : static_cast<std::uint64_t>(t.ns()) / 1000; }
TimePoint from_us(std::uint64_t us) {
  return TimePoint::from_ns(us >= static_cast<std::uint64_t>(INT64_MAX / 1000)
                                ? INT64_MAX
                                : static_cast<std::int64_t>(us) * 1000);
}

// The timestamp with the received `tx` low bits nearest `now_us`.
std::uint64_t reconstruct_timestamp(std::uint64_t now_us, std::uint64_t rx, unsigned tx,
                                    unsigned total) {
  if (tx >= total || tx >= 64) return rx;
  const std::uint64_t m = std::uint64_t{1} << tx;
  const std::uint64_t half = m / 2;
  std::uint64_t cand = (now_us & ~(m - 1)) | rx;
  if (cand > now_us && cand - now_us > half && cand >= m) cand -= m;
  else if (cand < now_us && now_us - cand > half && cand <= FreshnessLayout::mask(total) - m) cand += m;
  return cand;
}

bool epoch_less(std::uint64_t t1, std::uint64_t r1, std::uint64_t t2, std::uint64_t r2) {
  return t1 < t2 || (t1 == t2 && r1 < r2);
}

// AEAD nonce: DataId(16) || senderId(16) || complete FV(64), big-endian.
void make_nonce(std::uint16_t data_id, std::uint16_t sender, std::uint64_t fv, std::uint8_t* n) {
  store_be16(n, data_id);
  store_be16(n + 2, sender);
  store_be64(n + 4, fv);
}

}  // namespace

Status<crypto::CryptoError> compute_authenticator(
    crypto::Mac& mac, const PduProfile& profile, std::uint16_t data_id, ByteSpan header,
    ByteSpan area, std::uint64_t fv, std::span<std::uint8_t, kMaxTagBytes> tag_out) {
  const std::size_t fvn = profile.fv_bytes();
  const std::size_t total = 2 + header.size() + area.size() + fvn;
  if (total <= kInlineDtaBytes) {
    // The common case: DataToAuthenticator assembled on the stack and fed to
    // the MAC in one call (each further update costs as much as copying a
    // few hundred bytes), the full tag written straight into tag_out.
    std::array<std::uint8_t, kInlineDtaBytes> dta;
    std::uint8_t* w = dta.data();
    store_be16(w, data_id);
    w += 2;
    if (!header.empty()) std::memcpy(w, header.data(), header.size());
    w += header.size();
    if (!area.empty()) std::memcpy(w, area.data(), area.size());
    w += area.size();
    encode_fv(profile, fv, w);
    if (auto st = mac.compute(ByteSpan(dta.data(), total), tag_out); !st) return st;
  } else {
    std::uint8_t id[2];
    store_be16(id, data_id);
    std::uint8_t fvb[8];
    encode_fv(profile, fv, fvb);
    const ByteSpan parts[4] = {ByteSpan(id, 2), header, area, ByteSpan(fvb, fvn)};
    if (auto st = mac.compute(std::span<const ByteSpan>(parts, 4), tag_out); !st) return st;
  }
  // Truncation in place: keep the MSBs, clear the unused low bits of the last byte.
  const unsigned bits = profile.auth_info_tx_length;
  if (bits % 8) tag_out[(bits + 7) / 8 - 1] &= static_cast<std::uint8_t>(0xFF << (8 - bits % 8));
  return {};
}

Engine::Engine(EngineConfig config, StateStore& store) : config_(std::move(config)), store_(store) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>, StartError> Engine::start(EngineConfig config, StateStore& store,
                                                          StartOptions options) {
  config.validate();
  auto loaded = store.load();
  PersistedState state;
  if (loaded) {
    state = std::move(loaded).value();
  } else if (loaded.error() == StoreError::kMissing) {
    if (!options.first_start) return Err(StartError::kStateMissing);
  } else {
    return Err(loaded.error() == StoreError::kCorrupt ? StartError::kStateCorrupt
                                                      : StartError::kStateStore);
  }
  std::unique_ptr<Engine> e(new Engine(std::move(config), store));
  e->persisted_ = std::move(state);
  e->start_time_ = options.now;
  const EngineConfig& c = e->config_;
  if (c.trip_bits > 0) {
    // Trip counter: +1 at every start, durable before the first PDU.
    if (e->persisted_.tx_trip >= mask_bits(c.trip_bits)) return Err(StartError::kTripExhausted);
    e->trip_ = e->persisted_.tx_trip + 1;
    e->persisted_.tx_trip = e->trip_;
    if (!e->persist().ok()) return Err(StartError::kStateStore);
  }
  e->reset_ = 1;
  for (const auto& g : c.key_groups) e->groups_.emplace_back(g.name, g.algorithm);
  std::uint32_t max_tx = 0, max_rx = 0, max_ch = 0;
  for (const auto& p : c.tx_pdus) max_tx = std::max(max_tx, p.id + 1);
  for (const auto& p : c.rx_pdus) max_rx = std::max(max_rx, p.id + 1);
  for (const auto& s : c.sync_rx) max_ch = std::max(max_ch, s.id + 1);
  e->tx_.resize(max_tx);
  e->rx_.resize(max_rx);
  e->sync_rx_.resize(max_ch);
  for (const auto& p : c.tx_pdus) {
    auto& t = e->tx_[p.id];
    t.present = true;
    t.data_id = p.data_id;
    t.profile = p.profile;
    t.wire = WireLayout(p.profile);
    t.key_group = p.key_group;
  }
  for (const auto& s : c.sync_rx) {
    auto& ch = e->sync_rx_[s.id];
    ch.present = true;
    ch.data_id = s.data_id;
    ch.key_group = s.key_group;
    ch.profile = sync_profile(c.key_groups[s.key_group].algorithm, s.auth_info_tx_length);
    ch.period = s.period;
    ch.max_age = s.max_age;
    for (const auto& r : e->persisted_.rx) {
      if (r.channel == s.id) {
        ch.have = true;
        ch.trip = r.trip;
        ch.reset = r.reset;
      }
    }
  }
  for (const auto& p : c.rx_pdus) {
    auto& r = e->rx_[p.id];
    r.present = true;
    r.data_id = p.data_id;
    r.profile = p.profile;
    r.wire = WireLayout(p.profile);
    r.key_group = p.key_group;
    r.mode = p.mode;
    r.window = p.window;
    r.attempts = p.verify_attempts;
    r.channel = p.sync_channel;
    r.has_channel = p.has_sync_channel;
    r.sender_id = p.sender_id;
    r.counter.counter_bits = std::max(1U, unsigned{p.profile.freshness.msg_bits});
    r.counter.lsb_bits = std::max(1U, p.profile.freshness.msg_lower_bits());
    r.bitmap = ReplayWindow(std::min<std::uint32_t>(p.window, ReplayWindow::kCapacityBits));
    r.prev.bitmap = r.bitmap;
    r.max_age = p.max_age;
    if (p.profile.freshness.timestamp) {
      r.sources.resize(p.max_sources);
      if (p.mode == FreshnessMode::kReorderTolerant)
        for (auto& src : r.sources) src.recent.assign(p.window, 0);
    }
  }
  if (c.sync_tx.enabled)
    e->sync_tx_profile_ =
        sync_profile(c.key_groups[c.sync_tx.key_group].algorithm, c.sync_tx.auth_info_tx_length);
  return e;
}

Status<StoreError> Engine::persist() { return store_.save(persisted_); }

Status<KeyError> Engine::install_key(std::uint32_t group, std::uint32_t key_id,
                                     const SecretBytes& key, TimePoint now) {
  if (group >= groups_.size()) return Err(KeyError::kUnknownGroup);
  return groups_[group].install(key_id, key, now, config_.rollover_window);
}

bool Engine::retire_key(std::uint32_t group, std::uint32_t key_id) {
  return group < groups_.size() && groups_[group].retire(key_id);
}

std::uint32_t Engine::group_index(const std::string& name) const {
  for (std::size_t i = 0; i < groups_.size(); ++i)
    if (groups_[i].name() == name) return static_cast<std::uint32_t>(i);
  throw std::invalid_argument("no key group " + name);
}

Result<std::size_t, ProtectError> Engine::protect(std::uint32_t pdu_id, ByteSpan payload,
                                                  MutableByteSpan out, const TxInput& in) {
  if (pdu_id >= tx_.size() || !tx_[pdu_id].present) return Err(ProtectError::kUnknownPdu);
  TxPdu& p = tx_[pdu_id];
  const PduProfile& prof = p.profile;
  KeySlot& key = groups_[p.key_group].current();
  if (!key.live) return Err(ProtectError::kKeyUnknown);
  const std::size_t n = payload.size();
  const std::size_t hdr = prof.auth_pdu_header_length;
  const std::size_t total = hdr + n + prof.auth_info_bytes();
  if (out.size() < total) return Err(ProtectError::kBufferTooSmall);
  const FreshnessLayout& layout = prof.freshness;
  const bool has_fv = layout.has_freshness();
  FreshnessCounters c;
  std::uint64_t fv = 0;
  if (layout.timestamp) {
    // FV = the clock in microseconds, strictly increasing per PDU.
    if (!in.now) return Err(ProtectError::kNoTime);
    if (p.msg >= layout.max_msg()) return Err(ProtectError::kFreshnessExhausted);
    c = {0, 0, std::max(p.msg + 1, to_us(*in.now))};
    if (c.msg > layout.max_msg()) return Err(ProtectError::kFreshnessExhausted);
    fv = c.msg;
  } else if (has_fv) {
    if (trip_exhausted_ || p.msg >= layout.max_msg()) return Err(ProtectError::kFreshnessExhausted);
    c = {trip_, reset_, p.msg + 1};
    fv = layout.compose(c);
  }
  if (hdr != 0 && !write_header(prof, n, out).ok()) return Err(ProtectError::kPayloadTooLong);
  std::uint8_t* body = out.data() + hdr;
  if (n != 0 && body != payload.data()) std::memmove(body, payload.data(), n);
  std::array<std::uint8_t, kMaxTagBytes> tag;
  if (key.gcm) {
    std::uint8_t nonce[12];
    make_nonce(p.data_id, config_.sender_id, fv, nonce);
    std::uint8_t id[2];
    store_be16(id, p.data_id);
    std::uint8_t fvb[8];
    const std::size_t fvn = encode_fv(prof, fv, fvb);
    const ByteSpan aad[3] = {ByteSpan(id, 2), in.header, ByteSpan(fvb, fvn)};
    if (!key.gcm->seal(ByteSpan(nonce, 12), std::span<const ByteSpan>(aad, 3),
                       MutableByteSpan(body, n), MutableByteSpan(tag.data(), prof.auth_info_tx_length / 8u))
             .ok())
      return Err(ProtectError::kCrypto);
  } else {
    auto area = secured_area(prof, ByteSpan(body, n));
    if (!area) return Err(ProtectError::kSecuredAreaOutside);
    if (!compute_authenticator(*key.mac, prof, p.data_id, in.header, *area, fv, tag).ok())
      return Err(ProtectError::kCrypto);
  }
  pack_auth_info(p.wire, fv & FreshnessLayout::mask(layout.tx_bits), tag.data(), body + n);
  if (has_fv) p.msg = c.msg;
  return total;
}

Result<std::size_t, Rejection> Engine::reject(RxPdu* pdu, Rejection r) {
  ++totals_.rejected[static_cast<std::size_t>(r)];
  if (pdu) ++pdu->counters.rejected[static_cast<std::size_t>(r)];
  return Err(r);
}

bool Engine::try_mac(RxPdu& p, const SecuredPduView& parsed, ByteSpan area, ByteSpan header,
                     std::uint64_t fv, MutableByteSpan out, bool& previous_key) {
  const PduProfile& prof = p.profile;
  const ByteSpan authentic = parsed.authentic;
  const std::size_t n = authentic.size();
  const unsigned bits = prof.auth_info_tx_length;
  KeyGroup& group = groups_[p.key_group];
  for (int k = 0; k < 2; ++k) {
    KeySlot& slot = k == 0 ? group.current() : group.previous();
    if (!slot.live) continue;
    bool ok = false;
    if (slot.gcm) {
      std::uint8_t nonce[12];
      make_nonce(p.data_id, p.sender_id, fv, nonce);
      std::uint8_t id[2];
      store_be16(id, p.data_id);
      std::uint8_t fvb[8];
      const std::size_t fvn = encode_fv(prof, fv, fvb);
      const ByteSpan aad[3] = {ByteSpan(id, 2), header, ByteSpan(fvb, fvn)};
      if (n != 0) std::memmove(out.data(), authentic.data(), n);
      ok = slot.gcm->open(ByteSpan(nonce, 12), std::span<const ByteSpan>(aad, 3),
                          MutableByteSpan(out.data(), n), ByteSpan(parsed.tag.data(), bits / 8))
               .ok();
    } else {
      std::array<std::uint8_t, kMaxTagBytes> tag;
      // Both tags have the bits after authInfoTxLength cleared, so whole
      // bytes compare (constant time).
      const std::size_t mac_bytes = p.wire.mac_bytes;
      if (compute_authenticator(*slot.mac, prof, p.data_id, header, area, fv, tag).ok())
        ok = crypto::ct_equal(ByteSpan(tag.data(), mac_bytes), ByteSpan(parsed.tag.data(), mac_bytes));
      if (ok && n != 0 && out.data() != authentic.data()) std::memmove(out.data(), authentic.data(), n);
    }
    if (ok) {
      previous_key = k == 1;
      return true;
    }
  }
  return false;
}

Result<std::size_t, Rejection> Engine::verify_timestamp(RxPdu& p, const SecuredPduView& parsed,
                                                        ByteSpan area, MutableByteSpan out,
                                                        const RxInput& in) {
  const FreshnessLayout& layout = p.profile.freshness;
  if (!in.now) return reject(&p, Rejection::kStale);
  const std::uint64_t now_us = to_us(*in.now);
  const std::uint64_t max_age_us = static_cast<std::uint64_t>(p.max_age.ns() / 1000);
  const std::uint64_t fv =
      reconstruct_timestamp(now_us, parsed.truncated_fv, layout.tx_bits, layout.total());
  // Time bound, either side (the future side bounds clock skew), and never
  // from before this receiver started: what was recorded before a restart is
  // refused without persisted receiver state.
  if (fv + max_age_us < now_us || fv > now_us + max_age_us) return reject(&p, Rejection::kStale);
  if (start_time_ && fv < to_us(*start_time_)) return reject(&p, Rejection::kStale);
  SourceState* src = nullptr;
  for (auto& s : p.sources)
    if (s.used && s.source == in.source) src = &s;
  const std::uint64_t floor = src ? src->floor : p.evicted_floor;
  const std::uint64_t highest = src ? src->highest : p.evicted_floor;
  if (p.mode == FreshnessMode::kStrict) {
    if (fv <= highest) return reject(&p, Rejection::kReplay);
  } else {
    if (fv <= floor) return reject(&p, fv + p.window < highest ? Rejection::kOutOfWindow : Rejection::kReplay);
    if (src && std::find(src->recent.begin(), src->recent.end(), fv) != src->recent.end())
      return reject(&p, Rejection::kReplay);
  }
  bool previous_key = false;
  if (!try_mac(p, parsed, area, in.header, fv, out, previous_key))
    return reject(&p, Rejection::kMacMismatch);
  // Verified: only now is sender state created or advanced.
  if (!src) {
    SourceState* victim = &p.sources[0];
    for (auto& s : p.sources) {
      if (!s.used) {
        victim = &s;
        break;
      }
      if (s.last_used < victim->last_used) victim = &s;
    }
    if (victim->used) p.evicted_floor = std::max(p.evicted_floor, victim->highest);
    src = victim;
    src->used = true;
    src->source = in.source;
    src->highest = std::max(floor, p.evicted_floor);
    src->floor = src->highest;
    std::fill(src->recent.begin(), src->recent.end(), 0);
    src->next = 0;
  }
  if (!src->recent.empty()) {
    std::uint64_t& slot = src->recent[src->next];
    src->floor = std::max(src->floor, slot);  // the value leaving the ring
    slot = fv;
    src->next = (src->next + 1) % src->recent.size();
  }
  src->highest = std::max(src->highest, fv);
  src->last_used = *in.now;
  ++p.counters.accepted;
  ++totals_.accepted;
  if (previous_key) {
    ++p.counters.accepted_previous_key;
    ++totals_.accepted_previous_key;
  }
  return parsed.authentic.size();
}

namespace {
// Records an accepted message counter of one reset cycle: strict keeps the
// last one (Algorithm 1's local counter), reorder-tolerant the bitmap and its
// highest.
void accept_counter(FreshnessMode mode, ReplayWindow& bitmap, std::uint64_t& last, std::uint64_t msg) {
  if (mode == FreshnessMode::kStrict) {
    last = msg;
  } else {
    bitmap.accept(msg);
    last = bitmap.highest();
  }
}

// A candidate of reset cycle `start` + `ahead` periods is within the time
// bound until start + (ahead + 1) * period + max_age.
bool within_bound(Duration period, Duration max_age, std::optional<TimePoint> cycle_start,
                  std::uint64_t ahead, std::optional<TimePoint> now) {
  if (max_age == Duration::zero()) return true;  // no time bound configured
  if (!now || !cycle_start) return false;
  const std::int64_t limit = cycle_start->ns() + period.ns() * static_cast<std::int64_t>(ahead + 1) +
                             max_age.ns();
  return now->ns() <= limit;
}
}  // namespace

Result<std::size_t, Rejection> Engine::verify(std::uint32_t pdu_id, ByteSpan secured,
                                              MutableByteSpan out, const RxInput& in) {
  if (pdu_id >= rx_.size() || !rx_[pdu_id].present) return reject(nullptr, Rejection::kUnknownPdu);
  RxPdu& p = rx_[pdu_id];
  const PduProfile& prof = p.profile;
  auto parsed = parse_secured_pdu(p.wire, secured);
  if (!parsed) return reject(&p, Rejection::kMalformed);
  const ByteSpan authentic = parsed->authentic;
  const std::size_t n = authentic.size();
  if (out.size() < n) return reject(&p, Rejection::kBufferTooSmall);
  KeyGroup& group = groups_[p.key_group];
  if (!group.current().live) return reject(&p, Rejection::kKeyUnknown);
  ByteSpan area;
  if (!group.current().gcm) {
    auto a = secured_area(prof, authentic);
    if (!a) return reject(&p, Rejection::kMalformed);
    area = *a;
  }
  const FreshnessLayout& layout = prof.freshness;
  if (layout.timestamp) return verify_timestamp(p, *parsed, area, out, in);

  // Candidate FVs, in order (SecOCAuthenticationVerifyAttempts, then the
  // previous reset cycle).
  // Only the first nc entries are written and read: the array is left
  // uninitialised (zeroing it cost as much as the rest of the candidate logic).
  enum class Kind : std::uint8_t { kCurrent, kNextCycle, kPreviousCycle };
  struct Candidate {
    std::uint64_t trip, reset, msg;
    Kind kind;
    std::uint64_t ahead;
    [[nodiscard]] FreshnessCounters counters() const { return {trip, reset, msg}; }
  };
  Candidate cands[kMaxVerifyAttempts + 1];
  int nc = 0;
  Rejection fallback = Rejection::kMacMismatch;
  const bool has_fv = layout.has_freshness();
  if (!has_fv) {
    cands[nc++] = {0, 0, 0, Kind::kCurrent, 0};
  } else if (!p.st.synchronised) {
    fallback = Rejection::kOutOfWindow;
  } else {
    const SyncChannel* ch = p.has_channel && p.channel < sync_rx_.size() ? &sync_rx_[p.channel] : nullptr;
    const Duration period = ch ? ch->period : Duration::seconds(1);
    const Duration max_age = ch ? ch->max_age : Duration::zero();
    const std::uint64_t lower = layout.rx_msg_lower(parsed->truncated_fv);
    const std::uint64_t flag = layout.rx_reset_flag(parsed->truncated_fv);
    const std::uint64_t flag_mask = FreshnessLayout::mask(layout.reset_flag_bits);
    const bool fresh_cycle = within_bound(period, max_age, p.cycle_start, 0, in.now);
    if ((p.st.last.reset & flag_mask) == flag) {
      const CounterCandidate cc = p.mode == FreshnessMode::kStrict
                                      ? p.counter.reconstruct_strict(p.st.last.msg, lower, p.window)
                                      : p.counter.reconstruct_tolerant(p.st.last.msg, lower, p.window);
      if (cc.kind == Reconstruction::kCandidate) {
        const auto chk = p.mode == FreshnessMode::kStrict ? ReplayWindow::Check::kNew
                                                          : p.bitmap.check(cc.value);
        if (chk != ReplayWindow::Check::kNew) {
          fallback = chk == ReplayWindow::Check::kDuplicate ? Rejection::kReplay
                                                            : Rejection::kOutOfWindow;
        } else if (!fresh_cycle) {
          fallback = Rejection::kStale;
        } else {
          cands[nc++] = {p.st.last.trip, p.st.last.reset, cc.value, Kind::kCurrent, 0};
        }
      } else {
        fallback = cc.kind == Reconstruction::kReplay ? Rejection::kReplay : Rejection::kOutOfWindow;
      }
    } else {
      fallback = Rejection::kOutOfWindow;
    }
    // Attempts 2..N: the first W counters of the next N-1 reset cycles, for a
    // receiver that lost up to N-1 sync messages (cycles whose ResetFlag does
    // not match the received one are skipped but still count).
    for (std::uint64_t j = 1; j < p.attempts && nc < static_cast<int>(kMaxVerifyAttempts); ++j) {
      if (p.st.last.reset > layout.max_reset() - j) break;
      const std::uint64_t next_reset = p.st.last.reset + j;
      if ((next_reset & flag_mask) == flag && lower >= 1 && lower < p.window &&
          lower <= layout.max_msg()) {
        if (within_bound(period, max_age, p.cycle_start, j, in.now))
          cands[nc++] = {p.st.last.trip, next_reset, lower, Kind::kNextCycle, j};
        else if (fallback == Rejection::kMacMismatch || fallback == Rejection::kOutOfWindow)
          fallback = Rejection::kStale;
      }
    }
    // Last: a late PDU of the previous reset cycle, while the current cycle
    // is young (fewer than W PDUs accepted) and the previous one is still
    // within its time bound.
    if (p.prev.valid && p.st.last.msg < p.window && (p.prev.last.reset & flag_mask) == flag &&
        within_bound(period, max_age, p.prev.cycle_start, 0, in.now)) {
      const CounterCandidate cc =
          p.mode == FreshnessMode::kStrict
              ? p.counter.reconstruct_strict(p.prev.last.msg, lower, p.window)
              : p.counter.reconstruct_tolerant(p.prev.last.msg, lower, p.window);
      if (cc.kind == Reconstruction::kCandidate &&
          (p.mode == FreshnessMode::kStrict || p.prev.bitmap.check(cc.value) == ReplayWindow::Check::kNew))
        cands[nc++] = {p.prev.last.trip, p.prev.last.reset, cc.value, Kind::kPreviousCycle, 0};
    }
  }

  for (int i = 0; i < nc; ++i) {
    const Candidate& cand = cands[i];
    const std::uint64_t fv = has_fv ? layout.compose(cand.counters()) : 0;
    bool previous_key = false;
    if (!try_mac(p, *parsed, area, in.header, fv, out, previous_key)) continue;
    // Verified: only now does the freshness state advance.
    if (has_fv) {
      switch (cand.kind) {
        case Kind::kNextCycle: {
          const SyncChannel& ch = sync_rx_[p.channel];
          p.prev = {true, p.st.last, p.bitmap, p.cycle_start};
          p.st.last = cand.counters();
          p.bitmap.reset(0);
          p.bitmap.accept(cand.msg);
          if (p.cycle_start) p.cycle_start = *p.cycle_start + ch.period * static_cast<std::int64_t>(cand.ahead);
          ++p.counters.accepted_next_cycle;
          ++totals_.accepted_next_cycle;
          break;
        }
        case Kind::kPreviousCycle:
          accept_counter(p.mode, p.prev.bitmap, p.prev.last.msg, cand.msg);
          ++p.counters.accepted_previous_cycle;
          ++totals_.accepted_previous_cycle;
          break;
        case Kind::kCurrent:
          accept_counter(p.mode, p.bitmap, p.st.last.msg, cand.msg);
          break;
      }
    }
    ++p.counters.accepted;
    ++totals_.accepted;
    if (previous_key) {
      ++p.counters.accepted_previous_key;
      ++totals_.accepted_previous_key;
    }
    return n;
  }
  return reject(&p, nc > 0 && fallback == Rejection::kMacMismatch ? Rejection::kMacMismatch
                                                                     : fallback);
}

std::size_t Engine::sync_message_size() const {
  return sync_payload_size(config_) + sync_tx_profile_.auth_info_bytes();
}

Status<ProtectError> Engine::start_reset_cycle() {
  if (trip_exhausted_) return Err(ProtectError::kFreshnessExhausted);
  if (reset_ >= mask_bits(config_.reset_bits)) {
    if (config_.trip_bits == 0 || trip_ >= mask_bits(config_.trip_bits)) {
      trip_exhausted_ = true;  // the whole FV space is used: a new key is required
      return Err(ProtectError::kFreshnessExhausted);
    }
    persisted_.tx_trip = trip_ + 1;
    if (!persist().ok()) {
      persisted_.tx_trip = trip_;
      return Err(ProtectError::kStateStore);
    }
    ++trip_;
    reset_ = 1;
  } else {
    ++reset_;
  }
  for (auto& t : tx_)
    if (!t.profile.freshness.timestamp) t.msg = 0;
  return {};
}

Result<std::size_t, ProtectError> Engine::build_sync(MutableByteSpan out, TimePoint now) {
  const std::size_t m = sync_counter_bytes(config_);
  const std::size_t total = sync_message_size();
  if (out.size() < total) return Err(ProtectError::kBufferTooSmall);
  KeySlot& key = groups_[config_.sync_tx.key_group].current();
  if (!key.live) return Err(ProtectError::kKeyUnknown);
  // Payload: TripCnt || ResetCnt, MSB-first, zero-padded (EasyXMen CDD_FVM),
  // then the cycle's start on the freshness clock (64-bit microseconds), so a
  // receiver can bound the age of the cycle and of every PDU in it.
  const unsigned tb = config_.trip_bits, rb = config_.reset_bits;
  const std::uint64_t v = ((trip_ << rb) | reset_) << (8 * m - tb - rb);
  for (std::size_t i = 0; i < m; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * (m - 1 - i)));
  store_be64(out.data() + m, to_us(now));
  const std::size_t payload = m + kSyncTimestampBytes;
  std::array<std::uint8_t, kMaxTagBytes> tag;
  if (!compute_authenticator(*key.mac, sync_tx_profile_, config_.sync_tx.data_id, {},
                             ByteSpan(out.data(), payload), 0, tag)
           .ok())
    return Err(ProtectError::kCrypto);
  pack_auth_info(sync_tx_profile_, 0, tag.data(), out.data() + payload);
  return total;
}

Result<Engine::PollResult, ProtectError> Engine::poll(TimePoint now, MutableByteSpan sync_out) {
  PollResult r;
  if (!start_time_) start_time_ = now;
  for (auto& g : groups_) {
    g.expire(now);
    if (g.previous().live && g.previous().expires < r.next_deadline)
      r.next_deadline = g.previous().expires;
  }
  if (config_.sync_tx.enabled) {
    if (!sync_started_) {
      // Start-up sync: announce (trip, reset=1) as early as possible.
      auto s = build_sync(sync_out, now);
      if (!s) return Err(s.error());
      r.sync_bytes = *s;
      sync_started_ = true;
      sync_requested_ = false;
      next_sync_ = now + config_.sync_tx.period;
    } else if (now >= next_sync_ || sync_requested_) {
      auto st = start_reset_cycle();
      if (!st) return Err(st.error());
      auto s = build_sync(sync_out, now);
      if (!s) return Err(s.error());
      r.sync_bytes = *s;
      if (sync_requested_ && now < next_sync_) {
        next_sync_ = now + config_.sync_tx.period;  // a requested cycle restarts the period
      } else {
        next_sync_ = next_sync_ + config_.sync_tx.period;
        if (next_sync_ <= now) next_sync_ = now + config_.sync_tx.period;
      }
      sync_requested_ = false;
    }
    if (next_sync_ < r.next_deadline) r.next_deadline = next_sync_;
  }
  return r;
}

Result<SyncOutcome, Rejection> Engine::handle_sync(std::uint32_t channel, ByteSpan message,
                                                   std::optional<TimePoint> now) {
  if (channel >= sync_rx_.size() || !sync_rx_[channel].present) return Err(Rejection::kUnknownPdu);
  SyncChannel& ch = sync_rx_[channel];
  auto parsed = parse_secured_pdu(ch.profile, message);
  const std::size_t m = sync_counter_bytes(config_);
  if (!parsed || parsed->authentic.size() != m + kSyncTimestampBytes) return Err(Rejection::kMalformed);
  const unsigned tb = config_.trip_bits, rb = config_.reset_bits;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < m; ++i) v = (v << 8) | parsed->authentic[i];
  const unsigned pad = static_cast<unsigned>(8 * m - tb - rb);
  if ((v & mask_bits(pad)) != 0) return Err(Rejection::kMalformed);
  v >>= pad;
  const std::uint64_t trip = (v >> rb) & mask_bits(tb);
  const std::uint64_t reset = v & mask_bits(rb);
  const std::uint64_t stamp_us = load_be64(parsed->authentic.data() + m);
  KeyGroup& group = groups_[ch.key_group];
  if (!group.current().live) return Err(Rejection::kKeyUnknown);
  const unsigned bits = ch.profile.auth_info_tx_length;
  bool ok = false;
  for (int k = 0; k < 2 && !ok; ++k) {
    KeySlot& slot = k == 0 ? group.current() : group.previous();
    if (!slot.live || !slot.mac) continue;
    std::array<std::uint8_t, kMaxTagBytes> tag;
    if (compute_authenticator(*slot.mac, ch.profile, ch.data_id, {}, parsed->authentic, 0, tag).ok())
      ok = crypto::ct_equal_bits(ByteSpan(tag.data(), (bits + 7) / 8),
                                 ByteSpan(parsed->tag.data(), (bits + 7) / 8), bits);
  }
  if (!ok) return Err(Rejection::kMacMismatch);
  const TimePoint stamp = from_us(stamp_us);
  if (ch.max_age != Duration::zero()) {
    // The cycle must have started within max_age of our clock (either side).
    if (!now) return Err(Rejection::kStale);
    const std::int64_t skew = now->ns() - stamp.ns();
    if (skew > ch.max_age.ns() || -skew > ch.max_age.ns()) return Err(Rejection::kStale);
  }
  if (ch.have && trip == ch.trip && reset == ch.reset) return SyncOutcome::kDuplicate;
  if (ch.have_prev && trip == ch.prev_trip && reset == ch.prev_reset) return SyncOutcome::kDuplicate;
  if (ch.have && !epoch_less(ch.trip, ch.reset, trip, reset)) return Err(Rejection::kReplay);
  // Persist the new floor before acting on it.
  PersistedState next = persisted_;
  bool found = false;
  for (auto& r : next.rx) {
    if (r.channel == channel) {
      r.trip = trip;
      r.reset = reset;
      found = true;
    }
  }
  if (!found) next.rx.push_back({channel, trip, reset});
  if (!store_.save(next).ok()) return Err(Rejection::kStateStore);
  persisted_ = std::move(next);
  ch.have_prev = ch.have;
  ch.prev_trip = ch.trip;
  ch.prev_reset = ch.reset;
  ch.have = true;
  ch.trip = trip;
  ch.reset = reset;
  ch.cycle_start = stamp;
  for (auto& p : rx_) {
    if (!p.present || !p.has_channel || p.channel != channel || !p.profile.freshness.has_freshness())
      continue;
    if (!p.st.synchronised || epoch_less(p.st.last.trip, p.st.last.reset, trip, reset)) {
      if (p.st.synchronised) p.prev = {true, p.st.last, p.bitmap, p.cycle_start};
      p.st.synchronised = true;
      p.st.last = {trip, reset, 0};
      p.bitmap.reset(0);
      p.cycle_start = stamp;
    } else if (p.st.last.trip == trip && p.st.last.reset == reset) {
      p.cycle_start = stamp;  // reached by a next-cycle candidate: now exact
    }
  }
  return SyncOutcome::kAccepted;
}

std::string Engine::describe() const {
  std::string out = config_.describe();
  for (const auto& g : groups_) {
    out += "  keys of group " + g.name() + ": ";
    out += g.current().live ? "current id " + std::to_string(g.current().key_id) : "no key";
    if (g.previous().live) out += ", previous id " + std::to_string(g.previous().key_id) + " (rollover)";
    out += "\n";
  }
  out += "  sender freshness: trip " + std::to_string(trip_) + " reset " + std::to_string(reset_) +
         (trip_exhausted_ ? " EXHAUSTED (new key required)" : "") + "\n";
  return out;
}

bool Engine::set_rx_freshness(std::uint32_t pdu_id, const FreshnessCounters& c,
                              std::optional<TimePoint> cycle_start) {
  if (pdu_id >= rx_.size() || !rx_[pdu_id].present) return false;
  RxPdu& p = rx_[pdu_id];
  p.st.synchronised = true;
  p.st.last = c;
  p.bitmap.reset(c.msg);
  p.prev.valid = false;
  p.cycle_start = cycle_start;
  return true;
}

RxFreshnessState Engine::rx_freshness(std::uint32_t pdu_id) const {
  if (pdu_id >= rx_.size() || !rx_[pdu_id].present) return {};
  return rx_[pdu_id].st;
}

FreshnessCounters Engine::next_tx_freshness(std::uint32_t pdu_id) const {
  if (pdu_id >= tx_.size() || !tx_[pdu_id].present) return {};
  return {trip_, reset_, tx_[pdu_id].msg + 1};
}

const VerifyCounters& Engine::pdu_counters(std::uint32_t pdu_id) const {
  static const VerifyCounters kEmpty;
  if (pdu_id >= rx_.size() || !rx_[pdu_id].present) return kEmpty;
  return rx_[pdu_id].counters;
}

const PduProfile* Engine::tx_profile(std::uint32_t pdu_id) const {
  return pdu_id < tx_.size() && tx_[pdu_id].present ? &tx_[pdu_id].profile : nullptr;
}

const PduProfile* Engine::rx_profile(std::uint32_t pdu_id) const {
  return pdu_id < rx_.size() && rx_[pdu_id].present ? &rx_[pdu_id].profile : nullptr;
}

}  // namespace layersec::secoc
