// The MACsec layer's attack runner (`layersec attack`, issue 15, first slice):
// an in-memory transmitting and receiving macsec::SecY pair, legitimate
// Ethernet frames (IPv4/UDP with a plaintext marker) protected by the sender
// and validated by the receiver (validateFrames Strict, replay protection on,
// a small window), and an attacker that captures, replays, reorders, flips
// bits in, truncates, extends, forges and injects frames between them.
#pragma once

#include <vector>

#include "layersec/attack/report.h"

namespace layersec::attack {

// Runs every MACsec attack class against every MACsec configuration
// ("macsec-gcm-aes-128", "macsec-gcm-aes-256", "macsec-gcm-aes-xpn-128",
// "macsec-gcm-aes-xpn-256", "macsec-integrity-only"), then the VLAN classes
// (A2.bitflip.vlan-pcp, A2.bitflip.vlan-vid, A2.vlan.strip, A2.vlan.add,
// A2.vlan.retag) against "macsec-gcm-aes-128-vlan-in-data" (standard mode: the
// tag is in the Secure Data), "macsec-gcm-aes-128-clear-tag" (clear tag, not
// in the ICV: rewrites are delivered, acceptance_expected) and
// "macsec-gcm-aes-128-clear-tag-icv" (clear_tags_in_icv), with `options.attempts`
// attempts per class, deterministically from `options.seed`. Rows use layer
// "macsec"; `accepted` counts attacker frames the receiving SecY delivered as
// valid, `rejected` is keyed by the receiving SecY's MIB counter names.
[[nodiscard]] std::vector<AttackRow> run_macsec_attacks(const AttackOptions& options);

}  // namespace layersec::attack
