// The SOME/IP Service Discovery attack runner of `layersec attack` (issue 15):
// a server (10.0.0.1) and a client (10.0.0.2) built with node::build_stack on
// the simulated segment (net::Simulator, one switch), service 0x1234
// instance 1 offering event 0x8001 in eventgroup 1 (allowed_subscribers =
// the client), one notification every 10 ms; an on-path attacker at the
// switch (net::SwitchHook) that alters, records and re-sends SD frames and
// injects frames from any source address, an attacker host (10.0.0.9) that
// sends SD from its own address (under protected SD protected as a node
// would, with keys of its own: it has the protocol, not the group key) and
// a victim host (10.0.0.3). The event is a field, so a subscription the
// server drops and re-creates (a reboot it was tricked into seeing) shows
// as the value delivered again.
//
// Configurations (AttackRow::layer / configuration):
//   someip  sd-unprotected  SD in clear, no SecOC bindings: the baseline
//                           (the attacks docs/someip.md says succeed on
//                           unprotected SD are acceptance_expected)
//   secoc   sd-protected    protected SD as `layersec node` runs it (CMAC-
//                           AES-128, 64-bit MAC, 64-bit timestamp FV, the
//                           source address authenticated, reorder-tolerant
//                           replay state per source) and the event bound to
//                           SecOC (vendor profile, timestamp FV, maxAge 1 s)
//
// SD timing: cyclic offers every 100 ms (vsomeip: 1 s), so the in-flight
// classes, which alter the next real SD message of a kind, and the
// recovery after an accepted attack fit in simulated seconds.
//
// Per attempt the runner checks the victims' visible state: an availability
// loss at the client, a lost or repeated notification, the server's
// subscriber count, a Subscribe / request / event reaching the attacker or
// the victim. Any change is `accepted` and the runner waits for the service
// to recover (recovery_ms: the worst case). A2.sd.nack: the runtime shows
// no subscription state, so a Nack no counter refused is accepted.
// `rejected` is read from both nodes: secoc_sd_rejected_
// <reason> (the runtime's rejection callback), sd_dropped_<reason>
// (RuntimeCounters::sd_dropped, SdDropReason). The runtime does not expose
// its SdCounters (invalid SD, reboots), so for sd-unprotected the altered
// bytes are run through the same parser (parse_sd_message) at the switch:
// sd_invalid_<SdError>. An attempt neither accepted nor counted is shown as
// `uncounted`.
// Classes: A2.sd.offer-hijack, A2.sd.offer-before-start, A2.sd.stopoffer,
// A2.sd.nack, A2.sd.stopsubscribe, A2.sd.foreign-subscribe,
// A2.sd.replay.immediate, A2.sd.replay.delayed, A2.sd.bitflip.entries,
// A2.sd.bitflip.options, A2.sd.truncate (each row's note says what it does).
// Deterministic from AttackOptions::seed (simulated time only).
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Runs every class against both configurations, `options.attempts` SD
// messages each. Throws std::runtime_error if a set-up step fails.
[[nodiscard]] std::vector<AttackRow> run_sd_attacks(const AttackOptions& options);

}  // namespace layersec::attack
