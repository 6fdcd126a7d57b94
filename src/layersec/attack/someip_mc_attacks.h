// Multicast classes of the SOME/IP + SecOC attack runner (issue 15): a
// publisher (10.0.0.1) and two subscribers, members A (10.0.0.2) and B
// (10.0.0.3), on one switch; the event's eventgroup is delivered by
// multicast (239.1.2.3:30600, threshold 1: one datagram for both members),
// as `layersec node`'s multicast eventgroups. SecOC: the vendor profile with
// counter freshness and sync messages, the event key shared by the group.
//
// Configurations: someip-unsecured-multicast (baseline, acceptances
// expected), secoc-vendor-counter-multicast. Classes (every attacker frame
// is judged by both members; `rejected` sums both members' counters):
//   A2.mc.replay              the multicast notification re-sent at once
//   A2.mc.bitflip.payload     one payload bit flipped in flight
//   A2.mc.relabel.unbound-id  the event id relabelled to 0x8002 in flight
//   A2.mc.member-a-to-b       the notification member A received, re-sent
//                             to member B by unicast (B judges it)
// Legitimate notifications are counted at both members (legit_delivered
// counts deliveries: two per notification).
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

[[nodiscard]] std::vector<AttackRow> run_someip_multicast_attacks(const AttackOptions& options);

}  // namespace layersec::attack
