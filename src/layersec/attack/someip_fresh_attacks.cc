#include "layersec/attack/someip_fresh_attacks.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/net/sim.h"
#include "layersec/secoc/profile.h"

namespace layersec::attack::someip_bed {

namespace {

// Real sync hold-backs cost two sync periods each: capped (the note says so).
constexpr std::uint64_t kMaxHoldbacks = 8;
// After-wrap replay only where a wrap is short: 2^FVtx notifications.
constexpr unsigned kMaxWrapBits = 8;

// A3: the switch decrypts MACsec (it is the MACsec peer of every link) and
// reads what it forwards; alters SOME/IP or SecOC bytes and re-encrypts.
void run_a3(Bed& bed, const ConfigInfo& info, std::uint64_t n, net::SimRng& rng, std::vector<AttackRow>& rows) {
  {
    const bool aead = is_aead(info.config);
    AttackRow r = make_row(info, "A3.switch.read-plaintext",
                           aead ? "switch holding the MACsec keys reads every notification: aead-gcm hides the payload"
                                : "switch holding the MACsec keys reads every notification: payload readable "
                                  "(SecOC integrity only)");
    r.acceptance_expected = !aead;
    bed.begin();
    Attacker& a = bed.attacker();
    a.reading = true;
    a.read_first = bed.next_seq();
    a.read_count = static_cast<std::uint32_t>(n);
    a.read_frames = 0;
    a.read_plain = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_legit();
      bed.sim().run_for(kGap);
    }
    a.reading = false;
    bed.end(r);
    r.rejected.clear();
    r.attempts = a.read_frames;
    r.accepted = a.read_plain;
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A3.switch.alter",
                           "switch holding the MACsec keys alters 1..4 random bytes of SOME/IP header, payload or "
                           "SecOC trailer, re-encrypts");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const std::size_t span = f.size() - kSomeip;
      const std::uint64_t k = 1 + rng.uniform(4);
      // Distinct positions, each XORed with a non-zero byte: never a no-op.
      // (With positions drawn independently two alterations of one byte can
      // cancel and leave the frame as sent: at 100,000 attempts that
      // delivered 3-5 unaltered originals, which counted as accepted.)
      std::vector<std::size_t> at;
      while (at.size() < k && at.size() < span) {
        const std::size_t pos = kSomeip + static_cast<std::size_t>(rng.uniform(span));
        if (std::find(at.begin(), at.end(), pos) == at.end()) at.push_back(pos);
      }
      for (const std::size_t pos : at) f[pos] ^= static_cast<std::uint8_t>(1 + rng.uniform(255));
    });
    rows.push_back(std::move(r));
  }
}

// Records 2^FVtx consecutive notifications, lets the transmitted counter
// bits wrap once more, then replays each recorded one (a legitimate one
// beside each): the truncated FV matches, the receiver reconstructs a
// larger FV and the MAC fails.
void run_after_wrap(Bed& bed, const ConfigInfo& info, std::uint64_t n, std::vector<AttackRow>& rows) {
  const unsigned bits = bed.profile().freshness.tx_bits;
  const std::uint64_t wrap = std::uint64_t{1} << bits;
  AttackRow r = make_row(info, "A2.replay.after-wrap",
                         "notification recorded at FV x, replayed after the " + std::to_string(bits) +
                             " transmitted FV bits wrapped (" + std::to_string(wrap) +
                             "+ notifications later; short-FV profiles only)");
  bed.begin();
  std::uint64_t replayed = 0;
  std::vector<std::vector<std::uint8_t>> history;
  while (replayed < n) {
    history.clear();
    for (std::uint64_t i = 0; i < wrap; ++i) {
      bed.send_legit();
      bed.sim().run_for(kGap);
      history.push_back(bed.attacker().last);
    }
    for (std::uint64_t i = 0; i < wrap; ++i) {
      bed.send_legit();
      bed.sim().run_for(kGap);
    }
    for (std::uint64_t i = 0; i < wrap && replayed < n; ++i, ++replayed) {
      bed.inject(history[i]);
      bed.sim().run_for(kGap);
      bed.send_legit();
      bed.sim().run_for(kGap);
    }
  }
  r.attempts = replayed;
  bed.end(r);
  rows.push_back(std::move(r));
}

// Sync classes: `accepted` = sync messages the subscriber applied beyond the
// legitimate ones that reached it untouched.
struct SyncCount {
  std::uint64_t legit = 0;
};

void finish_sync_row(Bed& bed, AttackRow& r, const SyncCount& c) {
  const std::uint64_t applied = bed.syncs_applied();
  bed.end(r);
  const std::uint64_t attacker = applied > c.legit ? applied - c.legit : 0;
  r.accepted += attacker;
  // end() counted every subscriber counter; an applied forgery is not uncounted.
  if (attacker > 0 && r.rejected.count("uncounted") != 0) {
    const std::uint64_t u = r.rejected["uncounted"];
    if (u <= attacker) r.rejected.erase("uncounted");
    else r.rejected["uncounted"] = u - attacker;
  }
}

// One legitimate notification, then one injected sync, per attempt.
template <typename Make>
void run_sync_injected(Bed& bed, AttackRow& r, std::uint64_t n, Make make) {
  SyncCount c;
  bed.begin();
  bed.attacker().sync = [&c](std::vector<std::uint8_t>&) {
    ++c.legit;
    return net::HookVerdict::forward();
  };
  for (std::uint64_t i = 0; i < n; ++i) {
    bed.send_legit();
    bed.sim().run_for(kGap);
    bed.inject(make(i));
    bed.sim().run_for(kGap);
  }
  r.attempts = n;
  bed.attacker().sync = nullptr;
  finish_sync_row(bed, r, c);
}

void run_sync(Bed& bed, const ConfigInfo& info, std::uint64_t n, net::SimRng& rng, std::vector<AttackRow>& rows) {
  {
    AttackRow r = make_row(info, "A2.sync.replay",
                           "sync messages recorded, each replayed after a newer one was applied (1.2 s later)");
    std::vector<std::vector<std::uint8_t>> old;
    bed.begin();
    bed.attacker().sync = [&old](std::vector<std::uint8_t>& f) {
      old.push_back(f);
      return net::HookVerdict::forward();
    };
    bed.sim().run_for(Duration::milliseconds(1100));
    bed.attacker().sync = nullptr;
    bed.sim().run_for(Duration::milliseconds(1200));  // a newer sync reached the subscriber
    AttackRow rec;
    bed.end(rec);
    if (old.empty()) old.push_back(bed.attacker().last_sync);
    run_sync_injected(bed, r, n, [&old](std::uint64_t i) { return old[i % old.size()]; });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.sync.forge",
                           "sync message of a new reset cycle under the attacker's own key, injected");
    run_sync_injected(bed, r, n, [&bed](std::uint64_t) { return bed.forge_sync(); });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.sync.bitflip",
                           "copy of the current sync message with one bit flipped in its SecOC PDU, injected");
    run_sync_injected(bed, r, n, [&bed, &rng](std::uint64_t) {
      std::vector<std::uint8_t> f = bed.attacker().last_sync;
      flip_in(f, kSomeip + 16, f.size() - kSomeip - 16, rng);
      net::refresh_checksums(f);
      return f;
    });
    rows.push_back(std::move(r));
  }
  {
    const std::uint64_t k = std::min<std::uint64_t>(n, kMaxHoldbacks);
    AttackRow r = make_row(info, "A2.sync.holdback",
                           "every other sync message held back 1.5 s (beyond maxAge 1 s), then released; " +
                               std::to_string(k) +
                               " hold-backs (each costs two sync periods); the receiver misses that reset cycle "
                               "until the next sync, so legitimate loss is allowed; 20 more must arrive afterwards");
    r.loss_allowed = true;
    SyncCount c;
    std::uint64_t held = 0;
    bed.begin();
    bool hold_next = true;  // one sync held, the next one passes
    bed.attacker().sync = [&](std::vector<std::uint8_t>&) {
      const bool hold = hold_next && held < k;
      hold_next = !hold_next;
      if (hold) {
        ++held;
        return net::HookVerdict::delayed(Duration::milliseconds(1500));
      }
      ++c.legit;
      return net::HookVerdict::forward();
    };
    while (held < k) {
      // Releases come back through no hook: the next sync passes untouched
      // (legit) half the time, the held one is judged behind it.
      for (int i = 0; i < 20; ++i) {
        bed.send_legit();
        bed.sim().run_for(Duration::milliseconds(50));
      }
    }
    bed.sim().run_for(Duration::milliseconds(1600));
    // Afterwards legitimate traffic must flow again: one more sync, then 20.
    const std::uint64_t legit_before = c.legit;
    while (c.legit == legit_before) bed.sim().run_for(Duration::milliseconds(50));
    bed.sim().run_for(Duration::milliseconds(10));
    r.attempts = held;
    bed.attacker().sync = nullptr;
    AttackRow after = make_row(info, "after", "");
    finish_sync_row(bed, r, c);
    bed.begin();
    for (int i = 0; i < 20; ++i) {
      bed.send_legit();
      bed.sim().run_for(Duration::milliseconds(1));
    }
    bed.end(after);
    r.legit_delivered += after.legit_delivered;
    r.legit_lost += after.legit_lost;
    // The recovery traffic must all arrive: a lost one there fails the row.
    if (after.legit_lost > 0) r.loss_allowed = false;
    rows.push_back(std::move(r));
  }
}

}  // namespace

void run_fresh_classes(Bed& bed, const ConfigInfo& info, const AttackOptions& options, std::vector<AttackRow>& rows) {
  const std::uint64_t n = options.attempts;
  net::SimRng rng(options.seed * 0xD1B54A32D192ED03ULL + static_cast<std::uint64_t>(info.config));
  if (is_hybrid(info.config)) run_a3(bed, info, n, rng, rows);
  const unsigned bits = bed.profile().freshness.tx_bits;
  if (counter_sync(info.config) && bits <= kMaxWrapBits) run_after_wrap(bed, info, n, rows);
  if (counter_sync(info.config)) run_sync(bed, info, n, rng, rows);
}

}  // namespace layersec::attack::someip_bed
