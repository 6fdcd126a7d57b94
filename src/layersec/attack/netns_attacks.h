// `layersec attack --topology netns` (issue 15): attacks against real
// `layersec node` and `layersec macsec up` processes in network namespaces.
//
// Each configuration runs in its own three namespaces: the two end nodes,
// each with one veth, and an attacker namespace holding both peer ends. The
// attacker (netns_attacks_env.h: Mitm) forwards every frame between its two
// AF_PACKET sockets itself, so it sits on the only path between the nodes:
// it records, alters, drops, holds back and injects.
//
//   netns-someip-unsecured   the same two nodes without SecOC: the baseline,
//                            its acceptances expected (shows the attacks work)
//   netns-secoc-vendor       `layersec node` publisher (10.77.0.1) and
//                            subscriber (10.77.0.2): SecOC vendor profile
//                            (CMAC-AES-256, 64-bit MAC, 16 of 64 FV bits,
//                            counter freshness with sync every 1 s), SD
//                            protected (the default), event 0x1234.0x8001 every 5 ms
//   netns-macsec-gcm-aes-128 `layersec macsec up` on each end (TAP ms0 over
//                            eth0, GCM-AES-128, lower link isolated); the
//                            runner sends tagged frames into A's TAP and
//                            reads what comes out of B's TAP
//   netns-sv-62351-hmac-sha256 `layersec sv publish` (a) and `layersec sv
//                            subscribe` (b), IEC 62351-6 HMAC-SHA256, 4000/1
//
// Counts come from the processes: the subscriber's JSON lines (each event
// delivered to its application with its payload, each rejection with its
// reason, each availability change), B's TAP and B's exit statistics
// (802.1AE MIB), the SV subscriber's final report. The attacker's own
// records only say what it sent.
#pragma once

#include <string>
#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Per class and configuration; `--attempts` is capped at this for netns.
inline constexpr std::uint64_t kNetnsMaxAttempts = 10000;

struct NetnsAttackSelection {
  bool secoc = true;
  bool macsec = true;
  bool sv = true;
  // > 0: also a soak of this many seconds against the receiving process
  // (class N.soak: the MACsec link and the SV subscriber).
  double soak_seconds = 0;
};

// True when the namespaces can be built (root, `ip`, /dev/net/tun, ...);
// otherwise `reason` says why not.
bool netns_attacks_available(std::string* reason);

// Runs the selected configurations (attempts capped at kNetnsMaxAttempts).
// Throws std::runtime_error when a set-up fails or the run is interrupted
// (SIGINT/SIGTERM); everything created is removed before it returns or
// throws.
std::vector<AttackRow> run_netns_attacks(const AttackOptions& options, const NetnsAttackSelection& selection = {});

}  // namespace layersec::attack
