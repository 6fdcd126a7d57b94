// `layersec macsec up` as a library call: a MACsec interface on top of a
// lower interface, run until SIGINT/SIGTERM (an I/O adapter: signals,
// net::EventLoop, TAP and AF_PACKET or netlink, the PN state file, the lower
// interface guard; it belongs to the macsec I/O library).
//
//   LinkBackend::kUser    the TAP interface `name` over `lower` (link.h
//                         TapLink): everything the kernel sends on it is
//                         protected by the SecY, only verified frames come
//                         back. SIGHUP re-reads the configuration and
//                         switches SAs (sa_rotation.h); every change, refused
//                         reload, retirement, "new SA needed" and PN state
//                         error is one JSON line on stdout.
//   LinkBackend::kKernel  the Linux macsec driver over netlink
//                         (kernel_backend.h); SIGHUP is refused with a JSON
//                         line; the driver's counters are printed at exit and
//                         the device deleted.
//
// Issue-13 properties kept here: configuration and PN state errors come
// before anything on the system changes; the PN state file must exist
// unless every key is declared new (pn_state_file.h); a restart resumes
// every SA after its persisted PN and warns that the static SAK was used
// before; the lower interface is isolated (lower_guard.h) before the
// interface comes up and restored at exit. Start-up lines go to stderr, the
// exit statistics (802.1AE MIB, per SC and SA, link and control counters, PN
// state, lower-link restoration) as pretty JSON to stdout.
#pragma once

#include <optional>
#include <string>

#include "layersec/macsec/link_ptp_config.h"
#include "layersec/macsec/link_tsn_config.h"

namespace layersec::macsec {

enum class LinkBackend { kUser, kKernel };

struct LinkRunOptions {
  std::string lower;        // lower interface (e.g. eth0)
  std::string name;         // MACsec interface to create (e.g. macsec0)
  std::string config_path;  // JSON configuration (link_config.h), re-read on SIGHUP
  LinkBackend backend = LinkBackend::kUser;
  double stats_interval_s = 0;  // > 0: also a "stats" JSON line this often (user back end)
  bool new_key = false;         // the keys were never used: create missing PN state
  // TSN first hop (link_tsn_config.h; user back end only): classification and
  // tagging, the time-aware shaper on CLOCK_TAI, the tag layout (which
  // overrides the configuration's vlan_mode and clear_tags_in_icv).
  std::string tsn_path;
  // gPTP on the lower interface in this process (link_ptp_config.h; user
  // back end only): plain or inside this link's SecY ("protect"). With
  // tsn_path too, the shaper runs on the gPTP-disciplined clock instead of
  // CLOCK_TAI. One JSON line {"event": "ptp", ...} per second.
  std::string ptp_path;
  // MKA (link_mka_config.h, link_mka.h; user back end only): no static SAK,
  // SAKs come from MKA over EAPOL on `lower`; config_path is not used.
  std::string mka_path;
  // User back end: the TAP with segmentation/checksum offload and receive
  // coalescing (link.h TapLinkOptions::offload); false: one TAP read and
  // write per frame (`--no-offload`).
  bool offload = true;
  // User back end: the lower socket's receive ring (link.h
  // TapLinkOptions::rx_ring, `--rx-ring`); false: recvmmsg batches.
  bool rx_ring = false;
  // User back end: > 0 locks the process's memory and runs the link's thread
  // in SCHED_FIFO at this priority (1..99, `--realtime`), so that a frame
  // waiting in the TAP or the shaper is served as soon as the thread wakes
  // instead of after other runnable work. Refused with the kernel back end.
  int realtime_priority = 0;
  // User back end with static SAKs: 1 (default) runs the link in one thread
  // as always; 2..4 (`--workers N`) runs N workers, each with its own
  // thread, event loop, SecY (cipher contexts, counters), queue of a
  // multi-queue TAP and lower socket in one PACKET_FANOUT group, all
  // sharing each SA's PN allocation and replay state (link_workers.h).
  int workers = 1;
  // With workers > 1: how the lower sockets' fanout group spreads received
  // frames: "cpu" (default), "lb" or "hash" (docs/macsec_link.md, "Workers").
  std::string fanout;
};

// Loads the configuration, brings the link up and runs it until SIGINT or
// SIGTERM (SIGINT, SIGTERM and SIGHUP are blocked in the calling thread and
// read from a signalfd). Returns the exit status: 0, or 1 when the exact PN
// state could not be saved at exit (user) or the device could not be deleted
// (kernel). Throws std::runtime_error on configuration and start-up errors,
// with the configuration's JSON pointer or the failing step in the message.
int run_link(const LinkRunOptions& options);

// run_link with options.mka_path (link_mka_runner.cc): the SecY starts with
// no SA and sends nothing until MKA installs a SAK; every MKA event is a
// JSON line on stdout; SIGHUP asks for a new SAK on the key server and is
// refused elsewhere; the statistics carry an "mka" object (link_mka.h
// mka_stats_json). With `ptp_config` a gPTP port runs beside the SecY as
// with static SAKs (protected gPTP waits for the first SAK: dropped and
// counted, "ptp" in the statistics). Same exit statuses and exceptions as
// run_link.
int run_mka_link(const LinkRunOptions& options, const std::optional<LinkTsnConfig>& tsn_config,
                 const std::optional<LinkPtpConfig>& ptp_config);

}  // namespace layersec::macsec
