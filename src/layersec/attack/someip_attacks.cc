#include "layersec/attack/someip_attacks.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/someip_attack_bed.h"
#include "layersec/attack/someip_fresh_attacks.h"
#include "layersec/attack/someip_mc_attacks.h"
#include "layersec/attack/someip_rr_attacks.h"
#include "layersec/base/bytes.h"
#include "layersec/net/sim.h"
#include "layersec/secoc/profile.h"

namespace layersec::attack {

namespace {

using namespace someip_bed;  // NOLINT(google-build-using-namespace): the runner's own bed

constexpr ConfigInfo kConfigs[] = {
    {Config::kUnsecured, "someip", "someip-unsecured"},
    {Config::kCounter, "secoc", "secoc-vendor-counter"},
    {Config::kTimestamp, "secoc", "secoc-vendor-timestamp"},
    {Config::kProfile1, "secoc", "secoc-profile1-counter"},
    {Config::kProfile2, "secoc", "secoc-profile2"},
    {Config::kProfile3, "secoc", "secoc-profile3-counter"},
    {Config::kAead, "secoc", "secoc-aead-gcm-counter"},
    {Config::kHybrid, "hybrid", "hybrid-vendor-macsec-hop"},
    {Config::kHybridAead, "hybrid", "hybrid-aead-gcm-macsec-hop"},
};

void run_config(const ConfigInfo& info, const AttackOptions& options, std::vector<AttackRow>& rows) {
  const std::uint64_t n = options.attempts;
  const bool unsecured = info.config == Config::kUnsecured;
  Bed bed(info.config, options.seed);
  net::SimRng rng(options.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(info.config));
  auto row_for = [&](const char* cls, std::string note) { return make_row(info, cls, std::move(note)); };
  const secoc::PduProfile prof = bed.profile();
  const std::size_t trailer = bed.trailer_bytes();
  const std::size_t trailer_at_end = trailer;  // the trailer ends the message
  // Profile 2 sends no FV and keeps no freshness: replays verify by design.
  const bool no_freshness = info.config == Config::kProfile2;
  auto replay_row = [&](const char* cls, std::string note) {
    AttackRow r = row_for(cls, std::move(note));
    if (no_freshness) {
      r.acceptance_expected = true;
      r.note += " (profile 2: no FV, no replay protection by design)";
    }
    return r;
  };

  {  // A1: wiretap on every link; is a notification payload readable?
    const bool hidden = is_hybrid(info.config) || is_aead(info.config);
    AttackRow r = row_for("A1.passive", unsecured ? "every frame on the wire captured: payload readable (no protection)"
                                        : is_hybrid(info.config) ? "every frame on the wire captured: MACsec hides the payload"
                                        : hidden ? "every frame on the wire captured: aead-gcm encrypts the payload"
                                                  : "every frame on the wire captured: payload readable (SecOC: integrity only)");
    r.acceptance_expected = !hidden;
    bed.begin();
    WireTap& tap = bed.tap();
    tap.first = bed.next_seq();
    tap.count = static_cast<std::uint32_t>(n);
    tap.frames = 0;
    tap.readable = 0;
    tap.on = true;
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_legit();
      bed.sim().run_for(Duration::milliseconds(1));
    }
    tap.on = false;
    bed.end(r);
    r.rejected.clear();
    r.attempts = tap.frames;
    r.accepted = tap.readable;
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = replay_row("A2.replay.immediate", "each notification re-sent at once after the original");
    run_injected(bed, r, n, [&](std::uint64_t) { return bed.attacker().last; });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = replay_row("A2.replay.delayed", "notifications recorded, re-sent 1.5 s later (beyond maxAge 1 s)");
    std::vector<std::vector<std::uint8_t>> history;
    const std::uint64_t keep = std::min<std::uint64_t>(n, kDelayedHistory);
    bed.begin();
    for (std::uint64_t i = 0; i < keep; ++i) {
      bed.send_legit();
      bed.sim().run_for(Duration::milliseconds(1));
      history.push_back(bed.attacker().last);
    }
    bed.sim().run_for(Duration::milliseconds(1500));
    bed.end(r);  // the recording phase: legitimate only
    AttackRow replay = replay_row("A2.replay.delayed", r.note);
    run_injected(bed, replay, n, [&](std::uint64_t i) { return history[i % history.size()]; });
    replay.legit_delivered += r.legit_delivered;
    replay.legit_lost += r.legit_lost;
    rows.push_back(std::move(replay));
  }
  {
    AttackRow r = row_for("A2.bitflip.someip-header",
                          "one bit flipped in a header field (service, event, length, client, session, "
                          "protocol, interface, type, return code in turn; a shorter length splits the datagram: "
                          "two refusals for one frame)");
    struct Field {
      std::size_t off, len;
    };
    constexpr Field kFields[] = {{0, 2}, {2, 2}, {4, 4}, {8, 2}, {10, 2}, {12, 1}, {13, 1}, {14, 1}, {15, 1}};
    std::uint64_t k = 0;
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const Field fd = kFields[k++ % std::size(kFields)];
      flip_in(f, kSomeip + fd.off, fd.len, rng);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.bitflip.payload", "one bit flipped in the notification payload");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) { flip_in(f, kPayload, kPayloadBytes, rng); });
    rows.push_back(std::move(r));
  }
  if (!unsecured) {
    {
      if (prof.freshness.tx_bits > 0) {
        AttackRow r = row_for("A2.bitflip.fv", "one bit flipped in the truncated freshness value");
        run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
          flip_bits(f, f.size() - trailer_at_end, 0, prof.freshness.tx_bits, rng);
        });
        rows.push_back(std::move(r));
      }
    }
    {
      AttackRow r = row_for("A2.bitflip.mac", is_aead(info.config) ? "one bit flipped in the truncated GCM tag"
                                                                  : "one bit flipped in the truncated MAC");
      run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
        flip_bits(f, f.size() - trailer_at_end, prof.freshness.tx_bits, prof.auth_info_tx_length, rng);
      });
      rows.push_back(std::move(r));
    }
  }
  {
    AttackRow r = row_for("A2.truncate", "1..24 bytes cut from the message end, lengths fixed");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const std::size_t body = f.size() - kPayload;
      const std::size_t cut = 1 + static_cast<std::size_t>(rng.uniform(std::min<std::size_t>(body, 24)));
      f.resize(f.size() - cut);
      fix_lengths(f);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.extend", "1..16 random bytes appended to the message, lengths fixed");
    run_in_flight(bed, r, n, [&](std::vector<std::uint8_t>& f) {
      const std::size_t add = 1 + static_cast<std::size_t>(rng.uniform(16));
      for (std::size_t i = 0; i < add; ++i) f.push_back(static_cast<std::uint8_t>(rng.next_u64()));
      fix_lengths(f);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.forge.wrong-key", unsecured ? "notification with the attacker's payload injected"
                                                          : "notification protected under the attacker's own key, "
                                                            "fresh FV, injected");
    run_injected(bed, r, n, [&](std::uint64_t i) {
      bed.align_forger();
      return bed.forge(i);
    });
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = replay_row("A2.holdback.release",
                          "one notification in two held back 2 s, released behind the live stream");
    bed.begin();
    bed.attacker().hold = Duration::seconds(2);
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_target();
      bed.sim().run_for(kGap);
      bed.send_legit();
      bed.sim().run_for(kGap);
    }
    bed.sim().run_for(Duration::milliseconds(2100));  // every held frame is released
    r.attempts = bed.attacker().altered;
    bed.end(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = replay_row("A2.holdback.all", "every notification held back 2 s, then released in order");
    bed.begin();
    bed.attacker().hold = Duration::seconds(2);
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_target();
      bed.sim().run_for(Duration::milliseconds(1));
    }
    bed.sim().run_for(Duration::milliseconds(2100));
    r.attempts = bed.attacker().altered;
    bed.end(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = row_for("A2.relabel.unbound-id", "event id relabelled to 0x8002 (no binding) in flight");
    run_in_flight(bed, r, n, [](std::vector<std::uint8_t>& f) { store_be16(&f[kSomeip + 2], kUnboundEvent); });
    rows.push_back(std::move(r));
  }
  run_fresh_classes(bed, info, options, rows);
  run_rr_classes(bed, info, options, rows);
}

}  // namespace

std::vector<AttackRow> run_someip_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  for (const auto& info : kConfigs) run_config(info, options, rows);
  for (auto& r : run_someip_multicast_attacks(options)) rows.push_back(std::move(r));
  return rows;
}

}  // namespace layersec::attack
