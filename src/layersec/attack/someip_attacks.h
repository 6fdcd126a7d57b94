// The SOME/IP + SecOC attack runner of `layersec attack` (issue 15, first
// slice): a publisher and a subscriber built with node::build_stack on the
// simulated segment (net::Simulator, one switch), one event service with
// notifications flowing, and an on-path attacker at the switch
// (net::SwitchHook) that records, replays, alters and injects frames.
//
// Configurations (AttackRow::layer / configuration):
//   someip  someip-unsecured          no SecOC: the baseline row
//                                     (acceptances expected)
//   secoc   secoc-vendor-counter      vendor profile: CMAC-AES-256, 64-bit
//                                     MAC, FV64 counter freshness (16 bits
//                                     sent), receiver provisioned
//   secoc   secoc-vendor-timestamp    the same MAC, 64-bit timestamp FV
//                                     (maxAge 1 s)
//   secoc   secoc-profile1-counter    AUTOSAR profile 1: CMAC-AES-128, 24-bit
//                                     MAC, 8 FV bits sent, counter + sync
//   secoc   secoc-profile2            AUTOSAR profile 2: 24-bit MAC, no FV
//                                     (no replay protection by design: its
//                                     replay/holdback rows are expected)
//   secoc   secoc-profile3-counter    AUTOSAR profile 3 (JASPAR): 28-bit MAC,
//                                     4 FV bits sent, counter + sync
//   secoc   secoc-aead-gcm-counter    non-standard aead-gcm (AES-256-GCM,
//                                     128-bit tag, FV64, 16 bits sent)
//   hybrid  hybrid-aead-gcm-macsec-hop  secoc-aead-gcm-counter over MACsec
//   someip/secoc  *-multicast         two members on a multicast eventgroup
//                                     (someip_mc_attacks.h)
//   hybrid  hybrid-vendor-macsec-hop  secoc-vendor-counter over hop-by-hop
//                                     MACsec (GCM-AES-128 SecYs on the hosts
//                                     and the switch ports, as the testbed's
//                                     hybrid scenarios): the wiretap (A1)
//                                     sees ciphertext, the attacker at the
//                                     switch works past MACsec (it holds the
//                                     link keys), so SecOC alone must refuse
//
// Every attacker frame is parsed and judged by the real subscriber (SimHost
// IPv4/UDP checks, the runtime's SOME/IP error policy, the SecOC engine);
// altered or injected frames carry valid IPv4/UDP checksums
// (net::refresh_checksums) so only SOME/IP or SecOC can refuse them.
// `accepted` counts notifications the subscriber's handler received that the
// publisher did not send as that (a replayed copy, an altered payload or
// header, a forgery); `rejected` is read from the subscriber's own counters
// (secoc_rejected_<reason> from the runtime's rejection callback,
// secoc_unbound_rejected, someip_dropped_<reason>, udp_malformed, ...).
// Classes: A1.passive (wiretap), A2.replay.{immediate,delayed},
// A2.bitflip.{someip-header,payload,fv,mac}, A2.truncate, A2.extend,
// A2.forge.wrong-key, A2.holdback.{release,all}, A2.relabel.unbound-id;
// then A3.switch.*, A2.replay.after-wrap, A2.sync.* (someip_fresh_attacks.h),
// A2.rr.* (someip_rr_attacks.h) and A2.mc.* (someip_mc_attacks.h) where they
// apply (docs/attack.md says what each does and how to read the rows). The
// bed is someip_attack_bed.h.
// Deterministic from AttackOptions::seed (simulated time only).
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Runs every class against every configuration above, `options.attempts`
// attempts each. Throws std::runtime_error if a set-up step fails (service
// discovery, key installation): that is a harness failure, not a row.
[[nodiscard]] std::vector<AttackRow> run_someip_attacks(const AttackOptions& options);

}  // namespace layersec::attack
