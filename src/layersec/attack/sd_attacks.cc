#include "layersec/attack/sd_attacks.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/sd_attacks_bed.h"
#include "layersec/net/sim.h"
#include "layersec/someip/sd_message.h"

namespace layersec::attack {

namespace {

using namespace sd_bed;  // the bed's names, in this file only

constexpr std::size_t kDelayedHistory = 64;

// --- classes ------------------------------------------------------------------

using Judge = std::function<bool(const Probe& before, const Probe& after)>;

// The visible harm of an attempt: the client lost the service or a
// notification, the server's subscriber set changed, or something reached
// the attacker or the victim.
Judge visible_harm(Bed& bed) {
  return [&bed](const Probe& b, const Probe& a) {
    return a.downs != b.downs || a.lost != b.lost || a.attacker_subscribes != b.attacker_subscribes ||
           a.attacker_requests != b.attacker_requests || a.attacker_events != b.attacker_events ||
           a.victim_events != b.victim_events || a.extra != b.extra || !bed.healthy();
  };
}

struct ClassRun {
  Bed& bed;
  Judge judge;
  bool recover = true;          // after an accepted attempt, wait for the service to return
  bool count_unrefused = false;  // an attempt no counter refused changed hidden state (Nack)
  std::uint64_t attempts = 0;
  std::uint64_t accepted = 0;
  std::optional<double> worst_ms;
  std::optional<TimePoint> act_at;  // when the hook altered the frame of this attempt
  std::map<std::string, std::uint64_t> rejected_before;
  std::uint64_t sent_before = 0;
  std::uint64_t delivered_before = 0;

  explicit ClassRun(Bed& b) : bed(b), judge(visible_harm(b)) {
    rejected_before = bed.rejections();
    sent_before = bed.legit_sent();
    delivered_before = bed.delivered();
  }

  // One attempt: `act` makes it (false: none was made), then 12 ms of
  // traffic, the judgement and, if it did harm, the recovery.
  void attempt(const std::function<bool()>& act) {
    const Probe before = bed.probe();
    act_at.reset();
    if (!act()) return;
    // Recovery counts from the alteration (in flight) or the injection.
    const TimePoint t0 = act_at.value_or(bed.sim().now());
    ++attempts;
    bed.advance(Duration::milliseconds(12));
    const Probe after = bed.probe();
    const bool harm = judge(before, after);
    if (harm || (count_unrefused && after.rejected == before.rejected)) ++accepted;
    if (!harm || !recover) return;
    bool ok = bed.advance_until([&] { return bed.healthy(); }, Duration::seconds(5));
    const std::uint64_t d = bed.delivered();
    ok = ok && bed.advance_until([&] { return bed.delivered() > d; }, Duration::seconds(1));
    if (!ok) {
      recover = false;  // the service did not come back: no more waiting
      return;
    }
    const double ms = static_cast<double>((bed.sim().now() - t0).ns()) / 1e6;
    worst_ms = std::max(worst_ms.value_or(0.0), ms);
  }
  // Alters (or, with a null `alter`, captures) the next SD frame `match` selects.
  bool in_flight(SdHook::Match match, SdHook::Alter alter) {
    SdHook& h = bed.hook();
    h.match = std::move(match);
    h.alter = std::move(alter);
    const std::uint64_t fired = h.fired;
    h.armed = true;
    // Checked every 5 ms: the judgement window starts at most 5 ms after the
    // alteration, and the harm it did lasts until the service recovers.
    const bool ok = bed.advance_until([&] { return h.fired > fired; }, Duration::seconds(2), Duration::milliseconds(5));
    h.armed = false;
    if (ok) act_at = h.fired_at;
    return ok;
  }

  void finish(AttackRow& row) {
    bed.advance(Duration::milliseconds(20));
    row.attempts = attempts;
    row.accepted = accepted;
    for (const auto& [k, n] : bed.rejections()) {
      auto it = rejected_before.find(k);
      const std::uint64_t d = n - (it == rejected_before.end() ? 0 : it->second);
      if (d > 0) row.rejected[k] = d;
    }
    row.legit_delivered = bed.delivered() - delivered_before;
    row.legit_lost = (bed.legit_sent() - sent_before) - row.legit_delivered;
    row.recovery_ms = worst_ms;
    const std::uint64_t judged = row.accepted + total_rejected(row);
    if (row.attempts > judged) row.rejected["uncounted"] = row.attempts - judged;
  }
};

SdHook::Match from_with_entry(std::uint32_t host, std::uint8_t type) {
  return [host, type](const std::vector<std::uint8_t>& f, net::Ipv4Address src) {
    return src == ip4(host) && find_entry(f, type) != 0;
  };
}
SdHook::Match from_host(std::uint32_t host, bool need_options = false) {
  return [host, need_options](const std::vector<std::uint8_t>& f, net::Ipv4Address src) {
    return src == ip4(host) && entries_len(f) > 0 && (!need_options || options_of(f).second > 0);
  };
}
// Zeroes the TTL of every entry of `type`: Offer -> StopOffer, Ack -> Nack,
// Subscribe -> StopSubscribe.
SdHook::Alter zero_ttl(std::uint8_t type) {
  return [type](std::vector<std::uint8_t>& f) {
    const std::size_t n = entries_len(f);
    for (std::size_t e = kEntries; e + kEntrySize <= kEntries + n; e += kEntrySize)
      if (f[e] == type) f[e + 9] = f[e + 10] = f[e + 11] = 0;
  };
}
void flip_in(std::vector<std::uint8_t>& f, std::size_t from, std::size_t len, net::SimRng& rng) {
  const std::uint64_t bit = rng.uniform(len * 8);
  f[from + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
}

void run_config(bool prot, const AttackOptions& options, std::vector<AttackRow>& rows) {
  const std::uint64_t n = options.attempts;
  const std::uint64_t seed = options.seed;
  net::SimRng rng(seed * 0x9E3779B97F4A7C15ULL + (prot ? 2 : 1));
  auto row_for = [&](const char* cls, bool succeeds_unprotected, std::string note) {
    AttackRow r;
    r.layer = prot ? "secoc" : "someip";
    r.configuration = prot ? "sd-protected" : "sd-unprotected";
    r.attack_class = cls;
    r.acceptance_expected = !prot && succeeds_unprotected;
    r.loss_allowed = r.acceptance_expected;
    r.note = std::move(note);
    return r;
  };
  auto discovered = [&](bool start_server = true) {
    auto b = std::make_unique<Bed>(prot, seed, start_server);
    if (start_server) b->require_discovered();
    return b;
  };

  {
    AttackRow r = row_for("A2.sd.offer-hijack", false,
                          "the server's offers rewritten in flight to name the attacker's endpoint (from the "
                          "server's address, its own sessions)");
    auto bed = discovered();
    ClassRun c(*bed);
    const auto from = ipa(kServer), to = ipa(kAttackerHost);
    for (std::uint64_t i = 0; i < n; ++i)
      c.attempt([&] {
        return c.in_flight(from_with_entry(kServer, 0x01), [&](std::vector<std::uint8_t>& f) {
          // IPv4 endpoint option: Length 0x0009, Type 0x04, Reserved, address.
          const std::uint8_t head[] = {0x00,          0x09,          0x04,          0x00,
                                       from.bytes[0], from.bytes[1], from.bytes[2], from.bytes[3]};
          for (auto it = std::search(f.begin(), f.end(), std::begin(head), std::end(head)); it != f.end();
               it = std::search(it + 1, f.end(), std::begin(head), std::end(head)))
            std::copy(to.bytes.begin(), to.bytes.begin() + 4, it + 4);
        });
      });
    c.finish(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.sd.offer-before-start", true,
                          std::string("the attacker host offers the service (its own endpoint) before the server "
                                      "starts (3 offers, 100 ms apart) and every 10 ms after; accepted = the client "
                                      "subscribed to it") +
                              (prot ? " (protected under the attacker's own key)"
                                    : " (sd_dropped_offer-bound-elsewhere: the real server's offers, ignored by the "
                                      "captured client)"));
    auto bed = discovered(false);
    ClassRun c(*bed);
    c.recover = false;
    c.judge = [](const Probe& b, const Probe& a) {
      return a.attacker_subscribes != b.attacker_subscribes || a.attacker_requests != b.attacker_requests;
    };
    const net::Ipv4Endpoint client_sd{ip4(kClient), kSd};
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i == std::min<std::uint64_t>(3, n - 1)) bed->start_server();
      c.attempt([&] {
        bed->send_own(client_sd, someip::SdEntry::offer_service(kService, kInstance, 1, 0, someip::kTtlInfinite),
                      udp(kAttackerHost, kServicePort));
        return true;
      });
      if (i < 3) bed->advance(Duration::milliseconds(88));
    }
    c.finish(r);
    rows.push_back(std::move(r));
  }
  struct Convert {
    const char* cls;
    std::uint32_t from;
    std::uint8_t type;
    bool count_unrefused;
    const char* note;
  };
  const Convert converts[] = {
      {"A2.sd.stopoffer", kServer, 0x01, false,
       "the server's offer turned into a StopOffer in flight (the server's address and session)"},
      {"A2.sd.nack", kServer, 0x07, true,
       "the server's Ack turned into a Nack in flight; the runtime shows no subscription state: accepted = a Nack "
       "no counter refused"},
      {"A2.sd.stopsubscribe", kClient, 0x06, false,
       "the client's Subscribe turned into a StopSubscribe in flight (the client's address and session)"},
  };
  for (const Convert& cv : converts) {
    AttackRow r = row_for(cv.cls, true, cv.note);
    auto bed = discovered();
    ClassRun c(*bed);
    c.count_unrefused = cv.count_unrefused;
    for (std::uint64_t i = 0; i < n; ++i)
      c.attempt([&] { return c.in_flight(from_with_entry(cv.from, cv.type), zero_ttl(cv.type)); });
    c.finish(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.sd.foreign-subscribe", false,
                          std::string("Subscribes from the attacker host (not an allowed subscriber) naming its own "
                                      "endpoint, and naming the victim's, in turn") +
                              (prot ? " (protected under the attacker's own key)" : ""));
    auto bed = discovered();
    ClassRun c(*bed);
    const net::Ipv4Endpoint server_sd{ip4(kServer), kSd};
    for (std::uint64_t i = 0; i < n; ++i)
      c.attempt([&] {
        bed->send_own(server_sd,
                      someip::SdEntry::subscribe(kService, kInstance, 1, kEventgroup, someip::kTtlInfinite),
                      udp(i % 2 == 0 ? kAttackerHost : kVictim, kAttackerEventPort));
        return true;
      });
    c.finish(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.sd.replay.immediate", true,
                          "each captured SD message (the server's and the client's in turn) re-sent 1 ms later from "
                          "its sender's port");
    auto bed = discovered();
    ClassRun c(*bed);
    for (std::uint64_t i = 0; i < n; ++i)
      c.attempt([&] {
        if (!c.in_flight(from_host(i % 2 == 0 ? kServer : kClient), nullptr)) return false;
        bed->advance(Duration::milliseconds(1));
        c.act_at.reset();  // the attempt is the re-sent copy
        bed->inject(bed->hook().captured.ingress, bed->hook().captured.frame);
        return true;
      });
    c.finish(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.sd.replay.delayed", true,
                          std::string("64 SD messages recorded, re-sent from their senders' ports 1.5 s later "
                                      "(beyond maxAge 1 s), in turn") +
                              (prot ? "" : " (uncounted: replays that changed nothing visible, no counter refused)"));
    auto bed = discovered();
    ClassRun c(*bed);
    SdHook& h = bed->hook();
    h.recording = true;
    const std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(n, kDelayedHistory));
    require(bed->advance_until([&] { return h.history.size() >= keep; }, Duration::seconds(60)), "replay record");
    h.recording = false;
    std::vector<SdHook::Captured> history(h.history.begin(), h.history.begin() + static_cast<std::ptrdiff_t>(keep));
    h.history.clear();
    bed->advance(Duration::milliseconds(1500));
    for (std::uint64_t i = 0; i < n; ++i)
      c.attempt([&] {
        const auto& rec = history[i % history.size()];
        bed->inject(rec.ingress, rec.frame);
        return true;
      });
    c.finish(r);
    rows.push_back(std::move(r));
  }
  struct Alteration {
    const char* cls;
    bool need_options;
    std::string note;
    std::function<void(std::vector<std::uint8_t>&)> alter;
  };
  const Alteration alterations[] = {
      {"A2.sd.bitflip.entries", false,
       std::string("one bit flipped in the entries array of the next SD message, the server's and the client's in "
                   "turn (in flight)") +
           (prot ? "" : " (uncounted: entries of another service, instance, version or type, ignored uncounted)"),
       [&](std::vector<std::uint8_t>& f) { flip_in(f, kEntries, entries_len(f), rng); }},
      {"A2.sd.bitflip.options", true,
       "one bit flipped in the options array of the next SD message with options, the server's and the client's in "
       "turn (in flight)",
       [&](std::vector<std::uint8_t>& f) {
         const auto [at, len] = options_of(f);
         flip_in(f, at, len, rng);
       }},
      {"A2.sd.truncate", false,
       std::string("1..24 bytes cut from the end of the next SD message, the server's and the client's in turn, "
                   "lengths fixed (in flight") +
           (prot ? "; the shifted trailer reads as an older FV)" : ")"),
       [&](std::vector<std::uint8_t>& f) {
         const std::size_t body = f.size() - kSomeip - 16;
         f.resize(f.size() - 1 - static_cast<std::size_t>(rng.uniform(std::min<std::size_t>(body, 24))));
         fix_lengths(f);
       }},
  };
  for (const Alteration& al : alterations) {
    AttackRow r = row_for(al.cls, true, al.note);
    auto bed = discovered();
    ClassRun c(*bed);
    for (std::uint64_t i = 0; i < n; ++i)
      c.attempt([&] { return c.in_flight(from_host(i % 2 == 0 ? kServer : kClient, al.need_options), al.alter); });
    c.finish(r);
    rows.push_back(std::move(r));
  }
}

}  // namespace

std::vector<AttackRow> run_sd_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  for (const bool prot : {false, true}) run_config(prot, options, rows);
  return rows;
}

}  // namespace layersec::attack
