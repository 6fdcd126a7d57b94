// The fault rows (issue 15, second round). See fault_attacks.h; the disk-full
// rows are in fault_disk.cc.
//
// Set-up as the SOME/IP runner's (someip_attacks.cc): a publisher (10.0.0.1)
// and a subscriber (10.0.0.2) built by node::build_stack over SimTransport on
// one simulated switch, service 0x1234 event 0x8001 (the scenario layout),
// the vendor SecOC profile with counter freshness and a sync message every
// second (maxAge 1 s), and, for the hybrid configuration, a GCM-AES-128 SecY
// on each host and on each switch port. SD runs with a TTL of 3 s so a silent
// publisher expires. The publisher keeps its SecOC state in a real state file
// (secoc::FileStateStore in a mkdtemp directory, removed at the end), so a
// rebuilt publisher starts a new trip. Events are sent every 10 ms; every
// notification the publisher's runtime took is a legitimate message, and one
// the subscriber's handler received that is not a pending legitimate one
// (a duplicate, a stale one) counts as accepted.
#include "layersec/attack/fault_attacks.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/fault_bed.h"
#include "layersec/attack/fault_disk.h"
#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/macsec/link.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/secoc_filter.h"

namespace layersec::attack {
namespace {

using fault_bed::FaultBed;
using fault_bed::kSdTtlSeconds;
constexpr std::uint64_t kMaxCycles = 3;
constexpr std::uint64_t kMaxFlaps = 20;


void fill_row(FaultBed& bed, AttackRow& row) {
  row.accepted = bed.stray();
  row.rejected = bed.reasons();
  row.legit_delivered = bed.delivered();
  row.legit_lost = bed.legit_sent() - bed.delivered();
  if (bed.notify_refused() > 0) row.rejected["someip_notify_refused"] = bed.notify_refused();
}

double ms_between(TimePoint a, TimePoint b) { return static_cast<double>((b - a).ns()) / 1e6; }

AttackRow peer_gone_back(bool hybrid, const char* config, const AttackOptions& options, bool static_sak = false) {
  FaultBed bed(hybrid, options.seed, static_sak);
  AttackRow row;
  row.layer = "fault";
  row.configuration = config;
  row.attack_class = "F.peer-gone-back";
  row.loss_allowed = true;
  const std::uint64_t cycles = std::min<std::uint64_t>(options.attempts, static_sak ? 1 : kMaxCycles);
  double worst = 0;
  bool all_recovered = true;
  bool expired = true;
  const std::uint64_t trip_before = bed.trip();
  std::uint64_t trip_after = 0;
  for (std::uint64_t c = 0; c < cycles; ++c) {
    for (int k = 0; k < 50; ++k) bed.tick();
    bed.crash_publisher();
    ++row.attempts;
    // Silent past the SD TTL: the subscriber must see the service go.
    for (int k = 0; k < static_cast<int>(kSdTtlSeconds * 100 + 100); ++k) bed.tick();
    expired = expired && !bed.service_available();
    bed.restore_publisher();
    trip_after = bed.trip();
    const TimePoint back = bed.sim().now();
    const std::uint64_t before = bed.delivered();
    bool ok = false;
    for (int k = 0; k < 1000 && !ok; ++k) {  // up to 10 s
      bed.tick();
      ok = bed.delivered() > before;
    }
    all_recovered = all_recovered && ok;
    if (ok) worst = std::max(worst, ms_between(back, bed.sim().now()));
    for (int k = 0; k < 50; ++k) bed.tick();
  }
  fill_row(bed, row);
  if (all_recovered) {
    row.recovery_ms = worst;
  } else {
    row.rejected["not_recovered"] = 1;  // shown, and the row fails on its lost traffic
    row.loss_allowed = false;
  }
  if (static_sak) {
    // A rebuilt SecY that used a PN its previous instance had used under the
    // same SAK would repeat a GCM nonce on the wire: with the PN store its
    // first PN is above every PN used before the crash.
    const std::uint64_t used_before = bed.pn_before_crash() > 0 ? bed.pn_before_crash() - 1 : 0;
    const std::uint64_t resumed_at = bed.pn_resumed_at();
    const std::uint64_t reused = resumed_at <= used_before ? used_before - resumed_at + 1 : 0;
    if (reused > 0) {
      row.accepted = reused;  // a repeated nonce is a failure whatever the receiver did
      row.rejected["pn_reused"] = reused;
    }
    row.note = "publisher crashed and rebuilt with the same static hop SAK and its PN store "
               "(node::MacsecSpec::pn_store): " +
               std::to_string(used_before) + " PNs used before the crash, the rebuilt SecY starts at PN " +
               std::to_string(resumed_at) + " (" + std::to_string(reused) + " reused); " +
               (all_recovered ? "recovered" : "no recovery within 10 s");
    return row;
  }
  row.note = std::string("publisher crashed, silent ") + std::to_string(kSdTtlSeconds + 1) +
             " s (SD TTL " + std::to_string(kSdTtlSeconds) + " s" + (expired ? ", expired" : ", NOT expired") +
             "), rebuilt from its state file (trip " + std::to_string(trip_before) + "->" +
             std::to_string(trip_after) + "); recovery_ms = return to first event (max)" +
             (hybrid ? "; hop MACsec with the new SAKs of a returning host, subscriber SecY verified " +
                           std::to_string(bed.macsec_verified()) + " frames"
                     : "");
  return row;
}

AttackRow link_flap(bool hybrid, const char* config, const AttackOptions& options) {
  FaultBed bed(hybrid, options.seed ^ 0xF1A9ULL);
  AttackRow row;
  row.layer = "fault";
  row.configuration = config;
  row.attack_class = "F.link-flap";
  row.loss_allowed = true;
  std::mt19937_64 rng(options.seed ^ 0xF1A9F1A9ULL);
  const std::uint64_t flaps = std::min<std::uint64_t>(options.attempts, kMaxFlaps);
  double worst = 0;
  bool all_recovered = true;
  std::uint64_t longest_ms = 0;
  for (std::uint64_t f = 0; f < flaps; ++f) {
    for (int k = 0; k < 100; ++k) bed.tick();  // up 1 s
    // Down 20..2,000 ms: beyond the 1 s sync period and maxAge, below the TTL.
    const std::uint64_t down_ms = 20 + rng() % 1981;
    longest_ms = std::max(longest_ms, down_ms);
    bed.cut().down = true;
    ++row.attempts;
    for (std::uint64_t k = 0; k < down_ms / 10; ++k) bed.tick();
    bed.cut().down = false;
    const TimePoint up = bed.sim().now();
    const std::uint64_t before = bed.delivered();
    bool ok = false;
    for (int k = 0; k < 1000 && !ok; ++k) {
      bed.tick();
      ok = bed.delivered() > before;
    }
    all_recovered = all_recovered && ok;
    if (ok) worst = std::max(worst, ms_between(up, bed.sim().now()));
  }
  for (int k = 0; k < 20; ++k) bed.tick();
  fill_row(bed, row);
  if (all_recovered) {
    row.recovery_ms = worst;
  } else {
    row.rejected["not_recovered"] = 1;
    row.loss_allowed = false;
  }
  row.note = "subscriber link down 20.." + std::to_string(longest_ms) + " ms, " + std::to_string(flaps) +
             " flaps, up 1 s between (" + std::to_string(bed.cut().dropped) +
             " frames dropped), events every 10 ms; lost = sent while down + refused after link-up until the "
             "next sync message (rejected: the subscriber's reasons); recovery_ms = max link-up to first event" +
             (hybrid ? "; subscriber SecY verified " + std::to_string(bed.macsec_verified()) + " frames" : "");
  return row;
}

}  // namespace

std::vector<AttackRow> run_fault_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  rows.push_back(peer_gone_back(false, "secoc-vendor-counter", options));
  rows.push_back(peer_gone_back(true, "hybrid-vendor-macsec-hop", options));
  rows.push_back(peer_gone_back(true, "hybrid-static-sak-pn-store", options, true));
  rows.push_back(link_flap(false, "secoc-vendor-counter", options));
  rows.push_back(link_flap(true, "hybrid-vendor-macsec-hop", options));
  for (AttackRow& r : run_disk_full(options)) rows.push_back(std::move(r));
  return rows;
}

}  // namespace layersec::attack
