// Loss and recovery runner. See recovery_attacks.h; the channels are in
// restart_channel.h (here without state files).
#include "layersec/attack/recovery_attacks.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/restart_channel.h"

namespace layersec::attack {
namespace {

using detail::Channel;
using detail::Verdict;
using detail::Wire;

using Factory = std::function<std::unique_ptr<Channel>()>;

std::vector<Factory> channels(std::uint64_t seed) {
  using namespace detail;
  return {
      [seed] { return make_secoc_channel(SecocFreshness::kCounter, seed, {}); },
      [seed] { return make_secoc_channel(SecocFreshness::kTimestamp, seed, {}); },
      [seed] { return make_macsec_channel(MacsecSuite::kGcmAes128, seed, {}); },
      [seed] { return make_sv_channel(seed); },
  };
}

AttackRow new_row(const Channel& ch, std::string cls) {
  AttackRow r;
  r.layer = ch.info().layer;
  r.configuration = ch.info().configuration;
  r.attack_class = std::move(cls);
  return r;
}

// Hands a legitimate frame to the receiver; a data frame is counted
// delivered or lost (with the receiver's reason in rejected). Returns whether
// it was delivered.
bool pass(Channel& ch, const Wire& w, AttackRow& row) {
  const Verdict v = ch.deliver(w);
  if (w.control) return v.delivered;
  if (v.delivered && v.seq == w.seq) {
    ++row.legit_delivered;
    return true;
  }
  ++row.legit_lost;
  ++row.rejected[v.reason.empty() ? std::string("wrong_frame") : v.reason];
  return false;
}

// Emits until `n` data frames came out, calling fn for every frame. Throws
// when the sender stops sending (a set-up failure, not a row).
void frames(Channel& ch, std::uint64_t n, const std::function<void(const Wire&)>& fn) {
  std::uint64_t data = 0;
  std::uint64_t idle = 0;
  while (data < n) {
    const auto ws = ch.emit();
    bool any = false;
    for (const Wire& w : ws) {
      if (!w.control) {
        ++data;
        any = true;
      }
      fn(w);
    }
    if (!any && ++idle > 1000) throw std::runtime_error("recovery attack: the sender stopped sending");
  }
}

void start(Channel& ch, AttackRow& row) {
  if (ch.start_sender(true) || ch.start_receiver(true)) throw std::runtime_error("recovery attack: start failed");
  // Warm-up: two sync periods (counter freshness) or 64 frames.
  const std::uint64_t warm =
      ch.info().sync_period ? static_cast<std::uint64_t>(2 * ch.info().sync_period->ns() / ch.info().interval.ns()) : 64;
  frames(ch, warm, [&](const Wire& w) { pass(ch, w, row); });
  row.legit_delivered = 0;
  row.legit_lost = 0;
  row.rejected.clear();
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", v);
  return buf;
}

AttackRow loss_burst(Channel& ch, std::uint64_t a, std::uint64_t n, std::mt19937_64& rng) {
  const auto& info = ch.info();
  AttackRow row = new_row(ch, "L.loss-burst-" + std::to_string(n));
  start(ch, row);
  // Give up on a burst after three sync periods (or 10,000 frames).
  const std::uint64_t limit =
      info.sync_period ? static_cast<std::uint64_t>(3 * info.sync_period->ns() / info.interval.ns()) : 10000;
  const std::uint64_t period_frames =
      info.sync_period ? static_cast<std::uint64_t>(info.sync_period->ns() / info.interval.ns()) : 1;
  std::uint64_t dropped = 0;
  std::uint64_t bursts = 0;
  std::uint64_t unrecovered = 0;
  double worst = 0;
  while (dropped < a) {
    // A random phase of the sync period (or a few frames) before each burst.
    const std::uint64_t gap = rng() % (info.sync_period && n + 1 >= info.window ? period_frames : 8);
    frames(ch, gap, [&](const Wire& w) { pass(ch, w, row); });
    const std::uint64_t len = std::min(n, a - dropped);
    frames(ch, len, [](const Wire&) {});  // dropped at the switch, sync messages too
    dropped += len;
    ++bursts;
    std::optional<TimePoint> first_after;
    bool back = false;
    std::uint64_t steps = 0;
    std::uint64_t tail = 0;
    const std::uint64_t tail_len = 1 + rng() % 8;  // frames checked after recovery (and the burst phase)
    while (steps < limit && tail < tail_len) {
      ++steps;
      for (const Wire& w : ch.emit()) {
        const bool ok = pass(ch, w, row);
        if (w.control) continue;
        if (!first_after) first_after = w.sent;
        if (ok && !back) {
          back = true;
          worst = std::max(worst, (w.sent - *first_after).ms());
        }
      }
      if (back) ++tail;
    }
    if (!back) {
      ++unrecovered;
      worst = std::max(worst, Duration::nanoseconds(info.interval.ns() * static_cast<std::int64_t>(limit)).ms());
    }
  }
  row.attempts = dropped;
  row.recovery_ms = worst;
  const bool beyond = info.sync_period.has_value() && n + 1 >= info.window;
  row.loss_allowed = beyond;
  row.note = "drop " + std::to_string(n) + " consecutive frames at the switch" +
             (info.sync_period ? " (sync messages too), " : ", ") + std::to_string(bursts) + " bursts; " +
             (beyond ? "beyond W=" + std::to_string(info.window) + ", loss allowed until the next sync (period " +
                           ms(info.sync_period->ms()) + ")"
                     : std::string("no frame after a burst may be refused")) +
             "; recovery_ms = worst time from the first frame after a burst to the first delivered" +
             (unrecovered > 0 ? "; NOT RECOVERED after " + std::to_string(unrecovered) + " bursts" : std::string());
  return row;
}

AttackRow reorder(Channel& ch, std::uint64_t a, std::mt19937_64& rng) {
  const auto& info = ch.info();
  AttackRow row = new_row(ch, "L.reorder-in-window");
  start(ch, row);
  const std::uint64_t maxk = info.window >= 3 ? info.window - 1 : 2;
  for (std::uint64_t i = 0; i < a; ++i) {
    const std::size_t k = static_cast<std::size_t>(2 + rng() % (maxk - 1));
    std::vector<Wire> held;
    frames(ch, k, [&](const Wire& w) {
      if (w.control) {
        pass(ch, w, row);  // a sync message overtakes the held frames
      } else {
        held.push_back(w);
      }
    });
    std::vector<std::size_t> order(held.size());
    for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::shuffle(order.begin(), order.end(), rng);
    if (std::is_sorted(order.begin(), order.end())) std::swap(order.front(), order.back());
    ++row.attempts;
    for (const std::size_t j : order) pass(ch, held[j], row);
  }
  if (info.window == 0) {
    row.loss_allowed = true;
    row.note = "swap two consecutive frames, " + std::to_string(a) +
               " times: no reorder window (a secured stream takes only a frameCounter above its floor), "
               "the later-sent frame is refused by design";
  } else {
    row.note = "deliver " + std::to_string(a) + " blocks of 2.." + std::to_string(maxk) +
               " frames shuffled (inside W=" + std::to_string(info.window) + "): every frame must be delivered";
  }
  return row;
}

AttackRow duplicate(Channel& ch, std::uint64_t a, std::mt19937_64& rng) {
  const auto& info = ch.info();
  AttackRow row = new_row(ch, "L.duplicate");
  start(ch, row);
  const std::size_t depth = std::max<std::size_t>(info.window, 1);
  std::deque<Wire> recent;
  for (std::uint64_t i = 0; i < a; ++i) {
    frames(ch, 1, [&](const Wire& w) {
      pass(ch, w, row);
      if (w.control) return;
      recent.push_back(w);
      if (recent.size() > depth) recent.pop_front();
    });
    const Wire& dup = recent[recent.size() - 1 - static_cast<std::size_t>(rng() % recent.size())];
    ++row.attempts;
    const Verdict v = ch.deliver(dup);
    if (v.delivered) {
      ++row.accepted;
    } else {
      ++row.rejected[v.reason];
    }
  }
  row.note = "deliver each frame again 0.." + std::to_string(depth - 1) + " frames later (" + info.description +
             "): accepted = copies delivered";
  return row;
}

}  // namespace

std::vector<AttackRow> run_recovery_attacks(const AttackOptions& options) {
  const std::uint64_t a = std::max<std::uint64_t>(options.attempts, 1);
  std::vector<AttackRow> rows;
  std::uint64_t salt = 0;
  for (const Factory& make : channels(options.seed)) {
    using Class = std::function<AttackRow(Channel&, std::mt19937_64&)>;
    std::vector<Class> classes;
    for (const std::uint64_t n : std::initializer_list<std::uint64_t>{1, 10, 100, 1000}) {
      classes.push_back([a, n](Channel& c, std::mt19937_64& r) { return loss_burst(c, a, n, r); });
    }
    classes.push_back([a](Channel& c, std::mt19937_64& r) { return reorder(c, a, r); });
    classes.push_back([a](Channel& c, std::mt19937_64& r) { return duplicate(c, a, r); });
    for (const Class& cls : classes) {
      std::mt19937_64 rng(detail::mix64(options.seed * 1000 + ++salt));
      std::unique_ptr<Channel> ch = make();
      rows.push_back(cls(*ch, rng));
    }
  }
  return rows;
}

}  // namespace layersec::attack
