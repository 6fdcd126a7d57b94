// One node of `layersec bench scenarios --topology netns`: a SOME/IP publisher
// or subscriber running as its own process (`layersec bench scenario-node
// --spec FILE`, started by the orchestrator in harness/netns_scenarios.h) in
// its own network namespace, on one of two link paths:
//
//   kernel  someip::SocketTransport on kernel UDP sockets. With MACsec
//           (security "hybrid") the node creates a TAP interface, moves its
//           address from the veth to the TAP and runs a macsec::TapLink
//           between them on the same event loop (the user-space equivalent
//           of the kernel's macsec0 on eth0: one extra hop through the TAP).
//   raw     someip::RawTransport: the node frames Ethernet/IPv4/UDP itself,
//           applies MACsec in-process (macsec::MacsecFilter) when enabled and
//           sends with one AF_PACKET send; the veth carries no address.
//
// Security: "none", "secoc" (vendor profile CMAC-AES-256, 64-bit MAC, 16 of
// 64 FV bits on the event and the answers) or "hybrid" (SecOC + MACsec
// GCM-AES-128 end to end between hosts; one SAK shared by every SC, as MKA
// distributes one SAK per connectivity association). Keys: "psk" (key files,
// mode 0600, loaded through base/keyfile) or "rsa-mode-b" (the keymgmt
// service: KeyServer on the publisher, KeyClient on each subscriber, RSA-2048
// OAEP with X.509 certificates; the group key it delivers protects the event
// and the answers).
//
// Measurement (payload layout: u32 sequence, u64 CLOCK_MONOTONIC send time in
// ns, u8 flags, then padding to payload_bytes; CLOCK_MONOTONIC is one clock
// for every namespace of the machine):
//   closed-loop  the publisher notifies one event (unicast, or once to the
//                multicast group), every subscriber answers with a
//                fire-and-forget request carrying its receive time, and the
//                iteration ends when the publisher has the last answer: RTT/2
//                and one way (send -> the last subscriber's event handler).
//   rate         after a closed-loop readiness probe, the publisher notifies
//                at rate_hz for rate_duration with absolute deadlines; each
//                subscriber records one-way latency and sequence gaps.
// The publisher starts measuring only after one complete closed-loop probe
// iteration (every subscriber subscribed, keyed and answering) within
// ready_timeout.
#pragma once

#include <atomic>
#include <ostream>

#include "layersec/harness/netns_node_spec.h"

namespace layersec::harness {

// Runs one node in the calling thread, which must already be in the node's
// namespace, until the publisher's run is done or `stop` becomes true
// (subscribers run until stopped; `layersec bench scenario-node` sets it on
// SIGTERM/SIGINT). Writes spec.report_file (when set) and returns the
// report. Never throws: failures are reported with ok = false.
NetnsNodeReport run_netns_node(const NetnsNodeSpec& spec, const std::atomic<bool>& stop, std::ostream& err);

}  // namespace layersec::harness
